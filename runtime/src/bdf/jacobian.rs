//! The Jacobian `∂f/∂y`: analytic when the system provides it, otherwise by
//! forward differences, perturbing structurally independent columns
//! together (Curtis, Powell and Reid) so that a sparse system of `n` states
//! costs far fewer than `n` evaluations of `f`. The matrix is stored
//! dense or sparse ([`crate::linalg`]).

use std::ops::Range;
use std::sync::Arc;

use tandem_models::{Definition, Model};

use super::helpers::{JacobianHelpers, ThreadSetup};
use crate::linalg::{LinearSolver, Matrix, Pattern};
use crate::ode::OdeSystem;

/// The Jacobian and what estimating it needs, allocated once.
pub struct Jacobian {
    /// `∂f/∂y` on the system's pattern.
    pub matrix: Matrix,
    /// Columns perturbed together, one evaluation of `f` per group.
    groups: Vec<Vec<usize>>,
    /// Threads that evaluate groups beside the caller, and the groups the
    /// caller evaluates itself (all of them without helpers).
    helpers: Option<JacobianHelpers>,
    own: Range<usize>,
    y: Vec<f64>,
    f: Vec<f64>,
    increment: Vec<f64>,
}

/// How far a state is perturbed for a difference Jacobian.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Increments {
    /// CVODE's: `max(√u |y_j|, m / w_j)`, `m = 1000 |h| u n ‖f‖`, `w` the
    /// error weights. Counts compare with CVODE's one to one; but a state
    /// at 0 whose weight is `1/atol` gets an increment too small to change
    /// `f` in floating point (its column comes out 0) when `f` is small.
    #[default]
    Cvode,
    /// `√u max(|y_j|, 1)`: registers for every state of ordinary units
    /// (amperes, volts, radians per second), whatever the tolerances.
    Unit,
}

/// What one evaluation of the Jacobian cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Evaluation {
    /// The system's own Jacobian.
    Analytic,
    /// Finite differences with this many evaluations of `f`.
    Differences(u32),
}

impl Jacobian {
    /// Storage for an `n`-state system with the given sparsity (for each
    /// column, its rows; every entry when `None`), stored as `solver` says.
    pub fn new(n: usize, sparsity: Option<Vec<Vec<usize>>>, solver: LinearSolver) -> Self {
        let pattern = Arc::new(Pattern::new(n, sparsity.as_deref()));
        let groups = column_groups(&pattern);
        Jacobian {
            own: 0..groups.len(),
            helpers: None,
            groups,
            matrix: Matrix::zeros(pattern, solver),
            y: vec![0.0; n],
            f: vec![0.0; n],
            increment: vec![0.0; n],
        }
    }

    /// Number of column groups (evaluations of `f` per difference Jacobian).
    pub fn groups(&self) -> usize {
        self.groups.len()
    }

    /// Spreads the column groups of difference Jacobians over one helper
    /// thread per entry of `cores` (each first runs `setup` with its core),
    /// each with a fork of `model`, when `model`'s forks evaluate alike
    /// ([`Model::pure_derivatives`]) and there are groups to share; returns
    /// the number of helpers started. The systems later evaluated must be
    /// `model`'s derivatives ([`OdeSystem::held_model`]); other systems are
    /// evaluated by the caller alone.
    pub fn spread(
        &mut self,
        model: &dyn Model,
        cores: &[Option<usize>],
        setup: &ThreadSetup,
    ) -> std::io::Result<usize> {
        self.helpers = None;
        self.own = 0..self.groups.len();
        let cores = &cores[..cores.len().min(self.groups.len().saturating_sub(1))];
        if cores.is_empty() || !model.pure_derivatives() {
            return Ok(0);
        }
        let (helpers, own) = JacobianHelpers::spawn(model, &self.groups, cores, setup)?;
        self.helpers = Some(helpers);
        self.own = own;
        Ok(cores.len())
    }

    /// Number of helper threads alive.
    pub fn helpers(&self) -> usize {
        self.helpers.as_ref().map_or(0, JacobianHelpers::alive)
    }

    /// Gives the helpers' forks `definition` (from [`Model::retune`]),
    /// before the caller's model swaps it in. Allocates nothing.
    pub fn swap_definition(&mut self, definition: &Definition) {
        if let Some(helpers) = &mut self.helpers {
            helpers.swap_definition(definition);
        }
    }

    /// Evaluates `∂f/∂y` at `(t, y)`, where `fy = f(t, y)` is known, with
    /// `increments` (CVODE's use the error `weights` and the step `h`).
    #[expect(
        clippy::too_many_arguments,
        reason = "CVODE's difference quotient: the point, f there, the error weights and the step each set the increments"
    )]
    pub fn evaluate(
        &mut self,
        system: &mut dyn OdeSystem,
        t: f64,
        y: &[f64],
        fy: &[f64],
        weights: &[f64],
        h: f64,
        increments: Increments,
    ) -> Evaluation {
        let sqrt_roundoff = f64::EPSILON.sqrt();
        if increments == Increments::Unit {
            return self.evaluate_with(system, t, y, fy, |_, yj| sqrt_roundoff * yj.abs().max(1.0));
        }
        let n = y.len();
        let roundoff = f64::EPSILON;
        let f_norm = crate::bdf::wrms(fy, weights);
        let min_increment = if f_norm != 0.0 {
            1000.0 * h.abs() * roundoff * n as f64 * f_norm
        } else {
            1.0
        };
        self.evaluate_with(system, t, y, fy, |j, yj| {
            (sqrt_roundoff * yj.abs()).max(min_increment / weights[j])
        })
    }

    /// Evaluates `∂f/∂y` at `(t, y)`, where `fy = f(t, y)` is known,
    /// perturbing state `j` by `increment(j, y_j)` where differences are
    /// needed. CVODE's increments ([`Jacobian::evaluate`]) shrink to nothing
    /// for a state at 0 whose scale is its absolute tolerance; an increment
    /// of `√u max(|y_j|, 1)` registers for states of ordinary units.
    pub fn evaluate_with(
        &mut self,
        system: &mut dyn OdeSystem,
        t: f64,
        y: &[f64],
        fy: &[f64],
        increment: impl Fn(usize, f64) -> f64,
    ) -> Evaluation {
        // The systems' own Jacobians are dense arrays; a sparse matrix is
        // always differenced.
        if let Some(dense) = self.matrix.dense_mut() {
            if system.jacobian(t, y, dense.as_mut_slice()) {
                return Evaluation::Analytic;
            }
        }
        self.matrix.fill_zero();
        let held = system.held_model();
        let helped = match (&mut self.helpers, held) {
            (Some(helpers), Some(held)) => {
                for (j, inc) in self.increment.iter_mut().enumerate() {
                    *inc = increment(j, y[j]);
                }
                helpers.start(t, y, held.xd, held.u, &self.increment);
                true
            }
            _ => false,
        };
        let own = if helped { self.own.clone() } else { 0..self.groups.len() };
        self.difference_groups(system, t, y, fy, own, &increment);
        if helped {
            if let Some(helpers) = &mut self.helpers {
                let (matrix, increments) = (&mut self.matrix, &self.increment);
                helpers.finish(|j, f| {
                    let inv = 1.0 / increments[j];
                    matrix.set_column(j, |i| (f[i] - fy[i]) * inv);
                });
                let lost: Option<Range<usize>> = helpers.lost().reduce(|a, b| a.start.min(b.start)..a.end.max(b.end));
                if let Some(range) = lost {
                    // Contiguous by construction unless two helpers died
                    // apart; re-evaluating a live helper's groups between
                    // them gives the same columns again.
                    self.difference_groups(system, t, y, fy, range, &increment);
                }
            }
        }
        Evaluation::Differences(self.groups.len() as u32)
    }

    /// Differences the columns of groups `range` on the calling thread.
    #[expect(
        clippy::too_many_arguments,
        reason = "the point, f there and the increments of a difference quotient, and the groups this thread takes"
    )]
    fn difference_groups(
        &mut self,
        system: &mut dyn OdeSystem,
        t: f64,
        y: &[f64],
        fy: &[f64],
        range: Range<usize>,
        increment: &impl Fn(usize, f64) -> f64,
    ) {
        for group in &self.groups[range] {
            self.y.copy_from_slice(y);
            for &j in group {
                let inc = increment(j, y[j]);
                self.y[j] = y[j] + inc;
                self.increment[j] = inc;
            }
            system.rhs(t, &self.y, &mut self.f);
            for &j in group {
                let inv = 1.0 / self.increment[j];
                let f = &self.f;
                self.matrix.set_column(j, |i| (f[i] - fy[i]) * inv);
            }
        }
    }
}

/// Greedy colouring of the columns: a column joins the first group none of
/// whose columns shares a row with it.
fn column_groups(pattern: &Pattern) -> Vec<Vec<usize>> {
    let n = pattern.len();
    if !pattern.is_known() {
        return (0..n).map(|j| vec![j]).collect();
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut used: Vec<Vec<bool>> = Vec::new();
    for j in 0..n {
        let column = pattern.column(j);
        let free = used.iter().position(|u| column.iter().all(|&i| !u[i]));
        let g = free.unwrap_or_else(|| {
            groups.push(Vec::new());
            used.push(vec![false; n]);
            groups.len() - 1
        });
        groups[g].push(j);
        for &i in column {
            used[g][i] = true;
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tridiagonal system: f_i = -2 y_i + y_{i-1} + y_{i+1} + y_i^2.
    struct Chain(usize);
    impl OdeSystem for Chain {
        fn len(&self) -> usize {
            self.0
        }
        fn rhs(&mut self, _: f64, y: &[f64], dy: &mut [f64]) {
            for i in 0..self.0 {
                let left = if i > 0 { y[i - 1] } else { 0.0 };
                let right = if i + 1 < self.0 { y[i + 1] } else { 0.0 };
                dy[i] = -2.0 * y[i] + left + right + y[i] * y[i];
            }
        }
        fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
            Some(
                (0..self.0)
                    .map(|j| (j.saturating_sub(1)..(j + 2).min(self.0)).collect())
                    .collect(),
            )
        }
    }

    #[test]
    fn a_tridiagonal_jacobian_takes_three_evaluations_and_is_right() {
        let n = 10;
        let mut sys = Chain(n);
        let mut jac = Jacobian::new(n, sys.sparsity(), LinearSolver::Auto);
        let y: Vec<f64> = (0..n).map(|i| 0.1 * (i + 1) as f64).collect();
        let mut fy = vec![0.0; n];
        sys.rhs(0.0, &y, &mut fy);
        let weights = vec![1e6; n];
        assert_eq!(
            jac.evaluate(&mut sys, 0.0, &y, &fy, &weights, 1e-3, Increments::Cvode),
            Evaluation::Differences(3)
        );
        for (i, yi) in y.iter().enumerate() {
            for j in 0..n {
                let exact = match i.abs_diff(j) {
                    0 => -2.0 + 2.0 * yi,
                    1 => 1.0,
                    _ => 0.0,
                };
                assert!(
                    (jac.matrix.get(i, j) - exact).abs() < 1e-6,
                    "({i}, {j}): {}",
                    jac.matrix.get(i, j)
                );
            }
        }
    }

    #[test]
    fn dense_systems_get_one_group_per_column() {
        assert_eq!(column_groups(&Pattern::new(3, None)).len(), 3);
        assert_eq!(
            column_groups(&Pattern::new(3, Some(&[vec![0], vec![1], vec![2]]))).len(),
            1
        );
    }
}
