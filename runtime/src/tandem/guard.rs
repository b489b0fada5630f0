//! What keeps every frame physical, whatever the policy and however late
//! the implicit side is:
//!
//! - [`StateGuard`]: a frame's state is unusable when a value is not finite,
//!   or (after an explicit method's step, which is unstable on modes faster
//!   than the frame; a linearly implicit step is not) when it lies further
//!   from the implicit side's prediction than the
//!   largest magnitude that state has had so far (a step of an explicit
//!   method that is unstable at the frame grows by orders of magnitude; a
//!   sound step moves a fraction of that). Inside an implicit result the
//!   prediction is its polynomial; beyond it, a state may be near its newest
//!   value held (a fast mode that settles) or near the line along its newest
//!   derivative (a slow one): only a state far from both is unusable. An
//!   unusable state takes the implicit prediction (the polynomial, or the
//!   newest implicit state held, however old): a state that an integration
//!   produced. No state is ever extrapolated, so neither side continues
//!   from one no model step made.
//! - [`OutputGuard`]: an output that is not finite repeats the value sent
//!   last; an output outside its model-stated range is clamped to it. So
//!   nothing non-finite or out of range is ever recorded or sent.
//!
//! Every substitution and clamp is counted by cause. Nothing here allocates
//! after construction.

use tandem_models::Variable;

use super::exchange::ImplicitResult;
use super::metrics::Metrics;

/// How far from the implicit prediction a state may be, as a multiple of
/// the largest magnitude that state has had (in good frames and implicit
/// results).
pub const PREDICTION_BOUND: f64 = 1.0;

/// Why a frame's state was replaced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unusable {
    /// A value was NaN or infinite.
    NonFinite,
    /// A value lay beyond [`PREDICTION_BOUND`] of the implicit prediction.
    OutOfBound,
}

/// Checks each frame's state and replaces an unusable one.
pub struct StateGuard {
    /// Per state, the largest magnitude so far in good frames and implicit
    /// results, with the absolute tolerance as a floor.
    scale: Vec<f64>,
    /// The prediction for this frame (beyond a result: its newest state).
    prediction: Vec<f64>,
    /// Beyond a result: its newest state moved along its derivative.
    along: Vec<f64>,
    /// Whether `along` holds a second prediction.
    two: bool,
    /// Whether states far from the prediction are unusable.
    bounded: bool,
}

impl StateGuard {
    /// A guard for states starting at `x0`; `atol` floors each state's
    /// scale. With `bounded`, a state far from the implicit prediction is
    /// unusable (else only one that is not finite).
    pub fn new(x0: &[f64], atol: f64, bounded: bool) -> Self {
        StateGuard {
            scale: x0.iter().map(|v| v.abs().max(atol)).collect(),
            prediction: vec![0.0; x0.len()],
            along: vec![0.0; x0.len()],
            two: false,
            bounded,
        }
    }

    /// Writes the implicit prediction for frame `k` (at `t`) from `result`
    /// into the guard's buffer; `false` when there is no result yet.
    fn predict(&mut self, result: &ImplicitResult, k: u64, t: f64) -> bool {
        if result.seq == 0 {
            return false;
        }
        self.two = false;
        if result.covers(k) {
            result.step.state_at(t, &mut self.prediction);
        } else if k > result.k1 {
            self.prediction.copy_from_slice(&result.step.x1);
            let dt = t - result.step.t1;
            for (a, (x1, f1)) in self.along.iter_mut().zip(result.step.x1.iter().zip(&result.step.f1)) {
                *a = x1 + f1 * dt;
            }
            self.two = true;
        } else {
            result.step.state_at(result.step.t0, &mut self.prediction);
        }
        for (s, (p, x1)) in self.scale.iter_mut().zip(self.prediction.iter().zip(&result.step.x1)) {
            *s = s.max(p.abs()).max(x1.abs());
        }
        true
    }

    /// Whether `x` lies beyond the bound of every prediction.
    fn far(&self, x: &[f64]) -> bool {
        let beyond = |p: &[f64]| {
            x.iter()
                .zip(p)
                .zip(&self.scale)
                .any(|((v, p), s)| (v - p).abs() > PREDICTION_BOUND * s)
        };
        beyond(&self.prediction) && (!self.two || beyond(&self.along))
    }

    /// Checks the state `x` of frame `k` (at `t`), with the newest implicit
    /// `result` (if any): a prediction from a result at most `horizon`
    /// frames old bounds the state; any prediction replaces an unusable
    /// one. Counts the cause and the substitution in `metrics`. Returns
    /// whether the prediction replaced it: `false` when it was good or
    /// nothing could (then `x` is left as it was).
    #[expect(
        clippy::too_many_arguments,
        reason = "the state to check, the result to check it against and its horizon, and the metrics that count the outcome"
    )]
    pub fn check(
        &mut self,
        k: u64,
        t: f64,
        x: &mut [f64],
        result: Option<&ImplicitResult>,
        horizon: u64,
        metrics: &Metrics,
    ) -> bool {
        let predicted = result.is_some_and(|r| self.predict(r, k, t));
        let recent = predicted && result.is_some_and(|r| k.saturating_sub(r.k1) <= horizon);
        let verdict = if x.iter().any(|v| !v.is_finite()) {
            Some(Unusable::NonFinite)
        } else if recent && self.bounded && self.far(x) {
            Some(Unusable::OutOfBound)
        } else {
            None
        };
        let Some(cause) = verdict else {
            for (s, v) in self.scale.iter_mut().zip(x.iter()) {
                *s = s.max(v.abs());
            }
            return false;
        };
        if !predicted {
            return false;
        }
        x.copy_from_slice(&self.prediction);
        match cause {
            Unusable::NonFinite => metrics.unusable_nonfinite.increment(),
            Unusable::OutOfBound => metrics.unusable_out_of_bound.increment(),
        }
        metrics.substituted_implicit.increment();
        true
    }
}

/// Keeps each frame's outputs finite and within their stated ranges.
pub struct OutputGuard {
    ranges: Vec<(f64, f64)>,
    /// The outputs sent last.
    last: Vec<f64>,
}

impl OutputGuard {
    /// A guard for `outputs` (their ranges, where stated).
    pub fn new(outputs: &[Variable]) -> Self {
        OutputGuard {
            ranges: outputs
                .iter()
                .map(|v| v.range.unwrap_or((f64::NEG_INFINITY, f64::INFINITY)))
                .collect(),
            last: vec![0.0; outputs.len()],
        }
    }

    /// Makes `y` safe to send: a non-finite value repeats the one sent last,
    /// a value out of range is clamped to it; each counted in `metrics`.
    /// Remembers `y` as sent.
    pub fn check(&mut self, y: &mut [f64], metrics: &Metrics) {
        for ((v, &(min, max)), last) in y.iter_mut().zip(&self.ranges).zip(&mut self.last) {
            if !v.is_finite() {
                metrics.outputs_nonfinite.increment();
                *v = *last;
            } else if *v < min || *v > max {
                metrics.outputs_clamped.increment();
                *v = v.clamp(min, max);
            }
            *last = *v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A smooth result from frame `k0` to `k1` (frames of 0.5 s).
    fn result(k0: u64, k1: u64, x0: f64, x1: f64) -> ImplicitResult {
        let (t0, t1) = (k0 as f64 * 0.5, k1 as f64 * 0.5);
        let mut r = ImplicitResult::new(1, 0);
        r.seq = 1;
        r.smooth = true;
        (r.k0, r.k1, r.step.t0, r.step.t1) = (k0, k1, t0, t1);
        (r.step.x0[0], r.step.x1[0]) = (x0, x1);
        (r.step.f0[0], r.step.f1[0]) = ((x1 - x0) / (t1 - t0), (x1 - x0) / (t1 - t0));
        r
    }

    /// `check` at frame `k` of 0.5 s.
    fn check(
        guard: &mut StateGuard,
        k: u64,
        x: &mut [f64],
        r: Option<&ImplicitResult>,
        horizon: u64,
        metrics: &Metrics,
    ) -> bool {
        guard.check(k, k as f64 * 0.5, x, r, horizon, metrics)
    }

    #[test]
    fn a_state_far_from_the_prediction_takes_the_prediction() {
        let metrics = Metrics::default();
        let mut guard = StateGuard::new(&[10.0], 1e-8, true);
        let r = result(0, 2, 10.0, 12.0);
        // Within the scale (12) of the prediction (11 at 0.5 s): kept, and
        // the scale grows to 20.
        let mut x = [20.0];
        assert!(!check(&mut guard, 1, &mut x, Some(&r), 2, &metrics));
        assert_eq!(x, [20.0]);
        // Beyond it: the prediction, by interpolation inside the result.
        let mut x = [31.5];
        assert!(check(&mut guard, 1, &mut x, Some(&r), 2, &metrics));
        assert!((x[0] - 11.0).abs() < 1e-12, "{x:?}");
        // Past the result, a state near the line along the newest
        // derivative (12 + 2 · 9.5 = 31) is kept though far from the newest
        // state held (12).
        let mut x = [34.0];
        assert!(!check(&mut guard, 21, &mut x, Some(&r), 20, &metrics));
        // Far from both: the newest state, held.
        let mut x = [-60.0];
        assert!(check(&mut guard, 21, &mut x, Some(&r), 20, &metrics));
        assert_eq!(x, [12.0]);
        let mut x = [f64::NAN];
        assert!(check(&mut guard, 3, &mut x, Some(&r), 2, &metrics));
        assert_eq!(x, [12.0]);
        assert_eq!(metrics.unusable_out_of_bound.get(), 2);
        assert_eq!(metrics.unusable_nonfinite.get(), 1);
        assert_eq!(metrics.substituted_implicit.get(), 3);
    }

    #[test]
    fn without_a_prediction_an_unusable_state_is_left_and_an_old_one_is_held() {
        let metrics = Metrics::default();
        let mut guard = StateGuard::new(&[0.0], 1e-8, true);
        let mut x = [f64::INFINITY];
        assert!(!check(&mut guard, 0, &mut x, None, 2, &metrics), "nothing replaces it");
        assert_eq!(x, [f64::INFINITY]);
        // A result older than the horizon bounds nothing, but its newest
        // state, held, replaces a state that is not finite.
        let old = result(0, 2, 0.0, 1.0);
        let mut x = [1e6];
        assert!(!check(&mut guard, 6, &mut x, Some(&old), 2, &metrics), "not bounded");
        let mut x = [f64::NAN];
        assert!(check(&mut guard, 6, &mut x, Some(&old), 2, &metrics));
        assert_eq!(x, [1.0]);
        assert_eq!(metrics.substituted_implicit.get(), 1);
    }

    #[test]
    fn after_a_linearly_implicit_step_only_non_finite_states_are_unusable() {
        let metrics = Metrics::default();
        let mut guard = StateGuard::new(&[0.0], 1e-8, false);
        let r = result(0, 2, 0.0, 0.0);
        let mut x = [40.0];
        assert!(
            !check(&mut guard, 3, &mut x, Some(&r), 2, &metrics),
            "a brake ramp starting"
        );
        let mut x = [f64::NAN];
        assert!(check(&mut guard, 3, &mut x, Some(&r), 2, &metrics));
    }

    #[test]
    fn outputs_are_held_when_not_finite_and_clamped_to_their_range() {
        let metrics = Metrics::default();
        let mut torque = Variable::new("torque");
        torque.range = Some((-252.0, 252.0));
        let mut guard = OutputGuard::new(&[torque, Variable::new("free")]);
        let mut y = [100.0, 1e300];
        guard.check(&mut y, &metrics);
        assert_eq!(y, [100.0, 1e300]);
        let mut y = [8166.0, f64::NAN];
        guard.check(&mut y, &metrics);
        assert_eq!(y, [252.0, 1e300]);
        assert_eq!((metrics.outputs_clamped.get(), metrics.outputs_nonfinite.get()), (1, 1));
    }
}
