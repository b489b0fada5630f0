//! The SLCAN (Lawicel ASCII) line codec: frames and commands to bytes and
//! back, without allocating.
//!
//! Every line ends with `\r`. Frames (hex digits upper case when encoding,
//! either case when parsing):
//!
//! | line                | frame                                          |
//! |---------------------|------------------------------------------------|
//! | `tiiiL` + data      | standard data frame, `L` = length 0–8          |
//! | `TiiiiiiiiL` + data | extended data frame                            |
//! | `riiiL`             | standard remote frame requesting `L` bytes     |
//! | `RiiiiiiiiL`        | extended remote frame                          |
//! | `diiiL` / `DiiiiiiiiL` + data | CAN FD frame, `L` = DLC 0–F (`FD_LENGTHS`) |
//! | `biiiL` / `BiiiiiiiiL` + data | CAN FD frame with bit-rate switch      |
//!
//! An adapter with timestamps on (`Z1`) appends 4 hex digits to each frame:
//! its millisecond timer, which wraps at 60000 (see [`TimerClock`]). CAN FD's
//! error state indicator has no SLCAN form: it is sent as 0 and read as
//! unset.
//!
//! Commands ([`Command`]): `Sn` bit rate, `O` open, `L` open listen-only,
//! `C` close, `Z0`/`Z1` timestamps off/on. Answers: `\r` alone is OK,
//! `\x07` (BELL) is an error; `z\r` / `Z\r` acknowledge a transmitted frame.

use std::fmt;

use tandem_can::frame::{CanFrame, CanId, FD_LENGTHS};

/// The longest line, its `\r` included: an extended CAN FD frame of 64 bytes
/// with a timestamp.
pub const MAX_LINE: usize = 1 + 8 + 1 + 2 * 64 + 4 + 1;

/// The bit rates SLCAN's `Sn` command sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bitrate {
    /// `S0`: 10 kbit/s.
    K10,
    /// `S1`: 20 kbit/s.
    K20,
    /// `S2`: 50 kbit/s.
    K50,
    /// `S3`: 100 kbit/s.
    K100,
    /// `S4`: 125 kbit/s.
    K125,
    /// `S5`: 250 kbit/s.
    K250,
    /// `S6`: 500 kbit/s.
    K500,
    /// `S7`: 800 kbit/s in Lawicel's table, 750 kbit/s on CANable-style
    /// firmware.
    K800,
    /// `S8`: 1 Mbit/s.
    M1,
}

impl Bitrate {
    const ALL: [(Bitrate, u32, &'static [u8]); 9] = [
        (Bitrate::K10, 10_000, b"S0\r"),
        (Bitrate::K20, 20_000, b"S1\r"),
        (Bitrate::K50, 50_000, b"S2\r"),
        (Bitrate::K100, 100_000, b"S3\r"),
        (Bitrate::K125, 125_000, b"S4\r"),
        (Bitrate::K250, 250_000, b"S5\r"),
        (Bitrate::K500, 500_000, b"S6\r"),
        (Bitrate::K800, 800_000, b"S7\r"),
        (Bitrate::M1, 1_000_000, b"S8\r"),
    ];

    /// The valid bit rates, for an error message.
    pub const VALID: &'static str =
        "10000, 20000, 50000, 100000, 125000, 250000, 500000, 750000 or 800000 (S7), 1000000";

    /// The code for `bits_per_second` (750000 and 800000 both give `S7`).
    pub fn from_bps(bits_per_second: u32) -> Option<Bitrate> {
        let bps = if bits_per_second == 750_000 {
            800_000
        } else {
            bits_per_second
        };
        Self::ALL.iter().find(|(_, b, _)| *b == bps).map(|(rate, _, _)| *rate)
    }

    /// The bit rate in bit/s (Lawicel's: 800000 for `S7`).
    pub fn bps(self) -> u32 {
        Self::ALL[self as usize].1
    }
}

/// A command to an SLCAN adapter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// `Sn`: set the bit rate (channel closed).
    Bitrate(Bitrate),
    /// `O`: open the channel.
    Open,
    /// `L`: open the channel listen-only (no ACKs, no transmission).
    ListenOnly,
    /// `C`: close the channel.
    Close,
    /// `Z1` / `Z0`: timestamps on / off (channel closed).
    Timestamps(bool),
}

impl Command {
    /// The command line, `\r` included.
    pub fn as_bytes(self) -> &'static [u8] {
        match self {
            Command::Bitrate(rate) => Bitrate::ALL[rate as usize].2,
            Command::Open => b"O\r",
            Command::ListenOnly => b"L\r",
            Command::Close => b"C\r",
            Command::Timestamps(true) => b"Z1\r",
            Command::Timestamps(false) => b"Z0\r",
        }
    }

    /// The command without its `\r`, for messages.
    pub fn as_str(self) -> &'static str {
        let bytes = self.as_bytes();
        std::str::from_utf8(&bytes[..bytes.len() - 1]).unwrap_or("?")
    }
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// Writes `frame` as an SLCAN line (with `timestamp_ms`, as an adapter
/// sends it, if given) into `out` and returns the line, `\r` included.
pub fn encode_frame<'a>(frame: &CanFrame, timestamp_ms: Option<u16>, out: &'a mut [u8; MAX_LINE]) -> &'a [u8] {
    let extended = frame.id().is_extended();
    out[0] = match (frame.kind(), extended) {
        (tandem_can::FrameKind::Data, false) => b't',
        (tandem_can::FrameKind::Data, true) => b'T',
        (tandem_can::FrameKind::Remote, false) => b'r',
        (tandem_can::FrameKind::Remote, true) => b'R',
        (tandem_can::FrameKind::Fd { brs: false, .. }, false) => b'd',
        (tandem_can::FrameKind::Fd { brs: false, .. }, true) => b'D',
        (tandem_can::FrameKind::Fd { brs: true, .. }, false) => b'b',
        (tandem_can::FrameKind::Fd { brs: true, .. }, true) => b'B',
    };
    let digits = if extended { 8 } else { 3 };
    let mut n = 1;
    put_hex(&mut out[n..n + digits], frame.id().raw());
    n += digits;
    out[n] = HEX[usize::from(frame.dlc() & 0xF)];
    n += 1;
    for byte in frame.payload() {
        out[n] = HEX[usize::from(byte >> 4)];
        out[n + 1] = HEX[usize::from(byte & 0xF)];
        n += 2;
    }
    if let Some(ts) = timestamp_ms {
        put_hex(&mut out[n..n + 4], u32::from(ts));
        n += 4;
    }
    out[n] = b'\r';
    &out[..=n]
}

fn put_hex(out: &mut [u8], mut value: u32) {
    for digit in out.iter_mut().rev() {
        *digit = HEX[(value & 0xF) as usize];
        value >>= 4;
    }
}

/// One line from an adapter (or a host, when Tandem plays the adapter).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Line {
    /// A frame off the bus, with the adapter's millisecond timer if it
    /// sends one.
    Frame {
        /// The frame.
        frame: CanFrame,
        /// The adapter's timer in ms (0–59999 on Lawicel adapters).
        timestamp_ms: Option<u16>,
    },
    /// `\r` alone: the last command succeeded.
    Ok,
    /// BELL (`\x07`): the last command failed.
    Error,
    /// Another well-formed SLCAN line that is not a frame: a transmit
    /// acknowledgement (`z`, `Z`), a version or status answer (`V`, `N`,
    /// `F`), or a host's command (`S6`, `O`, `C`...); its first byte.
    Other(u8),
}

/// Bytes that are not a valid SLCAN line: what is wrong, and the start of
/// the line. Allocation-free; its `Display` gives both.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct ParseError {
    problem: &'static str,
    text: [u8; 24],
    len: u8,
    truncated: bool,
}

impl ParseError {
    fn new(problem: &'static str, line: &[u8]) -> Self {
        let mut text = [0; 24];
        let len = line.len().min(text.len());
        text[..len].copy_from_slice(&line[..len]);
        ParseError {
            problem,
            text,
            len: len as u8,
            truncated: line.len() > len,
        }
    }

    /// What is wrong with the line.
    pub fn problem(&self) -> &'static str {
        self.problem
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for &b in &self.text[..usize::from(self.len)] {
            if b.is_ascii_graphic() || b == b' ' {
                write!(f, "{}", b as char)?;
            } else {
                write!(f, "\\x{b:02X}")?;
            }
        }
        let more = if self.truncated { "..." } else { "" };
        write!(f, "{more}\" ({})", self.problem)
    }
}

impl fmt::Debug for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ParseError({self})")
    }
}

impl std::error::Error for ParseError {}

/// The first bytes of SLCAN lines that are not frames: commands and their
/// answers.
const OTHER_LINES: &[u8] = b"SsOLCZzVvNFWMmAPXUQEYy";

/// Parses one line, without its `\r`.
pub fn parse_line(line: &[u8]) -> Result<Line, ParseError> {
    let Some(&first) = line.first() else {
        return Ok(Line::Ok);
    };
    let (extended, kind) = match first {
        b't' => (false, Kind::Data),
        b'T' => (true, Kind::Data),
        b'r' => (false, Kind::Remote),
        b'R' => (true, Kind::Remote),
        b'd' => (false, Kind::Fd(false)),
        b'D' => (true, Kind::Fd(false)),
        b'b' => (false, Kind::Fd(true)),
        b'B' => (true, Kind::Fd(true)),
        b'\x07' if line.len() == 1 => return Ok(Line::Error),
        _ if OTHER_LINES.contains(&first) && line.iter().all(u8::is_ascii_graphic) => {
            return Ok(Line::Other(first));
        }
        _ => return Err(ParseError::new("not an SLCAN line", line)),
    };
    let digits = if extended { 8 } else { 3 };
    if line.len() < 1 + digits + 1 {
        return Err(ParseError::new("too short for a frame", line));
    }
    let raw = hex_value(&line[1..=digits]).ok_or(ParseError::new("bad hex digit in the identifier", line))?;
    let id = if extended {
        CanId::extended(raw)
    } else {
        // Three hex digits always fit 16 bits.
        CanId::standard(raw as u16)
    }
    .map_err(|_| ParseError::new("identifier out of range", line))?;
    let dlc_digit = line[1 + digits];
    let dlc = hex_value(&[dlc_digit]).ok_or(ParseError::new("bad length digit", line))? as usize;
    let len = match kind {
        Kind::Fd(_) => FD_LENGTHS[dlc],
        _ if dlc <= 8 => dlc,
        _ => return Err(ParseError::new("length over 8", line)),
    };
    let rest = &line[2 + digits..];
    let data_digits = if kind == Kind::Remote { 0 } else { 2 * len };
    let timestamp_ms = match rest.len().checked_sub(data_digits) {
        Some(0) => None,
        Some(4) => {
            Some(hex_value(&rest[data_digits..]).ok_or(ParseError::new("bad hex digit in the timestamp", line))? as u16)
        }
        _ => return Err(ParseError::new("data does not match the length", line)),
    };
    let mut payload = [0u8; 64];
    for (i, pair) in rest[..data_digits].chunks_exact(2).enumerate() {
        payload[i] = hex_value(pair).ok_or(ParseError::new("bad hex digit in the data", line))? as u8;
    }
    let frame = match kind {
        Kind::Data => CanFrame::data(id, &payload[..len]),
        Kind::Remote => CanFrame::remote(id, len),
        Kind::Fd(brs) => CanFrame::fd(id, &payload[..len], brs, false),
    }
    .map_err(|_| ParseError::new("invalid frame", line))?;
    Ok(Line::Frame { frame, timestamp_ms })
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Data,
    Remote,
    Fd(bool),
}

/// The value of up to 8 hex digits (either case).
fn hex_value(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |acc, &d| {
        let v = match d {
            b'0'..=b'9' => d - b'0',
            b'A'..=b'F' => d - b'A' + 10,
            b'a'..=b'f' => d - b'a' + 10,
            _ => return None,
        };
        Some(acc << 4 | u32::from(v))
    })
}

/// Splits a byte stream into SLCAN lines and parses them, one byte at a
/// time, in a fixed buffer. A line that is not valid SLCAN (garbage, a
/// line longer than [`MAX_LINE`], bytes before a BELL) is one
/// [`ParseError`], and decoding resumes after its `\r`.
#[derive(Clone)]
pub struct Decoder {
    buf: [u8; MAX_LINE],
    len: usize,
    overflow: bool,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new()
    }
}

impl Decoder {
    /// A decoder at the start of a line.
    pub fn new() -> Self {
        Decoder {
            buf: [0; MAX_LINE],
            len: 0,
            overflow: false,
        }
    }

    /// Forgets a partial line (after a reconnection).
    pub fn reset(&mut self) {
        self.len = 0;
        self.overflow = false;
    }

    /// Takes the next byte; gives a message or an error when it ends a line.
    pub fn push(&mut self, byte: u8) -> Option<Result<Line, ParseError>> {
        match byte {
            b'\r' => {
                let result = if self.overflow {
                    Err(ParseError::new("line too long", &self.buf[..self.len]))
                } else {
                    parse_line(&self.buf[..self.len])
                };
                self.reset();
                Some(result)
            }
            b'\x07' => {
                let result = if self.len == 0 && !self.overflow {
                    Ok(Line::Error)
                } else {
                    Err(ParseError::new("garbage before a BELL", &self.buf[..self.len]))
                };
                self.reset();
                Some(result)
            }
            // Some adapters end lines with "\r\n": a line feed starting a
            // line is ignored.
            b'\n' if self.len == 0 && !self.overflow => None,
            _ => {
                if self.len < self.buf.len() - 1 {
                    self.buf[self.len] = byte;
                    self.len += 1;
                } else {
                    self.overflow = true;
                }
                None
            }
        }
    }
}

/// Turns an adapter's wrapping millisecond timer into seconds that keep
/// increasing: each time the timer goes backwards it has wrapped, at 60000
/// (Lawicel), or at 65536 once a value of 60000 or more was seen. A gap of
/// more than one period between two frames cannot be seen.
#[derive(Clone, Debug, Default)]
pub struct TimerClock {
    last: Option<u16>,
    base_ms: u64,
    period_65536: bool,
}

impl TimerClock {
    /// A clock that has seen no timestamp.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets the timer (after a reconnection, when it restarts).
    pub fn reset(&mut self) {
        *self = Self::new();
    }

    /// Seconds since the first timestamp's wrap period began.
    pub fn seconds(&mut self, timestamp_ms: u16) -> f64 {
        self.period_65536 |= timestamp_ms >= 60_000;
        if self.last.is_some_and(|last| timestamp_ms < last) {
            self.base_ms += if self.period_65536 { 65_536 } else { 60_000 };
        }
        self.last = Some(timestamp_ms);
        (self.base_ms + u64::from(timestamp_ms)) as f64 / 1000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_can::FrameKind;

    fn std_id(id: u16) -> CanId {
        CanId::standard(id).unwrap()
    }

    fn ext_id(id: u32) -> CanId {
        CanId::extended(id).unwrap()
    }

    fn encode(frame: &CanFrame, ts: Option<u16>) -> String {
        let mut buf = [0; MAX_LINE];
        String::from_utf8(encode_frame(frame, ts, &mut buf).to_vec()).unwrap()
    }

    fn parse(line: &str) -> Result<Line, ParseError> {
        parse_line(line.trim_end_matches('\r').as_bytes())
    }

    #[test]
    fn frames_encode_as_lawicel_lines() {
        let cases = [
            (CanFrame::data(std_id(0x123), &[0xDE, 0xAD]).unwrap(), "t1232DEAD\r"),
            (CanFrame::data(std_id(0x7FF), &[]).unwrap(), "t7FF0\r"),
            (
                CanFrame::data(ext_id(0x1ABCDEF0), &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap(),
                "T1ABCDEF080102030405060708\r",
            ),
            (CanFrame::remote(std_id(0x001), 4).unwrap(), "r0014\r"),
            (CanFrame::remote(ext_id(0x12345), 0).unwrap(), "R000123450\r"),
            (
                CanFrame::fd(std_id(0x10), &[0xAA; 12], false, false).unwrap(),
                "d0109AAAAAAAAAAAAAAAAAAAAAAAA\r",
            ),
            (CanFrame::fd(ext_id(0x10), &[], true, true).unwrap(), "B000000100\r"),
        ];
        for (frame, line) in cases {
            assert_eq!(encode(&frame, None), line);
            let Ok(Line::Frame {
                frame: back,
                timestamp_ms: None,
            }) = parse(line)
            else {
                panic!("{line:?} does not parse back");
            };
            // CAN FD's ESI has no SLCAN form: it comes back unset.
            let expected = match frame.kind() {
                FrameKind::Fd { brs, .. } => CanFrame::fd(frame.id(), frame.payload(), brs, false).unwrap(),
                _ => frame,
            };
            assert_eq!(back, expected, "{line:?}");
        }
    }

    #[test]
    fn every_length_and_a_64_byte_fd_frame_with_timestamp_round_trip() {
        let payload: Vec<u8> = (0..64).collect();
        for len in 0..=8 {
            let frame = CanFrame::data(ext_id(0x1FFF_FFFF), &payload[..len]).unwrap();
            let line = encode(&frame, Some(59_999));
            assert_eq!(line.len(), 1 + 8 + 1 + 2 * len + 4 + 1);
            assert_eq!(
                parse(&line),
                Ok(Line::Frame {
                    frame,
                    timestamp_ms: Some(59_999)
                })
            );
        }
        let frame = CanFrame::fd(ext_id(0x1234), &payload, true, false).unwrap();
        let line = encode(&frame, Some(0xABCD));
        assert_eq!(line.len(), MAX_LINE);
        assert_eq!(
            parse(&line),
            Ok(Line::Frame {
                frame,
                timestamp_ms: Some(0xABCD)
            })
        );
    }

    #[test]
    fn lower_case_hex_and_timestamps_parse() {
        let Ok(Line::Frame { frame, timestamp_ms }) = parse("t1a22beef1f40") else {
            panic!()
        };
        assert_eq!(
            (frame.id(), frame.payload(), timestamp_ms),
            (std_id(0x1A2), &[0xBE, 0xEF][..], Some(0x1F40))
        );
        let Ok(Line::Frame { frame, timestamp_ms }) = parse("r12380010") else {
            panic!()
        };
        assert_eq!((frame.is_remote(), frame.len(), timestamp_ms), (true, 8, Some(0x0010)));
    }

    #[test]
    fn commands_and_answers() {
        assert_eq!(Command::Bitrate(Bitrate::K500).as_bytes(), b"S6\r");
        assert_eq!(Command::Bitrate(Bitrate::K10).as_bytes(), b"S0\r");
        assert_eq!(Command::Bitrate(Bitrate::M1).as_bytes(), b"S8\r");
        assert_eq!(Command::Timestamps(true).as_bytes(), b"Z1\r");
        assert_eq!(Command::Timestamps(false).as_str(), "Z0");
        assert_eq!(
            (Command::Open.as_bytes(), Command::Close.as_bytes()),
            (&b"O\r"[..], &b"C\r"[..])
        );
        assert_eq!(Bitrate::from_bps(750_000), Some(Bitrate::K800));
        assert_eq!(Bitrate::from_bps(125_000).map(Bitrate::bps), Some(125_000));
        assert_eq!(Bitrate::from_bps(33_333), None);
        assert_eq!(parse(""), Ok(Line::Ok));
        assert_eq!(parse("\x07"), Ok(Line::Error));
        assert_eq!(parse("z"), Ok(Line::Other(b'z')));
        assert_eq!(parse("V1013"), Ok(Line::Other(b'V')));
        assert_eq!(parse("S6"), Ok(Line::Other(b'S')));
    }

    #[test]
    fn malformed_lines_say_what_is_wrong() {
        let cases = [
            ("hello", "not an SLCAN line"),
            ("t12", "too short for a frame"),
            ("t12G2AABB", "bad hex digit in the identifier"),
            ("t8002AABB", "identifier out of range"),
            ("T200000000", "identifier out of range"),
            ("t1239", "length over 8"),
            ("t123XAABB", "bad length digit"),
            ("t1232AAB", "data does not match the length"),
            ("t1232AABBCC", "data does not match the length"),
            ("t1232AAXB", "bad hex digit in the data"),
            ("t1232AABB12G4", "bad hex digit in the timestamp"),
            ("S 6", "not an SLCAN line"),
        ];
        for (line, problem) in cases {
            let err = parse(line).expect_err(line);
            assert_eq!(err.problem(), problem, "{line:?}");
        }
        assert_eq!(
            parse("t12G2AABB\x01").unwrap_err().to_string(),
            "\"t12G2AABB\\x01\" (bad hex digit in the identifier)"
        );
    }

    #[test]
    fn the_decoder_skips_garbage_to_the_next_carriage_return() {
        let mut decoder = Decoder::new();
        let input = b"\x00\xFFnoise\rt1230\r\x07junk\x07\nt4561AA\r";
        let out: Vec<_> = input.iter().filter_map(|&b| decoder.push(b)).collect();
        assert_eq!(out.len(), 5, "{out:?}");
        assert_eq!(out[0].unwrap_err().problem(), "not an SLCAN line");
        assert!(matches!(out[1], Ok(Line::Frame { frame, .. }) if frame.id() == std_id(0x123)));
        assert_eq!(out[2], Ok(Line::Error));
        assert_eq!(out[3].unwrap_err().problem(), "garbage before a BELL");
        assert!(matches!(out[4], Ok(Line::Frame { frame, .. }) if frame.payload() == [0xAA]));

        let mut long = vec![b't'; 500];
        long.extend_from_slice(b"\rt1230\r");
        let out: Vec<_> = long.iter().filter_map(|&b| decoder.push(b)).collect();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].unwrap_err().problem(), "line too long");
        assert!(out[1].is_ok());
    }

    #[test]
    fn the_clock_unwraps_the_adapter_timer() {
        let mut clock = TimerClock::new();
        let seconds: Vec<f64> = [59_990, 59_999, 5, 30_000, 10]
            .iter()
            .map(|&t| clock.seconds(t))
            .collect();
        assert_eq!(seconds, [59.990, 59.999, 60.005, 90.0, 120.010]);
        // A timer seen past 59999 wraps at 65536.
        let mut clock = TimerClock::new();
        assert_eq!(clock.seconds(65_000), 65.0);
        assert_eq!(clock.seconds(36), 65.572);
        clock.reset();
        assert_eq!(clock.seconds(7), 0.007);
    }
}
