//! A variable-order (1 to 5), variable-step BDF integrator with a modified
//! Newton iteration, local error control and dense output.
//!
//! # Formulation
//!
//! The history is a Nordsieck array `z_j = h^j y^(j)(t_n) / j!`, in the
//! fixed-leading-coefficient, variable-coefficient form of CVODE (Byrne and
//! Hindmarsh; Jackson and Sacks-Davis). We chose it over ode15s's NDF for
//! three reasons: the array *is* the interpolating polynomial, so dense
//! output costs `q` multiply-adds per state and a step-size change is a
//! rescaling of its columns; the error estimates and step/order heuristics
//! are CVODE's, so its statistics (`nst`, `nfe`, `nje`, ...) compare with
//! CVODE's one to one, which the `tandem bench stiff` comparison relies on;
//! and the variable-coefficient form keeps the order-`q` accuracy across
//! step changes that a fixed-coefficient interpolation loses.
//!
//! Newton's matrix `I - γJ` (`γ = h / l_1`) is factored only when the last
//! factorisation is 20 steps old, when `γ` has changed by more than 30 %
//! since, or after a failure; the Jacobian itself only when it is 50 steps
//! old or after a convergence failure. Everything is allocated in
//! [`Bdf::new`]: a step allocates nothing.

pub mod jacobian;

use std::fmt;

use jacobian::{Evaluation, Jacobian};
use tandem_models::linalg::Lu;

use crate::ode::OdeSystem;

/// The highest order.
pub const MAX_ORDER: usize = 5;

const ROUNDOFF: f64 = f64::EPSILON;
/// Newton iterations per attempt.
const MAX_NEWTON: u32 = 3;
/// Convergence-rate memory and divergence ratio of the Newton iteration.
const RATE_DECAY: f64 = 0.3;
const DIVERGENCE: f64 = 2.0;
/// Newton tolerance relative to the error test.
const NEWTON_COEFFICIENT: f64 = 0.1;
/// Steps between factorisations, and the change of γ forcing one.
const STEPS_PER_SETUP: u64 = 20;
const GAMMA_CHANGE_SETUP: f64 = 0.3;
/// Steps between Jacobians, and the change of γ beyond which a convergence
/// failure with an old Jacobian only refactors.
const STEPS_PER_JACOBIAN: u64 = 51;
const GAMMA_CHANGE_JACOBIAN: f64 = 0.2;
/// Step growth limits: first step, later steps; no change below `HOLD`.
const ETA_FIRST: f64 = 1e4;
const ETA_GROWTH: f64 = 10.0;
const HOLD: f64 = 1.5;
/// Step reduction after error-test failures and convergence failures.
const ETA_MIN: f64 = 0.1;
const ETA_MAX_AFTER_FAILURES: f64 = 0.2;
const ETA_CONVERGENCE: f64 = 0.25;
/// Bias factors of the order selection (lower, same, higher order).
const BIAS_LOWER: f64 = 6.0;
const BIAS_SAME: f64 = 6.0;
const BIAS_HIGHER: f64 = 10.0;
const ADDON: f64 = 1e-6;
const MAX_CONVERGENCE_FAILURES: u32 = 10;
const MAX_ERROR_FAILURES: u32 = 7;
const ERROR_FAILURES_BEFORE_ORDER_DROP: u32 = 3;
/// Steps to wait at order 1 after repeated failures.
const LONG_WAIT: usize = 10;
const ONE_PLUS: f64 = 1.000001;

/// Absolute tolerance: one for all states, or one per state.
#[derive(Clone, Debug, PartialEq)]
pub enum Tolerance {
    /// The same for every state.
    Scalar(f64),
    /// One per state.
    Vector(Vec<f64>),
}

/// Settings of the variable-step BDF.
#[derive(Clone, Debug, PartialEq)]
pub struct BdfOptions {
    /// Relative tolerance.
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: Tolerance,
    /// Highest order used, 1 to 5.
    pub max_order: usize,
    /// Largest step (infinite: none).
    pub h_max: f64,
    /// Smallest step (0: none).
    pub h_min: f64,
}

impl Default for BdfOptions {
    fn default() -> Self {
        BdfOptions {
            rtol: 1e-6,
            atol: Tolerance::Scalar(1e-8),
            max_order: MAX_ORDER,
            h_max: f64::INFINITY,
            h_min: 0.0,
        }
    }
}

/// Counters of a run, named as CVODE names them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BdfStats {
    /// Steps taken (`nst`).
    pub steps: u64,
    /// Evaluations of `f` by the integrator (`nfe`).
    pub rhs_evals: u64,
    /// Evaluations of `f` for difference Jacobians (`nfeLS`).
    pub rhs_evals_jacobian: u64,
    /// Jacobian evaluations (`nje`).
    pub jacobian_evals: u64,
    /// LU factorisations of `I - γJ` (`nsetups`).
    pub factorizations: u64,
    /// Newton iterations (`nni`).
    pub newton_iterations: u64,
    /// Newton convergence failures, including those retried with a fresh
    /// Jacobian at the same step (CVODE's `nnf`, printed as `ncfn`).
    pub convergence_failures: u64,
    /// Local error test failures (`netf`).
    pub error_test_failures: u64,
}

impl BdfStats {
    /// Adds another run's counters.
    pub fn add(&mut self, other: &BdfStats) {
        self.steps += other.steps;
        self.rhs_evals += other.rhs_evals;
        self.rhs_evals_jacobian += other.rhs_evals_jacobian;
        self.jacobian_evals += other.jacobian_evals;
        self.factorizations += other.factorizations;
        self.newton_iterations += other.newton_iterations;
        self.convergence_failures += other.convergence_failures;
        self.error_test_failures += other.error_test_failures;
    }
}

impl fmt::Display for BdfStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "nst {}, nfe {}, nfeLS {}, nje {}, nsetups {}, nni {}, ncfn {}, netf {}",
            self.steps,
            self.rhs_evals,
            self.rhs_evals_jacobian,
            self.jacobian_evals,
            self.factorizations,
            self.newton_iterations,
            self.convergence_failures,
            self.error_test_failures
        )
    }
}

/// Why the integrator gave up.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BdfError {
    /// The error test failed repeatedly, or the step fell below `h_min`.
    #[error("BDF: the local error test failed {failures} times in a row at t = {t} s (step {h} s); the solution may be singular there, or the tolerances too tight for it")]
    ErrorTest {
        /// Time of the failing step's start.
        t: f64,
        /// Last step size tried.
        h: f64,
        /// Failures in a row.
        failures: u32,
    },
    /// Newton's iteration failed to converge repeatedly.
    #[error("BDF: the Newton iteration failed to converge {failures} times in a row at t = {t} s (step {h} s); check that the model is smooth there, or loosen the tolerances")]
    Convergence {
        /// Time of the failing step's start.
        t: f64,
        /// Last step size tried.
        h: f64,
        /// Failures in a row.
        failures: u32,
    },
    /// Settings that cannot work.
    #[error("BDF settings: {0}")]
    Options(String),
}

/// Why the previous attempt of the current step failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Attempt {
    First,
    AfterConvergenceFailure,
    AfterErrorFailure,
}

/// What the linear setup is told about the failure that calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SetupReason {
    NoFailure,
    BadJacobian,
    OtherFailure,
}

/// The variable-step BDF integrator with all its memory.
pub struct Bdf {
    options: BdfOptions,
    max_order: usize,
    /// Nordsieck array: `zn[j] = h^j y^(j) / j!` at `tn`.
    zn: Vec<Vec<f64>>,
    ewt: Vec<f64>,
    /// Newton correction `y_n - y_n(0)`.
    acor: Vec<f64>,
    /// Newton iterate.
    y: Vec<f64>,
    /// `f` at the iterate.
    ftemp: Vec<f64>,
    tempv: Vec<f64>,
    delta: Vec<f64>,
    jacobian: Jacobian,
    lu: Lu,
    tn: f64,
    h: f64,
    hprime: f64,
    hscale: f64,
    eta: f64,
    etamax: f64,
    /// Step of the last successful step.
    hu: f64,
    q: usize,
    qprime: usize,
    qwait: usize,
    /// Last step sizes, `tau[1]` the latest.
    tau: [f64; MAX_ORDER + 2],
    /// Test quantities (error constants) of the current order.
    tq: [f64; 6],
    /// Corrector coefficients.
    l: [f64; MAX_ORDER + 1],
    rl1: f64,
    gamma: f64,
    gammap: f64,
    gamrat: f64,
    /// Estimated Newton convergence rate.
    rate: f64,
    delp: f64,
    acnrm: f64,
    saved_tq5: f64,
    /// Steps since the last (re)start.
    nst: u64,
    /// Values of `nst` at the last factorisation and the last Jacobian.
    nstlp: u64,
    nstlj: u64,
    /// The Jacobian was evaluated at this step's attempt.
    jcur: bool,
    stats: BdfStats,
    /// The step being taken may not pass this time, and lands exactly on
    /// it when it reaches it.
    t_stop: f64,
}

/// Weighted root-mean-square norm.
pub(crate) fn wrms(v: &[f64], w: &[f64]) -> f64 {
    let sum: f64 = v.iter().zip(w).map(|(a, b)| (a * b) * (a * b)).sum();
    (sum / v.len().max(1) as f64).sqrt()
}

impl Bdf {
    /// An integrator for `n` states, with the given sparsity of the
    /// Jacobian (for each column, its rows) when known.
    pub fn new(n: usize, options: BdfOptions, sparsity: Option<Vec<Vec<usize>>>) -> Result<Self, BdfError> {
        check_options(n, &options)?;
        let max_order = options.max_order;
        Ok(Bdf {
            options,
            max_order,
            zn: vec![vec![0.0; n]; MAX_ORDER + 1],
            ewt: vec![0.0; n],
            acor: vec![0.0; n],
            y: vec![0.0; n],
            ftemp: vec![0.0; n],
            tempv: vec![0.0; n],
            delta: vec![0.0; n],
            jacobian: Jacobian::new(n, sparsity),
            lu: Lu::new(n),
            tn: 0.0,
            h: 0.0,
            hprime: 0.0,
            hscale: 0.0,
            eta: 1.0,
            etamax: ETA_FIRST,
            hu: 0.0,
            q: 1,
            qprime: 1,
            qwait: 2,
            tau: [0.0; MAX_ORDER + 2],
            tq: [0.0; 6],
            l: [0.0; MAX_ORDER + 1],
            rl1: 1.0,
            gamma: 0.0,
            gammap: 0.0,
            gamrat: 1.0,
            rate: 1.0,
            delp: 0.0,
            acnrm: 0.0,
            saved_tq5: 0.0,
            nst: 0,
            nstlp: 0,
            nstlj: 0,
            jcur: false,
            stats: BdfStats::default(),
            t_stop: f64::INFINITY,
        })
    }

    /// Counters since creation.
    pub fn stats(&self) -> &BdfStats {
        &self.stats
    }

    /// Evaluations of `f` per difference Jacobian (column groups).
    pub fn jacobian_groups(&self) -> usize {
        self.jacobian.groups()
    }

    /// Time reached.
    pub fn t(&self) -> f64 {
        self.tn
    }

    /// State at [`Bdf::t`].
    pub fn y(&self) -> &[f64] {
        &self.zn[0]
    }

    /// Order and size of the last successful step.
    pub fn last_step(&self) -> (usize, f64) {
        (self.q, self.hu)
    }

    /// Starts (or restarts, after an event) from `y0` at `t0`, at order 1,
    /// with an initial step estimated for reaching `t_out`.
    pub fn init(&mut self, system: &mut dyn OdeSystem, t0: f64, y0: &[f64], t_out: f64) {
        self.tn = t0;
        self.zn[0].copy_from_slice(y0);
        self.set_weights();
        system.rhs(t0, y0, &mut self.zn[1]);
        self.stats.rhs_evals += 1;
        let h0 = self.initial_step(system, t_out);
        for v in &mut self.zn[1] {
            *v *= h0;
        }
        self.h = h0;
        self.hprime = h0;
        self.hscale = h0;
        self.hu = 0.0;
        self.eta = 1.0;
        self.etamax = ETA_FIRST;
        self.q = 1;
        self.qprime = 1;
        self.qwait = 2;
        self.tau = [0.0; MAX_ORDER + 2];
        self.saved_tq5 = 0.0;
        self.rate = 1.0;
        self.gamrat = 1.0;
        self.nst = 0;
        self.nstlp = 0;
        self.nstlj = 0;
        self.jcur = false;
    }

    /// The absolute tolerance of state `i`.
    fn atol(&self, i: usize) -> f64 {
        match &self.options.atol {
            Tolerance::Scalar(a) => *a,
            Tolerance::Vector(v) => v[i],
        }
    }

    /// Error weights `1 / (rtol |y_i| + atol_i)` at the current state.
    fn set_weights(&mut self) {
        for i in 0..self.ewt.len() {
            self.ewt[i] = 1.0 / (self.options.rtol * self.zn[0][i].abs() + self.atol(i));
        }
    }

    /// CVODE's initial step: the step whose second-order error estimate
    /// (from a difference of `f`) is 1/2 in the weighted norm, refined up
    /// to four times, bounded by 0.1 of the distance to `t_out` and by
    /// `0.1 |y| / |y'|`.
    fn initial_step(&mut self, system: &mut dyn OdeSystem, t_out: f64) -> f64 {
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
    fn second_derivative_norm(&mut self, system: &mut dyn OdeSystem, h: f64) -> f64 {
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

    /// Takes one step, never past `t_stop` (infinite: no limit): a step that
    /// would pass it is shortened to end exactly on it.
    pub fn step(&mut self, system: &mut dyn OdeSystem, t_stop: f64) -> Result<(), BdfError> {
        if self.nst > 0 {
            self.set_weights();
        }
        self.t_stop = t_stop;
        if self.tn + self.hprime > t_stop {
            self.hprime = t_stop - self.tn;
        }
        if self.hprime != self.h || self.qprime != self.q {
            self.eta = self.hprime / self.h;
            self.adjust_parameters();
        }
        let saved_t = self.tn;
        let mut attempt = Attempt::First;
        let mut convergence_failures = 0;
        let mut error_failures = 0;
        let dsm = loop {
            self.predict();
            self.set_coefficients();
            if !self.solve_newton(system, attempt) {
                self.stats.convergence_failures += 1;
                self.restore(saved_t);
                convergence_failures += 1;
                self.etamax = 1.0;
                if self.h.abs() <= self.options.h_min * ONE_PLUS || convergence_failures == MAX_CONVERGENCE_FAILURES {
                    return Err(BdfError::Convergence {
                        t: saved_t,
                        h: self.h,
                        failures: convergence_failures,
                    });
                }
                self.eta = ETA_CONVERGENCE.max(self.options.h_min / self.h.abs());
                attempt = Attempt::AfterConvergenceFailure;
                self.rescale();
                continue;
            }
            let dsm = self.acnrm * self.tq[2];
            if dsm <= 1.0 {
                break dsm;
            }
            self.stats.error_test_failures += 1;
            error_failures += 1;
            attempt = Attempt::AfterErrorFailure;
            self.restore(saved_t);
            if self.h.abs() <= self.options.h_min * ONE_PLUS || error_failures == MAX_ERROR_FAILURES {
                return Err(BdfError::ErrorTest {
                    t: saved_t,
                    h: self.h,
                    failures: error_failures,
                });
            }
            self.after_error_failure(system, dsm, error_failures);
        };
        self.complete_step();
        self.prepare_next_step(dsm);
        self.etamax = ETA_GROWTH;
        Ok(())
    }

    /// Chooses the next attempt after a failed error test: a smaller step,
    /// then a lower order, then a restart at order 1 from `f`.
    fn after_error_failure(&mut self, system: &mut dyn OdeSystem, dsm: f64, failures: u32) {
        self.etamax = 1.0;
        let floor = ETA_MIN.max(self.options.h_min / self.h.abs());
        if failures <= ERROR_FAILURES_BEFORE_ORDER_DROP {
            let order = (self.q + 1) as f64;
            let mut eta = 1.0 / ((BIAS_SAME * dsm).powf(1.0 / order) + ADDON);
            eta = eta.max(floor);
            if failures >= 2 {
                eta = eta.min(ETA_MAX_AFTER_FAILURES);
            }
            self.eta = if eta.is_finite() { eta } else { floor };
            self.rescale();
        } else if self.q > 1 {
            self.eta = floor;
            self.adjust_order(-1);
            self.qwait = self.q;
            self.q -= 1;
            self.rescale();
        } else {
            self.eta = floor;
            self.h *= self.eta;
            self.hscale = self.h;
            self.qwait = LONG_WAIT;
            system.rhs(self.tn, &self.zn[0], &mut self.tempv);
            self.stats.rhs_evals += 1;
            for (z, f) in self.zn[1].iter_mut().zip(&self.tempv) {
                *z = self.h * f;
            }
        }
    }

    /// Applies a pending order change and rescales to the pending step.
    fn adjust_parameters(&mut self) {
        if self.qprime != self.q {
            self.adjust_order(self.qprime as isize - self.q as isize);
            self.q = self.qprime;
            self.qwait = self.q + 1;
        }
        self.rescale();
    }

    /// Rescales the Nordsieck array to the step `eta * h`.
    fn rescale(&mut self) {
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
    fn predict(&mut self) {
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
    fn restore(&mut self, saved_t: f64) {
        self.tn = saved_t;
        for k in 1..=self.q {
            for j in (k..=self.q).rev() {
                add_column(&mut self.zn, j - 1, j, -1.0);
            }
        }
    }

    /// Corrector coefficients `l` and error constants `tq` for order `q`
    /// and the recent step sizes.
    fn set_coefficients(&mut self) {
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
    fn set_error_constants(&mut self, mut hsum: f64, alpha0: f64, alpha0_hat: f64, mut xi_inv: f64, xistar_inv: f64) {
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

    /// The modified Newton iteration for the corrector; leaves the
    /// correction in `acor` and its norm in `acnrm`. Returns `false` on a
    /// convergence failure (with the Jacobian current), a singular matrix
    /// or a non-finite `f`.
    fn solve_newton(&mut self, system: &mut dyn OdeSystem, attempt: Attempt) -> bool {
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
                self.lu.solve(&mut self.delta);
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
    fn residual(&mut self, system: &mut dyn OdeSystem) -> bool {
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
    fn setup(&mut self, system: &mut dyn OdeSystem, reason: SetupReason) -> bool {
        let dgamma = (self.gamma / self.gammap - 1.0).abs();
        let refresh = self.nst == 0
            || self.nst >= self.nstlj + STEPS_PER_JACOBIAN
            || (reason == SetupReason::BadJacobian && dgamma < GAMMA_CHANGE_JACOBIAN)
            || reason == SetupReason::OtherFailure;
        if refresh {
            self.stats.jacobian_evals += 1;
            self.nstlj = self.nst;
            self.jcur = true;
            let evaluation = self
                .jacobian
                .evaluate(system, self.tn, &self.y, &self.ftemp, &self.ewt, self.h);
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
        self.lu.factor_shifted(&self.jacobian.matrix, self.gamma)
    }

    /// Applies the correction to the Nordsieck array and shifts the step
    /// history.
    fn complete_step(&mut self) {
        self.nst += 1;
        self.stats.steps += 1;
        self.hu = self.h;
        let q = self.q;
        for i in (2..=q).rev() {
            self.tau[i] = self.tau[i - 1];
        }
        if q == 1 && self.nst > 1 {
            self.tau[2] = self.tau[1];
        }
        self.tau[1] = self.h;
        for j in 0..=q {
            let l = self.l[j];
            for (z, a) in self.zn[j].iter_mut().zip(&self.acor) {
                *z += l * a;
            }
        }
        self.qwait -= 1;
        if self.qwait == 1 && q != self.max_order {
            self.zn[self.max_order].copy_from_slice(&self.acor);
            self.saved_tq5 = self.tq[5];
        }
    }

    /// Chooses the next step size and order from the error estimates at
    /// orders `q - 1`, `q` and `q + 1`.
    fn prepare_next_step(&mut self, dsm: f64) {
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
    fn eta_lower_order(&self) -> f64 {
        if self.q == 1 {
            return 0.0;
        }
        let ddn = wrms(&self.zn[self.q], &self.ewt) * self.tq[1];
        1.0 / ((BIAS_LOWER * ddn).powf(1.0 / self.q as f64) + ADDON)
    }

    /// Step ratio estimated for order `q + 1`.
    fn eta_higher_order(&mut self) -> f64 {
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
    fn set_eta(&mut self) {
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
    fn adjust_order(&mut self, delta: isize) {
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
    fn increase_order(&mut self) {
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
    fn decrease_order(&mut self) {
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

    /// The solution at `t` from the interpolating polynomial of the last
    /// step (`t` in `[t_n - h_u, t_n]`; slightly beyond extrapolates).
    pub fn interpolate(&self, t: f64, out: &mut [f64]) {
        let s = (t - self.tn) / self.hscale;
        out.copy_from_slice(&self.zn[self.q]);
        for j in (0..self.q).rev() {
            for (o, z) in out.iter_mut().zip(&self.zn[j]) {
                *o = z + s * *o;
            }
        }
    }

    /// Steps until `t_out` is reached or passed (never past `t_stop`) and
    /// interpolates the solution there, as CVODE's normal mode.
    pub fn solve_to(
        &mut self,
        system: &mut dyn OdeSystem,
        t_out: f64,
        t_stop: f64,
        out: &mut [f64],
    ) -> Result<(), BdfError> {
        while self.tn < t_out {
            self.step(system, t_stop)?;
        }
        self.interpolate(t_out, out);
        Ok(())
    }
}

/// `zn[dst] += factor * zn[src]` for two different columns.
fn add_column(zn: &mut [Vec<f64>], dst: usize, src: usize, factor: f64) {
    let (d, s) = if dst < src {
        let (a, b) = zn.split_at_mut(src);
        (&mut a[dst], &b[0])
    } else {
        let (a, b) = zn.split_at_mut(dst);
        (&mut b[0], &a[src])
    };
    for (x, y) in d.iter_mut().zip(s.iter()) {
        *x += factor * y;
    }
}

/// Rejects settings no run can use.
fn check_options(n: usize, options: &BdfOptions) -> Result<(), BdfError> {
    let bad = |m: String| Err(BdfError::Options(m));
    if !(options.rtol >= 0.0 && options.rtol < 1.0) {
        return bad(format!("rtol must be in [0, 1), found {}", options.rtol));
    }
    match &options.atol {
        Tolerance::Scalar(a) if !(*a > 0.0 || (*a == 0.0 && options.rtol > 0.0)) => {
            return bad(format!("atol must be > 0 (or 0 with rtol > 0), found {a}"))
        }
        Tolerance::Vector(v) if v.len() != n => return bad(format!("atol has {} values for {n} states", v.len())),
        Tolerance::Vector(v) if v.iter().any(|a| a.is_nan() || *a <= 0.0) => {
            return bad("every atol must be > 0".into())
        }
        _ => {}
    }
    if !(1..=MAX_ORDER).contains(&options.max_order) {
        return bad(format!(
            "max_order must be 1 to {MAX_ORDER}, found {}",
            options.max_order
        ));
    }
    if options.h_max.is_nan()
        || options.h_max <= 0.0
        || options.h_min.is_nan()
        || options.h_min < 0.0
        || options.h_min > options.h_max
    {
        return bad(format!(
            "need 0 <= h_min <= h_max and h_max > 0, found h_min {} and h_max {}",
            options.h_min, options.h_max
        ));
    }
    Ok(())
}
