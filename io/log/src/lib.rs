//! Bus logs: every frame with its time, interface and direction, written
//! and read as candump log files (`(seconds) interface id#data`, what
//! can-utils' `candump -l` writes and `canplayer` replays), Vector ASC,
//! Vector BLF and ASAM MDF4 bus logging. The format follows the file name:
//! [`LogFormat::of`], [`create`] and [`LogReader::new`].
//!
//! ASC, BLF and MF4 number their buses (channels) instead of naming them:
//! the writers number interfaces from 1 in the order they are declared
//! ([`LogWriter::declare`]) or first appear,
//! and the readers name each frame's interface by its channel number
//! (`"1"`, `"2"`, ...).
//!
//! This crate depends on `tandem-can` alone of Tandem's crates (a log holds
//! frames): it must not depend on transports (no sockets or serial ports),
//! the DBC codec or models, so a log reader compiles without SocketCAN.
//!
//! ```
//! use tandem_log::parse_line;
//!
//! // A frame of a candump log.
//! let record = parse_line("(1.250000) can0 123#DEADBEEF").unwrap();
//! assert_eq!((record.time_ns, record.frame.id().raw()), (1_250_000_000, 0x123));
//! assert_eq!(record.frame.payload(), &[0xDE, 0xAD, 0xBE, 0xEF]);
//! ```

/// Makes a reader that has `next_entry` an iterator of owned
/// [`LogRecord`]s: `records_from_entries!(Reader<R>, R: Bound)`.
macro_rules! records_from_entries {
    ($reader:ty $(, $param:ident: $bound:path)?) => {
        impl$(<$param: $bound>)? Iterator for $reader {
            type Item = Result<$crate::LogRecord, $crate::LogError>;

            fn next(&mut self) -> Option<Self::Item> {
                self.next_entry().map(|entry| entry.map($crate::Entry::to_record))
            }
        }
    };
}

mod asc;
mod asc_read;
mod blf;
mod candump;
mod mf4;
mod mf4_block;
mod mf4_data;
mod mf4_read;
mod text_lines;

use std::fmt;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::Path;

pub use asc::AscWriter;
pub use asc_read::AscReader;
pub use blf::{BlfReader, BlfWriter};
pub use candump::{parse_entry, parse_line, CandumpLineError, CandumpReader, CandumpWriter, EXPECTED_LINE};
pub use mf4::Mf4Writer;
pub use mf4_block::ReadAt;
pub use mf4_read::Mf4Reader;

use tandem_can::frame::CanFrame;

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

/// Where in a log file something is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A 1-based line of a text log.
    Line(usize),
    /// A 1-based line and column of a text log.
    Column(usize, usize),
    /// A byte offset into a binary log.
    Offset(u64),
}

impl fmt::Display for Place {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Place::Line(line) => write!(f, "{line}"),
            Place::Column(line, column) => write!(f, "{line}:{column}"),
            Place::Offset(offset) => write!(f, "byte {offset}"),
        }
    }
}

/// A part of a log file that is not a frame, or that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("{file}:{place}: {message}")]
pub struct LogError {
    /// The file.
    pub file: String,
    /// Where in it.
    pub place: Place,
    /// What is wrong, and what was expected.
    pub message: String,
}

/// A logged frame, its interface name borrowed (from a reader, or from a
/// [`LogRecord`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Entry<'a> {
    /// When, in nanoseconds.
    pub time_ns: i64,
    /// The interface (bus) name.
    pub interface: &'a str,
    /// The frame.
    pub frame: CanFrame,
    /// Received or sent.
    pub direction: Direction,
}

impl Entry<'_> {
    /// The same frame as an owned record.
    pub fn to_record(self) -> LogRecord {
        LogRecord {
            time_ns: self.time_ns,
            interface: self.interface.to_owned(),
            frame: self.frame,
            direction: self.direction,
        }
    }
}

impl LogRecord {
    /// The record with its interface name borrowed.
    pub fn entry(&self) -> Entry<'_> {
        Entry {
            time_ns: self.time_ns,
            interface: &self.interface,
            frame: self.frame,
            direction: self.direction,
        }
    }
}

/// Where logged frames go.
pub trait LogWriter: Send {
    /// Appends one frame, its interface name borrowed (no allocation per
    /// frame in any of Tandem's writers once each interface has been seen).
    fn write_entry(&mut self, entry: &Entry<'_>) -> io::Result<()>;

    /// Makes `interface` known before its first frame: formats that number
    /// their buses give it the next number now, so that writing its frames
    /// allocates nothing (candump names buses and needs nothing).
    fn declare(&mut self, interface: &str) -> io::Result<()> {
        let _ = interface;
        Ok(())
    }

    /// Appends a comment at `time_ns`, in the formats that have a place
    /// for one: an ASC comment line (`// TIME TEXT`), a BLF `APP_TEXT`
    /// object. candump logs (whose readers take every line for a frame)
    /// and MF4 bus logs leave it out.
    fn comment(&mut self, time_ns: i64, text: &str) -> io::Result<()> {
        let _ = (time_ns, text);
        Ok(())
    }

    /// Appends one frame.
    fn write(&mut self, record: &LogRecord) -> io::Result<()> {
        self.write_entry(&record.entry())
    }

    /// Flushes what is buffered, so that it survives the process.
    fn flush(&mut self) -> io::Result<()>;
    /// Writes any trailer and flushes.
    fn finish(&mut self) -> io::Result<()>;
}

/// The log formats Tandem writes and reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// can-utils' candump log format.
    Candump,
    /// Vector's ASCII log format.
    Asc,
    /// Vector's binary logging format.
    Blf,
    /// ASAM MDF 4.1 bus logging.
    Mf4,
}

impl LogFormat {
    /// The format a file name asks for: `.asc` is ASC, `.blf` BLF, `.mf4`
    /// MDF4 (any case), anything else candump.
    pub fn of(path: &Path) -> Self {
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        [
            ("asc", LogFormat::Asc),
            ("blf", LogFormat::Blf),
            ("mf4", LogFormat::Mf4),
        ]
        .into_iter()
        .find(|(e, _)| extension.eq_ignore_ascii_case(e))
        .map_or(LogFormat::Candump, |(_, format)| format)
    }
}

/// Creates `path` and a writer of its format; `start_ns` is the log's time
/// origin (ASC, BLF and MF4 times are relative to it; candump times are
/// absolute).
pub fn create(path: &Path, start_ns: i64) -> io::Result<Box<dyn LogWriter>> {
    // 1 MiB: a busy bus's frames reach the file in few system calls.
    let file = BufWriter::with_capacity(1 << 20, File::create(path)?);
    Ok(match LogFormat::of(path) {
        LogFormat::Candump => Box::new(CandumpWriter::new(file)),
        LogFormat::Asc => Box::new(AscWriter::new(file, start_ns)?),
        LogFormat::Blf => Box::new(BlfWriter::new(file, start_ns)?),
        LogFormat::Mf4 => Box::new(Mf4Writer::new(file, start_ns)?),
    })
}

/// A log file of any format Tandem reads, frame by frame.
pub enum LogReader {
    /// A candump log.
    Candump(CandumpReader<BufReader<File>>),
    /// A Vector ASC log.
    Asc(AscReader<BufReader<File>>),
    /// A Vector BLF log.
    Blf(BlfReader<BufReader<File>>),
    /// An ASAM MDF4 bus log.
    Mf4(Mf4Reader<File>),
}

impl LogReader {
    /// A reader of `file`, in the format its name `path` asks for
    /// ([`LogFormat::of`]); reads a binary log's header at once.
    pub fn new(file: File, path: &Path) -> Result<Self, LogError> {
        let name = path.display().to_string();
        Ok(match LogFormat::of(path) {
            LogFormat::Candump => LogReader::Candump(CandumpReader::new(BufReader::new(file), &name)),
            LogFormat::Asc => LogReader::Asc(AscReader::new(BufReader::new(file), &name)),
            LogFormat::Blf => LogReader::Blf(BlfReader::new(BufReader::with_capacity(1 << 16, file), &name)?),
            LogFormat::Mf4 => LogReader::Mf4(Mf4Reader::new(file, &name)?),
        })
    }

    /// The next frame, its interface name borrowed from the reader; `None`
    /// at the end of the file.
    pub fn next_entry(&mut self) -> Option<Result<Entry<'_>, LogError>> {
        match self {
            LogReader::Candump(r) => r.next_entry(),
            LogReader::Asc(r) => r.next_entry(),
            LogReader::Blf(r) => r.next_entry(),
            LogReader::Mf4(r) => r.next_entry(),
        }
    }

    /// An error at the frame read last, saying `message`.
    pub fn error(&self, message: String) -> LogError {
        match self {
            LogReader::Candump(r) => r.error(message),
            LogReader::Asc(r) => r.error(message),
            LogReader::Blf(r) => r.error(message),
            LogReader::Mf4(r) => r.error(message),
        }
    }
}

records_from_entries!(LogReader);

/// Channel numbers as interface names (`"1"`, `"2"`, ...), made once per
/// channel, for readers of formats that number their buses.
#[derive(Default)]
struct ChannelNames(Vec<String>);

impl ChannelNames {
    /// The name of channel `number`.
    fn get(&mut self, number: u16) -> &str {
        let index = usize::from(number);
        while self.0.len() <= index {
            self.0.push(self.0.len().to_string());
        }
        &self.0[index]
    }
}

/// Numbers interfaces from 1 in the order they first appear, for writers
/// of formats that number their buses.
#[derive(Default)]
struct ChannelNumbers(Vec<String>);

impl ChannelNumbers {
    /// The number of `interface` (allocates only for a new interface).
    fn of(&mut self, interface: &str) -> usize {
        match self.0.iter().position(|c| c == interface) {
            Some(i) => i + 1,
            None => {
                self.0.push(interface.to_owned());
                self.0.len()
            }
        }
    }

    /// The number of `interface` for a format that numbers channels in a
    /// byte: an error past 255 interfaces.
    fn byte_of(&mut self, interface: &str) -> io::Result<u8> {
        u8::try_from(self.of(interface)).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("interface {interface} is the 256th of the log: BLF and MF4 logs number at most 255"),
            )
        })
    }
}

/// `seconds.fraction` (at most nine fraction digits, no sign) as exact
/// nanoseconds.
fn seconds_to_ns(text: &str) -> Option<i64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if fraction.len() > 9 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let seconds: i64 = whole.parse().ok()?;
    let nanos: i64 = if fraction.is_empty() {
        0
    } else {
        fraction.parse::<i64>().ok()? * 10_i64.pow(9 - fraction.len() as u32)
    };
    seconds.checked_mul(1_000_000_000)?.checked_add(nanos)
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

/// Records for the formats' tests: classic, FD and remote frames,
/// standard and extended ids, two interfaces, both directions.
#[cfg(test)]
pub(crate) mod test_records {
    use super::{Direction, LogError, LogRecord, LogWriter};
    use tandem_can::frame::{CanFrame, CanId};

    /// Four records 1.000001 ms apart, from a time in 2026 (ns).
    pub(crate) fn sample() -> Vec<LogRecord> {
        let id = CanId::standard(0x123).unwrap();
        let ext = CanId::extended(0x18FF_0001).unwrap();
        let base = 1_795_257_015_250_123_456;
        [
            (CanFrame::data(id, &[1, 2, 3]).unwrap(), "can0", Direction::Rx),
            (CanFrame::fd(ext, &[9; 12], true, false).unwrap(), "can1", Direction::Tx),
            (CanFrame::remote(ext, 4).unwrap(), "can0", Direction::Tx),
            (CanFrame::fd(id, &[5; 64], false, true).unwrap(), "can1", Direction::Rx),
        ]
        .into_iter()
        .enumerate()
        .map(|(i, (frame, interface, direction))| LogRecord {
            time_ns: base + i as i64 * 1_000_001,
            interface: interface.into(),
            frame,
            direction,
        })
        .collect()
    }

    /// Writes `records` with `writer` and finishes it.
    pub(crate) fn write_all(mut writer: impl LogWriter, records: &[LogRecord]) {
        for r in records {
            writer.write(r).unwrap();
        }
        writer.finish().unwrap();
    }

    /// Asserts that `read` holds the records of `written`, read back from a
    /// format that numbers its buses (`can0` is channel 1, `can1` 2).
    pub(crate) fn assert_read_back(read: &[LogRecord], written: &[LogRecord]) {
        assert_eq!(read.len(), written.len());
        for (r, w) in read.iter().zip(written) {
            let channel = if w.interface == "can0" { "1" } else { "2" };
            assert_eq!(
                (r.time_ns, r.interface.as_str(), r.frame, r.direction),
                (w.time_ns, channel, w.frame, w.direction)
            );
        }
    }

    /// The first error of a log `opened`: opening it or reading a frame;
    /// empty when there is none.
    pub(crate) fn first_error<I>(opened: Result<I, LogError>) -> String
    where
        I: Iterator<Item = Result<LogRecord, LogError>>,
    {
        match opened {
            Err(e) => e.to_string(),
            Ok(reader) => reader
                .filter_map(Result::err)
                .next()
                .map(|e| e.to_string())
                .unwrap_or_default(),
        }
    }
}
