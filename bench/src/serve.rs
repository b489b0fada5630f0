//! `tandem-bench serve`: what the web front end costs the work it shows.
//! A 1e6-row simulation with and without a WebSocket client streaming its
//! rows (goal: at most 10 % slower), and the EV plant at 1 kHz on the real
//! clock with and without a dashboard client reading its statistics and
//! rows (goal: no measurable change of the fast thread's wake-up latency).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem_config::load_run_config;
use tandem_models::plants;
use tandem_serve::{attach, serve_with, Limits, LiveRun};
use tandem_session::{bind, ClockMode, Options, Session};

use crate::median::median;

/// Rounds of each comparison, taking turns.
const ROUNDS: usize = 4;

/// `tandem-bench serve`.
pub fn run(seconds: f64) -> anyhow::Result<()> {
    streaming()?;
    dashboard(seconds)
}

/// Starts a server on a free loopback port with `runs` on its dashboard.
fn start(runs: Vec<Arc<LiveRun>>) -> anyhow::Result<SocketAddr> {
    let (ready, listening) = std::sync::mpsc::channel();
    let options = tandem_serve::Options::new("127.0.0.1:0".parse()?, ".".into());
    std::thread::spawn(move || {
        let _ = serve_with(options, runs, |address| {
            let _ = ready.send(address);
        });
    });
    Ok(listening.recv_timeout(Duration::from_secs(10))?)
}

/// Reads a stream to its end; the rows it got.
fn drain(address: SocketAddr, path: &str) -> anyhow::Result<u64> {
    let (mut socket, _) = tungstenite::connect(format!("ws://{address}{path}"))?;
    let mut rows = 0u64;
    loop {
        match socket.read()? {
            tungstenite::Message::Binary(b) => rows += u64::from(u32::from_le_bytes(b[4..8].try_into()?)),
            tungstenite::Message::Text(t) if t.as_str().contains("\"type\":\"end\"") => return Ok(rows),
            tungstenite::Message::Close(_) => return Ok(rows),
            _ => {}
        }
    }
}

/// The wall time of the simulation the server reports in its summary.
fn simulated(agent: &ureq::Agent, address: SocketAddr, body: &str, stream: bool) -> anyhow::Result<f64> {
    let created: Value = agent
        .post(format!("http://{address}/api/simulations"))
        .header("Content-Type", "application/json")
        .send(body)?
        .body_mut()
        .read_json()?;
    let id = created["id"].as_str().unwrap_or_default().to_string();
    if stream {
        drain(address, &format!("/api/simulations/{id}/stream"))?;
    }
    loop {
        let status: Value = agent
            .get(format!("http://{address}/api/simulations/{id}"))
            .call()?
            .body_mut()
            .read_json()?;
        if status["state"] != "running" {
            let summary = status["summary"].as_str().unwrap_or_default();
            let wall = summary.split(" in ").nth(1).and_then(|s| s.split(' ').next());
            return Ok(wall.and_then(|w| w.parse().ok()).unwrap_or(f64::NAN));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn streaming() -> anyhow::Result<()> {
    let address = start(Vec::new())?;
    let agent: ureq::Agent = ureq::Agent::config_builder().build().into();
    let model = std::fs::read_to_string("models/examples/cruise_control.json")?;
    let body = json!({"model": model, "step": 0.001, "stop": 999.999}).to_string();
    let (mut alone, mut streamed) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        alone.push(simulated(&agent, address, &body, false)?);
        streamed.push(simulated(&agent, address, &body, true)?);
    }
    let (a, s) = (median(&mut alone), median(&mut streamed));
    println!("serve: cruise control, 1e6 rows × 4 columns, median of {ROUNDS}; goal: streaming ≤ 1.10× alone");
    println!("  simulation alone          {a:8.3} s");
    println!("  while streamed live       {s:8.3} s   ({:.2}×)", s / a);
    Ok(())
}

/// Wake-up latency percentiles (µs) of the EV plant on the real clock for
/// `seconds`, with a dashboard client when `watched`.
fn ev_run(seconds: f64, watched: bool) -> anyhow::Result<[f64; 4]> {
    let mut config = load_run_config(Path::new("config/examples/ev.toml"), plants::PROFILES)?;
    config.settings.duration = seconds;
    let plan = bind(config)?;
    let results = std::env::temp_dir().join("tandem-bench-serve");
    let mut session = Session::new(plan, Options::new(ClockMode::Real, results))?;
    let report = if watched {
        let limits = Limits::default();
        let (run, mut observer) = attach(&mut session, "r0".into(), "ev".into(), limits.run_values)
            .ok_or_else(|| anyhow::anyhow!("no controls"))?;
        let address = start(vec![Arc::clone(&run)])?;
        let client = std::thread::spawn(move || drain(address, "/api/runs/r0/stream"));
        let report = session.run(&mut observer)?;
        run.finish(Ok(&report));
        let _ = client.join();
        report
    } else {
        session.run(&mut ())?
    };
    let s = report.metrics.wake_latency.snapshot();
    Ok([0.5, 0.99, 0.999, 1.0].map(|p| s.percentile(p) / 1e3))
}

fn dashboard(seconds: f64) -> anyhow::Result<()> {
    println!(
        "serve: ev plant at 1 kHz on the real clock, {seconds} s per run, {ROUNDS} rounds taking turns; wake-up \
         latency (µs); goal: no measurable change with a dashboard attached"
    );
    println!("  {:<18} {:>8} {:>8} {:>8} {:>8}", "", "p50", "p99", "p99.9", "max");
    let started = Instant::now();
    let (mut plain, mut watched) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        plain.push(ev_run(seconds, false)?);
        watched.push(ev_run(seconds, true)?);
    }
    for (name, runs) in [("alone", &plain), ("with a dashboard", &watched)] {
        let mean = |i: usize| runs.iter().map(|r| r[i]).sum::<f64>() / runs.len() as f64;
        println!(
            "  {name:<18} {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
            mean(0),
            mean(1),
            mean(2),
            mean(3)
        );
    }
    println!(
        "  (means over the rounds; {:.0} s in all)",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
