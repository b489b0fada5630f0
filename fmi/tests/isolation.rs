//! Out-of-process loading: an isolated FMU gives what it gives in process,
//! bit for bit (in the real-time tandem too, its state set back and carried
//! between the threads), its errors keep their words, and a crash in its
//! code (a segfault, abort, exit) is an error naming the FMU, the FMI call
//! and the signal, where in process it would end this program.
//!
//! This test program is also the helper its FMUs run in: started with
//! `fmu-host`, its `main` serves (hence no libtest harness: `cargo test`
//! runs `main`, which runs the tests below one after the other).

#[path = "support/fmus.rs"]
mod fmus;

#[path = "../../runtime/tests/support/mod.rs"]
mod support;

#[path = "support/counter.rs"]
mod counter;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

use tandem_fmi::isolate::{serve, Host, HOST_ARGUMENT};
use tandem_fmi::{Fmu, FmuError, FmuModel, FmuSlave, Parameters};
use tandem_models::Model;
use tandem_runtime::record::Trace;
use tandem_runtime::{EventSettings, FixedStep, Method, SimError, Simulation};

fn main() {
    if std::env::args().nth(1).as_deref() == Some(HOST_ARGUMENT) {
        std::process::exit(serve());
    }
    let tests: [(&str, fn()); 7] = [
        (
            "an_isolated_model_gives_what_it_gives_in_process",
            an_isolated_model_gives_what_it_gives_in_process,
        ),
        (
            "an_isolated_slave_steps_and_rolls_back_as_in_process",
            an_isolated_slave_steps_and_rolls_back_as_in_process,
        ),
        (
            "an_isolated_fmu_in_the_tandem_is_set_back_and_carried_as_in_process",
            an_isolated_fmu_in_the_tandem_is_set_back_and_carried_as_in_process,
        ),
        (
            "a_crash_names_the_fmu_the_call_and_the_signal",
            a_crash_names_the_fmu_the_call_and_the_signal,
        ),
        (
            "errors_of_isolated_calls_keep_their_words",
            errors_of_isolated_calls_keep_their_words,
        ),
        (
            "a_binary_that_does_not_load_in_the_child_says_why",
            a_binary_that_does_not_load_in_the_child_says_why,
        ),
        (
            "a_helper_that_does_not_start_is_named",
            a_helper_that_does_not_start_is_named,
        ),
    ];
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let (mut passed, mut failed) = (0, Vec::new());
    for (name, test) in tests {
        if filter.as_deref().is_some_and(|f| !name.contains(f)) {
            continue;
        }
        match catch_unwind(AssertUnwindSafe(test)) {
            Ok(()) => {
                println!("test {name} ... ok");
                passed += 1;
            }
            Err(_) => {
                println!("test {name} ... FAILED");
                failed.push(name);
            }
        }
    }
    let verdict = if failed.is_empty() { "ok" } else { "FAILED" };
    println!("\ntest result: {verdict}. {passed} passed; {} failed", failed.len());
    if !failed.is_empty() {
        println!("failures: {failed:?}");
        std::process::exit(101);
    }
}

fn host() -> Host {
    Host::this_program().expect("this test program's path")
}

fn built(name: &str, dir: &tempfile::TempDir) -> PathBuf {
    fmus::build(name, dir.path())
}

/// A run of `model` with RK4 at `step` to `stop`, events recorded: its
/// rows, or the error and the rows before it.
fn run(model: &mut dyn Model, step: f64, stop: f64) -> (Trace, Option<SimError>) {
    let settings = FixedStep {
        solver: Method::Rk4.into(),
        step,
        stop,
    };
    let events = EventSettings {
        record: true,
        ..EventSettings::default()
    };
    let mut trace = Trace::default();
    let result = Simulation::new(model, settings)
        .unwrap()
        .with_events(events)
        .run(&mut trace, &mut |_| {});
    (trace, result.err())
}

fn an_isolated_model_gives_what_it_gives_in_process() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["bouncing_ball", "bouncing_ball3"] {
        let path = built(name, &dir);
        let parameters = Parameters::new().with("e", 0.7);
        let mut here = FmuModel::new(&Fmu::open(&path).unwrap(), &parameters).unwrap();
        let isolated = Fmu::open_isolated(&path, host()).unwrap();
        assert!(isolated.is_isolated());
        let mut there = FmuModel::new(&isolated, &parameters).unwrap();
        let (expected, error) = run(&mut here, 0.001, 3.0);
        assert!(error.is_none(), "{name}: {error:?}");
        let (got, error) = run(&mut there, 0.001, 3.0);
        assert!(error.is_none(), "{name}: {error:?}");
        // Bounces recorded as event rows: the same instants, the same values.
        assert!(expected.time.len() > 3001, "{name}: {} rows", expected.time.len());
        assert_eq!(got.time, expected.time, "{name}");
        assert_eq!(got.rows, expected.rows, "{name}");
        assert_eq!(there.log(), here.log(), "{name}");
    }
}

fn an_isolated_slave_steps_and_rolls_back_as_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let path = built("oscillator", &dir);
    let parameters = Parameters::new();
    let mut here = FmuSlave::new(&Fmu::open(&path).unwrap(), &parameters, 0.0).unwrap();
    let mut there = FmuSlave::new(&Fmu::open_isolated(&path, host()).unwrap(), &parameters, 0.0).unwrap();
    let outputs = here.output_variables().len();
    let (mut a, mut b) = (vec![0.0; outputs], vec![0.0; outputs]);
    let mut saved = None;
    for k in 0..100 {
        let force = if k < 50 { 1.0 } else { -2.0 };
        for slave in [&mut here, &mut there] {
            slave.set_inputs(&[force]).unwrap();
            slave.do_step(k as f64 * 0.01, 0.01).unwrap();
        }
        if k == 40 {
            saved = Some((here.get_state().unwrap(), there.get_state().unwrap()));
        }
        here.outputs(&mut a).unwrap();
        there.outputs(&mut b).unwrap();
        assert_eq!(a, b, "step {k}");
    }
    let (mine, theirs) = saved.unwrap();
    here.set_state(&mine).unwrap();
    there.set_state(&theirs).unwrap();
    here.outputs(&mut a).unwrap();
    there.outputs(&mut b).unwrap();
    assert_eq!(a, b, "restored");
    here.free_state(mine).unwrap();
    there.free_state(theirs).unwrap();
}

fn an_isolated_fmu_in_the_tandem_is_set_back_and_carried_as_in_process() {
    use tandem_runtime::tandem::Policy;
    let dir = tempfile::tempdir().unwrap();
    let path = counter::built(dir.path(), "counter", &[]);
    let cases = [
        ("corrections across events", counter::delays_before_events(), 0.7),
        ("a restart past an event", counter::delay_past_an_event(), 0.4),
    ];
    for (case, costs, seconds) in cases {
        let settings = counter::settings(Policy::Correct, seconds);
        let here = counter::run(&Fmu::open(&path).unwrap(), &settings, &costs);
        let isolated = Fmu::open_isolated(&path, host()).unwrap();
        let there = counter::run(&isolated, &settings, &costs);
        // The FMU's states saved, restored, serialized and deserialized in
        // its processes: the same corrections and restarts, the same rows.
        let inner = counter::inner(&there);
        assert_eq!(inner, counter::inner(&here), "{case}");
        assert!(inner[0] + inner[2] > 0, "{case}: {inner:?}");
        assert_eq!(there.sources, here.sources, "{case}");
        assert_eq!(there.rows, here.rows, "{case}");
        counter::assert_on_closed_form(&there, 1e-8, case);
    }
}

fn a_crash_names_the_fmu_the_call_and_the_signal() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open_isolated(built("crash", &dir), host()).unwrap();
    for (how, ending) in [
        (0.0, "killed by signal 11 (SIGSEGV, segmentation fault)"),
        (1.0, "killed by signal 6 (SIGABRT, aborted)"),
        (2.0, "it exited with status 3"),
    ] {
        let mut model = FmuModel::new(&fmu, &Parameters::new().with("how", how)).unwrap();
        let (trace, error) = run(&mut model, 0.01, 1.0);
        // x' = -x until the derivatives crash at t = 0.5 s: the rows
        // before are there, and exact to RK4's error.
        assert_eq!(trace.time.len(), 50, "how = {how}");
        for (t, row) in trace.time.iter().zip(&trace.rows) {
            assert!((row[0] - (-t).exp()).abs() < 1e-9, "x({t}) = {}", row[0]);
        }
        let error = error.expect("the run fails").to_string();
        let expected = format!("FMU \"crash\": its process died during fmi2GetDerivatives: {ending}");
        assert!(error.contains(&expected), "how = {how}: {error}");
        let died = model.take_error();
        assert!(matches!(died, Some(FmuError::Died { .. })), "{died:?}");
        let text = died.unwrap().to_string();
        assert!(text.contains("\n  help: the FMU's own code crashed there"), "{text}");
    }
    // The parent is unharmed: another instance runs.
    let mut model = FmuModel::new(&fmu, &Parameters::new().with("crash_at", 10.0)).unwrap();
    let (trace, error) = run(&mut model, 0.01, 1.0);
    assert!(error.is_none(), "{error:?}");
    assert_eq!(trace.time.len(), 101);
}

fn errors_of_isolated_calls_keep_their_words() {
    let dir = tempfile::tempdir().unwrap();
    let path = built("first_order", &dir);
    let in_process = Fmu::open(&path).unwrap();
    let isolated = Fmu::open_isolated(&path, host()).unwrap();
    // The model is defined for u >= 0: a negative input is refused with
    // fmi2Error and a logged message.
    let mut messages = Vec::new();
    for fmu in [&in_process, &isolated] {
        let mut model = FmuModel::new(fmu, &Parameters::new()).unwrap();
        let settings = FixedStep {
            solver: Method::Rk4.into(),
            step: 0.01,
            stop: 1.0,
        };
        let mut sim = Simulation::new(&mut model, settings).unwrap();
        sim.set_inputs(&[-1.0]);
        let error = sim.run(&mut Trace::default(), &mut |_| {}).unwrap_err().to_string();
        messages.push(error);
    }
    assert!(
        messages[0].contains("fmi2SetReal (variable \"u\") returned Error: logStatusError: input u = -1 is negative"),
        "{}",
        messages[0]
    );
    assert_eq!(messages[1], messages[0]);
    // A parameter the FMU does not have is refused before any call.
    let unknown = FmuModel::new(&isolated, &Parameters::new().with("tau2", 1.0))
        .err()
        .unwrap();
    assert!(matches!(unknown, FmuError::UnknownVariable { .. }), "{unknown}");
}

fn a_binary_that_does_not_load_in_the_child_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let variant = fmus::Variant {
        defines: &["NEEDS_SYMBOL=_Py_NoneStruct"],
        ..fmus::Variant::default()
    };
    let path = fmus::build_variant("bouncing_ball", &dir.path().join("python.fmu"), variant);
    // Opening does not load the binary here; instantiating loads it there.
    let fmu = Fmu::open_isolated(&path, host()).unwrap();
    let error = FmuModel::new(&fmu, &Parameters::new()).err().unwrap();
    assert!(matches!(error, FmuError::Isolated { .. }), "{error}");
    let text = error.to_string();
    assert!(
        text.contains("cannot load \"binaries/linux64/bouncing_ball.so\": dlopen failed: ")
            && text.contains("undefined symbol: _Py_NoneStruct")
            && text.contains("help: the binary needs the Python library"),
        "{text}"
    );
}

fn a_helper_that_does_not_start_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = Host {
        program: dir.path().join("no-such-helper"),
        args: vec![HOST_ARGUMENT.into()],
    };
    let fmu = Fmu::open_isolated(built("bouncing_ball", &dir), missing).unwrap();
    let error = FmuModel::new(&fmu, &Parameters::new()).err().unwrap();
    let text = error.to_string();
    assert!(
        text.starts_with("FMU \"bouncing_ball\": cannot run it in a process of its own: cannot start ")
            && text.contains("no-such-helper: No such file or directory"),
        "{text}"
    );
    // A program that exits at once instead of serving.
    let quitter = Host {
        program: "/bin/true".into(),
        args: Vec::new(),
    };
    let fmu = Fmu::open_isolated(built("bouncing_ball", &dir), quitter).unwrap();
    let text = FmuModel::new(&fmu, &Parameters::new()).err().unwrap().to_string();
    assert!(
        text.starts_with(
            "FMU \"bouncing_ball\": its process died during loading and instantiating the FMU: it exited with status 0"
        ),
        "{text}"
    );
}
