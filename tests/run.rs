//! `tandem run CONFIG.toml`, as a user sees it: the example configuration on
//! the virtual clock (recording, summary, JSON statistics, determinism,
//! injected faults), a failing run, bad input, `--require-rt` and a short
//! run on the real clock.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

/// The example configuration, as an absolute path.
fn example() -> PathBuf {
    common::root().join("config/examples/ev.toml")
}

/// The example configuration's text.
fn example_text() -> String {
    std::fs::read_to_string(example()).expect("the example configuration exists")
}

/// `text` with `from` (which must occur exactly once, so that a change of
/// the example cannot make a test silently test nothing) replaced by `to`.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert_eq!(text.matches(from).count(), 1, "{from:?} must occur once in the example");
    text.replacen(from, to, 1)
}

/// Writes `text` as `name` into a fresh scratch directory; returns the
/// directory.
fn config_in(test: &str, name: &str, text: &str) -> PathBuf {
    let dir = common::scratch(test);
    std::fs::write(dir.join(name), text).unwrap();
    dir
}

/// Runs `tandem run ARGS` in `dir`.
fn run(dir: &Path, args: &[&str]) -> Output {
    let mut all = vec!["run"];
    all.extend_from_slice(args);
    common::tandem(dir, &all)
}

/// Runs `tandem run ARGS` in `dir`, expecting success; returns stdout.
fn run_ok(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    assert!(
        out.status.success(),
        "tandem run {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `tandem run ARGS` in `dir`, expecting it to refuse with exit code 1
/// (an error, not a crash nor a usage error); returns stderr.
fn run_refused(dir: &Path, args: &[&str]) -> String {
    let out = run(dir, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(1), "tandem run {args:?}:\n{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}

/// The 1-based line of the only line of `text` that contains `needle`, and
/// the 1-based column (in characters) where `needle` starts on it.
fn position(text: &str, needle: &str) -> (usize, usize) {
    let hits: Vec<(usize, &str)> = text.lines().enumerate().filter(|(_, l)| l.contains(needle)).collect();
    assert_eq!(hits.len(), 1, "{needle:?} must be on one line");
    let (i, line) = hits[0];
    (i + 1, line[..line.find(needle).unwrap()].chars().count() + 1)
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("the statistics file exists"))
        .expect("the statistics are JSON")
}

fn int(v: &Value, key: &str) -> u64 {
    v.pointer(key)
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("{key} in {v:#}"))
}

fn float(v: &Value, key: &str) -> f64 {
    v.pointer(key)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{key} in {v:#}"))
}

/// Frames by source, in the order fast, implicit, catch-up, extrapolated,
/// held, skipped.
fn sources(v: &Value) -> [u64; 6] {
    ["fast", "implicit", "catch-up", "extrapolated", "held", "skipped"].map(|s| int(v, &format!("/sources/{s}")))
}

const HEADER: [&str; 7] = [
    "time",
    "vehicle_speed",
    "motor_speed",
    "motor_torque",
    "motor_current",
    "dc_voltage",
    "soc",
];

/// The example configuration on the virtual clock for `duration` s in a
/// fresh directory, with `--stats-json stats.json`; returns the directory
/// and stdout.
fn virtual_example(test: &str, duration: &str) -> (PathBuf, String) {
    let dir = common::scratch(test);
    let config = example();
    let stdout = run_ok(
        &dir,
        &[
            config.to_str().unwrap(),
            "--virtual-clock",
            "--duration",
            duration,
            "--stats-json",
            "stats.json",
        ],
    );
    (dir, stdout)
}

#[test]
fn the_example_drives_off_on_the_virtual_clock_and_records_every_tenth_frame() {
    let (dir, stdout) = virtual_example("example", "2");
    assert!(
        stdout.starts_with(
            "ev: 2000 frames of 0.001 s (2 s), policy correct, ros34pw2 + bdf (dense LU), virtual clock\n"
        ),
        "{stdout}"
    );
    assert!(stdout.contains("\nsummary: 2000 frames in "), "{stdout}");
    assert!(stdout.contains(" s of wall time (virtual clock)\n"), "{stdout}");
    assert!(
        stdout.contains("recording: results/ev-run.csv (200 rows, 0 dropped)"),
        "{stdout}"
    );
    // No preflight on the virtual clock: the machine plays no part.
    assert!(!stdout.contains("preflight"), "{stdout}");

    // The recording lands in the current directory, as the config says.
    let table = common::Table::read(&dir.join("results/ev-run.csv"));
    assert_eq!(table.header, HEADER);
    // Decimation 10 over frames 0..2000: frames 0, 10, …, 1990.
    assert_eq!(table.rows.len(), 200);
    for (i, t) in table.column("time").iter().enumerate() {
        assert!((t - i as f64 * 0.01).abs() < 1e-9, "row {i}: time {t}");
    }
    let time = table.column("time");
    let speed = table.column("vehicle_speed");
    let motor = table.column("motor_speed");
    let soc = table.column("soc");
    // The drive cycle requests no torque until 0.5 s: the car stands still.
    for (t, v) in time.iter().zip(&speed).filter(|(t, _)| **t <= 0.5 + 1e-9) {
        assert!(v.abs() < 1e-6, "moving at t = {t}: {v} m/s");
    }
    // Then the request ramps to 250 N m (motor side) at 1 s: the car moves
    // forward, faster and faster.
    for w in speed.windows(2).skip(51) {
        assert!(w[1] >= w[0] - 1e-9, "slowing down under full torque: {w:?}");
    }
    let v = *speed.last().unwrap();
    // Moving at 2 s, but no faster than the impulse of the requested torque
    // allows with no losses at all: G/(r m) ∫T dt = 9/(0.31·1800)·(62.5 +
    // 247.5) N m s = 5.0 m/s (ramp 0.5 → 1 s, then 250 N m to 1.99 s).
    assert!(v > 1.0 && v < 5.0, "vehicle speed at 1.99 s: {v} m/s");
    // The motor turns with the wheels through the gear (9:1, r = 0.31 m),
    // a few per cent faster than the car (driving slip).
    let wheel_surface = motor.last().unwrap() * std::f64::consts::TAU / 60.0 / 9.0 * 0.31;
    let slip = wheel_surface / v;
    assert!(
        slip > 1.0 && slip < 1.1,
        "wheel surface {wheel_surface} m/s, car {v} m/s"
    );
    // The battery drains: never above its initial charge, lower at the end.
    assert_eq!(soc[0], 80.0);
    assert!(soc.iter().all(|s| *s <= soc[0]), "{soc:?}");
    assert!(*soc.last().unwrap() < soc[0] - 1e-3, "{soc:?}");
}

#[test]
fn stats_json_holds_the_summary() {
    let (dir, stdout) = virtual_example("stats_json", "2");
    assert!(stdout.contains("statistics written to stats.json"), "{stdout}");
    let s = read_json(&dir.join("stats.json"));
    assert_eq!(s["model"], "ev");
    assert_eq!(s["clock"], "virtual");
    assert_eq!(s["policy"], "correct");
    assert_eq!(
        (&s["fast_method"], &s["implicit_method"]),
        (&"ros34pw2".into(), &"bdf".into())
    );
    assert_eq!((float(&s, "/frame_s"), float(&s, "/duration_s")), (0.001, 2.0));
    assert_eq!(int(&s, "/frames"), 2000);
    assert_eq!(sources(&s).iter().sum::<u64>(), 2000);
    // Frame 0 has no implicit result yet; from frame 1 on, the implicit step
    // started at the end of each frame (300 µs) is published before the next
    // one: every later frame takes the implicit state of its own time.
    assert_eq!(sources(&s), [1, 1999, 0, 0, 0, 0]);
    // The default costs fit the frame: 20 µs of fast work, due at 0.8 ms.
    assert_eq!(int(&s, "/missed/total"), 0);
    assert_eq!((int(&s, "/missed/woke_late"), int(&s, "/missed/overrun")), (0, 0));
    assert_eq!((int(&s, "/stale_results"), int(&s, "/implicit_late")), (0, 0));
    assert_eq!(int(&s, "/implicit/steps"), 2000);
    assert_eq!(int(&s, "/implicit/resyncs"), 0);
    assert_eq!(int(&s, "/implicit/failures"), 0);
    assert_eq!(int(&s, "/dropped_frame_records"), 0);
    assert_eq!(s["recording"]["file"], "results/ev-run.csv");
    assert_eq!((int(&s, "/recording/rows"), int(&s, "/recording/dropped")), (200, 0));
    assert!(s["preflight"].is_null() && s["failure"].is_null(), "{s:#}");
    assert!(float(&s, "/wall_s") > 0.0);

    let histograms = s["histograms"].as_object().expect("histograms");
    let mut names: Vec<&str> = histograms.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "catch-up (frames)",
            "correction (tolerances)",
            "fast compute",
            "fast compute, events",
            "frame taps",
            "implicit compute",
            "implicit lag (frames)",
            "matrix age (frames)",
            "newton iterations",
            "wake-up latency",
        ]
    );
    // Nothing tapped the frames: no XCP slave, no diagnostic server.
    assert_eq!(s["frame_taps"], serde_json::json!([]));
    assert_eq!(int(&s, "/histograms/frame taps/count"), 0);
    for (name, h) in histograms {
        let mut keys: Vec<&str> = h.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["count", "max", "mean", "p50", "p99", "p99.9", "unit"], "{name}");
    }
    // Virtual time charges exactly the configured costs.
    let h = |name: &str, key: &str| float(&s, &format!("/histograms/{name}/{key}"));
    assert_eq!(s["histograms"]["fast compute"]["unit"], "µs");
    assert_eq!(int(&s, "/histograms/fast compute/count"), 2000);
    assert_eq!((h("fast compute", "max"), h("fast compute", "mean")), (20.0, 20.0));
    assert_eq!(int(&s, "/histograms/implicit compute/count"), 2000);
    assert_eq!(
        (h("implicit compute", "max"), h("implicit compute", "mean")),
        (300.0, 300.0)
    );
    assert_eq!((h("wake-up latency", "max"), h("wake-up latency", "mean")), (0.0, 0.0));
    assert_eq!(h("implicit lag (frames)", "max"), 0.0);
    assert_eq!(int(&s, "/histograms/newton iterations/count"), 2000);
    assert_eq!(int(&s, "/histograms/correction (tolerances)/count"), 1999);
}

#[test]
fn virtual_runs_are_deterministic() {
    let (a, _) = virtual_example("determinism_a", "2");
    let (b, _) = virtual_example("determinism_b", "2");
    let csv = |dir: &Path| std::fs::read(dir.join("results/ev-run.csv")).unwrap();
    assert!(!csv(&a).is_empty());
    assert!(csv(&a) == csv(&b), "the two recordings differ");
    // So are the statistics, wall time aside.
    let stats = |dir: &Path| {
        let mut s = read_json(&dir.join("stats.json"));
        s.as_object_mut().unwrap().remove("wall_s");
        s
    };
    assert_eq!(stats(&a), stats(&b));
}

#[test]
fn injected_faults_give_exactly_the_frames_the_virtual_clock_implies() {
    let config = example_text()
        + r#"
[[virtual_clock.implicit_delays]]
at = "0.5s"
delay = "3ms"

[[virtual_clock.fast_overruns]]
at = "1s"
extra = "1ms"
"#;
    let dir = config_in("faults", "faults.toml", &config);
    let stdout = run_ok(
        &dir,
        &[
            "faults.toml",
            "--virtual-clock",
            "--duration",
            "2",
            "--stats-json",
            "stats.json",
        ],
    );
    assert!(stdout.contains("summary: 2000 frames"), "{stdout}");
    let s = read_json(&dir.join("stats.json"));
    // Costs: fast 20 µs per step, implicit 300 µs per step, deadline 0.8 ms,
    // max_catchup 4, max_lag 20 frames, macro step = lead = 1 frame.
    // Normally frame k (at k ms) sends its record, and the implicit step
    // k → k+1 starts then and is published at k + 0.3 ms: frame k+1 takes
    // the implicit state of its own time.
    //
    // Delay: the step starting at 500 ms (0.5 → 0.501 s) takes 3.3 ms and is
    // published at 503.3 ms. Frames 501, 502, 503 find no new result:
    // explicit. Before frame 504 the implicit thread publishes it, then steps
    // 0.501 → 0.502 (503.6 ms) and 0.502 → 0.503 (503.9 ms), and starts
    // 0.503 → 0.504 (due 504.2 ms, after frame 504 wakes). Frame 504 restarts
    // from 0.503 and re-integrates 1 frame: catch-up, 504 - 503 = 1 ≤ 4 so
    // no stale result. Before frame 505 the thread is back at 0.505: in step
    // again. It was never more than 2 frames behind (≤ 20: no resync), and
    // every step 0.000 → 2.000 s is taken once: 2000 steps.
    //
    // Overrun: frame 1000 (at 1 s) computes 20 µs + 1 ms, past its deadline
    // (1000.8 ms): 1 miss by overrun, but its state is the implicit one of
    // its time (published at 999.3 ms), which stands: only the fast side
    // was late, nothing is extrapolated. Frame 1001 wakes 20 µs late (at
    // 1001.02 ms, well before its deadline) and takes the implicit state of
    // its time, published at 1000.3 ms.
    //
    // Explicit: frame 0 and frames 501–503.
    assert_eq!(sources(&s), [4, 1995, 1, 0, 0, 0]);
    assert_eq!(int(&s, "/missed/total"), 1);
    assert_eq!((int(&s, "/missed/overrun"), int(&s, "/missed/woke_late")), (1, 0));
    assert_eq!(int(&s, "/stale_results"), 0);
    assert_eq!(int(&s, "/implicit/resyncs"), 0);
    assert_eq!(int(&s, "/implicit/steps"), 2000);
    assert_eq!(int(&s, "/implicit/failures"), 0);
    assert_eq!(int(&s, "/implicit/extrapolated_inputs"), 0);
    let h = |name: &str, key: &str| float(&s, &format!("/histograms/{name}/{key}"));
    // The lag peaks at the step 0.501 → 0.502, taken when frame 503 is the
    // newest: 2 frames.
    assert!((h("implicit lag (frames)", "max") - 2.0).abs() < 1e-6, "{s:#}");
    assert_eq!(h("implicit compute", "max"), 3300.0);
    assert_eq!(h("fast compute", "max"), 1020.0);
    assert_eq!(h("wake-up latency", "max"), 20.0);
}

#[test]
fn resyncs_and_stale_results_are_counted_and_live_lines_cover_their_interval() {
    let config = example_text()
        + r#"
[[virtual_clock.implicit_delays]]
at = "0.2s"
delay = "30ms"

[[virtual_clock.implicit_delays]]
at = "1.2s"
delay = "8ms"
"#;
    let dir = config_in("stale", "stale.toml", &config);
    let stdout = run_ok(
        &dir,
        &[
            "stale.toml",
            "--virtual-clock",
            "--duration",
            "2",
            "--stats",
            "1s",
            "--stats-json",
            "stats.json",
        ],
    );
    let s = read_json(&dir.join("stats.json"));
    // 30 ms at 0.2 s (the car at rest): the step 0.2 → 0.201 is published at
    // 230.3 ms; the implicit thread then finds frame 230 the newest, 29
    // frames behind, more than max_lag (20): it restarts from the fast
    // state, skipping the 29 steps to 0.230 s. Its step 0.230 → 0.231
    // replaces the old result before frame 231 reads it: nothing stale.
    assert_eq!(int(&s, "/implicit/resyncs"), 1);
    assert_eq!(int(&s, "/implicit/steps"), 2000 - 29);
    // 8 ms at 1.2 s: the step 1.2 → 1.201 is published at 1208.3 ms; before
    // frame 1209 the thread steps on to 1.203 (1208.6, 1208.9 ms) and starts
    // 1.203 → 1.204 (due 1209.2 ms). Frame 1209 finds the result ending at
    // frame 1203: 6 > max_catchup (4) frames old, stale. No resync: 7 frames
    // behind at most.
    assert_eq!(int(&s, "/stale_results"), 1);
    assert_eq!(int(&s, "/missed/total"), 0);
    assert_eq!(sources(&s).iter().sum::<u64>(), 2000);
    // Each live line counts its own second: the resync is in the first.
    let lines: Vec<&str> = stdout.lines().filter(|l| l.starts_with("t ")).collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    for (line, (t, resyncs)) in lines.iter().zip([("1.00", 1), ("2.00", 0)]) {
        assert!(line.starts_with(&format!("t    {t} s | 1000 frames |")), "{line}");
        assert!(line.ends_with(&format!(", resyncs {resyncs}")), "{line}");
    }
}

#[test]
fn rk4_alone_fails_on_the_stiff_ev_plant_and_keeps_what_it_recorded() {
    let config = edit(&example_text(), "\npolicy = \"correct\"", "\npolicy = \"explicit\"");
    let config = edit(&config, "method = \"ros34pw2\"", "method = \"rk4\"");
    let dir = config_in("explicit", "explicit.toml", &config);
    let out = run(
        &dir,
        &["explicit.toml", "--virtual-clock", "--stats-json", "stats.json"],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("policy explicit, rk4 + no implicit thread"), "{stdout}");
    // The message says the explicit method diverged, names the first
    // non-finite state and the fix.
    let message = stderr.trim_end();
    assert!(
        message.starts_with("error: the run failed: the explicit method diverged at t = "),
        "{stderr}"
    );
    let state = message
        .split("state \"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no state named: {stderr}"));
    assert!(
        message.contains("too stiff for rk4 at a 0.001 s frame: use policy \"correct\" or \"select\""),
        "{stderr}"
    );

    // The summary and statistics were still written, and say where it
    // stopped: frame n failed after frames 0..n ran.
    assert!(stdout.contains("failed: the explicit method diverged"), "{stdout}");
    let s = read_json(&dir.join("stats.json"));
    let frames = int(&s, "/frames");
    assert!(frames > 0 && frames < 20_000, "{frames}");
    assert_eq!(sources(&s), [frames, 0, 0, 0, 0, 0]);
    assert_eq!(int(&s, "/implicit/steps"), 0);
    let failure = s["failure"].as_str().expect("a failure");
    assert!(
        failure.contains(&format!("at t = {} s", frames as f64 * 0.001)),
        "frame {frames}: {failure}"
    );
    assert!(failure.contains(&format!("state \"{state}\"")), "{failure}");
    // RK4 at 1 ms holds the car at rest, then diverges once the torque
    // request rises at 0.5 s.
    assert!(frames >= 500, "failed at rest, frame {frames}");

    // The rows recorded before the failure are kept: every 10th frame of
    // those that ran.
    let table = common::Table::read(&dir.join("results/ev-run.csv"));
    assert_eq!(table.header, HEADER);
    assert_eq!(table.rows.len() as u64, frames.div_ceil(10));
    assert_eq!(int(&s, "/recording/rows"), frames.div_ceil(10));
    assert!(table.rows.iter().flatten().all(|v| v.is_finite()));
}

#[test]
fn ros34pw2_alone_follows_the_stiff_ev_plant_where_rk4_diverges() {
    // The same run as above with the example's linearly implicit fast
    // method: no implicit integration (the implicit thread only prepares
    // matrices), every frame from the fast side, and the
    // whole drive cycle within 2 per mille of the BDF-corrected run (its
    // worst, motor torque and current, is 4.8e-4 of their range).
    let alone = edit(&example_text(), "\npolicy = \"correct\"", "\npolicy = \"explicit\"");
    let dir = config_in("w_alone", "alone.toml", &alone);
    let stdout = run_ok(&dir, &["alone.toml", "--virtual-clock", "--stats-json", "stats.json"]);
    assert!(stdout.contains("policy explicit, ros34pw2 + matrices only"), "{stdout}");
    let s = read_json(&dir.join("stats.json"));
    assert_eq!(sources(&s), [20_000, 0, 0, 0, 0, 0]);
    assert_eq!(int(&s, "/implicit/steps"), 0);
    assert!(s["failure"].is_null(), "{s:#}");
    let alone = common::Table::read(&dir.join("results/ev-run.csv"));

    let corrected = virtual_example("w_corrected", "20").0;
    let corrected = common::Table::read(&corrected.join("results/ev-run.csv"));
    assert_eq!(alone.rows.len(), 2000);
    assert_eq!(corrected.rows.len(), 2000);
    for name in &HEADER[1..] {
        let (a, c) = (alone.column(name), corrected.column(name));
        let scale = c.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        let worst = a.iter().zip(&c).map(|(a, c)| (a - c).abs()).fold(0.0, f64::max);
        assert!(a.iter().all(|v| v.is_finite()), "{name}");
        assert!(worst <= 2e-3 * scale, "{name}: off by {worst:e} of {scale:e}");
    }
}

#[test]
fn an_unknown_key_is_located_and_the_valid_keys_listed() {
    let config = edit(&example_text(), "\nmodel = \"ev\"\n", "\nmodel = \"ev\"\nfoo = 1\n");
    let dir = config_in("unknown_key", "bad.toml", &config);
    let stderr = run_refused(&dir, &["bad.toml", "--virtual-clock"]);
    let (line, _) = position(&config, "foo = 1");
    assert!(
        stderr.starts_with(&format!(
            "error: bad.toml:{line}:1: foo: unknown field `foo`, expected one of "
        )),
        "{stderr}"
    );
    for key in [
        "`model`",
        "`frame`",
        "`policy`",
        "`implicit`",
        "`record`",
        "`virtual_clock`",
    ] {
        assert!(stderr.contains(key), "{key} missing: {stderr}");
    }
    // Inside a table, the key is dotted.
    let config = edit(&example_text(), "\npriority = 80 ", "\nprio = 80 ");
    let dir = config_in("unknown_nested_key", "bad.toml", &config);
    let stderr = run_refused(&dir, &["bad.toml", "--virtual-clock"]);
    let (line, _) = position(&config, "prio = 80");
    assert!(
        stderr.starts_with(&format!(
            "error: bad.toml:{line}:1: fast.prio: unknown field `prio`, expected one of "
        )),
        "{stderr}"
    );
    assert!(stderr.contains("`priority`"), "{stderr}");
    assert!(!dir.join("results/ev-run.csv").exists());
}

#[test]
fn an_unknown_implicit_method_is_located_and_the_methods_listed() {
    let config = edit(&example_text(), "method = \"bdf\" ", "method = \"bdf7\"");
    let dir = config_in("bdf7", "bad.toml", &config);
    let stderr = run_refused(&dir, &["bad.toml", "--virtual-clock"]);
    let (line, column) = position(&config, "\"bdf7\"");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "error: bad.toml:{line}:{column}: implicit.method: unknown implicit method \"bdf7\"; \
             use one of: bdf, bdf1, bdf2, trapezoidal"
        )
    );
    assert!(!dir.join("results/ev-run.csv").exists());
}

#[test]
fn points_for_an_input_the_model_lacks_name_it_and_list_the_inputs() {
    let config = edit(
        &example_text(),
        "# [inputs.points]\n",
        "[inputs.points]\nthrottle = [[0, 0], [1, 1]]\n",
    );
    let dir = config_in("unknown_input", "bad.toml", &config);
    let stderr = run_refused(&dir, &["bad.toml", "--virtual-clock"]);
    // The file and the key (no line: the names are checked against the
    // model after the file is read).
    assert!(stderr.starts_with("error: bad.toml"), "{stderr}");
    assert!(
        stderr.contains(
            ": inputs.points.throttle: the model has no input \"throttle\"; \
             its inputs: torque_request, brake_pressure, road_grade\n"
        ),
        "{stderr}"
    );
    assert!(!dir.join("results/ev-run.csv").exists());
}

#[test]
fn recording_an_unknown_output_names_it_and_lists_the_outputs() {
    let config = edit(&example_text(), "\"motor_torque\", ", "\"motor_torq\", ");
    let dir = config_in("unknown_output", "bad.toml", &config);
    let stderr = run_refused(&dir, &["bad.toml", "--virtual-clock"]);
    assert!(stderr.starts_with("error: bad.toml"), "{stderr}");
    assert!(
        stderr.contains(
            ": record.signals[2]: the model has no output \"motor_torq\"; its outputs: vehicle_speed, motor_speed, \
             wheel_speed_front, wheel_speed_rear, motor_torque, motor_current, battery_current, dc_voltage, soc, \
             slip_front, distance, battery_temperature, motor_temperature\n"
        ),
        "{stderr}"
    );
    assert!(!dir.join("results/ev-run.csv").exists());
}

#[test]
fn a_missing_configuration_file_is_named() {
    let dir = common::scratch("missing_config");
    let stderr = run_refused(&dir, &["nosuch.toml", "--virtual-clock"]);
    assert!(
        stderr.starts_with("error: nosuch.toml: cannot read the run configuration: "),
        "{stderr}"
    );
    assert!(!dir.join("results/ev-run.csv").exists());
}

#[test]
fn an_unknown_model_lists_the_built_in_models() {
    let config = edit(&example_text(), "\nmodel = \"ev\"", "\nmodel = \"nosuch\"");
    let dir = config_in("unknown_model", "bad.toml", &config);
    let stderr = run_refused(&dir, &["bad.toml", "--virtual-clock"]);
    assert!(stderr.starts_with("error: bad.toml"), "{stderr}");
    let (_, list) = stderr
        .trim_end()
        .split_once(": model: no built-in model \"nosuch\"; built-in models: ")
        .and_then(|(a, rest)| Some((a, rest.split_once(" (a JSON block diagram is named by its path")?.0)))
        .unwrap_or_else(|| panic!("{stderr}"));
    let models: Vec<&str> = list.split(", ").collect();
    for name in ["ev", "rober", "vdpol"] {
        assert!(models.contains(&name), "{name} missing: {stderr}");
    }
    assert!(!dir.join("results/ev-run.csv").exists());
}

#[test]
fn a_duration_that_is_not_positive_or_shorter_than_a_frame_is_refused() {
    let dir = common::scratch("bad_duration");
    let config = example();
    let config = config.to_str().unwrap();
    for (duration, message) in [
        (
            "-1",
            "error: --duration: must be more than 0 and at most 604800 s (7 days), found -1",
        ),
        (
            "0",
            "error: --duration: must be more than 0 and at most 604800 s (7 days), found 0",
        ),
        (
            "nan",
            "error: --duration: must be more than 0 and at most 604800 s (7 days), found NaN",
        ),
        (
            "1e300",
            "error: --duration: must be more than 0 and at most 604800 s (7 days), found 1e300",
        ),
        (
            "0.0001",
            "error: --duration: the run (0.0001 s) is shorter than one frame (0.001 s); make it at least the frame",
        ),
    ] {
        let stderr = run_refused(&dir, &[config, "--virtual-clock", "--duration", duration]);
        assert_eq!(stderr.trim_end(), message);
    }
    assert!(!dir.join("results/ev-run.csv").exists());
}

/// Whether this kernel says it is PREEMPT_RT.
fn preempt_rt_kernel() -> bool {
    std::fs::read_to_string("/sys/kernel/realtime").is_ok_and(|s| s.trim() == "1")
}

#[test]
fn require_rt_refuses_to_start_without_preempt_rt() {
    if preempt_rt_kernel() {
        println!("skipped: /sys/kernel/realtime reads 1, this is a PREEMPT_RT kernel");
        return;
    }
    let dir = common::scratch("require_rt");
    let config = example();
    let out = run(&dir, &[config.to_str().unwrap(), "--duration", "0.5", "--require-rt"]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    // The preflight is shown, and the refusal names what is missing.
    assert!(stdout.contains("MISSING PREEMPT_RT"), "{stdout}");
    let missing = stderr
        .trim_end()
        .strip_prefix("error: --require-rt: missing ")
        .and_then(|m| m.strip_suffix("; fix them or run without --require-rt (soft real time)"))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(missing.split(", ").any(|c| c == "PREEMPT_RT"), "{stderr}");
    for check in missing.split(", ") {
        assert!(stdout.contains(&format!("MISSING {check} ")), "{check}: {stdout}");
    }
    // Refused before the first frame: nothing recorded, no summary.
    assert!(!dir.join("results/ev-run.csv").exists());
    assert!(!stdout.contains("summary"), "{stdout}");
}

#[test]
fn a_short_real_clock_run_reports_its_preflight_and_runs_every_frame() {
    let dir = common::scratch("real_clock");
    let config = example();
    let stdout = run_ok(
        &dir,
        &[
            config.to_str().unwrap(),
            "--duration",
            "0.5",
            "--stats-json",
            "stats.json",
        ],
    );
    assert!(
        stdout.starts_with(
            "ev: 500 frames of 0.001 s (0.5 s), policy correct, ros34pw2 + bdf (dense LU), real clock\npreflight:\n"
        ),
        "{stdout}"
    );
    // One line per check, in order, each with its outcome. Whether the
    // machine grants them varies: the run goes ahead either way.
    let checks = [
        "SCHED_FIFO",
        "affinity",
        "mlockall",
        "isolated cores",
        "PREEMPT_RT",
        "RT throttling",
        "CPU governor",
    ];
    let preflight: Vec<&str> = stdout.lines().skip(2).take(checks.len()).collect();
    for (line, check) in preflight.iter().zip(checks) {
        let rest = ["ok     ", "MISSING", "unknown"]
            .iter()
            .find_map(|mark| line.strip_prefix(&format!("  {mark} ")))
            .unwrap_or_else(|| panic!("not a check line: {line:?}\n{stdout}"));
        assert!(rest.starts_with(&format!("{check:<16} ")), "{check}: {line:?}");
    }
    assert!(stdout.contains("\nsummary: 500 frames in "), "{stdout}");
    assert!(stdout.contains(" s of wall time (real clock)\n"), "{stdout}");
    assert!(stdout.contains("\n  real time: "), "{stdout}");

    let s = read_json(&dir.join("stats.json"));
    assert_eq!(s["clock"], "real");
    assert_eq!(int(&s, "/frames"), 500);
    assert_eq!(sources(&s).iter().sum::<u64>(), 500);
    let reported: Vec<&str> = s["preflight"]
        .as_array()
        .expect("the preflight")
        .iter()
        .map(|c| c["check"].as_str().unwrap())
        .collect();
    assert_eq!(reported, checks);
    assert!(s["failure"].is_null(), "{s:#}");
    // Every 10th frame is recorded, however late the frames ran.
    let table = common::Table::read(&dir.join("results/ev-run.csv"));
    assert_eq!(table.header, HEADER);
    assert_eq!(table.rows.len(), 50);
    assert_eq!(int(&s, "/recording/rows"), 50);
}

#[test]
fn a_model_without_continuous_states_runs_under_every_fast_and_implicit_method() {
    let dir = common::scratch("stateless");
    std::fs::write(
        dir.join("const.json"),
        r#"{"blocks": [{"id": "c", "type": "Constant", "params": {"value": 2.5}}, {"id": "y", "type": "Output"}],
            "links": [{"from": "c", "to": "y"}]}"#,
    )
    .unwrap();
    for fast in ["euler", "heun", "rk4", "rosenbrock-euler", "ros2", "ros34pw2"] {
        for implicit in ["bdf", "bdf1", "bdf2", "trapezoidal"] {
            let name = format!("{fast}-{implicit}.toml");
            let config = format!(
                "model = \"const.json\"\nframe = \"1ms\"\nduration = \"50ms\"\n[fast]\nmethod = \"{fast}\"\n\
                 [implicit]\nmethod = \"{implicit}\"\n[record]\nfile = \"{fast}-{implicit}.csv\"\n"
            );
            std::fs::write(dir.join(&name), config).unwrap();
            run_ok(&dir, &[&name, "--virtual-clock"]);
            let table = common::Table::read(&dir.join(format!("results/{fast}-{implicit}.csv")));
            assert_eq!(table.rows.len(), 50, "{name}");
            assert!(table.rows.iter().all(|r| r[1] == 2.5), "{name}");
        }
    }
}
