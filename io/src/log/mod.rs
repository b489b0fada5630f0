//! Bus logs: every frame with its time, interface and direction, written
//! as candump log files (`(seconds) interface id#data`, what can-utils'
//! `candump -l` writes and `canplayer` replays) or as Vector ASC, and read
//! back from candump log files.

mod asc;
mod candump;

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub use asc::AscWriter;
pub use candump::{parse_entry, parse_line, CandumpLineError, CandumpReader, CandumpWriter, Entry, EXPECTED_LINE};

use crate::frame::CanFrame;

/// Whether a frame was received or transmitted by the logging node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Received from the bus.
    Rx,
    /// Sent by this node.
    Tx,
}

/// One logged frame.
#[derive(Clone, Debug, PartialEq)]
pub struct LogRecord {
    /// When, in nanoseconds (since the Unix epoch in logs of real buses,
    /// since the run's start in logs of virtual-clock runs).
    pub time_ns: i64,
    /// The interface (bus) name.
    pub interface: String,
    /// The frame.
    pub frame: CanFrame,
    /// Received or sent.
    pub direction: Direction,
}

/// A line of a log file that is not a frame.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct LogError {
    /// The file.
    pub file: String,
    /// Its 1-based line.
    pub line: usize,
    /// What is wrong, and what was expected.
    pub message: String,
}

/// Where logged frames go.
pub trait LogWriter: Send {
    /// Appends one frame.
    fn write(&mut self, record: &LogRecord) -> io::Result<()>;
    /// Flushes what is buffered, so that it survives the process.
    fn flush(&mut self) -> io::Result<()>;
    /// Writes any trailer and flushes.
    fn finish(&mut self) -> io::Result<()>;
}

/// The log formats Tandem writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// can-utils' candump log format.
    Candump,
    /// Vector's ASCII log format.
    Asc,
}

impl LogFormat {
    /// The format a file name asks for: `.asc` is ASC, anything else candump.
    pub fn of(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("asc") => LogFormat::Asc,
            _ => LogFormat::Candump,
        }
    }
}

/// Creates `path` and a writer of its format; `start_ns` is the log's time
/// origin (ASC times are relative to it; candump times are absolute).
pub fn create(path: &Path, start_ns: i64) -> io::Result<Box<dyn LogWriter>> {
    let file = BufWriter::new(File::create(path)?);
    Ok(match LogFormat::of(path) {
        LogFormat::Candump => Box::new(CandumpWriter::new(file)),
        LogFormat::Asc => Box::new(AscWriter::new(file, start_ns)?),
    })
}

/// Writes `value` as lowercase-free upper hex bytes, `sep` between them.
fn write_hex(out: &mut impl Write, bytes: &[u8], sep: &str) -> io::Result<()> {
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            out.write_all(sep.as_bytes())?;
        }
        write!(out, "{b:02X}")?;
    }
    Ok(())
}
