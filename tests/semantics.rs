//! Execution semantics of block diagrams, against closed forms: discrete
//! blocks update only at their hits on major steps and hold their outputs
//! through the stages of a Runge–Kutta step; dynamic blocks follow their
//! analytic solutions.

mod common;

use common::{model, simulate};
use serde_json::json;

#[test]
fn counters_in_an_rk4_model_count_once_per_hit() {
    // An integrator makes the solver take four stages per step.
    let m = model(
        json!([
            {"id": "every3", "type": "Counter", "sample_time": 0.03},
            {"id": "offset", "type": "Counter", "sample_time": [0.05, 0.01]},
            {"id": "one", "type": "Constant", "params": {"value": 1}},
            {"id": "x", "type": "Integrator"},
            {"id": "c3", "type": "Output"}, {"id": "c5", "type": "Output"}, {"id": "t", "type": "Output"}
        ]),
        json!([{"from": "every3", "to": "c3"}, {"from": "offset", "to": "c5"}, {"from": "one", "to": "x"}, {"from": "x", "to": "t"}]),
        "rk4",
        0.01,
        30.0,
    );
    let t = simulate("counters", m, &[]);
    let (c3, c5) = (t.column("c3"), t.column("c5"));
    for n in 0..c3.len() {
        // The output changes only at the counter's hits, where it shows the
        // number of earlier hits; it holds between hits.
        assert_eq!(c3[n], (n / 3) as f64, "counter at 0.03 s, step {n}");
        let held = if n < 1 { 0 } else { (n - 1) / 5 };
        assert_eq!(c5[n], held as f64, "counter at 0.05 s offset 0.01 s, step {n}");
    }
}

#[test]
fn held_outputs_stay_constant_through_runge_kutta_stages() {
    // x' = ZOH(sin t) sampled every 0.1 s: the exact solution is the sum of
    // held samples times the time since each sample.
    let m = model(
        json!([
            {"id": "s", "type": "Sine"},
            {"id": "zoh", "type": "ZeroOrderHold", "sample_time": 0.1},
            {"id": "x", "type": "Integrator"},
            {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "s", "to": "zoh"}, {"from": "zoh", "to": "x"}, {"from": "x", "to": "y"}]),
        "rk4",
        0.025,
        5.0,
    );
    let t = simulate("held", m, &[]);
    let (time, y) = (t.column("time"), t.column("y"));
    for (i, (&t, &y)) in time.iter().zip(&y).enumerate() {
        let k = (t / 0.1 + 1e-9).floor() as usize;
        let exact: f64 =
            (0..k).map(|j| 0.1 * (j as f64 * 0.1).sin()).sum::<f64>() + (t - k as f64 * 0.1) * (k as f64 * 0.1).sin();
        assert!((y - exact).abs() < 1e-12, "step {i}: x({t}) = {y}, exact {exact}");
    }
}

#[test]
fn linear_blocks_follow_their_analytic_solutions() {
    // 1/(s+1) and a state-space oscillator driven by a unit step at t = 0.
    let m = model(
        json!([
            {"id": "u", "type": "Constant", "params": {"value": 1}},
            {"id": "lag", "type": "TransferFunction", "params": {"numerator": [1], "denominator": [1, 1]}},
            {"id": "osc", "type": "StateSpace", "params": {"A": [[0, 1], [-4, 0]], "B": [[0], [1]], "C": [[1, 0], [0, 1]], "initial": [1, 0]}},
            {"id": "split", "type": "Demux", "params": {"outputs": 2}},
            {"id": "zero", "type": "Constant", "params": {"value": 0}},
            {"id": "lag_y", "type": "Output"}, {"id": "pos", "type": "Output"}, {"id": "vel", "type": "Output"}
        ]),
        json!([
            {"from": "u", "to": "lag"}, {"from": "lag", "to": "lag_y"},
            {"from": "zero", "to": "osc"}, {"from": "osc", "to": "split"},
            {"from": "split.1", "to": "pos"}, {"from": "split.2", "to": "vel"}
        ]),
        "rk4",
        0.001,
        3.0,
    );
    let t = simulate("linear", m, &[]);
    for (i, &t_i) in t.column("time").iter().enumerate() {
        assert!((t.column("lag_y")[i] - (1.0 - (-t_i).exp())).abs() < 1e-12);
        assert!((t.column("pos")[i] - (2.0 * t_i).cos()).abs() < 1e-11);
        assert!((t.column("vel")[i] + 2.0 * (2.0 * t_i).sin()).abs() < 1e-11);
    }
}

#[test]
fn discrete_blocks_follow_their_recurrences() {
    // y(n) = 0.5 y(n-1) + u(n-1) for a unit step, and forward-Euler integral of 1.
    let m = model(
        json!([
            {"id": "u", "type": "Constant", "params": {"value": 1}},
            {"id": "filter", "type": "DiscreteTransferFunction", "sample_time": 0.1, "params": {"numerator": [1], "denominator": [1, -0.5]}},
            {"id": "sum", "type": "DiscreteIntegrator", "sample_time": 0.1, "params": {"gain": 2}},
            {"id": "f", "type": "Output"}, {"id": "i", "type": "Output"}
        ]),
        json!([{"from": "u", "to": ["filter", "sum"]}, {"from": "filter", "to": "f"}, {"from": "sum", "to": "i"}]),
        "euler",
        0.05,
        2.0,
    );
    let t = simulate("discrete", m, &[]);
    let (f, i) = (t.column("f"), t.column("i"));
    let mut y = 0.0;
    for n in 0..f.len() {
        let k = n / 2;
        // y(k) = 2 (1 - 0.5^k), held between samples.
        y = if n % 2 == 0 {
            2.0 * (1.0 - 0.5f64.powi(k as i32))
        } else {
            y
        };
        assert!((f[n] - y).abs() < 1e-12, "filter at step {n}: {} vs {y}", f[n]);
        assert!((i[n] - 2.0 * 0.1 * k as f64).abs() < 1e-12, "integrator at step {n}");
    }
}

#[test]
fn integrator_limits_hold_the_state_at_the_bound() {
    let m = model(
        json!([
            {"id": "u", "type": "Sine", "params": {"frequency": 1}},
            {"id": "x", "type": "Integrator", "params": {"upper": 0.5, "lower": -0.25}},
            {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "u", "to": "x"}, {"from": "x", "to": "y"}]),
        "rk4",
        0.01,
        10.0,
    );
    let t = simulate("limits", m, &[]);
    let (time, y) = (t.column("time"), t.column("y"));
    assert!(y.iter().all(|&v| (-0.25..=0.5).contains(&v)));
    // 1 - cos t reaches 0.5 at t = pi/3, then the state holds until sin turns negative at t = pi.
    for (&t, &v) in time.iter().zip(&y) {
        if t < std::f64::consts::FRAC_PI_3 - 0.01 {
            assert!((v - (1.0 - t.cos())).abs() < 1e-9);
        } else if t > std::f64::consts::FRAC_PI_3 + 0.01 && t < std::f64::consts::PI {
            assert_eq!(v, 0.5);
        }
    }
}

#[test]
fn nested_subsystems_flatten_and_carry_vectors() {
    let inner = json!({"id": "scale", "type": "Subsystem",
        "blocks": [{"id": "in", "type": "Inport"}, {"id": "k", "type": "Gain", "params": {"gain": [1, 10]}}, {"id": "out", "type": "Outport"}],
        "links": [{"from": "in", "to": "k"}, {"from": "k", "to": "out"}]});
    let outer = json!({"id": "wrap", "type": "Subsystem",
        "blocks": [{"id": "a", "type": "Inport"}, inner, {"id": "b", "type": "Outport"}],
        "links": [{"from": "a", "to": "scale.in"}, {"from": "scale.out", "to": "b"}]});
    let m = model(
        json!([
            {"id": "t", "type": "Clock"}, {"id": "two", "type": "Constant", "params": {"value": 2}},
            {"id": "mux", "type": "Mux"}, outer, {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "t", "to": "mux.1"}, {"from": "two", "to": "mux.2"}, {"from": "mux", "to": "wrap.a"}, {"from": "wrap.b", "to": "y"}]),
        "euler",
        0.5,
        1.0,
    );
    let t = simulate("nested", m, &[]);
    assert_eq!(t.header, vec!["time", "y[0]", "y[1]"]);
    assert_eq!(
        t.rows,
        vec![vec![0.0, 0.0, 20.0], vec![0.5, 0.5, 20.0], vec![1.0, 1.0, 20.0]]
    );
}

#[test]
fn discrete_blocks_hold_their_initial_output_before_an_offset_first_hit() {
    let m = model(
        json!([
            {"id": "u", "type": "Constant", "params": {"value": 7}},
            {"id": "d", "type": "UnitDelay", "sample_time": [0.1, 0.05], "params": {"initial": 3}},
            {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "u", "to": "d"}, {"from": "d", "to": "y"}]),
        "euler",
        0.05,
        0.2,
    );
    let t = simulate("offset_initial", m, &[]);
    // Hits at 0.05 and 0.15: the initial value until the update after the first.
    assert_eq!(t.column("y"), vec![3.0, 3.0, 3.0, 7.0, 7.0]);
}

#[test]
fn a_subsystem_sample_time_applies_to_its_contents() {
    let sub = json!({"id": "slow", "type": "Subsystem", "sample_time": 0.5,
        "blocks": [{"id": "i", "type": "Inport"}, {"id": "k", "type": "Gain", "params": {"gain": 2}}, {"id": "o", "type": "Outport"}],
        "links": [{"from": "i", "to": "k"}, {"from": "k", "to": "o"}]});
    let m = model(
        json!([{"id": "t", "type": "Clock"}, sub, {"id": "y", "type": "Output"}]),
        json!([{"from": "t", "to": "slow.i"}, {"from": "slow.o", "to": "y"}]),
        "euler",
        0.25,
        1.0,
    );
    let t = simulate("subsystem_rate", m, &[]);
    assert_eq!(t.column("y"), vec![0.0, 0.0, 1.0, 1.0, 2.0]);
}

#[test]
fn nested_action_subsystems_run_only_when_every_enclosing_action_is_active() {
    // Outer: active while t < 1 and again from t = 1.5. Inner (inside outer):
    // active from t = 0.5. The inner integrator of 1 therefore runs over
    // [0.5, 1) and [1.5, 2); a disabled subsystem's outputs hold.
    let inner = json!({"id": "inner", "type": "Subsystem", "params": {"action": true},
        "blocks": [{"id": "one", "type": "Constant", "params": {"value": 1}}, {"id": "x", "type": "Integrator"}, {"id": "o", "type": "Outport"}],
        "links": [{"from": "one", "to": "x"}, {"from": "x", "to": "o"}]});
    let outer = json!({"id": "outer", "type": "Subsystem", "params": {"action": true},
        "blocks": [
            {"id": "t", "type": "Inport"},
            {"id": "late", "type": "If", "params": {"conditions": ["u1 >= 0.5"], "else": false}},
            inner,
            {"id": "o", "type": "Outport"}
        ],
        "links": [{"from": "t", "to": "late"}, {"from": "late.if", "to": "inner.action"}, {"from": "inner.o", "to": "o"}]});
    let m = model(
        json!([
            {"id": "clock", "type": "Clock"},
            {"id": "early", "type": "If", "params": {"conditions": ["u1 < 1 || u1 >= 1.5"], "else": false}},
            outer,
            {"id": "y", "type": "Output"}
        ]),
        json!([
            {"from": "clock", "to": ["early", "outer.t"]},
            {"from": "early.if", "to": "outer.action"},
            {"from": "outer.o", "to": "y"}
        ]),
        "euler",
        0.125,
        2.0,
    );
    let t = simulate("nested_action", m, &[]);
    let y = t.column("y");
    let expected = [
        0.0, 0.0, 0.0, 0.0, 0.0, 0.125, 0.25, 0.375, 0.375, 0.375, 0.375, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0,
    ];
    assert_eq!(
        y, expected,
        "the inner integrator must stop while the outer action is off"
    );
}
