//! What the tests of exported FMUs share: the FMU binary cargo built, the
//! example models, exporting, Tandem's own runs to compare with, and the
//! FMPy driver.

#![allow(dead_code)] // Each test file uses its own part.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use tandem_config::{fixed_step, Overrides};
use tandem_fmu::{export, ExportReport, FmiVersion};
use tandem_models::ModelRef;
use tandem_runtime::record::Trace;
use tandem_runtime::{FixedStep, Simulation};

/// The cdylib cargo built beside this test binary (in `target/*/deps`).
pub fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    tandem_fmu::library_beside(&exe).unwrap_or_else(|e| panic!("{e}"))
}

/// An example model of `models/examples`.
pub fn example(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../models/examples")
        .join(file)
}

/// This test binary's folder for files, under cargo's `target/tmp`: kept
/// between runs and overwritten by the next.
pub fn scratch() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let stem = exe.file_stem().unwrap().to_string_lossy();
    let binary = stem.split('-').next().unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tandem-fmu").join(binary);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A copy of the example `file` with its solver replaced.
pub fn with_solver(file: &str, solver: &str) -> PathBuf {
    let text = std::fs::read_to_string(example(file)).unwrap();
    let mut model: serde_json::Value = serde_json::from_str(&text).unwrap();
    model["simulation"]["solver"] = solver.into();
    let path = scratch().join(file.replace(".json", &format!("_{solver}.json")));
    std::fs::write(&path, serde_json::to_string_pretty(&model).unwrap()).unwrap();
    path
}

/// The FMU of `version` of the model file `model`, exported once per test
/// binary (packing the unoptimized binary of a debug build takes seconds).
pub fn export_fmu(model: &Path, version: FmiVersion) -> ExportReport {
    static EXPORTED: Mutex<Vec<((PathBuf, FmiVersion), ExportReport)>> = Mutex::new(Vec::new());
    let mut exported = EXPORTED.lock().unwrap_or_else(|e| e.into_inner());
    let key = (model.to_owned(), version);
    if let Some((_, report)) = exported.iter().find(|(k, _)| *k == key) {
        return report.clone();
    }
    let stem = model.file_stem().unwrap().to_string_lossy();
    let out = scratch().join(format!("{stem}_fmi{}.fmu", version.to_string().replace(".0", "")));
    let report = export(
        &ModelRef::File(model.to_owned()),
        &out,
        &library(),
        version,
        &Overrides::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    exported.push((key, report.clone()));
    report
}

/// The model of the file `model`, and the settings `tandem sim` runs it
/// with, to `stop`.
pub fn tandem_model(model: &Path, stop: f64) -> (Box<dyn tandem_models::Model>, FixedStep) {
    let loaded = ModelRef::File(model.to_owned()).load().unwrap();
    let settings = fixed_step(
        &loaded.simulation,
        &Overrides {
            stop: Some(stop),
            ..Overrides::default()
        },
    )
    .unwrap();
    (loaded.model, settings)
}

/// What `tandem sim` records for `model` to `stop`: rows of time and
/// outputs.
pub fn tandem_sim(model: &Path, stop: f64) -> Vec<Vec<f64>> {
    let (model, settings) = tandem_model(model, stop);
    let mut trace = Trace::default();
    Simulation::owning(model, settings)
        .unwrap()
        .run(&mut trace, &mut |_| {})
        .unwrap();
    trace
        .time
        .iter()
        .zip(&trace.rows)
        .map(|(t, y)| std::iter::once(*t).chain(y.iter().copied()).collect())
        .collect()
}

/// Whether FMPy can be imported; says so when not, for the test to skip.
pub fn fmpy_available(test: &str) -> bool {
    let found = Command::new("python3")
        .args(["-c", "import fmpy"])
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        eprintln!("SKIPPED {test}: FMPy is not installed (pip install fmpy)");
    }
    found
}

/// Runs the FMPy driver with `args` and returns what it printed.
pub fn fmpy(args: &[&str]) -> String {
    let driver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fmpy_driver.py");
    let out = Command::new("python3")
        .arg(driver)
        .args(args)
        .output()
        .expect("python3 runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "fmpy_driver.py {args:?} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The numbers of comma-separated rows.
pub fn rows(text: &str) -> Vec<Vec<f64>> {
    text.lines()
        .map(|line| {
            line.split(',')
                .map(|v| v.parse().unwrap_or_else(|_| panic!("{line}")))
                .collect()
        })
        .collect()
}

/// The largest difference between two tables relative to the larger
/// magnitude (at least 1), after checking their shapes agree.
pub fn max_relative_difference(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    assert_eq!(a.len(), b.len(), "row counts");
    let mut worst = 0.0f64;
    for (ra, rb) in a.iter().zip(b) {
        assert_eq!(ra.len(), rb.len(), "column counts");
        for (x, y) in ra.iter().zip(rb) {
            worst = worst.max((x - y).abs() / x.abs().max(y.abs()).max(1.0));
        }
    }
    worst
}

/// Whether two tables hold the same bits.
pub fn identical(a: &[Vec<f64>], b: &[Vec<f64>]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(ra, rb)| ra.len() == rb.len() && ra.iter().zip(rb).all(|(x, y)| x.to_bits() == y.to_bits()))
}
