//! The Nordsieck array's bookkeeping: prediction, corrector coefficients
//! and error constants for variable steps, and the choice of the next step
//! size and order (with the array rescaled or its order changed).

use super::{
    add_column, wrms, Bdf, ADDON, BIAS_HIGHER, BIAS_LOWER, BIAS_SAME, HOLD, MAX_ORDER, NEWTON_COEFFICIENT, ROUNDOFF,
};

impl Bdf {
    /// Applies a pending order change and rescales to the pending step.
    pub(super) fn adjust_parameters(&mut self) {
        if self.qprime != self.q {
            self.adjust_order(self.qprime as isize - self.q as isize);
            self.q = self.qprime;
            self.qwait = self.q + 1;
        }
        self.rescale();
    }

    /// Rescales the Nordsieck array to the step `eta * h`.
    pub(super) fn rescale(&mut self) {
        let mut factor = self.eta;
        for j in 1..=self.q {
            for v in &mut self.zn[j] {
                *v *= factor;
            }
            factor *= self.eta;
        }
        self.h = self.hscale * self.eta;
        self.hprime = self.h;
        self.hscale = self.h;
    }

    /// Predicts `z` at `tn + h` (Pascal triangle on the Nordsieck array).
    pub(super) fn predict(&mut self) {
        let end = self.tn + self.h;
        let fuzz = 4.0 * ROUNDOFF * (self.t_stop.abs() + self.h.abs());
        self.tn = if end >= self.t_stop - fuzz { self.t_stop } else { end };
        for k in 1..=self.q {
            for j in (k..=self.q).rev() {
                add_column(&mut self.zn, j - 1, j, 1.0);
            }
        }
    }

    /// Undoes [`Bdf::predict`].
    pub(super) fn restore(&mut self, saved_t: f64) {
        self.tn = saved_t;
        for k in 1..=self.q {
            for j in (k..=self.q).rev() {
                add_column(&mut self.zn, j - 1, j, -1.0);
            }
        }
    }

    /// Corrector coefficients `l` and error constants `tq` for order `q`
    /// and the recent step sizes.
    pub(super) fn set_coefficients(&mut self) {
        let q = self.q;
        let h = self.h;
        self.l = [0.0; MAX_ORDER + 1];
        self.l[0] = 1.0;
        self.l[1] = 1.0;
        let mut xi_inv = 1.0;
        let mut xistar_inv = 1.0;
        let mut alpha0 = -1.0;
        let mut alpha0_hat = -1.0;
        let mut hsum = h;
        if q > 1 {
            for j in 2..q {
                hsum += self.tau[j - 1];
                xi_inv = h / hsum;
                alpha0 -= 1.0 / j as f64;
                for i in (1..=j).rev() {
                    self.l[i] += self.l[i - 1] * xi_inv;
                }
            }
            alpha0 -= 1.0 / q as f64;
            xistar_inv = -self.l[1] - alpha0;
            hsum += self.tau[q - 1];
            xi_inv = h / hsum;
            alpha0_hat = -self.l[1] - xi_inv;
            for i in (1..=q).rev() {
                self.l[i] += self.l[i - 1] * xistar_inv;
            }
        }
        self.set_error_constants(hsum, alpha0, alpha0_hat, xi_inv, xistar_inv);
        self.rl1 = 1.0 / self.l[1];
        self.gamma = h * self.rl1;
        if self.nst == 0 {
            self.gammap = self.gamma;
        }
        self.gamrat = if self.nst > 0 { self.gamma / self.gammap } else { 1.0 };
    }

    /// The test quantities: `tq[2]` the error constant of order `q`,
    /// `tq[1]` and `tq[3]` those of orders `q - 1` and `q + 1` (needed only
    /// when an order change is considered), `tq[4]` the Newton tolerance,
    /// `tq[5]` the ratio used for order increases.
    pub(super) fn set_error_constants(
        &mut self,
        mut hsum: f64,
        alpha0: f64,
        alpha0_hat: f64,
        mut xi_inv: f64,
        xistar_inv: f64,
    ) {
        let q = self.q;
        let a1 = 1.0 - alpha0_hat + alpha0;
        let a2 = 1.0 + q as f64 * a1;
        self.tq[2] = (a1 / (alpha0 * a2)).abs();
        self.tq[5] = (a2 * xistar_inv / (self.l[q] * xi_inv)).abs();
        if self.qwait == 1 {
            if q > 1 {
                let c = xistar_inv / self.l[q];
                let a3 = alpha0 + 1.0 / q as f64;
                let a4 = alpha0_hat + xi_inv;
                let cp_inv = (1.0 - a4 + a3) / a3;
                self.tq[1] = (c * cp_inv).abs();
            } else {
                self.tq[1] = 1.0;
            }
            hsum += self.tau[q];
            xi_inv = self.h / hsum;
            let a5 = alpha0 - 1.0 / (q + 1) as f64;
            let a6 = alpha0_hat - xi_inv;
            let cpp_inv = (1.0 - a6 + a5) / a2;
            self.tq[3] = (cpp_inv / (xi_inv * (q + 2) as f64 * a5)).abs();
        }
        self.tq[4] = NEWTON_COEFFICIENT / self.tq[2];
    }

    /// Chooses the next step size and order from the error estimates at
    /// orders `q - 1`, `q` and `q + 1`.
    pub(super) fn prepare_next_step(&mut self, dsm: f64) {
        if self.etamax == 1.0 {
            self.qwait = self.qwait.max(2);
            self.qprime = self.q;
            self.hprime = self.h;
            self.eta = 1.0;
            return;
        }
        let order = (self.q + 1) as f64;
        let eta_same = 1.0 / ((BIAS_SAME * dsm).powf(1.0 / order) + ADDON);
        if self.qwait != 0 {
            self.eta = eta_same;
            self.qprime = self.q;
            self.set_eta();
            return;
        }
        self.qwait = 2;
        let eta_lower = self.eta_lower_order();
        let eta_higher = self.eta_higher_order();
        let best = eta_lower.max(eta_same).max(eta_higher);
        if best < HOLD {
            self.eta = 1.0;
            self.qprime = self.q;
        } else if best == eta_same {
            self.eta = eta_same;
            self.qprime = self.q;
        } else if best == eta_lower {
            self.eta = eta_lower;
            self.qprime = self.q - 1;
        } else {
            self.eta = eta_higher;
            self.qprime = self.q + 1;
            // Δ_n at the last step of order q, for the increase.
            self.zn[self.max_order].copy_from_slice(&self.acor);
        }
        self.set_eta();
    }

    /// Step ratio estimated for order `q - 1`.
    pub(super) fn eta_lower_order(&self) -> f64 {
        if self.q == 1 {
            return 0.0;
        }
        let ddn = wrms(&self.zn[self.q], &self.ewt) * self.tq[1];
        1.0 / ((BIAS_LOWER * ddn).powf(1.0 / self.q as f64) + ADDON)
    }

    /// Step ratio estimated for order `q + 1`.
    pub(super) fn eta_higher_order(&mut self) -> f64 {
        if self.q == self.max_order || self.saved_tq5 == 0.0 {
            return 0.0;
        }
        let order = self.q + 1;
        let cquot = (self.tq[5] / self.saved_tq5) * (self.h / self.tau[2]).powi(order as i32);
        for ((t, a), z) in self.tempv.iter_mut().zip(&self.acor).zip(&self.zn[self.max_order]) {
            *t = a - cquot * z;
        }
        let dup = wrms(&self.tempv, &self.ewt) * self.tq[3];
        1.0 / ((BIAS_HIGHER * dup).powf(1.0 / (order + 1) as f64) + ADDON)
    }

    /// Keeps the step unless it may grow by at least [`HOLD`]; bounds the
    /// growth and the step.
    pub(super) fn set_eta(&mut self) {
        if self.eta < HOLD {
            self.eta = 1.0;
            self.hprime = self.h;
        } else {
            self.eta = self.eta.min(self.etamax);
            self.eta /= (self.h.abs() * self.eta / self.options.h_max).max(1.0);
            self.hprime = self.h * self.eta;
        }
    }

    /// Changes the Nordsieck array for order `q + delta` (±1).
    pub(super) fn adjust_order(&mut self, delta: isize) {
        if self.q == 2 && delta != 1 {
            return;
        }
        if delta == 1 {
            self.increase_order();
        } else {
            self.decrease_order();
        }
    }

    /// Adds the column of order `q + 1`, from the correction saved at the
    /// last step.
    pub(super) fn increase_order(&mut self) {
        let q = self.q;
        self.l = [0.0; MAX_ORDER + 1];
        self.l[2] = 1.0;
        let mut alpha1 = 1.0;
        let mut prod = 1.0;
        let mut xiold = 1.0;
        let mut alpha0 = -1.0;
        let mut hsum = self.hscale;
        for j in 1..q {
            hsum += self.tau[j + 1];
            let xi = hsum / self.hscale;
            prod *= xi;
            alpha0 -= 1.0 / (j + 1) as f64;
            alpha1 += 1.0 / xi;
            for i in (2..=j + 2).rev() {
                self.l[i] = self.l[i] * xiold + self.l[i - 1];
            }
            xiold = xi;
        }
        let a1 = (-alpha0 - alpha1) / prod;
        let new = q + 1;
        if new != self.max_order {
            let (low, high) = self.zn.split_at_mut(self.max_order);
            low[new].copy_from_slice(&high[0]);
        }
        for v in &mut self.zn[new] {
            *v *= a1;
        }
        for j in 2..=q {
            add_column(&mut self.zn, j, new, self.l[j]);
        }
    }

    /// Drops the column of order `q`.
    pub(super) fn decrease_order(&mut self) {
        let q = self.q;
        self.l = [0.0; MAX_ORDER + 1];
        self.l[2] = 1.0;
        let mut hsum = 0.0;
        for j in 1..=q.saturating_sub(2) {
            hsum += self.tau[j];
            let xi = hsum / self.hscale;
            for i in (2..=j + 2).rev() {
                self.l[i] = self.l[i] * xi + self.l[i - 1];
            }
        }
        for j in 2..q {
            add_column(&mut self.zn, j, q, -self.l[j]);
        }
    }
}
