//! A configuration file's text and name: turns byte offsets into lines and
//! columns, and the TOML reader's errors into [`ConfigError`]s.

use std::ops::Range;
use std::path::Path;

use toml::Spanned;

use crate::error::{ConfigError, Located, Location};
use crate::locate::key_at;

/// The text being read and where it came from, for messages.
pub(crate) struct ConfigText<'a> {
    /// The whole file.
    pub(crate) text: &'a str,
    /// The file, as given.
    pub(crate) origin: &'a Path,
}

impl ConfigText<'_> {
    /// An error at byte `span` (none: the start of the file) about `key`.
    pub(crate) fn error(&self, span: Option<Range<usize>>, key: &str, message: String) -> ConfigError {
        ConfigError {
            file: self.origin.to_path_buf(),
            location: Some(self.location(span.map_or(0, |s| s.start))),
            key: key.to_string(),
            message,
        }
    }

    /// Line and column of byte `offset`.
    pub(crate) fn location(&self, offset: usize) -> Location {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &self.text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Location {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }

    /// A syntax or type error from the TOML reader, with the key it is
    /// about found from its span.
    pub(crate) fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let span = e.span();
        let mut message = e.message().trim_end().to_string();
        let start = span.as_ref().map_or(0, |s| s.start);
        let mut key = if span.as_ref().is_some_and(|s| s.is_empty() && s.start == 0) {
            // Errors about the whole document (a missing top-level key) have an
            // empty span at its start, where the first key may be.
            String::new()
        } else {
            key_at(self.text, start).unwrap_or_default()
        };
        if let Some(field) = message
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'))
        {
            let field = field.to_string();
            let example = match field.as_str() {
                "model" => "model = \"ev\" (a built-in model) or model = \"my-model.json\"".to_string(),
                "at" => "at = \"5s\"".to_string(),
                "delay" => "delay = \"3ms\"".to_string(),
                "extra" => "extra = \"1.5ms\"".to_string(),
                _ => format!("{field} = ..."),
            };
            message = format!("missing key `{field}`; add it, e.g. {example}");
            key = if key.is_empty() {
                field
            } else {
                format!("{key}.{field}")
            };
        } else if message == "duplicate key" {
            // The second key is not in the recovered table: name it as written.
            if let Some(written) = span.and_then(|s| self.text.get(s)) {
                key = written.trim().to_string();
            }
            message = format!("`{key}` is given twice; keep one");
        }
        ConfigError {
            file: self.origin.to_path_buf(),
            location: Some(self.location(start)),
            key,
            message,
        }
    }

    /// `value` with its place, under `key`.
    pub(crate) fn located<T: Clone>(&self, value: &Spanned<T>, key: String) -> Located<T> {
        Located {
            value: value.get_ref().clone(),
            key,
            location: self.location(value.span().start),
        }
    }

    /// The directory of the file, against which relative paths resolve.
    pub(crate) fn dir(&self) -> &Path {
        self.origin.parent().unwrap_or(Path::new(""))
    }
}
