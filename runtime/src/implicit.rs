//! Fixed-step implicit methods for real-time use: backward Euler (BDF1),
//! BDF2 and the trapezoidal rule, each step a bounded number of Newton
//! iterations with its convergence reported, never an unbounded loop.
//!
//! Every method solves `y₁ = a + γ f(t₁, y₁)` for the new state with
//! Newton's matrix `I - γJ`. The Jacobian is evaluated at the first step
//! and again at the step after one that did not converge; the matrix is
//! refactored whenever `γ` changes. Nothing is allocated after
//! [`FixedImplicit::new`].

use std::fmt;
use std::str::FromStr;

use crate::bdf::jacobian::{Evaluation, Increments, Jacobian};
use crate::bdf::wrms;
use crate::linalg::{Factors, LinearSolver, SolveWork};
use crate::named::UnknownName;
use crate::ode::OdeSystem;
use crate::step::{FixedStepper, StepReport};

/// The fixed-step implicit methods.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImplicitMethod {
    /// Backward Euler, order 1, L-stable.
    Bdf1,
    /// Two-step BDF at a constant step, order 2, L-stable; its first step
    /// (and any step after a reset or a change of step) is backward Euler.
    Bdf2,
    /// The trapezoidal rule, order 2, A-stable.
    Trapezoidal,
}

impl ImplicitMethod {
    /// All methods, for listing valid names.
    pub const ALL: [ImplicitMethod; 3] = [ImplicitMethod::Bdf1, ImplicitMethod::Bdf2, ImplicitMethod::Trapezoidal];

    /// The name used in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ImplicitMethod::Bdf1 => "bdf1",
            ImplicitMethod::Bdf2 => "bdf2",
            ImplicitMethod::Trapezoidal => "trapezoidal",
        }
    }
}

impl fmt::Display for ImplicitMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ImplicitMethod {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        crate::named::by_name(&ImplicitMethod::ALL, ImplicitMethod::name, s, "implicit method")
    }
}

/// Settings of the fixed-step implicit integrator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImplicitSettings {
    /// The method.
    pub method: ImplicitMethod,
    /// Newton iterations per step, at most.
    pub max_iterations: u32,
    /// Newton has converged when its last update is below
    /// `rtol |y| + atol` in the weighted RMS norm.
    pub rtol: f64,
    /// See `rtol`.
    pub atol: f64,
    /// The increments of difference Jacobians.
    pub increments: Increments,
    /// Dense or sparse storage of the Jacobian and its factors.
    pub linear_solver: LinearSolver,
}

impl Default for ImplicitSettings {
    fn default() -> Self {
        ImplicitSettings {
            method: ImplicitMethod::Bdf2,
            max_iterations: 4,
            rtol: 1e-6,
            atol: 1e-8,
            increments: Increments::Cvode,
            linear_solver: LinearSolver::Auto,
        }
    }
}

/// Counters of the fixed-step implicit integrator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImplicitStats {
    /// Steps taken.
    pub steps: u64,
    /// Evaluations of `f`, difference Jacobians included.
    pub rhs_evals: u64,
    /// Jacobian evaluations.
    pub jacobian_evals: u64,
    /// LU factorisations.
    pub factorizations: u64,
    /// Newton iterations.
    pub newton_iterations: u64,
    /// Steps whose Newton iteration did not converge.
    pub unconverged: u64,
}

/// A fixed-step implicit integrator with its memory.
pub struct FixedImplicit {
    settings: ImplicitSettings,
    jacobian: Jacobian,
    factors: Factors,
    solve_work: SolveWork,
    /// `γ` of the current factorisation (NaN: none).
    factored: f64,
    /// Evaluate the Jacobian before the next iteration.
    refresh: bool,
    /// The state one step back and the step that led from it (BDF2).
    previous: Vec<f64>,
    previous_step: Option<f64>,
    base: Vec<f64>,
    y0: Vec<f64>,
    f: Vec<f64>,
    delta: Vec<f64>,
    weights: Vec<f64>,
    stats: ImplicitStats,
}

impl FixedImplicit {
    /// An integrator for `n` states, with the Jacobian's sparsity (for each
    /// column, its rows) when known.
    pub fn new(n: usize, settings: ImplicitSettings, sparsity: Option<Vec<Vec<usize>>>) -> Self {
        let jacobian = Jacobian::new(n, sparsity, settings.linear_solver);
        let factors = Factors::new(&jacobian.matrix);
        FixedImplicit {
            settings,
            solve_work: factors.solve_work(),
            jacobian,
            factors,
            factored: f64::NAN,
            refresh: true,
            previous: vec![0.0; n],
            previous_step: None,
            base: vec![0.0; n],
            y0: vec![0.0; n],
            f: vec![0.0; n],
            delta: vec![0.0; n],
            weights: vec![0.0; n],
            stats: ImplicitStats::default(),
        }
    }

    /// The Jacobian, to spread its differences over helper threads.
    pub fn jacobian_mut(&mut self) -> &mut Jacobian {
        &mut self.jacobian
    }

    /// Counters so far.
    pub fn stats(&self) -> &ImplicitStats {
        &self.stats
    }

    /// Forgets the step history, after a discontinuity or when the state
    /// was replaced from outside (BDF2 restarts with backward Euler).
    pub fn reset(&mut self) {
        self.previous_step = None;
    }

    /// Sets the constant part `a` of `y₁ = a + γ f(t₁, y₁)`, writes the
    /// predictor into `y` and returns `γ`.
    fn predict(&mut self, system: &mut dyn OdeSystem, t: f64, h: f64, y: &mut [f64]) -> f64 {
        let two_step = self.settings.method == ImplicitMethod::Bdf2 && self.previous_step == Some(h);
        match self.settings.method {
            ImplicitMethod::Bdf2 if two_step => {
                for (((a, y), y0), yp) in self.base.iter_mut().zip(y.iter_mut()).zip(&self.y0).zip(&self.previous) {
                    *a = (4.0 * y0 - yp) / 3.0;
                    *y = 2.0 * y0 - yp;
                }
                2.0 * h / 3.0
            }
            ImplicitMethod::Bdf1 | ImplicitMethod::Bdf2 => {
                self.base.copy_from_slice(&self.y0);
                h
            }
            ImplicitMethod::Trapezoidal => {
                system.rhs(t, &self.y0, &mut self.f);
                self.stats.rhs_evals += 1;
                for (((a, y), y0), f) in self.base.iter_mut().zip(y.iter_mut()).zip(&self.y0).zip(&self.f) {
                    *a = y0 + 0.5 * h * f;
                    *y = y0 + h * f;
                }
                0.5 * h
            }
        }
    }

    /// Re-evaluates the Jacobian at `(t, y)` where `f` holds `f(t, y)`.
    fn evaluate_jacobian(&mut self, system: &mut dyn OdeSystem, t: f64, y: &[f64], h: f64) {
        for (w, y) in self.weights.iter_mut().zip(y) {
            *w = 1.0 / (self.settings.rtol * y.abs() + self.settings.atol);
        }
        let increments = self.settings.increments;
        if let Evaluation::Differences(n) = self
            .jacobian
            .evaluate(system, t, y, &self.f, &self.weights, h, increments)
        {
            self.stats.rhs_evals += u64::from(n);
        }
        self.stats.jacobian_evals += 1;
        self.refresh = false;
        self.factored = f64::NAN;
    }
}

impl FixedStepper for FixedImplicit {
    /// Newton's iterations are bounded by the settings' `max_iterations`.
    fn step(&mut self, system: &mut dyn OdeSystem, t: f64, h: f64, y: &mut [f64]) -> StepReport {
        self.y0.copy_from_slice(y);
        let gamma = self.predict(system, t, h, y);
        let t1 = t + h;
        let mut report = StepReport {
            iterations: 0,
            converged: false,
        };
        while report.iterations < self.settings.max_iterations {
            system.rhs(t1, y, &mut self.f);
            self.stats.rhs_evals += 1;
            if self.refresh {
                self.evaluate_jacobian(system, t1, y, h);
            }
            if gamma != self.factored {
                self.stats.factorizations += 1;
                self.factored = if self.factors.factor_shifted(&self.jacobian.matrix, gamma) {
                    gamma
                } else {
                    f64::NAN
                };
            }
            // δ solves (I - γJ) δ = -(y - a - γ f).
            for (((d, y), a), f) in self.delta.iter_mut().zip(y.iter()).zip(&self.base).zip(&self.f) {
                *d = a + gamma * f - y;
            }
            if self.factored.is_nan() {
                break;
            }
            self.factors.solve(&mut self.delta, &mut self.solve_work);
            for (y, d) in y.iter_mut().zip(&self.delta) {
                *y += d;
            }
            report.iterations += 1;
            for (w, y) in self.weights.iter_mut().zip(y.iter()) {
                *w = 1.0 / (self.settings.rtol * y.abs() + self.settings.atol);
            }
            let norm = wrms(&self.delta, &self.weights);
            if !norm.is_finite() {
                break;
            }
            if norm <= 1.0 {
                report.converged = true;
                break;
            }
        }
        self.stats.steps += 1;
        self.stats.newton_iterations += u64::from(report.iterations);
        if !report.converged {
            self.stats.unconverged += 1;
            self.refresh = true;
        }
        self.previous.copy_from_slice(&self.y0);
        self.previous_step = Some(h);
        report
    }

    fn evaluations(&self) -> u64 {
        self.stats.rhs_evals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// y' = -λ (y - cos t) - sin t, whose solution from y(0) = 1 is cos t.
    struct Tracker(f64);
    impl OdeSystem for Tracker {
        fn len(&self) -> usize {
            1
        }
        fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
            dy[0] = -self.0 * (y[0] - t.cos()) - t.sin();
        }
    }

    fn error_at_one(method: ImplicitMethod, lambda: f64, h: f64) -> f64 {
        let settings = ImplicitSettings {
            method,
            rtol: 1e-12,
            atol: 1e-12,
            ..ImplicitSettings::default()
        };
        let mut integrator = FixedImplicit::new(1, settings, None);
        let mut y = [1.0];
        let n = (1.0 / h).round() as usize;
        for i in 0..n {
            let report = integrator.step(&mut Tracker(lambda), i as f64 * h, h, &mut y);
            assert!(report.converged, "{method} step {i}: {report:?}");
        }
        (y[0] - 1f64.cos()).abs()
    }

    #[test]
    fn methods_converge_at_their_order() {
        for (method, order) in [
            (ImplicitMethod::Bdf1, 1.0),
            (ImplicitMethod::Bdf2, 2.0),
            (ImplicitMethod::Trapezoidal, 2.0),
        ] {
            let observed = (error_at_one(method, 2.0, 0.01) / error_at_one(method, 2.0, 0.005)).log2();
            assert!((observed - order).abs() < 0.15, "{method}: observed order {observed}");
        }
    }

    #[test]
    fn stiff_problems_stay_stable_far_beyond_explicit_limits() {
        // λ h = 1e4: every explicit method would explode.
        for method in ImplicitMethod::ALL {
            let e = error_at_one(method, 1e6, 0.01);
            assert!(e < 1e-5, "{method}: error {e}");
        }
    }

    /// Van der Pol with mu = 1000: strongly nonlinear.
    struct VanDerPol;
    impl OdeSystem for VanDerPol {
        fn len(&self) -> usize {
            2
        }
        fn rhs(&mut self, _: f64, y: &[f64], dy: &mut [f64]) {
            dy[0] = y[1];
            dy[1] = 1e3 * (1.0 - y[0] * y[0]) * y[1] - y[0];
        }
    }

    #[test]
    fn a_bounded_iteration_reports_when_it_has_not_converged() {
        let settings = ImplicitSettings {
            method: ImplicitMethod::Bdf1,
            max_iterations: 1,
            ..ImplicitSettings::default()
        };
        let mut integrator = FixedImplicit::new(2, settings, None);
        let mut y = [2.0, 0.0];
        let report = integrator.step(&mut VanDerPol, 0.0, 0.5, &mut y);
        assert_eq!(
            report,
            StepReport {
                iterations: 1,
                converged: false
            }
        );
        assert_eq!(integrator.stats().unconverged, 1);
        // With room to iterate, the same step converges.
        let mut integrator = FixedImplicit::new(
            2,
            ImplicitSettings {
                max_iterations: 20,
                ..settings
            },
            None,
        );
        let mut y = [2.0, 0.0];
        assert!(integrator.step(&mut VanDerPol, 0.0, 0.5, &mut y).converged);
    }

    #[test]
    fn names_round_trip() {
        for m in ImplicitMethod::ALL {
            assert_eq!(m.name().parse::<ImplicitMethod>().unwrap(), m);
        }
        assert!("bdf3"
            .parse::<ImplicitMethod>()
            .unwrap_err()
            .to_string()
            .contains("bdf1, bdf2, trapezoidal"));
    }
}
