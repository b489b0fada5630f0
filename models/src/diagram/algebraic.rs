//! Solving torn algebraic loops at run time: Newton's method on the guesses
//! of the torn inputs, with a difference Jacobian of `source - guess`,
//! re-evaluating only the loop's blocks. The guesses persist between
//! evaluations, so a loop that changes slowly converges in one iteration.

use std::ops::Range;

use crate::linalg::Lu;

/// Newton iterations per evaluation before the loop is reported.
pub const MAX_ITERATIONS: u32 = 50;
/// Converged when every `|source - guess| <= TOLERANCE (1 + |source|)`.
const TOLERANCE: f64 = 1e-12;

/// A torn loop of a compiled program.
#[derive(Clone, Debug)]
pub(crate) struct AlgebraicLoop {
    /// Its blocks' entries, contiguous in execution order.
    pub entries: Range<usize>,
    /// Signal offsets (guess, source) of every torn element.
    pub pairs: Vec<(u32, u32)>,
    /// Its blocks, by path.
    pub blocks: Vec<String>,
    /// The torn input ports (`block.port`).
    pub torn: Vec<String>,
}

/// A loop's scratch memory in a model's workspace.
pub(crate) struct LoopWork {
    lu: Lu,
    residual: Vec<f64>,
    step: Vec<f64>,
    /// The largest scaled residual of the last evaluation that did not
    /// converge, if it did not.
    pub failed: Option<f64>,
}

impl LoopWork {
    /// Scratch for a loop of `m` torn elements.
    pub fn new(m: usize) -> Self {
        LoopWork {
            lu: Lu::new(m),
            residual: vec![0.0; m],
            step: vec![0.0; m],
            failed: None,
        }
    }
}

/// Drives the guesses of `plan`'s torn inputs in `signals` to their
/// sources, calling `evaluate` to run the loop's blocks on `signals`; on
/// failure leaves the guesses NaN (so that the loop's outputs are) and notes
/// it in `work`.
pub(crate) fn solve(
    plan: &AlgebraicLoop,
    work: &mut LoopWork,
    signals: &mut [f64],
    evaluate: &mut dyn FnMut(&mut [f64]),
) {
    if plan.pairs.iter().any(|&(g, _)| !signals[g as usize].is_finite()) {
        for &(g, _) in &plan.pairs {
            signals[g as usize] = 0.0;
        }
    }
    let mut worst = f64::NAN;
    for _ in 0..MAX_ITERATIONS {
        evaluate(signals);
        worst = 0.0;
        for (r, &(g, s)) in work.residual.iter_mut().zip(&plan.pairs) {
            *r = signals[s as usize] - signals[g as usize];
            worst = f64::max(worst, r.abs() / (1.0 + signals[s as usize].abs()));
        }
        if worst <= TOLERANCE {
            return;
        }
        if !worst.is_finite() {
            break;
        }
        for (j, &(g, _)) in plan.pairs.iter().enumerate() {
            let z = signals[g as usize];
            let dz = 1e-7 * (1.0 + z.abs());
            signals[g as usize] = z + dz;
            evaluate(signals);
            for (i, &(gi, si)) in plan.pairs.iter().enumerate() {
                let shifted = signals[si as usize] - signals[gi as usize];
                work.lu.matrix_mut()[(i, j)] = (shifted - work.residual[i]) / dz;
            }
            signals[g as usize] = z;
        }
        if !work.lu.factor() {
            break;
        }
        for (s, r) in work.step.iter_mut().zip(&work.residual) {
            *s = -r;
        }
        work.lu.solve(&mut work.step);
        for (&(g, _), s) in plan.pairs.iter().zip(&work.step) {
            signals[g as usize] += s;
        }
    }
    work.failed = Some(worst);
    for &(g, _) in &plan.pairs {
        signals[g as usize] = f64::NAN;
    }
}
