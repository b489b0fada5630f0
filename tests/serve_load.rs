//! `tandem serve` under load on loopback, bounded in count and time: 200
//! concurrent validations, then rounds of 20 concurrent simulations each
//! read whole through its WebSocket; no request fails, and the server's
//! memory stays flat: once it keeps as many ended simulations as it will
//! and the allocator's arenas have settled, sixteen more rounds add less
//! than four rounds' worth of results (keeping every result would add
//! sixteen). Eight concurrent CSV downloads of the largest result a
//! simulation keeps add a few MiB, not the CSV eight times.

#[path = "support/server.rs"]
mod server;

use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;

use serde_json::{json, Value};
use server::{root, Server};

/// The server's resident memory (KiB), from /proc.
fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc/PID/status");
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Runs `n` copies of `task` at once; every one must succeed.
fn concurrently(n: usize, task: impl Fn(usize) + Send + Sync + 'static) {
    let task = Arc::new(task);
    let handles: Vec<_> = (0..n)
        .map(|i| {
            let task = Arc::clone(&task);
            thread::spawn(move || task(i))
        })
        .collect();
    for h in handles {
        h.join().expect("every request succeeds");
    }
}

/// POSTs `body` to `path`, waiting as told and trying again while the
/// server is busy (429 with `Retry-After`): the status and body.
fn patiently(server: &Server, path: &str, body: &str) -> (u16, String) {
    let json = [("Content-Type", "application/json")];
    for _ in 0..600 {
        let (status, headers, text) = server.send("POST", path, Some(body.as_bytes()), &json);
        if status != 429 {
            return (status, text);
        }
        let wait = headers
            .iter()
            .find(|(n, _)| n == "retry-after")
            .expect("Retry-After")
            .1
            .clone();
        thread::sleep(std::time::Duration::from_secs(wait.parse().expect("seconds")));
    }
    panic!("{path}: still busy after 600 tries");
}

/// Rounds of simulations.
const ROUNDS: usize = 24;
/// Simulations at once in a round.
const SIMULATIONS: usize = 20;
/// Rows of each (cruise control to 100 s at its 10 ms step).
const ROWS: u32 = 10_001;

#[test]
fn concurrent_validations_and_simulations_all_succeed_in_flat_memory() {
    let server = Arc::new(Server::with(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--max-simulations",
            &SIMULATIONS.to_string(),
            "--max-checks",
            &SIMULATIONS.to_string(),
        ],
        &root(),
    ));
    let model = std::fs::read_to_string(root().join("models/examples/cruise_control.json")).unwrap();

    let (s, m) = (Arc::clone(&server), model.clone());
    concurrently(200, move |_| {
        let (status, body) = patiently(&s, "/api/check", &m);
        assert_eq!(status, 200, "{body}");
    });

    let body = json!({"model": model, "stop": 100}).to_string();
    let columns = Arc::new(AtomicUsize::new(0));
    let mut memory = Vec::new();
    for _round in 0..ROUNDS {
        let (s, b, c) = (Arc::clone(&server), body.clone(), Arc::clone(&columns));
        concurrently(SIMULATIONS, move |_| {
            let (status, created) = patiently(&s, "/api/simulations", &b);
            assert_eq!(status, 201, "{created}");
            let id = serde_json::from_str::<Value>(&created).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string();
            let (mut socket, _) =
                tungstenite::connect(format!("ws://{}/api/simulations/{id}/stream", s.address)).expect("WebSocket");
            let mut rows = 0u32;
            loop {
                match socket.read().expect("the stream runs to its end") {
                    tungstenite::Message::Binary(b) => {
                        rows += u32::from_le_bytes(b[4..8].try_into().unwrap());
                        c.store(
                            u32::from_le_bytes(b[8..12].try_into().unwrap()) as usize,
                            Ordering::Relaxed,
                        );
                    }
                    tungstenite::Message::Text(t) if t.as_str().contains("\"type\":\"end\"") => {
                        let end: Value = serde_json::from_str(t.as_str()).unwrap();
                        assert_eq!(end["state"], "done");
                        break;
                    }
                    _ => {}
                }
            }
            assert_eq!(rows, ROWS);
        });
        memory.push(resident_kib(server.pid()));
    }
    // Memory wanders by several MiB from round to round as the
    // allocator's arenas take and give back, so the peaks of two stretches
    // far apart are compared against the results one round computes.
    let round_kib = (SIMULATIONS * ROWS as usize * columns.load(Ordering::Relaxed) * 8 / 1024) as u64;
    let peak = |rounds: std::ops::Range<usize>| memory[rounds].iter().copied().max().unwrap();
    let (early, late) = (peak(4..8), peak(ROUNDS - 4..ROUNDS));
    assert!(
        late < early + 4 * round_kib,
        "resident memory after each round (KiB): {memory:?}: the peak grew from {early} (rounds 5-8) to {late} \
         (the last 4), more than four rounds' results ({round_kib} KiB each)"
    );
}

#[test]
fn csv_downloads_are_streamed_in_bounded_memory() {
    let server = Server::start();
    let model = std::fs::read_to_string(root().join("models/examples/cruise_control.json")).unwrap();
    // 5e6 rows of 4 columns: the most values a simulation keeps, about
    // 250 MB as CSV.
    let body = json!({"model": model, "step": 1e-4, "stop": 499.99}).to_string();
    let (status, created) = server.post("/api/simulations", &body);
    assert_eq!(status, 201, "{created}");
    let id = serde_json::from_str::<Value>(&created).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let rows = loop {
        let status = server.json(&format!("/api/simulations/{id}"));
        if status["state"] != "running" {
            assert_eq!(status["state"], "done", "{status}");
            break status["rows"].as_u64().unwrap();
        }
        thread::sleep(std::time::Duration::from_millis(100));
    };
    let before = resident_kib(server.pid());
    // Eight downloads at once, each read 1 MiB into and then held.
    let mut downloads: Vec<(std::net::TcpStream, Vec<u8>)> = (0..8)
        .map(|_| {
            let mut stream = std::net::TcpStream::connect(&server.address).unwrap();
            write!(
                stream,
                "GET /api/simulations/{id}/csv HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
                server.address
            )
            .unwrap();
            let mut first = vec![0; 1 << 20];
            stream.read_exact(&mut first).unwrap();
            (stream, first)
        })
        .collect();
    let during = resident_kib(server.pid());
    let csv_mib = (rows * 50) >> 20;
    assert!(
        during < before + 64 * 1024,
        "resident memory grew from {before} KiB to {during} KiB with 8 downloads of a {csv_mib} MiB CSV begun: \
         more than 64 MiB, so the downloads are built whole"
    );
    // One read to its end has every row.
    let (stream, mut whole) = downloads.swap_remove(0);
    (&stream).read_to_end(&mut whole).unwrap();
    let newlines = whole.iter().filter(|&&b| b == b'\n').count() as u64;
    // The head, a chunk size per piece, the CSV's header and its rows.
    assert!(newlines > rows + 1, "{newlines} lines for {rows} rows");
    let text = String::from_utf8_lossy(&whole);
    assert!(text.trim_end().ends_with("\r\n0"), "the chunked body ends");
    assert!(text.contains("499.99,"), "the last row, at t = 499.99");
}
