//! The bouncing ball FMUs (FMI 2.0 and 3.0 Model Exchange) run by Tandem's
//! simulation: the impacts Tandem locates from the FMU's event indicator
//! against the closed form, with RK4 and with the BDF.

#[path = "support/fmus.rs"]
mod fmus;

use tandem_fmi::{Fmu, FmuModel, Parameters};
use tandem_models::{MajorStep, Model};
use tandem_runtime::record::Trace;
use tandem_runtime::{EventSettings, FixedStep, Method, Simulation, Solver};

const G: f64 = 9.81;
const H0: f64 = 1.0;

/// The closed-form impact times of a ball dropped from `H0` with
/// restitution `e`: t1 = sqrt(2 h0 / g), then each flight lasts 2 e^k v1 / g.
fn closed_form_impacts(e: f64, until: f64) -> Vec<f64> {
    let t1 = (2.0 * H0 / G).sqrt();
    let v1 = G * t1;
    let mut impacts = vec![t1];
    let mut speed = v1;
    loop {
        speed *= e;
        let next = impacts[impacts.len() - 1] + 2.0 * speed / G;
        if next > until {
            return impacts;
        }
        impacts.push(next);
    }
}

/// The closed-form height at `t` (impacts as above).
fn closed_form_height(e: f64, t: f64) -> f64 {
    let impacts = closed_form_impacts(e, t);
    let last = impacts.iter().rev().find(|&&ti| ti <= t);
    match last {
        None => H0 - 0.5 * G * t * t,
        Some(&ti) => {
            let k = impacts.iter().position(|&x| x == ti).unwrap_or(0) as i32 + 1;
            let v = G * (2.0 * H0 / G).sqrt() * e.powi(k);
            let s = t - ti;
            v * s - 0.5 * G * s * s
        }
    }
}

/// Runs the FMU `name` with `solver` and returns the impact times (event
/// rows in pairs of equal time with the velocity turning from falling to
/// rising) and the trace.
fn impacts(name: &str, solver: Solver, e: f64, stop: f64) -> (Vec<f64>, Trace) {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(fmus::build(name, dir.path())).unwrap();
    let mut model = FmuModel::new(&fmu, &Parameters::new().with("e", e)).unwrap();
    let settings = FixedStep {
        solver,
        step: 0.01,
        stop,
    };
    let events = EventSettings {
        record: true,
        ..EventSettings::default()
    };
    let mut trace = Trace::default();
    Simulation::new(&mut model, settings)
        .unwrap()
        .with_events(events)
        .run(&mut trace, &mut |_| {})
        .unwrap();
    assert!(model.take_error().is_none());
    let v = trace.column(1);
    let found = (1..trace.time.len())
        .filter(|&i| trace.time[i] == trace.time[i - 1] && v[i - 1] < 0.0 && v[i] > 0.0)
        .map(|i| trace.time[i])
        .collect();
    (found, trace)
}

fn check(name: &str, solver: Solver, e: f64, stop: f64) {
    let (found, trace) = impacts(name, solver, e, stop);
    let expected = closed_form_impacts(e, stop);
    assert!(expected.len() >= 5, "{expected:?}");
    assert_eq!(
        found.len(),
        expected.len(),
        "{name} {solver}: found {found:?}\nexpected {expected:?}"
    );
    for (k, (a, b)) in found.iter().zip(&expected).enumerate() {
        assert!(
            (a - b).abs() < 1e-9,
            "{name} {solver}: impact {}: {a} against {b}",
            k + 1
        );
    }
    for (&t, row) in trace.time.iter().zip(&trace.rows) {
        let exact = closed_form_height(e, t);
        assert!(
            (row[0] - exact).abs() < 1e-8,
            "{name} {solver}: h({t}) = {} against {exact}",
            row[0]
        );
    }
}

const BDF: Solver = Solver::Bdf {
    rtol: 1e-12,
    atol: 1e-12,
};

#[test]
fn fmi2_ball_impacts_match_the_closed_form_with_rk4() {
    check("bouncing_ball", Method::Rk4.into(), 0.7, 2.2);
}

#[test]
fn fmi2_ball_impacts_match_the_closed_form_with_bdf() {
    check("bouncing_ball", BDF, 0.7, 2.2);
}

#[test]
fn fmi3_ball_impacts_match_the_closed_form_with_rk4() {
    check("bouncing_ball3", Method::Rk4.into(), 0.7, 2.2);
}

#[test]
fn fmi3_ball_impacts_match_the_closed_form_with_bdf() {
    check("bouncing_ball3", BDF, 0.7, 2.2);
}

#[test]
fn a_parameter_set_by_name_changes_the_bounces() {
    check("bouncing_ball", Method::Rk4.into(), 0.8, 3.5);
}

#[test]
fn the_layout_names_states_outputs_and_zero_crossings() {
    for (name, version) in [("bouncing_ball", "FMI 2.0"), ("bouncing_ball3", "FMI 3.0")] {
        let dir = tempfile::tempdir().unwrap();
        let fmu = Fmu::open(fmus::build(name, dir.path())).unwrap();
        assert_eq!(fmu.description().version.to_string(), version);
        let model = FmuModel::new(&fmu, &Parameters::new()).unwrap();
        let layout = model.layout();
        assert_eq!(layout.states, ["h", "v"]);
        assert!(layout.inputs.is_empty());
        let outputs: Vec<_> = layout.outputs.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(outputs, ["h", "v"]);
        // The unit and range of h come from its declared type.
        assert_eq!(layout.outputs[0].unit.as_deref(), Some("m"));
        assert_eq!(layout.outputs[0].range, Some((-0.5, 2.0)));
        assert_eq!(layout.outputs[1].unit.as_deref(), Some("m/s"));
        assert_eq!(
            layout.zero_crossings,
            [format!("{name}#indicator 0"), format!("{name}#time event")]
        );
        // The indicator's mode and the next time event (none: infinite).
        assert_eq!((layout.discrete, layout.modes.as_slice()), (2, &[0][..]));
        let (mut x, mut xd) = ([0.0; 2], [0.0; 2]);
        model.fork().initial_state(&mut x, &mut xd);
        assert_eq!(xd, [1.0, f64::INFINITY], "in flight, no time event");
        // der(h) depends on v only, der(v) on nothing.
        assert_eq!(model.sparsity(), Some(vec![vec![], vec![0]]));
    }
}

#[test]
fn forked_instances_run_independently() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(fmus::build("bouncing_ball", dir.path())).unwrap();
    let mut model = FmuModel::new(&fmu, &Parameters::new()).unwrap();
    let mut fork = model.fork();
    let (mut x, mut xd) = ([0.0; 2], [0.0; 2]);
    model.initial_state(&mut x, &mut xd);
    assert_eq!(x, [1.0, 0.0]);
    // Move the original on; the fork still starts from the top.
    model.update(&mut MajorStep {
        t: 0.3,
        x: &mut [0.5, -2.0],
        xd: &mut xd,
        u: &[],
        hits: &[],
        y: &mut [],
    });
    let mut y = [0.0; 2];
    fork.initial_state(&mut x, &mut xd);
    fork.major_outputs(&mut MajorStep {
        t: 0.0,
        x: &mut x,
        xd: &mut xd,
        u: &[],
        hits: &[],
        y: &mut y,
    })
    .unwrap();
    assert_eq!(y, [1.0, 0.0]);
}
