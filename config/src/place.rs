//! Places in a TOML file read with `toml`'s spans (a co-simulation system,
//! a federation, a DCP slave): spans become lines and columns of
//! [`ConfigError`]s, the error type of Tandem's configuration files
//! (`FILE:LINE:COL: KEY: MESSAGE`).

use std::ops::Range;
use std::path::Path;

use crate::{ConfigError, Located, Location};
use tandem_models::diagram::invalid_utf8_at;
use toml::Spanned;

/// The text of a TOML file, the file, and where its format is documented,
/// for messages.
pub struct TomlPlace<'a> {
    /// The whole text.
    pub text: &'a str,
    /// The file, as given.
    pub file: &'a Path,
    /// Where the format is documented, e.g. `cosim/SYSTEM.md`.
    pub guide: &'a str,
}

impl TomlPlace<'_> {
    /// Line and column of byte `offset`.
    pub fn location(&self, offset: usize) -> Location {
        let (line, column) = invalid_utf8_at(self.text.as_bytes(), offset);
        Location { line, column }
    }

    /// `value` with its place, under `key`.
    pub fn located<T: Clone>(&self, value: &Spanned<T>, key: String) -> Located<T> {
        Located {
            value: value.get_ref().clone(),
            key,
            location: self.location(value.span().start),
        }
    }

    /// An error at byte `span` about `key`.
    pub fn error(&self, span: Range<usize>, key: &str, message: String) -> ConfigError {
        ConfigError {
            file: self.file.to_path_buf(),
            location: Some(self.location(span.start)),
            key: key.to_string(),
            message,
        }
    }

    /// An error of the TOML reader (syntax, a type, an unknown or missing
    /// key), at its span; the reader's message names the key.
    pub fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        ConfigError {
            file: self.file.to_path_buf(),
            location: Some(self.location(e.span().map_or(0, |s| s.start))),
            key: String::new(),
            message: format!("{}; see {} for the format", e.message().trim_end(), self.guide),
        }
    }
}
