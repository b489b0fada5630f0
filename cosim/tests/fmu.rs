//! FMUs as participants: the project's own Co-Simulation oscillator FMUs
//! (FMI 2 and FMI 3, built from `fmi/tests/fmus/`) as mass 1 of the split
//! two-mass oscillator, against the exact solution.

#[path = "../../fmi/tests/support/fmus.rs"]
mod fmus;

mod common;

use std::path::Path;

use common::*;
use tandem_cosim::{CoSimulationFmu, SubModel, SubModelError};
use tandem_fmi::{Fmu, FmuError, FmuSlave, Parameters};

/// The split oscillator with mass 1 the FMU at `fmu` (stepped by its own
/// doStep, its input F held over each step) and mass 2 the JSON diagram.
fn system(fmu: &Path, step: f64) -> String {
    // The FMI 3 oscillator's force step is moved past the end.
    let parameters = match fmu.file_stem().and_then(|s| s.to_str()) {
        Some("oscillator3") => "m = 1, k = 10, c = 0.01, x0 = 0, v0 = 100, step_time = 2",
        _ => "m = 1, k = 10, c = 0.01, x0 = 0, v0 = 100",
    };
    format!(
        r#"
[master]
step = {step:e}
stop = 1
ordering = "gauss-seidel"

[[model]]
name = "mass1"
source = "{}"
parameters = {{ {parameters} }}

[[model]]
name = "mass2"
source = "mass2.json"
solver = "rk4"
step = {:e}

[[connection]]
from = "mass1.x"
to = "mass2.x1"

[[connection]]
from = "mass1.v"
to = "mass2.v1"

[[connection]]
from = "mass2.F"
to = "mass1.F"
scale = -1
"#,
        fmu.display(),
        step / 8.0,
    )
}

#[test]
fn a_co_simulation_fmu_couples_at_first_order_towards_the_exact_solution() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["oscillator", "oscillator3"] {
        let fmu = fmus::build(name, dir.path());
        let points: Vec<(f64, f64)> = (10..14)
            .map(|k| {
                let h = 2f64.powi(-k);
                let (trace, _) = run(&system(&fmu, h));
                (h, error(&trace, exact("t=1")))
            })
            .collect();
        let s = slope(&points);
        // F is held over each doStep: the coupling error is O(H) (0.19 of
        // speeds up to 100 m/s at H = 2^-13 s).
        assert!((s - 1.0).abs() < 0.25, "{name}: slope {s}, {points:?}");
        assert!(points[3].1 < 0.3, "{name}: {points:?}");
    }
}

#[test]
fn parameters_of_an_fmu_are_checked_by_name_at_their_place() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = fmus::build("oscillator", dir.path());
    let text = system(&fmu, 1e-3).replace("k = 10", "stiffness = 10");
    let message = tandem_cosim::parse(&text, Path::new(ORIGIN)).err().unwrap().to_string();
    assert!(
        message.starts_with("examples/test.toml:10:") && message.contains("model[0].parameters.stiffness"),
        "{message}"
    );
    assert!(message.contains("no variable \"stiffness\""), "{message}");
    let text = system(&fmu, 1e-3).replace(&fmu.display().to_string(), "mass1.json");
    let message = tandem_cosim::parse(&text, Path::new(ORIGIN)).err().unwrap().to_string();
    assert!(
        message.contains("parameters are set by name on FMU sources only"),
        "{message}"
    );
}

#[test]
fn start_values_of_every_type_are_set_from_the_system_file() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = fmus::build("types3", dir.path());
    // A state's start (initial="exact"), inputs of three types, a String
    // parameter: each as TOML writes it.
    let text = format!(
        "[master]\nstep = 0.125\nstop = 1\n\n[[model]]\nname = \"t\"\nsource = \"{}\"\n\
         parameters = {{ x = 2, i8_in = -5, b_in = true, u16_in = 65535, label = \"set\" }}\n",
        fmu.display()
    );
    let system = parse(&text);
    let names = system.output_names();
    let (trace, _) = run(&text);
    let last = |name: &str| {
        let j = names
            .iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("{name} in {names:?}"));
        *trace.column(j).last().unwrap()
    };
    // Every input echoed by its output; scaled[1] = x = x0 e^(-k t), k = 1,
    // to the accuracy of the FMU's own steps.
    assert_eq!(
        (last("t.i8_out"), last("t.b_out"), last("t.u16_out")),
        (-5.0, 1.0, 65535.0)
    );
    let x = last("t.scaled[1]");
    assert!((x - 2.0 * (-1f64).exp()).abs() < 1e-6, "{x}");
    // A value of the wrong kind is refused at its key.
    let wrong = text.replace("b_in = true", "b_in = \"yes\"");
    let message = tandem_cosim::parse(&wrong, Path::new(ORIGIN))
        .err()
        .unwrap()
        .to_string();
    assert!(message.contains("model[0].parameters.b_in"), "{message}");
}

#[test]
fn an_fmu_call_that_fails_is_the_participants_fmu_error() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = Fmu::open(fmus::build("oscillator", dir.path())).unwrap();
    let slave = FmuSlave::new(&fmu, &Parameters::new(), 0.0).unwrap();
    let mut participant = CoSimulationFmu::new(slave).unwrap();
    // One input value more than its one input, F.
    let mut y = vec![0.0; participant.outputs().len()];
    let e = participant.evaluate(&[0.0, 0.0], &mut y).unwrap_err();
    match &e {
        SubModelError::Fmu(error) => assert!(
            matches!(
                **error,
                FmuError::Length {
                    given: 2,
                    expected: 1,
                    ..
                }
            ),
            "{error:?}"
        ),
        other => panic!("not an FMU error: {other:?}"),
    }
    assert!(
        e.to_string()
            .starts_with("FMU \"oscillator\": inputs: 2 values given, 1 expected"),
        "{e}"
    );
}

#[test]
fn the_micro_step_of_a_model_exchange_fmu_is_refused_at_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = fmus::build("first_order", dir.path());
    let text = format!(
        "[master]\nstep = 0.01\nstop = 1\n\n[[model]]\nname = \"lag\"\nsource = \"{}\"\nsolver = \"rk4\"\nstep = 0.003\n",
        fmu.display()
    );
    let message = tandem_cosim::parse(&text, Path::new(ORIGIN)).err().unwrap().to_string();
    assert_eq!(
        message,
        "examples/test.toml:9:8: model[0].step: the micro step 0.003 s does not divide the communication step 0.01 s \
         (every × master.step); give step = 0.01 / n s for a whole n"
    );
}
