//! The fast thread's integrator: one fixed step per frame, explicit
//! (Runge–Kutta) or linearly implicit (Rosenbrock-W with the newest
//! iteration matrix the implicit thread published). Either costs a fixed
//! number of evaluations of `f`; neither allocates.

use tandem_models::Model;

use super::matrix::MatrixReader;
use crate::explicit::{ExplicitRk, Method};
use crate::ode::ModelOde;
use crate::rosenbrock::{WMethod, WStepper};
use crate::step::FixedStepper;

/// The fast thread's integrator.
pub enum FastStepper {
    /// An explicit Runge–Kutta method.
    Explicit(ExplicitRk),
    /// A Rosenbrock-W method and the matrices it steps with.
    LinearlyImplicit {
        /// The method's stages.
        stepper: WStepper,
        /// The newest published iteration matrix.
        matrices: MatrixReader,
    },
}

impl FastStepper {
    /// An explicit `method` for `n` states.
    pub fn explicit(method: Method, n: usize) -> Self {
        FastStepper::Explicit(ExplicitRk::new(method, n))
    }

    /// A linearly implicit `method` for `n` states, stepping with the
    /// newest of `matrices` (whose first must be published before the
    /// first step).
    pub fn linearly_implicit(method: WMethod, n: usize, mut matrices: MatrixReader) -> Self {
        FastStepper::LinearlyImplicit {
            stepper: WStepper::new(method, n).solving_with(matrices.factors()),
            matrices,
        }
    }

    /// Advances `x` from `t` by `h` with `xd` and `u` held; returns the
    /// frame whose state the iteration matrix was taken at (none for an
    /// explicit method).
    #[expect(
        clippy::too_many_arguments,
        reason = "a step of the state x it advances, from t by h, with xd and u held"
    )]
    pub fn step(&mut self, model: &mut dyn Model, t: f64, h: f64, x: &mut [f64], xd: &[f64], u: &[f64]) -> Option<u64> {
        let mut system = ModelOde { model, xd, u };
        match self {
            FastStepper::Explicit(rk) => {
                rk.step(&mut system, t, h, x);
                None
            }
            FastStepper::LinearlyImplicit { stepper, matrices } => {
                let m = matrices.latest();
                stepper.with_factors(&m.factors).step(&mut system, t, h, x);
                Some(m.frame)
            }
        }
    }
}
