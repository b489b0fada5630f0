//! SLCAN adapters: CAN through a serial port speaking the Lawicel ASCII
//! protocol (CANable, CANUSB, USBtin and their clones; python-can's `slcan`
//! interface speaks it too).
//!
//! [`open`] opens the port and sends the open sequence `C\r` (close),
//! `Sn\r` (bit rate), `Z0\r`/`Z1\r` (timestamps off/on) and `O\r` (open;
//! `L\r` for listen-only). Received lines are parsed by [`codec`]: frames
//! become [`Received`], with the adapter's timestamp (if on) unwrapped into
//! seconds as `source_time`; a line that is not SLCAN is skipped up to its
//! `\r` and reported as [`BusError::Malformed`]; a BELL answering a command
//! is [`BusError::Bus`] (one answering `C` or `Z0` in the open sequence is
//! ignored: adapters answer so when already closed or without timestamps).
//!
//! Sending writes one line, waiting at most [`SlcanOptions::write_timeout`]
//! for room: a port that cannot take it is [`BusError::TxQueueFull`]. A port
//! that vanishes is reopened with back-off as [`crate::serial_port`]
//! describes, the open sequence sent again, and both halves report
//! [`BusError::Disconnected`] meanwhile.

pub mod codec;

use std::time::Duration;

use crate::serial_port::{self, deadline_after, Backoff, Link, PortConfig, PortStatus, ReadFail, SerialOpenError};
use codec::{Bitrate, Command, Decoder, Line, TimerClock, MAX_LINE};
use tandem_can::frame::CanFrame;
use tandem_can::transport::{BusError, CanReceiver, CanSender, Duplex, Received};

/// How to open an SLCAN adapter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlcanOptions {
    /// The CAN bit rate in bit/s: 10000, 20000, 50000, 100000, 125000,
    /// 250000, 500000, 750000 or 800000 (`S7`), 1000000.
    pub bitrate: u32,
    /// The serial line's baud rate (USB adapters ignore it).
    pub serial_baud: u32,
    /// Ask the adapter for timestamps (`Z1`), reported as `source_time`.
    pub timestamps: bool,
    /// Open listen-only (`L`): no acknowledgements, no transmission.
    pub listen_only: bool,
    /// The longest a send waits for room in the port.
    pub write_timeout: Duration,
    /// How often a vanished port is reopened.
    pub backoff: Backoff,
}

impl Default for SlcanOptions {
    /// 500 kbit/s, 115200 baud, no timestamps, 5 ms write timeout.
    fn default() -> Self {
        SlcanOptions {
            bitrate: 500_000,
            serial_baud: 115_200,
            timestamps: false,
            listen_only: false,
            write_timeout: Duration::from_millis(5),
            backoff: Backoff::default(),
        }
    }
}

/// Opens the SLCAN adapter at `path` (e.g. `/dev/ttyACM0`) and its channel.
pub fn open(path: &str, options: &SlcanOptions) -> Result<Duplex, SerialOpenError> {
    let (rx, tx) = open_halves(path, options)?;
    Ok(Duplex {
        rx: Box::new(rx),
        tx: Box::new(tx),
    })
}

/// As [`open`], with the halves' own types (which give the port's
/// [`PortStatus`]).
pub fn open_halves(path: &str, options: &SlcanOptions) -> Result<(SlcanReceiver, SlcanSender), SerialOpenError> {
    let bitrate = Bitrate::from_bps(options.bitrate).ok_or_else(|| {
        SerialOpenError::Unsupported(format!(
            "SLCAN has no bit rate {} bit/s; use {}",
            options.bitrate,
            Bitrate::VALID
        ))
    })?;
    let open = if options.listen_only {
        Command::ListenOnly
    } else {
        Command::Open
    };
    let sequence = [
        Command::Close,
        Command::Bitrate(bitrate),
        Command::Timestamps(options.timestamps),
        open,
    ];
    // Which answers to report if they are BELL: not the one to `C` (the
    // channel was closed) nor to `Z0` (no timestamps to turn off).
    let must_succeed = sequence.map(|c| !matches!(c, Command::Close | Command::Timestamps(false)));
    let (rx, tx, _) = serial_port::open(PortConfig {
        path: path.to_string(),
        baud: options.serial_baud,
        hello: sequence.iter().flat_map(|c| c.as_bytes()).copied().collect(),
        goodbye: Command::Close.as_bytes().to_vec(),
        write_timeout: options.write_timeout,
        backoff: options.backoff,
    })?;
    Ok((
        SlcanReceiver {
            link: rx,
            buf: [0; 512],
            pos: 0,
            len: 0,
            decoder: Decoder::new(),
            clock: TimerClock::new(),
            generation: u64::MAX,
            sequence,
            must_succeed,
            answers: 0,
        },
        SlcanSender {
            link: tx,
            line: [0; MAX_LINE + 1],
            broken_line: None,
        },
    ))
}

/// The receiving half of an SLCAN adapter.
pub struct SlcanReceiver {
    link: Link,
    buf: [u8; 512],
    pos: usize,
    len: usize,
    decoder: Decoder,
    clock: TimerClock,
    /// The port generation the decoder's state belongs to.
    generation: u64,
    /// The open sequence, and which of its answers must not be BELL.
    sequence: [Command; 4],
    must_succeed: [bool; 4],
    /// How many answers (OK or BELL) came since the port was opened.
    answers: usize,
}

impl SlcanReceiver {
    /// The port's state and reconnection count.
    pub fn status(&self) -> PortStatus {
        self.link.status()
    }

    /// A BELL from the adapter, as an error unless it answers a command of
    /// the open sequence that may fail.
    fn refused(&mut self) -> Option<BusError> {
        let answered = self.answers;
        self.answers += 1;
        match self.sequence.get(answered) {
            Some(_) if !self.must_succeed[answered] => None,
            Some(command) => Some(BusError::Bus(format!(
                "the adapter refused `{}` of its open sequence",
                command.as_str()
            ))),
            None => Some(BusError::Bus(
                "the adapter refused a command (BELL): channel closed, or its transmit buffer full".into(),
            )),
        }
    }
}

impl CanReceiver for SlcanReceiver {
    fn recv(&mut self, timeout: Duration) -> Result<Option<Received>, BusError> {
        let deadline = deadline_after(timeout);
        loop {
            while self.pos < self.len {
                let byte = self.buf[self.pos];
                self.pos += 1;
                match self.decoder.push(byte) {
                    None | Some(Ok(Line::Other(_))) => {}
                    Some(Ok(Line::Frame { frame, timestamp_ms })) => {
                        let source_time = timestamp_ms.map(|ms| self.clock.seconds(ms));
                        return Ok(Some(Received { frame, source_time }));
                    }
                    Some(Ok(Line::Ok)) => self.answers += 1,
                    Some(Ok(Line::Error)) => {
                        if let Some(e) = self.refused() {
                            return Err(e);
                        }
                    }
                    Some(Err(e)) => return Err(BusError::Malformed(e.to_string())),
                }
            }
            match self.link.read(&mut self.buf, deadline) {
                Ok(n) => {
                    if self.link.generation() != self.generation {
                        // A new connection: the adapter starts afresh.
                        self.generation = self.link.generation();
                        self.decoder.reset();
                        self.clock.reset();
                        self.answers = 0;
                    }
                    self.pos = 0;
                    self.len = n;
                }
                Err(ReadFail::TimedOut) => return Ok(None),
                Err(ReadFail::Disconnected(why)) => {
                    self.pos = 0;
                    self.len = 0;
                    return Err(BusError::Disconnected(why));
                }
            }
        }
    }
}

/// The sending half of an SLCAN adapter.
pub struct SlcanSender {
    link: Link,
    /// A `\r` ending a line cut short, then the frame's line.
    line: [u8; MAX_LINE + 1],
    /// The port generation on which a line was cut short by a full port:
    /// the next line on it starts with `\r` to end it.
    broken_line: Option<u64>,
}

impl SlcanSender {
    /// The port's state and reconnection count.
    pub fn status(&self) -> PortStatus {
        self.link.status()
    }
}

impl CanSender for SlcanSender {
    fn send(&mut self, frame: &CanFrame) -> Result<(), BusError> {
        let (end_broken, rest) = self.line.split_at_mut(1);
        let Ok(rest) = <&mut [u8; MAX_LINE]>::try_from(rest) else {
            unreachable!("the line buffer is MAX_LINE + 1 bytes");
        };
        let len = codec::encode_frame(frame, None, rest).len();
        end_broken[0] = b'\r';
        let start = usize::from(self.broken_line != Some(self.link.generation()));
        self.link.write_line(&self.line[start..=len], &mut self.broken_line)
    }
}
