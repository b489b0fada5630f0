//! Loading any model a [`ModelRef`] names, FMUs included: the one place
//! that knows a `.fmu` file is not a block diagram.

use std::path::{Path, PathBuf};

use tandem_models::diagram::SimulationDef;
use tandem_models::{interpreted, LoadError, LoadedModel, ModelRef, PrepareDiagram};

use crate::{DefaultExperiment, Fmu, FmuError, FmuModel, Host, InstanceLimit, Parameters, Recorded};

/// How the loaded model will be run, which decides how many instances of
/// it are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Use {
    /// One integrator on one thread (`tandem sim`, a co-simulation).
    Offline,
    /// The real-time tandem: one instance per integrator thread.
    RealTime,
}

/// Why a model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ModelLoadError {
    /// A built-in model or a block diagram.
    #[error(transparent)]
    Model(#[from] LoadError),
    /// An FMU.
    #[error("{}: {error}", file.display())]
    Fmu {
        /// The FMU file.
        file: PathBuf,
        /// What went wrong.
        error: Box<FmuError>,
    },
    /// Out-of-process loading asked for a model that is no FMU.
    #[error("{model}: only an FMU's code runs out of process (--isolate); this model is a block diagram or a built-in plant, which run Tandem's own code\n  help: drop --isolate, or give an .fmu")]
    NotAnFmu {
        /// The model as given.
        model: String,
    },
    /// Out-of-process loading was asked for, and this program's path is
    /// not known (to run it as the helper).
    #[error("{model}: cannot run the FMU out of process: this program's path is not known ({error})\n  help: run tandem by its path, or load the FMU in process (no fmu.isolate)")]
    NoHost {
        /// The model as given.
        model: String,
        /// Why not.
        error: std::io::Error,
    },
    /// An FMU that allows one instance, for a run that needs several.
    #[error("{}: FMU \"{fmu}\" can be instantiated only once per process (canBeInstantiatedOnlyOncePerProcess), and a real-time run needs one instance per integrator thread (the fast side, the implicit side and the fast side's matrices)\n  help: simulate it offline (tandem sim {}) or co-simulate it (tandem cosim), which use one instance", file.display(), file.display())]
    OneInstance {
        /// The FMU file.
        file: PathBuf,
        /// The model's name.
        fmu: String,
    },
}

/// The simulation settings an FMU's default experiment gives (the solver
/// and the absolute tolerance are left to the command line or Tandem's
/// defaults).
pub fn simulation_def(experiment: &DefaultExperiment) -> SimulationDef {
    SimulationDef {
        solver: None,
        rtol: experiment.tolerance,
        atol: None,
        step: experiment.step,
        stop: experiment.stop,
    }
}

/// Whether `path` names an FMU (by its extension, any case).
pub fn is_fmu(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("fmu"))
}

/// Loads the model `reference` names: a Model Exchange FMU with its
/// default parameters (its default experiment as the simulation settings),
/// or what [`ModelRef::load`] loads.
pub fn load(reference: &ModelRef, use_: Use) -> Result<LoadedModel, ModelLoadError> {
    load_with(reference, use_, None, &interpreted, &FmuSetup::default())
}

/// What a run sets and reads of an FMU model beyond its defaults.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FmuSetup {
    /// Start values set before it is initialised.
    pub parameters: Parameters,
    /// The variables that are its outputs (default: its outputs).
    pub recorded: Recorded,
}

/// [`load`], an FMU run out of process, in the program `isolation`
/// describes, when given (see [`crate::isolate`]); a model that is no FMU
/// is refused then, its code being Tandem's own. A block diagram is made
/// ready to run by `prepare` (e.g. compiled to machine code). An FMU is
/// set up as `setup` says.
pub fn load_with(
    reference: &ModelRef,
    use_: Use,
    isolation: Option<&Host>,
    prepare: PrepareDiagram<'_>,
    setup: &FmuSetup,
) -> Result<LoadedModel, ModelLoadError> {
    let fmu_file = match reference {
        ModelRef::File(file) if is_fmu(file) => Some(file),
        _ => None,
    };
    let Some(file) = fmu_file else {
        if isolation.is_some() {
            return Err(ModelLoadError::NotAnFmu {
                model: reference.to_string(),
            });
        }
        return Ok(reference.load_prepared(prepare)?);
    };
    let located = |error| ModelLoadError::Fmu {
        file: file.clone(),
        error: Box::new(error),
    };
    let fmu = match isolation {
        Some(host) => Fmu::open_isolated(file, host.clone()),
        None => Fmu::open(file),
    }
    .map_err(located)?;
    let model = FmuModel::with(&fmu, &setup.parameters, &setup.recorded, 0.0).map_err(located)?;
    let description = fmu.description();
    if use_ == Use::RealTime && model.instances_allowed() == InstanceLimit::OncePerProcess {
        return Err(ModelLoadError::OneInstance {
            file: file.clone(),
            fmu: description.model_name.clone(),
        });
    }
    Ok(LoadedModel {
        simulation: simulation_def(&description.default_experiment),
        name: description.model_name.clone(),
        model: Box::new(model),
        evaluation: None,
    })
}
