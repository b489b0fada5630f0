//! The run configuration (`tandem run CONFIG.toml`): the example loads,
//! every kind of mistake gives an error at the right line, column and key
//! with its fix, no input panics, and `config/schema.json` is the schema
//! the code generates and accepts the example (checked with Python's
//! `jsonschema`).

use std::path::{Path, PathBuf};

use serde_json::Value;
use tandem_config::{
    load_run_config, parse_run_config, run_config_schema, ConfigError, E2eScheme, FaultEnd, FaultKind, FieldPlace,
    Location, PathUse, RecordConfig, RunConfig, StartValue, DEFAULT_DURATION, DEFAULT_FRAME,
};
use tandem_models::ModelRef;
use tandem_runtime::tandem::{Extrapolation, FastMethod, ImplicitSolver, Policy, TandemSettings};
use tandem_runtime::{ImplicitMethod, Method, WMethod};

#[path = "../../tests/support/schema_check.rs"]
mod schema_check;

const PROFILES: &[&str] = &["ev-drive-cycle", "ramp"];

fn config_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn example() -> PathBuf {
    config_dir().join("examples").join("ev.toml")
}

fn parse(text: &str) -> Result<RunConfig, ConfigError> {
    parse_run_config(text, Path::new("run.toml"), PROFILES)
}

fn ok(text: &str) -> RunConfig {
    parse(text).unwrap_or_else(|e| panic!("{e}\nin:\n{text}"))
}

/// Asserts that `text` fails at `line`:`column` on `key`, with a message
/// that contains each of `fragments`.
#[track_caller]
fn fails(text: &str, line: usize, column: usize, key: &str, fragments: &[&str]) -> ConfigError {
    let e = match parse(text) {
        Ok(run) => panic!("accepted ({run:?}):\n{text}"),
        Err(e) => e,
    };
    assert_eq!(e.location, Some(Location { line, column }), "{e}");
    assert_eq!(e.key, key, "{e}");
    for fragment in fragments {
        assert!(e.message.contains(fragment), "{e}\nshould contain: {fragment}");
    }
    let shown = e.to_string();
    let prefix = if key.is_empty() {
        format!("run.toml:{line}:{column}: ")
    } else {
        format!("run.toml:{line}:{column}: {key}: ")
    };
    assert!(shown.starts_with(&prefix), "{shown}\nshould start with: {prefix}");
    e
}

// ---------------------------------------------------------------------------
// What loads.

#[test]
fn the_example_loads_with_the_expected_settings() {
    let run = load_run_config(&example(), &["ev-drive-cycle"]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run.model.value, ModelRef::Builtin("ev".into()));
    // The example spells out the defaults of a 1 ms frame, cores included,
    // but the implicit tolerances; "0.8ms" is the number 0.8e-3, which
    // 0.8 * 1e-3 need not be.
    let mut expected = TandemSettings::new(1e-3, 20.0);
    expected.output_deadline = 0.8e-3;
    (expected.implicit.rtol, expected.implicit.atol) = (1e-4, 1e-4);
    assert_eq!(run.settings, expected);
    assert_eq!(run.settings.frames(), 20_000);
    assert_eq!(run.settings.policy, Policy::Correct);
    assert_eq!(
        run.settings.fast.method,
        FastMethod::LinearlyImplicit(WMethod::Ros34pw2)
    );
    assert_eq!(run.settings.fast.matrix_interval, 1);
    assert_eq!(run.settings.implicit.solver, ImplicitSolver::Bdf);
    assert_eq!(run.inputs.profile.map(|p| p.value).as_deref(), Some("ev-drive-cycle"));
    assert!(run.inputs.points.is_empty());
    let record = run.record.unwrap();
    assert_eq!((record.file.to_str(), record.decimation), (Some("ev-run.csv"), 10));
    let names: Vec<String> = record.signals.unwrap().into_iter().map(|s| s.value).collect();
    assert_eq!(
        names,
        [
            "vehicle_speed",
            "motor_speed",
            "motor_torque",
            "motor_current",
            "dc_voltage",
            "soc"
        ]
    );
    let v = &run.virtual_costs;
    assert_eq!((v.fast_step, v.implicit_step, v.wake_latency), (20_000, 300_000, 0));
    assert!(v.implicit_delays.is_empty() && v.fast_overruns.is_empty());
}

#[test]
fn only_the_model_is_required() {
    let run = ok("model = \"ev\"");
    let mut expected = TandemSettings::new(DEFAULT_FRAME, DEFAULT_DURATION);
    // Cores that are not given leave the threads unpinned.
    expected.fast.placement.core = None;
    expected.implicit.placement.core = None;
    assert_eq!(run.settings, expected);
    assert_eq!(run.inputs, Default::default());
    assert_eq!(run.record, None);
    assert_eq!(run.virtual_costs, Default::default());
}

#[test]
fn every_key_is_read() {
    let run = ok(r#"
model = "plant.json"
frame = "500us"
duration = "2min"
policy = "select"
max_catchup = 0
output_deadline = "0.5ms"
[fast]
core = 3
priority = 90
method = "heun"
[implicit]
priority = 89
method = "trapezoidal"
rtol = 1e-4
atol = 1e-5
newton_iterations = 7
macro_step = "2ms"
lead = "3ms"
max_lag = "1s"
helper_cores = [2, 0]
[events]
locate = false
max_per_frame = 9
[inputs]
profile = "ramp"
extrapolation = "quadratic"
[inputs.points]
torque_request = [[0, 0], [1, 100], [1, 50.5]]
brake_pressure = [[0.5, 2]]
[record]
file = "out/run.csv"
decimation = 1
[virtual_clock]
fast_cost = "20µs"
implicit_cost = "0.3ms"
wake_latency = "5us"
[[virtual_clock.implicit_delays]]
at = "7s"
delay = "1ms"
[[virtual_clock.implicit_delays]]
at = "5s"
delay = "3ms"
[[virtual_clock.fast_overruns]]
at = "6s"
extra = "1.5ms"
[[virtual_clock.stalls]]
at = "9s"
duration = "80ms"
[[virtual_clock.stalls]]
at = "4s"
duration = "60ms"
"#);
    assert_eq!(run.model.value, ModelRef::File(PathBuf::from("plant.json")));
    let s = run.settings;
    assert_eq!(
        (s.frame, s.duration, s.policy, s.max_catchup),
        (500e-6, 120.0, Policy::Select, 0)
    );
    assert_eq!(s.output_deadline, 0.5e-3);
    assert_eq!(
        (s.fast.placement.core, s.fast.placement.priority, s.fast.method),
        (Some(3), 90, FastMethod::Explicit(Method::Heun))
    );
    let i = s.implicit;
    assert_eq!((i.placement.core, i.placement.priority), (None, 89));
    assert_eq!(i.solver, ImplicitSolver::Fixed(ImplicitMethod::Trapezoidal));
    assert_eq!((i.rtol, i.atol, i.max_newton), (1e-4, 1e-5, 7));
    assert!((i.macro_step - 2e-3).abs() < 1e-15 && (i.lead - 3e-3).abs() < 1e-15);
    assert_eq!((run.inputs.extrapolation, i.max_lag), (Extrapolation::Quadratic, 1.0));
    assert_eq!(i.helper_cores.as_slice(), [2, 0]);
    assert_eq!((s.events.locate, s.events.max_per_frame), (false, 9));
    assert_eq!(run.inputs.profile.map(|p| p.value).as_deref(), Some("ramp"));
    let points: Vec<(String, Vec<(f64, f64)>)> = run.inputs.points.into_iter().map(|(n, p)| (n.value, p)).collect();
    assert_eq!(
        points,
        vec![
            ("brake_pressure".to_string(), vec![(0.5, 2.0)]),
            (
                "torque_request".to_string(),
                vec![(0.0, 0.0), (1.0, 100.0), (1.0, 50.5)]
            ),
        ]
    );
    assert_eq!(
        run.record,
        Some(RecordConfig {
            file: "out/run.csv".into(),
            signals: None,
            decimation: 1,
            frame_source: false
        })
    );
    let v = run.virtual_costs;
    assert_eq!((v.fast_step, v.implicit_step, v.wake_latency), (20_000, 300_000, 5_000));
    // In nanoseconds, sorted by time, as the virtual clock wants them.
    assert_eq!(
        v.implicit_delays,
        vec![(5_000_000_000, 3_000_000), (7_000_000_000, 1_000_000)]
    );
    assert_eq!(v.fast_overruns, vec![(6_000_000_000, 1_500_000)]);
    assert_eq!(v.stalls, vec![(4_000_000_000, 60_000_000), (9_000_000_000, 80_000_000)]);
}

#[test]
fn stalls_last_more_than_nothing_and_do_not_overlap() {
    fails(
        "model = \"ev\"\n[[virtual_clock.stalls]]\nat = \"1s\"\nduration = \"0s\"\n",
        4,
        12,
        "virtual_clock.stalls[0].duration",
        &["must be more than 0s and at most 604800s, found \"0s\"; write e.g. \"60ms\""],
    );
    fails(
        "model = \"ev\"\n[[virtual_clock.stalls]]\nat = \"1s\"\nduration = \"100ms\"\n\
         [[virtual_clock.stalls]]\nat = \"1050ms\"\nduration = \"1ms\"\n",
        6,
        6,
        "virtual_clock.stalls[1].at",
        &["begins before the stall before it ends; give stalls that do not overlap"],
    );
}

#[test]
fn model_files_are_resolved_against_the_configuration_directory() {
    let model = |value: &str| {
        let text = format!("model = \"{value}\"");
        parse_run_config(&text, Path::new("rigs/bench/run.toml"), &[])
            .unwrap()
            .model
            .value
    };
    assert_eq!(model("ev"), ModelRef::Builtin("ev".into()));
    assert_eq!(
        model("cruise_control.json"),
        ModelRef::File("rigs/bench/cruise_control.json".into())
    );
    assert_eq!(
        model("../models/abs"),
        ModelRef::File("rigs/bench/../models/abs".into())
    );
    assert_eq!(model("/srv/m.json"), ModelRef::File("/srv/m.json".into()));
    let run = parse_run_config("model = \"m.json\"", Path::new("run.toml"), &[]).unwrap();
    assert_eq!(run.model.value, ModelRef::File("m.json".into()));
}

#[test]
fn record_without_file_records_nothing() {
    assert_eq!(ok("model = \"ev\"\n[record]\n").record, None);
}

// ---------------------------------------------------------------------------
// Errors: one test per kind, each checking line, column, key and the fix.

#[test]
fn syntax_error() {
    fails(
        "model = \"ev\"\nframe = \"1ms\nduration = \"20s\"\n",
        2,
        13,
        "frame",
        &["invalid basic string"],
    );
    fails(
        "model = \"ev\"\n[fast\ncore = 1\n",
        2,
        6,
        "",
        &["unclosed table, expected `]`"],
    );
    fails(
        "model = \"ev\"\nmodel = \"ev2\"\n",
        2,
        1,
        "model",
        &["`model` is given twice; keep one"],
    );
}

#[test]
fn unknown_key() {
    fails(
        "model = \"ev\"\nframe_period = \"1ms\"\n",
        2,
        1,
        "frame_period",
        &["unknown field `frame_period`, expected one of `model`, `frame`, `duration`, `policy`"],
    );
    fails(
        "model = \"ev\"\n[fast]\ncore = 1\nprio = 80\n",
        4,
        1,
        "fast.prio",
        &["unknown field `prio`, expected one of `core`, `priority`, `method`"],
    );
    fails(
        "model = \"ev\"\n[virtual_clock]\n[[virtual_clock.fast_overruns]]\nat = \"1s\"\nextra = \"1ms\"\n\
         [[virtual_clock.fast_overruns]]\nat = \"2s\"\ndelay = \"1ms\"\n",
        8,
        1,
        "virtual_clock.fast_overruns[1].delay",
        &["unknown field `delay`, expected `at` or `extra`"],
    );
    fails(
        "model = \"ev\"\nimplicit = { rtol = 1e-6, tol = 1 }\n",
        2,
        27,
        "implicit.tol",
        &["unknown field `tol`"],
    );
}

#[test]
fn missing_key() {
    fails(
        "frame = \"1ms\"\n",
        1,
        1,
        "model",
        &["missing key `model`; add it, e.g. model = \"ev\""],
    );
    fails(
        "model = \"ev\"\n[[virtual_clock.implicit_delays]]\nat = \"1s\"\n",
        2,
        1,
        "virtual_clock.implicit_delays[0].delay",
        &["missing key `delay`; add it, e.g. delay = \"3ms\""],
    );
}

#[test]
fn helper_cores_are_distinct_not_the_fast_core_and_few() {
    let head = "model = \"ev\"\n[fast]\ncore = 1\n[implicit]\ncore = 4\n";
    fails(
        &format!("{head}helper_cores = [2, 1]"),
        6,
        20,
        "implicit.helper_cores[1]",
        &["core 1 is fast.core", "choose another"],
    );
    fails(
        &format!("{head}helper_cores = [4]"),
        6,
        17,
        "implicit.helper_cores[0]",
        &["core 4 is implicit.core", "choose another"],
    );
    fails(
        &format!("{head}helper_cores = [2, 3, 2]"),
        6,
        23,
        "implicit.helper_cores[2]",
        &["core 2 is listed twice"],
    );
    fails(
        &format!("{head}helper_cores = [2, -3]"),
        6,
        20,
        "implicit.helper_cores[1]",
        &["must be 0 to 4095, found -3"],
    );
    fails(
        &format!("{head}helper_cores = [0, 2, 3, 5, 6, 7, 8, 9, 10]"),
        6,
        16,
        "implicit.helper_cores",
        &["9 helper cores given, at most 8"],
    );
    assert!(ok(&format!("{head}helper_cores = []"))
        .settings
        .implicit
        .helper_cores
        .as_slice()
        .is_empty());
}

#[test]
fn unknown_policy() {
    fails(
        "model = \"ev\"\npolicy = \"corect\"\n",
        2,
        10,
        "policy",
        &["unknown policy \"corect\"; use one of: correct, select, explicit"],
    );
}

#[test]
fn unknown_method() {
    fails(
        "model = \"ev\"\n[fast]\nmethod = \"rk45\"\n",
        3,
        10,
        "fast.method",
        &["\"rk45\"; use one of: euler, heun, rk4"],
    );
    let e = fails(
        "model = \"ev\"\n[implicit]\nmethod = \"bdf7\"\n",
        3,
        10,
        "implicit.method",
        &["unknown implicit method \"bdf7\"; use one of: bdf, bdf1, bdf2, trapezoidal"],
    );
    assert_eq!(
        e.to_string(),
        "run.toml:3:10: implicit.method: unknown implicit method \"bdf7\"; use one of: bdf, bdf1, bdf2, trapezoidal"
    );
}

#[test]
fn unknown_extrapolation() {
    fails(
        "model = \"ev\"\n[inputs]\nextrapolation = \"cubic\"\n",
        3,
        17,
        "inputs.extrapolation",
        &["unknown extrapolation \"cubic\"; use one of: hold, linear, quadratic"],
    );
}

#[test]
fn bare_number_duration() {
    let e = fails(
        "model = \"ev\"\nframe = 1\n",
        2,
        9,
        "frame",
        &["found the bare number 1", "write \"1s\" for seconds, or e.g. \"1ms\""],
    );
    assert_eq!(
        e.to_string(),
        "run.toml:2:9: frame: found the bare number 1, but a duration is a string with a unit: write \"1s\" for \
         seconds, or e.g. \"1ms\", \"50us\" (units: min, s, ms, us (or µs), ns)"
    );
    fails(
        "model = \"ev\"\n[implicit]\nmax_lag = 0.02\n",
        3,
        11,
        "implicit.max_lag",
        &["found the bare number 0.02", "\"0.02s\""],
    );
    fails(
        "model = \"ev\"\n[[virtual_clock.implicit_delays]]\nat = 5\ndelay = \"1ms\"\n",
        3,
        6,
        "virtual_clock.implicit_delays[0].at",
        &["bare number 5", "\"5s\""],
    );
    fails(
        "model = \"ev\"\nduration = \"20\"\n",
        2,
        12,
        "duration",
        &["has no unit; write e.g. \"20s\""],
    );
}

#[test]
fn bad_unit() {
    fails(
        "model = \"ev\"\nduration = \"20sec\"\n",
        2,
        12,
        "duration",
        &["unknown unit \"sec\" in \"20sec\"; use one of: min, s, ms, us (or µs), ns"],
    );
    fails(
        "model = \"ev\"\n[virtual_clock]\nfast_cost = \"-1us\"\n",
        3,
        13,
        "virtual_clock.fast_cost",
        &["cannot be negative"],
    );
}

#[test]
fn durations_out_of_range() {
    fails(
        "model = \"ev\"\nframe = \"0ms\"\n",
        2,
        9,
        "frame",
        &["must be from 1us to 10s, found \"0s\"", "\"1ms\""],
    );
    fails(
        "model = \"ev\"\nframe = \"1e-300s\"\n",
        2,
        9,
        "frame",
        &["must be from 1us to 10s"],
    );
    fails(
        "model = \"ev\"\nframe = \"0.0000001ns\"\n",
        2,
        9,
        "frame",
        &["must be from 1us to 10s"],
    );
    fails(
        "model = \"ev\"\nduration = \"1e300s\"\n",
        2,
        12,
        "duration",
        &["more than 0s and at most 604800s"],
    );
    fails(
        "model = \"ev\"\n[implicit]\nlead = \"1e300s\"\n",
        3,
        8,
        "implicit.lead",
        &["must be at most 10000 frames (10s)"],
    );
    fails(
        "model = \"ev\"\n[implicit]\nmax_lag = \"9223372036854775807ms\"\n",
        3,
        11,
        "implicit.max_lag",
        &["must be more than 0s and at most 10s"],
    );
    fails(
        "model = \"ev\"\nframe = \"2ms\"\nduration = \"1ms\"\n",
        3,
        12,
        "duration",
        &["shorter than one frame", "make duration at least the frame"],
    );
}

#[test]
fn priority_order() {
    fails(
        "model = \"ev\"\n[fast]\npriority = 80\n[implicit]\npriority = 80\n",
        5,
        12,
        "implicit.priority",
        &[
            "implicit.priority (80) must be below fast.priority (80)",
            "set implicit.priority to at most 79",
        ],
    );
    fails(
        "model = \"ev\"\n[fast]\npriority = 50\n",
        3,
        12,
        "fast.priority",
        &["implicit.priority (70, the default) must be below fast.priority (50)"],
    );
    fails(
        "model = \"ev\"\n[fast]\npriority = 100\n",
        3,
        12,
        "fast.priority",
        &["must be 1 to 99, found 100", "SCHED_FIFO"],
    );
    fails(
        "model = \"ev\"\n[implicit]\npriority = 0\n",
        3,
        12,
        "implicit.priority",
        &["1 to 99, found 0"],
    );
}

#[test]
fn lead_not_a_multiple_of_the_frame() {
    fails(
        "model = \"ev\"\nframe = \"1ms\"\n[implicit]\nlead = \"1.5ms\"\n",
        4,
        8,
        "implicit.lead",
        &[
            "whole number of frames (the frame is 1ms), found \"1.5ms\"",
            "write e.g. \"1ms\" or \"2ms\"",
        ],
    );
    fails(
        "model = \"ev\"\n[implicit]\nmacro_step = \"0.5ms\"\n",
        3,
        14,
        "implicit.macro_step",
        &["whole number of frames", "\"1ms\" or \"2ms\""],
    );
    fails(
        "model = \"ev\"\n[implicit]\nmacro_step = \"3ms\"\nlead = \"2ms\"\n",
        4,
        8,
        "implicit.lead",
        &[
            "implicit.lead (\"2ms\") must be at least implicit.macro_step (\"3ms\")",
            "lead = \"3ms\"",
        ],
    );
    // Rounding does not matter: 0.3 ms is 3 frames of 0.1 ms.
    let run = ok("model = \"ev\"\nframe = \"0.1ms\"\n[implicit]\nmacro_step = \"0.3ms\"\nlead = \"0.3ms\"\n");
    assert!((run.settings.implicit.lead - 3e-4).abs() < 1e-18);
}

#[test]
fn output_deadline_out_of_range() {
    fails(
        "model = \"ev\"\nframe = \"1ms\"\noutput_deadline = \"1.2ms\"\n",
        3,
        19,
        "output_deadline",
        &[
            "more than 0 and at most the frame (1ms), found \"1.2ms\"",
            "write e.g. \"800us\"",
        ],
    );
    fails(
        "model = \"ev\"\noutput_deadline = \"0s\"\n",
        2,
        19,
        "output_deadline",
        &["more than 0"],
    );
    // The whole frame is allowed.
    assert_eq!(
        ok("model = \"ev\"\noutput_deadline = \"1ms\"\n")
            .settings
            .output_deadline,
        1e-3
    );
}

#[test]
fn unknown_profile() {
    fails(
        "model = \"ev\"\n\n[inputs]\nprofile = \"ev-drive\"\n",
        4,
        11,
        "inputs.profile",
        &["unknown input profile \"ev-drive\"; use one of: ev-drive-cycle, ramp"],
    );
    let e = parse_run_config(
        "model = \"ev\"\n[inputs]\nprofile = \"x\"\n",
        Path::new("run.toml"),
        &[],
    )
    .unwrap_err();
    assert!(e.message.contains("no built-in profiles"), "{e}");
}

#[test]
fn decreasing_points() {
    fails(
        "model = \"ev\"\n[inputs.points]\nbrake_pressure = [[0, 0], [12.5, 30], [12, 0]]\n",
        3,
        39,
        "inputs.points.brake_pressure[2]",
        &["time 12 s comes after 12.5 s; breakpoints must be in time order"],
    );
    fails(
        "model = \"ev\"\n[inputs.points]\n\"odd name\" = []\n",
        3,
        14,
        "inputs.points.\"odd name\"",
        &["no breakpoints; give at least one [time_s, value]"],
    );
    fails(
        "model = \"ev\"\n[inputs.points]\nx = [[0, nan]]\n",
        3,
        6,
        "inputs.points.x[0]",
        &["must be finite"],
    );
    fails(
        "model = \"ev\"\n[inputs.points]\nx = [[0, 1, 2]]\n",
        3,
        6,
        "inputs.points.x[0]",
        &["a breakpoint is [time_s, value], found 3 number(s)"],
    );
}

#[test]
fn other_numbers_out_of_range() {
    fails(
        "model = \"ev\"\nmax_catchup = 1001\n",
        2,
        15,
        "max_catchup",
        &["0 to 1000, found 1001"],
    );
    fails(
        "model = \"ev\"\n[implicit]\nrtol = 0\n",
        3,
        8,
        "implicit.rtol",
        &["between 0 and 1", "1e-6"],
    );
    fails(
        "model = \"ev\"\n[implicit]\natol = -1e-8\n",
        3,
        8,
        "implicit.atol",
        &["more than 0"],
    );
    fails(
        "model = \"ev\"\n[implicit]\nnewton_iterations = 0\n",
        3,
        21,
        "implicit.newton_iterations",
        &["1 to 1000, found 0"],
    );
    fails(
        "model = \"ev\"\n[fast]\ncore = -1\n",
        3,
        8,
        "fast.core",
        &["0 to 4095, found -1", "omit it to leave the thread unpinned"],
    );
    fails(
        "model = \"ev\"\n[record]\nfile = \"a.csv\"\ndecimation = 0\n",
        4,
        14,
        "record.decimation",
        &["found 0", "write 1 to record every frame"],
    );
    fails(
        "model = \"ev\"\n[events]\nmax_per_frame = 0\n",
        3,
        17,
        "events.max_per_frame",
        &["1 to 1000, found 0", "write e.g. 4"],
    );
    fails(
        "model = \"ev\"\n[events]\nlocate = \"yes\"\n",
        3,
        10,
        "events.locate",
        &["invalid type: string \"yes\", expected a boolean"],
    );
    fails(
        "model = \"ev\"\nmax_catchup = \"4\"\n",
        2,
        15,
        "max_catchup",
        &["invalid type: string \"4\""],
    );
}

#[test]
fn record_mistakes() {
    fails(
        "model = \"ev\"\n[record]\ndecimation = 10\n",
        3,
        14,
        "record.file",
        &["nothing is recorded without a file; add e.g. file = \"run.csv\""],
    );
    fails(
        "model = \"ev\"\n[record]\nfile = \"a.csv\"\nsignals = []\n",
        4,
        11,
        "record.signals",
        &["name at least one output, or remove record.signals"],
    );
    fails(
        "model = \"ev\"\n[record]\nfile = \"a.csv\"\nsignals = [\"soc\", \"soc\"]\n",
        4,
        19,
        "record.signals[1]",
        &["\"soc\" is listed twice"],
    );
    fails("model = \"\"\n", 1, 9, "model", &["the model is empty"]);
}

#[test]
fn an_unreadable_file_is_named() {
    let e = load_run_config(Path::new("no/such/run.toml"), PROFILES).unwrap_err();
    assert_eq!((e.location, e.key.as_str()), (None, ""));
    assert!(
        e.to_string()
            .starts_with("no/such/run.toml: cannot read the run configuration: "),
        "{e}"
    );
}

#[test]
fn columns_count_characters() {
    // "µ" is two bytes; the column of the bad value is in characters.
    fails(
        "model = \"ev\"\n[virtual_clock]\nfast_cost = \"1µs\"; x\n",
        3,
        18,
        "virtual_clock.fast_cost",
        &[],
    );
    fails(
        "model = \"évé\"\npolicy = \"é\"\n",
        2,
        10,
        "policy",
        &["unknown policy \"é\""],
    );
}

/// Every prefix of the example and copies with one character replaced or
/// one line dropped give a configuration or an error, never a panic.
#[test]
fn no_input_panics() {
    let text = std::fs::read_to_string(example()).unwrap();
    let mut outcomes = (0, 0);
    let mut record = |candidate: &str| match parse(candidate) {
        Ok(_) => outcomes.0 += 1,
        Err(e) => {
            assert!(e.location.is_some(), "{e}");
            outcomes.1 += 1;
        }
    };
    for (i, _) in text.char_indices() {
        record(&text[..i]);
    }
    let body: String = text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .collect::<Vec<_>>()
        .join("\n");
    for (i, c) in body.char_indices() {
        for replacement in ["0", "\"", "=", "[", "-", "\n", "é", ""] {
            let mut candidate = body.clone();
            candidate.replace_range(i..i + c.len_utf8(), replacement);
            record(&candidate);
        }
    }
    let lines: Vec<&str> = body.lines().collect();
    for skip in 0..lines.len() {
        let candidate: Vec<&str> = lines
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != skip)
            .map(|(_, l)| *l)
            .collect();
        record(&candidate.join("\n"));
    }
    for extreme in [
        "1e308s",
        "1e-320ns",
        "99999999999999999999999min",
        "0.0000000001ns",
        "nan",
        "inf",
    ] {
        for key in ["frame", "duration", "output_deadline"] {
            record(&format!("model = \"ev\"\n{key} = \"{extreme}\"\n"));
        }
        record(&format!(
            "model = \"ev\"\n[implicit]\nlead = \"{extreme}\"\nmacro_step = \"{extreme}\"\n"
        ));
    }
    for number in [
        "9223372036854775807",
        "-9223372036854775808",
        "nan",
        "inf",
        "-inf",
        "1e400",
    ] {
        for key in [
            "max_catchup",
            "fast.priority",
            "fast.core",
            "implicit.rtol",
            "implicit.newton_iterations",
        ] {
            record(&format!("model = \"ev\"\n{key} = {number}\n"));
        }
    }
    assert!(outcomes.0 > 0 && outcomes.1 > 0, "{outcomes:?}");
}

// ---------------------------------------------------------------------------
// The JSON Schema.

#[test]
fn schema_json_is_the_generated_schema() {
    let path = config_dir().join("schema.json");
    let generated = run_config_schema();
    if std::env::var_os("TANDEM_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "config/schema.json is not the schema of the run configuration that the code generates; after changing \
         config/src/raw.rs or config/src/duration.rs, regenerate it with `TANDEM_BLESS=1 cargo test -p tandem-config \
         --test run_config schema_json` and commit it"
    );
}

#[test]
fn schema_lists_the_runtime_names() {
    let schema: Value = serde_json::from_str(&run_config_schema()).unwrap();
    let names = |v: &Value| -> Vec<String> {
        v["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        names(&schema["properties"]["policy"]),
        Policy::ALL.map(|p| p.name().to_string())
    );
    assert_eq!(
        names(&schema["$defs"]["FastThread"]["properties"]["method"]),
        FastMethod::ALL.map(|m| m.name().to_string())
    );
    assert_eq!(
        names(&schema["$defs"]["ImplicitThread"]["properties"]["method"]),
        ImplicitSolver::NAMES.map(String::from)
    );
    // Every key has a description, for editors.
    fn described(v: &Value, path: &str) {
        if let Some(properties) = v.get("properties").and_then(Value::as_object) {
            for (key, p) in properties {
                assert!(
                    p.get("description").is_some_and(Value::is_string),
                    "{path}.{key} has no description"
                );
            }
        }
        if let Some(children) = v.as_object() {
            for (key, child) in children {
                described(child, &format!("{path}/{key}"));
            }
        }
    }
    described(&schema, "");
}

/// Configurations the schema can judge alone (no cross-key rule), with
/// whether the loader accepts them; the test checks that it does.
fn schema_cases() -> Vec<(String, String)> {
    let mut cases: Vec<(String, String)> = [
        ("minimal", "model = \"ev\"\n"),
        ("no_model", "frame = \"1ms\"\n"),
        ("bare_number", "model = \"ev\"\nframe = 1\n"),
        ("unknown_key", "model = \"ev\"\nframes = \"1ms\"\n"),
        ("unknown_section_key", "model = \"ev\"\n[fast]\nprio = 3\n"),
        ("unknown_policy", "model = \"ev\"\npolicy = \"corect\"\n"),
        ("unknown_method", "model = \"ev\"\n[implicit]\nmethod = \"bdf7\"\n"),
        ("priority", "model = \"ev\"\n[fast]\npriority = 100\n"),
        ("rtol", "model = \"ev\"\n[implicit]\nrtol = 0\n"),
        ("events_per_frame", "model = \"ev\"\n[events]\nmax_per_frame = 0\n"),
        ("events_locate", "model = \"ev\"\n[events]\nlocate = 1\n"),
        (
            "decimation",
            "model = \"ev\"\n[record]\nfile = \"a.csv\"\ndecimation = 0\n",
        ),
        ("point_length", "model = \"ev\"\n[inputs.points]\nx = [[0, 1, 2]]\n"),
        (
            "delay_key",
            "model = \"ev\"\n[[virtual_clock.implicit_delays]]\nat = \"1s\"\n",
        ),
    ]
    .map(|(name, text)| (name.to_string(), text.to_string()))
    .to_vec();
    // The pattern of durations agrees with the parser.
    let durations = [
        "1ms", "20s", "50us", "50µs", "50μs", "100ns", "2min", "0.8ms", ".5s", "5.s", "1.5e-3s", "1E3 ms", " 3 ms ",
        "0us", "20", "20sec", "ms", "-1ms", "", "1.2.3s", "5ex", "1 h", "1m", "1MS", "e3s", "+1s",
    ];
    for (i, d) in durations.iter().enumerate() {
        cases.push((
            format!("duration_{i}"),
            format!("model = \"ev\"\nframe = \"{d}\"\nduration = \"2min\"\n"),
        ));
    }
    cases
}

#[test]
fn schema_accepts_the_example_and_rejects_what_the_loader_rejects() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("run_config_schema");
    std::fs::create_dir_all(&dir).expect("the temporary directory can be created");
    let examples = config_dir().join("examples");
    let mut files = vec![
        (example(), true),
        (examples.join("ev-can.toml"), true),
        (examples.join("ecu.toml"), true),
    ];
    for (name, text) in schema_cases() {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, &text).expect("the temporary file can be written");
        // The durations of "duration_*" cases go to `frame`, where "0us" or
        // "20s" is out of the loader's bounds but of the schema's form.
        let valid = match parse(&text) {
            Ok(_) => true,
            Err(e) if e.message.contains("must be from 1us to 10s") => true,
            Err(_) => false,
        };
        files.push((path, valid));
    }
    schema_check::validate(&config_dir().join("schema.json"), &files);
}

// A run served as a DCP slave.

#[test]
fn a_dcp_slave_has_its_address_and_a_bus_over_dcp() {
    let bus = "[[bus]]\ntransport = \"dcp\"\ndbc = \"ev.dbc\"\n";
    let run = ok(&format!(
        "model = \"ev\"\n{bus}[dcp]\ncontrol = \"0.0.0.0:47011\"\nmaster_timeout = 2.5\n"
    ));
    let dcp = run.dcp.unwrap();
    assert_eq!(dcp.name, "run", "the file's name by default");
    assert_eq!(dcp.endpoint.control, "0.0.0.0:47011".parse().unwrap());
    assert_eq!(dcp.endpoint.host, std::net::Ipv4Addr::LOCALHOST);
    assert_eq!(dcp.endpoint.master_timeout, 2.5);
    assert_eq!(run.buses[0].transport, tandem_config::TransportConfig::Dcp);
    fails(
        &format!("model = \"ev\"\n{bus}"),
        3,
        13,
        "bus[0].transport",
        &["needs the run to be a DCP slave", "[dcp]"],
    );
    fails(
        "model = \"ev\"\n[dcp]\ncontrol = \"127.0.0.1:1\"\n",
        3,
        11,
        "dcp",
        &["has none", "transport = \"dcp\""],
    );
    fails(
        &format!("model = \"ev\"\n{bus}[dcp]\ncontrol = \"here\"\n"),
        6,
        11,
        "dcp.control",
        &["not an IPv4 address and port"],
    );
    fails(
        &format!("model = \"ev\"\n{bus}[dcp]\ncontrol = \"127.0.0.1:1\"\nname = \"a.b\"\n"),
        7,
        8,
        "dcp.name",
        &["without '.'"],
    );
    fails(
        &format!("model = \"ev\"\n{bus}[dcp]\ncontrol = \"127.0.0.1:1\"\nmaster_timeout = 0\n"),
        7,
        18,
        "dcp.master_timeout",
        &["0.01 to 86400"],
    );
}

#[test]
fn every_path_a_configuration_names_is_listed_with_its_key_and_use() {
    let run = ok(r#"model = "../models/plant.json"
[[bus]]
transport = "slcan"
device = "/dev/ttyACM0"
dbc = "dbc/ev.dbc"
[[serial]]
device = "/dev/ttyUSB0"
receive = { spd = "speed" }
[ecu]
config = "ecu.toml"
[record]
file = "out/run.csv"
bus_log = "/tmp/bus.log"
"#);
    let listed: Vec<(String, Option<Location>, &Path, PathUse)> = run
        .paths()
        .into_iter()
        .map(|p| (p.key, p.location, p.path, p.usage))
        .collect();
    let at = |line, column| Some(Location { line, column });
    assert_eq!(
        listed,
        vec![
            (
                "model".into(),
                at(1, 9),
                Path::new("../models/plant.json"),
                PathUse::Read
            ),
            ("bus[0].dbc".into(), at(5, 7), Path::new("dbc/ev.dbc"), PathUse::Read),
            ("bus[0].device".into(), None, Path::new("/dev/ttyACM0"), PathUse::Device),
            (
                "serial[0].device".into(),
                None,
                Path::new("/dev/ttyUSB0"),
                PathUse::Device
            ),
            ("ecu.config".into(), at(10, 10), Path::new("ecu.toml"), PathUse::Read),
            ("record.file".into(), None, Path::new("out/run.csv"), PathUse::Write),
            ("record.bus_log".into(), None, Path::new("/tmp/bus.log"), PathUse::Write),
        ]
    );
    // A built-in model is no path.
    assert!(ok("model = \"ev\"").paths().is_empty());
}

#[test]
fn fmu_isolate_is_taken_for_an_fmu_model_or_a_system_only() {
    assert!(ok("model = \"plant.fmu\"\nfmu.isolate = true\n").isolate_fmu);
    assert!(ok("model = \"plant.ssp\"\nfmu.isolate = true\n").isolate_fmu);
    assert!(ok("model = \"system.toml\"\nfmu.isolate = true\n").isolate_fmu);
    assert!(!ok("model = \"plant.FMU\"\n[fmu]\nisolate = false\n").isolate_fmu);
    assert!(!ok("model = \"plant.fmu\"\n").isolate_fmu);
    fails(
        "model = \"plant.json\"\nfmu.isolate = true\n",
        2,
        15,
        "fmu.isolate",
        &["diagrams and built-in plants run Tandem's own code"],
    );
    fails(
        "model = \"ev\"\nfmu.isolate = true\n",
        2,
        15,
        "fmu.isolate",
        &["applies to an FMU model (a model ending in \".fmu\") and to the FMUs of a system (\".ssp\", \".toml\") only"],
    );
    fails(
        "model = \"plant.fmu\"\nfmu.isolated = true\n",
        2,
        5,
        "fmu.isolated",
        &["unknown field"],
    );
}

#[test]
fn fmu_parameters_are_taken_for_an_fmu_model_only() {
    let run = ok("model = \"plant.fmu\"\n[fmu]\nparameters = { k = 2.5, on = true, label = \"hi\" }\n");
    let values: Vec<(&str, &StartValue)> = run.fmu_parameters.iter().map(|(n, v)| (n.as_str(), &v.value)).collect();
    assert_eq!(
        values,
        [
            ("k", &StartValue::Number(2.5)),
            ("label", &StartValue::Text("hi".into())),
            ("on", &StartValue::Boolean(true))
        ]
    );
    assert_eq!(run.fmu_parameters[0].1.key, "fmu.parameters.k");
    fails(
        "model = \"plant.ssp\"\nfmu.parameters = { k = 1 }\n",
        2,
        24,
        "fmu.parameters.k",
        &["applies to an FMU model (a model ending in \".fmu\") only: an SSP package sets its FMUs' values in its parameter sets"],
    );
}

#[test]
fn compile_is_taken_for_a_diagram_model_or_a_system_file_only() {
    assert!(ok("model = \"plant.json\"\n").compile);
    assert!(!ok("model = \"system.toml\"\ncompile = false\n").compile);
    assert!(ok("model = \"plant.json\"\ncompile = true\n").compile);
    assert!(!ok("model = \"plant.JSON\"\ncompile = false\n").compile);
    assert!(ok("model = \"ev\"\n").compile);
    fails(
        "model = \"ev\"\ncompile = false\n",
        2,
        11,
        "compile",
        &["applies to a JSON block diagram model (a model ending in \".json\") and to a system file's diagrams (\".toml\") only"],
    );
    fails(
        "model = \"plant.json\"\ncompile = \"no\"\n",
        2,
        11,
        "compile",
        &["invalid type"],
    );
}

// ---------------------------------------------------------------------------
// E2E protection and frame faults.

/// A bus whose received message carries `e2e` and whose transmit table is
/// followed by `faults`.
fn protected(e2e: &str, faults: &str) -> String {
    format!(
        "model = \"ev\"\n[[bus]]\ntransport = \"virtual\"\ndbc = \"ev.dbc\"\n[[bus.receive]]\nmessage = \"ECU_Command\"\nsignals = {{ TorqueRequest = \"torque_request\" }}\ne2e = {e2e}\n[[bus.transmit]]\nmessage = \"VCU_Speeds\"\nsignals = {{ VehicleSpeed = \"vehicle_speed\" }}\n{faults}"
    )
}

#[test]
fn an_e2e_table_is_read_with_its_profile_and_places() {
    let run = ok(&protected(
        "{ profile = \"1C\", data_id = 0x0AB, crc = \"CmdCrc\", counter = 56, max_delta_counter = 3, status = \"road_grade\" }",
        "",
    ));
    let e2e = run.buses[0].receive[0].e2e.as_ref().unwrap();
    assert_eq!(e2e.scheme.value, E2eScheme::P01(tandem_e2e::DataIdMode::Nibble));
    assert_eq!((e2e.data_id, e2e.max_delta_counter), (0x0AB, 3));
    assert_eq!(e2e.crc.as_ref().unwrap().value, FieldPlace::Signal("CmdCrc".into()));
    assert_eq!(e2e.counter.as_ref().unwrap().value, FieldPlace::Bit(56));
    assert_eq!(e2e.status.as_ref().unwrap().value, "road_grade");
}

#[test]
fn a_bad_e2e_table_is_refused_at_its_key() {
    let at = |e2e: &str| protected(e2e, "");
    fails(
        &at("{ profile = \"3\", data_id = 1 }"),
        8,
        19,
        "bus[0].receive[0].e2e.profile",
        &["unknown E2E profile \"3\"; use one of: 1, 1A, 1C, 2, 5, 11, plain"],
    );
    fails(
        &at("{ profile = \"5\" }"),
        8,
        19,
        "bus[0].receive[0].e2e.data_id",
        &["profile 5 needs a data ID; add e.g. data_id = 0x123"],
    );
    fails(
        &at("{ profile = \"1A\", data_id = 70000 }"),
        8,
        35,
        "bus[0].receive[0].e2e.data_id",
        &["must be 0 to 65535, found 70000"],
    );
    fails(
        &at("{ profile = \"11\", data_id = 1, data_id_mode = \"alt\" }"),
        8,
        53,
        "bus[0].receive[0].e2e.data_id_mode",
        &["data ID mode \"alt\" is not one of profile 11's; use one of: both, nibble"],
    );
    fails(
        &at("{ profile = \"2\", data_ids = [1, 2] }"),
        8,
        35,
        "bus[0].receive[0].e2e.data_ids",
        &["profile 2 needs 16 data IDs of 0 to 255, one per counter value, found 2 values"],
    );
    fails(
        &at("{ profile = \"2\", data_id = 5, data_ids = [] }"),
        8,
        34,
        "bus[0].receive[0].e2e.data_id",
        &["profile 2 has no `data_id`; remove it"],
    );
    fails(
        &at("{ profile = \"plain\", crc = \"CmdCrc\", checksum = \"md5\" }"),
        8,
        55,
        "bus[0].receive[0].e2e.checksum",
        &["unknown checksum \"md5\"; use one of: crc8, crc8h2f, crc16, crc32p4, xor, sum"],
    );
    fails(
        &at("{ profile = \"1A\", data_id = 1, crc = 600 }"),
        8,
        44,
        "bus[0].receive[0].e2e.crc",
        &["bit 600 is outside a CAN FD payload (0 to 511)"],
    );
    fails(
        &at("{ profile = \"1A\", data_id = 1, max_delta_counter = 0 }"),
        8,
        58,
        "bus[0].receive[0].e2e.max_delta_counter",
        &["must be 1 to 255, found 0"],
    );
}

#[test]
fn a_sent_message_has_no_status_input() {
    let text = protected(
        "{ profile = \"1A\", data_id = 1 }",
        "e2e = { profile = \"1A\", data_id = 2, status = \"x\" }\n",
    );
    fails(
        &text,
        12,
        47,
        "bus[0].transmit[0].e2e.status",
        &["a sent message has no check status"],
    );
}

#[test]
fn a_fault_table_is_read_in_frames() {
    let faults = "[[bus.fault]]\nmessage = \"VCU_Speeds\"\nkind = \"delay\"\ndelay = \"20ms\"\nstart = \"1.5s\"\nduration = \"500ms\"\n[[bus.fault]]\nkind = \"burst\"\nid = 0x7F0\ncount = 3\n";
    let run = ok(&protected("{ profile = \"1A\", data_id = 1 }", faults));
    let [delay, burst] = &run.buses[0].faults[..] else {
        panic!()
    };
    assert_eq!(delay.kind.value, FaultKind::Delay { frames: 20 });
    assert_eq!((delay.start, delay.end), (1500, FaultEnd::Frames(500)));
    assert_eq!(
        burst.kind.value,
        FaultKind::Burst {
            id: 0x7F0,
            extended: false,
            per_frame: 1
        }
    );
    assert_eq!((burst.message.as_ref(), burst.end), (None, FaultEnd::Count(3)));
}

#[test]
fn a_bad_fault_table_is_refused_at_its_key() {
    let at = |fault: &str| {
        protected(
            "{ profile = \"1A\", data_id = 1 }",
            &format!("[[bus.fault]]\n{fault}\n"),
        )
    };
    fails(&at("message = \"VCU_Speeds\"\nkind = \"jam\""), 14, 8, "bus[0].fault[0].kind", &[
        "unknown fault kind \"jam\"; use one of: drop, delay, repeat, stuck_counter, bad_crc, wrong_length, override, burst, stop",
    ]);
    fails(
        &at("kind = \"drop\""),
        13,
        8,
        "bus[0].fault[0].message",
        &["a \"drop\" fault needs `message`: the name of a message this bus sends"],
    );
    fails(
        &at("kind = \"stop\"\nmessage = \"VCU_Speeds\""),
        14,
        11,
        "bus[0].fault[0].message",
        &["a \"stop\" fault acts on the whole bus; remove `message`"],
    );
    fails(
        &at("kind = \"drop\"\nmessage = \"VCU_Speeds\"\nduration = \"1s\"\ncount = 3"),
        15,
        12,
        "bus[0].fault[0].duration",
        &["give `duration` or `count`, not both"],
    );
    fails(
        &at("kind = \"delay\"\nmessage = \"VCU_Speeds\"\ndelay = \"1.5ms\""),
        15,
        9,
        "bus[0].fault[0].delay",
        &["must be a whole number of frames (the frame is 1ms)"],
    );
    fails(
        &at("kind = \"override\"\nmessage = \"VCU_Speeds\"\nsignal = \"VehicleSpeed\""),
        13,
        8,
        "bus[0].fault[0].value",
        &["a \"override\" fault needs `value`"],
    );
    fails(
        &at("kind = \"burst\"\nid = 0x800"),
        14,
        6,
        "bus[0].fault[0].id",
        &["must be 0 to 2047, found 2048"],
    );
}
