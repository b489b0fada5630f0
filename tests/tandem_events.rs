//! Plants with events in real-time runs, as a user runs them: the
//! example throttle body's impacts on its stops replayed from a CAN log
//! against the closed form, the example bouncing ball on the real clock,
//! and runs whose model produces NaN, which end, named, under every
//! policy on either clock instead of hanging.

#[path = "../fmi/tests/support/fmus.rs"]
mod fmus;

mod common;

use std::fmt::Write as _;
use std::path::Path;

use common::Table;

/// The throttle body's parameters (models/examples/throttle.json).
const J: f64 = 1e-4;
const C: f64 = 0.002;
const K: f64 = 0.1;
const THETA0: f64 = -0.2;
const OPEN: f64 = std::f64::consts::FRAC_PI_2;

/// The plate's angle `s` seconds after leaving `from` at rest under a
/// constant motor torque `torque`, free of the stops: the underdamped
/// spring-mass-damper in closed form.
fn free_angle(s: f64, from: f64, torque: f64) -> f64 {
    let wn = (K / J).sqrt();
    let zeta = C / (2.0 * (K * J).sqrt());
    let wd = wn * (1.0 - zeta * zeta).sqrt();
    let (a, equilibrium) = (zeta * wn, THETA0 + torque / K);
    equilibrium + (from - equilibrium) * (-a * s).exp() * ((wd * s).cos() + a / wd * (wd * s).sin())
}

/// The first time the plate, leaving `from` under `torque`, reaches
/// `stop`: bisection of the closed form to 1e-15 s.
fn reaches(from: f64, torque: f64, stop: f64) -> f64 {
    let past = |s: f64| (free_angle(s, from, torque) - stop) * (stop - from).signum() >= 0.0;
    let mut hi = 1e-4;
    while !past(hi) {
        hi += 1e-4;
    }
    let mut lo = hi - 1e-4;
    while hi - lo > 1e-15 {
        let mid = 0.5 * (lo + hi);
        if past(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

#[test]
fn the_throttle_body_stops_on_its_end_stops_at_the_closed_form_instants() {
    let dir = common::scratch("throttle");
    // The ECU's commands as a CAN log: ETB_Command every millisecond, the
    // torque 0.25 N m from 0.1 s to 0.6 s (2500 in units of 0.0001 N m).
    let mut log = String::new();
    for k in 0..=1000 {
        let torque: i16 = if (100..600).contains(&k) { 2500 } else { 0 };
        let [lo, hi] = torque.to_le_bytes();
        let _ = writeln!(log, "({}.{:06}) can0 110#{lo:02X}{hi:02X}", k / 1000, (k % 1000) * 1000);
    }
    std::fs::write(dir.join("commands.log"), log).unwrap();
    let config = common::root().join("config/examples/throttle-can.toml");
    let out = common::tandem_ok(
        &dir,
        &[
            "replay",
            "commands.log",
            "--config",
            config.to_str().unwrap(),
            "--results",
            ".",
        ],
    );
    // Impacts in closed form: the plate opens from rest at 0.1 s and meets
    // the open stop, rests there while the torque holds it, leaves at 0.6 s
    // under the spring and meets the closed stop.
    let open_at = 0.1 + reaches(0.0, 0.25, OPEN);
    let closed_at = 0.6 + reaches(OPEN, 0.0, 0.0);
    let angle = |t: f64| {
        if t <= 0.1 {
            0.0
        } else if t <= open_at {
            free_angle(t - 0.1, 0.0, 0.25)
        } else if t <= 0.6 {
            OPEN
        } else if t <= closed_at {
            free_angle(t - 0.6, OPEN, 0.0)
        } else {
            0.0
        }
    };
    let table = Table::read(&dir.join("throttle-can.csv"));
    let (time, degrees, stops) = (
        table.column("time"),
        table.column("throttle_angle"),
        table.column("last_stop_time"),
    );
    for (&t, &d) in time.iter().zip(&degrees) {
        let exact = angle(t).to_degrees();
        assert!((d - exact).abs() < 1e-4, "t = {t}: {d} deg, exactly {exact}");
    }
    // The instants of the impacts, as the model captured them at each
    // event, within a nanosecond of the closed form's.
    let mut captured: Vec<f64> = stops.iter().copied().filter(|&s| s > 0.0).collect();
    captured.dedup();
    assert_eq!(captured.len(), 2, "{captured:?}");
    for (got, exact) in captured.iter().zip([open_at, closed_at]) {
        assert!((got - exact).abs() < 1e-9, "impact at {got} s, exactly {exact} s");
    }
    assert!(out.contains("events: fast side"), "{out}");
}

/// The example bouncing ball as the plant of a run configuration.
fn ball_config(policy: &str, duration: &str) -> String {
    let model = common::root().join("models/examples/bouncing_ball.json");
    format!(
        r#"model = "{}"
frame = "1ms"
duration = "{duration}"
policy = "{policy}"
[fast]
method = "rk4"
[implicit]
rtol = 1e-12
atol = 1e-12
[record]
file = "ball.csv"
"#,
        model.display()
    )
}

#[test]
fn the_ball_bounces_on_the_real_clock_as_the_closed_form_says() {
    // The first impact is at 3.6211169879494887 s (tests/data/bouncing_ball.json).
    let (g, e, t1) = (9.81, 0.8, 3.6211169879494887);
    let rebound = e * (15.0f64 * 15.0 + 2.0 * g * 10.0).sqrt();
    let dir = common::scratch("ball_real");
    std::fs::write(dir.join("ball.toml"), ball_config("correct", "4s")).unwrap();
    let out = common::tandem_ok(&dir, &["run", "ball.toml", "--results", "."]);
    let table = Table::read(&dir.join("ball.csv"));
    // Whichever source each frame's state took (implicit, catch-up, or the
    // fast side's own when the implicit side was late), the impact was
    // located inside its frame. A frame whose outputs missed their deadline
    // (the machine was busy) sends the linear extrapolation of the two
    // before it instead, by the stated policy; those are counted and must
    // not outnumber what the report says.
    let mut extrapolated = 0;
    for (i, row) in table.rows.iter().enumerate().filter(|(_, r)| r[0] > t1) {
        let s = row[0] - t1;
        let exact = rebound * s - g * s * s / 2.0;
        if (row[1] - exact).abs() < 1e-9 {
            continue;
        }
        let line = 2.0 * table.rows[i - 1][1] - table.rows[i - 2][1];
        assert!(
            (row[1] - line).abs() < 1e-12,
            "x({}) = {}, exactly {exact}, and not the extrapolation {line} of a late frame",
            row[0],
            row[1]
        );
        extrapolated += 1;
    }
    let reported = frames_from(&out, "extrapolated");
    assert!(
        extrapolated <= reported,
        "{extrapolated} frames extrapolated, {reported} reported: {out}"
    );
    assert!(out.contains("real clock"), "{out}");
}

/// The number of frames whose state came from `source`, as the run's
/// summary counts them ("frames by source: explicit 1, implicit 999, …").
fn frames_from(summary: &str, source: &str) -> usize {
    let line = (summary.lines())
        .find_map(|l| l.trim_start().strip_prefix("frames by source:"))
        .unwrap_or_else(|| panic!("no frames by source in:\n{summary}"));
    (line.split(','))
        .find_map(|part| part.trim().strip_prefix(source)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {source} frames in {line}"))
}

/// A plant that takes the square root of a quantity that turns negative at
/// 2 s: `x' = sqrt(2 - t)`.
const SQRT_PLANT: &str = r#"{"blocks": [
    {"id": "clock", "type": "Clock"},
    {"id": "reserve", "type": "Expression", "params": {"expression": "2 - u"}},
    {"id": "root", "type": "MathFunction", "params": {"function": "sqrt"}},
    {"id": "x", "type": "Integrator"},
    {"id": "y", "type": "Output"}],
  "links": [
    {"from": "clock", "to": "reserve"}, {"from": "reserve", "to": "root"},
    {"from": "root", "to": "x"}, {"from": "x", "to": "y"}]}"#;

/// Runs `model` (a file in `dir`) under each policy on `clock`; each run
/// must end (it never hangs) with exit status 1 and a message containing
/// every one of `named`, having kept the rows before the fault.
fn ends_named(dir: &Path, model: &str, clock: &[&str], named: &[&str]) {
    for policy in ["explicit", "correct", "select"] {
        let config = format!(
            "model = \"{model}\"\nframe = \"1ms\"\nduration = \"3s\"\npolicy = \"{policy}\"\n[fast]\nmethod = \
             \"rk4\"\n[record]\nfile = \"fault.csv\"\n"
        );
        std::fs::write(dir.join("fault.toml"), config).unwrap();
        let mut args = vec!["run", "fault.toml", "--results", "."];
        args.extend_from_slice(clock);
        let out = common::tandem(dir, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{policy} {clock:?}: {stderr}");
        for name in named {
            assert!(stderr.contains(name), "{policy} {clock:?}: {name:?} not in {stderr}");
        }
        assert!(!stderr.contains("too stiff"), "{policy} {clock:?}: {stderr}");
        let rows = Table::read(&dir.join("fault.csv")).rows.len();
        assert!(rows >= 400, "{policy} {clock:?}: {rows} rows kept");
    }
}

#[test]
fn a_model_that_produces_nan_ends_the_run_named_under_every_policy_on_either_clock() {
    let dir = common::scratch("nan_plant");
    std::fs::write(dir.join("sqrt.json"), SQRT_PLANT).unwrap();
    for clock in [&["--virtual-clock"][..], &[]] {
        ends_named(
            &dir,
            "sqrt.json",
            clock,
            &["block \"root\"", "non-finite value NaN at t = 2"],
        );
    }
}

#[test]
fn an_fmu_call_that_fails_in_a_run_ends_it_naming_the_fmu_and_the_call() {
    let dir = common::scratch("failing_fmu");
    let fmu = fmus::build_variant(
        "bouncing_ball",
        &dir.join("failing.fmu"),
        fmus::Variant {
            defines: &["FAIL_DERIVATIVES_AFTER=0.5"],
            ..Default::default()
        },
    );
    let fmu = fmu.file_name().unwrap().to_str().unwrap().to_string();
    for clock in [&["--virtual-clock"][..], &[]] {
        ends_named(
            &dir,
            &fmu,
            clock,
            &["bouncing_ball", "fmi2GetDerivatives", "a fault injected for tests"],
        );
    }
}
