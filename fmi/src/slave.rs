//! A Co-Simulation FMU as a slave a master steps: inputs in, one
//! communication step, outputs out, and its state saved and restored when
//! the FMU can.

use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tandem_models::Variable;

use crate::description::{InterfaceKind, ModelDescription, VariableType};
use crate::error::FmuError;
use crate::fmu::{Fmu, Loaded};
use crate::instance::{CoSimulation, Text};
use crate::instantiate;
use crate::parameters::{self, Parameters};
use crate::signals::{self, Inputs, Recorded, Signals};

/// How a communication step ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StepEnd {
    /// The FMU reached the step's end.
    Done,
    /// The FMU asked to end the simulation at this time (FMI 2: Discard
    /// with `fmi2Terminated`; FMI 3: `terminateSimulation`), which the
    /// standard makes a normal end: no further step is taken.
    Terminated(f64),
}

/// Gives each slave a number, to tell whose a saved state is.
static SLAVES: AtomicU64 = AtomicU64::new(0);

/// A state saved by [`FmuSlave::get_state`], to restore into the same
/// slave. The FMU's memory for it is freed by [`FmuSlave::free_state`], or
/// with the slave.
#[derive(Debug)]
pub struct FmuState {
    slave: u64,
    index: usize,
}

/// A pointer to a state the FMU allocated.
struct Saved(*mut c_void);

// SAFETY: the pointer is only handed back to the FMU by the slave owning
// it, through `&mut self`.
unsafe impl Send for Saved {}

/// An instantiated and initialised Co-Simulation FMU.
pub struct FmuSlave {
    loaded: Arc<Loaded>,
    instance: Box<dyn CoSimulation>,
    inputs: Signals,
    outputs: Signals,
    feedthrough: Vec<Vec<usize>>,
    id: u64,
    /// Saved states by [`FmuState::index`]; `None` once freed.
    states: Vec<Option<Saved>>,
    /// The first step's length, when the FMU cannot change it.
    fixed_step: Option<f64>,
    variable_step: bool,
    /// When the FMU asked to end the simulation.
    terminated: Option<f64>,
    /// The buffer typed reads and writes go through.
    scratch: Vec<f64>,
}

impl FmuSlave {
    /// Instantiates the Co-Simulation interface of `fmu`, sets
    /// `parameters` and initialises it at `start` (s) with the default
    /// experiment's tolerance.
    pub fn new(fmu: &Fmu, parameters: &Parameters, start: f64) -> Result<FmuSlave, FmuError> {
        FmuSlave::with(fmu, parameters, &Recorded::outputs(), start, None)
    }

    /// As [`FmuSlave::new`], its outputs the variables `recorded` chooses,
    /// the stop time (s), when given, told to the FMU.
    pub fn with(
        fmu: &Fmu,
        parameters: &Parameters,
        recorded: &Recorded,
        start: f64,
        stop: Option<f64>,
    ) -> Result<FmuSlave, FmuError> {
        let loaded = &fmu.loaded;
        let description = &loaded.description;
        let interface = loaded.interface(InterfaceKind::CoSimulation)?;
        let assignments = parameters::resolve(description, parameters)?;
        let mut inputs = signals::inputs(description, Inputs::All)?;
        parameters::input_defaults(description, &assignments, &mut inputs);
        let outputs = signals::outputs(description, recorded)?;
        let feedthrough = signals::feedthrough(description, &inputs, &outputs)?;
        let mut instance = instantiate::co_simulation(loaded)?;
        parameters::apply(instance.as_mut(), &assignments)?;
        instance.enter_initialization(start, stop, description.default_experiment.tolerance)?;
        instance.exit_initialization()?;
        Ok(FmuSlave {
            scratch: vec![0.0; inputs.widest().max(outputs.widest())],
            variable_step: interface.can_handle_variable_step,
            loaded: Arc::clone(loaded),
            instance,
            inputs,
            outputs,
            feedthrough,
            id: SLAVES.fetch_add(1, Ordering::Relaxed),
            states: Vec::new(),
            fixed_step: None,
            terminated: None,
        })
    }

    /// The numeric inputs (an array's by element), in the order
    /// [`FmuSlave::set_inputs`] takes.
    pub fn input_variables(&self) -> &[Variable] {
        &self.inputs.variables
    }

    /// The numeric outputs, or the variables chosen to be recorded (an
    /// array's by element), in the order [`FmuSlave::outputs`] gives.
    pub fn output_variables(&self) -> &[Variable] {
        &self.outputs.variables
    }

    /// For each output, the inputs (by position) it depends on directly.
    pub fn feedthrough(&self) -> &[Vec<usize>] {
        &self.feedthrough
    }

    /// Sets the inputs, one value per input variable. Allocates nothing.
    pub fn set_inputs(&mut self, u: &[f64]) -> Result<(), FmuError> {
        self.check_length("inputs", u.len(), self.inputs.len())?;
        if u.is_empty() {
            return Ok(());
        }
        self.inputs.write(self.instance.as_mut(), u, &mut self.scratch)
    }

    /// Integrates from `t` over `h` seconds. Allocates nothing unless it
    /// fails. A step the FMU discards without asking to end is an error
    /// ([`FmuError::Discarded`]); a step after it asked to end is one too.
    pub fn do_step(&mut self, t: f64, h: f64) -> Result<StepEnd, FmuError> {
        if let Some(time) = self.terminated {
            return Err(self.terminated_error(time));
        }
        if !(t.is_finite() && h.is_finite() && h > 0.0) {
            return Err(FmuError::BadStep {
                fmu: self.name().to_string(),
                t,
                h,
            });
        }
        if !self.variable_step {
            let first = *self.fixed_step.get_or_insert(h);
            if (h - first).abs() > 1e-9 * first.abs() {
                return Err(FmuError::StepSize {
                    fmu: self.name().to_string(),
                    first,
                    given: h,
                });
            }
        }
        let outcome = self.instance.do_step(t, h)?;
        if outcome.terminate {
            self.terminated = Some(outcome.last_time);
            return Ok(StepEnd::Terminated(outcome.last_time));
        }
        if outcome.discarded {
            return Err(FmuError::Discarded {
                fmu: self.name().to_string(),
                t,
                h,
                reached: outcome.last_time,
                variable: self.variable_step,
                log: self.instance.core().log.last(),
            });
        }
        Ok(StepEnd::Done)
    }

    /// The value now of the String (its UTF-8 bytes) or Binary variable
    /// `name` (or alias), which no signal carries.
    pub fn text(&mut self, name: &str) -> Result<Vec<u8>, FmuError> {
        let description = &self.loaded.description;
        let variable = description.variable(name).ok_or_else(|| FmuError::UnknownVariable {
            fmu: description.model_name.clone(),
            name: name.to_string(),
            near: crate::parameters::near_names(description, name),
        })?;
        let ty = match variable.kind {
            VariableType::String => Text::String,
            VariableType::Binary => Text::Binary,
            _ => {
                return Err(FmuError::WrongType {
                    fmu: description.model_name.clone(),
                    name: name.to_string(),
                    expected: variable.kind.to_string(),
                    given: "String or Binary",
                })
            }
        };
        let vr = variable.value_reference;
        self.instance.get_text(ty, vr)
    }

    /// When the FMU asked to end the simulation, if it did.
    pub fn terminated(&self) -> Option<f64> {
        self.terminated
    }

    /// Writes the outputs, one value per output variable. Allocates nothing
    /// unless it fails.
    pub fn outputs(&mut self, y: &mut [f64]) -> Result<(), FmuError> {
        self.check_length("outputs", y.len(), self.outputs.len())?;
        if y.is_empty() {
            return Ok(());
        }
        self.outputs.read(self.instance.as_mut(), y, &mut self.scratch)
    }

    /// Whether the FMU takes communication steps of any length
    /// (`canHandleVariableCommunicationStepSize`).
    pub fn can_vary_step(&self) -> bool {
        self.variable_step
    }

    /// Whether the FMU can save and restore its state
    /// (`canGetAndSetFMUstate`).
    pub fn can_roll_back(&self) -> bool {
        self.loaded
            .description
            .co_simulation
            .as_ref()
            .is_some_and(|i| i.can_get_and_set_state)
    }

    /// Saves the FMU's state, to go back to it with
    /// [`FmuSlave::set_state`]. An error when the FMU cannot roll back.
    pub fn get_state(&mut self) -> Result<FmuState, FmuError> {
        let saved = self.instance.get_state(std::ptr::null_mut())?;
        self.states.push(Some(Saved(saved)));
        Ok(FmuState {
            slave: self.id,
            index: self.states.len() - 1,
        })
    }

    /// Saves the FMU's state again into `state`, reusing its memory (for
    /// a master that saves every macro step).
    pub fn save_state(&mut self, state: &mut FmuState) -> Result<(), FmuError> {
        let slot = self.slot(state)?;
        let saved = self.instance.get_state(slot)?;
        self.states[state.index] = Some(Saved(saved));
        Ok(())
    }

    /// Goes back to a saved state (time included).
    pub fn set_state(&mut self, state: &FmuState) -> Result<(), FmuError> {
        let slot = self.slot(state)?;
        self.instance.set_state(slot)?;
        self.terminated = None;
        Ok(())
    }

    /// Frees a saved state's memory in the FMU.
    pub fn free_state(&mut self, state: FmuState) -> Result<(), FmuError> {
        let slot = self.slot(&state)?;
        self.states[state.index] = None;
        self.instance.free_state(slot)
    }

    /// Calls that returned Warning so far.
    pub fn warnings(&self) -> u64 {
        self.instance.core().warnings
    }

    /// The FMU's last log messages, oldest first.
    pub fn log(&self) -> Vec<String> {
        self.instance.core().log.messages()
    }

    /// What the FMU's `modelDescription.xml` says.
    pub fn description(&self) -> &ModelDescription {
        &self.loaded.description
    }

    fn name(&self) -> &str {
        &self.loaded.description.model_name
    }

    /// The FMU's pointer of a state this slave saved and has not freed.
    fn slot(&self, state: &FmuState) -> Result<*mut c_void, FmuError> {
        match self.states.get(state.index) {
            Some(Some(Saved(pointer))) if state.slave == self.id => Ok(*pointer),
            _ => Err(FmuError::ForeignState {
                fmu: self.name().to_string(),
            }),
        }
    }

    fn check_length(&self, what: &'static str, given: usize, expected: usize) -> Result<(), FmuError> {
        if given == expected {
            return Ok(());
        }
        Err(FmuError::Length {
            fmu: self.name().to_string(),
            what,
            given,
            expected,
        })
    }

    fn terminated_error(&self, time: f64) -> FmuError {
        FmuError::Terminated {
            fmu: self.name().to_string(),
            time,
            log: self.instance.core().log.last(),
        }
    }
}

impl Drop for FmuSlave {
    /// Frees the states still saved; the instance is then terminated and
    /// freed.
    fn drop(&mut self) {
        for Saved(pointer) in self.states.drain(..).flatten() {
            let _ = self.instance.free_state(pointer);
        }
    }
}
