//! can-utils' candump log format, one frame per line:
//! `(1436509052.249713) vcan0 123#DEADBEEF`. Identifiers of three hex
//! digits are standard, of eight extended; `123#R` and `123#R4` are remote
//! frames; `123##1DEADBEEF` is CAN FD, the digit after `##` holding the
//! flags (1 = bit-rate switch, 2 = error state indicator). A trailing `R`
//! or `T` gives the direction (received when absent).

use std::io::{self, BufRead, Write};

use super::text_lines::{TextFormat, TextLines};
use super::{write_hex, Direction, Entry, LogError, LogRecord, LogWriter};
use tandem_can::frame::{CanFrame, CanId, FrameError, FD_MAX_LEN};

/// The candump format as its line reader names it. The longest line read
/// is 1024 bytes: a CAN FD frame of 64 bytes with a long timestamp and
/// interface name is under 200.
const FORMAT: TextFormat = TextFormat {
    max_line: 1024,
    name: "candump",
    a_log: "a candump log",
    not_utf8: ": a candump log is ASCII",
};

/// Reads a candump log file line by line.
pub struct CandumpReader<R> {
    lines: TextLines<R>,
}

impl<R: BufRead> CandumpReader<R> {
    /// A reader of `input`, named `file` in errors.
    pub fn new(input: R, file: &str) -> Self {
        CandumpReader {
            lines: TextLines::new(input, file),
        }
    }
}

impl<R: BufRead> CandumpReader<R> {
    /// The next frame, its interface name borrowed from the reader's line
    /// buffer (no allocation per line once the buffer has grown); `None`
    /// at the end of the file.
    pub fn next_entry(&mut self) -> Option<Result<Entry<'_>, LogError>> {
        let range = loop {
            if let Err(e) = self.lines.read(&FORMAT)? {
                return Some(Err(e));
            }
            let line = self.lines.text.trim();
            if !line.is_empty() && !line.starts_with('#') {
                let start = line.as_ptr() as usize - self.lines.text.as_ptr() as usize;
                break start..start + line.len();
            }
        };
        Some(parse_entry(&self.lines.text[range]).map_err(|problem| self.lines.error(problem.to_string())))
    }
}

records_from_entries!(CandumpReader<R>, R: BufRead);

impl<R> CandumpReader<R> {
    /// An error at the line read last, saying `message`.
    pub fn error(&self, message: String) -> LogError {
        self.lines.error(message)
    }
}

/// What a line of a candump log is expected to look like.
pub const EXPECTED_LINE: &str = "expected `(seconds) interface id#data`, e.g. `(1.000000) can0 123#DEADBEEF`";

/// What is wrong with a line of a candump log (the text at fault is quoted).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CandumpLineError {
    /// Fewer than three fields.
    #[error("too few fields; {EXPECTED_LINE}")]
    TooFewFields,
    /// A fourth field that is not a direction.
    #[error("unexpected {0:?} after the frame; {EXPECTED_LINE}")]
    AfterFrame(String),
    /// More than four fields.
    #[error("unexpected {0:?} at the end; {EXPECTED_LINE}")]
    AtEnd(String),
    /// The time field.
    #[error("{0:?} is not a time in seconds; write it like (1.000000)")]
    Time(String),
    /// The frame field has no `#`.
    #[error("{0:?} has no `#` between identifier and data; {EXPECTED_LINE}")]
    NoSeparator(String),
    /// The identifier is not hexadecimal.
    #[error(
        "identifier {0:?} is not hexadecimal; write 3 hex digits (standard) or 8 (extended), e.g. 123 or 18FF0001"
    )]
    IdNotHex(String),
    /// The identifier has neither 3 nor 8 digits.
    #[error("identifier {0:?} has {1} digits; use 3 (standard) or 8 (extended)")]
    IdDigits(String, usize),
    /// A CAN FD frame without its flags digit.
    #[error("CAN FD frame {0:?} lacks its flags digit after `##`")]
    FdFlags(String),
    /// The length of a remote frame.
    #[error("remote length {0:?} is not a number 0 to 8")]
    RemoteLength(String),
    /// The data is not hexadecimal.
    #[error("data {0:?} is not hexadecimal; write two hex digits per byte, e.g. DEADBEEF")]
    DataNotHex(String),
    /// The data is longer than a CAN FD frame.
    #[error("data {0:?} is longer than 64 bytes, the longest CAN FD frame; check the line")]
    DataTooLong(String),
    /// The data has an odd number of digits.
    #[error("data {0:?} has an odd number of hex digits; write two per byte")]
    DataOdd(String),
    /// The fields do not make a valid frame.
    #[error(transparent)]
    Frame(#[from] FrameError),
}

/// Parses one candump log line.
pub fn parse_line(line: &str) -> Result<LogRecord, CandumpLineError> {
    parse_entry(line).map(Entry::to_record)
}

/// Parses one candump log line without allocating.
pub fn parse_entry(line: &str) -> Result<Entry<'_>, CandumpLineError> {
    let mut fields = line.split_ascii_whitespace();
    let (Some(time), Some(interface), Some(frame)) = (fields.next(), fields.next(), fields.next()) else {
        return Err(CandumpLineError::TooFewFields);
    };
    let direction = match fields.next() {
        None | Some("R") => Direction::Rx,
        Some("T") => Direction::Tx,
        Some(other) => return Err(CandumpLineError::AfterFrame(other.into())),
    };
    if let Some(extra) = fields.next() {
        return Err(CandumpLineError::AtEnd(extra.into()));
    }
    let time_ns = parse_time(time).ok_or_else(|| CandumpLineError::Time(time.into()))?;
    Ok(Entry {
        time_ns,
        interface,
        frame: parse_frame(frame)?,
        direction,
    })
}

/// `(seconds.fraction)` as exact nanoseconds.
fn parse_time(field: &str) -> Option<i64> {
    super::seconds_to_ns(field.strip_prefix('(')?.strip_suffix(')')?)
}

fn parse_frame(field: &str) -> Result<CanFrame, CandumpLineError> {
    let (id_text, rest) = field
        .split_once('#')
        .ok_or_else(|| CandumpLineError::NoSeparator(field.into()))?;
    if id_text.is_empty() || !id_text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(CandumpLineError::IdNotHex(id_text.into()));
    }
    let len = id_text.len();
    if len != 3 && len != 8 {
        return Err(CandumpLineError::IdDigits(id_text.into(), len));
    }
    // At most 8 hex digits: they fit.
    let raw = u32::from_str_radix(id_text, 16).map_err(|_| CandumpLineError::IdNotHex(id_text.into()))?;
    let id = if len == 3 {
        CanId::standard(raw as u16)
    } else {
        CanId::extended(raw)
    }?;
    let mut buf = [0u8; FD_MAX_LEN];
    if let Some(fd) = rest.strip_prefix('#') {
        let mut chars = fd.chars();
        let flags = chars
            .next()
            .and_then(|c| c.to_digit(16))
            .ok_or_else(|| CandumpLineError::FdFlags(field.into()))?;
        let len = parse_data(chars.as_str(), &mut buf)?;
        return Ok(CanFrame::fd(id, &buf[..len], flags & 1 != 0, flags & 2 != 0)?);
    }
    if let Some(remote) = rest.strip_prefix('R') {
        let len = if remote.is_empty() {
            0
        } else {
            remote
                .parse()
                .map_err(|_| CandumpLineError::RemoteLength(remote.into()))?
        };
        return Ok(CanFrame::remote(id, len)?);
    }
    // A `_` suffix gives a DLC above 8 for an 8-byte frame; it does not change the data.
    let data = rest.split_once('_').map_or(rest, |(data, _)| data);
    let len = parse_data(data, &mut buf)?;
    Ok(CanFrame::data(id, &buf[..len])?)
}

/// Hex digits in pairs, optionally separated by dots, into `buf`.
fn parse_data(text: &str, buf: &mut [u8; FD_MAX_LEN]) -> Result<usize, CandumpLineError> {
    let digits = text.bytes().filter(|&b| b != b'.');
    let mut len = 0;
    let mut high = None;
    for b in digits {
        let nibble = (b as char)
            .to_digit(16)
            .ok_or_else(|| CandumpLineError::DataNotHex(text.into()))? as u8;
        match high.take() {
            None => high = Some(nibble),
            Some(h) => {
                if len == FD_MAX_LEN {
                    return Err(CandumpLineError::DataTooLong(text.into()));
                }
                buf[len] = h << 4 | nibble;
                len += 1;
            }
        }
    }
    if high.is_some() {
        return Err(CandumpLineError::DataOdd(text.into()));
    }
    Ok(len)
}

/// Writes frames in the candump log format.
pub struct CandumpWriter<W> {
    out: W,
}

impl<W: Write> CandumpWriter<W> {
    /// A writer into `out`.
    pub fn new(out: W) -> Self {
        CandumpWriter { out }
    }
}

impl<W: Write + Send> LogWriter for CandumpWriter<W> {
    fn write_entry(&mut self, r: &Entry<'_>) -> io::Result<()> {
        let (seconds, nanos) = (r.time_ns.div_euclid(1_000_000_000), r.time_ns.rem_euclid(1_000_000_000));
        write!(self.out, "({seconds}.{:06}) {} ", nanos / 1000, r.interface)?;
        let id = r.frame.id();
        if id.is_extended() {
            write!(self.out, "{:08X}", id.raw())?;
        } else {
            write!(self.out, "{:03X}", id.raw())?;
        }
        match r.frame.kind() {
            tandem_can::FrameKind::Data => write!(self.out, "#")?,
            tandem_can::FrameKind::Remote if r.frame.is_empty() => write!(self.out, "#R")?,
            tandem_can::FrameKind::Remote => write!(self.out, "#R{}", r.frame.len())?,
            tandem_can::FrameKind::Fd { brs, esi } => write!(self.out, "##{:X}", u8::from(brs) | u8::from(esi) << 1)?,
        }
        write_hex(&mut self.out, r.frame.payload(), "")?;
        let direction = match r.direction {
            Direction::Rx => "R",
            Direction::Tx => "T",
        };
        writeln!(self.out, " {direction}")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Place;

    #[test]
    fn lines_round_trip_and_bad_lines_say_why() {
        let lines = [
            "(1436509052.249713) vcan0 123#DEADBEEF R",
            "(0.000001) can1 1ABCDEF0#R4 T",
            "(5.000000) can0 7FF##3 R",
            "(2.500000) can0 001#R R",
        ];
        for line in lines {
            let record = parse_line(line).unwrap();
            let mut out = Vec::new();
            CandumpWriter::new(&mut out).write(&record).unwrap();
            assert_eq!(String::from_utf8(out).unwrap().trim_end(), line.trim_end());
        }
        let fd = parse_line("(1.5) can0 123##1112233").unwrap();
        assert_eq!(
            (fd.time_ns, fd.frame.payload()),
            (1_500_000_000, &[0x11, 0x22, 0x33][..])
        );
        for (bad, says) in [
            ("(1.0) can0", "too few fields"),
            ("1.0 can0 123#00", "not a time"),
            ("(1.0) can0 123#0", "odd number"),
            ("(1.0) can0 12#00", "use 3 (standard) or 8"),
            ("(1.0) can0 123#001122334455667788", "valid classic length"),
            ("(1.0) can0 800#00", "does not fit 11 bits"),
            ("(1.0) can0 123#GG", "not hexadecimal"),
        ] {
            let e = parse_line(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_reader_names_the_line_of_a_malformed_record() {
        let text = "(1.000000) can0 123#00\n\n(2.000000) can0 123#0\n";
        let mut reader = CandumpReader::new(text.as_bytes(), "bus.log");
        assert!(reader.next().unwrap().is_ok());
        let e = reader.next().unwrap().unwrap_err();
        assert_eq!(
            (e.place, e.to_string().starts_with("bus.log:3: ")),
            (Place::Line(3), true)
        );
    }
}
