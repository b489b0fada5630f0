//! Co-Simulation FMUs (FMI 2.0 and 3.0) as slaves: stepped against the
//! closed form of a damped oscillator (the FMUs integrate by RK4 with
//! internal steps of 1 ms), rolled back through saved states, and their
//! errors.

#[path = "support/fmus.rs"]
mod fmus;

use std::path::PathBuf;

use tandem_fmi::{Fmu, FmuError, FmuSlave, Parameters};

/// The oscillators' parameters: m x'' + c x' + k x = F.
const M: f64 = 1.0;
const K: f64 = 4.0 * std::f64::consts::PI * std::f64::consts::PI;
const C: f64 = 0.4;

/// Position and velocity after `t` seconds from (x0, v0) under a constant
/// force `f`: the closed form of the underdamped oscillator about its
/// equilibrium f / k.
fn free(x0: f64, v0: f64, f: f64, t: f64) -> (f64, f64) {
    let alpha = C / (2.0 * M);
    let omega0_sq = K / M;
    let omega = (omega0_sq - alpha * alpha).sqrt();
    let y0 = x0 - f / K;
    let (a, b) = (y0, (v0 + alpha * y0) / omega);
    let (s, c) = (omega * t).sin_cos();
    let decay = (-alpha * t).exp();
    let y = decay * (a * c + b * s);
    let v = decay * ((-alpha * a + omega * b) * c + (-alpha * b - omega * a) * s);
    (y + f / K, v)
}

/// The exact response from (1, 0) to a force `f0` that becomes `f1` at `t1`.
fn exact(f0: f64, f1: f64, t1: f64, t: f64) -> (f64, f64) {
    if t <= t1 {
        return free(1.0, 0.0, f0, t);
    }
    let (x1, v1) = free(1.0, 0.0, f0, t1);
    free(x1, v1, f1, t - t1)
}

fn built(name: &str, dir: &tempfile::TempDir) -> PathBuf {
    fmus::build(name, dir.path())
}

/// A variant of `name` whose description has `from` replaced by `to`.
fn edited(name: &str, dir: &tempfile::TempDir, from: &str, to: &str) -> PathBuf {
    let xml = fmus::description(name);
    assert!(xml.contains(from), "{name}'s description has no {from}");
    let xml = xml.replace(from, to);
    let variant = fmus::Variant {
        description: Some(&xml),
        ..fmus::Variant::default()
    };
    fmus::build_variant(name, &dir.path().join(format!("{name}-edited.fmu")), variant)
}

/// Steps `slave` from 0 to `stop` by `h`, with the input force `force(t)`,
/// comparing its outputs with `truth` after each step.
fn step_and_compare(
    slave: &mut FmuSlave,
    h: f64,
    stop: f64,
    force: impl Fn(f64) -> f64,
    truth: impl Fn(f64) -> (f64, f64),
) {
    let mut y = [0.0; 2];
    let steps = (stop / h).round() as usize;
    let mut worst: f64 = 0.0;
    for n in 0..steps {
        let t = n as f64 * h;
        slave.set_inputs(&[force(t)]).unwrap();
        slave.do_step(t, h).unwrap();
        slave.outputs(&mut y).unwrap();
        let (x, v) = truth(t + h);
        worst = worst
            .max((y[0] - x).abs())
            .max((y[1] - v).abs() / (2.0 * std::f64::consts::PI));
    }
    // RK4's local error with 1 ms steps is about (2π · 1e-3)^5 / 120 ≈ 1e-13
    // of the amplitude; a few thousand steps stay far below 1e-9.
    assert!(worst < 1e-9, "largest error {worst}");
}

#[test]
fn fmi2_oscillator_steps_to_the_closed_form_with_an_input_force() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("oscillator", &dir)).unwrap();
    let mut slave = FmuSlave::new(&fmu, &Parameters::new(), 0.0).unwrap();
    let inputs: Vec<_> = slave.input_variables().iter().map(|v| v.name.as_str()).collect();
    assert_eq!(inputs, ["F"]);
    let outputs: Vec<_> = slave
        .output_variables()
        .iter()
        .map(|v| (v.name.as_str(), v.unit.as_deref()))
        .collect();
    assert_eq!(outputs, [("x", Some("m")), ("v", Some("m/s"))]);
    // The force goes from 0 to 5 N at t = 1 s.
    step_and_compare(
        &mut slave,
        0.01,
        3.0,
        |t| if t < 1.0 - 1e-9 { 0.0 } else { 5.0 },
        |t| exact(0.0, 5.0, 1.0, t),
    );
}

#[test]
fn fmi3_oscillator_handles_its_force_step_inside_a_communication_step() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("oscillator3", &dir)).unwrap();
    let mut slave = FmuSlave::new(&fmu, &Parameters::new().with("step_force", 8.0), 0.0).unwrap();
    // 0.03 s steps: the step at 0.5 s falls inside the one from 0.48 s.
    step_and_compare(&mut slave, 0.03, 3.0, |_| 0.0, |t| exact(0.0, 8.0, 0.5, t));
}

#[test]
fn a_saved_state_takes_the_slave_back_to_repeat_steps_exactly() {
    for name in ["oscillator", "oscillator3"] {
        let dir = tempfile::tempdir().unwrap();
        let fmu = Fmu::open(built(name, &dir)).unwrap();
        let mut slave = FmuSlave::new(&fmu, &Parameters::new(), 0.0).unwrap();
        assert!(slave.can_roll_back());
        let h = 0.05;
        for n in 0..20 {
            slave.do_step(n as f64 * h, h).unwrap();
        }
        let mut saved = slave.get_state().unwrap();
        let mut first = Vec::new();
        for n in 20..40 {
            slave.do_step(n as f64 * h, h).unwrap();
            let mut y = [0.0; 2];
            slave.outputs(&mut y).unwrap();
            first.push(y);
        }
        // Back to t = 1 s: the same steps give the same outputs, bit for bit.
        slave.set_state(&saved).unwrap();
        for (k, n) in (20..40).enumerate() {
            slave.do_step(n as f64 * h, h).unwrap();
            let mut y = [0.0; 2];
            slave.outputs(&mut y).unwrap();
            assert_eq!(y, first[k], "{name}: step {n}");
        }
        // Saving again reuses the state's memory; the old point is gone.
        slave.save_state(&mut saved).unwrap();
        slave.do_step(40.0 * h, h).unwrap();
        slave.set_state(&saved).unwrap();
        slave.do_step(40.0 * h, h).unwrap();
        slave.free_state(saved).unwrap();
    }
}

#[test]
fn a_state_is_restored_only_into_the_slave_that_saved_it() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("oscillator", &dir)).unwrap();
    let mut a = FmuSlave::new(&fmu, &Parameters::new(), 0.0).unwrap();
    let mut b = FmuSlave::new(&fmu, &Parameters::new(), 0.0).unwrap();
    let state = a.get_state().unwrap();
    let text = b.set_state(&state).unwrap_err().to_string();
    assert!(text.contains("the state given was saved by another instance"), "{text}");
    a.free_state(state).unwrap();
}

#[test]
fn an_fmu_without_state_saving_says_it_cannot_roll_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = edited(
        "oscillator",
        &dir,
        "canGetAndSetFMUstate=\"true\"",
        "canGetAndSetFMUstate=\"false\"",
    );
    let fmu = Fmu::open(path).unwrap();
    let mut slave = FmuSlave::new(&fmu, &Parameters::new(), 0.0).unwrap();
    assert!(!slave.can_roll_back());
    let e = slave.get_state().unwrap_err();
    assert!(matches!(e, FmuError::CannotRollBack { .. }), "{e}");
    let text = e.to_string();
    assert!(
        text.contains("FMU \"oscillator\" cannot roll back: it does not declare canGetAndSetFMUstate")
            && text.contains("help: step it only forwards"),
        "{text}"
    );
}

#[test]
fn a_fixed_step_fmu_refuses_another_step_length() {
    let dir = tempfile::tempdir().unwrap();
    let path = edited(
        "oscillator",
        &dir,
        "canHandleVariableCommunicationStepSize=\"true\"",
        "canHandleVariableCommunicationStepSize=\"false\"",
    );
    let fmu = Fmu::open(path).unwrap();
    let mut slave = FmuSlave::new(&fmu, &Parameters::new(), 0.0).unwrap();
    slave.do_step(0.0, 0.01).unwrap();
    slave.do_step(0.01, 0.01).unwrap();
    let text = slave.do_step(0.02, 0.02).unwrap_err().to_string();
    assert!(
        text.contains("cannot change its communication step")
            && text.contains("the first step was 0.01 s, this one 0.02 s"),
        "{text}"
    );
}

#[test]
fn an_error_in_do_step_quotes_the_fmus_log() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("oscillator", &dir)).unwrap();
    let mut slave = FmuSlave::new(&fmu, &Parameters::new(), 0.0).unwrap();
    // The FMU is at t = 0: a step from t = 1 is refused.
    let e = slave.do_step(1.0, 0.1).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("FMU \"oscillator\": fmi2DoStep returned Error: logStatusError: fmi2DoStep from t = 1, but the FMU is at t = 0"),
        "{text}"
    );
    assert_eq!(slave.log().len(), 1);
    // The instance is unusable from there on.
    let text = slave.outputs(&mut [0.0; 2]).unwrap_err().to_string();
    assert!(
        text.contains("fmi2GetReal not called: the instance is unusable since fmi2DoStep returned Error"),
        "{text}"
    );
}

#[test]
fn slices_of_the_wrong_length_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("oscillator3", &dir)).unwrap();
    let mut slave = FmuSlave::new(&fmu, &Parameters::new(), 0.0).unwrap();
    let text = slave.set_inputs(&[1.0, 2.0]).unwrap_err().to_string();
    assert!(
        text.contains("FMU \"oscillator3\": inputs: 2 values given, 1 expected"),
        "{text}"
    );
    let text = slave.outputs(&mut [0.0; 3]).unwrap_err().to_string();
    assert!(text.contains("outputs: 3 values given, 2 expected"), "{text}");
}

#[test]
fn a_model_exchange_only_fmu_is_no_slave() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("bouncing_ball3", &dir)).unwrap();
    let text = FmuSlave::new(&fmu, &Parameters::new(), 0.0).err().unwrap().to_string();
    assert!(
        text.contains("FMU \"bouncing_ball3\" has no Co-Simulation interface (it has Model Exchange)"),
        "{text}"
    );
}

#[test]
fn a_step_that_is_not_positive_and_finite_is_refused_before_the_fmu_sees_it() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(built("oscillator", &dir)).unwrap();
    let mut slave = FmuSlave::new(&fmu, &Parameters::new(), 0.0).unwrap();
    for (t, h) in [(0.0, 0.0), (0.0, -1e-3), (0.0, f64::NAN), (f64::INFINITY, 1e-3)] {
        let message = slave.do_step(t, h).unwrap_err().to_string();
        assert!(
            message.contains("cannot step from t = ") && message.contains("positive, finite"),
            "{message}"
        );
    }
    // The FMU is untouched: a good step still works.
    slave.do_step(0.0, 1e-3).unwrap();
}
