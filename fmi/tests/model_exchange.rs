//! Model Exchange FMUs as Tandem models: inputs, time events, failed FMI
//! calls reported as non-finite values naming FMU, call and variable, and
//! FMUs that allow one instance per process.

#[path = "support/fmus.rs"]
mod fmus;

use std::path::PathBuf;

use tandem_fmi::{Fmu, FmuError, FmuModel, InstanceLimit, Parameters, Status};
use tandem_models::{MajorStep, Model};
use tandem_runtime::record::Trace;
use tandem_runtime::{EventSettings, FixedStep, Method, SimError, Simulation, Solver};

fn built(name: &str, dir: &tempfile::TempDir) -> PathBuf {
    fmus::build(name, dir.path())
}

fn run(model: &mut FmuModel, solver: Solver, step: f64, stop: f64, inputs: &[f64]) -> Result<Trace, SimError> {
    let settings = FixedStep { solver, step, stop };
    let events = EventSettings {
        record: true,
        ..EventSettings::default()
    };
    let mut trace = Trace::default();
    let mut sim = Simulation::new(model, settings)?.with_events(events);
    sim.set_inputs(inputs);
    sim.run(&mut trace, &mut |_| {})?;
    Ok(trace)
}

#[test]
fn an_input_drives_the_first_order_lag_as_its_closed_form_says() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("first_order", &dir)).unwrap();
    let mut model = FmuModel::new(&fmu, &Parameters::new().with("x0", 0.5).with("tau", 0.25)).unwrap();
    let layout = model.layout();
    assert_eq!(layout.states, ["x"]);
    assert_eq!(layout.inputs.len(), 1);
    assert_eq!((layout.inputs[0].name.as_str(), layout.inputs[0].default), ("u", 1.0));
    // der(x) depends on x (and u).
    assert_eq!(model.sparsity(), Some(vec![vec![0]]));
    let trace = run(&mut model, Method::Rk4.into(), 0.01, 1.0, &[2.0]).unwrap();
    // RK4's error on x' = -x / 0.25 with h = 0.01: (h / tau)^5 / 120 of
    // the distance to u per step, about 1.3e-9, decaying.
    for (&t, row) in trace.time.iter().zip(&trace.rows) {
        let exact = 2.0 + (0.5 - 2.0) * (-t / 0.25).exp();
        assert!((row[0] - exact).abs() < 5e-8, "x({t}) = {} against {exact}", row[0]);
    }
}

#[test]
fn a_time_event_is_located_exactly_between_grid_points() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("step_response", &dir)).unwrap();
    for solver in [
        Method::Rk4.into(),
        Solver::Bdf {
            rtol: 1e-10,
            atol: 1e-12,
        },
    ] {
        let mut model = FmuModel::new(&fmu, &Parameters::new()).unwrap();
        // 0.007 s does not divide the step time 0.5 s.
        let trace = run(&mut model, solver, 0.007, 1.4, &[]).unwrap();
        let events: Vec<f64> = (1..trace.time.len())
            .filter(|&i| trace.time[i] == trace.time[i - 1])
            .map(|i| trace.time[i])
            .collect();
        assert_eq!(events.len(), 1, "{solver}: one event: {events:?}");
        assert!(
            (events[0] - 0.5).abs() < 1e-11,
            "{solver}: the step is at {}",
            events[0]
        );
        for (&t, row) in trace.time.iter().zip(&trace.rows) {
            let exact = if t <= 0.5 { 0.0 } else { 1.0 - (-(t - 0.5) / 0.2).exp() };
            // RK4 with h / tau = 0.035: about 4e-10 per step.
            assert!(
                (row[0] - exact).abs() < 1e-8,
                "{solver}: x({t}) = {} against {exact}",
                row[0]
            );
        }
    }
}

/// An FMU's request to end the simulation (Stair at t = 9) is a
/// normal end at that time, as the standard and FMPy have it, not a
/// failure.
#[test]
fn a_request_to_terminate_ends_the_run_normally_there() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("step_response", &dir)).unwrap();
    let mut model = FmuModel::new(&fmu, &Parameters::new().with("end_time", 0.8)).unwrap();
    let settings = FixedStep {
        solver: Method::Rk4.into(),
        step: 0.007,
        stop: 1.4,
    };
    let mut trace = Trace::default();
    let summary = Simulation::new(&mut model, settings)
        .unwrap()
        .run(&mut trace, &mut |_| {})
        .unwrap();
    // The time event at 0.8 is located between grid points; the run ends
    // with the step that holds it, the last row the grid point before.
    let end = summary.finished.unwrap();
    assert!((end - 0.8).abs() < 1e-9, "ended at {end}");
    let last = *trace.time.last().unwrap();
    assert!(last <= 0.8 && last > 0.8 - 0.007, "last row at {last}");
    assert_eq!(model.terminated(), summary.finished);
    assert!(model.take_error().is_none());
    assert!(
        model
            .log()
            .iter()
            .any(|l| l.ends_with("end_time reached: the model is valid up to end_time only")),
        "{:?}",
        model.log()
    );
}

#[test]
fn an_error_status_names_the_fmu_the_call_and_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("first_order", &dir)).unwrap();
    let mut model = FmuModel::new(&fmu, &Parameters::new()).unwrap();
    let e = run(&mut model, Method::Rk4.into(), 0.01, 1.0, &[-1.0]).unwrap_err();
    let SimError::NonFinite(non_finite) = &e else {
        panic!("not a non-finite value: {e}");
    };
    assert!(non_finite.value.is_nan());
    assert_eq!(non_finite.time, 0.0);
    let place = &non_finite.place;
    assert!(
        place.starts_with("FMU \"first_order\": fmi2SetReal (variable \"u\") returned Error"),
        "{place}"
    );
    assert!(place.contains("input u = -1 is negative"), "{place}");
    assert!(!place.contains("help:"), "{place}");
    let kept = model.take_error().expect("the error is kept");
    match &kept {
        FmuError::Call {
            call,
            status,
            variables,
            ..
        } => {
            assert_eq!(
                (*call, *status, variables.as_slice()),
                ("fmi2SetReal", Status::Error, &["u".to_string()][..])
            );
        }
        other => panic!("not a call error: {other}"),
    }
    assert!(kept.to_string().contains("help:"), "{kept}");
    // The instance is unusable after Error: later calls are refused, not made.
    let mut y = [0.0];
    let later = model
        .major_outputs(&mut MajorStep {
            t: 0.1,
            x: &mut [0.0],
            xd: &mut [],
            u: &[1.0],
            hits: &[],
            y: &mut y,
        })
        .unwrap_err();
    assert!(y[0].is_nan());
    assert!(
        later
            .place
            .contains("fmi2SetTime not called: the instance is unusable since fmi2SetReal returned Error"),
        "{}",
        later.place
    );
}

/// The first-order FMU declaring canBeInstantiatedOnlyOncePerProcess.
fn once_per_process(dir: &tempfile::TempDir) -> PathBuf {
    let xml = fmus::description("first_order").replace(
        "completedIntegratorStepNotNeeded=\"true\"",
        "completedIntegratorStepNotNeeded=\"true\" canBeInstantiatedOnlyOncePerProcess=\"true\"",
    );
    let variant = fmus::Variant {
        description: Some(&xml),
        ..fmus::Variant::default()
    };
    fmus::build_variant("first_order", &dir.path().join("once.fmu"), variant)
}

#[test]
fn a_once_per_process_fmu_refuses_a_second_instance_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(once_per_process(&dir)).unwrap();
    let model = FmuModel::new(&fmu, &Parameters::new()).unwrap();
    assert_eq!(model.instances_allowed(), InstanceLimit::OncePerProcess);
    let e = model.try_fork().err().expect("a second instance is refused");
    assert!(matches!(e, FmuError::OncePerProcess { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("canBeInstantiatedOnlyOncePerProcess") && text.contains("help: run it with a single instance"),
        "{text}"
    );
    // Model::fork cannot fail: its model reports the reason at once.
    let mut fork = model.fork();
    let (mut x, mut y) = ([0.0], [0.0]);
    let mut xd = vec![0.0; fork.layout().discrete];
    fork.initial_state(&mut x, &mut xd);
    assert!(x[0].is_nan());
    let report = fork
        .major_outputs(&mut MajorStep {
            t: 0.0,
            x: &mut x,
            xd: &mut xd,
            u: &[1.0],
            hits: &[],
            y: &mut y,
        })
        .unwrap_err();
    assert!(y[0].is_nan());
    assert!(
        report
            .place
            .starts_with("FMU \"first_order\" can be instantiated only once per process"),
        "{}",
        report.place
    );
    // Once the first instance is gone, another may be made.
    drop(model);
    assert!(FmuModel::new(&fmu, &Parameters::new()).is_ok());
}

#[test]
fn an_fmu_without_once_per_process_forks_freely() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("first_order", &dir)).unwrap();
    let model = FmuModel::new(&fmu, &Parameters::new()).unwrap();
    assert_eq!(model.instances_allowed(), InstanceLimit::Unlimited);
    let forks: Vec<FmuModel> = (0..3).map(|_| model.try_fork().unwrap()).collect();
    assert_eq!(forks.len(), 3);
}

#[test]
fn parameters_are_checked_by_name_and_type() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("first_order", &dir)).unwrap();
    let e = FmuModel::new(&fmu, &Parameters::new().with("tua", 1.0)).err().unwrap();
    let text = e.to_string();
    assert!(
        text.contains("FMU \"first_order\" has no variable \"tua\"; did you mean \"tau\""),
        "{text}"
    );
    let e = FmuModel::new(&fmu, &Parameters::new().with("tau", true)).err().unwrap();
    let text = e.to_string();
    assert!(
        text.contains("variable \"tau\" is of type Real/Float64, not Boolean"),
        "{text}"
    );
    let e = FmuModel::new(&fmu, &Parameters::new().with("x", 1.0)).err().unwrap();
    let text = e.to_string();
    assert!(
        text.contains("variable \"x\" cannot be set: its causality is \"output\""),
        "{text}"
    );
}

#[test]
fn an_interface_the_fmu_lacks_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("oscillator", &dir)).unwrap();
    let e = FmuModel::new(&fmu, &Parameters::new()).err().unwrap();
    let text = e.to_string();
    assert!(
        text.contains("FMU \"oscillator\" has no Model Exchange interface (it has Co-Simulation)")
            && text.contains("help: run it as a co-simulation slave"),
        "{text}"
    );
}
