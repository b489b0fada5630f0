//! Serial devices that are not CAN adapters: sensors, rigs and emulators
//! that exchange model port values as text lines.
//!
//! # The line protocol
//!
//! One record per line. A line ends with `\n` or `\r\n`; Tandem sends `\n`.
//!
//! ```text
//! # wheel speed sensor, 100 Hz
//! t=12.345 spd=1.25 pos[1]=-3e-4, valve=1
//! spd=1.5,pos[1]=0   # no timestamp: the value applies when it arrives
//! ```
//!
//! - **Fields** are `name=value`, separated by any mix of spaces, tabs and
//!   commas. A line with no field (blank, or only a comment) carries nothing.
//! - **Names** are model port names as Tandem writes them (`speed`,
//!   `pos[1]`, `plant/x[2]`): one or more characters other than space, tab,
//!   `,`, `=`, `#` and control characters. A name appears at most once per
//!   line. The name `t` is reserved.
//! - **Values** are decimal numbers: an optional sign, digits with an
//!   optional `.` and fraction, an optional exponent (`1.5`, `-2`, `.5`,
//!   `3e-4`, `1E6`), or `inf`, `-inf`, `nan` (in any case). Tandem writes the
//!   shortest text that reads back as the same 64-bit float: plain or
//!   exponent form, whichever is shorter (`0.1`, `1e-7`, `1234.5`, `1e300`).
//! - **`t=<seconds>`**, optional and anywhere in the line, is the sender's
//!   time of the record, a finite number of seconds on its own clock.
//! - **`#`** starts a comment that runs to the end of the line.
//!
//! A line that breaks these rules is rejected whole, with the column (in
//! characters, from 1) of the field at fault and the problem, e.g.
//! `column 12: "spd=1.2.3" is not a number`.
//!
//! # The transport
//!
//! [`open_lines`] opens a serial port for the protocol: a [`LineReceiver`]
//! giving each line (without its ending) and a [`LineSender`] writing them.
//! A port that vanishes is reopened with back-off as
//! [`crate::serial_port`] describes; both halves report
//! [`BusError::Disconnected`] meanwhile. A line longer than
//! [`LineOptions::max_line`] or not UTF-8 is skipped and reported as
//! [`BusError::Malformed`].

use std::fmt::{self, Write as _};
use std::io;
use std::time::Duration;

use crate::serial_port::{self, deadline_after, Backoff, Link, PortConfig, PortStatus, ReadFail, SerialOpenError};
use tandem_can::transport::BusError;

/// A line that breaks the protocol: where and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("column {column}: \"{field}\" {problem}")]
pub struct LineError {
    /// The column, in characters from 1, where the field at fault starts.
    pub column: usize,
    /// The field at fault.
    pub field: String,
    /// What is wrong with it.
    pub problem: LineProblem,
}

/// What is wrong with a field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineProblem {
    /// It has no `=`.
    NotNameValue,
    /// Nothing before the `=`.
    NoName,
    /// Nothing after the `=`.
    NoValue,
    /// The name has a control character.
    BadName,
    /// The value is not a number.
    NotANumber,
    /// `t` is not a finite number.
    BadTime,
    /// The name was given earlier in the line, at this column.
    Repeated(usize),
}

impl fmt::Display for LineProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LineProblem::NotNameValue => f.write_str("is not name=value"),
            LineProblem::NoName => f.write_str("has no name before \"=\""),
            LineProblem::NoValue => f.write_str("has no value after \"=\""),
            LineProblem::BadName => f.write_str("has a control character in its name"),
            LineProblem::NotANumber => f.write_str("is not a number"),
            LineProblem::BadTime => f.write_str("is not a finite time in seconds"),
            LineProblem::Repeated(first) => write!(f, "repeats the name given at column {first}"),
        }
    }
}

/// The separators between fields.
fn is_separator(c: char) -> bool {
    matches!(c, ' ' | '\t' | ',')
}

/// The line without its ending and comment.
fn content(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    let line = line.strip_suffix('\r').unwrap_or(line);
    line.split('#').next().unwrap_or("")
}

/// The fields of a line's content: (column, text), columns in characters
/// from 1.
#[derive(Clone)]
struct Tokens<'a> {
    rest: &'a str,
    column: usize,
}

impl<'a> Iterator for Tokens<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.rest.find(|c| !is_separator(c))?;
        // Separators are one byte each: the byte count is the char count.
        self.column += start;
        self.rest = &self.rest[start..];
        let end = self.rest.find(is_separator).unwrap_or(self.rest.len());
        let (token, rest) = self.rest.split_at(end);
        let column = self.column;
        self.column += token.chars().count();
        self.rest = rest;
        Some((column, token))
    }
}

/// A valid line: its time and its fields.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Record<'a> {
    content: &'a str,
    time: Option<f64>,
    len: usize,
}

impl<'a> Record<'a> {
    /// The `t=` field's value, if the line has one.
    pub fn time(&self) -> Option<f64> {
        self.time
    }

    /// The `name=value` fields but `t`, in line order.
    pub fn fields(&self) -> Fields<'a> {
        Fields {
            tokens: Tokens {
                rest: self.content,
                column: 1,
            },
        }
    }

    /// How many fields but `t` the line has.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the line has no field but `t`.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// The fields of a [`Record`]: (name, value).
#[derive(Clone)]
pub struct Fields<'a> {
    tokens: Tokens<'a>,
}

impl<'a> Iterator for Fields<'a> {
    type Item = (&'a str, f64);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (_, token) = self.tokens.next()?;
            let (name, value) = token.split_once('=')?;
            if name != "t" {
                // The record was checked: the value parses.
                return Some((name, value.parse().unwrap_or(f64::NAN)));
            }
        }
    }
}

/// Parses one line (with or without its ending), without allocating unless
/// it is invalid.
pub fn parse_line(line: &str) -> Result<Record<'_>, LineError> {
    let content = content(line);
    let tokens = Tokens {
        rest: content,
        column: 1,
    };
    let mut time = None;
    let mut len = 0;
    for (column, token) in tokens.clone() {
        let error = |problem| LineError {
            column,
            field: token.to_string(),
            problem,
        };
        let (name, value) = token.split_once('=').ok_or_else(|| error(LineProblem::NotNameValue))?;
        if name.is_empty() {
            return Err(error(LineProblem::NoName));
        }
        if name.chars().any(char::is_control) {
            return Err(error(LineProblem::BadName));
        }
        if value.is_empty() {
            return Err(error(LineProblem::NoValue));
        }
        let number: f64 = value.parse().map_err(|_| error(LineProblem::NotANumber))?;
        let earlier = tokens.clone().take_while(|&(c, _)| c < column);
        if let Some((first, _)) = earlier
            .into_iter()
            .find(|(_, t)| t.split_once('=').map(|(n, _)| n) == Some(name))
        {
            return Err(error(LineProblem::Repeated(first)));
        }
        if name == "t" {
            if !number.is_finite() {
                return Err(error(LineProblem::BadTime));
            }
            time = Some(number);
        } else {
            len += 1;
        }
    }
    Ok(Record { content, time, len })
}

/// A name [`format_line`] cannot write.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("\"{name}\" cannot be a field name: {problem}")]
pub struct NameError {
    /// The name.
    pub name: String,
    /// Why not.
    pub problem: &'static str,
}

/// Appends one line (without ending) to `out`: `t=<time>` first if given,
/// then each `name=value`, separated by single spaces, each value in its
/// shortest round-trip form. Names must be distinct; on an invalid name
/// `out` is left as it was.
pub fn format_line<'n>(
    out: &mut String,
    time: Option<f64>,
    fields: impl IntoIterator<Item = (&'n str, f64)>,
) -> Result<(), NameError> {
    let start = out.len();
    if let Some(t) = time {
        out.push_str("t=");
        push_number(out, t);
    }
    for (name, value) in fields {
        let problem = if name.is_empty() {
            Some("it is empty")
        } else if name == "t" {
            Some("\"t\" is the time field")
        } else if name
            .chars()
            .any(|c| is_separator(c) || c == '=' || c == '#' || c.is_control())
        {
            Some("it has a space, tab, \",\", \"=\", \"#\" or control character")
        } else {
            None
        };
        if let Some(problem) = problem {
            out.truncate(start);
            return Err(NameError {
                name: name.to_string(),
                problem,
            });
        }
        if out.len() > start {
            out.push(' ');
        }
        out.push_str(name);
        out.push('=');
        push_number(out, value);
    }
    Ok(())
}

/// A small stack buffer for formatting one number.
struct Digits {
    buf: [u8; 32],
    len: usize,
}

impl fmt::Write for Digits {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl Digits {
    fn new() -> Self {
        Digits { buf: [0; 32], len: 0 }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).unwrap_or("nan")
    }
}

/// Appends `value` in the shortest form that reads back as the same float:
/// Rust's plain or exponent form (both shortest round-trip), the shorter.
pub fn push_number(out: &mut String, value: f64) {
    let mut plain = Digits::new();
    let mut exp = Digits::new();
    // The exponent form is at most 24 characters ("-1.2345678901234567e-308");
    // a plain form that does not fit 32 is longer.
    let plain_fits = write!(plain, "{value}").is_ok();
    let _ = write!(exp, "{value:e}");
    if plain_fits && plain.len <= exp.len {
        out.push_str(plain.as_str());
    } else {
        out.push_str(exp.as_str());
    }
}

/// How to open a serial port for the line protocol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineOptions {
    /// The serial line's baud rate.
    pub baud: u32,
    /// The longest line received, its ending included; a longer one is
    /// skipped.
    pub max_line: usize,
    /// The longest a send waits for room in the port.
    pub write_timeout: Duration,
    /// How often a vanished port is reopened.
    pub backoff: Backoff,
}

impl Default for LineOptions {
    /// 115200 baud, lines up to 4096 bytes, 5 ms write timeout.
    fn default() -> Self {
        LineOptions {
            baud: 115_200,
            max_line: 4096,
            write_timeout: Duration::from_millis(5),
            backoff: Backoff::default(),
        }
    }
}

/// Opens the serial port at `path` for the line protocol, at `baud`.
pub fn open_lines(path: &str, baud: u32) -> Result<(LineReceiver, LineSender), SerialOpenError> {
    open_lines_with(
        path,
        &LineOptions {
            baud,
            ..LineOptions::default()
        },
    )
}

/// As [`open_lines`], with every option.
pub fn open_lines_with(path: &str, options: &LineOptions) -> Result<(LineReceiver, LineSender), SerialOpenError> {
    if options.max_line < 2 {
        return Err(SerialOpenError::Unsupported("max_line must be at least 2 bytes".into()));
    }
    let (rx, tx, _) = serial_port::open(PortConfig {
        path: path.to_string(),
        baud: options.baud,
        hello: Vec::new(),
        goodbye: Vec::new(),
        write_timeout: options.write_timeout,
        backoff: options.backoff,
    })?;
    Ok((
        LineReceiver {
            link: rx,
            buf: vec![0; options.max_line].into_boxed_slice(),
            start: 0,
            end: 0,
            skipping: false,
            generation: u64::MAX,
        },
        LineSender {
            link: tx,
            buf: Vec::with_capacity(256),
            broken_line: None,
        },
    ))
}

/// The receiving half of a line-protocol port.
pub struct LineReceiver {
    link: Link,
    buf: Box<[u8]>,
    /// Unread bytes are `buf[start..end]`.
    start: usize,
    end: usize,
    /// A line too long for the buffer is being skipped.
    skipping: bool,
    /// The port generation the buffered bytes came from.
    generation: u64,
}

impl LineReceiver {
    /// The next line, without its ending (`\n` or `\r\n`), waiting at most
    /// `timeout`; `Ok(None)` when none came. Blank and comment lines are
    /// given too ([`parse_line`] finds no field in them).
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<&str>, BusError> {
        let deadline = deadline_after(timeout);
        let (from, to) = loop {
            if let Some(i) = self.buf[self.start..self.end].iter().position(|&b| b == b'\n') {
                let (from, newline) = (self.start, self.start + i);
                self.start = newline + 1;
                if self.skipping {
                    self.skipping = false;
                    return Err(BusError::Malformed(format!(
                        "line longer than {} bytes skipped",
                        self.buf.len()
                    )));
                }
                let to = if newline > from && self.buf[newline - 1] == b'\r' {
                    newline - 1
                } else {
                    newline
                };
                break (from, to);
            }
            if self.start > 0 {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.end == self.buf.len() {
                self.skipping = true;
                self.end = 0;
            }
            match self.link.read(&mut self.buf[self.end..], deadline) {
                Ok(n) => {
                    if self.link.generation() != self.generation {
                        // A new connection: a partial line before it is gone.
                        self.generation = self.link.generation();
                        let fresh = self.end..self.end + n;
                        self.buf.copy_within(fresh, 0);
                        self.start = 0;
                        self.end = n;
                        self.skipping = false;
                    } else {
                        self.end += n;
                    }
                }
                Err(ReadFail::TimedOut) => return Ok(None),
                Err(ReadFail::Disconnected(why)) => {
                    self.start = 0;
                    self.end = 0;
                    self.skipping = false;
                    return Err(BusError::Disconnected(why));
                }
            }
        };
        match std::str::from_utf8(&self.buf[from..to]) {
            Ok(line) => Ok(Some(line)),
            Err(e) => Err(BusError::Malformed(format!(
                "line is not UTF-8 (byte {}): {:?}",
                e.valid_up_to() + 1,
                String::from_utf8_lossy(&self.buf[from..to])
            ))),
        }
    }

    /// The port's state and reconnection count.
    pub fn status(&self) -> PortStatus {
        self.link.status()
    }
}

/// The sending half of a line-protocol port.
pub struct LineSender {
    link: Link,
    buf: Vec<u8>,
    /// The port generation on which a line was cut short by a full port: the
    /// next line on it starts with `\n` to end it.
    broken_line: Option<u64>,
}

impl LineSender {
    /// Sends `line` and a `\n`, waiting at most the write timeout for room
    /// ([`BusError::TxQueueFull`] then). A line with a `\n` or `\r` in it is
    /// refused (as [`BusError::Io`] of kind `InvalidInput`).
    pub fn send_line(&mut self, line: &str) -> Result<(), BusError> {
        if line.contains(['\n', '\r']) {
            return Err(BusError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a line to send cannot contain \\n or \\r",
            )));
        }
        self.buf.clear();
        if self.broken_line == Some(self.link.generation()) {
            self.buf.push(b'\n');
        }
        self.buf.extend_from_slice(line.as_bytes());
        self.buf.push(b'\n');
        self.link.write_line(&self.buf, &mut self.broken_line)
    }

    /// The port's state and reconnection count.
    pub fn status(&self) -> PortStatus {
        self.link.status()
    }
}
