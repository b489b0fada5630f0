//! Each profile's header: writing the counter and CRC, and verifying a
//! received header. Callers pass a validated [`Config`] and exactly its
//! `data_length` bytes, so every index here is in bounds.

use super::config::{Config, DataIdMode, NibbleLayout, Profile};
use super::crc::{CRC16_CCITT_FALSE, CRC8_H2F, CRC8_SAE_J1850};
use super::plain;

/// Why a frame is corrupt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckError {
    /// The CRC (or checksum) does not match the data.
    Crc,
    /// The payload is shorter than the protected data length.
    Length,
    /// The explicitly sent data ID nibble is not the configured one.
    DataId,
    /// The counter holds a value the profile never sends (15 in profiles
    /// 1 and 11).
    Counter,
}

/// Writes `counter` (and the data ID nibble in `Nibble` mode), then the CRC
/// over the result, into `data`.
pub(super) fn protect(config: &Config, data: &mut [u8], counter: u32) {
    match config.profile {
        Profile::P01 { data_id, mode, layout } | Profile::P11 { data_id, mode, layout } => {
            write_nibble(data, layout.counter_offset, counter as u8);
            if mode == DataIdMode::Nibble {
                write_nibble(data, layout.data_id_nibble_offset, (data_id >> 8) as u8);
            }
            data[usize::from(layout.crc_offset / 8)] = nibble_crc(data, data_id, mode, layout, counter as u8);
        }
        Profile::P02 { data_ids } => {
            data[1] = (data[1] & 0xF0) | counter as u8;
            data[0] = p02_crc(data, &data_ids, counter as u8);
        }
        Profile::P05 { data_id, offset } => {
            let at = usize::from(offset / 8);
            data[at + 2] = counter as u8;
            let crc = p05_crc(data, data_id, at);
            data[at..at + 2].copy_from_slice(&crc.to_le_bytes());
        }
        Profile::Plain {
            counter: signal,
            checksum,
        } => plain::protect(signal, checksum, data, counter),
    }
}

/// The counter of a received header whose CRC (and explicit data ID
/// nibble) is right (`None` for plain protection without a counter), or
/// what is wrong with it.
pub(super) fn verify(config: &Config, data: &[u8]) -> Result<Option<u32>, CheckError> {
    match config.profile {
        Profile::P01 { data_id, mode, layout } | Profile::P11 { data_id, mode, layout } => {
            let counter = read_nibble(data, layout.counter_offset);
            if counter > 14 {
                return Err(CheckError::Counter);
            }
            if mode == DataIdMode::Nibble
                && read_nibble(data, layout.data_id_nibble_offset) != (data_id >> 8) as u8 & 0x0F
            {
                return Err(CheckError::DataId);
            }
            let crc = nibble_crc(data, data_id, mode, layout, counter);
            (data[usize::from(layout.crc_offset / 8)] == crc)
                .then_some(Some(counter.into()))
                .ok_or(CheckError::Crc)
        }
        Profile::P02 { data_ids } => {
            let counter = data[1] & 0x0F;
            (data[0] == p02_crc(data, &data_ids, counter))
                .then_some(Some(counter.into()))
                .ok_or(CheckError::Crc)
        }
        Profile::P05 { data_id, offset } => {
            let at = usize::from(offset / 8);
            let sent = u16::from_le_bytes([data[at], data[at + 1]]);
            (sent == p05_crc(data, data_id, at))
                .then_some(Some(data[at + 2].into()))
                .ok_or(CheckError::Crc)
        }
        Profile::Plain { counter, checksum } => plain::verify(counter, checksum, data),
    }
}

/// Profiles 1 and 11: CRC-8 SAE J1850 run from register 0x00 without the
/// final XOR, over the data ID bytes the mode selects, then every data
/// byte but the CRC's.
fn nibble_crc(data: &[u8], data_id: u16, mode: DataIdMode, layout: NibbleLayout, counter: u8) -> u8 {
    let [low, high] = data_id.to_le_bytes();
    let ids: &[u8] = match mode {
        DataIdMode::Both => &[low, high],
        DataIdMode::Alt if counter.is_multiple_of(2) => &[low],
        DataIdMode::Alt => &[high],
        DataIdMode::Low => &[low],
        DataIdMode::Nibble => &[low, 0],
    };
    let at = usize::from(layout.crc_offset / 8);
    let reg = CRC8_SAE_J1850.update(0x00, ids);
    let reg = CRC8_SAE_J1850.update(reg, &data[..at]);
    CRC8_SAE_J1850.update(reg, &data[at + 1..])
}

/// Profile 2: CRC-8H2F over bytes 1.. and the counter's data ID.
fn p02_crc(data: &[u8], data_ids: &[u8; 16], counter: u8) -> u8 {
    let reg = CRC8_H2F.update(CRC8_H2F.init(), &data[1..]);
    CRC8_H2F.update(reg, &[data_ids[usize::from(counter & 0x0F)]]) ^ CRC8_H2F.xorout()
}

/// Profile 5: CRC-16 CCITT-FALSE over every byte but the CRC's two at
/// `at`, then the data ID, low byte first.
fn p05_crc(data: &[u8], data_id: u16, at: usize) -> u16 {
    let reg = CRC16_CCITT_FALSE.update(CRC16_CCITT_FALSE.init(), &data[..at]);
    let reg = CRC16_CCITT_FALSE.update(reg, &data[at + 2..]);
    CRC16_CCITT_FALSE.update(reg, &data_id.to_le_bytes())
}

/// The nibble at bit `offset` (a multiple of 4).
fn read_nibble(data: &[u8], offset: u16) -> u8 {
    data[usize::from(offset / 8)] >> (offset % 8) & 0x0F
}

/// Writes the low nibble of `value` at bit `offset` (a multiple of 4).
fn write_nibble(data: &mut [u8], offset: u16, value: u8) {
    let shift = offset % 8;
    let byte = &mut data[usize::from(offset / 8)];
    *byte = (*byte & !(0x0F << shift)) | ((value & 0x0F) << shift);
}
