//! The `[[bus.fault]]` tables: frame faults a run injects into what it
//! sends, each in a window of time or for a number of frames.

use crate::error::Located;

/// What a fault does to the frames of its message (or to the bus).
#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    /// The message is not sent.
    Drop,
    /// Each frame of the message is sent this many frames later.
    Delay {
        /// The delay, in frames of the run.
        frames: u64,
    },
    /// Each frame of the message is sent this many times.
    Repeat {
        /// Copies sent, at least 2.
        times: u32,
    },
    /// The E2E counter keeps the value it had when the fault began.
    StuckCounter,
    /// The E2E CRC (or checksum) is sent inverted.
    BadCrc,
    /// The frame is sent with this many bytes instead of the message's.
    WrongLength {
        /// Bytes sent.
        bytes: usize,
    },
    /// A signal is sent with a fixed value instead of its model output.
    Override {
        /// The DBC signal.
        signal: Located<String>,
        /// The value: physical, or the raw integer when `raw`.
        value: f64,
        /// Whether `value` is the raw integer of the signal's bits.
        raw: bool,
    },
    /// Frames of an identifier the bus's DBC does not define are sent
    /// every frame.
    Burst {
        /// The identifier.
        id: u32,
        /// Whether it is a 29-bit identifier.
        extended: bool,
        /// Frames sent per frame of the run.
        per_frame: u32,
    },
    /// The whole node stops sending.
    Stop,
}

impl FaultKind {
    /// Every kind's name, as configured.
    pub const NAMES: [&'static str; 9] = [
        "drop",
        "delay",
        "repeat",
        "stuck_counter",
        "bad_crc",
        "wrong_length",
        "override",
        "burst",
        "stop",
    ];

    /// Its name in configuration files.
    pub fn name(&self) -> &'static str {
        match self {
            FaultKind::Drop => "drop",
            FaultKind::Delay { .. } => "delay",
            FaultKind::Repeat { .. } => "repeat",
            FaultKind::StuckCounter => "stuck_counter",
            FaultKind::BadCrc => "bad_crc",
            FaultKind::WrongLength { .. } => "wrong_length",
            FaultKind::Override { .. } => "override",
            FaultKind::Burst { .. } => "burst",
            FaultKind::Stop => "stop",
        }
    }

    /// Whether the fault acts on one message (the others act on the bus).
    pub fn needs_message(&self) -> bool {
        !matches!(self, FaultKind::Burst { .. } | FaultKind::Stop)
    }
}

/// How long a fault lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultEnd {
    /// For this many frames of the run.
    Frames(u64),
    /// For this many frames of its message (sends of the message it
    /// affects; for bus faults, frames of the run).
    Count(u64),
    /// Until the run ends.
    Never,
}

/// A scheduled fault.
#[derive(Clone, Debug, PartialEq)]
pub struct FaultConfig {
    /// The sent message it affects (`None` for bus faults), with its place.
    pub message: Option<Located<String>>,
    /// What it does, with the place of its `kind` key.
    pub kind: Located<FaultKind>,
    /// The frame it begins at.
    pub start: u64,
    /// How long it lasts.
    pub end: FaultEnd,
}
