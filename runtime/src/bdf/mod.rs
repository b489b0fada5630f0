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

pub mod helpers;
pub mod jacobian;
mod newton;
mod options;
mod order;
mod start;

use jacobian::Jacobian;
use newton::Attempt;
pub use options::{BdfError, BdfOptions, BdfStats, Tolerance};

use crate::linalg::{Factors, SolveWork};
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
    factors: Factors,
    solve_work: SolveWork,
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
        options::check(n, &options)?;
        let max_order = options.max_order;
        let jacobian = Jacobian::new(n, sparsity, options.linear_solver);
        let factors = Factors::new(&jacobian.matrix);
        let solve_work = factors.solve_work();
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
            jacobian,
            factors,
            solve_work,
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

    /// The Jacobian, to spread its differences over helper threads
    /// ([`Jacobian::spread`]) and keep their models' definitions current.
    pub fn jacobian_mut(&mut self) -> &mut Jacobian {
        &mut self.jacobian
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

#[cfg(test)]
mod tests {
    use super::*;

    /// y' = -y (and y2' = -10 y2), from 1.
    struct Decay;
    impl OdeSystem for Decay {
        fn len(&self) -> usize {
            2
        }
        fn rhs(&mut self, _: f64, y: &[f64], dy: &mut [f64]) {
            dy[0] = -y[0];
            dy[1] = -10.0 * y[1];
        }
    }

    fn started(rtol: f64) -> Bdf {
        let options = BdfOptions {
            rtol,
            atol: Tolerance::Scalar(1e-12),
            ..BdfOptions::default()
        };
        let mut bdf = Bdf::new(2, options, None).unwrap();
        bdf.init(&mut Decay, 0.0, &[1.0, 1.0], 5.0);
        bdf
    }

    #[test]
    fn dense_output_inside_every_step_is_as_accurate_as_the_steps() {
        let mut bdf = started(1e-8);
        let mut y = [0.0; 2];
        let mut worst: f64 = 0.0;
        while bdf.t() < 5.0 {
            bdf.step(&mut Decay, f64::INFINITY).unwrap();
            let (_, h) = bdf.last_step();
            for k in 1..4 {
                let t = bdf.t() - h * k as f64 / 4.0;
                bdf.interpolate(t, &mut y);
                worst = worst.max(((y[0] - (-t).exp()) / (-t).exp()).abs());
            }
        }
        assert!(bdf.last_step().0 >= 3, "reached order {}", bdf.last_step().0);
        assert!(worst < 1e-6, "worst relative error between steps {worst:e}");
    }

    #[test]
    fn a_stop_time_is_landed_on_exactly() {
        let mut bdf = started(1e-6);
        while bdf.t() < 1.234 {
            bdf.step(&mut Decay, 1.234).unwrap();
        }
        assert_eq!(bdf.t(), 1.234);
        assert!((bdf.y()[0] - (-1.234f64).exp()).abs() < 1e-5);
    }

    #[test]
    fn bad_settings_are_refused_with_the_reason() {
        let bad = |options: BdfOptions| match Bdf::new(2, options, None) {
            Err(BdfError::Options(m)) => m,
            _ => panic!("accepted"),
        };
        assert!(bad(BdfOptions {
            rtol: -1.0,
            ..BdfOptions::default()
        })
        .contains("rtol"));
        assert!(bad(BdfOptions {
            max_order: 6,
            ..BdfOptions::default()
        })
        .contains("max_order"));
        assert!(bad(BdfOptions {
            atol: Tolerance::Vector(vec![1e-8]),
            ..BdfOptions::default()
        })
        .contains("1 values for 2"));
    }
}
