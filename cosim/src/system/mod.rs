//! A co-simulation system: its sub-models, their connections and the
//! master's settings, read from a TOML file (see `cosim/SYSTEM.md`) and
//! checked before anything runs.

mod connections;
mod raw;
mod source;
mod validate;

use std::path::Path;

use tandem_config::{read_text, ConfigError};
use tandem_models::Variable;

pub use raw::RawConnection;
pub use source::{fixed_step_for, load_source, load_source_with, ModelSpec};
pub use validate::{assemble, DEFAULT_EXTRAPOLATION, DEFAULT_MAX_ITERATIONS};

use crate::bounds::MAX_SYSTEM_FILE;
use crate::graph::Link;
use crate::submodel::SubModel;
use tandem_config::TomlPlace as Place;

/// Why a system file cannot be used. Shown as
/// `FILE:LINE:COLUMN: KEY: MESSAGE`.
#[derive(Debug, thiserror::Error)]
pub enum SystemError {
    /// A mistake in the file, or a sub-model it names that cannot be used.
    #[error(transparent)]
    Invalid(#[from] ConfigError),
}

/// In what order the sub-models of a macro step are stepped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ordering {
    /// All from the same coupling values (extrapolated), in parallel.
    Jacobi,
    /// One after the other; each takes the new values of those before it
    /// (interpolated).
    GaussSeidel,
}

/// The inputs a sub-model's outputs are computed with at its new
/// communication point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PointInputs {
    /// The newest values of the outputs driving them, those already
    /// computed at this point included (in feedthrough order).
    Newest,
    /// The values it held over the step that reached the point: every
    /// direct feedthrough between sub-models is one macro step late, as
    /// with DCP slaves in lock-step (their outputs leave with the step).
    Held,
}

/// The fixed-point iteration of each macro step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Iterate {
    /// Converged when no coupling output changes by more than this between
    /// two iterations (in the outputs' own units).
    pub tolerance: f64,
    /// The most repetitions of a macro step.
    pub max_iterations: u32,
}

/// The master's settings (`[master]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Master {
    /// The base macro step (s).
    pub step: f64,
    /// The number of base macro steps to the stop time.
    pub steps: u64,
    /// Jacobi or Gauss–Seidel.
    pub ordering: Ordering,
    /// The order (0, 1 or 2) of the polynomials extrapolating coupling
    /// values.
    pub extrapolation: usize,
    /// The fixed-point iteration, if asked for.
    pub iterate: Option<Iterate>,
    /// Threads stepping a Jacobi macro step (1: the caller's alone).
    pub threads: usize,
    /// The inputs of the outputs at communication points after t = 0 (at
    /// t = 0 they are always the newest).
    pub point_inputs: PointInputs,
}

impl Master {
    /// The stop time (s).
    pub fn stop(&self) -> f64 {
        self.steps as f64 * self.step
    }
}

/// A sub-model of a system, with its name.
pub struct Participant {
    pub(crate) name: String,
    pub(crate) model: Box<dyn SubModel>,
    /// Base macro steps per communication step.
    pub(crate) every: u64,
}

impl Participant {
    /// `model`, named `name`, communicating every `every` base macro steps.
    pub fn new(name: String, model: Box<dyn SubModel>, every: u64) -> Participant {
        Participant { name, model, every }
    }
}

/// The sub-models' names, listed for messages.
fn names(participants: &[Participant]) -> String {
    let names: Vec<&str> = participants.iter().map(|p| p.name.as_str()).collect();
    names.join(", ")
}

/// A checked system, ready to run ([`System::run`]).
pub struct System {
    pub(crate) participants: Vec<Participant>,
    pub(crate) links: Vec<Link>,
    pub(crate) master: Master,
    /// The order sub-models are stepped in (Gauss–Seidel) and their
    /// outputs computed at communication points.
    pub(crate) order: Vec<usize>,
    /// Every sub-model can go back to a saved point.
    pub(crate) rollback: bool,
}

impl System {
    /// The master's settings.
    pub fn master(&self) -> &Master {
        &self.master
    }

    /// The sub-models' names, in the file's order.
    pub fn models(&self) -> Vec<&str> {
        self.participants.iter().map(|p| p.name.as_str()).collect()
    }

    /// The order the sub-models are stepped in (Gauss–Seidel) and their
    /// outputs computed at communication points, by name.
    pub fn order(&self) -> Vec<&str> {
        self.order.iter().map(|&m| self.participants[m].name.as_str()).collect()
    }

    /// The recorded columns after `time`: every output of every sub-model,
    /// as `model.output`, in the file's order of the sub-models.
    pub fn output_names(&self) -> Vec<String> {
        self.output_variables().into_iter().map(|v| v.name).collect()
    }

    /// Every sub-model's outputs, named `model.output`, with their units
    /// and ranges, in the order of [`System::output_names`].
    pub fn output_variables(&self) -> Vec<Variable> {
        self.participants
            .iter()
            .flat_map(|p| {
                p.model.outputs().iter().map(move |v| Variable {
                    name: format!("{}.{}", p.name, v.name),
                    ..v.clone()
                })
            })
            .collect()
    }
}

/// Reads and checks the system file at `path`, loading its sub-models.
pub fn load(path: &Path) -> Result<System, SystemError> {
    load_with(path, Loading::default())
}

/// How sub-models are loaded beyond what the system file says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Loading {
    /// Every FMU runs out of process (as if each had `fmu.isolate = true`).
    pub isolate_fmus: bool,
    /// Block diagrams are interpreted rather than compiled to machine code
    /// (the results are the same bit for bit).
    pub interpret: bool,
}

/// What the `[[model]]` tables are loaded as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Parts {
    /// Participants of a co-simulation, each with its own solver.
    Participants,
    /// Models composed into one real-time plant
    /// ([`crate::plant::PlantPart`]).
    Plant,
}

/// [`load`], its sub-models loaded as `loading` says.
pub fn load_with(path: &Path, loading: Loading) -> Result<System, SystemError> {
    load_as(path, loading, Parts::Participants)
}

/// [`load_with`], its sub-models loaded as `parts`.
pub(crate) fn load_as(path: &Path, loading: Loading, parts: Parts) -> Result<System, SystemError> {
    let text = read_text(
        path,
        MAX_SYSTEM_FILE,
        "system file",
        "cosim/examples/two_mass.toml is an example",
    )?;
    parse_as(&text, path, loading, parts)
}

/// Checks the system `text`, read from `file`: errors name `file`, and
/// relative sources resolve against its directory.
pub fn parse(text: &str, file: &Path) -> Result<System, SystemError> {
    parse_with(text, file, Loading::default())
}

/// [`parse`], its sub-models loaded as `loading` says.
pub fn parse_with(text: &str, file: &Path, loading: Loading) -> Result<System, SystemError> {
    parse_as(text, file, loading, Parts::Participants)
}

/// [`parse_with`], its sub-models loaded as `parts`.
fn parse_as(text: &str, file: &Path, loading: Loading, parts: Parts) -> Result<System, SystemError> {
    let place = Place {
        text,
        file,
        guide: "cosim/SYSTEM.md",
    };
    let raw = toml::from_str(text).map_err(|e| place.toml_error(&e))?;
    validate::validate(&place, raw, loading, parts)
}
