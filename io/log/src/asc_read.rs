//! Reads Vector ASC logs as CANoe and python-can's `ASCWriter` write them:
//! a header (`date`, `base hex|dec  timestamps absolute|relative`,
//! `internal events logged`, `Begin Triggerblock DATE`, comments), then one
//! line per event. Classic frames read
//! `TIME CHANNEL ID Rx|Tx d DLC DATA... [Length = ...]` (`r DLC` for a
//! remote frame, `x` after the identifier marking an extended one); CAN FD
//! frames read `TIME CANFD CHANNEL Rx|Tx ID [NAME] BRS ESI DLC LENGTH
//! DATA... [...]`. Lines of other events (error frames, statistics, status,
//! `Start of measurement`) are skipped. Times count from the trigger
//! block's date (or the `date` line's), read as UTC.

use std::io::BufRead;

use super::asc::parse_asc_date;
use super::text_lines::{TextFormat, TextLines};
use super::{seconds_to_ns, ChannelNames, Direction, Entry, LogError};
use tandem_can::frame::{CanFrame, CanId, FrameError, FD_LENGTHS, FD_MAX_LEN};

/// The ASC format as its line reader names it. The longest line read is
/// 4096 bytes: a CAN FD frame of 64 bytes with its symbolic name and bit
/// timings is under 400.
const FORMAT: TextFormat = TextFormat {
    max_line: 4096,
    name: "ASC",
    a_log: "an ASC log",
    not_utf8: "",
};

/// What a frame line of an ASC log is expected to look like.
const EXPECTED: &str = "expected `TIME CHANNEL ID Rx|Tx d DLC DATA...` or `TIME CANFD CHANNEL Rx|Tx ID BRS ESI DLC \
                        LENGTH DATA...`";

/// Reads a Vector ASC log line by line.
pub struct AscReader<R> {
    lines: TextLines<R>,
    header: Header,
    names: ChannelNames,
}

/// What the header lines say, and the time of the last frame: what a frame
/// line is read with.
struct Header {
    /// Hexadecimal (16) or decimal (10) identifiers and data.
    base: u32,
    /// Whether each time counts from the line before (else from the start).
    relative: bool,
    start_ns: i64,
    /// The time of the last frame line, from the start (ns).
    last_ns: i64,
}

/// A field of a line with its 1-based column.
type Field<'a> = (usize, &'a str);

/// What is wrong with a line: the column at fault and why.
type LineError = (usize, String);

impl<R: BufRead> AscReader<R> {
    /// A reader of `input`, named `file` in errors.
    pub fn new(input: R, file: &str) -> Self {
        AscReader {
            lines: TextLines::new(input, file),
            header: Header {
                base: 16,
                relative: false,
                start_ns: 0,
                last_ns: 0,
            },
            names: ChannelNames::default(),
        }
    }

    /// The next frame, its interface the channel number; `None` at the end
    /// of the file.
    pub fn next_entry(&mut self) -> Option<Result<Entry<'_>, LogError>> {
        loop {
            if let Err(e) = self.lines.read(&FORMAT)? {
                return Some(Err(e));
            }
            match self.header.parse_line(self.lines.text.trim_end()) {
                Ok(None) => continue,
                Ok(Some((time_ns, channel, frame, direction))) => {
                    return Some(Ok(Entry {
                        time_ns,
                        interface: self.names.get(channel),
                        frame,
                        direction,
                    }))
                }
                Err((column, message)) => return Some(Err(self.lines.error_at(column, message))),
            }
        }
    }
}

records_from_entries!(AscReader<R>, R: BufRead);

impl<R> AscReader<R> {
    /// An error at the line read last, saying `message`.
    pub fn error(&self, message: String) -> LogError {
        self.lines.error(message)
    }
}

impl Header {
    /// The frame on line `text`, or `None` for a header line or an event
    /// that is not a frame.
    fn parse_line(&mut self, text: &str) -> Result<Option<(i64, u16, CanFrame, Direction)>, LineError> {
        let mut fields = fields(text);
        let Some((_, first)) = fields.next() else {
            return Ok(None);
        };
        if self.read_setting(first, &mut fields, text)? {
            return Ok(None);
        }
        let Some(time_ns) = seconds_to_ns(first) else {
            // Comments, `internal events logged`, `End TriggerBlock`, ...
            return Ok(None);
        };
        let Some((_, mut channel_text)) = fields.next() else {
            return Ok(None);
        };
        let time_ns = if self.relative { self.last_ns + time_ns } else { time_ns };
        let fd = channel_text == "CANFD";
        if fd {
            channel_text = next(&mut fields, text, "a channel number")?.1;
        }
        let Ok(channel) = channel_text.parse::<u16>() else {
            // Statistics, status and other events that are not frames.
            return Ok(None);
        };
        let Some((id_field, direction)) = self.id_and_direction(fd, &mut fields, text)? else {
            return Ok(None);
        };
        let id = self.parse_id(id_field)?;
        let frame = if fd {
            self.fd_frame(id, &mut fields, text)?
        } else {
            self.classic_frame(id, &mut fields, text)?
        };
        let frame = frame.map_err(|e| (id_field.0, e.to_string()))?;
        self.last_ns = time_ns;
        let time_ns = self.start_ns.checked_add(time_ns).ok_or_else(|| {
            (
                1,
                "the time is too far from the start date to count in nanoseconds".to_owned(),
            )
        })?;
        Ok(Some((time_ns, channel, frame, direction)))
    }

    /// Reads a header line that begins with `keyword` (`date`, `base`,
    /// `Begin Triggerblock`); whether it was one.
    fn read_setting<'a>(
        &mut self,
        keyword: &str,
        fields: &mut impl Iterator<Item = Field<'a>>,
        text: &str,
    ) -> Result<bool, LineError> {
        match keyword.to_ascii_lowercase().as_str() {
            "date" => {
                // `date WEEKDAY MONTH DAY TIME [am|pm] YEAR`: the start,
                // unless a trigger block gives its own.
                let rest = fields.nth(1).map_or("", |(column, _)| &text[column - 1..]);
                self.start_ns = parse_asc_date(rest).unwrap_or(self.start_ns);
            }
            "base" => {
                let (column, base) = fields
                    .next()
                    .ok_or_else(|| (text.len() + 1, "`base` without hex or dec".into()))?;
                self.base = match base {
                    "hex" => 16,
                    "dec" => 10,
                    other => return Err((column, format!("base {other:?} is neither hex nor dec"))),
                };
                if let (Some(_), Some((column, kind))) = (fields.next(), fields.next()) {
                    self.relative = match kind {
                        "absolute" => false,
                        "relative" => true,
                        other => {
                            return Err((
                                column,
                                format!("timestamps {other:?} are neither absolute nor relative"),
                            ))
                        }
                    };
                }
            }
            "begin" => {
                // `Begin Triggerblock WEEKDAY MONTH DAY TIME [am|pm] YEAR`.
                if let Some((column, _)) = fields.nth(2) {
                    if let Some(start) = parse_asc_date(&text[column - 1..]) {
                        self.start_ns = start;
                    }
                }
                self.last_ns = 0;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// A frame line's identifier field and direction (which come in either
    /// order, by `fd`), or `None` for an event that is not a frame.
    fn id_and_direction<'a>(
        &self,
        fd: bool,
        fields: &mut impl Iterator<Item = Field<'a>>,
        text: &str,
    ) -> Result<Option<(Field<'a>, Direction)>, LineError> {
        let (id_field, dir_field) = if fd {
            let dir = next(fields, text, "a direction (Rx or Tx)")?;
            (next(fields, text, "an identifier")?, dir)
        } else {
            let id = next(fields, text, "an identifier")?;
            let dir = fields.next().unwrap_or((text.len() + 1, ""));
            // Error frames, statistics, status and other events have no
            // direction after a word that is not an identifier.
            let number = id.1.strip_suffix(['x', 'X']).unwrap_or(id.1);
            if !matches!(dir.1, "Rx" | "Tx") && u32::from_str_radix(number, self.base).is_err() {
                return Ok(None);
            }
            (id, dir)
        };
        if dir_field.1.eq_ignore_ascii_case("errorframe") {
            return Ok(None);
        }
        let direction = match dir_field.1 {
            "Rx" => Direction::Rx,
            "Tx" => Direction::Tx,
            other => {
                return Err((
                    dir_field.0,
                    format!("direction {other:?} is neither Rx nor Tx; {EXPECTED}"),
                ))
            }
        };
        Ok(Some((id_field, direction)))
    }

    /// The rest of a CAN FD frame line after its identifier: `[NAME] BRS
    /// ESI DLC LENGTH DATA...`.
    fn fd_frame<'a>(
        &self,
        id: CanId,
        fields: &mut impl Iterator<Item = Field<'a>>,
        text: &str,
    ) -> Result<Result<CanFrame, FrameError>, LineError> {
        let mut flag = next(fields, text, "the bit-rate switch flag (0 or 1)")?;
        if flag.1.parse::<u8>().is_err() {
            // A symbolic message name comes before the flags.
            flag = next(fields, text, "the bit-rate switch flag (0 or 1)")?;
        }
        let brs = parse_flag(flag)?;
        let esi = parse_flag(next(fields, text, "the error state indicator flag (0 or 1)")?)?;
        let (dlc_column, dlc_text) = next(fields, text, "the DLC")?;
        let dlc = u8::from_str_radix(dlc_text, 16)
            .ok()
            .filter(|&d| d < 16)
            .ok_or_else(|| (dlc_column, format!("DLC {dlc_text:?} is not a hex digit 0 to F")))?;
        let (len_column, len_text) = next(fields, text, "the data length")?;
        let len = len_text
            .parse::<usize>()
            .ok()
            .filter(|l| FD_LENGTHS.contains(l))
            .ok_or_else(|| {
                (
                    len_column,
                    format!("data length {len_text:?} is not a CAN FD length (0 to 8, 12, 16, 20, 24, 32, 48 or 64)"),
                )
            })?;
        if FD_LENGTHS[usize::from(dlc)] != len {
            return Err((dlc_column, format!("DLC {dlc:X} does not give {len} data bytes")));
        }
        let mut data = [0u8; FD_MAX_LEN];
        self.parse_data(fields, text, &mut data[..len])?;
        Ok(CanFrame::fd(id, &data[..len], brs, esi))
    }

    /// The rest of a classic frame line after its direction: `d DLC
    /// DATA...` or `r DLC`.
    fn classic_frame<'a>(
        &self,
        id: CanId,
        fields: &mut impl Iterator<Item = Field<'a>>,
        text: &str,
    ) -> Result<Result<CanFrame, FrameError>, LineError> {
        let (kind_column, kind) = next(fields, text, "d (data) or r (remote)")?;
        let (dlc_column, dlc_text) = next(fields, text, "the DLC")?;
        let dlc = u32::from_str_radix(dlc_text, self.base)
            .ok()
            .filter(|&d| d < 16)
            .ok_or_else(|| (dlc_column, format!("DLC {dlc_text:?} is not a number 0 to 15")))?;
        let len = FD_LENGTHS[dlc as usize].min(8);
        match kind {
            "d" => {
                let mut data = [0u8; FD_MAX_LEN];
                self.parse_data(fields, text, &mut data[..len])?;
                Ok(CanFrame::data(id, &data[..len]))
            }
            "r" => Ok(CanFrame::remote(id, len)),
            other => Err((
                kind_column,
                format!("{other:?} is neither d (data) nor r (remote); {EXPECTED}"),
            )),
        }
    }

    /// An identifier, `x` after it marking an extended one.
    fn parse_id(&self, (column, text): Field<'_>) -> Result<CanId, LineError> {
        let (digits, extended) = match text.strip_suffix(['x', 'X']) {
            Some(digits) => (digits, true),
            None => (text, false),
        };
        let raw = u32::from_str_radix(digits, self.base).map_err(|_| {
            (
                column,
                format!("identifier {text:?} is not a number in base {}", self.base),
            )
        })?;
        CanId::new(raw, extended).map_err(|e| {
            (
                column,
                format!("{e}; mark an extended identifier with x, e.g. 18FF0001x"),
            )
        })
    }

    /// `buf.len()` data bytes, in the log's base.
    fn parse_data<'a>(
        &self,
        fields: &mut impl Iterator<Item = Field<'a>>,
        text: &str,
        buf: &mut [u8],
    ) -> Result<(), LineError> {
        let count = buf.len();
        for (i, byte) in buf.iter_mut().enumerate() {
            let (column, digits) = fields.next().ok_or_else(|| {
                (
                    text.len() + 1,
                    format!("the line ends after {i} of its {count} data bytes"),
                )
            })?;
            *byte = u8::from_str_radix(digits, self.base).map_err(|_| {
                (
                    column,
                    format!("data byte {digits:?} is not a byte in base {}", self.base),
                )
            })?;
        }
        Ok(())
    }
}

/// The whitespace-separated fields of `text` with their 1-based columns.
fn fields(text: &str) -> impl Iterator<Item = Field<'_>> {
    text.split_ascii_whitespace()
        .map(move |field| (field.as_ptr() as usize - text.as_ptr() as usize + 1, field))
}

/// The next field, or an error at the end of the line saying what was due.
fn next<'a>(fields: &mut impl Iterator<Item = Field<'a>>, text: &str, what: &str) -> Result<Field<'a>, LineError> {
    fields.next().ok_or_else(|| {
        (
            text.len() + 1,
            format!("the line ends where {what} was due; {EXPECTED}"),
        )
    })
}

/// A `0` or `1` flag.
fn parse_flag((column, text): Field<'_>) -> Result<bool, LineError> {
    match text {
        "0" => Ok(false),
        "1" => Ok(true),
        other => Err((column, format!("flag {other:?} is neither 0 nor 1; {EXPECTED}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AscWriter, LogRecord, LogWriter, Place};

    fn records(text: &str) -> Vec<Result<LogRecord, LogError>> {
        AscReader::new(text.as_bytes(), "bus.asc").collect()
    }

    #[test]
    fn what_the_writer_writes_reads_back() {
        let start = 1_795_257_015_250_000_000;
        let id = CanId::standard(0x123).unwrap();
        let ext = CanId::extended(0x18FF_0001).unwrap();
        let frames = [
            (CanFrame::data(id, &[1, 2, 3]).unwrap(), "can0", Direction::Rx),
            (CanFrame::fd(ext, &[9; 12], true, false).unwrap(), "can1", Direction::Tx),
            (CanFrame::remote(ext, 4).unwrap(), "can0", Direction::Tx),
            (CanFrame::fd(id, &[], false, true).unwrap(), "can1", Direction::Rx),
        ];
        let mut out = Vec::new();
        let mut writer = AscWriter::new(&mut out, start).unwrap();
        for (i, (frame, interface, direction)) in frames.iter().enumerate() {
            let record = LogRecord {
                time_ns: start + i as i64 * 1_250_000,
                interface: (*interface).into(),
                frame: *frame,
                direction: *direction,
            };
            writer.write(&record).unwrap();
        }
        writer.finish().unwrap();
        let text = String::from_utf8(out).unwrap();
        let read: Vec<_> = records(&text).into_iter().map(Result::unwrap).collect();
        assert_eq!(read.len(), frames.len(), "{text}");
        for (i, (r, (frame, interface, direction))) in read.iter().zip(&frames).enumerate() {
            let channel = if *interface == "can0" { "1" } else { "2" };
            assert_eq!(
                (r.time_ns, r.interface.as_str(), r.frame, r.direction),
                (start + i as i64 * 1_250_000, channel, *frame, *direction)
            );
        }
    }

    #[test]
    fn malformed_lines_name_line_and_column() {
        let header = "date Sat Nov 21 10:30:15.250 2026\nbase hex  timestamps absolute\n";
        for (line, column, says) in [
            ("   1.000000 1  123   Rx   d 2 11 GG", 34, "not a byte"),
            ("   1.000000 1  123   Rx   d 2 11", 33, "ends after 1 of its 2"),
            ("   1.000000 1  800   Rx   d 0", 16, "does not fit 11 bits"),
            ("   1.000000 1  123   Up   d 0", 22, "neither Rx nor Tx"),
            ("   1.000000 CANFD 1 Rx 123 1 0 9 16 00", 32, "does not give 16"),
        ] {
            let e = records(&format!("{header}{line}\n")).pop().unwrap().unwrap_err();
            assert_eq!(e.place, Place::Column(3, column), "{line}: {e}");
            assert!(e.to_string().contains(says), "{line}: {e}");
        }
        let skipped = records(&format!(
            "{header}   1.0 1 ErrorFrame\n   2.0 1 Statistic: D 0\n// comment\n"
        ));
        assert!(skipped.is_empty());
    }

    #[test]
    fn relative_times_and_decimal_base_read() {
        let text = "date Thu Jan 01 00:00:01.000 1970\nbase dec  timestamps relative\n   0.5 1 291 Rx d 2 1 255\n   \
                    0.25 2 291x Tx d 1 7\n";
        let read: Vec<_> = records(text).into_iter().map(Result::unwrap).collect();
        assert_eq!(
            read.iter()
                .map(|r| (r.time_ns, r.frame.payload().to_vec()))
                .collect::<Vec<_>>(),
            [(1_500_000_000, vec![1, 255]), (1_750_000_000, vec![7])]
        );
        assert_eq!(read[1].frame.id(), CanId::extended(291).unwrap());
    }
}
