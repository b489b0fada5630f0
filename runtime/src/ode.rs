//! The system an implicit integrator solves, `dy/dt = f(t, y)`, and the
//! view of a [`Model`] as one (discrete states and inputs held).

use tandem_models::{Model, StateRef};

/// An ODE system `dy/dt = f(t, y)` with an optional analytic Jacobian and
/// structural sparsity.
pub trait OdeSystem {
    /// Number of states.
    fn len(&self) -> usize;

    /// Whether there are no states.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes `f(t, y)` into `dy`. Must not allocate.
    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]);

    /// Writes `∂f/∂y` column-major into `jac` (`n × n`) and returns `true`,
    /// or returns `false` to have it estimated by finite differences.
    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut [f64]) -> bool {
        let _ = (t, y, jac);
        false
    }

    /// For each state `j`, the components of `f` that depend on `y_j`, when
    /// known; finite differences then perturb independent columns together.
    fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
        None
    }

    /// The model behind `f` with its held discrete states and inputs, when
    /// `f` is a model's derivatives: helper threads evaluate forks of it.
    fn held_model(&self) -> Option<HeldModel<'_>> {
        None
    }
}

/// A model's derivatives with the discrete states and inputs held.
pub struct HeldModel<'a> {
    /// The model.
    pub model: &'a dyn Model,
    /// Discrete states.
    pub xd: &'a [f64],
    /// Inputs.
    pub u: &'a [f64],
}

/// A model's continuous part as an ODE system, with its discrete states and
/// inputs held.
pub struct ModelOde<'a> {
    /// The model.
    pub model: &'a mut dyn Model,
    /// Discrete states (held).
    pub xd: &'a [f64],
    /// Inputs (held).
    pub u: &'a [f64],
}

impl OdeSystem for ModelOde<'_> {
    fn len(&self) -> usize {
        self.model.layout().states.len()
    }

    fn rhs(&mut self, t: f64, y: &[f64], dy: &mut [f64]) {
        let s = StateRef {
            t,
            x: y,
            xd: self.xd,
            u: self.u,
        };
        self.model.derivatives(s, dy);
    }

    fn jacobian(&mut self, t: f64, y: &[f64], jac: &mut [f64]) -> bool {
        let s = StateRef {
            t,
            x: y,
            xd: self.xd,
            u: self.u,
        };
        self.model.jacobian(s, jac)
    }

    fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
        self.model.sparsity()
    }

    fn held_model(&self) -> Option<HeldModel<'_>> {
        Some(HeldModel {
            model: &*self.model,
            xd: self.xd,
            u: self.u,
        })
    }
}
