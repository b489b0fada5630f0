//! A Model Exchange FMU as a [`tandem_models::Model`]: Tandem integrates
//! its states, locates its state events (event indicators) and time
//! events, and runs its event iteration.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

use tandem_models::{Layout, MajorStep, Model, NonFinite, StateRef};

use crate::description::{InterfaceKind, ModelDescription};
use crate::error::FmuError;
use crate::fmu::{Fmu, Loaded};
use crate::instance::ModelExchange;
use crate::instantiate;
use crate::parameters::{self, Assignment, Parameters};
use crate::signals::{self, Inputs, Recorded, Signals};

/// The most rounds of the discrete-state update at one event.
pub const MAX_EVENT_ROUNDS: u32 = 1000;

/// A time event counts as reached this close before it (relative to
/// max(1, |t|)).
pub const TIME_EVENT_TOLERANCE: f64 = 1e-12;

/// How many checkpoints of its internal state an instance keeps, the
/// newest events' (see [`FmuModel`]): a re-integration of the real-time
/// tandem's fast thread goes back over at most this many events.
pub const INNER_CHECKPOINTS: usize = 16;

/// How many instances of an FMU a process may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstanceLimit {
    /// Any number: [`Model::fork`] gives each thread its own.
    Unlimited,
    /// One (`canBeInstantiatedOnlyOncePerProcess`): a fork cannot be made.
    OncePerProcess,
}

/// What every instance of the model shares.
struct Program {
    loaded: Arc<Loaded>,
    layout: Layout,
    /// The continuous inputs (the first signals of the layout's inputs),
    /// set at every evaluation.
    continuous: Signals,
    /// The discrete inputs (the layout's inputs after the continuous
    /// ones), set in event mode when they change.
    discrete: Signals,
    outputs: Signals,
    parameters: Vec<Assignment>,
    /// The FMU's time at Tandem's t = 0 (the run's start time).
    start: f64,
    sparsity: Option<Vec<Vec<usize>>>,
    feedthrough: Vec<Vec<usize>>,
    needs_completed_step: bool,
    limit: InstanceLimit,
    /// Number of event indicators (the zero crossings before the time event).
    indicators: usize,
    /// `canGetAndSetFMUstate`: the instance keeps checkpoints.
    can_save: bool,
    /// `canSerializeFMUstate` too: its state crosses to other instances.
    can_serialize: bool,
}

/// A state saved by an instance with `GetFMUstate` (the FMU's pointer, or
/// the handle of an out-of-process instance's), handed back only to that
/// instance.
struct Saved(*mut c_void);

// SAFETY: the pointer is never dereferenced here; it is only passed back
// to the instance that made it, which is `Send` and used through `&mut`.
unsafe impl Send for Saved {}

/// A saved state, and the events handled before it was saved.
struct Checkpoint {
    saved: Saved,
    events: u64,
    /// It holds the state after `events` events of this instance's path.
    valid: bool,
}

/// An instance's checkpoints of its internal state: one after each event
/// iteration, in state memory the FMU allocated at instantiation and
/// overwrites since (`GetFMUstate` given the previous state).
struct Checkpoints {
    /// The newest events', at `events % INNER_CHECKPOINTS`.
    ring: Vec<Checkpoint>,
    /// The state the last restore left, until reverted or restored again.
    left: Checkpoint,
    /// The count the last restore went back to.
    restored_to: u64,
}

impl Checkpoints {
    /// [`INNER_CHECKPOINTS`] + 1 saved states of `instance` now, the
    /// first one valid after `events` events.
    fn new(instance: &mut dyn ModelExchange, events: u64) -> Result<Checkpoints, FmuError> {
        let mut save = || -> Result<Checkpoint, FmuError> {
            Ok(Checkpoint {
                saved: Saved(instance.get_state(std::ptr::null_mut())?),
                events: 0,
                valid: false,
            })
        };
        let ring = (0..INNER_CHECKPOINTS).map(|_| save()).collect::<Result<Vec<_>, _>>()?;
        let left = save()?;
        let mut checkpoints = Checkpoints {
            ring,
            left,
            restored_to: 0,
        };
        let slot = checkpoints.slot(events);
        slot.events = events;
        slot.valid = true;
        Ok(checkpoints)
    }

    /// The ring's place for the state after `events` events.
    fn slot(&mut self, events: u64) -> &mut Checkpoint {
        &mut self.ring[(events % INNER_CHECKPOINTS as u64) as usize]
    }

    /// The valid checkpoint after `events` events, if kept.
    fn find(&mut self, events: u64) -> Option<&mut Checkpoint> {
        Some(self.slot(events)).filter(|c| c.valid && c.events == events)
    }

    /// Saves the instance's state now as the one after `events` events.
    fn save(&mut self, instance: &mut dyn ModelExchange, events: u64) -> Result<(), FmuError> {
        let slot = self.slot(events);
        slot.valid = false;
        slot.saved.0 = instance.get_state(slot.saved.0)?;
        slot.events = events;
        slot.valid = true;
        Ok(())
    }

    /// Drops the checkpoints of more than `events` events.
    fn drop_after(&mut self, events: u64) {
        for c in &mut self.ring {
            c.valid &= c.events <= events;
        }
    }

    /// Frees every saved state (the instance is going away).
    fn free(&mut self, instance: &mut dyn ModelExchange) {
        for c in self.ring.iter_mut().chain([&mut self.left]) {
            if !c.saved.0.is_null() {
                // A state the FMU will not free is gone with its instance.
                let _ = instance.free_state(c.saved.0);
                c.saved.0 = std::ptr::null_mut();
            }
        }
    }
}

/// A Model Exchange FMU driven as a Tandem model.
///
/// States are the FMU's continuous states, named after the variables
/// whose derivatives it lists (an array state by element, `x[1]`); inputs
/// its inputs of a numeric type, the continuous ones first (set at every
/// evaluation), then the discrete ones (set at a major step where they
/// change, in event mode, as the standard says); outputs its outputs of a
/// numeric type, or the variables a [`Recorded`] chooses (any type whose
/// values are numbers, Booleans as 0 and 1). Tandem's time 0 is the FMU's
/// start time ([`FmuModel::with`]). The zero crossings are one per event
/// indicator (`"<modelName>#indicator <i>"`, positive while the indicator
/// keeps the sign it had at the last event) and `"<modelName>#time event"`
/// (the time left to the FMU's next time event, 1 when it has none), so
/// that Tandem locates both kinds of event. The discrete states are the
/// indicators' signs at the last event (1 above zero, 0 not: the modes)
/// and the time of the next time event (infinite when there is none), so
/// that a state taken from another instance carries the events it saw.
///
/// Its internal discrete variables (a counter, a sampled value, a state
/// machine) change only in its event iterations, which
/// [`Model::inner_events`] counts. An FMU that declares
/// `canGetAndSetFMUstate` keeps a checkpoint after each of its newest
/// [`INNER_CHECKPOINTS`] event iterations (`GetFMUstate` into state memory
/// it allocated at instantiation: nothing is allocated on the real-time
/// threads unless the FMU's own code does), so that
/// [`Model::restore_inner`] sets them back; one that also declares
/// `canSerializeFMUstate` exports the newest as bytes
/// ([`Model::export_inner`]) and takes another instance's
/// ([`Model::import_inner`], where the FMU allocates and frees the state it
/// deserializes). Without those flags the methods return false.
///
/// The [`Model`] methods cannot return errors: a failed FMI call writes NaN
/// into what was asked and is kept, and the next [`Model::major_outputs`]
/// reports it as a [`NonFinite`] whose place names the FMU and the call
/// (also available from [`FmuModel::take_error`]).
pub struct FmuModel {
    program: Arc<Program>,
    /// `None` when instantiation failed (a fork of a once-per-process FMU).
    instance: Option<Box<dyn ModelExchange>>,
    /// The first error not yet reported by [`FmuModel::take_error`].
    error: Option<FmuError>,
    /// Event indicators, read at updates.
    indicators: Vec<f64>,
    /// The discrete states after the initial event iteration.
    initial: Vec<f64>,
    /// The buffer typed reads and writes go through.
    scratch: Vec<f64>,
    /// When the FMU asked to end the simulation (Tandem's time).
    terminated: Option<f64>,
    /// The discrete inputs as last set (their start values at first).
    discrete_set: Vec<f64>,
    /// Event iterations run after the initial one.
    events: u64,
    /// The checkpoints of the internal state, when the FMU can save it.
    checkpoints: Option<Checkpoints>,
}

impl FmuModel {
    /// Instantiates the Model Exchange interface of `fmu`, sets
    /// `parameters`, initialises it at t = 0 (Tandem's runs start there)
    /// with the default experiment's tolerance, and runs the initial event
    /// iteration.
    pub fn new(fmu: &Fmu, parameters: &Parameters) -> Result<FmuModel, FmuError> {
        FmuModel::with(fmu, parameters, &Recorded::outputs(), 0.0)
    }

    /// As [`FmuModel::new`], its outputs the variables `recorded` chooses,
    /// initialised at the FMU's time `start` (s), which is Tandem's t = 0.
    pub fn with(fmu: &Fmu, parameters: &Parameters, recorded: &Recorded, start: f64) -> Result<FmuModel, FmuError> {
        let loaded = &fmu.loaded;
        let description = &loaded.description;
        let interface = loaded.interface(InterfaceKind::ModelExchange)?;
        let states = description.states();
        let mut state_names = Vec::new();
        for &s in &states {
            let names = description.element_names(s).ok_or_else(|| FmuError::Unsupported {
                fmu: description.model_name.clone(),
                what: format!(
                    "the size of the state \"{}\" (modelDescription.xml line {}) is not known",
                    description.variables[s].name, description.variables[s].line
                ),
                help: "give the structural parameter of its dimension a start value",
            })?;
            state_names.extend(names);
        }
        let continuous = signals::inputs(description, Inputs::Continuous)?;
        let discrete = signals::inputs(description, Inputs::Discrete)?;
        let mut order = signals::input_indices(description, Inputs::Continuous);
        order.extend(signals::input_indices(description, Inputs::Discrete));
        let assignments = parameters::resolve(description, parameters)?;
        let mut inputs = Signals::of(description, &order)?;
        parameters::input_defaults(description, &assignments, &mut inputs);
        let outputs = signals::outputs(description, recorded)?;
        let name = &description.model_name;
        let feedthrough = signals::feedthrough(description, &inputs, &outputs)?;
        let indicators = description.structure.event_indicators;
        let any_array = states.iter().any(|&s| description.variables[s].array);
        let layout = Layout {
            states: state_names,
            discrete: indicators + 1,
            modes: (0..indicators).collect(),
            inputs: inputs.variables.clone(),
            outputs: outputs.variables.clone(),
            rates: Vec::new(),
            rate_users: Vec::new(),
            zero_crossings: (0..indicators)
                .map(|i| format!("{name}#indicator {i}"))
                .chain([format!("{name}#time event")])
                .collect(),
        };
        let program = Program {
            layout,
            continuous,
            discrete,
            outputs,
            parameters: assignments,
            start,
            sparsity: if any_array {
                None
            } else {
                sparsity(description, &states)
            },
            feedthrough,
            needs_completed_step: interface.needs_completed_integrator_step,
            limit: if interface.once_per_process {
                InstanceLimit::OncePerProcess
            } else {
                InstanceLimit::Unlimited
            },
            indicators,
            can_save: interface.can_get_and_set_state,
            can_serialize: interface.can_get_and_set_state && interface.can_serialize_state,
            loaded: Arc::clone(loaded),
        };
        FmuModel::start(Arc::new(program))
    }

    /// Another instance of the same FMU, initialised afresh, or the reason
    /// there cannot be one.
    pub fn try_fork(&self) -> Result<FmuModel, FmuError> {
        FmuModel::start(Arc::clone(&self.program))
    }

    /// For each output, the inputs (by position) it depends on directly.
    pub fn feedthrough(&self) -> &[Vec<usize>] {
        &self.program.feedthrough
    }

    /// How many instances the FMU allows, to refuse a second thread early.
    pub fn instances_allowed(&self) -> InstanceLimit {
        self.program.limit
    }

    /// When the FMU asked to end the simulation (`terminateSimulation`
    /// from its event update or `CompletedIntegratorStep`), in Tandem's
    /// time: the run ends there normally ([`Model::finished`]). After it
    /// the FMU is not called again: derivatives are 0, outputs held.
    pub fn terminated(&self) -> Option<f64> {
        self.terminated
    }

    /// The first error of an FMI call since the last time it was taken.
    pub fn take_error(&mut self) -> Option<FmuError> {
        self.error.take()
    }

    /// Calls that returned Warning so far.
    pub fn warnings(&self) -> u64 {
        self.instance.as_ref().map_or(0, |i| i.core().warnings)
    }

    /// The FMU's last log messages, oldest first.
    pub fn log(&self) -> Vec<String> {
        self.instance
            .as_ref()
            .map_or_else(Vec::new, |i| i.core().log.messages())
    }

    /// What the FMU's `modelDescription.xml` says.
    pub fn description(&self) -> &ModelDescription {
        &self.program.loaded.description
    }

    /// A new, initialised instance.
    fn start(program: Arc<Program>) -> Result<FmuModel, FmuError> {
        let mut instance = instantiate::model_exchange(&program.loaded)?;
        parameters::apply(instance.as_mut(), &program.parameters)?;
        let tolerance = program.loaded.description.default_experiment.tolerance;
        instance.enter_initialization(program.start, None, tolerance)?;
        instance.exit_initialization()?;
        let name = &program.loaded.description.model_name;
        let next_event = match iterate_events(instance.as_mut(), name, program.start)? {
            Events::Settled { next, .. } => next.map(|te| te - program.start),
            Events::Terminate => return Err(terminated(instance.as_ref(), name, program.start)),
        };
        instance.enter_continuous_time_mode()?;
        let mut indicators = vec![0.0; program.indicators];
        instance.get_event_indicators(&mut indicators)?;
        let mut initial = vec![0.0; program.indicators + 1];
        write_discrete(&indicators, next_event, &mut initial);
        let checkpoints = match program.can_save {
            true => Some(Checkpoints::new(instance.as_mut(), 0)?),
            false => None,
        };
        Ok(FmuModel {
            indicators,
            initial,
            events: 0,
            checkpoints,
            error: None,
            instance: Some(instance),
            scratch: vec![0.0; widest(&program)],
            terminated: None,
            discrete_set: program.layout.inputs[program.continuous.len()..]
                .iter()
                .map(|v| v.default)
                .collect(),
            program,
        })
    }

    /// An instance that could not be made: every evaluation gives NaN and
    /// [`Model::major_outputs`] reports `error`.
    fn failed(program: Arc<Program>, error: FmuError) -> FmuModel {
        FmuModel {
            indicators: vec![0.0; program.indicators],
            initial: vec![1.0; program.indicators + 1],
            events: 0,
            checkpoints: None,
            error: Some(error),
            instance: None,
            scratch: Vec::new(),
            terminated: None,
            discrete_set: Vec::new(),
            program,
        }
    }

    /// Keeps `error` unless an earlier one is waiting.
    fn keep(&mut self, error: FmuError) {
        self.error.get_or_insert(error);
    }

    /// Sets `s` on the FMU, then `read`s into `out`; NaN on failure, or
    /// when an error is waiting to be reported.
    fn evaluate(
        &mut self,
        s: StateRef<'_>,
        out: &mut [f64],
        read: impl FnOnce(&mut dyn ModelExchange, &Program, &mut [f64], &mut [f64]) -> Result<(), FmuError>,
    ) {
        let FmuModel {
            program,
            instance,
            error,
            scratch,
            ..
        } = self;
        let (None, Some(instance)) = (&error, instance.as_deref_mut()) else {
            out.fill(f64::NAN);
            return;
        };
        let result =
            set_point(instance, program, s.t, s.x, s.u, scratch).and_then(|()| read(instance, program, out, scratch));
        if let Err(e) = result {
            out.fill(f64::NAN);
            error.get_or_insert(e);
        }
    }

    /// The event handling of [`Model::update`]: the modes and the next
    /// time event are read from and written to `xd`. An event iteration
    /// that ran is counted, and checkpointed when the FMU can save its
    /// state.
    fn handle_events(&mut self, t: f64, x: &mut [f64], xd: &mut [f64], u: &[f64]) -> Result<(), FmuError> {
        let FmuModel {
            program,
            instance,
            indicators,
            scratch,
            terminated,
            discrete_set,
            events,
            checkpoints,
            ..
        } = self;
        let Some(instance) = instance.as_deref_mut() else {
            return Ok(());
        };
        let discrete_now = &u[program.continuous.len()..];
        let inputs_changed = discrete_now != discrete_set.as_slice();
        let name = &program.loaded.description.model_name;
        set_point(instance, program, t, x, u, scratch)?;
        let mut asked = false;
        if program.needs_completed_step {
            let end = instance.completed_integrator_step()?;
            if end.terminate {
                *terminated = Some(t);
                return Ok(());
            }
            asked = end.enter_event_mode;
        }
        instance.get_event_indicators(indicators)?;
        let (modes, next_event) = xd.split_at(indicators.len());
        let crossed = indicators
            .iter()
            .zip(modes)
            .any(|(&z, &mode)| (z > 0.0) != (mode > 0.5));
        let te = next_event[0];
        let timed = te.is_finite() && t >= te - TIME_EVENT_TOLERANCE * te.abs().max(1.0);
        if !(crossed || timed || asked || inputs_changed) {
            return Ok(());
        }
        instance.enter_event_mode()?;
        if inputs_changed {
            program.discrete.write(instance, discrete_now, scratch)?;
            discrete_set.copy_from_slice(discrete_now);
        }
        let (changed, next) = match iterate_events(instance, name, program.start + t)? {
            Events::Settled { changed, next } => (changed, next.map(|te| te - program.start)),
            Events::Terminate => {
                *terminated = Some(t);
                return Ok(());
            }
        };
        instance.enter_continuous_time_mode()?;
        if changed {
            instance.get_continuous_states(x)?;
        }
        instance.get_event_indicators(indicators)?;
        write_discrete(indicators, next, xd);
        *events += 1;
        if let Some(c) = checkpoints {
            c.save(instance, *events)?;
        }
        Ok(())
    }

    /// The instance and its checkpoints, when it is usable and keeps them.
    fn saving(&mut self) -> Option<(&mut dyn ModelExchange, &mut Checkpoints)> {
        match (&self.error, self.instance.as_deref_mut(), self.checkpoints.as_mut()) {
            (None, Some(instance), Some(checkpoints)) => Some((instance, checkpoints)),
            _ => None,
        }
    }

    /// [`Model::restore_inner`] when the count differs: whether the
    /// checkpoint was there.
    fn restore(&mut self, events: u64) -> Result<bool, FmuError> {
        let now = self.events;
        let Some((instance, c)) = self.saving() else {
            return Ok(false);
        };
        let Some(saved) = c.find(events).map(|checkpoint| checkpoint.saved.0) else {
            return Ok(false);
        };
        c.left.valid = false;
        c.left.saved.0 = instance.get_state(c.left.saved.0)?;
        (c.left.events, c.left.valid, c.restored_to) = (now, true, events);
        instance.set_state(saved)?;
        c.drop_after(events);
        self.events = events;
        Ok(true)
    }

    /// [`Model::revert_inner`]: whether the state is back (true when
    /// there was no restore to undo).
    fn revert(&mut self) -> Result<bool, FmuError> {
        let Some((instance, c)) = self.saving() else {
            return Ok(true);
        };
        if !c.left.valid {
            return Ok(true);
        }
        c.left.valid = false;
        let left = c.left.events;
        c.drop_after(c.restored_to);
        // The state left goes back into the ring; the ring's memory for
        // its count becomes the next restore's.
        let slot = &mut c.ring[(left % INNER_CHECKPOINTS as u64) as usize];
        std::mem::swap(&mut slot.saved, &mut c.left.saved);
        (slot.events, slot.valid) = (left, true);
        let saved = slot.saved.0;
        instance.set_state(saved)?;
        self.events = left;
        Ok(true)
    }

    /// [`Model::export_inner`]: whether the state was written.
    fn export(&mut self, out: &mut Vec<u8>) -> Result<bool, FmuError> {
        let (events, can) = (self.events, self.program.can_serialize);
        let Some((instance, c)) = self.saving().filter(|_| can) else {
            return Ok(false);
        };
        let Some(saved) = c.find(events).map(|checkpoint| checkpoint.saved.0) else {
            return Ok(false);
        };
        let size = instance.serialized_size(saved)?;
        out.clear();
        out.resize(size, 0);
        instance.serialize_state(saved, out)?;
        Ok(true)
    }

    /// [`Model::import_inner`]: whether the state was taken.
    fn import(&mut self, bytes: &[u8], events: u64) -> Result<bool, FmuError> {
        let can = self.program.can_serialize;
        let Some((instance, c)) = self.saving().filter(|_| can) else {
            return Ok(false);
        };
        let state = instance.deserialize_state(bytes)?;
        let set = instance.set_state(state);
        let freed = instance.free_state(state);
        set.and(freed)?;
        // The checkpoints of this instance's own path describe another.
        c.left.valid = false;
        for checkpoint in &mut c.ring {
            checkpoint.valid = false;
        }
        c.save(instance, events)?;
        self.events = events;
        Ok(true)
    }

    /// `outcome` as the inner-state methods give it: false, the error kept,
    /// on failure.
    fn kept(&mut self, outcome: Result<bool, FmuError>) -> bool {
        outcome.unwrap_or_else(|e| {
            self.keep(e);
            false
        })
    }
}

impl Drop for FmuModel {
    fn drop(&mut self) {
        if let (Some(instance), Some(c)) = (self.instance.as_deref_mut(), self.checkpoints.as_mut()) {
            c.free(instance);
        }
    }
}

/// Writes the modes of `indicators` (1 above zero, 0 not) and the next
/// time event (infinite for none) as the discrete states `xd`.
fn write_discrete(indicators: &[f64], next_event: Option<f64>, xd: &mut [f64]) {
    for (mode, &z) in xd.iter_mut().zip(indicators) {
        *mode = if z > 0.0 { 1.0 } else { 0.0 };
    }
    xd[indicators.len()] = next_event.unwrap_or(f64::INFINITY);
}

/// Sets time (the FMU's: Tandem's `t` after the start), continuous
/// states and inputs.
fn set_point(
    instance: &mut dyn ModelExchange,
    program: &Program,
    t: f64,
    x: &[f64],
    u: &[f64],
    scratch: &mut [f64],
) -> Result<(), FmuError> {
    instance.set_time(program.start + t)?;
    instance.set_continuous_states(x)?;
    program
        .continuous
        .write(instance, &u[..program.continuous.len()], scratch)
}

/// The scratch buffer's length an instance of `program` needs.
fn widest(program: &Program) -> usize {
    [&program.continuous, &program.discrete, &program.outputs]
        .iter()
        .map(|s| s.widest())
        .max()
        .unwrap_or(0)
}

/// How an event iteration ended.
enum Events {
    /// No more rounds needed: whether the continuous states changed, and
    /// the next time event (the FMU's time; one that is not finite or not
    /// after the event is none).
    Settled { changed: bool, next: Option<f64> },
    /// The FMU asked to end the simulation.
    Terminate,
}

/// The discrete-state update repeated until the FMU needs no more (the
/// instance is in event mode) at the FMU's time `t`.
fn iterate_events(instance: &mut dyn ModelExchange, name: &str, t: f64) -> Result<Events, FmuError> {
    let mut changed = false;
    for _ in 0..MAX_EVENT_ROUNDS {
        let update = instance.update_discrete_states()?;
        changed |= update.states_changed;
        if update.terminate {
            return Ok(Events::Terminate);
        }
        if !update.again {
            let next = update.next_event.filter(|&te| te.is_finite() && te > t);
            return Ok(Events::Settled { changed, next });
        }
    }
    Err(FmuError::EventIteration {
        fmu: name.to_string(),
        time: t,
        rounds: MAX_EVENT_ROUNDS,
    })
}

fn terminated(instance: &dyn ModelExchange, name: &str, t: f64) -> FmuError {
    FmuError::Terminated {
        fmu: name.to_string(),
        time: t,
        log: instance.core().log.last(),
    }
}

/// For each state, the derivatives that depend on it, when every
/// derivative lists its dependencies.
fn sparsity(description: &ModelDescription, states: &[usize]) -> Option<Vec<Vec<usize>>> {
    let derivatives = &description.structure.derivatives;
    let column: HashMap<usize, usize> = states.iter().enumerate().map(|(j, &s)| (s, j)).collect();
    let mut users = vec![Vec::new(); states.len()];
    for (i, derivative) in derivatives.iter().enumerate() {
        for state in derivative.dependencies.as_ref()? {
            if let Some(&j) = column.get(state) {
                if users[j].last() != Some(&i) {
                    users[j].push(i);
                }
            }
        }
    }
    Some(users)
}

impl Model for FmuModel {
    fn layout(&self) -> &Layout {
        &self.program.layout
    }

    /// A new instance; when the FMU allows only one per process, or
    /// instantiating fails, an instance that reports why at its first
    /// major step ([`FmuModel::try_fork`] says it at once).
    fn fork(&self) -> Box<dyn Model> {
        Box::new(
            self.try_fork()
                .unwrap_or_else(|e| FmuModel::failed(Arc::clone(&self.program), e)),
        )
    }

    fn initial_state(&mut self, x: &mut [f64], xd: &mut [f64]) {
        xd.copy_from_slice(&self.initial);
        let (None, Some(instance)) = (&self.error, self.instance.as_deref_mut()) else {
            x.fill(f64::NAN);
            return;
        };
        if let Err(e) = instance.get_continuous_states(x) {
            x.fill(f64::NAN);
            self.keep(e);
        }
    }

    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        if self.terminated.is_some() {
            dx.fill(0.0);
            return;
        }
        self.evaluate(s, dx, |instance, _, dx, _| instance.get_derivatives(dx));
    }

    /// After the FMU asked to terminate, the outputs are held.
    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        if self.terminated.is_some() {
            return;
        }
        self.evaluate(s, y, |instance, program, y, scratch| {
            program.outputs.read(instance, y, scratch)
        });
    }

    fn finished(&self) -> Option<f64> {
        self.terminated
    }

    fn major_outputs(&mut self, s: &mut MajorStep<'_>) -> Result<(), NonFinite> {
        let (state, y) = s.state_and_outputs();
        self.outputs(state, y);
        match &self.error {
            None => Ok(()),
            Some(e) => Err(NonFinite {
                time: s.t,
                place: e.summary(),
                value: f64::NAN,
            }),
        }
    }

    fn update(&mut self, s: &mut MajorStep<'_>) {
        if self.error.is_some() || self.terminated.is_some() {
            return;
        }
        if let Err(e) = self.handle_events(s.t, s.x, s.xd, s.u) {
            self.keep(e);
        }
    }

    fn zero_crossings(&mut self, s: StateRef<'_>, z: &mut [f64]) {
        if self.terminated.is_some() {
            z.fill(1.0);
            return;
        }
        let n = self.program.indicators;
        let (indicators, time_event) = z.split_at_mut(n);
        if n > 0 {
            self.evaluate(s, indicators, |instance, _, z, _| instance.get_event_indicators(z));
        }
        let (modes, next_event) = s.xd.split_at(n);
        for (z, &mode) in indicators.iter_mut().zip(modes) {
            if mode < 0.5 {
                *z = -*z;
            }
        }
        if let Some(distance) = time_event.first_mut() {
            let te = next_event[0];
            *distance = if te.is_finite() { te - s.t } else { 1.0 };
        }
    }

    fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
        self.program.sparsity.clone()
    }

    /// The event iterations run since the initial one.
    fn inner_events(&self) -> u64 {
        self.events
    }

    /// `SetFMUstate` with the checkpoint after `events` events, the state
    /// left saved first (`GetFMUstate` into its memory); false without
    /// `canGetAndSetFMUstate` or when that checkpoint is no longer kept.
    fn restore_inner(&mut self, events: u64) -> bool {
        if events == self.events {
            return true;
        }
        let outcome = self.restore(events);
        self.kept(outcome)
    }

    fn revert_inner(&mut self) -> bool {
        let outcome = self.revert();
        self.kept(outcome)
    }

    /// The checkpoint of the newest event iteration, serialized
    /// (`SerializedFMUstateSize`, `SerializeFMUstate`).
    fn export_inner(&mut self, out: &mut Vec<u8>) -> bool {
        let outcome = self.export(out);
        self.kept(outcome)
    }

    /// `DeSerializeFMUstate` (the FMU allocates the state), `SetFMUstate`,
    /// `FreeFMUstate`; the state taken becomes the only checkpoint.
    fn import_inner(&mut self, bytes: &[u8], events: u64) -> bool {
        let outcome = self.import(bytes, events);
        self.kept(outcome)
    }
}
