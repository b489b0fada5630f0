//! What the readers of text logs (candump, ASC) share: reading a line at a
//! time into one buffer, with a limit on its length, and errors that name
//! the file and the line.

use std::io::{BufRead, Read};

use super::{LogError, Place};

/// A text log format as its line reader names it in errors.
pub(crate) struct TextFormat {
    /// The longest line read (bytes).
    pub max_line: usize,
    /// The format's name, as in "no ASC line is".
    pub name: &'static str,
    /// A log of the format, as in "check that this is an ASC log".
    pub a_log: &'static str,
    /// What follows "the line is not UTF-8 text" (before "; check that …").
    pub not_utf8: &'static str,
}

/// A text log read line by line into one buffer.
pub(crate) struct TextLines<R> {
    input: R,
    file: String,
    /// The 1-based number of the line read last.
    pub line: usize,
    /// The line read last, with its line ending.
    pub text: String,
}

impl<R> TextLines<R> {
    /// Lines of `input`, named `file` in errors.
    pub fn new(input: R, file: &str) -> Self {
        TextLines {
            input,
            file: file.to_owned(),
            line: 0,
            text: String::new(),
        }
    }

    /// An error at the line read last, saying `message`.
    pub fn error(&self, message: String) -> LogError {
        LogError {
            file: self.file.clone(),
            place: Place::Line(self.line),
            message,
        }
    }

    /// An error at `column` of the line read last, saying `message`.
    pub fn error_at(&self, column: usize, message: String) -> LogError {
        LogError {
            file: self.file.clone(),
            place: Place::Column(self.line, column),
            message,
        }
    }
}

impl<R: BufRead> TextLines<R> {
    /// Reads the next line into [`text`](Self::text): `None` at the end of
    /// the file, an error for a line longer than `format` allows, one that
    /// is not UTF-8 or one that cannot be read.
    pub fn read(&mut self, format: &TextFormat) -> Option<Result<(), LogError>> {
        self.text.clear();
        self.line += 1;
        let max = format.max_line;
        match (&mut self.input).take(max as u64 + 2).read_line(&mut self.text) {
            Ok(0) => None,
            Ok(_) if self.text.trim_end_matches(['\n', '\r']).len() > max => Some(Err(self.error(format!(
                "the line is longer than {max} bytes, which no {} line is; check that this is {}",
                format.name, format.a_log
            )))),
            Ok(_) => Some(Ok(())),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => Some(Err(self.error(format!(
                "the line is not UTF-8 text{}; check that this is {}",
                format.not_utf8, format.a_log
            )))),
            Err(e) => Some(Err(self.error(format!("cannot read: {e}")))),
        }
    }
}
