//! A `tandem serve` (or `tandem run --serve`) process for a test: started
//! on a free loopback port, killed when dropped.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use serde_json::Value;

/// A running server and its address.
pub struct Server {
    child: Child,
    /// Every line it printed after its address.
    printed: Arc<Mutex<Vec<String>>>,
    /// `127.0.0.1:PORT`.
    pub address: String,
    agent: ureq::Agent,
}

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

impl Server {
    /// `tandem serve` on the repository's folder.
    pub fn start() -> Server {
        Server::with(&["serve", "--listen", "127.0.0.1:0"], &root())
    }

    /// `tandem ARGS` run in `dir`, whose first line of output ending in
    /// `http://ADDRESS` or `http://ADDRESS/…` says where it listens.
    pub fn with(args: &[&str], dir: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("tandem starts");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
        let address = loop {
            let line = lines
                .next()
                .expect("tandem prints where it listens before it ends")
                .expect("stdout is text");
            if let Some((_, rest)) = line.split_once("http://") {
                break rest.split(['/', ' ']).next().expect("an address").to_string();
            }
        };
        // Keep reading its output so that it never blocks on a full pipe.
        let printed = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&printed);
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        let agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
        Server {
            child,
            printed,
            address,
            agent,
        }
    }

    /// Waits for the process to end: its exit status and what it printed.
    pub fn wait(&mut self) -> (std::process::ExitStatus, Vec<String>) {
        let status = self.child.wait().expect("tandem ends");
        // Let the reader take the last lines.
        std::thread::sleep(std::time::Duration::from_millis(100));
        (status, self.printed.lock().unwrap().clone())
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `http://ADDRESS` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// A request of `method` to `path` with `body`: status and body text.
    pub fn request(&self, method: &str, path: &str, body: Option<&[u8]>, token: Option<&str>) -> (u16, String) {
        let url = self.url(path);
        let auth = token.map(|t| format!("Bearer {t}"));
        let response = match (method, body) {
            ("GET", _) => with_auth(self.agent.get(&url), &auth).call(),
            ("DELETE", _) => with_auth(self.agent.delete(&url), &auth).call(),
            ("POST", Some(b)) => with_auth(self.agent.post(&url), &auth).send(b),
            ("PUT", Some(b)) => with_auth(self.agent.put(&url), &auth).send(b),
            _ => panic!("no such request in these tests"),
        };
        let mut response = response.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = response.status().as_u16();
        let mut text = String::new();
        response
            .body_mut()
            .with_config()
            .limit(u64::MAX)
            .reader()
            .read_to_string(&mut text)
            .expect("a text body");
        (status, text)
    }

    /// GET `path`: status and body.
    pub fn get(&self, path: &str) -> (u16, String) {
        self.request("GET", path, None, None)
    }

    /// POST `body` to `path`: status and body.
    pub fn post(&self, path: &str, body: &str) -> (u16, String) {
        self.request("POST", path, Some(body.as_bytes()), None)
    }

    /// GET `path`, which must answer 200 with JSON.
    pub fn json(&self, path: &str) -> Value {
        let (status, body) = self.get(path);
        assert_eq!(status, 200, "GET {path}: {body}");
        serde_json::from_str(&body).expect("JSON")
    }
}

fn with_auth<B>(request: ureq::RequestBuilder<B>, auth: &Option<String>) -> ureq::RequestBuilder<B> {
    match auth {
        Some(a) => request.header("Authorization", a),
        None => request,
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
