//! Who `tandem serve` answers: a token long enough, generated on request,
//! compared whole, and carried by WebSockets even with `&`, `=` and
//! spaces; only requests naming the server in their `Host` (no DNS
//! rebinding); no state-changing request or WebSocket from a page of
//! another origin; JSON bodies only with their type; headers that keep
//! other sites out on every response; and every 4xx a JSON error.

#[path = "support/server.rs"]
mod server;

use std::io::Read;
use std::process::{Command, Stdio};

use serde_json::{json, Value};
use server::{answer, cruise_folder, raw, root, Server};
use tungstenite::client::IntoClientRequest;

/// `tandem ARGS` that must refuse to start: its standard error.
fn refused(args: &[&str], token: Option<&str>) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_tandem"));
    command
        .args(args)
        .env_remove("TANDEM_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(t) = token {
        command.env("TANDEM_TOKEN", t);
    }
    let mut child = command.spawn().expect("tandem runs");
    // A server that starts serves until it is stopped: give it ten seconds.
    for _ in 0..100 {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(!status.success(), "{args:?} must not start");
            let mut stderr = String::new();
            child.stderr.take().unwrap().read_to_string(&mut stderr).unwrap();
            return stderr;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("{args:?} started; it must refuse");
}

/// A WebSocket handshake on `path` with `headers`: the status it is
/// refused with, or `None` once it is open (the first message read).
fn websocket(address: &str, path: &str, headers: &[(&'static str, &str)]) -> Option<u16> {
    let mut request = format!("ws://{address}{path}").into_client_request().unwrap();
    for (name, value) in headers {
        request.headers_mut().insert(*name, value.parse().unwrap());
    }
    match tungstenite::connect(request) {
        Ok((mut socket, _)) => {
            let first = socket.read().expect("a first message");
            assert!(first.to_text().unwrap().contains("\"columns\""));
            None
        }
        Err(tungstenite::Error::Http(response)) => Some(response.status().as_u16()),
        Err(e) => panic!("{path}: {e}"),
    }
}

/// `value` form-encoded, as a page's `URLSearchParams` writes it.
fn form_encoded(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'*' | b'-' | b'.' | b'_' => (b as char).to_string(),
            b' ' => "+".to_string(),
            b => format!("%{b:02X}"),
        })
        .collect()
}

fn cruise() -> String {
    std::fs::read_to_string(root().join("models/examples/cruise_control.json")).unwrap()
}

/// Starts a simulation of the cruise control with `options` over
/// `headers`: its id.
fn start_simulation(server: &Server, options: Value, headers: &[(&str, &str)]) -> String {
    let mut body = options;
    body["model"] = json!(cruise());
    let (status, _, text) = server.send("POST", "/api/simulations", Some(body.to_string().as_bytes()), headers);
    assert_eq!(status, 201, "{text}");
    serde_json::from_str::<Value>(&text).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

const JSON: (&str, &str) = ("Content-Type", "application/json");

#[test]
fn tokens_are_long_enough_generated_and_compared_whole() {
    let listen = ["serve", "--listen", "0.0.0.0:0"];
    assert!(refused(&listen, None).contains("needs a token; give --token"));
    let empty = refused(&listen, Some(""));
    assert!(
        empty.contains("the token has 0 characters, fewer than the 16 a token needs"),
        "{empty}"
    );
    let short = refused(&["serve", "--listen", "127.0.0.1:0", "--token", "s3cret"], None);
    assert!(short.contains("the token has 6 characters"), "{short}");
    let spaced = refused(
        &["serve", "--listen", "127.0.0.1:0", "--token", "a-long-enough-token "],
        None,
    );
    assert!(spaced.contains("character 20 of the token"), "{spaced}");

    let server = Server::with(&["serve", "--listen", "127.0.0.1:0", "--token", "generate"], &root());
    let printed = server.printed();
    let token = printed[0].strip_prefix("token: ").expect("the token, printed");
    assert_eq!(token.len(), 64);
    assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_eq!(server.get("/api/blocks").0, 401);
    assert_eq!(server.request("GET", "/api/blocks", None, Some(token)).0, 200);
    // The last character replaced by a different hex digit: same length, one digit off.
    let other_last = if token.ends_with('0') { '1' } else { '0' };
    let one_off = format!("{}{other_last}", &token[..63]);
    for wrong in [&token[..63], &format!("{token}0"), &one_off] {
        assert_eq!(
            server.request("GET", "/api/blocks", None, Some(wrong)).0,
            401,
            "{wrong}"
        );
    }
    // The page itself loads without it, and asks for it.
    assert_eq!(server.get("/").0, 200);
}

#[test]
fn a_token_with_ampersand_equals_and_spaces_opens_websockets() {
    let token = "a b&c=d+e%f/g?h#i long";
    let server = Server::with(&["serve", "--listen", "127.0.0.1:0", "--token", token], &root());
    let bearer = format!("Bearer {token}");
    let id = start_simulation(&server, json!({"stop": 1}), &[JSON, ("Authorization", &bearer)]);
    let path = format!("/api/simulations/{id}/stream");
    assert_eq!(
        websocket(&server.address, &format!("{path}?token={}", form_encoded(token)), &[]),
        None
    );
    assert_eq!(
        websocket(
            &server.address,
            &format!("{path}?other=1&token={}", form_encoded(token)),
            &[]
        ),
        None
    );
    assert_eq!(websocket(&server.address, &format!("{path}?token=a+b"), &[]), Some(401));
    assert_eq!(websocket(&server.address, &path, &[]), Some(401));
}

#[test]
fn requests_must_name_the_server_in_their_host() {
    let server = Server::with(
        &["serve", "--listen", "127.0.0.1:0", "--allow-host", "tandem.test"],
        &root(),
    );
    let port = server.address.rsplit_once(':').unwrap().1;
    for (host, expected) in [
        (format!("evil.example:{port}"), 421),
        ("evil.example".to_string(), 421),
        (format!("127.0.0.2:{port}"), 421),
        (format!("localhost.evil.example:{port}"), 421),
        (server.address.clone(), 200),
        (format!("localhost:{port}"), 200),
        (format!("tandem.test:{port}"), 200),
        ("TANDEM.TEST".to_string(), 200),
    ] {
        for path in ["/", "/api/blocks"] {
            let (status, head, body) = raw(&server.address, &format!("GET {path} HTTP/1.1\r\nHost: {host}"), b"");
            assert_eq!(status, expected, "Host: {host}, {path}: {body}");
            if expected == 421 {
                assert!(head.contains("content-type: application/json"));
                let error: Value = serde_json::from_str(&body).unwrap();
                assert!(error["error"].as_str().unwrap().contains("--allow-host"), "{body}");
            }
        }
    }
    let (status, _, _) = raw(&server.address, "GET /api/blocks HTTP/1.0", b"");
    assert_eq!(status, 421, "no Host at all");
}

#[test]
fn no_state_changing_request_or_websocket_comes_from_another_origin() {
    let folder = cruise_folder("origin");
    let server = Server::in_folder(&folder);
    let own = format!("http://{}", server.address);
    let others = [
        ("Origin", "http://evil.example"),
        ("Origin", "null"),
        ("Origin", "http://localhost:1"),
        ("Sec-Fetch-Site", "cross-site"),
        ("Sec-Fetch-Site", "same-site"),
    ];
    let body = json!({"model": cruise(), "stop": 1}).to_string();
    let run =
        json!({"config": "config/examples/cruise.toml", "virtual_clock": true, "pace": 1, "duration": 60}).to_string();
    for other in others {
        for (method, path, body) in [
            ("POST", "/api/simulations", Some(body.as_str())),
            ("POST", "/api/runs", Some(run.as_str())),
            ("PUT", "/api/files/new.json", Some("{}")),
            ("POST", "/api/check", Some(body.as_str())),
        ] {
            let (status, _, text) = server.send(method, path, body.map(str::as_bytes), &[JSON, other]);
            assert_eq!(status, 403, "{method} {path} with {other:?}: {text}");
            let error: Value = serde_json::from_str(&text).unwrap();
            assert!(error["error"].as_str().unwrap().contains("comes from another site"));
        }
    }
    assert_eq!(server.json("/api/simulations")["simulations"], json!([]));
    assert_eq!(server.json("/api/runs")["runs"], json!([]));
    assert!(!folder.join("new.json").exists());

    // A run started by the page itself (its own origin) is neither
    // changed, stopped nor watched from another.
    let (status, _, text) = server.send("POST", "/api/runs", Some(run.as_bytes()), &[JSON, ("Origin", &own)]);
    assert_eq!(status, 201, "{text}");
    let id = serde_json::from_str::<Value>(&text).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let change = br#"{"input": "pedal", "value": 0.9}"#;
    for other in others {
        let changes = format!("/api/runs/{id}/changes");
        assert_eq!(server.send("POST", &changes, Some(change), &[JSON, other]).0, 403);
        assert_eq!(server.send("DELETE", &format!("/api/runs/{id}"), None, &[other]).0, 403);
        let stream = format!("/api/runs/{id}/stream");
        let (name, value) = other;
        assert_eq!(
            websocket(&server.address, &stream, &[(name, value)]),
            Some(403),
            "{other:?}"
        );
    }
    assert_eq!(server.json(&format!("/api/runs/{id}/changes"))["changes"], json!([]));
    assert_eq!(server.json(&format!("/api/runs/{id}"))["state"], "running");
    let stream = format!("/api/runs/{id}/stream");
    assert_eq!(websocket(&server.address, &stream, &[("Origin", &own)]), None);
    assert_eq!(websocket(&server.address, &stream, &[]), None);
    let stop = server.send("DELETE", &format!("/api/runs/{id}"), None, &[("Origin", &own)]);
    assert_eq!(stop.0, 202);
    std::fs::remove_dir_all(folder).ok();
}

#[test]
fn json_bodies_need_their_content_type() {
    let folder = cruise_folder("type");
    let server = Server::in_folder(&folder);
    let body = json!({"model": cruise(), "stop": 1}).to_string();
    for (method, path, kinds) in [
        (
            "POST",
            "/api/simulations",
            vec!["text/plain", "application/x-www-form-urlencoded", ""],
        ),
        (
            "POST",
            "/api/check",
            vec!["text/plain;charset=UTF-8", "multipart/form-data"],
        ),
        ("POST", "/api/runs", vec!["text/plain"]),
        ("POST", "/api/ports", vec!["text/plain"]),
        ("PUT", "/api/files/m.json", vec!["text/plain", "application/toml"]),
        ("PUT", "/api/files/c.toml", vec!["text/plain", "application/json"]),
    ] {
        for kind in kinds {
            let headers = if kind.is_empty() {
                vec![]
            } else {
                vec![("Content-Type", kind)]
            };
            let (status, _, text) = server.send(method, path, Some(body.as_bytes()), &headers);
            assert_eq!(status, 415, "{method} {path} as {kind:?}: {text}");
            let error: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(error["place"]["key"], "Content-Type");
        }
    }
    assert_eq!(server.json("/api/simulations")["simulations"], json!([]));
    assert!(!folder.join("m.json").exists() && !folder.join("c.toml").exists());
    let typed = [("Content-Type", "Application/JSON; charset=utf-8")];
    assert_eq!(start_simulation(&server, json!({"stop": 1}), &typed), "s1");
    let toml = [("Content-Type", "application/toml")];
    assert_eq!(
        server
            .send("PUT", "/api/files/c.toml", Some(b"model = \"ev\""), &toml)
            .0,
        204
    );
    std::fs::remove_dir_all(folder).ok();
}

#[test]
fn every_response_keeps_other_sites_out() {
    let server = Server::start();
    let own = format!("http://{}", server.address);
    for (path, headers) in [
        ("/", vec![]),
        ("/assets/app.js", vec![]),
        ("/api/blocks", vec![("Origin", own.as_str())]),
        ("/api/nothing", vec![]),
    ] {
        let (_, names, _) = server.send("GET", path, None, &headers);
        let header = |name: &str| names.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
        assert_eq!(header("x-content-type-options"), Some("nosniff"), "{path}");
        assert_eq!(header("x-frame-options"), Some("DENY"), "{path}");
        let policy = header("content-security-policy").expect("a content security policy");
        for directive in [
            "default-src 'none'",
            "script-src 'self'",
            "connect-src 'self'",
            "frame-ancestors 'none'",
        ] {
            assert!(policy.contains(directive), "{path}: {policy}");
        }
        assert!(
            names.iter().all(|(n, _)| !n.starts_with("access-control-")),
            "no CORS: {path}: {names:?}"
        );
    }
    // A preflight from another origin is refused, and allows nothing.
    let (status, head, _) = raw(
        &server.address,
        &format!(
            "OPTIONS /api/simulations HTTP/1.1\r\nHost: {}\r\nOrigin: http://evil.example\r\n\
             Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: content-type",
            server.address
        ),
        b"",
    );
    assert_eq!(status, 403);
    assert!(!head.contains("access-control-"), "{head}");
}

#[test]
fn every_4xx_body_is_a_json_error() {
    let server = Server::start();
    let host = format!("Host: {}", server.address);
    // A chunked body over the bound, refused as it is read.
    let chunk = format!("{:x}\r\n{}\r\n", 1 << 20, "[".repeat(1 << 20));
    let body = chunk.repeat(17);
    let mut cases = vec![(
        raw(
            &server.address,
            &format!(
                "POST /api/check HTTP/1.1\r\n{host}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked"
            ),
            body.as_bytes(),
        ),
        413,
        "more than the 16777216 bytes",
    )];
    for (request, status, message) in [
        ("GET /api/files/%FF%FE HTTP/1.1", 400, "GET /api/files/%FF%FE: "),
        ("GET /api/files?dir=a&dir=b HTTP/1.1", 400, "GET /api/files: "),
        (
            "PUT /api/blocks HTTP/1.1",
            405,
            "PUT is not allowed on /api/blocks; the Allow header lists",
        ),
        (
            "DELETE /api/simulations HTTP/1.1",
            405,
            "DELETE is not allowed on /api/simulations",
        ),
        (
            "GET /api/simulations/s1/stream HTTP/1.1",
            400,
            "GET /api/simulations/s1/stream: ",
        ),
        ("GET /api/runs/r1/stream HTTP/1.1", 400, "see serve/API.md"),
    ] {
        cases.push((
            raw(&server.address, &format!("{request}\r\n{host}"), b""),
            status,
            message,
        ));
    }
    for ((status, head, body), expected, message) in cases {
        assert_eq!(status, expected, "{message}: {body}");
        assert!(head.contains("content-type: application/json"), "{head}");
        assert_eq!(expected == 405, head.contains("\r\nallow: "), "{head}");
        let error: Value = serde_json::from_str(&body).unwrap_or_else(|_| panic!("a JSON error: {body}"));
        assert!(error["error"].as_str().unwrap().contains(message), "{body}");
    }
}

#[test]
fn a_request_refused_before_its_body_is_read_leaves_the_connection_usable() {
    use std::io::Write;
    let server = Server::start();
    let address = &server.address;
    for (request, body, status) in [
        (
            "PUT /api/files/models/run.sh HTTP/1.1\r\nContent-Type: application/json",
            "rm -rf /",
            "403",
        ),
        (
            "POST /api/check HTTP/1.1\r\nContent-Type: text/plain",
            "{\"blocks\": []}",
            "415",
        ),
        (
            "POST /api/simulations HTTP/1.1\r\nContent-Type: application/json\r\nOrigin: http://evil.example",
            "{}",
            "403",
        ),
    ] {
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        let head = format!("{request}\r\nHost: {address}\r\nContent-Length: {}\r\n\r\n", body.len());
        stream.write_all(head.as_bytes()).unwrap();
        // The body comes after the server has seen enough to refuse.
        std::thread::sleep(std::time::Duration::from_millis(200));
        stream.write_all(body.as_bytes()).unwrap();
        let (head, text) = answer(&mut stream);
        assert!(head.starts_with(&format!("http/1.1 {status}")), "{head}{text}");
        let next = format!("GET /api/blocks HTTP/1.1\r\nHost: {address}\r\n\r\n");
        stream.write_all(next.as_bytes()).unwrap();
        let (head, _) = answer(&mut stream);
        assert!(
            head.starts_with("http/1.1 200"),
            "{request}: the next request on the connection: {head}"
        );
    }
}
