//! The tandem's policies on the virtual clock, with exact expectations:
//! which frame used which source, and the state that resulted.

use tandem_models::{Layout, Model, StateRef, Variable};
use tandem_runtime::tandem::assemble::Tandem;
use tandem_runtime::tandem::inputs::Profile;
use tandem_runtime::tandem::metrics::FrameSource::{self, CatchUp, Extrapolated, Fast, Held, Implicit};
use tandem_runtime::tandem::virtual_clock::VirtualCosts;
use tandem_runtime::tandem::{FastMethod, ImplicitSolver, Policy, TandemSettings};
use tandem_runtime::{FixedStepper, Method, ModelOde};

mod support;
use support::{costs, FRAME, MS};

/// `x' = a (u - x)`, output `x`.
struct Lag {
    a: f64,
    layout: Layout,
}

impl Lag {
    fn new(a: f64) -> Self {
        Lag {
            a,
            layout: Layout {
                states: vec!["x".into()],
                inputs: vec![Variable::new("u")],
                outputs: vec![Variable::new("x")],
                ..Layout::default()
            },
        }
    }
}

impl Model for Lag {
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn fork(&self) -> Box<dyn Model> {
        Box::new(Lag::new(self.a))
    }
    fn initial_state(&mut self, x: &mut [f64], _: &mut [f64]) {
        x[0] = 0.0;
    }
    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        dx[0] = self.a * (s.u[0] - s.x[0]);
    }
    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        y[0] = s.x[0];
    }
}

/// 1 ms frames of RK4, backward Euler on the implicit side (tight Newton).
fn settings(policy: Policy, frames: u64) -> TandemSettings {
    support::settings(policy, FastMethod::Explicit(Method::Rk4), frames)
}

/// A run of `model` with the ramp `u = t` as its input: its first output
/// frame by frame as computed (recorded) and as each slot sent it.
struct Run {
    sources: Vec<FrameSource>,
    outputs: Vec<f64>,
    sent: Vec<f64>,
    tandem: Tandem,
    failure: Option<String>,
}

fn run(model: &dyn Model, settings: &TandemSettings, costs: &VirtualCosts) -> Run {
    let ramp = Profile::new(vec![(0, vec![(0.0, 0.0), (100.0, 100.0)])]);
    let r = support::run(model, settings, costs, Box::new(ramp));
    Run {
        sources: r.sources,
        outputs: r.rows.iter().map(|row| row[0]).collect(),
        sent: r.sent.iter().map(|(_, y)| y[0]).collect(),
        tandem: r.tandem,
        failure: r.failure,
    }
}

/// Backward Euler of `x' = a (u - x)` with `u` held at `t_j` over each
/// frame: the implicit side's chain, computed independently.
fn backward_euler(a: f64, frames: usize) -> Vec<f64> {
    backward_euler_with(a, frames, |j| j as f64 * FRAME)
}

/// The same with the held input of frame `j` given by `u(j)`.
fn backward_euler_with(a: f64, frames: usize, u: impl Fn(usize) -> f64) -> Vec<f64> {
    let mut x = vec![0.0];
    for j in 0..frames {
        x.push((x[j] + FRAME * a * u(j)) / (1.0 + FRAME * a));
    }
    x
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1e-3)
}

#[test]
fn select_uses_each_implicit_state_that_is_ready_and_the_explicit_one_otherwise() {
    let model = Lag::new(50.0);
    let mut costs = costs();
    // The step to 6 ms starts at 5 ms and ends at 6.8 ms instead of 5.3 ms.
    costs.implicit_delays = vec![(5 * MS, 1_500_000)];
    let r = run(&model, &settings(Policy::Select, 12), &costs);
    let mut expected = vec![Implicit; 12];
    expected[0] = Fast; // nothing computed yet
    expected[6] = Fast; // the result for 6 ms comes at 6.8 ms
    expected[7] = Fast; // the one for 7 ms at 7.1 ms
    assert_eq!(r.sources, expected);
    let chain = backward_euler(50.0, 12);
    for (k, (&y, s)) in r.outputs.iter().zip(&r.sources).enumerate() {
        if *s == Implicit {
            assert!(
                close(y, chain[k]),
                "frame {k}: {y} vs the implicit chain's {}",
                chain[k]
            );
        } else {
            assert!(!close(y, chain[k]) || k == 0, "frame {k} should be explicit");
        }
    }
    assert_eq!(r.tandem.metrics.implicit_late.get(), 3);
}

#[test]
fn correct_restarts_from_the_newest_implicit_state_and_catches_up() {
    let model = Lag::new(50.0);
    let mut costs = costs();
    costs.implicit_delays = vec![(5 * MS, 1_500_000)];
    let r = run(&model, &settings(Policy::Correct, 12), &costs);
    let mut expected = vec![Implicit; 12];
    expected[0] = Fast;
    expected[6] = Fast; // the result for 5 ms was used at frame 5
    expected[7] = CatchUp; // the result for 6 ms (at 6.8 ms), one frame re-integrated
    assert_eq!(r.sources, expected);
    // Frame 7 = one RK4 step from the implicit state at 6 ms with u(6 ms).
    let chain = backward_euler(50.0, 12);
    let rk4 = |x: f64, u: f64| {
        let f = |x: f64| 50.0 * (u - x);
        let k1 = f(x);
        let k2 = f(x + FRAME / 2.0 * k1);
        let k3 = f(x + FRAME / 2.0 * k2);
        let k4 = f(x + FRAME * k3);
        x + FRAME / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    };
    assert!(close(r.outputs[7], rk4(chain[6], 0.006)));
    assert!(close(r.outputs[8], chain[8]));
    assert_eq!(r.tandem.metrics.catchup_frames.snapshot().max, 1.0);
}

#[test]
fn correct_ignores_results_older_than_max_catchup_and_the_implicit_side_catches_up() {
    let model = Lag::new(50.0);
    let mut costs = costs();
    costs.implicit_delays = vec![(5 * MS, 10 * MS)]; // step to 6 ms ends at 15.3 ms
    let r = run(&model, &settings(Policy::Correct, 40), &costs);
    let m = &r.tandem.metrics;
    assert!(r.sources[6..16].iter().all(|&s| s == Fast));
    assert!(m.stale_results.get() >= 1, "a result 10 frames old is not used");
    assert_eq!(m.resyncs.get(), 0, "10 ms is within max_lag (20 ms)");
    assert_eq!(*r.sources.last().unwrap(), Implicit, "the implicit side caught up");
    let first_catch_up = r.sources.iter().position(|&s| s == CatchUp).unwrap();
    assert!(first_catch_up > 16);
    assert!(m.catchup_frames.snapshot().max <= 4.0);
}

#[test]
fn an_implicit_side_too_far_behind_restarts_from_the_fast_state() {
    let model = Lag::new(50.0);
    let mut costs = costs();
    costs.implicit_delays = vec![(5 * MS, 30 * MS)];
    let mut s = settings(Policy::Correct, 60);
    s.implicit.max_lag = 10.0 * FRAME;
    let r = run(&model, &s, &costs);
    assert_eq!(r.tandem.metrics.resyncs.get(), 1);
    assert_eq!(*r.sources.last().unwrap(), Implicit);
}

#[test]
fn a_frame_late_at_its_output_deadline_sends_extrapolated_outputs() {
    let model = Lag::new(50.0);
    let mut costs = costs();
    costs.fast_overruns = vec![(10 * MS, 900_000)]; // frame 10 ends at 10.91 ms > 10.8 ms
                                                    // Its implicit result is late too: the step 9 → 10 ms takes 2 ms.
    costs.implicit_delays = vec![(9 * MS, 2 * MS)];
    let r = run(&model, &settings(Policy::Select, 14), &costs);
    assert_eq!(r.sources[10], Extrapolated);
    assert_eq!(r.sent[10], 2.0 * r.outputs[9] - r.outputs[8]);
    // The recording keeps what the frame computed.
    assert_ne!(r.outputs[10], r.sent[10]);
    assert_eq!(r.sent[11], r.outputs[11]);
    assert_eq!(r.tandem.metrics.missed_overrun.get(), 1);
    assert_eq!(r.tandem.metrics.missed(), 1);
    // The state computed late still carries on.
    assert_eq!(&r.sources[12..], [Implicit; 2]);
}

#[test]
fn a_late_frame_whose_implicit_result_was_on_time_sends_it() {
    let model = Lag::new(50.0);
    let on_time = run(&model, &settings(Policy::Select, 14), &costs());
    let mut costs = costs();
    costs.fast_overruns = vec![(10 * MS, 900_000)]; // frame 10 ends at 10.91 ms > 10.8 ms
    let r = run(&model, &settings(Policy::Select, 14), &costs);
    // A miss, but the frame's own implicit state (published at 9.3 ms)
    // stands: only the fast side was late.
    assert_eq!(r.tandem.metrics.missed_overrun.get(), 1);
    assert_eq!(r.sources[10], Implicit);
    assert_eq!(r.sent[10].to_bits(), on_time.outputs[10].to_bits());
    assert_ne!(r.sent[10], 2.0 * r.outputs[9] - r.outputs[8]);
}

#[test]
fn a_late_wake_up_is_a_miss_of_its_own_cause() {
    let model = Lag::new(50.0);
    let mut costs = costs();
    costs.wake_latency = 850_000;
    let r = run(&model, &settings(Policy::Explicit, 5), &costs);
    assert_eq!(
        r.tandem.metrics.missed_woke_late.get(),
        4,
        "all but the first, which has nothing to extrapolate"
    );
    // Frame 1 has one computed frame before it: held, not extrapolated.
    assert_eq!(r.sources[1..], [Held, Extrapolated, Extrapolated, Extrapolated]);
}

#[test]
fn explicit_only_equals_plain_explicit_steps_bit_for_bit() {
    let model = Lag::new(50.0);
    let r = run(&model, &settings(Policy::Explicit, 50), &costs());
    assert!(r.tandem.implicit.is_none());
    assert!(r.sources.iter().all(|&s| s == Fast));
    // The same explicit steps with u = t sampled and held per step.
    let mut x = 0.0f64;
    let mut rk = tandem_runtime::ExplicitRk::new(Method::Rk4, 1);
    let mut lag = Lag::new(50.0);
    for k in 0..50 {
        assert_eq!(r.outputs[k].to_bits(), x.to_bits(), "frame {k}");
        let mut xs = [x];
        let u = [k as f64 * FRAME];
        let mut system = ModelOde {
            model: &mut lag,
            xd: &[],
            u: &u,
        };
        rk.step(&mut system, k as f64 * FRAME, FRAME, &mut xs);
        x = xs[0];
    }
}

#[test]
fn on_a_stiff_model_explicit_only_blows_up_and_the_tandem_stays_on_the_solution() {
    let model = Lag::new(5000.0); // RK4 at 1 ms: z = -5, |R(z)| ≈ 13.7
    let explicit = run(&model, &settings(Policy::Explicit, 1000), &costs());
    let failure = explicit.failure.expect("the explicit run diverges");
    assert!(failure.contains("state \"x\""), "{failure}");
    // The exact solution with the input held over each frame.
    let mut exact = vec![0.0f64];
    for j in 0..1000 {
        let u = j as f64 * FRAME;
        exact.push(u + (exact[j] - u) * (-5000.0 * FRAME).exp());
    }
    for policy in [Policy::Correct, Policy::Select] {
        let mut s = settings(policy, 1000);
        s.implicit.solver = ImplicitSolver::Bdf;
        s.implicit.rtol = 1e-9;
        s.implicit.atol = 1e-12;
        let r = run(&model, &s, &costs());
        assert!(r.failure.is_none());
        assert_eq!(r.sources.iter().filter(|&&s| s == Implicit).count(), 999, "{policy}");
        for (k, (output, exact)) in r.outputs.iter().zip(&exact).enumerate().take(1000).skip(1) {
            assert!(
                (output - exact).abs() < 1e-7,
                "{policy}, frame {k}: {output} vs {exact}"
            );
        }
    }
}

#[test]
fn a_lead_of_two_frames_integrates_on_extrapolated_inputs() {
    let model = Lag::new(50.0);
    let mut s = settings(Policy::Correct, 20);
    s.implicit.lead = 2.0 * FRAME;
    let r = run(&model, &s, &costs());
    let m = &r.tandem.metrics;
    assert!(m.extrapolated_inputs.get() > 0);
    // Linear extrapolation of a ramp is exact once two samples exist; the
    // step from 1 ms, started with only the sample at 0, held it.
    let chain = backward_euler_with(50.0, 20, |j| if j == 1 { 0.0 } else { j as f64 * FRAME });
    assert!(close(r.outputs[19], chain[19]), "{} vs {}", r.outputs[19], chain[19]);
}

#[test]
fn virtual_runs_repeat_bit_for_bit() {
    let model = Lag::new(5000.0);
    let mut costs = costs();
    costs.implicit_delays = vec![(3 * MS, 2 * MS), (9 * MS, 700_000)];
    costs.fast_overruns = vec![(12 * MS, 950_000)];
    let s = settings(Policy::Correct, 200);
    let a = run(&model, &s, &costs);
    let b = run(&model, &s, &costs);
    assert_eq!(a.sources, b.sources);
    let bits = |r: &Run| r.outputs.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a), bits(&b));
}
