//! `tandem serve` under load on loopback, bounded in count and time: 200
//! concurrent validations, then rounds of 20 concurrent simulations each
//! read whole through its WebSocket; no request fails, and the server's
//! memory is the same after the fourth round as after the second (once it
//! keeps as many ended simulations as it will).

#[path = "support/server.rs"]
mod server;

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

#[test]
fn concurrent_validations_and_simulations_all_succeed_in_flat_memory() {
    let server = Arc::new(Server::with(
        &["serve", "--listen", "127.0.0.1:0", "--max-simulations", "20"],
        &root(),
    ));
    let model = std::fs::read_to_string(root().join("models/examples/cruise_control.json")).unwrap();

    let (s, m) = (Arc::clone(&server), model.clone());
    concurrently(200, move |_| {
        let (status, body) = s.post("/api/check", &m);
        assert_eq!(status, 200, "{body}");
    });

    let body = json!({"model": model, "stop": 100}).to_string();
    let mut memory = Vec::new();
    for _round in 0..12 {
        let (s, b) = (Arc::clone(&server), body.clone());
        concurrently(20, move |_| {
            let (status, created) = s.post("/api/simulations", &b);
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
                    tungstenite::Message::Binary(b) => rows += u32::from_le_bytes(b[4..8].try_into().unwrap()),
                    tungstenite::Message::Text(t) if t.as_str().contains("\"type\":\"end\"") => {
                        let end: Value = serde_json::from_str(t.as_str()).unwrap();
                        assert_eq!(end["state"], "done");
                        break;
                    }
                    _ => {}
                }
            }
            assert_eq!(rows, 10_001);
        });
        memory.push(resident_kib(server.pid()));
    }
    // The allocator's arenas settle within a few rounds, then memory
    // wanders by a few MiB: the later rounds' peak against the earlier's.
    let peak = |rounds: std::ops::Range<usize>| memory[rounds].iter().copied().max().unwrap();
    let (early, late) = (peak(2..6), peak(8..12));
    assert!(
        late < early + 8 * 1024,
        "resident memory after each round (KiB): {memory:?}: the peak grew from {early} (rounds 3-6) to {late} \
         (rounds 9-12)"
    );
}
