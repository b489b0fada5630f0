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
    /// Every line it printed but its address.
    printed: Arc<Mutex<Vec<String>>>,
    /// `127.0.0.1:PORT`.
    pub address: String,
    agent: ureq::Agent,
}

/// The repository's root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh folder in the temporary directory, called after `name`, with
/// the repository's cruise control model and its run configuration at
/// their places (`models/examples/`, `config/examples/cruise.toml`).
pub fn cruise_folder(name: &str) -> PathBuf {
    let folder = std::env::temp_dir().join(format!("tandem-serve-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&folder);
    for file in ["models/examples/cruise_control.json", "config/examples/cruise.toml"] {
        std::fs::create_dir_all(folder.join(file).parent().unwrap()).unwrap();
        std::fs::copy(root().join(file), folder.join(file)).unwrap();
    }
    folder
}

/// A request written as it is (`Connection: close` added) to `address`:
/// the status, the head in lower case, and the body (de-chunked).
pub fn raw(address: &str, request: &str, body: &[u8]) -> (u16, String, String) {
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(address).expect("the server listens");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let head = format!("{}\r\nConnection: close\r\n\r\n", request.trim_end());
    stream.write_all(head.as_bytes()).expect("the request is sent");
    // The server may answer and close before it has all of a refused body.
    let _ = stream.write_all(body);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, mut body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
    let head = head.to_ascii_lowercase();
    let status = head[9..12].parse().expect("a status");
    let mut whole = String::new();
    if head.contains("transfer-encoding: chunked") {
        while let Some((size, rest)) = body.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).expect("a chunk size");
            if size == 0 {
                break;
            }
            whole.push_str(&rest[..size]);
            body = &rest[size + 2..];
        }
    } else {
        whole.push_str(body);
    }
    (status, head, whole)
}

impl Server {
    /// `tandem serve` on the repository's folder.
    pub fn start() -> Server {
        Server::with(&["serve", "--listen", "127.0.0.1:0"], &root())
    }

    /// `tandem serve` on `folder`.
    pub fn in_folder(folder: &Path) -> Server {
        let folder = folder.to_str().expect("a UTF-8 path");
        Server::with(&["serve", "--listen", "127.0.0.1:0", "--folder", folder], &root())
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
        let mut before = Vec::new();
        let address = loop {
            let line = lines
                .next()
                .expect("tandem prints where it listens before it ends")
                .expect("stdout is text");
            match line.split_once("http://") {
                Some((_, rest)) => break rest.split(['/', ' ']).next().expect("an address").to_string(),
                None => before.push(line),
            }
        };
        // Keep reading its output so that it never blocks on a full pipe.
        let printed = Arc::new(Mutex::new(before));
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

    /// What it has printed so far, but its address.
    pub fn printed(&self) -> Vec<String> {
        self.printed.lock().unwrap().clone()
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

    /// A request of `method` to `path` with `body` (JSON, or TOML for a
    /// `.toml` path): status and body text.
    pub fn request(&self, method: &str, path: &str, body: Option<&[u8]>, token: Option<&str>) -> (u16, String) {
        let auth = token.map(|t| format!("Bearer {t}"));
        let kind = match path.ends_with(".toml") {
            true => "application/toml",
            false => "application/json",
        };
        let mut headers = vec![("Content-Type", kind)];
        headers.extend(auth.as_deref().map(|a| ("Authorization", a)));
        let (status, _, text) = self.send(method, path, body, &headers);
        (status, text)
    }

    /// A request of `method` to `path` with `body` and exactly `headers`:
    /// status, response headers (lower-case names) and body text.
    pub fn send(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
        headers: &[(&str, &str)],
    ) -> (u16, Vec<(String, String)>, String) {
        let url = self.url(path);
        let response = match (method, body) {
            ("GET", _) => with(self.agent.get(&url), headers).call(),
            ("DELETE", _) => with(self.agent.delete(&url), headers).call(),
            ("POST", Some(b)) => with(self.agent.post(&url), headers).send(b),
            ("PUT", Some(b)) => with(self.agent.put(&url), headers).send(b),
            _ => panic!("no such request in these tests"),
        };
        let mut response = response.unwrap_or_else(|e| panic!("{method} {path}: {e}"));
        let status = response.status().as_u16();
        let names = response
            .headers()
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
            .collect();
        let mut text = String::new();
        response
            .body_mut()
            .with_config()
            .limit(u64::MAX)
            .reader()
            .read_to_string(&mut text)
            .expect("a text body");
        (status, names, text)
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

fn with<B>(mut request: ureq::RequestBuilder<B>, headers: &[(&str, &str)]) -> ureq::RequestBuilder<B> {
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads one HTTP answer with a `Content-Length` from `stream`: its head
/// (lower case) and body.
pub fn answer(stream: &mut std::net::TcpStream) -> (String, String) {
    let mut head = Vec::new();
    let mut byte = [0u8];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).expect("an answer");
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .map_or(0, |n| n.trim().parse().unwrap());
    let mut body = vec![0; length];
    stream.read_exact(&mut body).unwrap();
    (head, String::from_utf8(body).unwrap())
}
