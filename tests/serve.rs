//! `tandem serve`'s API (serve/API.md) as a client sees it: every
//! endpoint with good and bad input, against the command line's own
//! results (`tandem sim`'s CSV, `tandem check`'s messages) and the model
//! files' known ports; a WebSocket client reading a 1e6-row run whole and
//! in order; block parameters of a running session changed at a frame.

#[path = "support/server.rs"]
mod server;

use std::io::{Read, Write};
use std::process::Command;

use serde_json::{json, Value};
use server::{root, Server};
use tungstenite::Message;

/// Everything a stream sent: columns, rows (row-major), the text messages
/// between, and the end message.
struct Streamed {
    columns: Vec<String>,
    values: Vec<f64>,
    texts: Vec<Value>,
    end: Value,
}

/// Reads a WebSocket stream to its end, checking that the batches follow
/// each other from row 0 without gaps.
fn read_stream(address: &str, path: &str) -> Streamed {
    let (mut socket, _) = tungstenite::connect(format!("ws://{address}{path}")).expect("WebSocket");
    let first = socket.read().expect("a first message");
    let columns: Value = serde_json::from_str(first.to_text().expect("text")).expect("JSON");
    assert_eq!(columns["type"], "columns");
    let columns: Vec<String> = serde_json::from_value(columns["columns"].clone()).expect("names");
    let (mut values, mut texts, mut next_row) = (Vec::new(), Vec::new(), 0u32);
    loop {
        match socket.read().expect("the stream goes on until its end message") {
            Message::Binary(bytes) => {
                let word = |i: usize| u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"));
                let (first_row, rows, width) = (word(0), word(1), word(2));
                assert_eq!(first_row, next_row, "batches follow each other from row 0");
                assert_eq!(width as usize, columns.len());
                assert_eq!(bytes.len(), 12 + 8 * (rows * width) as usize);
                values.extend(
                    bytes[12..]
                        .chunks_exact(8)
                        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes"))),
                );
                next_row += rows;
            }
            Message::Text(text) => {
                let message: Value = serde_json::from_str(text.as_str()).expect("JSON");
                if message["type"] == "end" {
                    return Streamed {
                        columns,
                        values,
                        texts,
                        end: message,
                    };
                }
                texts.push(message);
            }
            _ => {}
        }
    }
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).expect("a repository file")
}

/// `{"model": text, ...options}` as a request body.
fn simulation(model: &str, options: Value) -> String {
    let mut body = options;
    body["model"] = json!(model);
    body.to_string()
}

/// POSTs `body` to `path`, which must create a simulation or a run: its id.
fn created(server: &Server, path: &str, body: &str) -> String {
    let (status, body) = server.post(path, body);
    assert_eq!(status, 201, "{body}");
    serde_json::from_str::<Value>(&body).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Waits until simulation or run `path` has left the running state.
fn wait_ended(server: &Server, path: &str) -> Value {
    for _ in 0..600 {
        let status = server.json(path);
        if status["state"] != "running" {
            return status;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("{path} still runs after 30 s");
}

#[test]
fn the_block_library_is_the_command_lines_with_the_schemas_parameters() {
    let server = Server::start();
    let library = server.json("/api/blocks");
    let listed = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("blocks")
        .output()
        .expect("tandem blocks");
    let names: Vec<String> = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().expect("a name").to_string())
        .collect();
    let served: Vec<&str> = library["blocks"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|b| b["type"].as_str().expect("a type"))
        .collect();
    assert_eq!(served, names, "the same types, in the same order, as `tandem blocks`");
    let gain = library["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "Gain")
        .expect("Gain");
    assert_eq!(gain["required"], json!(["gain"]));
    assert!(gain["params"]["gain"]["description"]
        .as_str()
        .unwrap()
        .contains("Factor"));
    let schema: Value = serde_json::from_str(&read("models/schema.json")).unwrap();
    assert_eq!(library["schema"], schema, "the schema is models/schema.json");
}

#[test]
fn ports_of_a_block_follow_its_parameters() {
    let server = Server::start();
    let ports = |body: &str| {
        let (status, text) = server.post("/api/ports", body);
        (status, serde_json::from_str::<Value>(&text).expect("JSON"))
    };
    let (status, sum) = ports(r#"{"id": "s", "type": "Sum", "params": {"signs": "+-+"}}"#);
    assert_eq!(
        (status, sum),
        (200, json!({"inputs": ["1", "2", "3"], "outputs": ["1"]}))
    );
    let (_, integrator) =
        ports(r#"{"id": "x", "type": "Integrator", "params": {"reset": "rising", "external_initial": true}}"#);
    assert_eq!(integrator["inputs"], json!(["in", "reset", "x0"]));
    let (_, sub) = ports(
        r#"{"id": "cart", "type": "Subsystem", "params": {"action": true}, "blocks": [
            {"id": "f", "type": "Inport"}, {"id": "speed", "type": "Outport"}], "links": []}"#,
    );
    assert_eq!(sub, json!({"inputs": ["f", "action"], "outputs": ["speed"]}));
    let (status, unknown) = ports(r#"{"id": "q", "type": "Gian"}"#);
    assert_eq!(status, 422);
    assert_eq!(unknown["place"]["block"], "q");
    let (status, malformed) = ports("{\"id\": \"q\",\n \"type\": }");
    assert_eq!(status, 400);
    assert_eq!(
        (malformed["place"]["line"].clone(), malformed["place"]["column"].clone()),
        (json!(2), json!(10))
    );
}

#[test]
fn a_check_gives_the_command_lines_message_at_the_block_and_port() {
    let server = Server::start();
    let (status, body) = server.post("/api/check", &read("models/examples/cruise_control.json"));
    assert_eq!(status, 200, "{body}");
    let summary: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(summary["outputs"], json!(["v", "v_ref", "force"]));
    assert_eq!(summary["states"], json!(["vehicle"]));

    // The ball with the link into the velocity integrator removed.
    let mut ball: Value = serde_json::from_str(&read("models/examples/bouncing_ball.json")).unwrap();
    let links = ball["links"].as_array_mut().unwrap();
    let index = links
        .iter()
        .position(|l| l["to"] == "velocity" || l["to"] == "velocity.in")
        .expect("a link into velocity");
    links.remove(index);
    let text = serde_json::to_string_pretty(&ball).unwrap();
    let file = std::env::temp_dir().join(format!("tandem-serve-ball-{}.json", std::process::id()));
    std::fs::write(&file, &text).unwrap();
    let (status, body) = server.post("/api/check", &text);
    assert_eq!(status, 422);
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["place"]["block"], "velocity");
    assert_eq!(
        error["place"]["port"], "in",
        "the integrator's first input is named `in` (models/FORMAT.md)"
    );
    assert_eq!(error["kind"], "Unconnected");
    let check = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .arg("check")
        .arg(&file)
        .output()
        .unwrap();
    let cli = String::from_utf8_lossy(&check.stderr);
    let cli = cli
        .trim_end()
        .strip_prefix("error: ")
        .unwrap()
        .split_once(".json:")
        .unwrap()
        .1;
    assert_eq!(
        error["error"].as_str().unwrap(),
        cli,
        "the same message as `tandem check`"
    );
    let (line, column): (usize, usize) = {
        let (l, rest) = cli.split_once(':').unwrap();
        (l.parse().unwrap(), rest.split(':').next().unwrap().parse().unwrap())
    };
    assert_eq!(
        (error["place"]["line"].clone(), error["place"]["column"].clone()),
        (json!(line), json!(column))
    );
    std::fs::remove_file(file).ok();

    let (status, body) = server.post("/api/check", "{\"blocks\": [\n  {\"id\": 3}]}");
    assert_eq!(status, 422);
    let error: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(error["place"]["line"], 2);
}

#[test]
fn a_simulations_csv_is_the_command_lines_byte_for_byte() {
    let server = Server::start();
    for (model, options, args) in [
        (
            "models/examples/cruise_control.json",
            json!({"stop": 200}),
            vec!["--stop", "200"],
        ),
        (
            "models/examples/bouncing_ball.json",
            json!({"solver": "bdf", "step": 0.01, "rtol": 1e-8}),
            vec!["--solver", "bdf", "--step", "0.01", "--rtol", "1e-8"],
        ),
        ("models/examples/abs_slip.json", json!({}), vec![]),
    ] {
        let id = created(&server, "/api/simulations", &simulation(&read(model), options));
        let status = wait_ended(&server, &format!("/api/simulations/{id}"));
        assert_eq!(status["state"], "done", "{status}");
        // Run on machine code, as the command line runs it.
        let evaluation = status["evaluation"].as_str().unwrap_or_default();
        assert!(evaluation.starts_with("compiled "), "{model}: {status}");
        let (_, served) = server.get(&format!("/api/simulations/{id}/csv"));
        let out = std::env::temp_dir().join(format!("tandem-serve-{}-{id}.csv", std::process::id()));
        let sim = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .arg("sim")
            .arg(root().join(model))
            .args(&args)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        assert!(sim.status.success());
        let cli = std::fs::read_to_string(&out).unwrap();
        std::fs::remove_file(&out).ok();
        assert!(served == cli, "{model}: the served CSV differs from tandem sim's");
        assert_eq!(status["rows"], status["expected_rows"]);
    }
}

#[test]
fn a_million_rows_stream_whole_and_in_order() {
    let server = Server::start();
    let model = read("models/examples/cruise_control.json");
    let long = simulation(&model, json!({"step": 0.001, "stop": 999.999}));
    let id = created(&server, "/api/simulations", &long);
    let streamed = read_stream(&server.address, &format!("/api/simulations/{id}/stream"));
    assert_eq!(streamed.columns, ["time", "v", "v_ref", "force"]);
    let rows = streamed.values.len() / 4;
    assert_eq!(rows, 1_000_000);
    assert_eq!(streamed.end["state"], "done");
    assert_eq!(streamed.end["rows"], 1_000_000);
    for (i, row) in streamed.values.chunks_exact(4).enumerate().step_by(9973) {
        assert!((row[0] - i as f64 * 0.001).abs() < 1e-9, "row {i} is at t = {}", row[0]);
    }
    // The stream's values are the CSV's, to the bit.
    let (_, csv) = server.get(&format!("/api/simulations/{id}/csv"));
    let last: Vec<f64> = csv
        .lines()
        .last()
        .unwrap()
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect();
    assert_eq!(&streamed.values[streamed.values.len() - 4..], &last[..]);
    assert!(streamed.texts.iter().all(|t| t["type"] == "progress"));
    // A client that joins after the end gets every row too.
    let again = read_stream(&server.address, &format!("/api/simulations/{id}/stream"));
    assert!(again.values == streamed.values);
}

#[test]
fn simulations_are_cancelled_bounded_and_limited_in_number() {
    let server = Server::start();
    let model = read("models/examples/cruise_control.json");
    let long = simulation(&model, json!({"step": 1e-4, "stop": 499}));
    let ids: Vec<String> = (0..4).map(|_| created(&server, "/api/simulations", &long)).collect();
    let (status, body) = server.post("/api/simulations", &long);
    assert_eq!(status, 429, "a fifth at once is refused: {body}");
    assert!(body.contains("4 simulations are running already"));
    for id in &ids {
        let (status, _) = server.request("DELETE", &format!("/api/simulations/{id}"), None, None);
        assert_eq!(status, 202);
    }
    for id in &ids {
        let status = wait_ended(&server, &format!("/api/simulations/{id}"));
        assert_eq!(status["state"], "cancelled", "{status}");
        assert!(status["rows"].as_u64().unwrap() < status["expected_rows"].as_u64().unwrap());
    }
    let (status, body) = server.post(
        "/api/simulations",
        &simulation(&model, json!({"step": 1e-5, "stop": 1000})),
    );
    assert_eq!(status, 413);
    assert!(
        body.contains("more than the 2e7 a simulation on this server may keep"),
        "{body}"
    );
    let (status, body) = server.post("/api/simulations", &simulation(&model, json!({"solver": "rk5"})));
    assert_eq!(status, 422);
    assert_eq!(serde_json::from_str::<Value>(&body).unwrap()["place"]["key"], "solver");
    for (option, key, message) in [
        (
            json!({"event_tolerance": 1.0}),
            "event_tolerance",
            "must be between 0 and 1e-3 (relative), found 1",
        ),
        (json!({"chatter": "ignore"}), "chatter", "ignore"),
        (
            json!({"max_consecutive_events": 1}),
            "max_consecutive_events",
            "must be at least 2, found 1",
        ),
    ] {
        let (status, body) = server.post("/api/simulations", &simulation(&model, option));
        assert_eq!(status, 422);
        let error: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(error["place"]["key"], key);
        assert!(error["error"].as_str().unwrap().contains(message), "{body}");
    }
    let (status, body) = server.post("/api/simulations", "{\"model\": 3, \"stop\": 1}");
    assert_eq!(status, 400, "{body}");
    let (status, _) = server.post("/api/simulations", "{\"modle\": \"{}\"}");
    assert_eq!(status, 400);
    let (status, _) = server.get("/api/simulations/s999");
    assert_eq!(status, 404);
}

#[test]
fn files_stay_inside_the_folder() {
    let folder = std::env::temp_dir().join(format!("tandem-serve-folder-{}", std::process::id()));
    let outside = std::env::temp_dir().join(format!("tandem-serve-outside-{}", std::process::id()));
    std::fs::create_dir_all(folder.join("models")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.json"), "{}").unwrap();
    std::os::unix::fs::symlink(&outside, folder.join("escape")).unwrap();
    let model = read("models/examples/cruise_control.json");
    std::fs::write(folder.join("models/cruise.json"), &model).unwrap();
    let server = Server::in_folder(&folder);
    let listing = server.json("/api/files?dir=models");
    assert_eq!(
        listing["entries"],
        json!([{"name": "cruise.json", "kind": "file", "size": model.len()}])
    );
    assert_eq!(server.get("/api/files/models/cruise.json"), (200, model.clone()));
    for path in [
        "/api/files/../etc/passwd",
        "/api/files/%2Fetc/passwd",
        "/api/files/escape/secret.json",
        "/api/files?dir=..",
    ] {
        let (status, body) = server.get(path);
        assert!(status == 403 || status == 404, "{path}: {status} {body}");
        assert!(!body.contains("{}") || status == 404, "{path} leaked: {body}");
    }
    let (status, _) = server.get("/api/files/escape/secret.json");
    assert_eq!(status, 403);
    let put = |path: &str, body: &str| server.request("PUT", path, Some(body.as_bytes()), None).0;
    assert_eq!(put("/api/files/models/new.json", "{\"blocks\": []}"), 204);
    assert_eq!(
        std::fs::read_to_string(folder.join("models/new.json")).unwrap(),
        "{\"blocks\": []}"
    );
    assert_eq!(put("/api/files/escape/new.json", "{}"), 403);
    assert_eq!(put("/api/files/models/run.sh", "rm -rf /"), 403);
    assert_eq!(put("/api/files/missing/new.json", "{}"), 409);
    assert!(!outside.join("new.json").exists());
    drop(server);
    std::fs::remove_dir_all(&folder).ok();
    std::fs::remove_dir_all(&outside).ok();
}

#[test]
fn malformed_requests_get_a_4xx_never_a_5xx() {
    let server = Server::start();
    // A body over the bound is refused from its length, before it is read
    // (a client that goes on sending then finds the connection closed).
    let mut stream = std::net::TcpStream::connect(&server.address).unwrap();
    write!(
        stream,
        "POST /api/simulations HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n\r\n{{\"model\": ",
        server.address,
        17 << 20
    )
    .unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    let (_, body) = answer.split_once("\r\n\r\n").expect("a body");
    let error: Value = serde_json::from_str(body).expect("a JSON error");
    assert!(error["error"]
        .as_str()
        .unwrap()
        .contains("more than the 16777216 bytes"));
    for (method, path, body, expected) in [
        ("POST", "/api/check", &b"\xff\xfe"[..], 422),
        ("POST", "/api/ports", &b"[1, 2"[..], 400),
        ("POST", "/api/runs", &b"{\"config\": 5}"[..], 400),
        ("POST", "/api/runs", &b"{\"config\": \"nowhere.toml\"}"[..], 422),
        ("POST", "/api/runs", &b"{\"config\": \"../x.toml\"}"[..], 403),
        ("POST", "/api/runs/r77/changes", &b"{}"[..], 404),
        ("GET", "/api/nothing", &b""[..], 404),
        ("DELETE", "/api/runs/r77", &b""[..], 404),
    ] {
        let (status, text) = server.request(
            method,
            path,
            (method != "GET" && method != "DELETE").then_some(body),
            None,
        );
        assert_eq!(status, expected, "{method} {path}: {text}");
        let error: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path}: JSON error body: {text}"));
        assert!(error["error"].as_str().is_some_and(|e| !e.is_empty()));
    }
}

#[test]
fn a_running_session_streams_and_takes_a_new_gain_at_a_frame() {
    let server = Server::start();
    let (status, body) = server.post(
        "/api/runs",
        r#"{"config": "config/examples/cruise.toml", "virtual_clock": true, "duration": 8, "pace": 4}"#,
    );
    assert_eq!(status, 201, "{body}");
    let run: Value = serde_json::from_str(&body).unwrap();
    let id = run["id"].as_str().unwrap().to_string();
    assert!(run["tunable"]
        .as_array()
        .unwrap()
        .contains(&json!({"block": "speed_map", "param": "gain", "value": 50.0})));
    // The units the model's Output blocks declare.
    assert_eq!(
        run["units"],
        json!({"pedal": "1", "v": "m/s", "v_ref": "m/s", "force": "N"})
    );
    let reader = {
        let address = server.address.clone();
        let id = id.clone();
        std::thread::spawn(move || read_stream(&address, &format!("/api/runs/{id}/stream")))
    };
    std::thread::sleep(std::time::Duration::from_millis(500));
    let (status, body) = server.post(
        &format!("/api/runs/{id}/changes"),
        r#"{"block": "speed_map", "param": "gain", "value": 30}"#,
    );
    assert_eq!(status, 202, "{body}");
    let (status, body) = server.post(
        &format!("/api/runs/{id}/changes"),
        r#"{"block": "speed_map", "param": "gian", "value": 3}"#,
    );
    assert_eq!(status, 422);
    assert!(
        body.contains("unknown parameter \\\"gian\\\"") && body.contains("Gain takes: gain"),
        "{body}"
    );
    let (status, body) = server.post(&format!("/api/runs/{id}/changes"), r#"{"input": "pedl", "value": 3}"#);
    assert_eq!(status, 422);
    assert!(
        body.contains("no input \\\"pedl\\\" in the model; its inputs: pedal"),
        "{body}"
    );
    let streamed = reader.join().unwrap();
    assert_eq!(streamed.end["state"], "done", "{}", streamed.end);
    assert_eq!(streamed.columns, ["time", "v", "v_ref", "force"]);
    let stats: Vec<&Value> = streamed.texts.iter().filter(|t| t["type"] == "stats").collect();
    assert!(stats.len() >= 5, "statistics every 200 ms of a 2 s run");
    let frames: Vec<u64> = stats.iter().map(|s| s["frames"].as_u64().unwrap()).collect();
    assert!(frames.windows(2).all(|w| w[0] <= w[1]) && frames[0] < *frames.last().unwrap());
    // v_ref = gain × pedal (0.5): 25 before the frame the change applied
    // at, 15 from it on, in the rows as in the change log.
    let applied = streamed
        .texts
        .iter()
        .find(|t| t["type"] == "change" && t.get("applied_at").is_some())
        .expect("the change, applied");
    let at = applied["applied_at"].as_f64().unwrap();
    assert_eq!(applied["what"], "block speed_map parameter gain");
    let (mut before, mut after) = (0, 0);
    for row in streamed.values.chunks_exact(4) {
        let expected = if row[0] < at - 1e-9 { 25.0 } else { 15.0 };
        assert_eq!(row[2], expected, "v_ref at t = {} (applied at {at})", row[0]);
        *(if expected == 25.0 { &mut before } else { &mut after }) += 1;
    }
    assert!(
        before > 10 && after > 10,
        "{before} rows before the change, {after} after"
    );
    let changes = server.json(&format!("/api/runs/{id}/changes"));
    assert_eq!(
        changes["changes"].as_array().unwrap().len(),
        2,
        "requested, then applied"
    );
    let status = server.json(&format!("/api/runs/{id}"));
    assert_eq!(status["state"], "done");
    assert_eq!(status["report"]["frames"], 800);
    assert_eq!(
        status["report"]["recording"]["rows"],
        streamed.values.len() / 4,
        "the stream has every recorded row, the last ones drained after the frames included"
    );
}

#[test]
fn a_command_line_run_is_on_the_dashboard_and_stops_from_it() {
    let mut server = Server::with(
        &[
            "run",
            "config/examples/cruise.toml",
            "--serve",
            "127.0.0.1:0",
            "--duration",
            "60",
        ],
        &root(),
    );
    let first = server.json("/api/runs/r0");
    assert_eq!(first["clock"], "real");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let later = server.json("/api/runs/r0");
    assert!(
        later["frames"].as_u64() > first["frames"].as_u64(),
        "{first} then {later}"
    );
    let (status, _) = server.post("/api/runs/r0/changes", r#"{"input": "pedal", "value": 0.6}"#);
    assert_eq!(status, 202);
    let (status, _) = server.request("DELETE", "/api/runs/r0", None, None);
    assert_eq!(status, 202);
    // The run ends, and the command with it.
    let (status, printed) = server.wait();
    assert!(status.success());
    let summary = printed.iter().find(|l| l.starts_with("summary:")).expect("a summary");
    let frames: u64 = summary["summary: ".len()..].split(' ').next().unwrap().parse().unwrap();
    assert!(frames < 6000, "stopped before its 60 s: {summary}");
}

#[test]
fn model_compilations_take_their_slots_once_their_bodies_have_arrived() {
    let server = Server::with(&["serve", "--listen", "127.0.0.1:0", "--max-checks", "2"], &root());
    let model = read("models/examples/cruise_control.json");
    // Two checks whose bodies are still to come: each is told to send its
    // body (100 Continue), and holds no slot meanwhile.
    let mut held: Vec<std::net::TcpStream> = (0..2)
        .map(|_| {
            let mut stream = std::net::TcpStream::connect(&server.address).unwrap();
            write!(
                stream,
                "POST /api/check HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
                 Expect: 100-continue\r\nConnection: close\r\n\r\n",
                server.address,
                model.len()
            )
            .unwrap();
            let mut go = [0u8; 25];
            stream.read_exact(&mut go).unwrap();
            assert_eq!(&go, b"HTTP/1.1 100 Continue\r\n\r\n");
            stream
        })
        .collect();
    let json = [("Content-Type", "application/json")];
    // A third check, with a large body, and a simulation's start are served.
    let large = format!("{model}{}", " ".repeat(8 << 20));
    let (status, _, body) = server.send("POST", "/api/check", Some(large.as_bytes()), &json);
    assert_eq!(status, 200, "{body}");
    let start = simulation(&model, json!({"stop": 1}));
    assert_eq!(
        server.send("POST", "/api/simulations", Some(start.as_bytes()), &json).0,
        201
    );
    // The held checks go on once their bodies arrive.
    for stream in &mut held {
        stream.write_all(model.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    }
}

#[test]
fn exactly_the_promised_32_ended_simulations_and_runs_are_kept() {
    let folder = server::cruise_folder("kept");
    let server = Server::in_folder(&folder);
    let short = simulation(&read("models/examples/cruise_control.json"), json!({"stop": 1}));
    let run = r#"{"config": "config/examples/cruise.toml", "virtual_clock": true, "duration": 0.05}"#;
    // Batches as large as the server runs at once, each waited for.
    for (what, body, at_once, total) in [("simulations", short.as_str(), 4, 40), ("runs", run, 2, 36)] {
        for _ in 0..total / at_once {
            let path = format!("/api/{what}");
            let ids: Vec<String> = (0..at_once).map(|_| created(&server, &path, body)).collect();
            for id in ids {
                wait_ended(&server, &format!("/api/{what}/{id}"));
            }
        }
        let kept = server.json(&format!("/api/{what}"))[what].as_array().unwrap().clone();
        assert_eq!(kept.len(), 32, "{what}: the newest 32 kept, of {total}");
        assert!(kept.iter().all(|e| e["state"] == "done"), "{what}");
        // Simulations and runs are numbered apart, each from 1.
        let oldest_kept = total - 32 + 1;
        assert_eq!(kept[0]["id"], format!("{}{oldest_kept}", &what[..1]));
    }
    std::fs::remove_dir_all(folder).ok();
}

#[test]
fn a_page_from_a_folder_is_served_instead_of_the_built_in_one_and_bad_folders_are_refused() {
    let dir = std::env::temp_dir().join(format!("tandem-serve-page-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let page = dir.join("page");
    std::fs::create_dir_all(page.join("assets")).unwrap();
    std::fs::write(
        page.join("index.html"),
        "<!doctype html><title>work in progress</title>",
    )
    .unwrap();
    std::fs::write(page.join("assets/app.js"), "console.log('changed');").unwrap();
    let folder = page.to_str().unwrap();
    let server = Server::with(&["serve", "--listen", "127.0.0.1:0", "--page", folder], &root());
    assert_eq!(server.get("/").1, "<!doctype html><title>work in progress</title>");
    // Client-side routes are the page too; its files are found by their path.
    assert!(server.get("/editor").1.contains("work in progress"));
    assert_eq!(server.get("/assets/app.js").1, "console.log('changed');");
    // Nothing outside the folder: it was read whole at start-up.
    assert!(server.get("/../Cargo.toml").1.contains("work in progress"));
    assert!(server.get("/assets/../../Cargo.toml").1.contains("work in progress"));
    assert_eq!(server.get("/api/blocks").0, 200);

    let run = |folder: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["serve", "--listen", "127.0.0.1:0", "--page", folder])
            .output()
            .unwrap();
        assert!(!out.status.success());
        String::from_utf8(out.stderr).unwrap()
    };
    let missing = run(dir.join("nowhere").to_str().unwrap());
    assert!(missing.contains("nowhere") && missing.contains("web/dist"), "{missing}");
    let no_index = run(page.join("assets").to_str().unwrap());
    assert!(no_index.contains("no index.html"), "{no_index}");
    // A link would lead out of the folder: refused by name.
    std::os::unix::fs::symlink(root().join("Cargo.toml"), page.join("assets/out.js")).unwrap();
    let linked = run(folder);
    assert!(
        linked.contains("out.js") && linked.contains("symbolic link"),
        "{linked}"
    );
    std::fs::remove_file(page.join("assets/out.js")).unwrap();
    // More entries than a page may have.
    let many = dir.join("many");
    std::fs::create_dir_all(&many).unwrap();
    std::fs::write(many.join("index.html"), "").unwrap();
    for i in 0..tandem_serve::MAX_PAGE_FILES {
        std::fs::create_dir(many.join(format!("d{i}"))).unwrap();
    }
    let large = run(many.to_str().unwrap());
    assert!(large.contains("more than 1000 files and folders"), "{large}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn runs_and_simulations_are_numbered_apart() {
    let server = Server::start();
    let short = simulation(&read("models/examples/bouncing_ball.json"), json!({"stop": 0.1}));
    assert_eq!(created(&server, "/api/simulations", &short), "s1");
    let run = r#"{"config": "config/examples/cruise.toml", "virtual_clock": true, "duration": 0.1}"#;
    assert_eq!(created(&server, "/api/runs", run), "r1");
    assert_eq!(created(&server, "/api/simulations", &short), "s2");
    assert_eq!(created(&server, "/api/runs", run), "r2");
}
