//! A system of sub-models (a system file or an SSP package) as the plant
//! of a real-time run: its models composed into one [`Composite`] model
//! that the tandem's integrators integrate whole, every part's equations
//! at every stage, instead of a co-simulation master stepping each part
//! with its own solver.

mod composite;
pub(crate) mod part;

use std::path::Path;

use tandem_models::diagram::SimulationDef;
use tandem_models::LoadedModel;

pub use composite::Composite;
pub use part::PlantPart;

use crate::graph;
use crate::ssp::{self, SspError};
use crate::system::{self, Loading, Parts, System, SystemError};

/// Why a system cannot be a real-time plant.
#[derive(Debug, thiserror::Error)]
pub enum PlantError {
    /// The system file is wrong, or a sub-model it names cannot be loaded.
    #[error(transparent)]
    System(#[from] SystemError),
    /// The SSP package is wrong, or refused.
    #[error(transparent)]
    Ssp(#[from] SspError),
    /// A part steps itself (an FMU with Co-Simulation only).
    #[error(
        "sub-model \"{name}\" steps itself (an FMU with Co-Simulation only), but a real-time plant integrates \
         the equations of each of its parts on both of the tandem's threads; export that FMU with Model Exchange, \
         or co-simulate the system with `tandem cosim`"
    )]
    Stepped {
        /// The sub-model (an SSP component).
        name: String,
    },
}

/// Whether `path` names a system a run can take as its plant: an SSP
/// package (`.ssp`) or a system file (`.toml`).
pub fn is_system(path: &Path) -> bool {
    ssp::is_ssp(path) || path.extension().is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

/// Loads the system `path` names (an SSP package or a system file) as one
/// model, its sub-models loaded as `loading` says: FMUs by Model
/// Exchange, diagrams compiled unless `loading.interpret`. The master's
/// step and the sub-models' solver settings are not used (the run's
/// integrators integrate the whole); its stop time is the model's default.
pub fn load(path: &Path, loading: Loading) -> Result<LoadedModel, PlantError> {
    let (system, package) = if ssp::is_ssp(path) {
        let (system, package) = ssp::load_parts(path, loading, Parts::Plant)?;
        (system, Some(package))
    } else {
        (system::load_as(path, loading, Parts::Plant)?, None)
    };
    let stop = system.master.stop();
    let model = into_plant(system)?;
    // The package's unpacked files stay while the model and its forks run.
    let model = match package {
        Some(package) => model.keeping(package),
        None => model,
    };
    Ok(LoadedModel {
        evaluation: tandem_models::Model::evaluation(&model),
        model: Box::new(model),
        simulation: SimulationDef {
            stop: Some(stop),
            ..SimulationDef::default()
        },
        name: path.file_stem().unwrap_or_default().to_string_lossy().into_owned(),
    })
}

/// The plant parts of `system` (checked free of algebraic loops when it
/// was loaded) composed: refused when one steps itself.
fn into_plant(system: System) -> Result<Composite, PlantError> {
    let feedthrough: Vec<_> = system.participants.iter().map(|p| p.model.feedthrough()).collect();
    let order = graph::order(&feedthrough, &system.links);
    let mut parts = Vec::with_capacity(system.participants.len());
    for participant in system.participants {
        let feedthrough = participant.model.feedthrough().clone();
        match participant.model.into_model() {
            Some(model) => parts.push((participant.name, model, feedthrough)),
            None => return Err(PlantError::Stepped { name: participant.name }),
        }
    }
    Ok(Composite::new(parts, &system.links, order))
}
