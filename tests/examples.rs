//! The three validation models of the CBD paper, run through the `tandem`
//! binary and compared with independent solutions.

mod common;

use common::simulate_example;

/// Reference values of the bouncing ball: `tests/data/bouncing_ball.json`,
/// a copy of the project's shared reference solutions
/// (`shared/reference/bouncing_ball.json`: closed-form impact times of the
/// ball of the CBD simulator paper).
fn ball_reference() -> serde_json::Value {
    let path = common::root().join("tests/data/bouncing_ball.json");
    let text = std::fs::read_to_string(&path).expect("tests/data/bouncing_ball.json is in the repository");
    serde_json::from_str(&text).expect("the reference is JSON")
}

#[test]
fn abs_slip_matches_the_two_piece_adhesion_curve() {
    let t = simulate_example("abs_slip", &[]);
    let (time, s, mu) = (t.column("time"), t.column("s"), t.column("mu"));
    assert_eq!(time.len(), 1001);
    let (mu_h, mu_g, s0) = (0.8, 0.6, 0.2);
    for i in 0..time.len() {
        assert!((s[i] - time[i]).abs() < 1e-12, "slip at t = {} is {}", time[i], s[i]);
        let expected = if s[i] <= s0 {
            mu_h * s[i] / s0
        } else {
            (mu_h - mu_g * s0) / (1.0 - s0) - (mu_h - mu_g) / (1.0 - s0) * s[i]
        };
        assert!(
            (mu[i] - expected).abs() < 1e-12,
            "mu({}) = {} but the closed form gives {expected}",
            s[i],
            mu[i]
        );
    }
    // Both branches were taken.
    assert!(mu[100] < mu[200] && mu[900] < mu[300]);
}

/// Times of the major steps at which the position is first below the floor.
fn detected_impacts(time: &[f64], x: &[f64]) -> Vec<f64> {
    (1..x.len())
        .filter(|&i| x[i] < 0.0 && x[i - 1] >= 0.0)
        .map(|i| time[i])
        .collect()
}

/// The impacts a step-granular reset must detect, computed from the exact
/// parabolas: at the first grid time below the floor the ball restarts from
/// x = 0 with v = -e v.
fn step_granular_impacts(h: f64, stop: f64) -> Vec<f64> {
    let (g, e) = (9.81, 0.8);
    let (mut t_r, mut x_r, mut v_r) = (0.0, 10.0, 15.0);
    let mut impacts = Vec::new();
    for n in 1..=(stop / h).round() as usize {
        let t = n as f64 * h;
        let s = t - t_r;
        if x_r + v_r * s - g * s * s / 2.0 < 0.0 {
            impacts.push(t);
            (t_r, x_r, v_r) = (t, 0.0, -e * (v_r - g * s));
        }
    }
    impacts
}

#[test]
fn bouncing_ball_impacts_follow_step_granular_resets() {
    let h = 0.01;
    let t = simulate_example("bouncing_ball", &["--events", "off"]);
    let (time, x) = (t.column("time"), t.column("x"));
    let impacts = detected_impacts(&time, &x);
    // The first impact is seen at the first step after the closed-form time.
    let first = ball_reference()["impact_times"][0].as_f64().unwrap();
    assert!(
        (0.0..h).contains(&(impacts[0] - first)),
        "first impact at {} but the closed form says {first}",
        impacts[0]
    );
    // Later impacts inherit the detection delay (the ball restarts late and
    // faster): they match the recurrence of step-granular resets exactly.
    let expected = step_granular_impacts(h, 20.0);
    assert!(impacts.len() >= 8, "impacts seen: {impacts:?}");
    for (k, (got, want)) in impacts.iter().zip(&expected).take(8).enumerate() {
        assert!(
            (got - want).abs() < 1e-9,
            "impact {} at {got}, the step-granular recurrence gives {want}",
            k + 1
        );
    }
    // Before the first impact the motion is a parabola, which RK4 integrates exactly.
    for i in 0..300 {
        let exact = 10.0 + 15.0 * time[i] - 9.81 * time[i] * time[i] / 2.0;
        assert!((x[i] - exact).abs() < 1e-9, "x({}) = {} vs {exact}", time[i], x[i]);
    }
}

/// The closed-form impact times of the reference: t1 and t_{n+1} = t_n + 2 e^n s1 / g.
fn closed_form_impacts(count: usize) -> Vec<f64> {
    let (g, e, x0, v0) = (9.81f64, 0.8f64, 10.0f64, 15.0f64);
    let s1 = (v0 * v0 + 2.0 * g * x0).sqrt();
    let mut t = vec![(v0 + s1) / g];
    for n in 1..count {
        t.push(t[n - 1] + 2.0 * e.powi(n as i32) * s1 / g);
    }
    t
}

#[test]
fn bouncing_ball_events_land_on_the_closed_form() {
    let t = simulate_example("bouncing_ball", &["--record-events", "--stop", "18"]);
    let (time, x, v) = (t.column("time"), t.column("x"), t.column("v"));
    // Event rows come in pairs with equal times: before and after.
    let impacts: Vec<f64> = (1..time.len())
        .filter(|&i| time[i] == time[i - 1] && v[i - 1] < 0.0 && v[i] > 0.0)
        .map(|i| time[i])
        .collect();
    let reference: Vec<f64> = ball_reference()["impact_times"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    let closed = closed_form_impacts(9);
    for k in 0..8 {
        assert!(
            (closed[k] - reference[k]).abs() < 1e-12,
            "the closed form disagrees with the reference file"
        );
        assert!(
            (impacts[k] - reference[k]).abs() < 1e-9,
            "impact {} at {}, reference {}",
            k + 1,
            impacts[k],
            reference[k]
        );
    }
    // Between impacts, every grid row is on the closed-form parabola.
    let (g, e) = (9.81f64, 0.8f64);
    let s1 = (15.0f64 * 15.0 + 2.0 * g * 10.0).sqrt();
    for i in 0..time.len() {
        if time[i] > closed[8] || (i > 0 && time[i] == time[i - 1]) || (i + 1 < time.len() && time[i] == time[i + 1]) {
            continue;
        }
        let k = closed.iter().filter(|&&c| c <= time[i]).count();
        let exact = if k == 0 {
            10.0 + 15.0 * time[i] - g * time[i] * time[i] / 2.0
        } else {
            let s = time[i] - closed[k - 1];
            e.powi(k as i32) * s1 * s - g * s * s / 2.0
        };
        assert!(
            (x[i] - exact).abs() < 1e-9,
            "x({}) = {} but the parabola gives {exact}",
            time[i],
            x[i]
        );
    }
}

#[test]
fn cruise_control_matches_the_exact_discretisation_of_the_plant() {
    let t = simulate_example("cruise_control", &[]);
    let (time, v, force) = (t.column("time"), t.column("v"), t.column("force"));
    let (m, b, period) = (1500.0, 20.0, 0.02);
    let (kp, ki, kd, v_ref) = (1.0, 0.01, 0.01, 25.0);
    // The PID holds F over each period, so the plant moves exactly as
    // v(t_k + s) = v_k e^{-a s} + F_k / b (1 - e^{-a s}) with a = b / m.
    let a = b / m;
    let (mut v_k, mut sum, mut e_prev, mut f_k) = (0.0f64, 0.0, 0.0, 0.0);
    let mut worst = 0.0f64;
    for i in 0..time.len() {
        let k = (time[i] / period + 1e-9).floor();
        let since = time[i] - k * period;
        if since.abs() < 1e-9 {
            // A sample instant: v_k is the exact speed now.
            v_k = if i == 0 {
                0.0
            } else {
                v_k * (-a * period).exp() + f_k / b * (1.0 - (-a * period).exp())
            };
            let e = v_ref - v_k;
            sum += e;
            f_k = kp * e + ki * sum + kd * (e - e_prev);
            e_prev = e;
            assert!(
                (force[i] - f_k).abs() < 1e-6 * f_k.abs().max(1.0),
                "F({}) = {} vs {f_k}",
                time[i],
                force[i]
            );
        }
        let exact = v_k * (-a * since).exp() + f_k / b * (1.0 - (-a * since).exp());
        worst = worst.max((v[i] - exact).abs());
    }
    assert!(worst < 1e-6, "largest difference from the exact solution: {worst}");
    let end = *v.last().unwrap();
    assert!((end - 25.0).abs() < 0.1, "v(1000) = {end}");
}

#[test]
fn sim_overrides_the_model_settings_from_the_command_line() {
    let t = simulate_example(
        "bouncing_ball",
        &["--solver", "euler", "--step", "0.005", "--stop", "1"],
    );
    let time = t.column("time");
    assert_eq!(time.len(), 201);
    assert_eq!(*time.last().unwrap(), 1.0);
    // Forward Euler is first order: visibly off the parabola after 1 s.
    let x = *t.column("x").last().unwrap();
    let exact = 10.0 + 15.0 - 9.81 / 2.0;
    assert!((x - exact).abs() > 1e-3 && (x - exact).abs() < 0.1, "x(1) = {x}");
}
