//! What a user configures per message, and its validation.

use super::bound::Bound;
use super::plain::{self, ChecksumSignal, CounterSignal};

/// The protection of one message: which E2E profile (or plain counter and
/// checksum signals) with which data ID(s) and layout, over how many bytes,
/// and how far the receiver lets the counter jump.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// The profile, with its data ID(s) and header layout.
    pub profile: Profile,
    /// Bytes protected, from byte 0 (AUTOSAR's `DataLength` / 8): the
    /// message's length. Payloads may be longer (CAN FD padding); the
    /// bytes beyond are neither protected nor checked.
    pub data_length: usize,
    /// The largest counter step a receiver accepts as "some frames lost"
    /// rather than a wrong sequence: 1 to the counter's range − 1 (255 at
    /// most).
    pub max_delta_counter: u8,
}

/// An E2E profile and its profile-specific settings, or plain signals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    /// Profile 1 (classic CAN): CRC-8 SAE J1850 and a 4-bit counter 0–14.
    P01 {
        /// The 16-bit data ID.
        data_id: u16,
        /// How the data ID enters the CRC: `Both` is variant 1A, `Nibble` 1C.
        mode: DataIdMode,
        /// Where the CRC, counter and data ID nibble sit.
        layout: NibbleLayout,
    },
    /// Profile 2 (classic CAN): CRC-8H2F in byte 0, a 4-bit counter 0–15 in
    /// the low nibble of byte 1, and one data ID per counter value.
    P02 {
        /// The data ID for each counter value.
        data_ids: [u8; 16],
    },
    /// Profile 5 (CAN FD): a 3-byte header of CRC-16 CCITT-FALSE (little
    /// endian) and an 8-bit counter.
    P05 {
        /// The 16-bit data ID.
        data_id: u16,
        /// Bit offset of the header: a multiple of 8.
        offset: u16,
    },
    /// Profile 11 (CAN, CAN FD): profile 1's layout and CRC with profile
    /// 5's receive state machine.
    P11 {
        /// The 16-bit data ID.
        data_id: u16,
        /// How the data ID enters the CRC: `Both` or `Nibble` only.
        mode: DataIdMode,
        /// Where the CRC, counter and data ID nibble sit.
        layout: NibbleLayout,
    },
    /// The counter and checksum signals of platforms that predate E2E.
    Plain {
        /// A rolling counter, if the message has one.
        counter: Option<CounterSignal>,
        /// A checksum, if the message has one.
        checksum: Option<ChecksumSignal>,
    },
}

/// How profiles 1 and 11 include their 16-bit data ID in the CRC (the
/// discriminants are AUTOSAR's `E2E_P01_DATAID_*` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataIdMode {
    /// Both bytes, low first (variant 1A).
    Both = 0,
    /// The low byte when the counter is even, the high byte when it is odd
    /// (profile 1 only).
    Alt = 1,
    /// The low byte only (profile 1 only).
    Low = 2,
    /// The low byte, then a zero byte; the high byte's low nibble is sent
    /// in the payload at the data ID nibble offset (variant 1C). The data
    /// ID's high nibble must be 0.
    Nibble = 3,
}

/// Where profiles 1 and 11 place their fields, in bits from bit 0 of
/// byte 0 (bit 8 is bit 0 of byte 1): AUTOSAR's `CRCOffset`,
/// `CounterOffset` and `DataIDNibbleOffset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NibbleLayout {
    /// The CRC byte: a multiple of 8.
    pub crc_offset: u16,
    /// The counter nibble: a multiple of 4.
    pub counter_offset: u16,
    /// The data ID nibble (used in `Nibble` mode): a multiple of 4.
    pub data_id_nibble_offset: u16,
}

impl NibbleLayout {
    /// AUTOSAR's default layout: the CRC in byte 0, the counter in the low
    /// nibble of byte 1, the data ID nibble in its high nibble.
    pub const DEFAULT: NibbleLayout = NibbleLayout {
        crc_offset: 0,
        counter_offset: 8,
        data_id_nibble_offset: 12,
    };

    /// The default layout moved to start at byte `byte`.
    pub const fn at_byte(byte: u16) -> NibbleLayout {
        NibbleLayout {
            crc_offset: byte * 8,
            counter_offset: byte * 8 + 8,
            data_id_nibble_offset: byte * 8 + 12,
        }
    }
}

impl Default for NibbleLayout {
    fn default() -> Self {
        NibbleLayout::DEFAULT
    }
}

/// A configuration the profile forbids: which field, its value and the
/// bound it broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{scheme}: `{field}` is {value}, but {bound}")]
pub struct ConfigError {
    /// The protection: "E2E profile 1" ... "plain counter and checksum".
    pub scheme: &'static str,
    /// The field, as [`Config`] and [`Profile`] name it.
    pub field: &'static str,
    /// Its value.
    pub value: u64,
    /// The bound it broke.
    pub bound: Bound,
}

impl Config {
    /// The bytes of the payload the CRC (or plain checksum) occupies;
    /// empty for plain protection without a checksum.
    pub fn crc_bytes(&self) -> std::ops::Range<usize> {
        let at = |bits: u16, width: usize| {
            let first = usize::from(bits / 8);
            first..first + width
        };
        match self.profile {
            Profile::P01 { layout, .. } | Profile::P11 { layout, .. } => at(layout.crc_offset, 1),
            Profile::P02 { .. } => 0..1,
            Profile::P05 { offset, .. } => at(offset, 2),
            Profile::Plain { checksum, .. } => checksum.map_or(0..0, |c| c.at..c.at + c.kind.width()),
        }
    }
}

impl Profile {
    /// The profile's name, as errors give it.
    pub fn name(&self) -> &'static str {
        match self {
            Profile::P01 { .. } => "E2E profile 1",
            Profile::P02 { .. } => "E2E profile 2",
            Profile::P05 { .. } => "E2E profile 5",
            Profile::P11 { .. } => "E2E profile 11",
            Profile::Plain { .. } => "plain counter and checksum",
        }
    }

    /// How many counter values the profile cycles through (1 for plain
    /// protection without a counter).
    pub fn counter_modulus(&self) -> u32 {
        match self {
            Profile::P01 { .. } | Profile::P11 { .. } => 15,
            Profile::P02 { .. } => 16,
            Profile::P05 { .. } => 256,
            Profile::Plain { counter, .. } => counter.map_or(1, |c| c.max.saturating_add(1)),
        }
    }

    /// The most bytes the profile protects.
    fn max_data_length(&self) -> (usize, &'static str) {
        match self {
            Profile::P01 { .. } | Profile::P11 { .. } => (30, "the profile protects at most 240 bits"),
            Profile::P02 { .. } => (256, "the profile protects at most 2048 bits"),
            Profile::P05 { .. } => (4096, "the profile protects at most 4096 bytes"),
            Profile::Plain { .. } => (64, "the longest CAN FD payload"),
        }
    }
}

impl Config {
    /// Checks every field against the profile's bounds; a configuration
    /// that passes never makes [`super::Protector`] or [`super::Checker`]
    /// touch bytes outside the first `data_length`.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let scheme = self.profile.name();
        let fail = |field: &'static str, value: u64, bound: Bound| {
            Err(ConfigError {
                scheme,
                field,
                value,
                bound,
            })
        };
        let (max_len, why) = self.profile.max_data_length();
        if self.data_length > max_len {
            return fail(
                "data_length",
                self.data_length as u64,
                Bound::AtMost(max_len as u64, why),
            );
        }
        if let Profile::Plain { counter, checksum } = self.profile {
            // Plain signals are checked first: the counter's range bounds
            // the delta.
            plain::validate(counter, checksum, self.data_length).map_err(|(field, value, bound)| ConfigError {
                scheme,
                field,
                value,
                bound,
            })?;
        }
        let max_delta = self.profile.counter_modulus().saturating_sub(1).clamp(1, 255);
        if self.max_delta_counter == 0 {
            return fail("max_delta_counter", 0, Bound::AtLeast(1));
        }
        if u32::from(self.max_delta_counter) > max_delta {
            return fail(
                "max_delta_counter",
                self.max_delta_counter.into(),
                Bound::AtMost(max_delta.into(), "one less than the counter's range"),
            );
        }
        let bits = self.data_length as u64 * 8;
        match self.profile {
            Profile::P01 { data_id, mode, layout } | Profile::P11 { data_id, mode, layout } => {
                if matches!(self.profile, Profile::P11 { .. }) && matches!(mode, DataIdMode::Alt | DataIdMode::Low) {
                    return fail("mode", mode as u64, Bound::NotInProfile("Both (0) or Nibble (3)"));
                }
                if self.data_length < 2 {
                    return fail("data_length", self.data_length as u64, Bound::AtLeast(2));
                }
                let nibble = mode == DataIdMode::Nibble;
                if nibble && data_id > 0x0FFF {
                    return fail(
                        "data_id",
                        data_id.into(),
                        Bound::AtMost(0x0FFF, "the Nibble mode sends only the low nibble of the high byte"),
                    );
                }
                let last_nibble = "the last nibble of the data";
                let places = [
                    (
                        "crc_offset",
                        layout.crc_offset,
                        8,
                        bits - 8,
                        "the last byte of the data",
                    ),
                    ("counter_offset", layout.counter_offset, 4, bits - 4, last_nibble),
                    (
                        "data_id_nibble_offset",
                        layout.data_id_nibble_offset,
                        4,
                        bits - 4,
                        last_nibble,
                    ),
                ];
                for &(field, offset, step, last, why) in &places[..if nibble { 3 } else { 2 }] {
                    if offset % step != 0 {
                        return fail(field, offset.into(), Bound::MultipleOf(step.into()));
                    }
                    if u64::from(offset) > last {
                        return fail(field, offset.into(), Bound::AtMost(last, why));
                    }
                }
                if layout.counter_offset / 8 == layout.crc_offset / 8 {
                    return fail(
                        "counter_offset",
                        layout.counter_offset.into(),
                        Bound::Overlaps("the CRC"),
                    );
                }
                if nibble && layout.data_id_nibble_offset / 8 == layout.crc_offset / 8 {
                    let offset = layout.data_id_nibble_offset.into();
                    return fail("data_id_nibble_offset", offset, Bound::Overlaps("the CRC"));
                }
                if nibble && layout.data_id_nibble_offset == layout.counter_offset {
                    let offset = layout.data_id_nibble_offset.into();
                    return fail("data_id_nibble_offset", offset, Bound::Overlaps("the counter"));
                }
            }
            Profile::P02 { .. } => {
                if self.data_length < 2 {
                    return fail("data_length", self.data_length as u64, Bound::AtLeast(2));
                }
            }
            Profile::P05 { offset, .. } => {
                if self.data_length < 3 {
                    return fail("data_length", self.data_length as u64, Bound::AtLeast(3));
                }
                if offset % 8 != 0 {
                    return fail("offset", offset.into(), Bound::MultipleOf(8));
                }
                if u64::from(offset) + 24 > bits {
                    let why = "the 3-byte header must end within the data";
                    return fail("offset", offset.into(), Bound::AtMost(bits - 24, why));
                }
            }
            Profile::Plain { .. } => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{CheckStatus, Checksum, ChecksumSignal, CounterSignal};
    use tandem_dbc::ByteOrder;

    fn p01(layout: NibbleLayout, mode: DataIdMode, data_length: usize) -> Config {
        Config {
            profile: Profile::P01 {
                data_id: 0x0123,
                mode,
                layout,
            },
            data_length,
            max_delta_counter: 1,
        }
    }

    /// The field and bound `config` is rejected for.
    fn fault(config: Config) -> (&'static str, u64, Bound) {
        let e = config.validate().expect_err("rejected");
        (e.field, e.value, e.bound)
    }

    #[test]
    fn nibble_profiles_keep_their_fields_inside_the_data_and_apart() {
        let both = DataIdMode::Both;
        assert_eq!(p01(NibbleLayout::DEFAULT, both, 8).validate(), Ok(()));
        let at = |crc_offset, counter_offset, data_id_nibble_offset| NibbleLayout {
            crc_offset,
            counter_offset,
            data_id_nibble_offset,
        };
        let last_nibble = "the last nibble of the data";
        assert_eq!(
            fault(p01(at(0, 64, 12), both, 8)),
            ("counter_offset", 64, Bound::AtMost(60, last_nibble))
        );
        assert_eq!(
            fault(p01(at(4, 8, 12), both, 8)),
            ("crc_offset", 4, Bound::MultipleOf(8))
        );
        assert_eq!(
            fault(p01(at(0, 4, 12), both, 8)),
            ("counter_offset", 4, Bound::Overlaps("the CRC"))
        );
        let nibble = DataIdMode::Nibble;
        assert_eq!(
            fault(p01(at(0, 8, 8), nibble, 8)),
            ("data_id_nibble_offset", 8, Bound::Overlaps("the counter"))
        );
        // Only the Nibble mode sends the nibble, so only it checks its place.
        assert_eq!(p01(at(0, 8, 8), both, 8).validate(), Ok(()));
        assert_eq!(fault(p01(NibbleLayout::DEFAULT, both, 31)).0, "data_length");
        assert_eq!(
            fault(p01(NibbleLayout::DEFAULT, both, 1)),
            ("data_length", 1, Bound::AtLeast(2))
        );
    }

    #[test]
    fn the_message_names_the_field_and_the_bound() {
        let e = p01(NibbleLayout::at_byte(8), DataIdMode::Both, 8)
            .validate()
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "E2E profile 1: `crc_offset` is 64, but it must be at most 56 (the last byte of the data)"
        );
    }

    #[test]
    fn profile_11_has_no_alt_mode_and_nibble_ids_fit_12_bits() {
        let mut config = p01(NibbleLayout::DEFAULT, DataIdMode::Alt, 8);
        config.profile = Profile::P11 {
            data_id: 0x1234,
            mode: DataIdMode::Alt,
            layout: NibbleLayout::DEFAULT,
        };
        assert_eq!(
            fault(config),
            ("mode", 1, Bound::NotInProfile("Both (0) or Nibble (3)"))
        );
        config.profile = Profile::P11 {
            data_id: 0x1234,
            mode: DataIdMode::Nibble,
            layout: NibbleLayout::DEFAULT,
        };
        assert_eq!(fault(config).0, "data_id");
    }

    #[test]
    fn delta_and_header_bounds_follow_the_profile() {
        let mut config = Config {
            profile: Profile::P05 { data_id: 1, offset: 40 },
            data_length: 8,
            max_delta_counter: 255,
        };
        assert_eq!(config.validate(), Ok(()));
        let why = "the 3-byte header must end within the data";
        config.profile = Profile::P05 { data_id: 1, offset: 48 };
        assert_eq!(fault(config), ("offset", 48, Bound::AtMost(40, why)));
        config.profile = Profile::P02 { data_ids: [0; 16] };
        let why = "one less than the counter's range";
        assert_eq!(fault(config), ("max_delta_counter", 255, Bound::AtMost(15, why)));
        config.max_delta_counter = 0;
        assert_eq!(fault(config), ("max_delta_counter", 0, Bound::AtLeast(1)));
    }

    #[test]
    fn plain_signals_stay_inside_the_data_and_off_each_other() {
        let counter = CounterSignal {
            start_bit: 4,
            bits: 4,
            byte_order: ByteOrder::Intel,
            max: 15,
        };
        let checksum = ChecksumSignal {
            kind: Checksum::Crc16CcittFalse,
            start: 2,
            end: 8,
            at: 0,
            byte_order: ByteOrder::Intel,
        };
        let plain = |counter, checksum| Config {
            profile: Profile::Plain { counter, checksum },
            data_length: 8,
            max_delta_counter: 1,
        };
        assert_eq!(plain(Some(counter), None).validate(), Ok(()));
        assert_eq!(
            fault(plain(Some(counter), Some(checksum))),
            ("counter.start_bit", 4, Bound::Overlaps("the checksum"))
        );
        let moved = ChecksumSignal { at: 6, ..checksum };
        assert_eq!(
            fault(plain(None, Some(moved))),
            ("checksum.at", 6, Bound::Overlaps("the summed range"))
        );
        let long = CounterSignal { max: 16, ..counter };
        let why = "what the counter's bits hold";
        assert_eq!(
            fault(plain(Some(long), None)),
            ("counter.max", 16, Bound::AtMost(15, why))
        );
        let outside = CounterSignal {
            start_bit: 62,
            ..counter
        };
        assert_eq!(fault(plain(Some(outside), None)).0, "counter.start_bit");
        let beyond = ChecksumSignal { end: 9, ..checksum };
        assert_eq!(fault(plain(None, Some(beyond))).0, "checksum.end");
    }

    #[test]
    fn validation_is_total_and_what_passes_runs_on_its_data() {
        use crate::{Checker, Protector};
        const EDGES: [u64; 20] = [
            0,
            1,
            2,
            3,
            4,
            7,
            8,
            12,
            15,
            16,
            17,
            24,
            30,
            31,
            64,
            255,
            256,
            4096,
            4097,
            u64::MAX,
        ];
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut pick = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            EDGES[(state % EDGES.len() as u64) as usize]
        };
        let modes = [DataIdMode::Both, DataIdMode::Alt, DataIdMode::Low, DataIdMode::Nibble];
        let mut accepted = 0;
        for round in 0..100_000 {
            let layout = NibbleLayout {
                crc_offset: pick() as u16,
                counter_offset: pick() as u16,
                data_id_nibble_offset: pick() as u16,
            };
            let (data_id, mode) = (pick() as u16, modes[round % 4]);
            let order = if pick() % 2 == 0 {
                ByteOrder::Intel
            } else {
                ByteOrder::Motorola
            };
            let kinds = [
                Checksum::Crc8SaeJ1850,
                Checksum::Crc16CcittFalse,
                Checksum::Crc32P4,
                Checksum::Xor,
            ];
            let profile = match round % 5 {
                0 => Profile::P01 { data_id, mode, layout },
                1 => Profile::P11 { data_id, mode, layout },
                2 => Profile::P02 {
                    data_ids: [pick() as u8; 16],
                },
                3 => Profile::P05 {
                    data_id,
                    offset: pick() as u16,
                },
                _ => Profile::Plain {
                    counter: (pick() % 4 != 0).then(|| CounterSignal {
                        start_bit: pick() as u32,
                        bits: pick() as u32,
                        byte_order: order,
                        max: pick() as u32,
                    }),
                    checksum: (pick() % 4 != 0).then(|| ChecksumSignal {
                        kind: kinds[(pick() % 4) as usize],
                        start: pick() as usize,
                        end: pick() as usize,
                        at: pick() as usize,
                        byte_order: order,
                    }),
                },
            };
            let config = Config {
                profile,
                data_length: pick().min(5000) as usize,
                max_delta_counter: pick() as u8,
            };
            let Ok(mut protector) = Protector::new(config) else {
                continue;
            };
            accepted += 1;
            let mut payload = vec![0xA5; config.data_length];
            protector.protect(&mut payload).unwrap();
            let mut checker = Checker::new(config).unwrap();
            assert!(!matches!(checker.check(&payload), CheckStatus::Error(_)), "{config:?}");
        }
        assert!(
            accepted > 1_000,
            "the edges reach valid configurations too ({accepted})"
        );
    }
}
