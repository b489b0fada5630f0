//! `tandem-bench cosim`: the speed-up of the co-simulation master's worker
//! threads. Two sub-models of the same size, each a generated JSON diagram
//! of a chain of first-order lags driven by a sine and by the other's
//! output, are co-simulated by Jacobi with `threads = 2` and with
//! `threads = 1` (the caller's thread alone), the system otherwise the
//! same. Each macro step takes each sub-model `MICRO_STEPS` RK4 micro
//! steps, far more work than the two barriers the threads meet at. The
//! runs alternate; the fastest of each is shown, and their results are
//! compared bit for bit.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Context;
use serde_json::{json, Value};
use tandem_cosim::System;
use tandem_runtime::record::Trace;

/// Lags in each sub-model's chain (three blocks each).
const LAGS: usize = 120;
/// The lags' time constant (s).
const TAU: f64 = 0.02;
/// The macro step (s).
const MACRO_STEP: f64 = 0.02;
/// RK4 micro steps per macro step.
const MICRO_STEPS: usize = 200;
/// The speed-up the two threads should reach.
const GOAL: f64 = 1.8;

/// A sub-model: input `u` plus a sine of `frequency` (rad/s) through
/// `lags` first-order lags (`x' = (e - x) / tau`, each a Sum, a Gain and
/// an Integrator) to output `y`.
fn lag_chain(lags: usize, frequency: f64) -> Value {
    let mut blocks = vec![
        json!({"id": "u", "type": "Inport"}),
        json!({"id": "source", "type": "Sine", "params": {"frequency": frequency}}),
        json!({"id": "input", "type": "Sum", "params": {"signs": "++"}}),
    ];
    let mut links = vec![
        json!({"from": "u", "to": "input.1"}),
        json!({"from": "source", "to": "input.2"}),
    ];
    let mut previous = "input".to_string();
    for k in 0..lags {
        let (error, gain, state) = (format!("e{k}"), format!("g{k}"), format!("x{k}"));
        blocks.push(json!({"id": error, "type": "Sum", "params": {"signs": "+-"}}));
        blocks.push(json!({"id": gain, "type": "Gain", "params": {"gain": 1.0 / TAU}}));
        blocks.push(json!({"id": state, "type": "Integrator", "params": {"initial": 0.0}}));
        links.push(json!({"from": previous, "to": format!("{error}.1")}));
        links.push(json!({"from": state, "to": format!("{error}.2")}));
        links.push(json!({"from": error, "to": gain}));
        links.push(json!({"from": gain, "to": state}));
        previous = state;
    }
    blocks.push(json!({"id": "y", "type": "Output"}));
    links.push(json!({"from": previous, "to": "y"}));
    json!({"blocks": blocks, "links": links})
}

/// The system: sub-models `a` and `b`, each driving the other's input
/// (`b` negated), Jacobi on `threads` threads for `steps` macro steps.
fn system(dir: &Path, steps: u64, threads: usize) -> anyhow::Result<System> {
    let micro = MACRO_STEP / MICRO_STEPS as f64;
    let text = format!(
        "[master]\nstep = {MACRO_STEP:?}\nstop = {:?}\nordering = \"jacobi\"\nthreads = {threads}\n\
         [[model]]\nname = \"a\"\nsource = \"a.json\"\nsolver = \"rk4\"\nstep = {micro:?}\n\
         [[model]]\nname = \"b\"\nsource = \"b.json\"\nsolver = \"rk4\"\nstep = {micro:?}\n\
         [[connection]]\nfrom = \"a.y\"\nto = \"b.u\"\n\
         [[connection]]\nfrom = \"b.y\"\nto = \"a.u\"\nscale = -1.0\n",
        steps as f64 * MACRO_STEP
    );
    tandem_cosim::parse(&text, &dir.join("system.toml")).context("the generated system")
}

/// Runs the system; returns its wall time and its rows.
fn run_once(dir: &Path, steps: u64, threads: usize) -> anyhow::Result<(Duration, Trace)> {
    let system = system(dir, steps, threads)?;
    let mut trace = Trace::default();
    let summary = system.run(&mut trace, &mut |_| {})?;
    Ok((summary.wall, trace))
}

/// Whether two runs recorded the same times and values, bit for bit.
fn same_bits(a: &Trace, b: &Trace) -> bool {
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    bits(&a.time) == bits(&b.time)
        && a.rows.len() == b.rows.len()
        && a.rows.iter().zip(&b.rows).all(|(x, y)| bits(x) == bits(y))
}

/// `tandem-bench cosim`.
pub fn run(seconds: f64) -> anyhow::Result<()> {
    let dir = tempfile::tempdir().context("a temporary folder for the generated system")?;
    for (name, frequency) in [("a", 1.0), ("b", 2.0)] {
        let path = dir.path().join(format!("{name}.json"));
        std::fs::write(&path, lag_chain(LAGS, frequency).to_string())
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let blocks = 3 * LAGS + 4;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);

    // The number of macro steps that makes one run on one thread last
    // about a quarter of the budget.
    let probe = 10;
    let (wall, _) = run_once(dir.path(), probe, 1)?;
    let per_step = wall.as_secs_f64() / probe as f64;
    let steps = ((seconds / 4.0 / per_step).round() as u64).max(20);

    let budget = Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let (mut one, mut two) = (Vec::new(), Vec::new());
    let (mut first, mut identical) = (None::<Trace>, true);
    while one.len() < 2 || start.elapsed() < budget {
        for (threads, walls) in [(1, &mut one), (2, &mut two)] {
            let (wall, trace) = run_once(dir.path(), steps, threads)?;
            walls.push(wall);
            match &first {
                None => first = Some(trace),
                Some(reference) => identical &= same_bits(reference, &trace),
            }
        }
    }
    let fastest = |walls: &[Duration]| walls.iter().min().copied().unwrap_or_default().as_secs_f64();
    let (t1, t2) = (fastest(&one), fastest(&two));
    let speed_up = t1 / t2;
    let rows = first.as_ref().map_or(0, |t| t.rows.len());
    println!(
        "cosim: Jacobi, two sub-models of {blocks} blocks each ({LAGS} first-order lags, rk4), {MICRO_STEPS} micro steps per macro step of {} ms, {steps} macro steps",
        MACRO_STEP * 1e3
    );
    println!(
        "  threads = 1: {:>9.1} ms ({:.0} µs per macro step), fastest of {} runs",
        t1 * 1e3,
        t1 * 1e6 / steps as f64,
        one.len()
    );
    println!(
        "  threads = 2: {:>9.1} ms ({:.0} µs per macro step), fastest of {} runs",
        t2 * 1e3,
        t2 * 1e6 / steps as f64,
        two.len()
    );
    println!("  speed-up: {speed_up:.2}x (goal >= {GOAL}x)");
    println!(
        "  results: {} ({rows} rows of every run compared with the first)",
        if identical {
            "identical, bit for bit"
        } else {
            "DIFFERENT"
        }
    );
    if cores < 2 {
        println!("  this machine has {cores} core: two threads cannot run side by side here");
    } else {
        println!("  this machine: {cores} cores");
    }
    Ok(())
}
