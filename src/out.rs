//! Printing that survives a closed stream: `tandem check model.json | head
//! -1` ends quietly, and a run whose terminal went away keeps running and
//! writing its files. What cannot be printed is dropped.

use std::fmt;
use std::io::{self, Write};

/// Prints a line to standard output, like `println!`.
macro_rules! say {
    ($($arg:tt)*) => { $crate::out::write_line(&mut std::io::stdout().lock(), format_args!($($arg)*)) };
}

/// Prints a line to standard error, like `eprintln!`.
macro_rules! tell {
    ($($arg:tt)*) => { $crate::out::write_line(&mut std::io::stderr().lock(), format_args!($($arg)*)) };
}

pub(crate) use {say, tell};

/// Writes `args` and a newline to `stream`, ignoring a failure.
pub fn write_line(stream: &mut impl Write, args: fmt::Arguments<'_>) {
    let _ = stream.write_fmt(args).and_then(|()| stream.write_all(b"\n"));
}

/// Writes `text` to standard output as it is, ignoring a failure.
pub fn write_raw(text: &str) {
    let _ = io::stdout().lock().write_all(text.as_bytes());
}
