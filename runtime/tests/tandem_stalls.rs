//! Host stalls on the virtual clock: the whole process stopped for a while
//! (SIGSTOP, a descheduled VM), at every phase of the frame cycle, under
//! every policy and both kinds of fast method. A stall is caught up, not
//! extrapolated across: every frame is computed with the inputs of its own
//! time and recorded on the closed form, the slots that passed send
//! nothing, the slots served while catching up send computed outputs
//! (extrapolated over at most three frames, else held), and the state goes
//! on exactly as without the stall.

mod support;

use tandem_models::{Layout, Model, StateRef, Variable};
use tandem_runtime::tandem::fast::MAX_EXTRAPOLATED_FRAMES;
use tandem_runtime::tandem::inputs::Profile;
use tandem_runtime::tandem::metrics::FrameSource;
use tandem_runtime::tandem::virtual_clock::VirtualCosts;
use tandem_runtime::tandem::{FastMethod, ImplicitSolver, Policy, TandemSettings};
use tandem_runtime::{Method, WMethod};

use support::{costs, run, Run, FRAME, MS};

/// The current-like lag `i' = a (u - i)` and the charge it moves,
/// `q' = i`: a state with no restoring force, which keeps any wrong step
/// it is given (as a battery's state of charge does).
struct Charge {
    a: f64,
    layout: Layout,
}

impl Charge {
    fn new(a: f64) -> Self {
        let mut current = Variable::new("i");
        current.range = Some((-100.0, 100.0));
        Charge {
            a,
            layout: Layout {
                states: vec!["i".into(), "q".into()],
                inputs: vec![Variable::new("u")],
                outputs: vec![current, Variable::new("q")],
                ..Layout::default()
            },
        }
    }
}

impl Model for Charge {
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn fork(&self) -> Box<dyn Model> {
        Box::new(Charge::new(self.a))
    }
    fn initial_state(&mut self, x: &mut [f64], _: &mut [f64]) {
        x.fill(0.0);
    }
    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        dx[0] = self.a * (s.u[0] - s.x[0]);
        dx[1] = s.x[0];
    }
    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        y.copy_from_slice(s.x);
    }
}

const A: f64 = 5.0;

/// The input: a ramp to 10 over 50 ms, held, a step down to 4 at 180 ms.
fn input() -> Vec<(f64, f64)> {
    vec![(0.0, 0.0), (0.05, 10.0), (0.18, 10.0), (0.18, 4.0), (1.0, 4.0)]
}

/// The input held over frame `j`, as the fast side reads it.
fn u_at(j: usize) -> f64 {
    tandem_models::plants::profile_value(&input(), j as f64 * FRAME)
}

/// The exact state at every frame boundary with the input held over each
/// frame.
fn exact(frames: usize) -> Vec<[f64; 2]> {
    let decay = (-A * FRAME).exp();
    let mut x = vec![[0.0, 0.0]];
    for j in 0..frames {
        let [i, q] = x[j];
        let u = u_at(j);
        x.push([u + (i - u) * decay, q + u * FRAME + (i - u) * (1.0 - decay) / A]);
    }
    x
}

/// `frames` frames of `policy` with `method`, the implicit side the BDF at
/// tolerances that make it as exact as the fast side.
fn settings(policy: Policy, method: FastMethod, frames: u64) -> TandemSettings {
    let mut s = support::settings(policy, method, frames);
    s.implicit.solver = ImplicitSolver::Bdf;
    s.implicit.rtol = 1e-12;
    s.implicit.atol = 1e-12;
    s
}

fn stalled(at: i64, duration: i64) -> VirtualCosts {
    VirtualCosts {
        stalls: vec![(at, duration)],
        ..costs()
    }
}

fn charge_run(policy: Policy, method: FastMethod, costs: &VirtualCosts) -> Run {
    let inputs = Box::new(Profile::new(vec![(0, input())]));
    run(&Charge::new(A), &settings(policy, method, 300), costs, inputs)
}

const METHODS: [FastMethod; 2] = [
    FastMethod::Explicit(Method::Rk4),
    FastMethod::LinearlyImplicit(WMethod::Ros34pw2),
];
const POLICIES: [Policy; 3] = [Policy::Correct, Policy::Select, Policy::Explicit];

/// Checks a run through a stall against the closed form and the rules of
/// late slots; returns the frames whose slots passed in the stall.
fn check_stalled_run(r: &Run, what: &str) -> usize {
    assert_eq!(r.failure, None, "{what}");
    let exact = exact(300);
    // Every frame recorded once, in order, on the closed form: catching up
    // integrated the owed frames with the inputs of their own times.
    assert_eq!(r.rows.len(), 300, "{what}");
    for (k, (t, row)) in r.times.iter().zip(&r.rows).enumerate() {
        assert_eq!(*t, k as f64 * FRAME, "{what}");
        let [i, q] = exact[k];
        assert!(
            (row[0] - i).abs() < 1e-6 && (row[1] - q).abs() < 1e-8,
            "{what}, frame {k} ({:?}): ({}, {}) vs ({i}, {q})",
            r.sources[k],
            row[0],
            row[1]
        );
    }
    // The charge, which keeps any error, ends where it must.
    assert!((r.rows[299][1] - exact[299][1]).abs() < 1e-9, "{what}");
    let m = &r.tandem.metrics;
    assert_eq!(m.outputs_clamped.get() + m.outputs_nonfinite.get(), 0, "{what}");
    assert_eq!(m.unusable(), 0, "{what}");
    // A skipped slot sent nothing; every other slot sent once, in order.
    let skipped: Vec<usize> = (0..300).filter(|&k| r.sources[k] == FrameSource::Skipped).collect();
    let sent_slots: Vec<usize> = r.sent.iter().map(|(k, _)| *k as usize).collect();
    let expected: Vec<usize> = (0..300).filter(|k| !skipped.contains(k)).collect();
    assert_eq!(sent_slots, expected, "{what}");
    assert_eq!(
        r.skipped.iter().map(|(a, b)| b - a).sum::<u64>(),
        skipped.len() as u64,
        "{what}: {:?}",
        r.skipped
    );
    // A late slot sent computed outputs of earlier frames: held, or
    // extrapolated from the two newest over at most three frames.
    for (k, y) in &r.sent {
        let k = *k as usize;
        match r.sources[k] {
            FrameSource::Held => assert!(
                (0..k).any(|j| r.rows[j] == *y),
                "{what}: slot {k} held {y:?}, which no earlier frame computed"
            ),
            FrameSource::Extrapolated => {
                let held_from = (1..=MAX_EXTRAPOLATED_FRAMES as usize).filter(|&n| n < k).any(|n| {
                    let (a, b) = (&r.rows[k - n], &r.rows[k - n - 1]);
                    (0..2).all(|c| (y[c] - (a[c] + n as f64 * (a[c] - b[c]))).abs() <= 1e-12 * a[c].abs().max(1.0))
                });
                assert!(
                    held_from,
                    "{what}: slot {k} sent {y:?}, not an extrapolation of computed outputs"
                );
            }
            FrameSource::Skipped => unreachable!(),
            _ => assert_eq!(*y, r.rows[k], "{what}: slot {k} sent its own outputs"),
        }
    }
    skipped.len()
}

#[test]
fn a_stall_at_any_phase_of_the_frame_is_caught_up_on_the_closed_form() {
    // The process stops for 60 ms at 100 ms plus each phase: before the
    // fast thread wakes, while it computes, after its deadline, while the
    // implicit thread computes.
    for method in METHODS {
        for policy in POLICIES {
            for phase in [0, 5_000, 300_000, 790_000, 810_000, 950_000] {
                let what = format!("{method} under {policy}, stall at 100 ms + {phase} ns");
                let r = charge_run(policy, method, &stalled(100 * MS + phase, 60 * MS));
                let skipped = check_stalled_run(&r, &what);
                assert!((58..=60).contains(&skipped), "{what}: {skipped} slots skipped");
                let m = &r.tandem.metrics;
                let stalls = m.stalls.snapshot();
                assert_eq!(stalls.count, 1, "{what}");
                assert!(stalls.max >= 59e6 && stalls.max <= 61e6, "{what}: {}", stalls.max);
                assert!(m.caught_up.get() >= skipped as u64, "{what}");
                // Caught up within two slots (10 µs a frame).
                let late: Vec<usize> = (0..300).filter(|&k| !r.sources[k].on_time()).collect();
                assert!(late.len() <= skipped + 2, "{what}: {late:?}");
                if policy != Policy::Explicit {
                    assert_eq!(
                        r.sources[299],
                        FrameSource::Implicit,
                        "{what}: the implicit side is back"
                    );
                }
            }
        }
    }
}

#[test]
fn stalls_shorter_than_a_frame_are_misses_and_longer_ones_skip() {
    for (duration, skips) in [(400_000, false), (2 * MS, true), (9 * MS, true)] {
        for policy in POLICIES {
            let what = format!("{policy}, a stall of {duration} ns");
            let r = charge_run(policy, METHODS[0], &stalled(100 * MS + 500_000, duration));
            let skipped = check_stalled_run(&r, &what);
            assert_eq!(skipped > 0, skips, "{what}");
            assert_eq!(r.tandem.metrics.stalls.snapshot().count, u64::from(skips), "{what}");
        }
    }
}

#[test]
fn a_slow_frame_catches_up_over_several_slots_holding_its_outputs() {
    // 300 µs a fast step: a 60 ms stall is caught up two or three frames
    // a slot, the slots in between sending the newest computed outputs.
    let mut costs = stalled(100 * MS + 500_000, 60 * MS);
    costs.fast_step = 300_000;
    costs.implicit_step = 400_000;
    let r = charge_run(Policy::Correct, METHODS[1], &costs);
    let skipped = check_stalled_run(&r, "slow frames");
    let held = r.sources.iter().filter(|&&s| s == FrameSource::Held).count();
    assert!(held > 10, "{held} held slots");
    let m = &r.tandem.metrics;
    let late = r.sources.iter().filter(|s| !s.on_time()).count();
    assert_eq!(
        m.missed() as usize,
        late,
        "every slot that did not send its own outputs is a miss"
    );
    assert!(
        m.missed_behind.get() as usize <= held + r.sources.iter().filter(|&&s| s == FrameSource::Extrapolated).count()
    );
    assert!(m.caught_up.get() as usize >= skipped + held);
}

#[test]
fn a_stall_longer_than_the_backlog_ends_the_run_named() {
    let inputs = Box::new(Profile::new(vec![(0, input())]));
    let mut s = settings(Policy::Correct, METHODS[0], 12_000);
    s.duration = 12.0;
    let r = run(&Charge::new(A), &s, &stalled(100 * MS, 10_500 * MS), inputs);
    let failure = r.failure.expect("the run ends");
    assert!(
        failure.contains("was 10001 frames (10.001 s) behind real time, more than the 10000 frames a run catches up"),
        "{failure}"
    );
    // What was computed before is recorded.
    assert!(r.rows.len() >= 100);
}

#[test]
fn runs_through_stalls_repeat_bit_for_bit() {
    let mut costs = stalled(50 * MS + 123_456, 37 * MS);
    costs.stalls.push((150 * MS + 900_000, 3 * MS));
    let a = charge_run(Policy::Correct, METHODS[1], &costs);
    let b = charge_run(Policy::Correct, METHODS[1], &costs);
    assert_eq!(a.sources, b.sources);
    let bits = |r: &Run| {
        r.rows
            .iter()
            .chain(r.sent.iter().map(|(_, y)| y))
            .flat_map(|row| row.iter().map(|v| v.to_bits()))
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&a), bits(&b));
}
