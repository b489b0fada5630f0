//! The modified Newton iteration on the corrector equation, and the
//! decisions of when to refactor `I - γJ` and when to re-evaluate `J`.

use super::jacobian::Evaluation;
use super::{
    wrms, Bdf, DIVERGENCE, GAMMA_CHANGE_JACOBIAN, GAMMA_CHANGE_SETUP, MAX_NEWTON, RATE_DECAY, STEPS_PER_JACOBIAN,
    STEPS_PER_SETUP,
};
use crate::ode::OdeSystem;

/// Why the previous attempt of the current step failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Attempt {
    /// The first attempt.
    First,
    /// After Newton failed to converge.
    AfterConvergenceFailure,
    /// After the error test failed.
    AfterErrorFailure,
}

/// What the linear setup is told about the failure that calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SetupReason {
    NoFailure,
    BadJacobian,
    OtherFailure,
}

impl Bdf {
    /// The modified Newton iteration for the corrector; leaves the
    /// correction in `acor` and its norm in `acnrm`. Returns `false` on a
    /// convergence failure (with the Jacobian current), a singular matrix
    /// or a non-finite `f`.
    pub(super) fn solve_newton(&mut self, system: &mut dyn OdeSystem, attempt: Attempt) -> bool {
        let mut reason = match attempt {
            Attempt::First | Attempt::AfterErrorFailure => SetupReason::NoFailure,
            Attempt::AfterConvergenceFailure => SetupReason::OtherFailure,
        };
        let mut setup = attempt != Attempt::First
            || self.nst == 0
            || self.nst >= self.nstlp + STEPS_PER_SETUP
            || (self.gamrat - 1.0).abs() > GAMMA_CHANGE_SETUP;
        self.acor.fill(0.0);
        loop {
            if !self.residual(system) {
                return false;
            }
            if setup && !self.setup(system, reason) {
                return false;
            }
            let mut m = 0;
            let converged = loop {
                for d in &mut self.delta {
                    *d = -*d;
                }
                self.factors.solve(&mut self.delta, &mut self.solve_work);
                if self.gamrat != 1.0 {
                    let scale = 2.0 / (1.0 + self.gamrat);
                    for d in &mut self.delta {
                        *d *= scale;
                    }
                }
                for (a, d) in self.acor.iter_mut().zip(&self.delta) {
                    *a += d;
                }
                self.stats.newton_iterations += 1;
                let del = wrms(&self.delta, &self.ewt);
                if m > 0 {
                    self.rate = (RATE_DECAY * self.rate).max(del / self.delp);
                }
                let dcon = del * self.rate.min(1.0) / self.tq[4];
                if dcon <= 1.0 {
                    self.acnrm = if m == 0 { del } else { wrms(&self.acor, &self.ewt) };
                    break true;
                }
                if !del.is_finite() || (m >= 1 && del > DIVERGENCE * self.delp) {
                    break false;
                }
                self.delp = del;
                m += 1;
                if m >= MAX_NEWTON || !self.residual(system) {
                    break false;
                }
            };
            if converged {
                self.jcur = false;
                for ((y, z), a) in self.y.iter_mut().zip(&self.zn[0]).zip(&self.acor) {
                    *y = z + a;
                }
                return true;
            }
            if self.jcur {
                return false;
            }
            // The Jacobian may be stale: retry once with a fresh setup.
            self.stats.convergence_failures += 1;
            setup = true;
            reason = SetupReason::BadJacobian;
            self.acor.fill(0.0);
        }
    }

    /// The corrector residual at the iterate `zn[0] + acor`, into `delta`:
    /// `l_1⁻¹ zn[1] + acor - γ f`. Returns `false` when `f` is not finite.
    pub(super) fn residual(&mut self, system: &mut dyn OdeSystem) -> bool {
        for ((y, z), a) in self.y.iter_mut().zip(&self.zn[0]).zip(&self.acor) {
            *y = z + a;
        }
        system.rhs(self.tn, &self.y, &mut self.ftemp);
        self.stats.rhs_evals += 1;
        let (rl1, gamma) = (self.rl1, self.gamma);
        for (((d, z1), a), f) in self.delta.iter_mut().zip(&self.zn[1]).zip(&self.acor).zip(&self.ftemp) {
            *d = rl1 * z1 + a - gamma * f;
        }
        self.ftemp.iter().all(|f| f.is_finite())
    }

    /// Re-evaluates the Jacobian when it is old or suspect, and factors
    /// `I - γJ`. Returns `false` when the matrix is singular.
    pub(super) fn setup(&mut self, system: &mut dyn OdeSystem, reason: SetupReason) -> bool {
        let dgamma = (self.gamma / self.gammap - 1.0).abs();
        let refresh = self.nst == 0
            || self.nst >= self.nstlj + STEPS_PER_JACOBIAN
            || (reason == SetupReason::BadJacobian && dgamma < GAMMA_CHANGE_JACOBIAN)
            || reason == SetupReason::OtherFailure;
        if refresh {
            self.stats.jacobian_evals += 1;
            self.nstlj = self.nst;
            self.jcur = true;
            let evaluation = self.jacobian.evaluate(
                system,
                self.tn,
                &self.y,
                &self.ftemp,
                &self.ewt,
                self.h,
                self.options.increments,
            );
            if let Evaluation::Differences(n) = evaluation {
                self.stats.rhs_evals_jacobian += u64::from(n);
            }
        } else {
            self.jcur = false;
        }
        self.stats.factorizations += 1;
        self.rate = 1.0;
        self.gammap = self.gamma;
        self.gamrat = 1.0;
        self.nstlp = self.nst;
        self.factors.factor_shifted(&self.jacobian.matrix, self.gamma)
    }
}
