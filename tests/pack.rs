//! The battery pack (`pack-N`) as a user runs it: eight cells under a
//! discharge and regeneration profile, in a run on the virtual clock,
//! against SciPy's Radau IIA on the same equations written again in Python
//! (`tests/data/pack_reference.py`, its output stored in
//! `tests/data/pack8_scipy.csv`); and the shipped example at 400 cells
//! (2000 states) on sparse factors, its BMS frames on the bus; and forty
//! cells at constant current against CVODE with KLU.

mod common;

use common::{root, scratch, tandem_ok, Table};
use tandem_models::plants::pack::Pack;
use tandem_models::Model;
use tandem_runtime::linalg::LinearSolver;
use tandem_runtime::{Bdf, BdfOptions, ModelOde, Tolerance};

/// The profile `tests/data/pack_reference.py` solves under.
const CURRENT: &str = "[[0, 0], [0.5, 0], [0.6, 300], [3, 300], [3.1, -120], [4.5, -120], [4.6, 0]]";

/// Writes `name`.toml: eight cells under the profile, at the reference's
/// tolerances, with `implicit` added to the implicit thread's section,
/// recording `name`.csv.
fn write_pack8(dir: &std::path::Path, name: &str, implicit: &str) {
    std::fs::write(
        dir.join(format!("{name}.toml")),
        format!(
            r#"model = "pack-8"
frame = "1ms"
duration = "6.001s"
policy = "correct"
[implicit]
rtol = 1e-9
atol = 1e-10
{implicit}
[inputs.points]
current = {CURRENT}
[record]
file = "{name}.csv"
"#
        ),
    )
    .unwrap();
}

#[test]
fn eight_cells_follow_scipys_radau_solution() {
    let dir = scratch("pack8");
    write_pack8(&dir, "pack8", "");
    let out = tandem_ok(&dir, &["run", "pack8.toml", "--virtual-clock", "--results", "."]);
    assert!(out.contains("pack-8: 6001 frames"), "{out}");
    let run = Table::read(&dir.join("pack8.csv"));
    let reference = Table::read(&root().join("tests/data/pack8_scipy.csv"));
    let times = run.column("time");
    // Each output within its bound of the reference at every 0.1 s (the
    // reference holds the current over each frame as the run does; a
    // current followed along its ramps instead would put the pack voltage
    // 0.027 V off at the end of a ramp, by the fast RC pair).
    for (name, bound) in [
        ("pack_voltage", 1e-7),
        ("soc", 1e-8),
        ("cell_voltage_min", 1e-8),
        ("cell_voltage_max", 1e-8),
        ("cell_temp_min", 1e-8),
        ("cell_temp_max", 1e-8),
    ] {
        let (got, want) = (run.column(name), reference.column(name));
        let mut worst: f64 = 0.0;
        for (t, w) in reference.column("time").iter().zip(&want) {
            let k = times
                .iter()
                .position(|s| (s - t).abs() < 1e-9)
                .expect("a frame at each reference time");
            worst = worst.max((got[k] - w).abs());
        }
        println!("{name}: largest difference {worst:.3e} (bound {bound:e})");
        assert!(worst < bound, "{name}: {worst} from SciPy's");
    }
    // The profile did something: it drained the cells and warmed them.
    let last = reference.rows.last().unwrap();
    assert!(last[2] < 79.8 && last[6] > 25.5, "{last:?}");
}

#[test]
fn forty_cells_at_constant_current_match_cvode_with_klu() {
    // tests/data/pack40_cvode_klu.csv: the state at t = 600 s under 100 A
    // and coolant at 25 °C from SUNDIALS CVODE 6.4 (BDF, KLU, the analytic
    // sparse Jacobian), `target/cvode_sparse_harness PACK 40 1e-10 1e-12 1`
    // (bench/cvode/sparse.c, built by bench/cvode/build.sh); at tolerances
    // ten times tighter it moves by 1.1e-10 relative at most.
    let reference = Table::read(&root().join("tests/data/pack40_cvode_klu.csv")).column("value");
    let mut pack = Pack::new(40);
    let n = reference.len();
    let mut y0 = vec![0.0; n];
    pack.initial_state(&mut y0, &mut []);
    let options = BdfOptions {
        rtol: 1e-10,
        atol: Tolerance::Scalar(1e-12),
        linear_solver: LinearSolver::Sparse,
        ..BdfOptions::default()
    };
    let mut bdf = Bdf::new(n, options, pack.sparsity()).unwrap();
    let mut system = ModelOde {
        model: &mut pack,
        xd: &[],
        u: &[100.0, 25.0],
    };
    let mut y = vec![0.0; n];
    bdf.init(&mut system, 0.0, &y0, 600.0);
    bdf.solve_to(&mut system, 600.0, f64::INFINITY, &mut y).unwrap();
    let worst = y
        .iter()
        .zip(&reference)
        .map(|(v, r)| (v - r).abs() / r.abs().max(1e-3))
        .fold(0.0, f64::max);
    println!("largest relative difference from CVODE with KLU: {worst:.2e}");
    assert!(worst < 1e-8, "{worst}");
    // The cells discharged and warmed: 100 A for 600 s of 50 Ah is 1/3 of
    // their charge.
    assert!((y[0] - (0.8 - 1.0 / 3.0 * (1.0 + 0.02 * 0.7f64.sin()).recip())).abs() < 1e-6);
    assert!(y[3] > 30.0, "{}", y[3]);
}

#[test]
fn jacobians_differenced_on_helper_threads_change_no_bit() {
    // Offline: the BDF's Jacobians with one and three helpers.
    let dir = scratch("pack-helpers");
    let sim = |helpers: &str, out: &str| {
        let args = [
            "sim",
            "pack-40",
            "--solver",
            "bdf",
            "--stop",
            "30",
            "--step",
            "0.5",
            "--helpers",
            helpers,
            "--out",
            out,
        ];
        tandem_ok(&dir, &args)
    };
    assert!(!sim("0", "alone.csv").contains("Jacobian differenced"));
    assert!(sim("1", "one.csv").contains("Jacobian differenced on 2 thread(s)"));
    assert!(sim("3", "three.csv").contains("Jacobian differenced on 4 thread(s)"));
    let alone = std::fs::read(dir.join("alone.csv")).unwrap();
    assert!(alone.len() > 1000);
    assert_eq!(std::fs::read(dir.join("one.csv")).unwrap(), alone);
    assert_eq!(std::fs::read(dir.join("three.csv")).unwrap(), alone);
    // In the tandem on the virtual clock: the implicit side's Jacobians and
    // the fast side's iteration matrices, a helper on core 0.
    write_pack8(&dir, "alone", "");
    write_pack8(&dir, "helped", "helper_cores = [0]");
    tandem_ok(&dir, &["run", "alone.toml", "--virtual-clock", "--results", "."]);
    let out = tandem_ok(&dir, &["run", "helped.toml", "--virtual-clock", "--results", "."]);
    assert!(out.contains("Jacobian differenced on 2 threads"), "{out}");
    let alone = std::fs::read(dir.join("alone.csv")).unwrap();
    assert!(alone.len() > 100_000);
    assert_eq!(std::fs::read(dir.join("helped.csv")).unwrap(), alone);
}

#[test]
fn the_example_pack_reports_on_the_bus_on_sparse_factors() {
    let dir = scratch("pack-example");
    let example = root().join("config/examples/pack-can.toml");
    let out = tandem_ok(
        &dir,
        &[
            "run",
            example.to_str().unwrap(),
            "--virtual-clock",
            "--duration",
            "2",
            "--results",
            ".",
        ],
    );
    assert!(out.contains("pack-400: 2000 frames"), "{out}");
    assert!(out.contains("sparse LU, 4398 nonzeros in 2000 columns"), "{out}");
    let log = std::fs::read_to_string(dir.join("pack-can.log")).unwrap();
    let count = |id: &str| log.lines().filter(|l| l.contains(&format!(" {id}#"))).count();
    // BMS_PackStatus every 10 ms, BMS_CellExtremes every 100 ms.
    assert!((199..=201).contains(&count("3A0")), "{}", count("3A0"));
    assert!((19..=21).contains(&count("3A1")), "{}", count("3A1"));
    let table = Table::read(&dir.join("pack-can.csv"));
    let voltage = table.column("pack_voltage");
    // At rest the 400 cells' open-circuit voltage at 80 %: 400 × 3.7312 V.
    assert!((voltage[0] - 400.0 * 3.7312).abs() < 0.01, "{}", voltage[0]);
    // Under 200 A from 1.1 s: the series resistance and the fast RC pair
    // take 400 × 200 A × (1.5 + 1) mΩ ≈ 200 V off at once.
    let last = *voltage.last().unwrap();
    assert!(last < voltage[0] - 150.0 && last > voltage[0] - 260.0, "{last}");
}
