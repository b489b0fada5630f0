//! Helpers shared by the end-to-end tests: run the `tandem` binary as a
//! user would, and read the CSV it writes.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh scratch directory for one test (unique even when two tests
/// running at once give the same name).
pub fn scratch(name: &str) -> PathBuf {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("tandem-test-{}-{name}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("the temporary directory is writable");
    dir
}

/// Runs `tandem` with `args` in `dir`.
pub fn tandem(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the tandem binary runs")
}

/// Runs `tandem` and expects success; returns stdout.
pub fn tandem_ok(dir: &Path, args: &[&str]) -> String {
    let out = tandem(dir, args);
    assert!(
        out.status.success(),
        "tandem {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A CSV written by `tandem sim`: header and rows of numbers.
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<f64>>,
}

impl Table {
    /// Reads `path`.
    pub fn read(path: &Path) -> Table {
        let mut reader = csv::Reader::from_path(path).expect("the CSV exists");
        let header = reader
            .headers()
            .expect("the CSV has a header")
            .iter()
            .map(str::to_string)
            .collect();
        let rows = reader
            .records()
            .map(|r| {
                r.expect("a CSV row")
                    .iter()
                    .map(|v| v.parse::<f64>().expect("a number"))
                    .collect()
            })
            .collect();
        Table { header, rows }
    }

    /// The values of the column named `name`.
    pub fn column(&self, name: &str) -> Vec<f64> {
        let j = self
            .header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header));
        self.rows.iter().map(|r| r[j]).collect()
    }
}

/// Simulates the example `name` from `models/examples` with extra
/// arguments, and reads its CSV.
pub fn simulate_example(name: &str, extra: &[&str]) -> Table {
    let dir = scratch(name);
    let model = root().join("models/examples").join(format!("{name}.json"));
    let out = dir.join("out.csv");
    let mut args = vec!["sim", model.to_str().unwrap(), "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    tandem_ok(&dir, &args);
    Table::read(&out)
}

/// Writes `model` to a scratch directory and runs `tandem sim` on it with
/// `--out out.csv` and extra `args`; returns the process and the directory.
fn run_model(name: &str, model: &serde_json::Value, args: &[&str]) -> (Output, PathBuf) {
    let dir = scratch(name);
    std::fs::write(dir.join("m.json"), model.to_string()).unwrap();
    let mut all = vec!["sim", "m.json", "--out", "out.csv"];
    all.extend_from_slice(args);
    (tandem(&dir, &all), dir)
}

/// Simulates a model given as JSON with `tandem sim` and extra `args`;
/// returns its CSV and the summary line it printed.
pub fn simulate_reporting(name: &str, model: serde_json::Value, args: &[&str]) -> (Table, String) {
    let (out, dir) = run_model(name, &model, args);
    assert!(
        out.status.success(),
        "{name} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        Table::read(&dir.join("out.csv")),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// Simulates a model given as JSON with `tandem sim` and extra `args`, and
/// returns its CSV.
pub fn simulate(name: &str, model: serde_json::Value, args: &[&str]) -> Table {
    simulate_reporting(name, model, args).0
}

/// Runs `tandem sim` on a model given as JSON, expecting failure; returns
/// stderr.
pub fn simulate_error(name: &str, model: serde_json::Value, args: &[&str]) -> String {
    let (out, _) = run_model(name, &model, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "{name}: expected failure");
    assert!(!stderr.contains("panicked"), "{name} panicked:\n{stderr}");
    stderr
}

/// A model of the given blocks and links with its simulation settings.
pub fn model(
    blocks: serde_json::Value,
    links: serde_json::Value,
    solver: &str,
    step: f64,
    stop: f64,
) -> serde_json::Value {
    serde_json::json!({"blocks": blocks, "links": links, "simulation": {"solver": solver, "step": step, "stop": stop}})
}
