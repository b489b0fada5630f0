//! `events`: plants with events in real time on the real clock, at 1 kHz
//! and 10 kHz: the example bouncing ball (impacts in closed form,
//! `tests/data/bouncing_ball.json`) and the example throttle body opened
//! onto its open stop and closed onto its closed one every half second.
//! Prints the fast side's compute time of frames without and with an event
//! inside them (p99), and the error of each located impact against the
//! closed form. Goals: impacts located within 1e-9 s; a frame with an
//! event costs at most twice one without (p99).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tandem_config::parse_run_config;
use tandem_models::plants;
use tandem_runtime::tandem::metrics::Snapshot;
use tandem_session::{bind, ClockMode, Observer, Options, Session};

/// The impact-time goal (s).
const LOCATED: f64 = 1e-9;
/// The goal on a frame with an event, against one without (p99).
const EVENT_COST: f64 = 2.0;

/// Keeps every recorded row.
struct Rows(Vec<(f64, Vec<f64>)>);

impl Observer for Rows {
    fn record(&mut self, t: f64, y: &[f64]) {
        self.0.push((t, y.to_vec()));
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// What one run measured.
struct Measured {
    rows: Vec<(f64, Vec<f64>)>,
    compute: Snapshot,
    with_events: Snapshot,
    located: u64,
    deferred: u64,
    missed: u64,
}

/// Runs `model` (a file of the repository) at `frame` for `seconds` on the
/// real clock under `correct`, with `extra` configuration lines.
fn measure(model: &str, frame: &str, seconds: f64, extra: &str) -> anyhow::Result<Measured> {
    let text = format!(
        "model = \"{}\"\nframe = \"{frame}\"\nduration = \"{seconds}s\"\npolicy = \"correct\"\n[implicit]\nrtol = \
         1e-12\natol = 1e-12\n[record]\nfile = \"events.csv\"\n{extra}",
        root().join(model).display()
    );
    let config = parse_run_config(&text, Path::new("events.toml"), plants::PROFILES)?;
    let results = std::env::temp_dir().join(format!("tandem-bench-events-{}", std::process::id()));
    let session = Session::new(bind(config)?, Options::new(ClockMode::Real, &results))?;
    let metrics = std::sync::Arc::clone(session.metrics());
    let mut rows = Rows(Vec::new());
    let report = session.run(&mut rows)?;
    let _ = std::fs::remove_dir_all(&results);
    if let Some(failure) = report.failure {
        anyhow::bail!("{model} at {frame}: {failure}");
    }
    Ok(Measured {
        rows: rows.0,
        compute: metrics.compute.snapshot(),
        with_events: metrics.event_compute.snapshot(),
        located: metrics.fast_events.located.get(),
        deferred: metrics.fast_events.deferred.get(),
        missed: metrics.missed(),
    })
}

/// Prints one run's figures against the goals.
fn print(name: &str, m: &Measured, errors: &[f64]) {
    let worst = errors.iter().map(|e| e.abs()).fold(0.0, f64::max);
    let (without, with) = (m.compute.percentile(0.99), m.with_events.percentile(0.99));
    let ratio = with / without;
    let mut line = format!(
        "  {name:<22} fast compute p99 {:>7.1} µs, with an event p99 {:>7.1} µs (max {:>7.1} µs, {} frames): \
         {ratio:.2}x, goal <= {EVENT_COST}x: {}",
        without / 1e3,
        with / 1e3,
        m.with_events.max / 1e3,
        m.with_events.count,
        if ratio <= EVENT_COST { "met" } else { "NOT MET" },
    );
    let _ = write!(
        line,
        "\n  {:<22} {} impacts, largest error {worst:.2e} s, goal within {LOCATED:e} s: {}; events {} located, {} \
         deferred; missed deadlines {}",
        "",
        errors.len(),
        if worst <= LOCATED && !errors.is_empty() {
            "met"
        } else {
            "NOT MET"
        },
        m.located,
        m.deferred,
        m.missed
    );
    println!("{line}");
}

/// The ball's impact times in closed form up to `end`
/// (`tests/data/bouncing_ball.json`'s parameters).
fn ball_impacts(end: f64) -> Vec<f64> {
    let (g, e, x0, v0): (f64, f64, f64, f64) = (9.81, 0.8, 10.0, 15.0);
    let s1 = (v0 * v0 + 2.0 * g * x0).sqrt();
    let mut t = (v0 + s1) / g;
    let mut times = Vec::new();
    let mut n = 1;
    while t < end {
        times.push(t);
        t += 2.0 * e.powi(n) * s1 / g;
        n += 1;
    }
    times
}

/// The impact times the ball's recording shows: from the first frame after
/// a bounce (`x`, `v` at `t`), the instant it left the floor.
fn ball_located(rows: &[(f64, Vec<f64>)]) -> Vec<f64> {
    let g = 9.81;
    rows.windows(2)
        .filter(|w| w[1].1[1] - w[0].1[1] > 1.0)
        .map(|w| {
            let (t, x, v) = (w[1].0, w[1].1[0], w[1].1[1]);
            t - (-v + (v * v + 2.0 * g * x).sqrt()) / g
        })
        .collect()
}

/// The throttle's torque profile: 0.25 N m from each whole second plus
/// 0.1 s to plus 0.6 s, none otherwise, for `seconds`.
fn throttle_points(seconds: f64) -> String {
    let mut points = String::from("[[0, 0]");
    for c in 0..seconds as u64 {
        let c = c as f64;
        let _ = write!(
            points,
            ", [{}, 0], [{}, 0.25], [{}, 0.25], [{}, 0]",
            c + 0.1,
            c + 0.1,
            c + 0.6,
            c + 0.6
        );
    }
    points.push(']');
    points
}

/// The throttle's impacts in closed form on frames of `frame` seconds: the
/// torque steps at the first frame at or after each breakpoint (as an input
/// profile reads it), and from rest on a stop the plate reaches the other
/// one in a fixed time (the closed form of the spring-mass-damper, as
/// `tests/tandem_events.rs` computes it): 46.44967 ms opening under
/// 0.25 N m, 56.74720 ms closing under the spring.
fn throttle_impacts(seconds: f64, frame: f64) -> Vec<f64> {
    let (open, close) = (0.046_449_665_468_233_74, 0.056_747_204_140_500_8);
    let step_at = |breakpoint: f64| {
        let mut k = (breakpoint / frame).floor() as u64;
        while (k as f64 * frame) < breakpoint {
            k += 1;
        }
        k as f64 * frame
    };
    (0..seconds as u64)
        .flat_map(|c| {
            let c = c as f64;
            [step_at(c + 0.1) + open, step_at(c + 0.6) + close]
        })
        .collect()
}

/// The errors of `located` against the nearest of `exact`.
fn errors(located: &[f64], exact: &[f64]) -> Vec<f64> {
    located
        .iter()
        .map(|t| {
            let nearest = exact.iter().min_by(|a, b| (*a - t).abs().total_cmp(&(*b - t).abs()));
            nearest.map_or(f64::INFINITY, |e| t - e)
        })
        .collect()
}

/// Runs the benchmark; the throttle runs for `seconds` (at least 3).
pub fn run(seconds: f64) -> anyhow::Result<()> {
    println!(
        "events: plants with events on the real clock under correct (BDF at rtol 1e-12), frames with and without \
         an event; impacts against their closed form"
    );
    let throttle_seconds = seconds.max(3.0).floor();
    for (frame, seconds_per_frame, label) in [("1ms", 1e-3, "1 kHz"), ("100us", 1e-4, "10 kHz")] {
        let ball = measure(
            "models/examples/bouncing_ball.json",
            frame,
            12.0,
            "[fast]\nmethod = \"rk4\"\n",
        )?;
        let located = ball_located(&ball.rows);
        print(&format!("ball, {label}"), &ball, &errors(&located, &ball_impacts(12.0)));

        let extra = format!("[inputs.points]\ntorque = {}\n", throttle_points(throttle_seconds));
        let throttle = measure("models/examples/throttle.json", frame, throttle_seconds, &extra)?;
        let mut captured: Vec<f64> = throttle.rows.iter().map(|r| r.1[2]).filter(|&t| t > 0.0).collect();
        captured.dedup();
        let exact = throttle_impacts(throttle_seconds, seconds_per_frame);
        print(
            &format!("throttle body, {label}"),
            &throttle,
            &errors(&captured, &exact),
        );
    }
    Ok(())
}
