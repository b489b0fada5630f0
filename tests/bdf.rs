//! `tandem sim --solver bdf`: the implicit integrator end to end.

mod common;

use common::{model, scratch, simulate_error, simulate_example, simulate_reporting, tandem, tandem_ok, Table};
use serde_json::json;

/// Impact instants of the bouncing ball from a run with `--record-events`
/// (event rows come in pairs with equal times, velocity flipping sign).
fn impacts(t: &Table) -> Vec<f64> {
    let (time, v) = (t.column("time"), t.column("v"));
    (1..time.len())
        .filter(|&i| time[i] == time[i - 1] && v[i - 1] < 0.0 && v[i] > 0.0)
        .map(|i| time[i])
        .collect()
}

#[test]
fn bouncing_ball_with_bdf_hits_the_impacts_of_rk4() {
    let rk4 = impacts(&simulate_example("bouncing_ball", &["--record-events", "--stop", "18"]));
    let bdf = impacts(&simulate_example(
        "bouncing_ball",
        &[
            "--record-events",
            "--stop",
            "18",
            "--solver",
            "bdf",
            "--rtol",
            "1e-10",
            "--atol",
            "1e-10",
        ],
    ));
    assert!(rk4.len() >= 8, "{rk4:?}");
    assert_eq!(rk4.len(), bdf.len(), "rk4 {rk4:?}\nbdf {bdf:?}");
    for (k, (a, b)) in rk4.iter().zip(&bdf).enumerate() {
        assert!((a - b).abs() < 1e-8, "impact {}: rk4 {a}, bdf {b}", k + 1);
    }
}

/// x' = -λ (x - sin t) + cos t, x(0) = 0, whose solution is sin t for any
/// λ; with λ = 1e4 an explicit step of 0.01 is far outside stability.
fn stiff_tracker(solver: &str) -> serde_json::Value {
    model(
        json!([
            {"id": "t", "type": "Clock"},
            {"id": "f", "type": "Expression", "params": {"expression": "-10000 * (u1 - sin(u2)) + cos(u2)", "inputs": 2}},
            {"id": "x", "type": "Integrator"},
            {"id": "out", "type": "Output"}
        ]),
        json!([
            {"from": "x", "to": "f.1"}, {"from": "t", "to": "f.2"},
            {"from": "f", "to": "x"}, {"from": "x", "to": "out"}
        ]),
        solver,
        0.01,
        5.0,
    )
}

#[test]
fn a_stiff_diagram_follows_its_exact_solution_with_bdf_and_reports_cvode_counters() {
    let (table, stdout) = simulate_reporting(
        "bdf_stiff",
        stiff_tracker("bdf"),
        &["--rtol", "1e-8", "--atol", "1e-10"],
    );
    let (time, x) = (table.column("time"), table.column("out"));
    assert_eq!(time.len(), 501);
    for (t, x) in time.iter().zip(&x) {
        assert!((x - t.sin()).abs() < 1e-7, "x({t}) = {x}, exact {}", t.sin());
    }
    for name in ["nst", "nfe", "nfeLS", "nje", "nsetups", "nni", "ncfn", "netf"] {
        assert!(stdout.contains(&format!(" {name} ")), "no {name} in:\n{stdout}");
    }
    // The same model is hopeless for RK4 at this step: it blows up.
    let rk4 = common::simulate("bdf_stiff_rk4", stiff_tracker("rk4"), &[]).column("out");
    assert!(rk4[10].abs() > 1e6, "rk4 gave x(0.1) = {}", rk4[10]);
}

#[test]
fn bad_tolerances_name_their_origin() {
    let err = simulate_error("bdf_bad_rtol", stiff_tracker("bdf"), &["--rtol=-1"]);
    assert!(err.contains("--rtol") && err.contains("between 0 and 1"), "{err}");
    let mut m = stiff_tracker("bdf");
    m["simulation"]["atol"] = json!(2.0);
    let err = simulate_error("bdf_bad_atol", m, &[]);
    assert!(err.contains("simulation.atol"), "{err}");
}

#[test]
fn built_in_test_problems_run_by_name() {
    let dir = scratch("bdf_hires");
    let end = "321.8122";
    tandem_ok(
        &dir,
        &[
            "sim", "hires", "--solver", "bdf", "--stop", end, "--step", end, "--rtol", "1e-10", "--atol", "1e-14",
        ],
    );
    let t = Table::read(&dir.join("results/hires.csv"));
    let last = t.rows.last().unwrap();
    let reference = tandem_models::plants::testset::problem("hires").unwrap().reference;
    for (k, r) in reference.iter().enumerate() {
        let y = last[k + 1];
        assert!(((y - r) / r).abs() < 1e-6, "y{} = {y}, reference {r}", k + 1);
    }
    let out = tandem(&dir, &["sim", "robber", "--solver", "bdf"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("built-in models: rober, hires"),
        "{err}"
    );
}
