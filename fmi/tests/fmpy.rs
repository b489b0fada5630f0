//! The project's own FMUs checked by FMPy, an independent importer: its
//! validator finds no problem in any of them, and it simulates them as
//! Tandem does, compared sample by sample: the bouncing ball (Model
//! Exchange, FMI 2 and 3) integrated by FMPy's CVODE and by Tandem's RK4
//! with its own event location, and the oscillator (Co-Simulation, FMI 2
//! and 3) stepped by FMPy and by [`FmuSlave`].
//!
//! Skipped, with a message, when FMPy is not installed (CI installs it).

#[path = "support/fmus.rs"]
mod fmus;

use std::path::Path;
use std::process::Command;

use tandem_fmi::{Fmu, FmuModel, FmuSlave, Parameters};
use tandem_runtime::record::Trace;
use tandem_runtime::{FixedStep, Method, Simulation};

/// The test FMUs: FMI 2 and 3, Model Exchange and Co-Simulation.
const ALL: [&str; 7] = [
    "bouncing_ball",
    "bouncing_ball3",
    "first_order",
    "step_response",
    "oscillator",
    "oscillator3",
    "counter",
];

/// Runs the Python `script` with `args` and returns what it printed, or
/// `None` (with a message) when FMPy is not installed.
fn python_with_fmpy(script: &str, args: &[&str]) -> Option<String> {
    let out = Command::new("python3").arg("-c").arg(script).args(args).output().ok()?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("No module named 'fmpy'") {
            eprintln!("skipped: FMPy is not installed (pip install fmpy)");
            return None;
        }
        panic!("FMPy failed on {args:?}:\n{stderr}");
    }
    Some(String::from_utf8(out.stdout).unwrap())
}

/// FMPy's `simulate_fmu` of `fmu` to `stop` at `interval`, as rows of
/// time and outputs (printed with repr, which reads back to the same bits).
fn fmpy_simulate(fmu: &Path, stop: f64, interval: f64) -> Option<Vec<Vec<f64>>> {
    let script = "import sys, fmpy\n\
                  r = fmpy.simulate_fmu(sys.argv[1], stop_time=float(sys.argv[2]), output_interval=float(sys.argv[3]))\n\
                  for row in r: print(','.join(repr(float(v)) for v in row))";
    let text = python_with_fmpy(
        script,
        &[fmu.to_str().unwrap(), &stop.to_string(), &interval.to_string()],
    )?;
    Some(
        text.lines()
            .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
            .collect(),
    )
}

#[test]
fn fmpy_finds_no_problem_in_any_test_fmu_and_loads_every_binary() {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<String> = ALL
        .iter()
        .map(|name| fmus::build(name, dir.path()).to_str().unwrap().to_string())
        .collect();
    // The validator checks the description against the schema, variable
    // names, the model structure, start values, causality and variability,
    // and units. Loading the binary resolves every function of the
    // interface (FMI 2) or of the API (FMI 3), and fails on a missing one.
    let script = "\
import sys, shutil, fmpy
from fmpy.validation import validate_fmu
for path in sys.argv[1:]:
    for problem in validate_fmu(path):
        print('problem', path, problem)
    unzipdir = fmpy.extract(path)
    fmu = fmpy.instantiate_fmu(unzipdir, fmpy.read_model_description(path, validate=False))
    fmu.freeInstance()
    shutil.rmtree(unzipdir, ignore_errors=True)
    print('checked', path)
";
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let Some(text) = python_with_fmpy(script, &args) else {
        return;
    };
    let problems: Vec<&str> = text.lines().filter(|l| l.starts_with("problem ")).collect();
    assert!(problems.is_empty(), "FMPy's validator:\n{}", problems.join("\n"));
    let checked: Vec<&str> = text.lines().filter_map(|l| l.strip_prefix("checked ")).collect();
    assert_eq!(checked, args, "{text}");
}

#[test]
fn fmpy_and_tandem_integrate_the_model_exchange_ball_alike() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["bouncing_ball", "bouncing_ball3"] {
        let path = fmus::build(name, dir.path());
        let Some(theirs) = fmpy_simulate(&path, 2.0, 0.01) else {
            return;
        };
        let fmu = Fmu::open(&path).unwrap();
        let mut model = FmuModel::new(&fmu, &Parameters::new()).unwrap();
        let settings = FixedStep {
            solver: Method::Rk4.into(),
            step: 0.01,
            stop: 2.0,
        };
        let mut ours = Trace::default();
        Simulation::new(&mut model, settings)
            .unwrap()
            .run(&mut ours, &mut |_| {})
            .unwrap();
        // FMPy records an event's instant twice (before and after); the
        // grid rows are compared.
        let grid: Vec<&Vec<f64>> = theirs
            .iter()
            .filter(|r| (r[0] / 0.01 - (r[0] / 0.01).round()).abs() < 1e-9)
            .collect();
        let mut compared = 0;
        for (t, row) in ours.time.iter().zip(&ours.rows) {
            let Some(their) = grid.iter().find(|r| (r[0] - t).abs() < 1e-9) else {
                continue;
            };
            // CVODE at the default experiment's tolerance 1e-8.
            for (a, b) in row.iter().zip(&their[1..]) {
                assert!(
                    (a - b).abs() < 1e-5,
                    "{name} at t = {t}: Tandem {row:?}, FMPy {their:?}"
                );
            }
            compared += 1;
        }
        assert!(compared >= 195, "{name}: {compared} rows compared");
    }
}

#[test]
fn fmpy_and_tandem_step_the_co_simulation_oscillator_to_the_same_bits() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["oscillator", "oscillator3"] {
        let path = fmus::build(name, dir.path());
        let (stop, h) = (2.0, 0.004);
        let Some(theirs) = fmpy_simulate(&path, stop, h) else {
            return;
        };
        let fmu = Fmu::open(&path).unwrap();
        let mut slave = FmuSlave::new(&fmu, &Parameters::new(), 0.0).unwrap();
        let mut y = vec![0.0; slave.output_variables().len()];
        let steps = (stop / h).round() as usize;
        assert_eq!(theirs.len(), steps + 1, "{name}");
        // FMPy's communication points are the grid n h (from start time
        // 0), and its step from one to the next is their difference, which
        // is not always h to the last bit (0.036 + 0.004 != 0.04): the FMU then
        // ends its step at another time. Tandem's slave is stepped alike.
        let point = |n: usize| n as f64 * h;
        for (n, their) in theirs.iter().enumerate() {
            assert_eq!(their[0], point(n), "{name}: FMPy's row {n}");
            slave.outputs(&mut y).unwrap();
            assert_eq!(y, their[1..], "{name} at t = {}", their[0]);
            if n < steps {
                slave.do_step(point(n), point(n + 1) - point(n)).unwrap();
            }
        }
    }
}
