//! What a configuration error says: the file, the line and column, the key,
//! what is wrong and the fix; and values kept with their place in the file
//! so that names checked later (against the model, a DBC) are reported
//! there too.

use std::fmt;
use std::path::{Path, PathBuf};

/// characters, not bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
}

/// A configuration file that cannot be used: where, which key, what is
/// wrong and the fix. Shown as `FILE:LINE:COLUMN: KEY: MESSAGE`, e.g.
/// `ev.toml:12:10: implicit.method: unknown implicit method "bdf7"; use one
/// of: bdf, bdf1, bdf2, trapezoidal`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The configuration file, as given.
    pub file: PathBuf,
    /// Where in the file; `None` when the error is about the whole file
    /// (it cannot be read).
    pub location: Option<Location>,
    /// The dotted key, as `implicit.method` or
    /// `virtual_clock.implicit_delays[0].at`; empty when there is none (a
    /// syntax error between keys, or an unreadable file).
    pub key: String,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(Location { line, column }) = self.location {
            write!(f, ":{line}:{column}")?;
        }
        if !self.key.is_empty() {
            write!(f, ": {}", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A name as written in the file, with its place.
#[derive(Clone, Debug, PartialEq)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    /// The dotted key it was given under, e.g. `bus[0].receive[1].message`.
    pub key: String,
    /// Where.
    pub location: Location,
}

impl<T> Located<T> {
    /// An error about this value: `FILE:LINE:COL: KEY: MESSAGE`.
    pub fn error(&self, file: &Path, message: String) -> ConfigError {
        ConfigError {
            file: file.to_path_buf(),
            location: Some(self.location),
            key: self.key.clone(),
            message,
        }
    }
}

impl<T> Located<T> {
    /// The same place holding `f` of the value.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> Located<U> {
        Located {
            value: f(self.value),
            key: self.key,
            location: self.location,
        }
    }
}
