//! Benchmarks of the real-time tandem, printed (never asserted):
//!
//! - `accuracy`: the EV plant at a 1 ms frame over its 20 s drive cycle
//!   with `explicit`, `correct` and `select`, against the BDF at rtol 1e-10
//!   on the same held inputs: the largest error of each output relative to
//!   its largest magnitude;
//! - `jitter`: wake-up latency percentiles of cyclictest and of Tandem's
//!   fast loop (running the EV plant under `correct`) at 1 kHz and 10 kHz,
//!   measured one after the other;
//! - `rate`: deadline misses of the EV plant under `correct` at 1 to 50 kHz,
//!   beside the wake-ups that cyclictest sees late at the same rate.

use std::process::Command;
use std::sync::Arc;

use anyhow::{bail, Context};
use tandem_models::{plants, Model};
use tandem_runtime::record::Trace;
use tandem_runtime::tandem::inputs::{signals_by_name, Signals};
use tandem_runtime::tandem::metrics::{FrameSource, Metrics, Snapshot};
use tandem_runtime::tandem::virtual_clock::VirtualCosts;
use tandem_runtime::tandem::{FastMethod, Policy, TandemSettings};
use tandem_runtime::WMethod;
use tandem_session::bind::BoundRecording;
use tandem_session::{ClockMode, Observer, Options, Plan, Session};

/// The EV plant and its drive cycle as input indices.
pub(crate) fn ev() -> (Box<dyn Model>, Signals) {
    let model = plants::builtin("ev").expect("the ev plant is built in");
    let cycle = plants::profile("ev-drive-cycle").expect("the drive cycle is built in");
    let inputs = signals_by_name(model.layout(), cycle.iter().copied()).expect("drive-cycle inputs are the plant's");
    (model, inputs)
}

/// The outcome of one run: outputs per frame (all outputs), metrics, and
/// the failure that stopped it, if any.
struct Outcome {
    trace: Trace,
    tandem_metrics: Arc<Metrics>,
    failure: Option<String>,
}

/// Keeps every recorded row in memory.
struct Keep(Trace);

impl Observer for Keep {
    fn record(&mut self, t: f64, y: &[f64]) {
        self.0.time.push(t);
        self.0.rows.push(y.to_vec());
    }
}

/// Runs the EV plant under `settings` (on the virtual clock with `costs`,
/// else on the real one), recording every output every frame in memory if
/// `record`.
fn run_ev(settings: &TandemSettings, costs: Option<&VirtualCosts>, record: bool) -> anyhow::Result<Outcome> {
    let (model, inputs) = ev();
    let outputs = model.layout().outputs.len();
    let mut plan = Plan::new(model, "ev", *settings, inputs);
    plan.record = record.then(|| BoundRecording {
        file: None,
        signals: (0..outputs).collect(),
        decimation: 1,
        frame_source: false,
    });
    let clock = match costs {
        Some(costs) => {
            plan.virtual_costs = costs.clone();
            ClockMode::Virtual
        }
        None => ClockMode::Real,
    };
    let session = Session::new(plan, Options::new(clock, std::env::temp_dir()))?;
    let mut keep = Keep(Trace::default());
    let report = session.run(&mut keep)?;
    Ok(Outcome {
        trace: keep.0,
        tandem_metrics: report.metrics,
        failure: report.failure,
    })
}

/// Largest error of output `i` relative to the largest magnitude of the
/// reference, over the frames both runs have.
fn relative_error(run: &Trace, reference: &Trace, i: usize) -> (f64, f64) {
    let peak = reference.rows.iter().map(|r| r[i].abs()).fold(0.0, f64::max);
    let (worst, at) = run
        .rows
        .iter()
        .zip(&reference.rows)
        .zip(&run.time)
        .map(|((a, b), &t)| ((a[i] - b[i]).abs(), t))
        .fold((0.0, 0.0), |(m, at): (f64, f64), (e, t)| {
            let e = if e.is_nan() { f64::INFINITY } else { e };
            if e > m {
                (e, t)
            } else {
                (m, at)
            }
        });
    (worst / peak.max(f64::MIN_POSITIVE), at)
}

/// `tandem-bench accuracy`.
pub fn accuracy(real_clock: bool) -> anyhow::Result<()> {
    let base = TandemSettings::new(1e-3, 20.0);
    let costs = VirtualCosts {
        fast_step: 20_000,
        implicit_step: 300_000,
        ..VirtualCosts::default()
    };
    // The reference: every frame takes the BDF's state at rtol 1e-10,
    // computed at no cost on the same held inputs.
    let mut reference = base;
    reference.policy = Policy::Select;
    reference.implicit.rtol = 1e-10;
    reference.implicit.atol = 1e-10;
    let free = VirtualCosts::default();
    let reference = run_ev(&reference, Some(&free), true)?;
    if let Some(f) = &reference.failure {
        bail!("the reference run failed: {f}");
    }
    let clock = if real_clock {
        "real clock"
    } else {
        "virtual clock, 20 µs per fast step, 300 µs per implicit step"
    };
    println!("accuracy: ev plant, 1 ms frame, 20 s drive cycle, bdf (rtol 1e-6) on the implicit side ({clock})");
    println!("  reference: bdf at rtol 1e-10 on the same held inputs; goal: correct and select within 1e-3");
    let w = FastMethod::LinearlyImplicit(WMethod::Ros34pw2);
    let rk4 = FastMethod::Explicit(tandem_runtime::Method::Rk4);
    // (column, policy, fast method, matrix interval in frames; 0: the
    // initial state's matrix for the whole run, no implicit thread)
    let configurations = [
        ("rk4 alone", Policy::Explicit, rk4, 1),
        ("rk4 correct", Policy::Correct, rk4, 1),
        ("rk4 select", Policy::Select, rk4, 1),
        ("ros34pw2 frozen", Policy::Explicit, w, 0),
        ("ros34pw2 alone", Policy::Explicit, w, 1),
        ("correct", Policy::Correct, w, 1),
        ("select", Policy::Select, w, 1),
    ];
    let mut runs = Vec::new();
    for (name, policy, method, interval) in configurations {
        let mut s = base;
        s.policy = policy;
        s.fast.method = method;
        s.fast.matrix_interval = interval;
        let outcome = run_ev(&s, (!real_clock).then_some(&costs), true)?;
        runs.push((name, outcome));
    }
    println!("  (\"alone\": no implicit integration, the ros34pw2 matrix prepared every frame by the implicit thread;");
    println!("   \"frozen\": the initial state's matrix for the whole run, no implicit thread at all)");
    let (model, _) = ev();
    print!("  {:<20}", "max relative error");
    for (name, _) in &runs {
        print!(" {name:>16}");
    }
    println!();
    for (i, output) in model.layout().outputs.iter().enumerate() {
        print!("  {:<20}", output.name);
        for (_, run) in &runs {
            let (e, _) = relative_error(&run.trace, &reference.trace, i);
            if run.failure.is_some() {
                print!(" {:>16}", "diverged");
            } else {
                print!(" {e:>16.2e}");
            }
        }
        println!();
    }
    print!("  {:<20}", "worst frame at (s)");
    for (_, run) in &runs {
        let worst = (0..model.layout().outputs.len())
            .map(|i| relative_error(&run.trace, &reference.trace, i))
            .fold((0.0, 0.0), |w: (f64, f64), e| if e.0 > w.0 { e } else { w });
        print!(" {:>16.3}", worst.1);
    }
    println!();
    for (name, run) in &runs {
        let m = &run.tandem_metrics;
        let sources: Vec<String> = FrameSource::ALL
            .iter()
            .map(|&s| format!("{} {}", s.name(), m.from_source(s)))
            .collect();
        print!(
            "  {name}: {} frames; {}; missed {}, resyncs {}, implicit failures {}, unusable states {}, outputs clamped {}",
            m.frames.get(),
            sources.join(", "),
            m.missed(),
            m.resyncs.get(),
            m.implicit_failures.get(),
            m.unusable(),
            m.outputs_clamped.get()
        );
        match &run.failure {
            Some(f) => println!("; stopped: {f}"),
            None => println!(),
        }
    }
    Ok(())
}

/// A latency histogram in whole microseconds: `counts[i]` wake-ups took
/// `i` µs (truncated, as cyclictest counts); `over` took longer than the
/// histogram.
struct Latencies {
    counts: Vec<u64>,
    over: u64,
    max: f64,
}

impl Latencies {
    fn total(&self) -> u64 {
        self.counts.iter().sum::<u64>() + self.over
    }

    /// The whole microseconds of the bucket holding fraction `p`.
    fn percentile(&self, p: f64) -> f64 {
        let rank = ((p * self.total() as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return (i as f64).min(self.max);
            }
        }
        self.max
    }

    /// Wake-ups at or beyond `limit_us`.
    fn at_least(&self, limit_us: usize) -> u64 {
        self.counts.iter().skip(limit_us).sum::<u64>() + self.over
    }

    /// Adds the wake-ups of `other`.
    fn merge(&mut self, other: &Latencies) {
        if self.counts.len() < other.counts.len() {
            self.counts.resize(other.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.over += other.over;
        self.max = self.max.max(other.max);
    }

    /// From Tandem's wake-up histogram (nanoseconds, 1 µs buckets).
    fn from_snapshot(s: &Snapshot) -> Self {
        let over = s.overflow();
        let mut counts = Vec::new();
        for (value, c) in s.buckets() {
            let us = (value / 1e3).round() as usize;
            if counts.len() <= us {
                counts.resize(us + 1, 0);
            }
            counts[us] += c;
        }
        if over > 0 {
            counts.pop();
        }
        Latencies {
            counts,
            over,
            max: s.max / 1e3,
        }
    }
}

/// Checks that cyclictest is installed.
fn ensure_cyclictest() -> anyhow::Result<()> {
    if Command::new("cyclictest").arg("--help").output().is_ok() {
        return Ok(());
    }
    bail!("cyclictest is not installed: run bench/install-tools.sh (Debian's rt-tests)")
}

/// Runs cyclictest on core 1 at SCHED_FIFO 80, `loops` wake-ups every
/// `interval_us`.
fn cyclictest(interval_us: u64, loops: u64) -> anyhow::Result<Latencies> {
    let out = Command::new("cyclictest")
        .args(["-m", "-p", "80", "-t", "1", "-a", "1", "-q", "-h", "20000"])
        .args(["-i", &interval_us.to_string(), "-l", &loops.to_string()])
        .output()
        .context("running cyclictest")?;
    if !out.status.success() {
        bail!("cyclictest failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut counts = vec![0u64; 20_000];
    let (mut over, mut max) = (0, 0.0);
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        match fields.as_slice() {
            [us, n] if !line.starts_with('#') => {
                if let (Ok(us), Ok(n)) = (us.parse::<usize>(), n.parse::<u64>()) {
                    if us < counts.len() {
                        counts[us] += n;
                    }
                }
            }
            ["#", "Max", "Latencies:", v, ..] => max = v.parse().unwrap_or(0.0),
            ["#", "Histogram", "Overflows:", v, ..] => over = v.parse().unwrap_or(0),
            _ => {}
        }
    }
    Ok(Latencies { counts, over, max })
}

/// Tandem's fast loop as it runs the EV plant under `correct` (ROS34PW2
/// on core 1 at SCHED_FIFO 80, the BDF on core 0 at 70) for `loops` frames
/// of `interval_us`.
fn tandem_loop(interval_us: u64, loops: u64) -> anyhow::Result<Latencies> {
    let frame = interval_us as f64 * 1e-6;
    let s = TandemSettings::new(frame, loops as f64 * frame);
    let (model, inputs) = ev();
    let session = Session::new(
        Plan::new(model, "ev", s, inputs),
        Options::new(ClockMode::Real, std::env::temp_dir()),
    )?;
    let report = session.run(&mut ())?;
    if let Some(f) = report.failure {
        bail!("the tandem loop stopped: {f}");
    }
    Ok(Latencies::from_snapshot(&report.metrics.wake_latency.snapshot()))
}

/// Wake-ups per round of `tandem-bench jitter`, in which Tandem and
/// cyclictest take turns.
const JITTER_ROUND: u64 = 2000;

/// `tandem-bench jitter`.
pub fn jitter(loops: u64) -> anyhow::Result<()> {
    ensure_cyclictest()?;
    println!(
        "jitter: wake-up latency (µs), cyclictest vs Tandem's fast loop, core 1, SCHED_FIFO 80, {loops} wake-ups each, \
         in turns of {JITTER_ROUND}; goal: p99 within 1.1x cyclictest's"
    );
    println!(
        "  {:<8} {:<12} {:>8} {:>8} {:>8} {:>8} {:>10}",
        "rate", "loop", "p50", "p99", "p99.9", "max", "samples"
    );
    for interval_us in [1000, 100] {
        // Taking turns, both see the same drift of a shared machine.
        let rounds = loops.div_ceil(JITTER_ROUND).max(1);
        let per_round = loops / rounds;
        let empty = || Latencies {
            counts: Vec::new(),
            over: 0,
            max: 0.0,
        };
        let (mut c, mut t) = (empty(), empty());
        for _ in 0..rounds {
            t.merge(&tandem_loop(interval_us, per_round)?);
            c.merge(&cyclictest(interval_us, per_round)?);
        }
        let rate = format!("{} kHz", 1000 / interval_us);
        for (name, l) in [("cyclictest", &c), ("tandem", &t)] {
            println!(
                "  {rate:<8} {name:<12} {:>8.0} {:>8.0} {:>8.0} {:>8.0} {:>10}",
                l.percentile(0.5),
                l.percentile(0.99),
                l.percentile(0.999),
                l.max,
                l.total()
            );
        }
        println!(
            "  {rate:<8} {:<12} {:>8.2} {:>8.2} {:>8.2} {:>8.2}",
            "ratio",
            t.percentile(0.5) / c.percentile(0.5),
            t.percentile(0.99) / c.percentile(0.99),
            t.percentile(0.999) / c.percentile(0.999),
            t.max / c.max
        );
    }
    println!("  (the maximum is set by hypervisor stalls on a VM: compare percentiles)");
    Ok(())
}

/// Rounds per rate of `tandem-bench rate`: Tandem and cyclictest take
/// turns, so that both see the same drift of a shared machine.
const RATE_ROUNDS: u64 = 20;

/// `tandem-bench rate`.
pub fn rate(seconds: f64) -> anyhow::Result<()> {
    ensure_cyclictest()?;
    let defaults = TandemSettings::new(1e-3, 1.0);
    println!(
        "rate: ev plant under correct ({} + {}), {seconds} s per rate in {RATE_ROUNDS} rounds, each of Tandem then \
         cyclictest; late = woke after the output deadline (0.8 frame)",
        defaults.fast.method, defaults.implicit.solver
    );
    println!("  goal at 10 and 20 kHz: missed at most 1.2x cyclictest's late wake-ups");
    println!(
        "  {:>7} {:>8} {:>9} {:>10} {:>9} {:>16} {:>7} {:>9} {:>9} {:>7} {:>7} {:>12}",
        "rate",
        "frames",
        "missed",
        "woke late",
        "overran",
        "cyclictest late",
        "ratio",
        "explicit",
        "catch-up",
        "stale",
        "resync",
        "implicit p99"
    );
    for khz in [1u64, 5, 10, 20, 50] {
        let interval_us = 1000 / khz;
        let frame = interval_us as f64 * 1e-6;
        let frames = (seconds / frame / RATE_ROUNDS as f64).round() as u64;
        let deadline_us = (0.8 * interval_us as f64).ceil() as usize;
        let mut total = [0u64; 9];
        let mut implicit_p99: f64 = 0.0;
        let mut failure = None;
        for _ in 0..RATE_ROUNDS {
            let s = TandemSettings::new(frame, frames as f64 * frame);
            let run = run_ev(&s, None, false)?;
            let m = &run.tandem_metrics;
            let c = cyclictest(interval_us, frames)?;
            let counts = [
                m.frames.get(),
                m.missed(),
                m.missed_woke_late.get(),
                m.missed_overrun.get(),
                c.at_least(deadline_us),
                m.from_source(FrameSource::Fast),
                m.from_source(FrameSource::CatchUp),
                m.stale_results.get(),
                m.resyncs.get(),
            ];
            for (t, c) in total.iter_mut().zip(counts) {
                *t += c;
            }
            implicit_p99 = implicit_p99.max(m.implicit_compute.snapshot().percentile(0.99));
            failure = failure.or(run.failure);
        }
        let [frames, missed, woke_late, overran, late, explicit, catch_up, stale, resync] = total;
        println!(
            "  {:>4} kHz {frames:>8} {missed:>9} {woke_late:>10} {overran:>9} {late:>16} {:>7.2} {explicit:>9} \
             {catch_up:>9} {stale:>7} {resync:>7} {:>9.0} µs{}",
            khz,
            missed as f64 / late.max(1) as f64,
            implicit_p99 / 1e3,
            failure.map(|f| format!("  stopped: {f}")).unwrap_or_default()
        );
    }
    println!("  (implicit p99: the largest of the rounds')");
    Ok(())
}
