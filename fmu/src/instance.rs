//! One FMU instance, whatever the FMI version: a Tandem simulation of the
//! packed model stepped by an importer. The FMI 3 and FMI 2 entry points
//! are thin shims over it; its errors are their messages (the shim names
//! the call).

use std::fmt;
use std::mem::MaybeUninit;
use std::path::Path;

use tandem_config::bounds::MAX_STOP;
use tandem_models::Model;
use tandem_runtime::sim::Snapshot;
use tandem_runtime::{FixedStep, SimError};

use crate::parameters::{self, PackedError, Parameter};
use crate::resources::{ResourceError, Resources};
use crate::run::Run;
use crate::variables::{self, Counts, Variable};

/// The relative tolerance of times and step multiples given by an importer.
pub const TIME_TOLERANCE: f64 = 1e-9;

/// Where an instance is in the FMI state machine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Mode {
    /// Instantiated, not yet initialized.
    Instantiated,
    /// Between entering and leaving Initialization Mode.
    Initialization,
    /// Stepping.
    Step,
    /// Terminated.
    Terminated,
    /// A step failed at this time: the simulation is not usable until a
    /// reset or a restored FMU state.
    Failed(f64),
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Mode::Instantiated => f.write_str("Instantiated mode (before initialization)"),
            Mode::Initialization => f.write_str("Initialization Mode"),
            Mode::Step => f.write_str("Step Mode"),
            Mode::Terminated => f.write_str("Terminated mode"),
            Mode::Failed(t) => write!(
                f,
                "the failed state left by an earlier error at t = {t} s (reset the instance or restore a saved FMU state)"
            ),
        }
    }
}

/// Why a call on an instance failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    /// The resources folder is missing or broken.
    #[error(transparent)]
    Resources(#[from] ResourceError),
    /// The importer's token is not this FMU's.
    #[error("the instantiation token {given} is not this FMU's ({expected}): the modelDescription.xml read is not the one packed with these resources")]
    Token {
        /// The token given.
        given: String,
        /// The token of the resources.
        expected: String,
    },
    /// The call is not allowed in the current mode.
    #[error("not allowed in {mode}; allowed {allowed}")]
    Mode {
        /// The current mode.
        mode: Mode,
        /// Where the call is allowed.
        allowed: &'static str,
    },
    /// A pointer argument is NULL.
    #[error("{0} is NULL")]
    Null(&'static str),
    /// A string argument is not UTF-8.
    #[error("{0} is not UTF-8 text")]
    NotUtf8(&'static str),
    /// The resources folder was not given as a folder.
    #[error("{what} \"{given}\" is not a folder path{expected}: the importer must pass the path of the FMU's unpacked resources folder")]
    ResourceLocation {
        /// `resourcePath` or `fmuResourceLocation`.
        what: &'static str,
        /// What was given.
        given: String,
        /// What form is expected, when the call prescribes one.
        expected: &'static str,
    },
    /// An instantiation other than Co-Simulation.
    #[error("Tandem's FMUs are Co-Simulation FMUs only; instantiate them for Co-Simulation ({0})")]
    NotCoSimulation(&'static str),
    /// The counts of value references and values differ.
    #[error("{references} value references but {values} values: give one value per value reference (all variables are scalars)")]
    Count {
        /// Value references given.
        references: usize,
        /// Values given.
        values: usize,
    },
    /// A value reference names no variable.
    #[error("value reference {vr} is not a variable of this FMU; its value references are {ranges}")]
    UnknownVariable {
        /// The value reference.
        vr: u32,
        /// The FMU's value references, described.
        ranges: String,
    },
    /// A variable that cannot be set.
    #[error("variable \"{name}\" (value reference {vr}) is {what}: only inputs and parameters can be set")]
    NotSettable {
        /// Its name.
        name: String,
        /// Its value reference.
        vr: u32,
        /// `the independent variable` or `an output`.
        what: &'static str,
    },
    /// An input or parameter value that is not a number.
    #[error("{what} \"{name}\" (value reference {vr}) cannot be set to {value}: give a finite number")]
    NotFinite {
        /// `input` or `parameter`.
        what: &'static str,
        /// The variable's name.
        name: String,
        /// Its value reference.
        vr: u32,
        /// The value given.
        value: f64,
    },
    /// A fixed parameter set while stepping.
    #[error("parameter \"{name}\" (value reference {vr}) is fixed: set it before initialization (Instantiated or Initialization Mode, e.g. as a start value); a change while stepping would change the model's signals, states or rates")]
    Fixed {
        /// The parameter's name.
        name: String,
        /// Its value reference.
        vr: u32,
    },
    /// A parameter value the model does not take.
    #[error("parameter \"{name}\" (value reference {vr}) cannot be set to {value}: {why}")]
    Parameter {
        /// The parameter's name.
        name: String,
        /// Its value reference.
        vr: u32,
        /// The value given.
        value: f64,
        /// Why not, with the fix.
        why: String,
    },
    /// The model cannot be made anew with the parameter values of a reset
    /// or a restored FMU state.
    #[error("the model cannot be made with the parameter values {when}: {why}")]
    Rebuild {
        /// `of the reset` or `of the FMU state`.
        when: &'static str,
        /// Why.
        why: Box<PackedError>,
    },
    /// The experiment does not start at 0.
    #[error("startTime {0} s: Tandem models start at t = 0; give startTime 0")]
    StartTime(f64),
    /// The stop time is out of range.
    #[error("stopTime {0} s: give a stop time from the model's step to {MAX_STOP:e} s, or none")]
    StopTime(f64),
    /// The communication point is not where the instance is.
    #[error("currentCommunicationPoint {given} s is not the instance's time {at} s: step on from where the last step ended (or restore the FMU state of that time)")]
    Time {
        /// The time given.
        given: f64,
        /// The instance's time.
        at: f64,
    },
    /// The communication step is not a positive, finite length.
    #[error("communicationStepSize {0} s: give a positive, finite step")]
    StepSize(f64),
    /// The step would pass the stop time.
    #[error("a step to t = {end} s passes the stop time {stop} s given at initialization (without one, Tandem's bound of {MAX_STOP} s)")]
    PastStop {
        /// Where the step would end.
        end: f64,
        /// The stop time.
        stop: f64,
    },
    /// The simulation failed.
    #[error("at t = {time} s: {error}")]
    Simulation {
        /// When.
        time: f64,
        /// What happened.
        error: SimError,
    },
    /// An FMU state of another FMU.
    #[error("the FMU state was saved by an instance of another FMU (instantiation token {0}); restore states of this FMU only")]
    ForeignState(String),
    /// An FMI function this FMU does not implement.
    #[error("not supported by Tandem's FMUs, which are Co-Simulation FMUs with Float64 variables, without Event Mode, clocks, derivatives or serialized states")]
    Unsupported,
}

/// Where an instance is, to come back to (an FMU state).
#[derive(Clone, Debug)]
pub struct State {
    token: String,
    mode: Mode,
    inputs: Vec<f64>,
    values: Vec<f64>,
    snapshot: Snapshot,
}

/// One instance of the packed model.
pub struct Instance {
    /// Forked for every new simulation (at initialization and reset),
    /// with the parameters' current values.
    model: Box<dyn Model>,
    /// The block diagram's text, compiled anew when fixed parameters
    /// change (none for a built-in model, which has no parameters).
    diagram: Option<String>,
    /// The parameters the FMU exposes, and their current values.
    parameters: Vec<Parameter>,
    values: Vec<f64>,
    settings: FixedStep,
    token: String,
    run: Run,
    inputs: Vec<f64>,
    mode: Mode,
    stop: Option<f64>,
}

impl Instance {
    /// An instance of the model packed in the resources folder `dir`,
    /// checked against the importer's instantiation `token`.
    pub fn new(dir: &Path, token: &str) -> Result<Instance, CallError> {
        let resources = Resources::read(dir)?;
        let expected = resources.token();
        if token != expected {
            return Err(CallError::Token {
                given: token.to_string(),
                expected,
            });
        }
        let packed = resources.load(dir)?;
        let model = packed.model;
        let settings = FixedStep {
            stop: MAX_STOP,
            ..packed.settings
        };
        let run = simulation(&*model, settings)?;
        let inputs = model.layout().inputs.iter().map(|v| v.default).collect();
        Ok(Instance {
            model,
            diagram: resources.diagram().map(str::to_string),
            values: packed.parameters.iter().map(Parameter::start_value).collect(),
            parameters: packed.parameters,
            settings,
            token: expected,
            run,
            inputs,
            mode: Mode::Instantiated,
            stop: None,
        })
    }

    /// The time the simulation is at.
    pub fn time(&self) -> f64 {
        self.run.sim.time()
    }

    /// Fails unless the instance is in one of `modes`.
    fn require(&self, modes: &[Mode], allowed: &'static str) -> Result<(), CallError> {
        if modes.contains(&self.mode) {
            Ok(())
        } else {
            Err(CallError::Mode {
                mode: self.mode,
                allowed,
            })
        }
    }

    /// Checks the experiment's start time (0) and records its stop time
    /// (FMI 2's fmi2SetupExperiment; FMI 3 gives them when entering
    /// initialization).
    pub fn setup_experiment(&mut self, start: f64, stop: Option<f64>) -> Result<(), CallError> {
        self.require(&[Mode::Instantiated], "before initialization")?;
        if start.abs() > TIME_TOLERANCE * self.settings.step {
            return Err(CallError::StartTime(start));
        }
        if let Some(stop) = stop {
            if !(self.settings.step..=MAX_STOP).contains(&stop) {
                return Err(CallError::StopTime(stop));
            }
        }
        self.stop = stop;
        Ok(())
    }

    /// Enters Initialization Mode: the simulation starts anew, to the stop
    /// time of the experiment (the inputs and parameters set so far are
    /// kept).
    pub fn enter_initialization(&mut self) -> Result<(), CallError> {
        self.require(&[Mode::Instantiated], "once, after instantiation or a reset")?;
        self.start_run()?;
        self.mode = Mode::Initialization;
        Ok(())
    }

    /// Leaves Initialization Mode for Step Mode.
    pub fn exit_initialization(&mut self) -> Result<(), CallError> {
        self.require(&[Mode::Initialization], "in Initialization Mode")?;
        self.mode = Mode::Step;
        Ok(())
    }

    /// Sets variables by value reference: inputs and parameters (fixed
    /// ones before initialization only).
    pub fn set(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), CallError> {
        if vrs.len() != values.len() {
            return Err(CallError::Count {
                references: vrs.len(),
                values: values.len(),
            });
        }
        self.require(
            &[Mode::Instantiated, Mode::Initialization, Mode::Step],
            "from instantiation until termination",
        )?;
        let layout = self.model.layout();
        let mut inputs = Vec::with_capacity(vrs.len());
        let mut changes = Vec::new();
        for (&vr, &value) in vrs.iter().zip(values) {
            let i = match self.find(vr)? {
                Variable::Input(i) => i,
                Variable::Parameter(i) => {
                    let parameter = &self.parameters[i];
                    if !value.is_finite() {
                        return Err(CallError::NotFinite {
                            what: "parameter",
                            name: parameter.name(),
                            vr,
                            value,
                        });
                    }
                    if self.mode == Mode::Step && !parameter.tunable {
                        return Err(CallError::Fixed {
                            name: parameter.name(),
                            vr,
                        });
                    }
                    changes.push((i, value));
                    continue;
                }
                Variable::Time => {
                    return Err(CallError::NotSettable {
                        name: variables::time_name(layout),
                        vr,
                        what: "the independent variable",
                    })
                }
                Variable::Output(i) => {
                    return Err(CallError::NotSettable {
                        name: layout.outputs[i].name.clone(),
                        vr,
                        what: "an output",
                    })
                }
            };
            if !value.is_finite() {
                return Err(CallError::NotFinite {
                    what: "input",
                    name: layout.inputs[i].name.clone(),
                    vr,
                    value,
                });
            }
            inputs.push((i, value));
        }
        // Checked first and applied whole: a refused call changes nothing.
        if !changes.is_empty() {
            self.tune(&changes)?;
        }
        for (i, value) in inputs {
            self.inputs[i] = value;
        }
        self.run.sim.set_inputs(&self.inputs);
        Ok(())
    }

    /// Sets parameters (index, value): while stepping, the running model
    /// takes the new definition at once; before, the model is made anew
    /// with every parameter's value (and in Initialization Mode the
    /// simulation starts anew from it).
    fn tune(&mut self, changes: &[(usize, f64)]) -> Result<(), CallError> {
        let refused = |this: &Self, (i, why): (usize, String)| {
            let value = changes.iter().find(|c| c.0 == i).map_or(f64::NAN, |c| c.1);
            CallError::Parameter {
                name: this.parameters[i].name(),
                vr: variables::parameter(this.counts(), i),
                value,
                why,
            }
        };
        if self.mode == Mode::Step {
            let definition = parameters::retuned(&*self.model, &self.parameters, changes);
            if let Some(mut definition) = definition.map_err(|e| refused(self, e))? {
                self.model.swap_definition(&mut definition.clone());
                self.run.sim.swap_definition(&mut definition);
            }
        } else {
            let mut values = self.values.clone();
            for &(i, x) in changes {
                values[i] = x;
            }
            let model = self.build(&values).map_err(|why| {
                // The first change whose value alone the model refuses
                // is named; failing that, the last.
                let alone = changes.iter().find(|&&(i, x)| {
                    let mut one = self.values.clone();
                    one[i] = x;
                    self.build(&one).is_err()
                });
                let (i, _) = alone.or(changes.last()).copied().unwrap_or_default();
                refused(self, (i, why.to_string()))
            })?;
            self.model = model;
            if self.mode == Mode::Initialization {
                self.start_run()?;
            }
        }
        for &(i, x) in changes {
            self.values[i] = x;
        }
        Ok(())
    }

    /// The model with the parameters at `values`.
    fn build(&self, values: &[f64]) -> Result<Box<dyn Model>, PackedError> {
        match &self.diagram {
            Some(text) => parameters::compile_with(text, &self.parameters, values, self.model.layout()),
            None => Ok(self.model.fork()),
        }
    }

    /// The simulation starts anew from the model, to the experiment's stop
    /// time, with the inputs set so far.
    fn start_run(&mut self) -> Result<(), CallError> {
        let settings = FixedStep {
            stop: self.stop.unwrap_or(MAX_STOP),
            ..self.settings
        };
        self.run = simulation(&*self.model, settings)?;
        self.run.sim.set_inputs(&self.inputs);
        Ok(())
    }

    /// How many variables of each kind the FMU has.
    fn counts(&self) -> Counts {
        Counts::of(self.model.layout(), self.parameters.len())
    }

    /// Reads variables by value reference: time, inputs, parameters and the
    /// outputs at the current time with the current inputs. Writes every
    /// element of `values` on success (the importer's array, which need
    /// not be initialised), none on failure.
    pub fn get(&mut self, vrs: &[u32], values: &mut [MaybeUninit<f64>]) -> Result<(), CallError> {
        if vrs.len() != values.len() {
            return Err(CallError::Count {
                references: vrs.len(),
                values: values.len(),
            });
        }
        let found = vrs.iter().map(|&vr| self.find(vr)).collect::<Result<Vec<_>, _>>()?;
        let time = self.time();
        let outputs = if found.iter().any(|v| matches!(v, Variable::Output(_))) {
            self.run
                .outputs()
                .map_err(|error| CallError::Simulation { time, error })?
        } else {
            &[]
        };
        for (value, variable) in values.iter_mut().zip(found) {
            value.write(match variable {
                Variable::Time => time,
                Variable::Input(i) => self.inputs[i],
                Variable::Output(i) => outputs[i],
                Variable::Parameter(i) => self.values[i],
            });
        }
        Ok(())
    }

    /// The variable `vr` names.
    fn find(&self, vr: u32) -> Result<Variable, CallError> {
        let counts = self.counts();
        variables::find(counts, vr).ok_or_else(|| CallError::UnknownVariable {
            vr,
            ranges: variables::ranges(counts),
        })
    }

    /// Advances from `t` by `h`: the model's steps to the last grid point
    /// before `t + h`, then a shorter one to `t + h` when it is between
    /// two (an end within [`TIME_TOLERANCE`] of a grid point is that
    /// point). Stepped by whole multiples of the model's step, the instance
    /// is where `tandem sim` is at each communication point, bit for bit.
    pub fn step(&mut self, t: f64, h: f64) -> Result<(), CallError> {
        self.require(&[Mode::Step], "in Step Mode (after initialization)")?;
        let step = self.settings.step;
        let at = self.time();
        if (t - at).abs() > TIME_TOLERANCE * at.abs().max(step) {
            return Err(CallError::Time { given: t, at });
        }
        if !(h > 0.0 && h.is_finite()) {
            return Err(CallError::StepSize(h));
        }
        let (points, end) = grid_end(at, h, step);
        let stop = self.stop.unwrap_or(MAX_STOP);
        if end > stop + TIME_TOLERANCE * stop {
            return Err(CallError::PastStop { end, stop });
        }
        while self.run.sim.grid_point() < points {
            self.run.step().map_err(|error| self.fail(error))?;
        }
        if let Some(end) = end_between(end, points, step).filter(|&end| end > self.time()) {
            self.run.advance_to(end).map_err(|error| self.fail(error))?;
        }
        Ok(())
    }

    /// The error of a step that failed, which leaves the instance failed.
    fn fail(&mut self, error: SimError) -> CallError {
        let time = self.time();
        self.mode = Mode::Failed(time);
        CallError::Simulation { time, error }
    }

    /// Ends the simulation: only reset, FMU states and reading remain.
    pub fn terminate(&mut self) -> Result<(), CallError> {
        if matches!(self.mode, Mode::Instantiated | Mode::Terminated) {
            return Err(CallError::Mode {
                mode: self.mode,
                allowed: "once, after initialization",
            });
        }
        self.mode = Mode::Terminated;
        Ok(())
    }

    /// Goes back to the state right after instantiation.
    pub fn reset(&mut self) -> Result<(), CallError> {
        let starts: Vec<f64> = self.parameters.iter().map(Parameter::start_value).collect();
        if starts != self.values {
            self.model = self.build(&starts).map_err(|why| CallError::Rebuild {
                when: "of the reset (the packed ones)",
                why: Box::new(why),
            })?;
            self.values = starts;
        }
        self.run = simulation(&*self.model, self.settings)?;
        self.inputs = self.model.layout().inputs.iter().map(|v| v.default).collect();
        self.mode = Mode::Instantiated;
        self.stop = None;
        Ok(())
    }

    /// Saves where the instance is into `state`, reusing its memory, or into
    /// a new state when there is none.
    pub fn save(&self, state: Option<&mut State>) -> Result<Option<State>, CallError> {
        if let Mode::Failed(_) = self.mode {
            return Err(CallError::Mode {
                mode: self.mode,
                allowed: "in any other mode",
            });
        }
        let mut fresh = None;
        let state = match state {
            Some(state) => state,
            None => fresh.insert(State {
                token: String::new(),
                mode: self.mode,
                inputs: Vec::new(),
                values: Vec::new(),
                snapshot: Snapshot::default(),
            }),
        };
        state.token.clone_from(&self.token);
        state.mode = self.mode;
        state.inputs.clone_from(&self.inputs);
        state.values.clone_from(&self.values);
        self.run.sim.save(&mut state.snapshot);
        Ok(fresh)
    }

    /// Goes back to a saved state, its parameters' values included.
    pub fn restore(&mut self, state: &State) -> Result<(), CallError> {
        if state.token != self.token {
            return Err(CallError::ForeignState(state.token.clone()));
        }
        if state.values != self.values {
            // The model made anew with the state's values (the shape the
            // state was saved in), and a simulation of it to restore the
            // state into.
            self.model = self.build(&state.values).map_err(|why| CallError::Rebuild {
                when: "of the FMU state",
                why: Box::new(why),
            })?;
            self.values.clone_from(&state.values);
            self.start_run()?;
        }
        self.run.sim.restore(&state.snapshot);
        self.inputs.clone_from(&state.inputs);
        self.mode = state.mode;
        Ok(())
    }

    /// Leaves the instance unusable after an internal error.
    pub fn poison(&mut self) {
        self.mode = Mode::Failed(self.time());
    }
}

/// A run of `model` from t = 0.
fn simulation(model: &dyn Model, settings: FixedStep) -> Result<Run, CallError> {
    Run::new(model, settings).map_err(|error| CallError::Simulation { time: 0.0, error })
}

/// Where a communication step of `h` from `at` ends on a grid of `step`:
/// the index of the last grid point at or before its end, and the end
/// (that grid point's time when the end is within [`TIME_TOLERANCE`] of
/// it).
fn grid_end(at: f64, h: f64, step: f64) -> (u64, f64) {
    let end = at + h;
    let ticks = end / step;
    let nearest = ticks.round();
    if (ticks - nearest).abs() <= TIME_TOLERANCE * nearest.max(1.0) {
        (nearest as u64, nearest * step)
    } else {
        (ticks.floor() as u64, end)
    }
}

/// `end` when it lies after grid point `points` (of `step`), i.e. between
/// two grid points.
fn end_between(end: f64, points: u64, step: f64) -> Option<f64> {
    (end > points as f64 * step).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_models::ModelRef;
    use tandem_runtime::Method;

    /// The values of the variables `vrs`, read with [`Instance::get`].
    fn read(instance: &mut Instance, vrs: &[u32]) -> Vec<f64> {
        let mut values = vec![MaybeUninit::new(f64::NAN); vrs.len()];
        instance.get(vrs, &mut values).unwrap();
        // SAFETY: every element was initialised, with NaN, before the call.
        values.into_iter().map(|v| unsafe { v.assume_init() }).collect()
    }

    #[test]
    fn a_built_in_model_runs_from_its_resources_folder() {
        let settings = FixedStep {
            solver: Method::Rk4.into(),
            step: 0.001,
            stop: 1.0,
        };
        let resources = Resources::of(&ModelRef::Builtin("ev".into()), &settings).unwrap();
        let dir = std::env::temp_dir().join(format!("tandem-fmu-builtin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, bytes) in resources.files() {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        let mut instance = Instance::new(&dir, &resources.token()).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        instance.setup_experiment(0.0, Some(1.0)).unwrap();
        instance.enter_initialization().unwrap();
        instance.exit_initialization().unwrap();
        instance.step(0.0, 0.01).unwrap();
        let layout = instance.model.layout().clone();
        let vrs: Vec<u32> = (0..layout.outputs.len())
            .map(|i| variables::output(layout.inputs.len(), i))
            .collect();
        let values = read(&mut instance, &vrs);
        assert!(values.iter().all(|v| v.is_finite()), "{values:?}");
        assert_eq!(read(&mut instance, &[variables::TIME]), [0.01]);
        // A step far past the stop time is refused before any is taken.
        let e = instance.step(0.01, 1e20).unwrap_err().to_string();
        assert!(e.contains("passes the stop time 1 s"), "{e}");
        assert_eq!(read(&mut instance, &[variables::TIME]), [0.01]);
    }

    #[test]
    fn communication_steps_end_on_the_grid_or_between_two_points() {
        assert_eq!(grid_end(0.0, 0.01, 0.01), (1, 0.01));
        assert_eq!(grid_end(0.0, 0.03, 0.01), (3, 0.03));
        // Within the tolerance of a grid point: that point.
        assert_eq!(grid_end(0.0, 0.1 * 3.0 - 0.2, 0.1), (1, 0.1));
        assert_eq!(grid_end(0.2, 0.1 + 1e-13, 0.1), (3, 0.30000000000000004));
        // Between two: the last point before, and the end itself.
        assert_eq!(grid_end(0.0, 0.025, 0.01), (2, 0.025));
        assert_eq!(grid_end(0.025, 0.004, 0.01), (2, 0.029));
        assert_eq!(end_between(0.025, 2, 0.01), Some(0.025));
        assert_eq!(end_between(0.03, 3, 0.01), None);
    }
}
