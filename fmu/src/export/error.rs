//! Why a model could not be exported.

use std::io;
use std::path::PathBuf;

use tandem_config::SettingsError;
use tandem_models::LoadError;
use tandem_runtime::SimError;

use crate::library::LibraryError;

/// Why a model could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The model does not load.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The model's simulation settings are not usable.
    #[error("{model}: {error}")]
    Settings {
        /// The model.
        model: String,
        /// The setting and what is wrong with it.
        error: SettingsError,
    },
    /// The model cannot be simulated with its settings.
    #[error("{model}: {error}")]
    Simulation {
        /// The model.
        model: String,
        /// Why.
        error: SimError,
    },
    /// Two variables share a name.
    #[error("{model}: two variables are named \"{name}\", and the variables of an FMU need distinct names; rename one of the blocks")]
    DuplicateName {
        /// The model.
        model: String,
        /// The name.
        name: String,
    },
    /// A file to pack could not be read.
    #[error("cannot read {path}: {cause}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        cause: io::Error,
    },
    /// The FMU could not be written.
    #[error("cannot write {path}: {cause}; check the folder and the free space")]
    Write {
        /// The FMU file.
        path: PathBuf,
        /// The cause.
        cause: io::Error,
    },
    /// The FMU's binary cannot be found or placed.
    #[error(transparent)]
    Library(#[from] LibraryError),
}
