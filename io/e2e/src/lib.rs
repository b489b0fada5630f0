//! End-to-end protection of CAN payloads: AUTOSAR E2E profiles 1, 2, 5 and
//! 11, and the plain counter and checksum signals of older platforms.
//!
//! A [`Config`] names the protection of one message; [`Config::validate`]
//! checks it against the profile's bounds and names the field and bound a
//! wrong one breaks. A [`Protector`] writes the counter and CRC into each
//! transmitted payload in place and advances its counter; a [`Checker`]
//! gives each received payload a [`CheckStatus`], and [`ReceiveCounts`]
//! counts them per message. Neither allocates, locks or loops beyond one
//! pass over the protected bytes, so the real-time transmit and receive
//! paths call them per frame.
//!
//! Layouts (bit offsets count from bit 0 of byte 0, bit 8 being bit 0 of
//! byte 1; data IDs enter CRCs low byte first):
//!
//! | profile | CRC | counter | data ID |
//! |---|---|---|---|
//! | 1 | CRC-8 SAE J1850 from register 0x00, no final XOR, over the data ID bytes then every byte but the CRC's; one byte at `crc_offset` (default byte 0) | 4 bits at `counter_offset` (default the low nibble of byte 1), 0–14 | 16 bits: `Both` (1A) low and high byte, `Alt` low byte on even counters and high byte on odd, `Low` low byte, `Nibble` (1C) low byte and a zero byte, the high byte's low nibble sent at `data_id_nibble_offset` (default the high nibble of byte 1) |
//! | 2 | CRC-8H2F over bytes 1.. then the counter's data ID; byte 0 | low nibble of byte 1, 0–15 | a list of 16, one per counter value |
//! | 5 | CRC-16 CCITT-FALSE over every byte but the CRC's two, then the data ID; little endian at `offset` | the byte after the CRC, 0–255 | 16 bits, both bytes |
//! | 11 | as profile 1 | as profile 1 | `Both` or `Nibble`, as profile 1 |
//! | plain | [`Checksum`] of a byte range at a chosen byte | `bits` at a DBC start bit, 0–`max` | none |
//!
//! Every profile's receiver runs the state machine of AUTOSAR profiles 4, 5
//! and 11: a correct frame is [`CheckStatus::Ok`] when its counter is one
//! past the last correct frame's, [`CheckStatus::OkSomeLost`] up to
//! `max_delta_counter` past it, [`CheckStatus::Repeated`] when equal and
//! [`CheckStatus::WrongSequence`] beyond; a corrupt one is
//! [`CheckStatus::Error`]. (Profiles 1 and 2's own state machines, with
//! their synchronisation counters, are not modelled.)
//!
//! This crate depends on `tandem-dbc` alone of Tandem's crates (a plain
//! counter is a DBC bit field): it must not depend on transports, logs or
//! models, so a change here rebuilds neither the logs nor the transports.
//!
//! ```
//! use tandem_e2e::{CheckStatus, Checker, Config, DataIdMode, NibbleLayout, Profile, Protector};
//!
//! let config = Config {
//!     profile: Profile::P01 { data_id: 0x123, mode: DataIdMode::Both, layout: NibbleLayout::DEFAULT },
//!     data_length: 8,
//!     max_delta_counter: 2,
//! };
//! let (mut tx, mut rx) = (Protector::new(config).unwrap(), Checker::new(config).unwrap());
//! let mut payload = [0, 0, 0xAA, 0xBB, 0, 0, 0, 0];
//! tx.protect(&mut payload).unwrap();
//! assert_eq!(rx.check(&payload), CheckStatus::Ok);
//! assert_eq!(rx.check(&payload), CheckStatus::Repeated);
//! payload[3] ^= 1;
//! assert!(matches!(rx.check(&payload), CheckStatus::Error(_)));
//! ```

mod bound;
mod check;
mod config;
pub mod crc;
mod plain;
mod profile;
mod protect;

pub use bound::Bound;
pub use check::{CheckStatus, Checker, ReceiveCounts};
pub use config::{Config, ConfigError, DataIdMode, NibbleLayout, Profile};
pub use plain::{Checksum, ChecksumSignal, CounterSignal};
pub use profile::CheckError;
pub use protect::{Protector, ShortPayload};
