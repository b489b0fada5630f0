//! Loading the participant a `[[model]]` names: the one place that knows
//! the kinds of sources (a JSON block diagram, a built-in plant, an FMU).

use std::path::Path;

use tandem_config::{fixed_step, ConfigError, Located, Overrides};
use tandem_models::diagram::{self, SimulationDef};
use tandem_models::ModelRef;
use tandem_runtime::FixedStep;

use tandem_fmi::{Fmu, FmuError, FmuModel, FmuSlave, Host, InstanceLimit, InterfaceKind, Parameters, Recorded};
use tandem_models::Model;

use super::{Parts, SystemError};
use crate::bounds::MAX_MICRO_STEPS;
use crate::fmu::CoSimulationFmu;
use crate::plant::part::PlantPart;
use crate::slave::ModelSlave;
use crate::submodel::{Feedthrough, SubModel, SubModelError};

/// A `[[model]]` of a system file, checked but not loaded: what
/// [`load_source`] needs, each value with its place in the file.
#[derive(Clone, Debug)]
pub struct ModelSpec {
    /// `name`.
    pub name: Located<String>,
    /// `source`: a JSON diagram's path (relative to the system file), a
    /// built-in model's name, or an `.fmu`.
    pub source: Located<String>,
    /// `solver`, if given.
    pub solver: Option<Located<String>>,
    /// `step` (the micro step), if given.
    pub step: Option<Located<f64>>,
    /// `rtol`, if given.
    pub rtol: Option<Located<f64>>,
    /// `atol`, if given.
    pub atol: Option<Located<f64>>,
    /// `parameters`: values set by name before an FMU is initialised.
    pub parameters: Vec<(String, Located<tandem_fmi::Value>)>,
    /// `signals`: an FMU's variables that are its outputs besides its own
    /// outputs, by name or pattern (as `tandem sim --signals` takes them).
    pub signals: Vec<Located<String>>,
    /// Its communication step (s): `every` base macro steps.
    pub communication_step: f64,
    /// The end of the co-simulation (s).
    pub stop: f64,
}

/// Loads the participant `spec` names; `file` is the system file, against
/// whose directory paths resolve and which errors name.
pub fn load_source(spec: &ModelSpec, file: &Path) -> Result<Box<dyn SubModel>, SystemError> {
    load_source_with(spec, file, None, false)
}

/// [`load_source`], an FMU run out of process, in the program `isolation`
/// describes, when given (see [`tandem_fmi::isolate`]), a block diagram
/// interpreted when `interpret` (else compiled to machine code).
pub fn load_source_with(
    spec: &ModelSpec,
    file: &Path,
    isolation: Option<&Host>,
    interpret: bool,
) -> Result<Box<dyn SubModel>, SystemError> {
    load_part(spec, file, isolation, interpret, Parts::Participants)
}

/// The participant `spec` names ([`load_source_with`]), or, for
/// `Parts::Plant`, the model it names as a part of a real-time plant
/// ([`PlantPart`]): an FMU by its Model Exchange interface (one with only
/// Co-Simulation stays a participant stepping itself, which the plant
/// refuses by name), its solver settings not used.
pub(super) fn load_part(
    spec: &ModelSpec,
    file: &Path,
    isolation: Option<&Host>,
    interpret: bool,
    parts: Parts,
) -> Result<Box<dyn SubModel>, SystemError> {
    let text = spec.source.value.trim();
    let base = file.parent().unwrap_or(Path::new(""));
    let unusable = |e: &dyn std::fmt::Display| spec.source.error(file, format!("cannot use this model: {e}"));
    if tandem_fmi::is_fmu(Path::new(text)) {
        return load_fmu(spec, file, &base.join(text), isolation, parts).map_err(|e| match e {
            FmuLoadError::Parameter { index, error } => {
                SystemError::Invalid(spec.parameters[index].1.error(file, error.to_string()))
            }
            FmuLoadError::Signal { index, error } => {
                SystemError::Invalid(spec.signals[index].error(file, error.to_string()))
            }
            FmuLoadError::OneInstance => SystemError::Invalid(spec.source.error(
                file,
                format!(
                    "sub-model \"{}\": its FMU can be instantiated only once per process \
                     (canBeInstantiatedOnlyOncePerProcess), and a real-time plant needs one instance per integrator \
                     thread; co-simulate the system (tandem cosim), which uses one instance",
                    spec.name.value
                ),
            )),
            FmuLoadError::Fmu(e) => SystemError::Invalid(unusable(&e)),
            FmuLoadError::Participant(e) => SystemError::Invalid(unusable(&e)),
            FmuLoadError::Settings(e) => e,
        });
    }
    if let Some((_, value)) = spec.parameters.first() {
        return Err(SystemError::Invalid(value.error(
            file,
            "parameters are set by name on FMU sources only; give a block diagram's values in its blocks".into(),
        )));
    }
    if let Some(signal) = spec.signals.first() {
        return Err(SystemError::Invalid(signal.error(
            file,
            "signals choose an FMU source's variables only; a block diagram's outputs are its Output blocks".into(),
        )));
    }
    let slave = match (ModelRef::parse(text, base), parts) {
        (ModelRef::File(path), Parts::Plant) => {
            let model = diagram::load(&path).map_err(|e| unusable(&e))?.model;
            let feedthrough = model.program().feedthrough();
            let model: Box<dyn Model> = if interpret {
                Box::new(model)
            } else {
                tandem_jit::prepare(model).0
            };
            boxed(PlantPart::new(model, Some(feedthrough)))
        }
        (builtin, Parts::Plant) => {
            let model = builtin.load().map_err(|e| unusable(&e))?.model;
            let feedthrough = model.direct_feedthrough();
            boxed(PlantPart::new(model, feedthrough))
        }
        (ModelRef::File(path), Parts::Participants) => {
            let compiled = diagram::load(&path).map_err(|e| unusable(&e))?;
            let settings = fixed_step_for(spec, file, &compiled.simulation)?;
            boxed(ModelSlave::diagram(compiled.model, settings, !interpret))
        }
        (builtin, Parts::Participants) => {
            let loaded = builtin.load().map_err(|e| unusable(&e))?;
            let settings = fixed_step_for(spec, file, &loaded.simulation)?;
            let layout = loaded.model.layout();
            let (inputs, outputs) = (layout.inputs.len(), layout.outputs.len());
            let feedthrough = match loaded.model.direct_feedthrough() {
                Some(lists) => Feedthrough::from_lists(inputs, lists).map_err(|e| unusable(&e))?,
                None => Feedthrough::all(inputs, outputs),
            };
            boxed(ModelSlave::new(loaded.model, settings, feedthrough))
        }
    };
    slave.map_err(|e| SystemError::Invalid(unusable(&e)))
}

/// A participant made, boxed.
fn boxed<S: SubModel + 'static>(made: Result<S, SubModelError>) -> Result<Box<dyn SubModel>, SubModelError> {
    made.map(|s| Box::new(s) as Box<dyn SubModel>)
}

/// Loads an FMU: its Co-Simulation interface (stepped by its own solver)
/// unless the file gives it a `solver` or it has none, else its Model
/// Exchange interface, integrated by the solver the file or its default
/// experiment names. A plant part takes Model Exchange whenever the FMU
/// has it.
fn load_fmu(
    spec: &ModelSpec,
    file: &Path,
    path: &Path,
    isolation: Option<&Host>,
    parts: Parts,
) -> Result<Box<dyn SubModel>, FmuLoadError> {
    let fmu = match isolation {
        Some(host) => Fmu::open_isolated(path, host.clone()),
        None => Fmu::open(path),
    }
    .map_err(FmuLoadError::Fmu)?;
    let mut parameters = Parameters::new();
    for (name, value) in &spec.parameters {
        parameters.set(name, value.value.clone());
    }
    let recorded = Recorded::outputs_and(spec.signals.iter().map(|s| s.value.as_str()));
    let description = fmu.description();
    let has = |kind| description.interface(kind).is_some();
    let model_exchange = has(InterfaceKind::ModelExchange) && (spec.solver.is_some() || parts == Parts::Plant);
    if has(InterfaceKind::CoSimulation) && !model_exchange {
        let slave = FmuSlave::with(&fmu, &parameters, &recorded, 0.0, None).map_err(|e| FmuLoadError::of(e, spec))?;
        let participant = CoSimulationFmu::new(slave).map_err(FmuLoadError::Participant)?;
        return Ok(Box::new(participant));
    }
    let model = FmuModel::with(&fmu, &parameters, &recorded, 0.0).map_err(|e| FmuLoadError::of(e, spec))?;
    if parts == Parts::Plant {
        if model.instances_allowed() == InstanceLimit::OncePerProcess {
            return Err(FmuLoadError::OneInstance);
        }
        let feedthrough = Some(model.feedthrough().to_vec());
        return boxed(PlantPart::new(Box::new(model), feedthrough)).map_err(FmuLoadError::Participant);
    }
    let feedthrough = Feedthrough::from_lists(model.layout().inputs.len(), model.feedthrough().to_vec())
        .map_err(|e| FmuLoadError::Participant(e.into()))?;
    let simulation = tandem_fmi::simulation_def(&description.default_experiment);
    let settings = fixed_step_for(spec, file, &simulation).map_err(FmuLoadError::Settings)?;
    let slave = ModelSlave::new(Box::new(model), settings, feedthrough).map_err(FmuLoadError::Participant)?;
    Ok(Box::new(slave))
}

/// Why an FMU source cannot be used, by where the file reports it.
enum FmuLoadError {
    /// A parameter the file sets: reported at its value.
    Parameter { index: usize, error: FmuError },
    /// A signal the file names: reported at it.
    Signal { index: usize, error: FmuError },
    /// A plant part whose FMU allows one instance, where the tandem needs
    /// one per integrator thread: reported at `source`.
    OneInstance,
    /// The FMU (unreadable, malformed, failing to instantiate or
    /// initialise): reported at `source`.
    Fmu(FmuError),
    /// The participant made of it: reported at `source`.
    Participant(SubModelError),
    /// The solver settings the file or the FMU gives: already reported at
    /// their key, or at `source` for the FMU's own.
    Settings(SystemError),
}

impl FmuLoadError {
    /// `error`, at the parameter it names when it names one of `spec`'s.
    fn of(error: FmuError, spec: &ModelSpec) -> FmuLoadError {
        let parameter = (error.start_value_name()).and_then(|name| spec.parameters.iter().position(|(p, _)| p == name));
        let signal = (error.signal_name()).and_then(|name| spec.signals.iter().position(|s| s.value == name));
        match (parameter, signal) {
            (Some(index), _) => FmuLoadError::Parameter { index, error },
            (None, Some(index)) => FmuLoadError::Signal { index, error },
            (None, None) => FmuLoadError::Fmu(error),
        }
    }
}

/// The solver settings of a sub-model with its own solver: the file's
/// `solver`, `step`, `rtol` and `atol` over the model's own `simulation`
/// section, running to the system's stop time; the micro step must divide
/// the communication step.
pub fn fixed_step_for(spec: &ModelSpec, file: &Path, simulation: &SimulationDef) -> Result<FixedStep, SystemError> {
    let given = Overrides {
        solver: spec.solver.as_ref().map(|s| s.value.clone()),
        step: spec.step.as_ref().map(|s| s.value),
        stop: Some(spec.stop),
        rtol: spec.rtol.as_ref().map(|s| s.value),
        atol: spec.atol.as_ref().map(|s| s.value),
    };
    // A value from this file is reported at its key; one from the model's
    // own settings at `source`.
    let at = |key: &str, message: String| -> ConfigError {
        let error = |place: Option<&Located<f64>>| place.map(|p| p.error(file, message.clone()));
        let given = match key {
            "solver" => spec.solver.as_ref().map(|p| p.error(file, message.clone())),
            "step" => error(spec.step.as_ref()),
            "rtol" => error(spec.rtol.as_ref()),
            "atol" => error(spec.atol.as_ref()),
            _ => None,
        };
        given.unwrap_or_else(|| spec.source.error(file, format!("the model's {key}: {message}")))
    };
    let settings = fixed_step(simulation, &given).map_err(|e| {
        let key = e.origin.rsplit(['-', '.', ' ']).next().unwrap_or_default();
        at(key, e.message)
    })?;
    let cs = spec.communication_step;
    let micro_steps = (cs / settings.step).round();
    if micro_steps < 1.0 || (micro_steps * settings.step - cs).abs() > 1e-9 * cs {
        return Err(at(
            "step",
            format!(
                "the micro step {} s does not divide the communication step {cs} s (every × master.step); give step = \
                 {cs} / n s for a whole n",
                settings.step
            ),
        )
        .into());
    }
    if micro_steps > MAX_MICRO_STEPS {
        return Err(at(
            "step",
            format!(
                "{micro_steps:e} micro steps of {} s in one communication step of {cs} s, more than the bound of \
                 {MAX_MICRO_STEPS:e}; give a longer step or a shorter communication step",
                settings.step
            ),
        )
        .into());
    }
    Ok(settings)
}
