//! Events in the tandem on the virtual clock, against closed forms: the
//! bouncing ball's impacts under every policy with late implicit results
//! injected, a thermostat's relay with hysteresis, the ball at rest (Zeno:
//! infinitely many impacts in finite time), sides that see an event in
//! different frames, and frame arithmetic at the end of a day.

mod support;

use std::path::PathBuf;

use serde_json::Value;
use tandem_models::diagram::{self, compile_str};
use tandem_models::Model;
use tandem_runtime::tandem::inputs::Profile;
use tandem_runtime::tandem::metrics::FrameSource::{CatchUp, Fast, Implicit};
use tandem_runtime::tandem::virtual_clock::VirtualCosts;
use tandem_runtime::tandem::{FastMethod, ImplicitSolver, Policy, TandemSettings};
use tandem_runtime::{Method, WMethod};

use support::{costs, run, run_from, Run, MS};

const POLICIES: [Policy; 3] = [Policy::Explicit, Policy::Correct, Policy::Select];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The example bouncing ball: `models/examples/bouncing_ball.json`.
fn ball() -> Box<dyn Model> {
    Box::new(
        diagram::load(&root().join("models/examples/bouncing_ball.json"))
            .unwrap()
            .model,
    )
}

/// No inputs to drive.
fn no_inputs() -> Box<Profile> {
    Box::new(Profile::new(Vec::new()))
}

/// 1 ms frames of `method` under `policy` for `seconds`, the implicit side
/// the BDF at tolerances tight enough to be as exact as the fast side.
fn settings(policy: Policy, method: FastMethod, seconds: f64) -> TandemSettings {
    let mut s = TandemSettings::new(1e-3, seconds);
    s.policy = policy;
    s.fast.method = method;
    s.implicit.solver = ImplicitSolver::Bdf;
    s.implicit.rtol = 1e-12;
    s.implicit.atol = 1e-12;
    s
}

/// The ball's parameters and impact times as `tests/data/bouncing_ball.json`
/// gives them (closed forms of the CBD paper's ball).
struct BallReference {
    g: f64,
    e: f64,
    x0: f64,
    v0: f64,
    impacts: Vec<f64>,
}

fn reference() -> BallReference {
    let text = std::fs::read_to_string(root().join("tests/data/bouncing_ball.json")).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let p = |k: &str| v["parameters"][k].as_f64().unwrap();
    BallReference {
        g: p("g"),
        e: p("e"),
        x0: p("x0"),
        v0: p("v0"),
        impacts: v["impact_times"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_f64().unwrap())
            .collect(),
    }
}

impl BallReference {
    /// Height and velocity at `t`, in closed form.
    fn at(&self, t: f64) -> (f64, f64) {
        let (mut t0, mut x, mut v) = (0.0, self.x0, self.v0);
        loop {
            let impact = t0 + (v + (v * v + 2.0 * self.g * x).sqrt()) / self.g;
            if t <= impact {
                let s = t - t0;
                return (x + v * s - self.g * s * s / 2.0, v - self.g * s);
            }
            v = -self.e * (v - self.g * (impact - t0));
            (t0, x) = (impact, 0.0);
        }
    }
}

/// Frames whose velocity jumped up (a bounce) since the frame before.
fn bounces(r: &Run) -> usize {
    r.rows.windows(2).filter(|w| w[1][1] - w[0][1] > 1.0).count()
}

#[test]
fn the_ball_bounces_on_its_closed_form_under_every_policy_with_late_results() {
    let reference = reference();
    let mut costs = costs();
    // Results late around each impact: the first of them is re-integrated
    // across the impact (catch-up), or not taken in time (select).
    costs.implicit_delays = reference.impacts[..3]
        .iter()
        .map(|&t| ((t * 1e3) as i64 * MS - 2 * MS, 2_500_000))
        .collect();
    for method in [
        FastMethod::Explicit(Method::Rk4),
        FastMethod::LinearlyImplicit(WMethod::Ros34pw2),
    ] {
        for policy in POLICIES {
            let r = run(ball().as_ref(), &settings(policy, method, 12.0), &costs, no_inputs());
            assert_eq!(r.failure, None);
            // Heights within 1e-9 m on every frame put each impact, after
            // which the ball leaves at 16 m/s or more, within 1e-10 s.
            for (k, row) in r.rows.iter().enumerate() {
                let t = k as f64 * 1e-3;
                let (x, v) = reference.at(t);
                assert!(
                    (row[0] - x).abs() < 1e-9 && (row[1] - v).abs() < 1e-8,
                    "{method} under {policy}, t = {t}: ({}, {}) vs ({x}, {v})",
                    row[0],
                    row[1]
                );
            }
            // Impacts at 3.62, 6.97, 9.65 and 11.79 s.
            assert_eq!(bounces(&r), 4, "{method} under {policy}");
            let m = &r.tandem.metrics;
            assert_eq!(m.fast_events.located.get(), 4, "{method} under {policy}");
            assert_eq!(m.fast_events.deferred.get(), 0);
            assert_eq!(m.disagreements.get() + m.event_resyncs.get(), 0);
            match policy {
                Policy::Correct => {
                    assert_eq!(m.implicit_events.located.get(), 4);
                    assert!(r.sources.contains(&CatchUp), "{method}: the delays make catch-ups");
                }
                Policy::Select => assert!(m.implicit_late.get() >= 3),
                Policy::Explicit => assert!(r.sources.iter().all(|&s| s == Fast)),
            }
        }
    }
}

#[test]
fn the_ball_bounces_on_its_closed_form_through_stalls_around_its_impacts() {
    let reference = reference();
    // The process stops for 60 ms from 10 ms before each of the first three
    // impacts (the impact falls in frames computed after their slots
    // passed), and for 30 ms right after the fourth.
    let mut costs = costs();
    costs.stalls = reference.impacts[..3]
        .iter()
        .map(|&t| ((t * 1e3) as i64 * MS - 10 * MS + 250_000, 60 * MS))
        .collect();
    costs
        .stalls
        .push(((reference.impacts[3] * 1e3) as i64 * MS + 2 * MS, 30 * MS));
    for method in [
        FastMethod::Explicit(Method::Rk4),
        FastMethod::LinearlyImplicit(WMethod::Ros34pw2),
    ] {
        for policy in POLICIES {
            let r = run(ball().as_ref(), &settings(policy, method, 12.0), &costs, no_inputs());
            assert_eq!(r.failure, None);
            assert_eq!(r.rows.len(), 12_000, "{method} under {policy}: every frame recorded");
            for (k, row) in r.rows.iter().enumerate() {
                let t = k as f64 * 1e-3;
                let (x, v) = reference.at(t);
                assert!(
                    (row[0] - x).abs() < 1e-9 && (row[1] - v).abs() < 1e-8,
                    "{method} under {policy}, t = {t} ({:?}): ({}, {}) vs ({x}, {v})",
                    r.sources[k],
                    row[0],
                    row[1]
                );
            }
            assert_eq!(bounces(&r), 4, "{method} under {policy}");
            let m = &r.tandem.metrics;
            assert_eq!(m.fast_events.located.get(), 4, "{method} under {policy}");
            assert_eq!(m.stalls.snapshot().count, 4, "{method} under {policy}");
            assert_eq!(m.outputs_clamped.get() + m.unusable(), 0);
        }
    }
}

/// A thermostat: `T' = (10 - T) + 20 h` (°C, s), the heater `h` on below
/// 19 °C and off again only above 21 °C (a relay with 2 K hysteresis),
/// from 25 °C. The heater's switching times are recorded as they are
/// located.
fn thermostat() -> Box<dyn Model> {
    let text = r#"{"blocks": [
        {"id": "ambient", "type": "Constant", "params": {"value": 10}},
        {"id": "balance", "type": "Expression", "params": {"inputs": 3, "expression": "u1 - u2 + 20 * u3"}},
        {"id": "T", "type": "Integrator", "params": {"initial": 25}},
        {"id": "heater", "type": "CompareToConstant", "hysteresis": 2, "params": {"operator": "<", "constant": 19}},
        {"id": "clock", "type": "Clock"},
        {"id": "switched_at", "type": "Integrator",
         "params": {"reset": "either", "external_initial": true}},
        {"id": "hold", "type": "Constant", "params": {"value": 0}},
        {"id": "temperature", "type": "Output"},
        {"id": "on", "type": "Output"},
        {"id": "last_switch", "type": "Output"}],
      "links": [
        {"from": "ambient", "to": "balance.1"},
        {"from": "T", "to": ["balance.2", "heater", "temperature"]},
        {"from": "heater", "to": ["balance.3", "on", "switched_at.reset"]},
        {"from": "balance", "to": "T"},
        {"from": "clock", "to": "switched_at.x0"},
        {"from": "hold", "to": "switched_at.in"},
        {"from": "switched_at", "to": "last_switch"}]}"#;
    Box::new(compile_str(text).unwrap().model)
}

/// The thermostat's switching times in closed form up to `end`: cooling
/// from 25 toward 10 reaches 19 at ln(15/9); then heating from 19 toward
/// 30 reaches 21, and cooling from 21 reaches 19, each in ln(11/9).
fn switching_times(end: f64) -> Vec<f64> {
    let first = (15.0f64 / 9.0).ln();
    let half = (11.0f64 / 9.0).ln();
    (0..)
        .map(|n| first + n as f64 * half)
        .take_while(|&t| t < end)
        .collect()
}

/// The thermostat's temperature at `t` in closed form.
fn temperature(t: f64) -> f64 {
    let times = switching_times(t);
    let Some(&last) = times.last() else {
        return 10.0 + 15.0 * (-t).exp();
    };
    let s = t - last;
    if times.len() % 2 == 1 {
        30.0 - 11.0 * (-s).exp()
    } else {
        10.0 + 11.0 * (-s).exp()
    }
}

#[test]
fn a_relay_with_hysteresis_switches_at_its_closed_form_times_under_every_policy() {
    let exact = switching_times(3.0);
    for policy in POLICIES {
        let method = FastMethod::Explicit(Method::Rk4);
        let r = run(
            thermostat().as_ref(),
            &settings(policy, method, 3.0),
            &costs(),
            no_inputs(),
        );
        assert_eq!(r.failure, None);
        // Each switching time as the model captured it at the event.
        let mut located: Vec<f64> = r.rows.iter().map(|row| row[2]).filter(|&t| t > 0.0).collect();
        located.dedup();
        assert_eq!(located.len(), exact.len(), "{policy}: {located:?}");
        for (a, b) in located.iter().zip(&exact) {
            assert!((a - b).abs() < 1e-9, "{policy}: switched at {a}, exactly at {b}");
        }
        for (k, row) in r.rows.iter().enumerate() {
            let t = k as f64 * 1e-3;
            assert!(
                (row[0] - temperature(t)).abs() < 1e-8,
                "{policy}, t = {t}: {} vs {}",
                row[0],
                temperature(t)
            );
        }
        let m = &r.tandem.metrics;
        assert_eq!(
            m.fast_events.located.get(),
            exact.len() as u64,
            "{policy}: no chattering"
        );
        assert_eq!(m.fast_events.deferred.get(), 0);
    }
}

#[test]
fn a_ball_coming_to_rest_bounds_its_events_per_frame_and_never_stalls() {
    // Past the Zeno time (20.358 s) the impacts come infinitely often.
    let zeno = 20.357636989404728;
    for policy in POLICIES {
        let mut s = settings(policy, FastMethod::Explicit(Method::Rk4), 22.0);
        s.implicit.rtol = 1e-8;
        s.implicit.atol = 1e-10;
        let r = run(ball().as_ref(), &s, &costs(), no_inputs());
        assert_eq!(r.failure, None, "{policy}");
        assert_eq!(r.rows.len(), 22_000, "{policy}: every frame ran");
        let m = &r.tandem.metrics;
        // At most max_per_frame events per frame; the rest at the frame
        // boundary, counted. The virtual clock charges each extra step, so
        // a frame's cost shows its events: bounded, and no frame missed.
        assert!(m.fast_events.deferred.get() > 0, "{policy}: none deferred");
        let per_frame = f64::from(s.events.max_per_frame);
        let fast_step = costs().fast_step as f64;
        let catchup = s.max_catchup as f64;
        let bound = fast_step * ((1.0 + catchup) * (1.0 + per_frame));
        assert!(
            m.compute.snapshot().max <= bound,
            "{policy}: {}",
            m.compute.snapshot().max
        );
        assert_eq!(m.missed(), 0, "{policy}");
        if policy != Policy::Explicit {
            assert!(m.implicit_events.deferred.get() > 0, "{policy}");
        }
        // At rest, the ball stays on the floor.
        for (k, row) in r.rows.iter().enumerate().skip((zeno * 1e3) as usize + 100) {
            assert!(
                row[0].abs() < 1e-3 && row[1].abs() < 0.05,
                "{policy}, frame {k}: {row:?}"
            );
        }
    }
}

/// `x' = t` from 0 (so `x = t²/2`), and whether `x >= c`, where `x` reaches
/// `c` at `t* = 1 - 2e-7` s: inside frame 999 by a hair. Forward Euler
/// falls short of `x` by `h²/2 = 5e-7` per 1 ms frame, so the fast side
/// (Euler from the implicit state at 999) sees the crossing only in frame
/// 1000, while the implicit side (exact) sees it in 999.
fn late_crossing() -> Box<dyn Model> {
    let c = (1.0f64 - 2e-7).powi(2) / 2.0;
    let text = format!(
        r#"{{"blocks": [
        {{"id": "clock", "type": "Clock"}},
        {{"id": "x", "type": "Integrator"}},
        {{"id": "reached", "type": "CompareToConstant", "params": {{"operator": ">=", "constant": {c:?}}}}},
        {{"id": "past", "type": "Output"}}],
      "links": [
        {{"from": "clock", "to": "x"}},
        {{"from": "x", "to": "reached"}},
        {{"from": "reached", "to": "past"}}]}}"#
    );
    Box::new(compile_str(&text).unwrap().model)
}

#[test]
fn an_event_the_sides_see_in_different_frames_is_never_undone() {
    for policy in [Policy::Correct, Policy::Select] {
        let s = settings(policy, FastMethod::Explicit(Method::Euler), 1.1);
        let r = run(late_crossing().as_ref(), &s, &costs(), no_inputs());
        assert_eq!(r.failure, None);
        let past: Vec<f64> = r.rows.iter().map(|row| row[0]).collect();
        // The fast side's own event (located in frame 1000) is the one the
        // world sees at frame 1001, once; the implicit result of frame
        // 1000, which saw it a frame earlier, is not taken.
        let first = past.iter().position(|&p| p == 1.0).unwrap();
        assert_eq!(first, 1001, "{policy}");
        assert!(past[first..].iter().all(|&p| p == 1.0), "{policy}: switched back");
        let m = &r.tandem.metrics;
        assert!(m.disagreements.get() >= 1, "{policy}");
        assert!(m.event_resyncs.get() >= 1, "{policy}: the implicit side follows");
        // Then the sides agree again.
        assert!(r.sources[1005..].iter().all(|&s| s == Implicit), "{policy}");
    }
}

/// `x' = u - x` with `u = 1`, as a diagram.
fn lag() -> Box<dyn Model> {
    let text = r#"{"blocks": [
        {"id": "u", "type": "Inport", "params": {"default": 1}},
        {"id": "e", "type": "Sum", "params": {"signs": "+-"}},
        {"id": "x", "type": "Integrator"},
        {"id": "y", "type": "Output"}],
      "links": [
        {"from": "u", "to": "e.1"}, {"from": "x", "to": ["e.2", "y"]}, {"from": "e", "to": "x"}]}"#;
    Box::new(compile_str(text).unwrap().model)
}

#[test]
fn at_the_end_of_a_day_every_implicit_result_is_on_time() {
    // Frames are counted: the last 20 000 frames of a day, at 1 kHz, at
    // 10 kHz and at 0.3 ms (not exact in binary), are timed as the first.
    for frame in [1e-3, 1e-4, 3e-4] {
        let day = (86_400.0 / frame) as u64;
        for policy in [Policy::Correct, Policy::Select] {
            let mut s = settings(policy, FastMethod::Explicit(Method::Rk4), 20_000.0 * frame);
            s.frame = frame;
            s.output_deadline = 0.8 * frame;
            s.implicit.macro_step = frame;
            s.implicit.lead = frame;
            s.implicit.max_lag = 20.0 * frame;
            s.implicit.rtol = 1e-6;
            s.implicit.atol = 1e-8;
            let costs = VirtualCosts {
                fast_step: (frame * 1e7) as i64,
                implicit_step: (frame * 3e8) as i64,
                ..VirtualCosts::default()
            };
            let r = run_from(lag().as_ref(), &s, &costs, no_inputs(), day - 20_000);
            assert_eq!(r.failure, None);
            let late = r.sources[1..].iter().filter(|&&s| s != Implicit).count();
            assert_eq!(
                late, 0,
                "frame {frame} s under {policy}: {late} frames without their result"
            );
            let m = &r.tandem.metrics;
            // The first frame has no result yet.
            assert_eq!((m.resyncs.get(), m.stale_results.get()), (0, 0));
            assert!(m.implicit_late.get() <= 1);
        }
    }
}
