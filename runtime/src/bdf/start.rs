//! Error weights and CVODE's estimate of the initial step.

use super::{wrms, Bdf, Tolerance, ROUNDOFF};
use crate::ode::OdeSystem;

impl Bdf {
    /// The absolute tolerance of state `i`.
    pub(super) fn atol(&self, i: usize) -> f64 {
        match &self.options.atol {
            Tolerance::Scalar(a) => *a,
            Tolerance::Vector(v) => v[i],
        }
    }

    /// Error weights `1 / (rtol |y_i| + atol_i)` at the current state.
    pub(super) fn set_weights(&mut self) {
        for i in 0..self.ewt.len() {
            self.ewt[i] = 1.0 / (self.options.rtol * self.zn[0][i].abs() + self.atol(i));
        }
    }

    /// CVODE's initial step: the step whose second-order error estimate
    /// (from a difference of `f`) is 1/2 in the weighted norm, refined up
    /// to four times, bounded by 0.1 of the distance to `t_out` and by
    /// `0.1 |y| / |y'|`.
    pub(super) fn initial_step(&mut self, system: &mut dyn OdeSystem, t_out: f64) -> f64 {
        let t0 = self.tn;
        let distance = if t_out.is_finite() && t_out > t0 {
            t_out - t0
        } else {
            1.0
        };
        let lower = 100.0 * ROUNDOFF * t0.abs().max(t0 + distance);
        let mut upper = 0.1 * distance;
        let mut upper_inv: f64 = 0.0;
        for ((y, d), w) in self.zn[0].iter().zip(&self.zn[1]).zip(&self.ewt) {
            upper_inv = upper_inv.max(d.abs() / (0.1 * y.abs() + 1.0 / w));
        }
        if upper * upper_inv > 1.0 {
            upper = 1.0 / upper_inv;
        }
        let h_max = self.options.h_max;
        let mut guess = (lower * upper).sqrt();
        if upper < lower {
            return guess.min(h_max);
        }
        let mut proposal = guess;
        for pass in 1..=4 {
            let ydd = self.second_derivative_norm(system, guess);
            proposal = if ydd * upper * upper > 2.0 {
                (2.0 / ydd).sqrt()
            } else {
                (guess * upper).sqrt()
            };
            if pass == 4 {
                break;
            }
            let ratio = proposal / guess;
            if ratio > 0.5 && ratio < 2.0 {
                break;
            }
            if pass > 1 && ratio > 2.0 {
                proposal = guess;
                break;
            }
            guess = proposal;
        }
        (0.5 * proposal).clamp(lower, upper).min(h_max).max(self.options.h_min)
    }

    /// Weighted norm of `(f(t0 + h, y0 + h y0') - y0') / h`.
    pub(super) fn second_derivative_norm(&mut self, system: &mut dyn OdeSystem, h: f64) -> f64 {
        for ((y, z0), z1) in self.y.iter_mut().zip(&self.zn[0]).zip(&self.zn[1]) {
            *y = z0 + h * z1;
        }
        system.rhs(self.tn + h, &self.y, &mut self.tempv);
        self.stats.rhs_evals += 1;
        for (t, z1) in self.tempv.iter_mut().zip(&self.zn[1]) {
            *t = (*t - z1) / h;
        }
        let norm = wrms(&self.tempv, &self.ewt);
        if norm.is_finite() {
            norm
        } else {
            f64::MAX
        }
    }
}
