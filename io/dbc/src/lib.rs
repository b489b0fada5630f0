//! The DBC signal database: which messages a bus carries, and where each
//! signal sits in a message's payload.
//!
//! [`Dbc::load`] reads a DBC file with the `can-dbc` parser, converts it to
//! the types below and checks it (see [`DbcError`] for what is rejected).
//! [`Signal::decode`] and [`Signal::encode`] translate between a payload and
//! physical values without allocating, so the I/O threads use them per
//! frame. Bit numbering follows the DBC convention as cantools reads it:
//! an Intel (`@1`) signal's start bit is its least significant bit, counted
//! upwards from bit 0 of byte 0; a Motorola (`@0`) signal's start bit is its
//! most significant bit, in the "sawtooth" numbering where bit 7 of byte 0 is
//! followed by bit 15 of byte 1 (start 7, size 16 is bytes 0 and 1,
//! big-endian).
//!
//! This crate depends on `tandem-can` alone of Tandem's crates (for
//! [`CanId`] and the frame lengths): it must not depend on transports,
//! logs, E2E or models. E2E protection (`tandem-e2e`) builds on its
//! [`BitField`] and [`ByteOrder`].
//!
//! ```
//! use tandem_dbc::Dbc;
//!
//! let text = "VERSION \"\"\n\nBS_:\n\nBU_: ECU\n\nBO_ 256 Speed: 8 ECU\n SG_ kph : 0|16@1+ (0.01,0) [0|655.35] \"km/h\" ECU\n";
//! let dbc = Dbc::parse(text, "speed.dbc")?;
//! let kph = dbc.message("Speed").and_then(|m| m.signal("kph")).expect("kph");
//! let mut payload = [0; 8];
//! kph.encode(12.5, &mut payload);
//! assert_eq!(payload[..2], [0xE2, 0x04]);
//! assert!((kph.decode(&payload) - 12.5).abs() < 1e-9);
//! # Ok::<(), tandem_dbc::DbcError>(())
//! ```

mod codec;
mod error;
mod load;
mod source;
mod statement;
mod syntax;
mod validate;

use std::time::Duration;

pub use codec::BitField;
pub use error::DbcError;

use tandem_can::frame::CanId;

/// A DBC file's messages, checked and ready to decode and encode payloads.
#[derive(Clone, Debug, PartialEq)]
pub struct Dbc {
    messages: Vec<Message>,
}

impl Dbc {
    /// All messages, in file order.
    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// The message called `name`.
    pub fn message(&self, name: &str) -> Option<&Message> {
        self.messages.iter().find(|m| m.name == name)
    }

    /// The message with identifier `id` (a standard and an extended
    /// identifier with the same number are different messages).
    pub fn message_by_id(&self, id: CanId) -> Option<&Message> {
        self.messages.iter().find(|m| m.id == id)
    }
}

/// One message (`BO_`): a frame layout and the signals it carries.
#[derive(Clone, Debug, PartialEq)]
pub struct Message {
    /// Its name.
    pub name: String,
    /// Its identifier; extended when the DBC id has bit 31 set.
    pub id: CanId,
    /// Payload length in bytes: 0 to 8, or a CAN FD length up to 64.
    pub len: usize,
    /// How often it is sent: the `GenMsgCycleTime` attribute (ms) of the
    /// message, else its `BA_DEF_DEF_` default; `None` when neither is above 0.
    pub cycle_time: Option<Duration>,
    /// The node that sends it; empty when the DBC names none (`Vector__XXX`).
    pub sender: String,
    /// Its signals, in file order.
    pub signals: Vec<Signal>,
}

impl Message {
    /// The signal called `name`.
    pub fn signal(&self, name: &str) -> Option<&Signal> {
        self.signals.iter().find(|s| s.name == name)
    }
}

/// How a signal's bytes are ordered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    /// Little-endian (`@1`): the start bit is the least significant bit.
    Intel,
    /// Big-endian (`@0`): the start bit is the most significant bit.
    Motorola,
}

/// How a signal's raw bits are read as a number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueType {
    /// An unsigned integer (`+`).
    Unsigned,
    /// A two's-complement integer (`-`).
    Signed,
    /// An IEEE 754 single (`SIG_VALTYPE_ ... : 1`), 32 bits.
    Float32,
    /// An IEEE 754 double (`SIG_VALTYPE_ ... : 2`), 64 bits.
    Float64,
}

/// A signal's role in a multiplexed message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Multiplex {
    /// Always present.
    Plain,
    /// The selector (`M`): its raw value says which multiplexed signals the
    /// payload carries.
    Multiplexor,
    /// Present when the multiplexor's raw value equals this one (`m3`).
    Multiplexed(u64),
}

/// One signal (`SG_`): where it sits in the payload and how its raw value
/// maps to a physical one.
#[derive(Clone, Debug, PartialEq)]
pub struct Signal {
    /// Its name.
    pub name: String,
    /// The DBC start bit (see the module documentation for the numbering).
    pub start_bit: u32,
    /// Size in bits, 1 to 64.
    pub size: u32,
    /// Intel or Motorola.
    pub byte_order: ByteOrder,
    /// How the raw bits are read.
    pub value_type: ValueType,
    /// Physical value = raw × factor + offset.
    pub factor: f64,
    /// Physical value = raw × factor + offset.
    pub offset: f64,
    /// Lowest physical value; [`Signal::encode`] clamps to `[min, max]`
    /// when `min < max`.
    pub min: f64,
    /// Highest physical value.
    pub max: f64,
    /// Unit of the physical value.
    pub unit: String,
    /// Plain, multiplexor or multiplexed.
    pub multiplex: Multiplex,
    /// Names of raw values (`VAL_`), by raw value.
    pub value_table: Vec<(i64, String)>,
}

impl Signal {
    /// The name the DBC gives the raw value `raw` (`VAL_`), if any.
    pub fn value_name(&self, raw: i64) -> Option<&str> {
        self.value_table
            .iter()
            .find(|(r, _)| *r == raw)
            .map(|(_, name)| name.as_str())
    }
}
