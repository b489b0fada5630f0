//! A message's `e2e` table resolved against its DBC message: the signals it
//! names become the bit offsets and fields of a [`tandem_e2e::Config`],
//! which is then checked against its profile's bounds.

use tandem_config::{ConfigError, E2eConfig, E2eScheme, FieldPlace, Located, RunConfig};
use tandem_dbc::{ByteOrder, Message, Signal};
use tandem_e2e::{CheckStatus, ChecksumSignal, Config, CounterSignal, NibbleLayout, Profile, Protector};

use crate::lookup::signal_index;

/// A check status as the model's status input receives it: AUTOSAR's
/// `E2E_P0xCheckStatusType` numbers (OK 0x00, NONEWDATA 0x01, ERROR 0x07,
/// REPEATED 0x08, OKSOMELOST 0x20, WRONGSEQUENCE 0x40).
pub fn status_code(status: CheckStatus) -> f64 {
    match status {
        CheckStatus::Ok => 0.0,
        CheckStatus::NoNewData => 1.0,
        CheckStatus::Error(_) => 7.0,
        CheckStatus::Repeated => 8.0,
        CheckStatus::OkSomeLost { .. } => 32.0,
        CheckStatus::WrongSequence => 64.0,
    }
}

/// Whether a receiver uses the signals of a frame with `status`.
pub fn accepted(status: CheckStatus) -> bool {
    matches!(status, CheckStatus::Ok | CheckStatus::OkSomeLost { .. })
}

/// The protection `e2e` describes for DBC message `m`, checked.
pub fn resolve(config: &RunConfig, e2e: &E2eConfig, m: &Message) -> Result<Config, ConfigError> {
    let profile = match e2e.scheme.value {
        E2eScheme::P01(mode) | E2eScheme::P11(mode) => {
            let layout = nibble_layout(config, e2e, m)?;
            if matches!(e2e.scheme.value, E2eScheme::P01(_)) {
                Profile::P01 {
                    data_id: e2e.data_id,
                    mode,
                    layout,
                }
            } else {
                Profile::P11 {
                    data_id: e2e.data_id,
                    mode,
                    layout,
                }
            }
        }
        E2eScheme::P02 => Profile::P02 { data_ids: e2e.data_ids },
        E2eScheme::P05 => {
            let offset = match &e2e.crc {
                Some(crc) => offset(config, crc, m, 16)?,
                None => 0,
            };
            if let Some(counter) = &e2e.counter {
                let at = self::offset(config, counter, m, 8)?;
                if at != offset + 16 {
                    return Err(config.error_at(
                        counter,
                        format!(
                            "profile 5's counter is the byte after its CRC (bit {}), found bit {at}; move it or \
                             remove `counter`",
                            offset + 16
                        ),
                    ));
                }
            }
            Profile::P05 {
                data_id: e2e.data_id,
                offset,
            }
        }
        E2eScheme::Plain => plain(config, e2e, m)?,
    };
    let resolved = Config {
        profile,
        data_length: m.len,
        max_delta_counter: e2e.max_delta_counter,
    };
    Protector::new(resolved).map_err(|e| config.error_at(&e2e.scheme, format!("message {}: {e}", m.name)))?;
    Ok(resolved)
}

/// Profiles 1 and 11: the default layout with each field given moved.
fn nibble_layout(config: &RunConfig, e2e: &E2eConfig, m: &Message) -> Result<NibbleLayout, ConfigError> {
    let mut layout = NibbleLayout::DEFAULT;
    if let Some(crc) = &e2e.crc {
        layout.crc_offset = offset(config, crc, m, 8)?;
    }
    if let Some(counter) = &e2e.counter {
        layout.counter_offset = offset(config, counter, m, 4)?;
    }
    if let Some(nibble) = &e2e.data_id_nibble {
        layout.data_id_nibble_offset = offset(config, nibble, m, 4)?;
    }
    Ok(layout)
}

/// Plain protection: the counter and checksum signals.
fn plain(config: &RunConfig, e2e: &E2eConfig, m: &Message) -> Result<Profile, ConfigError> {
    let counter = match &e2e.counter {
        None => None,
        Some(place) => {
            let s = signal(config, place, m, "a plain counter")?;
            if !(1..=16).contains(&s.size) {
                return Err(config.error_at(
                    place,
                    format!("counter signal {} is {} bits; a counter has 1 to 16", s.name, s.size),
                ));
            }
            Some(CounterSignal {
                start_bit: s.start_bit,
                bits: s.size,
                byte_order: s.byte_order,
                max: (1 << s.size) - 1,
            })
        }
    };
    let checksum = match &e2e.crc {
        None => None,
        Some(place) => {
            let s = signal(config, place, m, "a plain checksum")?;
            let width = e2e.checksum.width();
            if s.size as usize != width * 8 {
                return Err(config.error_at(
                    place,
                    format!(
                        "checksum signal {} is {} bits, but the checksum is {} bits; pick a checksum of its size or \
                         another signal",
                        s.name,
                        s.size,
                        width * 8
                    ),
                ));
            }
            let lowest = lowest_bit(s);
            if !lowest.is_multiple_of(8) {
                return Err(config.error_at(
                    place,
                    format!("checksum signal {} does not start on a byte boundary", s.name),
                ));
            }
            let at = (lowest / 8) as usize;
            let (start, end) = match &e2e.checksum_bytes {
                Some(range) => range.value,
                None if at == 0 => (width, m.len),
                None => (0, at),
            };
            Some(ChecksumSignal {
                kind: e2e.checksum,
                start,
                end,
                at,
                byte_order: s.byte_order,
            })
        }
    };
    if counter.is_none() && checksum.is_none() {
        return Err(config.error_at(
            &e2e.scheme,
            "plain protection needs a `counter` or a `crc` signal (or both)".into(),
        ));
    }
    Ok(Profile::Plain { counter, checksum })
}

/// The lowest bit (bit 8 being bit 0 of byte 1) of the field at `place`,
/// which must be `bits` wide when it is a signal.
fn offset(config: &RunConfig, place: &Located<FieldPlace>, m: &Message, bits: u32) -> Result<u16, ConfigError> {
    match &place.value {
        FieldPlace::Bit(b) => Ok(*b as u16),
        FieldPlace::Signal(_) => {
            let s = signal(config, place, m, "this field")?;
            if s.size != bits {
                return Err(config.error_at(
                    place,
                    format!("signal {} is {} bits; this field is {bits}", s.name, s.size),
                ));
            }
            if bits > 8 && s.byte_order == ByteOrder::Motorola {
                return Err(config.error_at(
                    place,
                    format!(
                        "signal {} is big endian (Motorola); the profile's CRC is little endian",
                        s.name
                    ),
                ));
            }
            Ok(lowest_bit(s) as u16)
        }
    }
}

/// The DBC signal `place` names.
fn signal<'m>(
    config: &RunConfig,
    place: &Located<FieldPlace>,
    m: &'m Message,
    what: &str,
) -> Result<&'m Signal, ConfigError> {
    match &place.value {
        FieldPlace::Signal(name) => {
            let name = place.clone().map(|_| name.clone());
            Ok(&m.signals[signal_index(config, m, &name)?])
        }
        FieldPlace::Bit(_) => Err(config.error_at(
            place,
            format!("{what} needs a DBC signal (its size and byte order), not a bit offset"),
        )),
    }
}

/// The lowest payload bit a signal occupies.
fn lowest_bit(s: &Signal) -> u32 {
    (0..s.size)
        .map(|i| {
            let (byte, bit) = s.bit_position(i);
            byte as u32 * 8 + bit
        })
        .min()
        .unwrap_or(s.start_bit)
}
