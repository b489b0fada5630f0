//! The `e2e` table of a sent or received message: which end-to-end
//! protection it carries. The signals it names are resolved against the
//! DBC when the run is bound; here the profile, its data IDs and bounds
//! are checked.

use tandem_e2e::{Checksum, DataIdMode};

use crate::error::Located;

/// Which protection a message carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum E2eScheme {
    /// AUTOSAR E2E profile 1 (`"1A"`: both data ID bytes, `"1C"`: the
    /// nibble mode; `"1"` with `data_id_mode`).
    P01(DataIdMode),
    /// AUTOSAR E2E profile 2.
    P02,
    /// AUTOSAR E2E profile 5.
    P05,
    /// AUTOSAR E2E profile 11 (`both` or `nibble` data ID mode).
    P11(DataIdMode),
    /// A plain rolling counter and checksum.
    Plain,
}

/// Where a protection field sits: a DBC signal of the message, or a bit
/// offset from bit 0 of byte 0.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldPlace {
    /// The DBC signal of that name.
    Signal(String),
    /// The field's lowest bit.
    Bit(u32),
}

/// A message's end-to-end protection, as configured.
#[derive(Clone, Debug, PartialEq)]
pub struct E2eConfig {
    /// The profile (`profile` key), with its place: errors about the whole
    /// table are reported there.
    pub scheme: Located<E2eScheme>,
    /// The 16-bit data ID (profiles 1, 5 and 11).
    pub data_id: u16,
    /// Profile 2's data ID for each counter value.
    pub data_ids: [u8; 16],
    /// Where the CRC (profiles) or checksum (plain) sits.
    pub crc: Option<Located<FieldPlace>>,
    /// Where the counter sits.
    pub counter: Option<Located<FieldPlace>>,
    /// Where profile 1C's data ID nibble sits.
    pub data_id_nibble: Option<Located<FieldPlace>>,
    /// Plain protection: which checksum.
    pub checksum: Checksum,
    /// Plain protection: the bytes summed, `start..end`; `None`: every
    /// byte after the checksum, or before it when it ends the message.
    pub checksum_bytes: Option<Located<(usize, usize)>>,
    /// The largest counter step a receiver accepts as lost frames.
    pub max_delta_counter: u8,
    /// A received message's status input: the model input that receives
    /// each frame's check status.
    pub status: Option<Located<String>>,
}
