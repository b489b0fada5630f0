//! Settings, counters and errors of the BDF integrator.

use std::fmt;

use super::jacobian::Increments;
use super::MAX_ORDER;
use crate::linalg::LinearSolver;

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
    /// The increments of difference Jacobians.
    pub increments: Increments,
    /// Dense or sparse storage of the Jacobian and its factors.
    pub linear_solver: LinearSolver,
}

impl Default for BdfOptions {
    fn default() -> Self {
        BdfOptions {
            rtol: 1e-6,
            atol: Tolerance::Scalar(1e-8),
            max_order: MAX_ORDER,
            h_max: f64::INFINITY,
            h_min: 0.0,
            increments: Increments::Cvode,
            linear_solver: LinearSolver::Auto,
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
    /// Too many steps without reaching the target time.
    #[error("BDF: {steps} steps from t = {t} s without reaching t = {target} s; the solution changes too fast there (or the state is not one the model can step from)")]
    TooMuchWork {
        /// Where the steps started.
        t: f64,
        /// The time they had to reach.
        target: f64,
        /// Steps taken.
        steps: u32,
    },
    /// Settings that cannot work.
    #[error("BDF settings: {0}")]
    Options(String),
}

/// Rejects settings no run can use.
pub(super) fn check(n: usize, options: &BdfOptions) -> Result<(), BdfError> {
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
