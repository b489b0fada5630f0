//! `tandem-bench stiff`: Tandem's BDF against SUNDIALS CVODE in the same
//! run, on ROBER, HIRES, OREGO and VDPOL at rtol 1e-4, 1e-6 and 1e-8.
//!
//! CVODE runs in a small C harness (`bench/cvode/harness.c`, built by
//! `bench/cvode/build.sh`; `bench/install-tools.sh` installs libsundials-dev)
//! with the same setup: BDF, dense LU, one call to the end
//! time, the analytic Jacobian for ROBER only, atol = 1e-4 rtol for ROBER
//! and HIRES and atol = rtol otherwise. Then the large sparse problems of
//! [`sparse`] against CVODE with KLU.

mod sparse;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::Value;
use tandem_models::plants::testset::{self, TestProblem};
use tandem_models::Model;
use tandem_runtime::{Bdf, BdfOptions, BdfStats, ModelOde, Tolerance};

/// The problems and tolerances of the comparison.
const PROBLEMS: [&str; 4] = ["ROBER", "HIRES", "OREGO", "VDPOL"];
const RTOLS: [f64; 3] = [1e-4, 1e-6, 1e-8];

/// One solver's figures on one case.
struct Figures {
    y: Vec<f64>,
    steps: u64,
    rhs: u64,
    rhs_jacobian: u64,
    jacobians: u64,
    wall: Duration,
}

impl Figures {
    /// The figures of runs that ended in `y` with `stats`, their wall time
    /// the median of `walls`.
    fn of_runs(y: Vec<f64>, stats: &BdfStats, mut walls: Vec<Duration>) -> Figures {
        walls.sort();
        Figures {
            y,
            steps: stats.steps,
            rhs: stats.rhs_evals,
            rhs_jacobian: stats.rhs_evals_jacobian,
            jacobians: stats.jacobian_evals,
            wall: walls[walls.len() / 2],
        }
    }
}

/// The absolute tolerance of the case.
fn atol_for(name: &str, rtol: f64) -> f64 {
    if matches!(name, "ROBER" | "HIRES") {
        1e-4 * rtol
    } else {
        rtol
    }
}

/// Runs the comparison, each case timed as the median of `repeats` runs.
pub fn run(repeats: usize) -> anyhow::Result<()> {
    let harness = build_harness()?;
    println!("Tandem BDF (T) against CVODE 6.4 (C); wall = median of {repeats} runs; nfe excludes nfeLS (difference-Jacobian evaluations), as CVODE counts");
    println!(
        "{:<6} {:>5}  {:>11}  {:>11}  {:>11}  {:>9}  {:>9}  {:>17}  {:>7} {:>7}",
        "case", "rtol", "scd T/C", "nst T/C", "nfe T/C", "nfeLS T/C", "nje T/C", "wall µs T/C", "wall", "nfe"
    );
    let (mut wall_ratios, mut rhs_ratios) = (Vec::new(), Vec::new());
    for name in PROBLEMS {
        for rtol in RTOLS {
            let atol = atol_for(name, rtol);
            let problem = testset::problem(name).context("a test-set problem")?;
            let reference = problem.reference;
            let ours = tandem(&problem, rtol, atol, repeats)?;
            let theirs = cvode(&harness, name, rtol, atol, repeats)?;
            let wall_ratio = ours.wall.as_secs_f64() / theirs.wall.as_secs_f64();
            let rhs_ratio = ours.rhs as f64 / theirs.rhs as f64;
            wall_ratios.push(wall_ratio);
            rhs_ratios.push(rhs_ratio);
            println!(
                "{name:<6} {rtol:>5.0e}  {:>5.2}/{:<5.2}  {:>5}/{:<5}  {:>5}/{:<5}  {:>4}/{:<4}  {:>4}/{:<4}  {:>8.1}/{:<8.1}  {wall_ratio:>7.2} {rhs_ratio:>7.2}",
                testset::significant_digits(&ours.y, reference, atol),
                testset::significant_digits(&theirs.y, reference, atol),
                ours.steps,
                theirs.steps,
                ours.rhs,
                theirs.rhs,
                ours.rhs_jacobian,
                theirs.rhs_jacobian,
                ours.jacobians,
                theirs.jacobians,
                ours.wall.as_secs_f64() * 1e6,
                theirs.wall.as_secs_f64() * 1e6,
            );
        }
    }
    let geomean = |v: &[f64]| (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp();
    println!(
        "geometric mean of the ratios T/C: wall {:.2} (max {:.2}), nfe {:.2} (max {:.2}); goal: wall <= 0.8, nfe <= 1.2",
        geomean(&wall_ratios),
        wall_ratios.iter().cloned().fold(0.0, f64::max),
        geomean(&rhs_ratios),
        rhs_ratios.iter().cloned().fold(0.0, f64::max)
    );
    sparse::run(&harness.with_file_name("cvode_sparse_harness"), repeats)
}

/// Solves one case with Tandem's BDF `repeats` times.
fn tandem(problem: &TestProblem, rtol: f64, atol: f64, repeats: usize) -> anyhow::Result<Figures> {
    let n = problem.layout().states.len();
    let mut walls = Vec::with_capacity(repeats);
    let mut y = vec![0.0; n];
    let mut stats = BdfStats::default();
    for _ in 0..repeats {
        let start = Instant::now();
        let mut model = problem.clone();
        let mut y0 = vec![0.0; n];
        model.initial_state(&mut y0, &mut []);
        let options = BdfOptions {
            rtol,
            atol: Tolerance::Scalar(atol),
            ..BdfOptions::default()
        };
        let mut bdf = Bdf::new(n, options, None)?;
        let mut system = ModelOde {
            model: &mut model,
            xd: &[],
            u: &[],
        };
        bdf.init(&mut system, 0.0, &y0, problem.t_end);
        bdf.solve_to(&mut system, problem.t_end, f64::INFINITY, &mut y)?;
        walls.push(start.elapsed());
        stats = *bdf.stats();
    }
    Ok(Figures::of_runs(y, &stats, walls))
}

/// Builds the CVODE harnesses (`build.sh` writes the sparse one beside the
/// dense one) and returns the dense one's path.
fn build_harness() -> anyhow::Result<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let script = root.join("bench/cvode/build.sh");
    let out = root.join("target/cvode_harness");
    let status = Command::new("sh")
        .arg(&script)
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .status()
        .with_context(|| format!("cannot run {}", script.display()))?;
    if !status.success() {
        bail!(
            "{} failed (it needs a C compiler and libsundials-dev: run bench/install-tools.sh)",
            script.display()
        );
    }
    Ok(out)
}

/// Solves one case with CVODE through the harness.
fn cvode(harness: &Path, name: &str, rtol: f64, atol: f64, repeats: usize) -> anyhow::Result<Figures> {
    let output = Command::new(harness)
        .args([name, &rtol.to_string(), &atol.to_string(), &repeats.to_string()])
        .output()
        .with_context(|| format!("cannot run {}", harness.display()))?;
    if !output.status.success() {
        bail!(
            "CVODE harness failed on {name}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    harness_figures(&output.stdout)
}

/// The figures a harness prints as one JSON line.
fn harness_figures(stdout: &[u8]) -> anyhow::Result<Figures> {
    let v: Value = serde_json::from_slice(stdout).context("the harness prints JSON")?;
    let count = |key: &str| v[key].as_u64().unwrap_or(0);
    Ok(Figures {
        y: v["y"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_f64)
            .collect(),
        steps: count("nst"),
        rhs: count("nfe"),
        rhs_jacobian: count("nfeLS"),
        jacobians: count("nje"),
        wall: Duration::from_secs_f64(v["wall"].as_f64().unwrap_or(f64::NAN)),
    })
}
