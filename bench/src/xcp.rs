//! `tandem-bench xcp`: what the run's XCP slave costs on the real clock.
//!
//! - DAQ: a model of N sine signals (a diagram of N `Sine` blocks, each an
//!   output) at 1 kHz with N = 100 and at 10 kHz with N = 20, run
//!   alternately without and with a master sampling every signal each
//!   frame (--seconds per run, three times each; the fast thread on core 1,
//!   the rest on core 0). Goals: no DTO lost; the fast thread's work per
//!   frame grows by at most 2 µs at p99 (the tap's p99, timed on its own
//!   since compute excludes it, beside compute's p99 with and without);
//!   wake-up latency the same within the spread of the runs without DAQ.
//! - Calibration: the EV plant at 1 kHz with a master changing its mass
//!   every 50 ms. Goal: each change applied within 2 frames of its
//!   DOWNLOAD's acknowledgement.
//! - Calibration of a compiled diagram: the 2000-state thermal ladder as a
//!   block diagram (6000 blocks) at 1 kHz, with a master changing the
//!   gain of its first node once a second (each change compiled again off
//!   the real-time threads), against the same run without, alternately.
//!   Goal: the fast compute p99 within 10 % of the run without.

use std::net::SocketAddr;
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::json;
use tandem_models::diagram::compile_str;
use tandem_models::plants;
use tandem_runtime::tandem::metrics::Metrics;
use tandem_runtime::tandem::TandemSettings;
use tandem_session::xcp::{XcpOptions, XcpReport};
use tandem_session::{ClockMode, Options, Plan, Report, Session};
use tandem_xcp::master::Master;

use crate::median::median;

/// The growth of the fast thread's work per frame allowed at p99 (µs).
const WORK_GOAL_US: f64 = 2.0;
/// Frames a calibration may take from acknowledgement to effect.
const CALIBRATION_GOAL_FRAMES: u64 = 2;
/// Runs of each kind, alternating.
const ROUNDS: usize = 3;

/// A diagram of `n` sine signals (frequencies 1, 1.1, 1.2, … rad/s), each
/// an output.
fn sines(n: usize) -> anyhow::Result<Box<dyn tandem_models::Model>> {
    let mut blocks = Vec::new();
    let mut links = Vec::new();
    for i in 0..n {
        blocks.push(json!({"id": format!("sine{i}"), "type": "Sine",
            "params": {"amplitude": 1.0, "frequency": 1.0 + 0.1 * i as f64}}));
        blocks.push(json!({"id": format!("y{i}"), "type": "Outport"}));
        links.push(json!({"from": format!("sine{i}"), "to": format!("y{i}")}));
    }
    let text = json!({"name": format!("{n} sines"), "blocks": blocks, "links": links}).to_string();
    Ok(Box::new(compile_str(&text)?.model))
}

/// What one run measured.
struct Measured {
    compute_p99_us: f64,
    tap_p99_us: f64,
    wake_p50_us: f64,
    wake_p99_us: f64,
    missed: u64,
    frames: u64,
    /// DTOs the master received, and those flagged after a lost sample.
    dtos: Option<(u64, u64)>,
    xcp: Option<XcpReport>,
}

impl Measured {
    fn of(report: Report, dtos: Option<(u64, u64)>) -> Self {
        let m: &Metrics = &report.metrics;
        let us = |h: &tandem_runtime::tandem::metrics::Histogram, p: f64| h.snapshot().percentile(p) / 1e3;
        Measured {
            compute_p99_us: us(&m.compute, 0.99),
            tap_p99_us: if m.tap.snapshot().count == 0 {
                0.0
            } else {
                us(&m.tap, 0.99)
            },
            wake_p50_us: us(&m.wake_latency, 0.5),
            wake_p99_us: us(&m.wake_latency, 0.99),
            missed: m.missed(),
            frames: m.frames.get(),
            dtos,
            xcp: report.xcp,
        }
    }
}

/// A master sampling measurements `0..n` on the frame event until the
/// slave goes quiet; returns the DTOs received and those overloaded.
fn daq_master(slave: SocketAddr, n: u32) -> JoinHandle<anyhow::Result<(u64, u64)>> {
    std::thread::spawn(move || {
        let mut master = Master::connect(slave)?;
        let all: Vec<u32> = (0..n).collect();
        master.start_daq(&[(0, &all)])?;
        let mut quiet = 0;
        while quiet < 5 {
            let before = master.dtos;
            master.receive()?;
            quiet = if master.dtos > before { 0 } else { quiet + 1 };
        }
        let counts = (master.dtos, master.overloaded);
        master.disconnect()?;
        Ok(counts)
    })
}

/// A run of `model` for `seconds` at `frame`, with a DAQ master on every
/// signal when `daq`.
fn run_sines(signals: usize, frame: f64, seconds: f64, daq: bool) -> anyhow::Result<Measured> {
    let mut settings = TandemSettings::new(frame, seconds);
    // As the examples place them: the fast thread alone on core 1.
    settings.fast.placement.core = Some(1);
    settings.implicit.placement.core = Some(0);
    let plan = Plan::new(sines(signals)?, "sines", settings, Vec::new());
    let options = Options {
        xcp: daq.then(|| XcpOptions {
            listen: "127.0.0.1:0".parse().expect("an address"),
            a2l: None,
            wait: true,
        }),
        ..Options::new(ClockMode::Real, std::env::temp_dir())
    };
    let session = Session::new(plan, options)?;
    let master = session.xcp_addresses().map(|(udp, _)| daq_master(udp, signals as u32));
    let report = session.run(&mut ())?;
    let dtos = match master {
        Some(m) => Some(m.join().map_err(|_| anyhow::anyhow!("the master panicked"))??),
        None => None,
    };
    Ok(Measured::of(report, dtos))
}

/// One DAQ case: runs alternating without and with DAQ, and the figures.
fn daq_case(signals: usize, frame: f64, seconds: f64) -> anyhow::Result<()> {
    println!(
        "\n{signals} signals at {:.0} Hz, {seconds} s per run, alternating without and with DAQ of every signal each frame",
        1.0 / frame
    );
    println!(
        "  {:<8} {:>12} {:>9} {:>11} {:>11} {:>7} {:>13} {:>6}",
        "DAQ", "compute p99", "tap p99", "wake p50", "wake p99", "missed", "DTOs/frames", "lost"
    );
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        for daq in [false, true] {
            let m = run_sines(signals, frame, seconds, daq)?;
            let (dtos, lost) = match (&m.dtos, &m.xcp) {
                (Some((dtos, _)), Some(x)) => (format!("{dtos}/{}", m.frames), x.overruns.to_string()),
                _ => ("-".into(), "-".into()),
            };
            println!(
                "  {:<8} {:>9.2} µs {:>6.2} µs {:>8.1} µs {:>8.1} µs {:>7} {:>13} {:>6}",
                if daq { "with" } else { "without" },
                m.compute_p99_us,
                m.tap_p99_us,
                m.wake_p50_us,
                m.wake_p99_us,
                m.missed,
                dtos,
                lost
            );
            if daq { &mut with } else { &mut without }.push(m);
        }
    }
    let median_of = |runs: &[Measured], f: fn(&Measured) -> f64| median(&mut runs.iter().map(f).collect::<Vec<_>>());
    let tap = median_of(&with, |m| m.tap_p99_us);
    let compute = (
        median_of(&with, |m| m.compute_p99_us),
        median_of(&without, |m| m.compute_p99_us),
    );
    let lost: u64 = with
        .iter()
        .map(|m| {
            let sent = m.xcp.as_ref().map_or(0, |x| x.overruns);
            let short = m.dtos.map_or(0, |(dtos, _)| m.frames.saturating_sub(dtos));
            sent + short
        })
        .sum();
    let spread = |runs: &[Measured], f: fn(&Measured) -> f64| {
        runs.iter()
            .fold((f64::INFINITY, 0.0f64), |(lo, hi), m| (lo.min(f(m)), hi.max(f(m))))
    };
    let (w_lo, w_hi) = spread(&without, |m| m.wake_p99_us);
    let (d_lo, d_hi) = spread(&with, |m| m.wake_p99_us);
    let (c_lo, c_hi) = spread(&without, |m| m.compute_p99_us);
    println!(
        "  work DAQ adds to a frame, p99 (the tap, which compute excludes): {tap:.2} µs (goal <= {WORK_GOAL_US} µs)"
    );
    println!(
        "  compute p99, median with DAQ {:.0} µs, without {:.0} µs; the runs without spread {c_lo:.0}-{c_hi:.0} µs (1 µs bins)",
        compute.0, compute.1
    );
    println!("  DTOs lost: {lost} (goal 0)");
    println!(
        "  wake-up p99: {d_lo:.1}-{d_hi:.1} µs with DAQ, {w_lo:.1}-{w_hi:.1} µs without (goal: the same within the spread)"
    );
    Ok(())
}

/// A master's calibrations: characteristic 0 set to each of `values` in
/// turn, `every` so long, each answer awaited up to `patience`.
struct Calibrations {
    values: [f64; 2],
    every: Duration,
    patience: Duration,
}

/// `model` run at 1 kHz for `seconds` on the real clock serving XCP, with
/// a master making `calibrations` when given.
fn calibrated_run(
    model: Box<dyn tandem_models::Model>,
    name: &str,
    seconds: f64,
    calibrations: Option<Calibrations>,
) -> anyhow::Result<Report> {
    let plan = Plan::new(model, name, TandemSettings::new(1e-3, seconds), Vec::new());
    let options = Options {
        xcp: Some(XcpOptions {
            listen: "127.0.0.1:0".parse().expect("an address"),
            a2l: None,
            wait: false,
        }),
        ..Options::new(ClockMode::Real, std::env::temp_dir())
    };
    let session = Session::new(plan, options)?;
    let (udp, _) = session.xcp_addresses().expect("the run serves XCP");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stopping = std::sync::Arc::clone(&stop);
    let master = calibrations.map(|c| {
        std::thread::spawn(move || -> anyhow::Result<()> {
            let mut master = Master::connect(udp)?;
            master.set_timeout(c.patience)?;
            let mut n = 0usize;
            while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
                master.calibrate(0, c.values[n % 2])?;
                n += 1;
                std::thread::sleep(c.every);
            }
            Ok(())
        })
    });
    let report = session.run(&mut ())?;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    // Refused once the run has ended: that answer ends the master.
    let _ = master.map(JoinHandle::join);
    Ok(report)
}

/// The EV plant with a master changing its mass every 50 ms.
fn calibration(seconds: f64) -> anyhow::Result<()> {
    let model = plants::builtin("ev").ok_or_else(|| anyhow::anyhow!("no ev plant"))?;
    let calibrations = Calibrations {
        values: [2000.0, 1800.0],
        every: Duration::from_millis(50),
        patience: Duration::from_millis(100),
    };
    let report = calibrated_run(model, "ev", seconds, Some(calibrations))?;
    let calibrations = report.xcp.map(|x| x.calibrations).unwrap_or_default();
    let mut delays: Vec<u64> = calibrations
        .iter()
        .filter_map(|c| Some(c.applied_at? - c.acknowledged_at))
        .collect();
    delays.sort_unstable();
    let unapplied = calibrations.len() - delays.len();
    println!(
        "\ncalibration of the EV plant's mass every 50 ms at 1 kHz, {seconds} s: {} acknowledged, {unapplied} not applied before the end",
        calibrations.len()
    );
    if let (Some(median), Some(max)) = (delays.get(delays.len() / 2), delays.last()) {
        println!(
            "  frames from acknowledgement to effect: median {median}, max {max} (goal <= {CALIBRATION_GOAL_FRAMES})"
        );
    }
    Ok(())
}

/// States of the ladder diagram calibrated.
const LADDER: usize = 2000;
/// The growth of the fast compute's p99 allowed under calibration.
const CALIBRATED_COMPUTE_GOAL: f64 = 0.1;

/// The thermal ladder of `n` states as a block diagram, compiled: per
/// state a Sum of its two neighbours less twice itself, a Gain (the first
/// one the model's first numeric parameter, XCP characteristic 0) and an
/// Integrator; the last state an output.
fn ladder_diagram(n: usize) -> anyhow::Result<(Box<dyn tandem_models::Model>, f64)> {
    let k = ((n + 1) as f64 / std::f64::consts::PI).powi(2);
    let (mut blocks, mut links) = (Vec::new(), Vec::new());
    for i in 0..n {
        let neighbours: Vec<usize> = [i.wrapping_sub(1), i + 1].into_iter().filter(|&j| j < n).collect();
        let signs = format!("--{}", "+".repeat(neighbours.len()));
        let initial = 10.0 * (std::f64::consts::PI * (i + 1) as f64 / (n + 1) as f64).sin();
        blocks.push(json!({"id": format!("s{i}"), "type": "Sum", "params": {"signs": signs}}));
        blocks.push(json!({"id": format!("g{i}"), "type": "Gain", "params": {"gain": k}}));
        blocks.push(json!({"id": format!("T{i}"), "type": "Integrator", "params": {"initial": initial}}));
        for (port, j) in [i, i].into_iter().chain(neighbours).enumerate() {
            links.push(json!({"from": format!("T{j}"), "to": format!("s{i}.{}", port + 1)}));
        }
        links.push(json!({"from": format!("s{i}"), "to": format!("g{i}")}));
        links.push(json!({"from": format!("g{i}"), "to": format!("T{i}")}));
    }
    blocks.push(json!({"id": "t_last", "type": "Output"}));
    links.push(json!({"from": format!("T{}", n - 1), "to": "t_last"}));
    let text = json!({"name": format!("ladder of {n}"), "blocks": blocks, "links": links}).to_string();
    let (model, _) = tandem_jit::prepare(compile_str(&text)?.model);
    Ok((model, k))
}

/// The ladder diagram at 1 kHz for `seconds`, with a master changing its
/// first gain by 0.1 % once a second when `calibrate`: the fast compute's
/// p99 (µs), the missed deadlines and the calibrations acknowledged.
fn run_ladder(seconds: f64, calibrate: bool) -> anyhow::Result<(f64, u64, usize)> {
    let (model, k) = ladder_diagram(LADDER)?;
    let calibrations = calibrate.then_some(Calibrations {
        values: [k * 1.001, k],
        every: Duration::from_secs(1),
        // A DOWNLOAD is answered once the diagram is compiled again.
        patience: Duration::from_secs(5),
    });
    let report = calibrated_run(model, "ladder", seconds, calibrations)?;
    let compute = report.metrics.compute.snapshot().percentile(0.99) / 1e3;
    let calibrations = report.xcp.map_or(0, |x| x.calibrations.len());
    Ok((compute, report.metrics.missed(), calibrations))
}

/// The ladder diagram calibrated once a second against the same run
/// without, alternately.
fn calibration_of_a_compiled_diagram(seconds: f64) -> anyhow::Result<()> {
    println!(
        "
calibration of a compiled {LADDER}-state ladder diagram ({} blocks) once a second at 1 kHz, {seconds} s per run",
        3 * LADDER + 1
    );
    let (mut with, mut without) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        for calibrate in [false, true] {
            let (p99, missed, calibrations) = run_ladder(seconds, calibrate)?;
            println!(
                "  {:<16} fast compute p99 {p99:>7.1} µs, missed {missed:>5}, calibrations {calibrations}",
                if calibrate { "calibrated" } else { "not calibrated" }
            );
            if calibrate { &mut with } else { &mut without }.push(p99);
        }
    }
    let (with, without) = (median(&mut with), median(&mut without));
    let growth = with / without - 1.0;
    println!(
        "  median p99 {with:.1} µs calibrated, {without:.1} µs not: {:+.1} % (goal <= {:.0} %: {})",
        100.0 * growth,
        100.0 * CALIBRATED_COMPUTE_GOAL,
        if growth <= CALIBRATED_COMPUTE_GOAL {
            "met"
        } else {
            "NOT met"
        }
    );
    Ok(())
}

/// Runs the XCP figures, `seconds` per run.
pub fn run(seconds: f64) -> anyhow::Result<()> {
    println!("xcp: the run's XCP slave on the real clock (a master on UDP in this process)");
    daq_case(100, 1e-3, seconds)?;
    daq_case(20, 1e-4, seconds)?;
    calibration(seconds)?;
    calibration_of_a_compiled_diagram(seconds)
}
