//! The iteration matrix of the fast side's linearly implicit (Rosenbrock-W)
//! method, prepared off the fast thread: the implicit thread evaluates the
//! Jacobian `J` at the state of a frame the fast thread sent, factors
//! `I − hγJ` for the frame `h` and the method's `γ`, and publishes the
//! factors through a latest-value triple buffer, with the number of the
//! frame whose state they were taken at. The fast thread only reads the
//! newest factors and does triangular solves: no Newton iteration, no
//! factorisation, no allocation, no lock.

use tandem_models::{Model, StateRef};
use triple_buffer::{Input, Output, TripleBuffer};

use crate::bdf::jacobian::{Increments, Jacobian};
use crate::linalg::{Factors, LinearSolver, Matrix};
use crate::ode::{ModelOde, OdeSystem};
use crate::rosenbrock::{factor_iteration_matrix, WMethod};

/// Published factors of `I − hγJ`.
#[derive(Clone, Debug)]
pub struct IterationMatrix {
    /// Publication number, from 1 (the first is made before the run).
    pub seq: u64,
    /// The frame whose state `J` was evaluated at.
    pub frame: u64,
    /// The LU factors.
    pub factors: Factors,
}

/// The preparing end (the implicit thread; before the run, the builder).
pub struct MatrixPublisher {
    input: Input<IterationMatrix>,
    method: WMethod,
    h: f64,
    jacobian: Jacobian,
    fy: Vec<f64>,
    seq: u64,
    /// Factors prepared in the input buffer, not yet published.
    pending: bool,
}

/// The fast thread's end.
pub struct MatrixReader {
    output: Output<IterationMatrix>,
}

/// Why factors could not be prepared.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum MatrixError {
    /// `I − hγJ` is singular or not finite at that state.
    #[error("the iteration matrix I - hγJ of {method} at a {h} s frame is singular or not finite at t = {t} s; the state is not one the model can step from")]
    Singular {
        /// The method.
        method: WMethod,
        /// The frame (s).
        h: f64,
        /// The state's time (s).
        t: f64,
    },
}

/// An exchange of iteration matrices of `method` for `model` at frames of
/// `h` seconds, stored as `solver` says.
pub fn matrix_exchange(
    model: &dyn Model,
    method: WMethod,
    h: f64,
    solver: LinearSolver,
) -> (MatrixPublisher, MatrixReader) {
    let n = model.layout().states.len();
    let jacobian = Jacobian::new(n, model.sparsity(), solver);
    let empty = IterationMatrix {
        seq: 0,
        frame: 0,
        factors: Factors::new(&jacobian.matrix),
    };
    let (input, output) = TripleBuffer::new(&empty).split();
    let publisher = MatrixPublisher {
        input,
        method,
        h,
        jacobian,
        fy: vec![0.0; n],
        seq: 0,
        pending: false,
    };
    (publisher, MatrixReader { output })
}

impl MatrixPublisher {
    /// Evaluates `J` at the state `s` of frame `frame` and factors
    /// `I − hγJ` into the buffer to publish. Allocates nothing.
    pub fn prepare(&mut self, model: &mut dyn Model, frame: u64, s: StateRef<'_>) -> Result<(), MatrixError> {
        let StateRef { t, x, xd, u } = s;
        let mut ode = ModelOde { model, xd, u };
        ode.rhs(t, x, &mut self.fy);
        // A state at 0 (a current at rest) must still get its column.
        let weights = &[];
        self.jacobian
            .evaluate(&mut ode, t, x, &self.fy, weights, self.h, Increments::Unit);
        let buffer = self.input.input_buffer_mut();
        self.pending = false;
        if !factor_iteration_matrix(&mut buffer.factors, &self.jacobian.matrix, self.h, self.method) {
            return Err(MatrixError::Singular {
                method: self.method,
                h: self.h,
                t,
            });
        }
        buffer.frame = frame;
        self.pending = true;
        Ok(())
    }

    /// The Jacobian, to spread its differences over helper threads.
    pub fn jacobian_mut(&mut self) -> &mut Jacobian {
        &mut self.jacobian
    }

    /// Publishes the factors prepared last, if they have not been.
    pub fn publish(&mut self) {
        if !self.pending {
            return;
        }
        self.seq += 1;
        self.input.input_buffer_mut().seq = self.seq;
        self.input.publish();
        self.pending = false;
    }

    /// The Jacobian evaluated last.
    pub fn jacobian(&self) -> &Matrix {
        &self.jacobian.matrix
    }
}

impl MatrixReader {
    /// The factors it hands over (not yet published ones included), for
    /// sizing a solver's work space.
    pub fn factors(&mut self) -> &Factors {
        &self.output.peek_output_buffer().factors
    }

    /// The newest published factors (`seq` 0 when none yet).
    pub fn latest(&mut self) -> &IterationMatrix {
        self.output.update();
        self.output.peek_output_buffer()
    }
}
