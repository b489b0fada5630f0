//! The `e2e` table of a bus message and the `[[bus.fault]]` tables:
//! profiles, data IDs, checksum choices, fault kinds and their windows.

use toml::Spanned;

use tandem_e2e::{Checksum, DataIdMode};

use super::checks::given;
use crate::bounds::{MAX_DURATION, MAX_PERIOD_FRAMES};
use crate::duration::Duration;
use crate::e2e::{E2eConfig, E2eScheme, FieldPlace};
use crate::error::{ConfigError, Located};
use crate::fault::{FaultConfig, FaultEnd, FaultKind};
use crate::raw::{RawE2e, RawFault, RawFieldPlace};
use crate::text::ConfigText;

/// The checksum names of plain protection.
const CHECKSUMS: [(&str, Checksum); 6] = [
    ("crc8", Checksum::Crc8SaeJ1850),
    ("crc8h2f", Checksum::Crc8H2f),
    ("crc16", Checksum::Crc16CcittFalse),
    ("crc32p4", Checksum::Crc32P4),
    ("xor", Checksum::Xor),
    ("sum", Checksum::Sum),
];

/// The most frames of an unknown identifier a burst sends per frame.
const MAX_BURST: i64 = 64;

impl ConfigText<'_> {
    /// Checks the `e2e` table `raw` of the message at `at` (`receiving`:
    /// a received message, which may name a status input).
    pub(super) fn e2e(&self, raw: &Spanned<RawE2e>, at: &str, receiving: bool) -> Result<E2eConfig, ConfigError> {
        let at = format!("{at}.e2e");
        let e = raw.get_ref();
        let key = |k: &str| format!("{at}.{k}");
        let mode = |default: DataIdMode, allowed: &[(&str, DataIdMode)]| -> Result<DataIdMode, ConfigError> {
            let Some(m) = &e.data_id_mode else { return Ok(default) };
            let found = allowed.iter().find(|(name, _)| name == m.get_ref());
            found.map(|&(_, mode)| mode).ok_or_else(|| {
                self.error(
                    Some(m.span()),
                    &key("data_id_mode"),
                    format!(
                        "data ID mode \"{}\" is not one of profile {}'s; use one of: {}",
                        m.get_ref(),
                        e.profile.get_ref(),
                        allowed.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
                    ),
                )
            })
        };
        const BOTH: (&str, DataIdMode) = ("both", DataIdMode::Both);
        const ALT: (&str, DataIdMode) = ("alt", DataIdMode::Alt);
        const LOW: (&str, DataIdMode) = ("low", DataIdMode::Low);
        const NIBBLE: (&str, DataIdMode) = ("nibble", DataIdMode::Nibble);
        let scheme = match e.profile.get_ref().as_str() {
            "1" => E2eScheme::P01(mode(DataIdMode::Both, &[BOTH, ALT, LOW, NIBBLE])?),
            "1A" => E2eScheme::P01(mode(DataIdMode::Both, &[BOTH])?),
            "1C" => E2eScheme::P01(mode(DataIdMode::Nibble, &[NIBBLE])?),
            "2" => E2eScheme::P02,
            "5" => E2eScheme::P05,
            "11" => E2eScheme::P11(mode(DataIdMode::Both, &[BOTH, NIBBLE])?),
            "plain" => E2eScheme::Plain,
            other => {
                return Err(self.error(
                    Some(e.profile.span()),
                    &key("profile"),
                    format!("unknown E2E profile \"{other}\"; use one of: 1, 1A, 1C, 2, 5, 11, plain"),
                ))
            }
        };
        let uses = |field: &str| match scheme {
            E2eScheme::P01(_) | E2eScheme::P11(_) => ["data_id", "crc", "counter", "data_id_nibble"].contains(&field),
            E2eScheme::P05 => ["data_id", "crc", "counter"].contains(&field),
            E2eScheme::P02 => field == "data_ids",
            E2eScheme::Plain => ["crc", "counter", "checksum", "checksum_bytes"].contains(&field),
        };
        let given_fields = [
            ("data_id", e.data_id.as_ref().map(Spanned::span)),
            ("data_ids", e.data_ids.as_ref().map(Spanned::span)),
            ("crc", e.crc.as_ref().map(Spanned::span)),
            ("counter", e.counter.as_ref().map(Spanned::span)),
            ("data_id_nibble", e.data_id_nibble.as_ref().map(Spanned::span)),
            ("checksum", e.checksum.as_ref().map(Spanned::span)),
            ("checksum_bytes", e.checksum_bytes.as_ref().map(Spanned::span)),
        ];
        for (field, span) in given_fields {
            if let Some(span) = span.filter(|_| !uses(field)) {
                return Err(self.error(
                    Some(span),
                    &key(field),
                    format!("profile {} has no `{field}`; remove it", e.profile.get_ref()),
                ));
            }
        }
        let data_id = match (&e.data_id, uses("data_id")) {
            (Some(_), _) => self.integer(
                &given(&e.data_id, 0),
                &key("data_id"),
                0,
                0xFFFF,
                "give a 16-bit data ID",
            )? as u16,
            (None, true) => {
                return Err(self.error(
                    Some(e.profile.span()),
                    &key("data_id"),
                    format!(
                        "profile {} needs a data ID; add e.g. data_id = 0x123",
                        e.profile.get_ref()
                    ),
                ))
            }
            (None, false) => 0,
        };
        let data_ids = match (&e.data_ids, scheme) {
            (Some(ids), _) => {
                let values = ids.get_ref();
                if values.len() != 16 || values.iter().any(|v| !(0..=255).contains(v)) {
                    return Err(self.error(
                        Some(ids.span()),
                        &key("data_ids"),
                        format!(
                            "profile 2 needs 16 data IDs of 0 to 255, one per counter value, found {} values",
                            values.len()
                        ),
                    ));
                }
                std::array::from_fn(|i| values[i] as u8)
            }
            (None, E2eScheme::P02) => {
                return Err(self.error(
                    Some(e.profile.span()),
                    &key("data_ids"),
                    "profile 2 needs its 16 data IDs, one per counter value; add data_ids = [..16 values..]".into(),
                ))
            }
            (None, _) => [0; 16],
        };
        let place = |field: &Option<Spanned<RawFieldPlace>>, name: &str| -> Result<_, ConfigError> {
            field
                .as_ref()
                .map(|f| {
                    let value = match f.get_ref() {
                        RawFieldPlace::Signal(s) => FieldPlace::Signal(s.clone()),
                        RawFieldPlace::Bit(b) if (0..512).contains(b) => FieldPlace::Bit(*b as u32),
                        RawFieldPlace::Bit(b) => {
                            return Err(self.error(
                                Some(f.span()),
                                &key(name),
                                format!(
                                "bit {b} is outside a CAN FD payload (0 to 511); give a bit offset or a signal name"
                            ),
                            ))
                        }
                    };
                    Ok(Located {
                        value,
                        key: key(name),
                        location: self.location(f.span().start),
                    })
                })
                .transpose()
        };
        let checksum = match &e.checksum {
            None => Checksum::Crc8SaeJ1850,
            Some(c) => CHECKSUMS
                .iter()
                .find(|(name, _)| name == c.get_ref())
                .map(|&(_, kind)| kind)
                .ok_or_else(|| {
                    self.error(
                        Some(c.span()),
                        &key("checksum"),
                        format!(
                            "unknown checksum \"{}\"; use one of: {}",
                            c.get_ref(),
                            CHECKSUMS.map(|(n, _)| n).join(", ")
                        ),
                    )
                })?,
        };
        let checksum_bytes = match &e.checksum_bytes {
            None => None,
            Some(r) => match r.get_ref().as_slice() {
                &[start, end] if 0 <= start && start < end && end <= 64 => Some(Located {
                    value: (start as usize, end as usize),
                    key: key("checksum_bytes"),
                    location: self.location(r.span().start),
                }),
                _ => {
                    return Err(self.error(
                        Some(r.span()),
                        &key("checksum_bytes"),
                        "must be [start, end): the first byte summed and one past the last, 0 ≤ start < end ≤ 64"
                            .into(),
                    ))
                }
            },
        };
        let max_delta_counter = self.integer(
            &given(&e.max_delta_counter, 1),
            &key("max_delta_counter"),
            1,
            255,
            "write e.g. 1",
        )? as u8;
        let status = match &e.status {
            Some(s) if !receiving => {
                return Err(self.error(
                    Some(s.span()),
                    &key("status"),
                    "a sent message has no check status; give `status` on a received message's e2e table".into(),
                ))
            }
            s => s.as_ref().map(|s| self.located(s, key("status"))),
        };
        Ok(E2eConfig {
            scheme: Located {
                value: scheme,
                key: key("profile"),
                location: self.location(e.profile.span().start),
            },
            data_id,
            data_ids,
            crc: place(&e.crc, "crc")?,
            counter: place(&e.counter, "counter")?,
            data_id_nibble: place(&e.data_id_nibble, "data_id_nibble")?,
            checksum,
            checksum_bytes,
            max_delta_counter,
            status,
        })
    }

    /// Checks the `[[bus.fault]]` table `raw` at `at`, for frames of
    /// `frame` seconds.
    pub(crate) fn fault(&self, raw: &RawFault, at: &str, frame: f64) -> Result<FaultConfig, ConfigError> {
        let key = |k: &str| format!("{at}.{k}");
        let frames_of = |d: &Option<Spanned<Duration>>, name: &str| -> Result<u64, ConfigError> {
            let seconds = self.frames(&given(d, Duration::default()), &key(name), frame, MAX_PERIOD_FRAMES)?;
            Ok((seconds / frame).round() as u64)
        };
        let needs = |name: &str, what: &str| {
            self.error(
                Some(raw.kind.span()),
                &key(name),
                format!("a \"{}\" fault needs `{name}`: {what}", raw.kind.get_ref()),
            )
        };
        let kind = match raw.kind.get_ref().as_str() {
            "drop" => FaultKind::Drop,
            "delay" => match &raw.delay {
                Some(_) => FaultKind::Delay {
                    frames: frames_of(&raw.delay, "delay")?,
                },
                None => return Err(needs("delay", "how long each frame is held, e.g. delay = \"20ms\"")),
            },
            "repeat" => FaultKind::Repeat {
                times: self.integer(&given(&raw.times, 2), &key("times"), 2, 16, "write e.g. 2")? as u32,
            },
            "stuck_counter" => FaultKind::StuckCounter,
            "bad_crc" => FaultKind::BadCrc,
            "wrong_length" => match &raw.bytes {
                Some(_) => FaultKind::WrongLength {
                    bytes: self.integer(&given(&raw.bytes, 0), &key("bytes"), 0, 64, "write e.g. 4")? as usize,
                },
                None => return Err(needs("bytes", "the length sent instead, e.g. bytes = 4")),
            },
            "override" => match (&raw.signal, &raw.value) {
                (Some(signal), Some(value)) if value.get_ref().is_finite() => FaultKind::Override {
                    signal: self.located(signal, key("signal")),
                    value: *value.get_ref(),
                    raw: raw.raw.unwrap_or(false),
                },
                (Some(_), Some(value)) => {
                    return Err(self.error(Some(value.span()), &key("value"), "must be a finite number".into()))
                }
                (None, _) => return Err(needs("signal", "the DBC signal sent with a fixed value")),
                (_, None) => return Err(needs("value", "the value sent, e.g. value = 300.0")),
            },
            "burst" => {
                let extended = raw.extended.unwrap_or(false);
                let most = if extended { 0x1FFF_FFFF } else { 0x7FF };
                FaultKind::Burst {
                    id: self.integer(&given(&raw.id, most), &key("id"), 0, most, "an identifier of the bus")? as u32,
                    extended,
                    per_frame: self.integer(
                        &given(&raw.per_frame, 1),
                        &key("per_frame"),
                        1,
                        MAX_BURST,
                        "write e.g. 4",
                    )? as u32,
                }
            }
            "stop" => FaultKind::Stop,
            other => {
                return Err(self.error(
                    Some(raw.kind.span()),
                    &key("kind"),
                    format!(
                        "unknown fault kind \"{other}\"; use one of: {}",
                        FaultKind::NAMES.join(", ")
                    ),
                ))
            }
        };
        let message = match (&raw.message, kind.needs_message()) {
            (Some(m), true) => Some(self.located(m, key("message"))),
            (None, true) => return Err(needs("message", "the name of a message this bus sends")),
            (Some(m), false) => {
                return Err(self.error(
                    Some(m.span()),
                    &key("message"),
                    format!("a \"{}\" fault acts on the whole bus; remove `message`", kind.name()),
                ))
            }
            (None, false) => None,
        };
        let start = match &raw.start {
            None => 0,
            Some(s) => {
                let seconds = s.get_ref().seconds();
                if !(0.0..=MAX_DURATION).contains(&seconds) {
                    return Err(self.error(
                        Some(s.span()),
                        &key("start"),
                        format!("must be from 0s to {}s, found \"{}\"", MAX_DURATION, s.get_ref()),
                    ));
                }
                (seconds / frame).round() as u64
            }
        };
        let end = match (&raw.duration, &raw.count) {
            (Some(d), Some(_)) => {
                return Err(self.error(
                    Some(d.span()),
                    &key("duration"),
                    "give `duration` or `count`, not both".into(),
                ))
            }
            (Some(_), None) => FaultEnd::Frames(frames_of(&raw.duration, "duration")?),
            (None, Some(_)) => FaultEnd::Count(self.integer(
                &given(&raw.count, 1),
                &key("count"),
                1,
                i64::from(u32::MAX),
                "write e.g. 10",
            )? as u64),
            (None, None) => FaultEnd::Never,
        };
        Ok(FaultConfig {
            message,
            kind: Located {
                value: kind,
                key: key("kind"),
                location: self.location(raw.kind.span().start),
            },
            start,
            end,
        })
    }
}
