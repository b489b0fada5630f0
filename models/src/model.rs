//! The model trait every integrator drives, and the description of a model's
//! variables.
//!
//! A model is evaluated through `&mut self` so that it can keep scratch memory
//! (a block diagram's signal buffer). Two integrators on two threads each take
//! their own instance from [`Model::fork`]; instances share the immutable part
//! (the compiled program) and own only their workspace.

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

/// The period and offset of a discrete rate, in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SampleTime {
    /// Time between two hits, > 0.
    pub period: f64,
    /// Time of the first hit, in `[0, period)`.
    pub offset: f64,
}

impl fmt::Display for SampleTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.offset == 0.0 {
            write!(f, "{} s", self.period)
        } else {
            write!(f, "{} s offset {} s", self.period, self.offset)
        }
    }
}

/// A named scalar input or output of a model.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    /// Unique name, e.g. `speed` or `pos[1]` for an element of a vector port.
    pub name: String,
    /// Physical unit, when the model declares one.
    pub unit: Option<String>,
    /// Value used when nothing drives an input (0 for outputs).
    pub default: f64,
    /// The physical range `(min, max)` of an output, when the model states
    /// one: a real-time run never sends or records a value outside it.
    pub range: Option<(f64, f64)>,
}

impl Variable {
    /// A variable with no unit, a zero default and no range.
    pub fn new(name: impl Into<String>) -> Self {
        Variable {
            name: name.into(),
            unit: None,
            default: 0.0,
            range: None,
        }
    }
}

/// Sizes and names of everything an integrator needs to allocate and report.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Layout {
    /// Continuous states, by name (e.g. `v` or `plant/x[2]`).
    pub states: Vec<String>,
    /// Number of discrete state slots (delays, counters, held outputs).
    pub discrete: usize,
    /// External inputs, scalar each.
    pub inputs: Vec<Variable>,
    /// External outputs, scalar each.
    pub outputs: Vec<Variable>,
    /// Discrete rates; `hits[i]` passed to the model refers to `rates[i]`.
    pub rates: Vec<SampleTime>,
    /// For each rate, a block (or part) that runs at it, for messages.
    pub rate_users: Vec<String>,
    /// Zero-crossing functions, by the name of the block or condition owning each.
    pub zero_crossings: Vec<String>,
    /// Where the discrete states hold the modes of the zero crossings (the
    /// side each function was on at the last major step), as indices into
    /// the discrete states: two states with the same modes have seen the
    /// same events.
    pub modes: Vec<usize>,
}

/// A value that stopped being finite, and where it came from.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("non-finite value {value} at t = {time} s in {place}; check the inputs and parameters of {place} (division by zero, log or sqrt of a negative number, overflow)")]
pub struct NonFinite {
    /// Simulation time of the major step that found it.
    pub time: f64,
    /// Block and port (or state) that produced it, e.g. `block "div1" output 1`.
    pub place: String,
    /// The offending value (NaN or an infinity).
    pub value: f64,
}

/// Borrowed state of a model at one instant.
#[derive(Clone, Copy, Debug)]
pub struct StateRef<'a> {
    /// Time in seconds.
    pub t: f64,
    /// Continuous states.
    pub x: &'a [f64],
    /// Discrete states.
    pub xd: &'a [f64],
    /// External inputs.
    pub u: &'a [f64],
}

/// A model's state at a major step, borrowed as one bundle: the time, the
/// continuous and discrete states, the inputs, the discrete rates that hit
/// and the outputs the step writes. [`Model::major_outputs`] writes `y` and
/// latches discrete outputs into `xd`, leaving `x` as it is;
/// [`Model::update`] advances `xd` and resets `x`.
#[derive(Debug)]
pub struct MajorStep<'a> {
    /// Time in seconds.
    pub t: f64,
    /// Continuous states.
    pub x: &'a mut [f64],
    /// Discrete states.
    pub xd: &'a mut [f64],
    /// External inputs.
    pub u: &'a [f64],
    /// For each discrete rate of the layout, whether it hits now.
    pub hits: &'a [bool],
    /// External outputs.
    pub y: &'a mut [f64],
}

impl MajorStep<'_> {
    /// The state as a minor evaluation sees it, and the outputs to write.
    pub fn state_and_outputs(&mut self) -> (StateRef<'_>, &mut [f64]) {
        let state = StateRef {
            t: self.t,
            x: &*self.x,
            xd: &*self.xd,
            u: self.u,
        };
        (state, &mut *self.y)
    }

    /// The same step with the inputs `u` in place of its own (a model that
    /// feeds another model inputs of its own making).
    pub fn with_inputs<'b>(&'b mut self, u: &'b [f64]) -> MajorStep<'b> {
        MajorStep {
            t: self.t,
            x: &mut *self.x,
            xd: &mut *self.xd,
            u,
            hits: self.hits,
            y: &mut *self.y,
        }
    }
}

/// A dynamic system: continuous states with derivatives, discrete states
/// updated at sample hits, outputs, and zero-crossing functions.
///
/// The integrator calls, at each major step `t_n`:
/// 1. [`Model::major_outputs`] (discrete blocks whose rate hits recompute and
///    latch their outputs), then records the outputs;
/// 2. [`Model::update`] (discrete states advance, resets are applied);
/// 3. [`Model::derivatives`] as often as its stages need, to reach `t_{n+1}`.
///    Discrete outputs stay held during these minor evaluations.
///
/// An instance may keep state of its own that changes at events (an FMU's
/// internal discrete variables): [`Model::inner_events`] counts those
/// changes, and the real-time tandem sets it back
/// ([`Model::restore_inner`]) or carries it to the other thread's instance
/// ([`Model::export_inner`], [`Model::import_inner`]) as it does `x` and
/// `xd`.
///
/// No method may allocate: they run on real-time threads.
pub trait Model: Send {
    /// Sizes and names of states, inputs, outputs, rates and zero crossings.
    fn layout(&self) -> &Layout;

    /// Another instance for another thread: shares the immutable program,
    /// owns a fresh workspace.
    fn fork(&self) -> Box<dyn Model>;

    /// Writes the initial continuous and discrete states.
    fn initial_state(&mut self, x: &mut [f64], xd: &mut [f64]);

    /// Writes `dx/dt` at `s` (a minor evaluation: discrete outputs held).
    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]);

    /// Writes the outputs at `s` (a minor evaluation: discrete outputs held).
    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]);

    /// Writes the outputs `s.y` at a major step. Discrete blocks whose
    /// rate is in `s.hits` recompute their outputs and latch them into
    /// `s.xd`; `s.x` is left as it is. When a state or an output is not
    /// finite, reports where the first non-finite value came from. The
    /// default suits models without discrete parts.
    fn major_outputs(&mut self, s: &mut MajorStep<'_>) -> Result<(), NonFinite> {
        let (state, y) = s.state_and_outputs();
        self.outputs(state, y);
        Ok(())
    }

    /// Advances discrete states of the rates in `s.hits` and applies resets
    /// of continuous states; called after [`Model::major_outputs`] at the
    /// same instant. `s.x` and `s.xd` are updated in place; `s.y` is not
    /// touched.
    fn update(&mut self, s: &mut MajorStep<'_>) {
        let _ = s;
    }

    /// Writes the zero-crossing functions at `s`; an event is a sign change.
    fn zero_crossings(&mut self, s: StateRef<'_>, z: &mut [f64]) {
        let _ = (s, z);
    }

    /// Writes the Jacobian `∂(dx/dt)/∂x` column-major into `jac` (n × n:
    /// `jac[i + j n] = ∂ẋ_i/∂x_j`) and returns `true`, or returns `false`
    /// when the model has none (implicit integrators then difference it).
    fn jacobian(&mut self, s: StateRef<'_>, jac: &mut [f64]) -> bool {
        let _ = (s, jac);
        false
    }

    /// A definition of this model with parameter `param` of block `block`
    /// (its path, `sub/inner`) set to `value`, for
    /// [`Model::swap_definition`] on this instance or any of its forks.
    /// Called off the real-time threads; may allocate. The default: the
    /// model has no block parameters.
    fn retune(&self, block: &str, param: &str, value: &Value) -> Result<Definition, RetuneError> {
        let _ = (param, value);
        Err(RetuneError {
            block: Some(block.to_string()),
            message: "this model has no block parameters to change (only JSON block diagrams do); change one of \
                      its inputs instead"
                .into(),
        })
    }

    /// Puts `definition` (from [`Model::retune`]) in place of this
    /// instance's, states and workspace kept; the replaced definition goes
    /// back in `definition`, to be dropped off the real-time thread.
    /// Returns `false` when it is not a definition of this model. Must not
    /// allocate.
    fn swap_definition(&mut self, definition: &mut Definition) -> bool {
        let _ = definition;
        false
    }

    /// How the model is evaluated, in one line, when it says (a compiled
    /// diagram: what its machine code covers). Called off the real-time
    /// threads; may allocate.
    fn evaluation(&self) -> Option<String> {
        None
    }

    /// The block parameters [`Model::retune`] can change, with their
    /// values now: `(block path, parameter, value)`.
    fn tunables(&self) -> Vec<(String, String, Value)> {
        Vec::new()
    }

    /// For each output, the inputs it depends on directly (at the same
    /// instant, with no state in between), when known; `None`: every
    /// output may depend on every input. Orders co-simulation participants.
    /// Called once before a run; may allocate.
    fn direct_feedthrough(&self) -> Option<Vec<Vec<usize>>> {
        None
    }

    /// The time at which the model asked to end the run (an FMU's
    /// `terminateSimulation`), once it has: an offline run then ends there
    /// normally, its last row the one recorded at that time. The default:
    /// never. Must not allocate.
    fn finished(&self) -> Option<f64> {
        None
    }

    /// For each state `j`, the derivatives `ẋ_i` that depend on `x_j`, when
    /// known (finite-difference Jacobians then perturb independent states
    /// together). Called once before a run; may allocate.
    fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
        None
    }

    /// Whether [`Model::derivatives`] is a function of its [`StateRef`] and
    /// the definition alone: no latched mode, iterate or other state kept
    /// in the workspace changes it. Forks of such a model on other threads
    /// then give the same derivatives bit for bit (difference Jacobians
    /// spread over helper threads need that). The default: not known.
    fn pure_derivatives(&self) -> bool {
        false
    }

    /// How many times the state this instance keeps inside, beyond `x`
    /// and `xd`, has changed: the events it handled (an FMU's event
    /// iterations, which update its internal discrete variables). Two
    /// instances that handled the same events give the same count, so the
    /// count names the inner state along a run. The default: the model
    /// keeps nothing inside (block diagrams keep everything in `x` and
    /// `xd`), and the count stays 0. Called on the real-time threads; must
    /// not allocate.
    fn inner_events(&self) -> u64 {
        0
    }

    /// Sets the inner state back to this instance's own checkpoint taken
    /// after `events` events (see [`Model::inner_events`]), keeping the
    /// state it leaves for [`Model::revert_inner`]; true when done or when
    /// there is nothing to do (the count is already `events`), false when
    /// the model cannot (it cannot save its state, or that checkpoint is
    /// gone): the inner state is then unchanged. The tandem's fast thread
    /// calls it before re-integrating from a past frame. Must not allocate
    /// (an FMU reuses the state memory it took at instantiation).
    fn restore_inner(&mut self, events: u64) -> bool {
        events == self.inner_events()
    }

    /// Undoes the last [`Model::restore_inner`]: the inner state it left
    /// and its count are back, and the checkpoints taken since it are
    /// dropped; true when done or when there was nothing to undo. The
    /// fast thread calls it when a re-integration is refused. Must not
    /// allocate.
    fn revert_inner(&mut self) -> bool {
        true
    }

    /// Writes the inner state after the [`Model::inner_events`] events
    /// handled so far into `out` (its contents replaced) as bytes that
    /// [`Model::import_inner`] of another instance of the same model
    /// takes; false when the model cannot (nothing kept inside, or an FMU
    /// that cannot serialize its state), `out` then unspecified. Grows
    /// `out` only when the state is larger than its capacity: the fast
    /// thread calls it with a buffer sized at start-up from a first export.
    fn export_inner(&mut self, out: &mut Vec<u8>) -> bool {
        let _ = out;
        false
    }

    /// Takes the inner state `bytes` from [`Model::export_inner`] of
    /// another instance, which had handled `events` events: this
    /// instance's count becomes `events` and its own checkpoints are
    /// dropped; false when the model cannot (then unchanged). The tandem's
    /// implicit thread calls it when it restarts from the fast thread's
    /// state past events it has not handled. Allocates only what the
    /// model's own code must (an FMU's deserialized state, made and freed
    /// by the FMU).
    fn import_inner(&mut self, bytes: &[u8], events: u64) -> bool {
        let _ = (bytes, events);
        false
    }
}

/// A model's definition prepared by [`Model::retune`]: shared, immutable,
/// cheap to clone (one per integrator thread).
#[derive(Clone)]
pub struct Definition(pub(crate) Arc<dyn Any + Send + Sync>);

impl Definition {
    /// A definition holding `value`, which the model's
    /// [`Model::swap_definition`] recognises by its type.
    pub fn new(value: Arc<dyn Any + Send + Sync>) -> Self {
        Definition(value)
    }

    /// What it holds, when of type `T` (a reference count: nothing is
    /// allocated).
    pub fn get<T: Any + Send + Sync>(&self) -> Option<Arc<T>> {
        Arc::clone(&self.0).downcast().ok()
    }

    /// Holds `value` instead (what it held is dropped here: a swap puts
    /// back what it replaced, whose owner drops it later).
    pub fn set(&mut self, value: Arc<dyn Any + Send + Sync>) {
        self.0 = value;
    }
}

impl fmt::Debug for Definition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Definition")
    }
}

/// Why a parameter cannot be changed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct RetuneError {
    /// The block concerned, when there is one.
    pub block: Option<String>,
    /// What is wrong, with the fix.
    pub message: String,
}
