//! The master's view of one participant of a co-simulation: its ports,
//! which outputs follow its inputs without delay, how it takes one
//! communication step, and how it goes back to a saved point.

use tandem_fmi::FmuError;
use tandem_models::{Model, Variable};
use tandem_runtime::SimError;

use crate::course::Course;
use crate::recording::Recording;

/// One participant of a co-simulation, stepped by the master one
/// communication step at a time.
///
/// A participant with its own solver (a Tandem model, an FMU for Model
/// Exchange) samples its input courses at every solver stage and can
/// record its outputs at its micro steps; an FMU for Co-Simulation samples
/// them once, at the start of the step, holds them over its `doStep`, and
/// gives only its outputs at the end.
pub trait SubModel: Send {
    /// The inputs, in the order of the values passed to it.
    fn inputs(&self) -> &[Variable];

    /// The outputs, in the order of the values it writes.
    fn outputs(&self) -> &[Variable];

    /// Which outputs depend directly on which inputs: orders the
    /// participants and finds algebraic loops between them.
    fn feedthrough(&self) -> &Feedthrough;

    /// Writes into `y` the outputs at the current communication point with
    /// the inputs `u` (one value per input, held at this point).
    fn evaluate(&mut self, u: &[f64], y: &mut [f64]) -> Result<(), SubModelError>;

    /// The spacing of the grid its own solver computes its outputs on (s),
    /// when it has one: its steps can record them there. `None` (the
    /// default): it gives its outputs at communication points only.
    fn grid(&self) -> Option<f64> {
        None
    }

    /// Advances from `t` (the current communication point) to `t + h`,
    /// input `i` following `inputs[i]` over the step. With `record` and a
    /// [`SubModel::grid`], records its outputs at every grid point of the
    /// step, `t` and `t + h` included (`h / grid + 1` samples, from
    /// [`Recording::begin`] at `t`); without a grid it leaves `record`
    /// alone. Does not allocate, except to make room for a waveform longer
    /// than those its inputs followed before.
    fn step(&mut self, t: f64, h: f64, inputs: &[Course], record: Option<&mut Recording>) -> Result<(), SubModelError>;

    /// Remembers the current point (one slot: a new save replaces it), or
    /// says why it cannot ([`SubModelError::NoRollback`]). May allocate on
    /// the first call only.
    fn save(&mut self) -> Result<(), SubModelError>;

    /// Goes back to the point of the last [`SubModel::save`].
    fn restore(&mut self) -> Result<(), SubModelError>;

    /// The model it is, to be composed into a real-time plant; `None`
    /// (the default) for a participant that is stepped, not integrated
    /// (a co-simulation participant with its own solver, an FMU for
    /// Co-Simulation, a remote slave).
    fn into_model(self: Box<Self>) -> Option<Box<dyn Model>> {
        None
    }
}

/// For each output, the inputs it depends on directly (in the same
/// communication point, with no state in between).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Feedthrough {
    inputs: usize,
    outputs: Vec<Vec<usize>>,
}

/// A list of dependencies naming an input past the last.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("output {output} is said to depend on input {input}, but there are only {inputs} inputs (numbered from 0)")]
pub struct NoSuchInput {
    /// The output (from 0).
    pub output: usize,
    /// The input named.
    pub input: usize,
    /// The number of inputs.
    pub inputs: usize,
}

impl Feedthrough {
    /// Every output depends on every input: always safe, and what a
    /// participant that does not say gets.
    pub fn all(inputs: usize, outputs: usize) -> Feedthrough {
        Feedthrough {
            inputs,
            outputs: vec![(0..inputs).collect(); outputs],
        }
    }

    /// For each output, the inputs (numbered from 0) it depends on.
    pub fn from_lists(inputs: usize, mut outputs: Vec<Vec<usize>>) -> Result<Feedthrough, NoSuchInput> {
        for (output, list) in outputs.iter_mut().enumerate() {
            if let Some(&input) = list.iter().find(|&&i| i >= inputs) {
                return Err(NoSuchInput { output, input, inputs });
            }
            list.sort_unstable();
            list.dedup();
        }
        Ok(Feedthrough { inputs, outputs })
    }

    /// The number of inputs.
    pub fn input_count(&self) -> usize {
        self.inputs
    }

    /// The number of outputs.
    pub fn output_count(&self) -> usize {
        self.outputs.len()
    }

    /// The inputs output `output` depends on, sorted.
    pub fn inputs_of(&self, output: usize) -> &[usize] {
        &self.outputs[output]
    }

    /// Refuses a feedthrough whose shape is not that of `inputs` inputs
    /// and `outputs` outputs.
    pub fn fits(&self, inputs: usize, outputs: usize) -> Result<(), SubModelError> {
        let found = (self.input_count(), self.output_count());
        if found != (inputs, outputs) {
            return Err(SubModelError::FeedthroughShape {
                expected: (inputs, outputs),
                found,
            });
        }
        Ok(())
    }

    /// Whether some output depends directly on input `input`.
    pub fn feeds_through(&self, input: usize) -> bool {
        self.outputs.iter().any(|list| list.binary_search(&input).is_ok())
    }
}

/// Why a participant could not evaluate, step, save or restore.
#[derive(Debug, thiserror::Error)]
pub enum SubModelError {
    /// Its simulation stopped (a non-finite value, an event storm, the BDF
    /// gave up).
    #[error(transparent)]
    Simulation(#[from] SimError),
    /// It was asked to step from a time other than where it is.
    #[error("asked to step from t = {asked} s but it is at t = {at} s")]
    OutOfStep {
        /// Where it is (s).
        at: f64,
        /// Where the step was to start (s).
        asked: f64,
    },
    /// The communication step is not a whole number of its micro steps.
    #[error("the communication step {step} s is not a whole number of its micro steps of {micro} s; choose a micro step that divides it")]
    StepNotMultiple {
        /// The communication step (s).
        step: f64,
        /// Its micro step (s).
        micro: f64,
    },
    /// Its feedthrough does not have the shape of its ports.
    #[error("its feedthrough has {found:?} (inputs, outputs) but it has {expected:?}")]
    FeedthroughShape {
        /// Its (inputs, outputs).
        expected: (usize, usize),
        /// The feedthrough's (inputs, outputs).
        found: (usize, usize),
    },
    /// It cannot go back to a saved point (an FMU without get/set state).
    #[error("it cannot go back to a saved point: {0}")]
    NoRollback(String),
    /// It was asked to go back before anything was saved.
    #[error("asked to go back to a saved point before any was saved")]
    NothingSaved,
    /// It was loaded as a part of a real-time plant, which the tandem's
    /// integrators integrate: a co-simulation master cannot step it.
    #[error("it was loaded as a part of a real-time plant, which a co-simulation master does not step")]
    PlantPart,
    /// It panicked (a bug in it); the message of the panic.
    #[error("it panicked: {0}")]
    Panicked(String),
    /// An FMU refused a call or failed in it; the error names the FMU,
    /// the call, its status and log, and the fix. (Boxed: it is large, and
    /// every step returns this type.)
    #[error(transparent)]
    Fmu(Box<FmuError>),
    /// Its direct feedthrough, which Tandem derives from its model's
    /// structure (a block diagram's wiring, an FMU's model structure),
    /// names an input it does not have. (The message names it, so it is
    /// not also a source.)
    #[error("its direct feedthrough, derived from its model's structure, is wrong: {0}; this is a bug in Tandem, please report it with the model")]
    Dependencies(NoSuchInput),
    /// A participant in another process (a remote DCP slave) failed to
    /// take part: it did not answer, refused a request, reported a state it
    /// should not be in, or sent outputs that cannot be read.
    #[error("{reason}")]
    Remote {
        /// Its name, as the link to it knows it.
        slave: String,
        /// What went wrong, naming the request and what to check.
        reason: String,
    },
}

impl From<FmuError> for SubModelError {
    fn from(error: FmuError) -> SubModelError {
        SubModelError::Fmu(Box::new(error))
    }
}

impl From<NoSuchInput> for SubModelError {
    fn from(error: NoSuchInput) -> SubModelError {
        SubModelError::Dependencies(error)
    }
}
