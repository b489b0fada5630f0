//! One interface for the methods that advance a system by a step whose
//! length the caller chooses: the explicit Runge–Kutta methods
//! ([`crate::explicit`]), the fixed-step implicit ones
//! ([`crate::implicit`]) and the Rosenbrock-W ones ([`crate::rosenbrock`],
//! with the factors of the iteration matrix they are given). The problem
//! is an [`OdeSystem`] (a model with its discrete states and inputs held
//! is [`crate::ode::ModelOde`]); the linear algebra is
//! [`crate::linalg`]'s. The variable-step BDF chooses its own steps and
//! has an interface of its own ([`crate::bdf::Bdf`]).

use crate::ode::OdeSystem;

/// What one step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepReport {
    /// Newton iterations taken (0 for explicit and linearly implicit
    /// methods).
    pub iterations: u32,
    /// The step's equations were solved to the tolerance (always for
    /// explicit and linearly implicit methods, which solve none or only
    /// linear ones).
    pub converged: bool,
}

impl StepReport {
    /// The report of a method without iterations.
    pub const DIRECT: StepReport = StepReport {
        iterations: 0,
        converged: true,
    };
}

/// A method that advances `dy/dt = f(t, y)` by one step of a given length.
pub trait FixedStepper {
    /// Advances `y` from `t` to `t + h`, evaluating `system`'s `f` a
    /// bounded number of times. Allocates nothing.
    fn step(&mut self, system: &mut dyn OdeSystem, t: f64, h: f64, y: &mut [f64]) -> StepReport;

    /// Evaluations of `f` so far (difference Jacobians included).
    fn evaluations(&self) -> u64;
}
