//! Why a slave cannot start or go on.

use std::io;

use tandem_config::ConfigError;

/// Why a slave cannot start or go on.
#[derive(Debug, thiserror::Error)]
pub enum SlaveError {
    /// Its file or its model.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Its model cannot be described.
    #[error("{file}: {message}")]
    Model {
        /// The slave file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A socket.
    #[error("{what}: {error}")]
    Io {
        /// What was being done.
        what: String,
        /// The error (in the message, so not a source).
        error: io::Error,
    },
}
