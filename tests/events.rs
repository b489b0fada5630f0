//! State and time events against the closed forms of the Modelica notes'
//! models (shared/seeds/003): kinks located exactly, resets from `pre`
//! values, hysteresis against Zeno behaviour, chattering, and discrete
//! rates that events never disturb.

mod common;

use common::{model, simulate, simulate_error, simulate_reporting};
use serde_json::{json, Value};

/// NewtonCoolingDynamic: m c_p T' = h A (T_inf - T), with the ambient
/// temperature falling at 20 K/s from t = 0.5 (a kink between grid points).
fn newton_cooling(step: f64) -> Value {
    model(
        json!([
            {"id": "ambient", "type": "Ramp", "params": {"slope": -20, "start": 0.5, "initial": 298.15}},
            {"id": "difference", "type": "Sum", "params": {"signs": "+-"}},
            {"id": "rate", "type": "Gain", "params": {"gain": 0.7 / 0.12}},
            {"id": "temperature", "type": "Integrator", "params": {"initial": 363.15}},
            {"id": "T", "type": "Output", "params": {"unit": "K"}}
        ]),
        json!([
            {"from": "ambient", "to": "difference.1"},
            {"from": "temperature", "to": ["difference.2", "T"]},
            {"from": "difference", "to": "rate"},
            {"from": "rate", "to": "temperature"}
        ]),
        "rk4",
        step,
        1.0,
    )
}

/// The closed form of NewtonCoolingDynamic.
fn cooling_exact(t: f64) -> f64 {
    let (k, a, b, t0) = (0.7 / 0.12, 298.15, 20.0, 363.15);
    let before = |t: f64| a + (t0 - a) * (-k * t).exp();
    if t <= 0.5 {
        return before(t);
    }
    let s = t - 0.5;
    a - b * s + b / k + (before(0.5) - a - b / k) * (-k * s).exp()
}

#[test]
fn newton_cooling_kink_lands_exactly_at_half_a_second() {
    // 0.0007 s does not divide 0.5 s: the kink falls inside a step.
    let t = simulate("cooling", newton_cooling(0.0007), &["--record-events"]);
    let (time, temperature) = (t.column("time"), t.column("T"));
    let events: Vec<f64> = (1..time.len())
        .filter(|&i| time[i] == time[i - 1])
        .map(|i| time[i])
        .collect();
    assert_eq!(events.len(), 1, "one event: {events:?}");
    assert!((events[0] - 0.5).abs() < 1e-12, "the kink is at {}", events[0]);
    let worst = time
        .iter()
        .zip(&temperature)
        .map(|(&t, &y)| (y - cooling_exact(t)).abs())
        .fold(0.0, f64::max);
    assert!(worst < 1e-8, "largest error {worst} K");
    // Without locating it the kink costs accuracy: the test can tell.
    let t = simulate("cooling_off", newton_cooling(0.0007), &["--events", "off"]);
    let worst_off = t
        .column("time")
        .iter()
        .zip(&t.column("T"))
        .map(|(&t, &y)| (y - cooling_exact(t)).abs())
        .fold(0.0, f64::max);
    assert!(
        worst_off > 100.0 * worst.max(1e-12),
        "with events off the error is only {worst_off}"
    );
}

/// Decay: der(x) = if x >= 0 then -sqrt(x) else 0, from x(0) = 1.
fn decay() -> Value {
    model(
        json!([
            {"id": "x", "type": "Integrator", "params": {"initial": 1.0}},
            {"id": "root", "type": "MathFunction", "params": {"function": "sqrt"}},
            {"id": "negate", "type": "Gain", "params": {"gain": -1}},
            {"id": "zero", "type": "Constant", "params": {"value": 0}},
            {"id": "guard", "type": "Switch", "params": {"criterion": "u2 >= threshold", "threshold": 0}},
            {"id": "y", "type": "Output"}
        ]),
        json!([
            {"from": "x", "to": ["root", "guard.control", "y"]},
            {"from": "root", "to": "negate"},
            {"from": "negate", "to": "guard.1"},
            {"from": "zero", "to": "guard.3"},
            {"from": "guard", "to": "x"}
        ]),
        "rk4",
        0.01,
        3.0,
    )
}

#[test]
fn decay_stays_non_negative_and_reaches_zero_at_two_seconds() {
    let t = simulate("decay", decay(), &[]);
    let (time, x) = (t.column("time"), t.column("y"));
    assert!(
        x.iter().all(|&v| v >= -1e-12),
        "x went below zero: {:?}",
        x.iter().cloned().fold(f64::INFINITY, f64::min)
    );
    for (&t, &v) in time.iter().zip(&x) {
        if t < 1.9 {
            assert!((v - (1.0 - t / 2.0).powi(2)).abs() < 1e-6, "x({t}) = {v}");
        }
    }
    let reached = time.iter().zip(&x).find(|(_, &v)| v <= 1e-12).map(|(&t, _)| t).unwrap();
    assert!((reached - 2.0).abs() <= 0.01 + 1e-9, "x reached 0 at {reached}");
    assert!(x[time.len() - 1] == 0.0 || x[time.len() - 1].abs() < 1e-12);
}

/// WithChatter: der(x) = if x >= 1 then -1 else 1, from x(0) = 2, with the
/// switch's optional hysteresis.
fn with_chatter(hysteresis: Option<f64>) -> Value {
    let mut switch = json!({"id": "sw", "type": "Switch", "params": {"criterion": "u2 >= threshold", "threshold": 1}});
    if let Some(h) = hysteresis {
        switch["hysteresis"] = json!(h);
    }
    model(
        json!([
            {"id": "down", "type": "Constant", "params": {"value": -1}},
            {"id": "up", "type": "Constant", "params": {"value": 1}},
            switch,
            {"id": "x", "type": "Integrator", "params": {"initial": 2.0}},
            {"id": "y", "type": "Output"}
        ]),
        json!([
            {"from": "down", "to": "sw.1"}, {"from": "up", "to": "sw.3"},
            {"from": "x", "to": ["sw.control", "y"]}, {"from": "sw", "to": "x"}
        ]),
        "rk4",
        0.01,
        2.0,
    )
}

#[test]
fn chattering_stops_with_a_diagnostic_naming_block_and_time() {
    let e = simulate_error("chatter", with_chatter(None), &[]);
    assert!(e.contains("chattering: 1000 consecutive events of block \"sw\""), "{e}");
    let time: f64 = e
        .split("at t = ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((time - 1.0).abs() < 1e-6, "stopped at {time}");
    assert!(e.contains("hysteresis") && e.contains("--chatter disable"), "{e}");
}

#[test]
fn hysteresis_keeps_the_chattering_model_in_its_band() {
    let band = 0.01;
    let t = simulate("chatter_hysteresis", with_chatter(Some(band)), &[]);
    for (&t, &v) in t.column("time").iter().zip(&t.column("y")) {
        if t >= 1.0 {
            assert!(
                (1.0 - 1e-9..=1.0 + band + 1e-9).contains(&v),
                "x({t}) = {v} left the band"
            );
        } else {
            assert!((v - (2.0 - t)).abs() < 1e-9);
        }
    }
}

#[test]
fn chattering_can_turn_detection_off_for_the_block_and_go_on() {
    let (t, out) = simulate_reporting("chatter_disable", with_chatter(None), &["--chatter", "disable"]);
    assert!(
        out.contains("events no longer located for chattering block(s) sw"),
        "{out}"
    );
    // Step-granular switching from then on: x stays within a step of 1.
    assert!(t.column("y").iter().skip(101).all(|&v| (v - 1.0).abs() <= 0.01 + 1e-9));
}

/// The notes' StableBouncingBall: when {h < 0, h < -eps}: below -eps the
/// ball stops (v = 0, no gravity), otherwise it bounces; the floor
/// comparison re-arms only above +eps.
fn stable_ball(eps: f64) -> Value {
    model(
        json!([
            {"id": "g", "type": "Constant", "params": {"value": -9.81}},
            {"id": "none", "type": "Constant", "params": {"value": 0}},
            {"id": "gravity", "type": "Switch", "params": {"criterion": "u2 > threshold", "threshold": 0.5}},
            {"id": "velocity", "type": "Integrator", "params": {"initial": 15.0, "reset": "rising", "external_initial": true}},
            {"id": "position", "type": "Integrator", "params": {"initial": 10.0}},
            {"id": "floor", "type": "CompareToConstant", "hysteresis": eps, "params": {"operator": "<", "constant": 0}},
            {"id": "sunk", "type": "CompareToConstant", "params": {"operator": "<", "constant": -eps}},
            {"id": "bounce", "type": "Edge"},
            {"id": "stop", "type": "Edge"},
            {"id": "either", "type": "LogicalOperator", "params": {"operator": "OR"}},
            {"id": "restitution", "type": "Gain", "params": {"gain": -0.8}},
            {"id": "rebound", "type": "Switch", "params": {"criterion": "u2 > threshold", "threshold": 0.5}},
            {"id": "x", "type": "Output"}, {"id": "v", "type": "Output"}
        ]),
        json!([
            {"from": "none", "to": ["gravity.1", "rebound.1"]},
            {"from": "g", "to": "gravity.3"},
            {"from": "sunk", "to": ["gravity.control", "rebound.control", "stop"]},
            {"from": "gravity", "to": "velocity.in"},
            {"from": "velocity", "to": ["position", "restitution", "v"]},
            {"from": "restitution", "to": "rebound.3"},
            {"from": "rebound", "to": "velocity.x0"},
            {"from": "position", "to": ["floor", "sunk", "x"]},
            {"from": "floor", "to": "bounce"},
            {"from": "bounce", "to": "either.1"}, {"from": "stop", "to": "either.2"},
            {"from": "either", "to": "velocity.reset"}
        ]),
        "rk4",
        0.01,
        25.0,
    )
}

#[test]
fn bouncing_ball_with_hysteresis_comes_to_rest_past_its_zeno_time() {
    let eps = 1e-3;
    let t = simulate("stable_ball", stable_ball(eps), &[]);
    let (time, x, v) = (t.column("time"), t.column("x"), t.column("v"));
    assert_eq!(*time.last().unwrap(), 25.0);
    let lowest = x.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(lowest >= -eps - 1e-9, "the ball went down to {lowest}");
    // At rest after the Zeno time: on -eps, not moving.
    for i in 0..time.len() {
        if time[i] > 20.5 {
            assert!(
                (x[i] + eps).abs() < 1e-9 && v[i] == 0.0,
                "at {} x = {}, v = {}",
                time[i],
                x[i],
                v[i]
            );
        }
    }
    // Before resting it bounced as the closed form says (first impact).
    let first = (1..time.len())
        .find(|&i| v[i] > 0.0 && v[i - 1] < 0.0)
        .map(|i| time[i])
        .unwrap();
    assert!(first > 3.6211169879494887 && first - 3.6211169879494887 < 0.01);
}

#[test]
fn discrete_rates_tick_exactly_amid_events_over_a_thousand_seconds() {
    let m = model(
        json!([
            {"id": "fast", "type": "Counter", "sample_time": 0.02},
            {"id": "slow", "type": "Counter", "sample_time": [0.05, 0.01]},
            {"id": "wave", "type": "Sine", "params": {"frequency": 3.3}},
            {"id": "crossing", "type": "HitCrossing"},
            {"id": "x", "type": "Integrator"},
            {"id": "f", "type": "Output"}, {"id": "s", "type": "Output"}, {"id": "c", "type": "Output"}
        ]),
        json!([
            {"from": "fast", "to": "f"}, {"from": "slow", "to": "s"},
            {"from": "wave", "to": ["crossing", "x"]}, {"from": "crossing", "to": "c"}
        ]),
        "rk4",
        0.01,
        1000.0,
    );
    let (t, out) = simulate_reporting("multirate", m, &[]);
    let events: u64 = out
        .split(" events")
        .next()
        .unwrap()
        .rsplit(", ")
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // sin(3.3 t) rises through zero every 2 pi / 3.3 s.
    let rising = (1000.0 * 3.3 / (2.0 * std::f64::consts::PI)).floor() as u64;
    assert!(events >= rising, "only {events} events for {rising} rising crossings");
    let (f, s) = (t.column("f"), t.column("s"));
    for n in 1..f.len() {
        // The counters change exactly at their own ticks, by one.
        let fast_hit = n % 2 == 0;
        let slow_hit = n >= 1 && (n - 1) % 5 == 0 && n > 1;
        assert_eq!(
            f[n] - f[n - 1],
            if fast_hit { 1.0 } else { 0.0 },
            "fast counter at step {n}"
        );
        assert_eq!(
            s[n] - s[n - 1],
            if slow_hit { 1.0 } else { 0.0 },
            "slow counter at step {n}"
        );
    }
    assert_eq!(*f.last().unwrap(), 50000.0);
    assert_eq!(*s.last().unwrap(), 19999.0);
}

#[test]
fn an_enabled_subsystem_runs_from_the_instant_its_enable_turns_on() {
    let sub = json!({"id": "timer", "type": "Subsystem", "params": {"enable": true},
        "blocks": [{"id": "one", "type": "Constant", "params": {"value": 1}}, {"id": "x", "type": "Integrator"}, {"id": "o", "type": "Outport"}],
        "links": [{"from": "one", "to": "x"}, {"from": "x", "to": "o"}]});
    let m = model(
        json!([
            {"id": "clock", "type": "Clock"},
            {"id": "late", "type": "CompareToConstant", "params": {"operator": ">=", "constant": 1.0}},
            sub,
            {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "clock", "to": "late"}, {"from": "late", "to": "timer.enable"}, {"from": "timer.o", "to": "y"}]),
        "rk4",
        0.3,
        3.0,
    );
    let t = simulate("enabled", m, &[]);
    // 1.0 falls between grid points 0.9 and 1.2: the integrator starts there.
    for (&t, &y) in t.column("time").iter().zip(&t.column("y")) {
        let expected = if t < 1.0 { 0.0 } else { t - 1.0 };
        assert!((y - expected).abs() < 1e-12, "y({t}) = {y}, expected {expected}");
    }
}

#[test]
fn a_triggered_subsystem_runs_once_per_edge_at_the_edge() {
    // Rising edges at 0.25, 0.5, 0.75, ... (high for the first half of each period).
    let sub = json!({"id": "sampler", "type": "Subsystem", "params": {"trigger": "rising"},
        "blocks": [
            {"id": "t", "type": "Inport"},
            {"id": "hold", "type": "Gain", "params": {"gain": 1}},
            {"id": "count", "type": "Counter"},
            {"id": "sampled", "type": "Outport"}, {"id": "edges", "type": "Outport"}
        ],
        "links": [{"from": "t", "to": "hold"}, {"from": "hold", "to": "sampled"}, {"from": "count", "to": "edges"}]});
    let m = model(
        json!([
            {"id": "clock", "type": "Clock"},
            {"id": "ticks", "type": "Pulse", "params": {"period": 0.25, "width": 0.5}},
            sub,
            {"id": "at", "type": "Output"}, {"id": "n", "type": "Output"}
        ]),
        json!([
            {"from": "clock", "to": "sampler.t"}, {"from": "ticks", "to": "sampler.trigger"},
            {"from": "sampler.sampled", "to": "at"}, {"from": "sampler.edges", "to": "n"}
        ]),
        "euler",
        0.1,
        2.0,
    );
    let t = simulate("triggered", m, &[]);
    for ((&t, &at), &n) in t.column("time").iter().zip(&t.column("at")).zip(&t.column("n")) {
        let edges = (t / 0.25 + 1e-9).floor();
        let last_edge = if edges >= 1.0 { edges * 0.25 } else { 0.0 };
        // Events are located within 1e-12 s relative (the default bracket).
        assert!(
            (at - last_edge).abs() <= 1e-12 * t.max(1.0),
            "at t = {t} the sample is {at}, the last edge was {last_edge}"
        );
        // The counter shows the edges before the last one (its output at an
        // edge precedes its update).
        assert_eq!(n, (edges - 1.0).max(0.0), "edges counted at t = {t}");
    }
}

#[test]
fn no_event_lets_a_smooth_switch_follow_its_input_without_events() {
    let mut m = decay();
    m["blocks"][4]["no_event"] = json!(true);
    let (t, out) = simulate_reporting("no_event", m, &[]);
    assert!(out.contains(" 0 events"), "{out}");
    // The switch now picks the zero branch within a stage, as Modelica's
    // noEvent does: no NaN, x ends within a step's reach of zero.
    let end = *t.column("y").last().unwrap();
    assert!(end.abs() < 1e-4, "x(3) = {end}");
}
