//! Algebraic loops torn and solved by Newton (`"algebraic_loops": "solve"`).

mod common;

use common::{model, scratch, simulate, simulate_error, tandem_ok};
use serde_json::json;

/// y = sin t - k y, a linear loop through a Sum and a Gain: y = sin t / (1 + k).
fn linear_loop(policy: Option<&str>) -> serde_json::Value {
    let mut m = model(
        json!([
            {"id": "u", "type": "Sine"},
            {"id": "sum", "type": "Sum", "params": {"signs": "+-"}},
            {"id": "k", "type": "Gain", "params": {"gain": 3.0}},
            {"id": "y", "type": "Output"}
        ]),
        json!([
            {"from": "u", "to": "sum.1"}, {"from": "sum", "to": ["k", "y"]}, {"from": "k", "to": "sum.2"}
        ]),
        "rk4",
        0.01,
        2.0,
    );
    if let Some(p) = policy {
        m["algebraic_loops"] = json!(p);
    }
    m
}

#[test]
fn a_linear_loop_is_solved_exactly() {
    let t = simulate("loop_linear", linear_loop(Some("solve")), &[]);
    for (t, y) in t.column("time").iter().zip(t.column("y")) {
        assert!((y - t.sin() / 4.0).abs() < 1e-12, "y({t}) = {y}");
    }
}

#[test]
fn a_nonlinear_loop_feeding_a_state_is_solved_at_every_stage() {
    // y = u - y^3 with u = 1 + t, integrated: x' = y. The loop's solution
    // at each t is the real root of y^3 + y - u = 0.
    let m = json!({
        "algebraic_loops": "solve",
        "blocks": [
            {"id": "u", "type": "Ramp", "params": {"slope": 1.0, "initial": 1.0}},
            {"id": "f", "type": "Expression", "params": {"expression": "u1 - u2^3", "inputs": 2}},
            {"id": "x", "type": "Integrator"},
            {"id": "y", "type": "Output"},
            {"id": "xo", "type": "Output"}
        ],
        "links": [
            {"from": "u", "to": "f.1"}, {"from": "f", "to": ["f.2", "x", "y"]}, {"from": "x", "to": "xo"}
        ],
        "simulation": {"solver": "rk4", "step": 0.01, "stop": 1.0}
    });
    let t = simulate("loop_cubic", m, &[]);
    let root = |u: f64| {
        // Cardano for y^3 + y - u = 0 (one real root).
        let d = (u * u / 4.0 + 1.0 / 27.0).sqrt();
        (u / 2.0 + d).cbrt() + (u / 2.0 - d).cbrt()
    };
    let (time, y, x) = (t.column("time"), t.column("y"), t.column("xo"));
    for i in 0..time.len() {
        assert!((y[i] - root(1.0 + time[i])).abs() < 1e-10, "y({}) = {}", time[i], y[i]);
    }
    // x(1) = ∫ root(1 + s) ds over [0, 1], by Simpson on a fine grid.
    let n = 2000;
    let h = 1.0 / n as f64;
    let integral: f64 = (0..=n)
        .map(|k| {
            let w = if k == 0 || k == n {
                1.0
            } else if k % 2 == 1 {
                4.0
            } else {
                2.0
            };
            w * root(1.0 + k as f64 * h)
        })
        .sum::<f64>()
        * h
        / 3.0;
    assert!(
        (x.last().unwrap() - integral).abs() < 1e-9,
        "x(1) = {}, exact {integral}",
        x.last().unwrap()
    );
}

#[test]
fn a_loop_without_solution_stops_naming_the_loop() {
    // y = 1 + y has no solution.
    let m = json!({
        "algebraic_loops": "solve",
        "blocks": [
            {"id": "one", "type": "Constant", "params": {"value": 1.0}},
            {"id": "s", "type": "Sum", "params": {"signs": "++"}},
            {"id": "y", "type": "Output"}
        ],
        "links": [{"from": "one", "to": "s.1"}, {"from": "s", "to": ["s.2", "y"]}],
        "simulation": {"solver": "rk4", "step": 0.01, "stop": 1.0}
    });
    let err = simulate_error("loop_none", m, &[]);
    assert!(
        err.contains("algebraic loop through s") && err.contains("did not converge"),
        "{err}"
    );
}

#[test]
fn without_the_option_loops_are_errors_and_check_reports_solved_ones() {
    let err = simulate_error("loop_refused", linear_loop(None), &[]);
    assert!(err.contains("algebraic loop") && err.contains("sum"), "{err}");
    let dir = scratch("loop_check");
    std::fs::write(dir.join("m.json"), linear_loop(Some("solve")).to_string()).unwrap();
    let out = tandem_ok(&dir, &["check", "m.json"]);
    assert!(
        out.contains("algebraic loops solved by Newton") && out.contains("through sum, k (torn at sum.2)"),
        "{out}"
    );
}
