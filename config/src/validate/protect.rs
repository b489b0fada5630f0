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

/// The data ID modes profile 1 and 11 may name.
const BOTH: (&str, DataIdMode) = ("both", DataIdMode::Both);
const ALT: (&str, DataIdMode) = ("alt", DataIdMode::Alt);
const LOW: (&str, DataIdMode) = ("low", DataIdMode::Low);
const NIBBLE: (&str, DataIdMode) = ("nibble", DataIdMode::Nibble);

/// The key `k` of the table at `at`.
fn key(at: &str, k: &str) -> String {
    format!("{at}.{k}")
}

/// Whether an E2E table of `scheme` has the key `field`.
fn uses(scheme: E2eScheme, field: &str) -> bool {
    match scheme {
        E2eScheme::P01(_) | E2eScheme::P11(_) => ["data_id", "crc", "counter", "data_id_nibble"].contains(&field),
        E2eScheme::P05 => ["data_id", "crc", "counter"].contains(&field),
        E2eScheme::P02 => field == "data_ids",
        E2eScheme::Plain => ["crc", "counter", "checksum", "checksum_bytes"].contains(&field),
    }
}

impl ConfigText<'_> {
    /// Checks the `e2e` table `raw` of the message at `at` (`receiving`:
    /// a received message, which may name a status input).
    pub(super) fn e2e(&self, raw: &Spanned<RawE2e>, at: &str, receiving: bool) -> Result<E2eConfig, ConfigError> {
        let at = format!("{at}.e2e");
        let e = raw.get_ref();
        let scheme = self.e2e_scheme(e, &at)?;
        self.e2e_fields_of(e, scheme, &at)?;
        let data_id = self.e2e_data_id(e, scheme, &at)?;
        let data_ids = self.e2e_data_ids(e, scheme, &at)?;
        let checksum = self.e2e_checksum(e, &at)?;
        let checksum_bytes = self.e2e_checksum_bytes(e, &at)?;
        let max_delta_counter = self.integer(
            &given(&e.max_delta_counter, 1),
            &key(&at, "max_delta_counter"),
            1,
            255,
            "write e.g. 1",
        )? as u8;
        let status = match &e.status {
            Some(s) if !receiving => {
                return Err(self.error(
                    Some(s.span()),
                    &key(&at, "status"),
                    "a sent message has no check status; give `status` on a received message's e2e table".into(),
                ))
            }
            s => s.as_ref().map(|s| self.located(s, key(&at, "status"))),
        };
        Ok(E2eConfig {
            scheme: Located {
                value: scheme,
                key: key(&at, "profile"),
                location: self.location(e.profile.span().start),
            },
            data_id,
            data_ids,
            crc: self.e2e_place(&e.crc, &at, "crc")?,
            counter: self.e2e_place(&e.counter, &at, "counter")?,
            data_id_nibble: self.e2e_place(&e.data_id_nibble, &at, "data_id_nibble")?,
            checksum,
            checksum_bytes,
            max_delta_counter,
            status,
        })
    }

    /// The protection the E2E table `e` at `at` names: its profile, with
    /// the data ID mode a profile 1 or 11 allows.
    fn e2e_scheme(&self, e: &RawE2e, at: &str) -> Result<E2eScheme, ConfigError> {
        let mode = |default: DataIdMode, allowed: &[(&str, DataIdMode)]| self.data_id_mode(e, at, default, allowed);
        Ok(match e.profile.get_ref().as_str() {
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
                    &key(at, "profile"),
                    format!("unknown E2E profile \"{other}\"; use one of: 1, 1A, 1C, 2, 5, 11, plain"),
                ))
            }
        })
    }

    /// The `data_id_mode` of the E2E table `e` at `at`: one of `allowed`,
    /// or `default` when it gives none.
    fn data_id_mode(
        &self,
        e: &RawE2e,
        at: &str,
        default: DataIdMode,
        allowed: &[(&str, DataIdMode)],
    ) -> Result<DataIdMode, ConfigError> {
        let Some(m) = &e.data_id_mode else { return Ok(default) };
        let found = allowed.iter().find(|(name, _)| name == m.get_ref());
        found.map(|&(_, mode)| mode).ok_or_else(|| {
            self.error(
                Some(m.span()),
                &key(at, "data_id_mode"),
                format!(
                    "data ID mode \"{}\" is not one of profile {}'s; use one of: {}",
                    m.get_ref(),
                    e.profile.get_ref(),
                    allowed.iter().map(|(name, _)| *name).collect::<Vec<_>>().join(", ")
                ),
            )
        })
    }

    /// Refuses a key of the E2E table `e` at `at` that its `scheme` has no
    /// use for.
    fn e2e_fields_of(&self, e: &RawE2e, scheme: E2eScheme, at: &str) -> Result<(), ConfigError> {
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
            if let Some(span) = span.filter(|_| !uses(scheme, field)) {
                return Err(self.error(
                    Some(span),
                    &key(at, field),
                    format!("profile {} has no `{field}`; remove it", e.profile.get_ref()),
                ));
            }
        }
        Ok(())
    }

    /// The 16-bit data ID of the E2E table `e` at `at`, which profiles
    /// that use one must give (0 for the others).
    fn e2e_data_id(&self, e: &RawE2e, scheme: E2eScheme, at: &str) -> Result<u16, ConfigError> {
        match (&e.data_id, uses(scheme, "data_id")) {
            (Some(_), _) => Ok(self.integer(
                &given(&e.data_id, 0),
                &key(at, "data_id"),
                0,
                0xFFFF,
                "give a 16-bit data ID",
            )? as u16),
            (None, true) => Err(self.error(
                Some(e.profile.span()),
                &key(at, "data_id"),
                format!(
                    "profile {} needs a data ID; add e.g. data_id = 0x123",
                    e.profile.get_ref()
                ),
            )),
            (None, false) => Ok(0),
        }
    }

    /// Profile 2's 16 data IDs, one per counter value (zeros for the other
    /// profiles).
    fn e2e_data_ids(&self, e: &RawE2e, scheme: E2eScheme, at: &str) -> Result<[u8; 16], ConfigError> {
        match (&e.data_ids, scheme) {
            (Some(ids), _) => {
                let values = ids.get_ref();
                if values.len() != 16 || values.iter().any(|v| !(0..=255).contains(v)) {
                    return Err(self.error(
                        Some(ids.span()),
                        &key(at, "data_ids"),
                        format!(
                            "profile 2 needs 16 data IDs of 0 to 255, one per counter value, found {} values",
                            values.len()
                        ),
                    ));
                }
                Ok(std::array::from_fn(|i| values[i] as u8))
            }
            (None, E2eScheme::P02) => Err(self.error(
                Some(e.profile.span()),
                &key(at, "data_ids"),
                "profile 2 needs its 16 data IDs, one per counter value; add data_ids = [..16 values..]".into(),
            )),
            (None, _) => Ok([0; 16]),
        }
    }

    /// Where the field `name` of the E2E table at `at` sits, if given: a
    /// signal, or a bit inside a CAN FD payload.
    fn e2e_place(
        &self,
        field: &Option<Spanned<RawFieldPlace>>,
        at: &str,
        name: &str,
    ) -> Result<Option<Located<FieldPlace>>, ConfigError> {
        let Some(f) = field else { return Ok(None) };
        let value = match f.get_ref() {
            RawFieldPlace::Signal(s) => FieldPlace::Signal(s.clone()),
            RawFieldPlace::Bit(b) if (0..512).contains(b) => FieldPlace::Bit(*b as u32),
            RawFieldPlace::Bit(b) => {
                return Err(self.error(
                    Some(f.span()),
                    &key(at, name),
                    format!("bit {b} is outside a CAN FD payload (0 to 511); give a bit offset or a signal name"),
                ))
            }
        };
        Ok(Some(Located {
            value,
            key: key(at, name),
            location: self.location(f.span().start),
        }))
    }

    /// The checksum of plain protection (CRC-8 SAE J1850 unless named).
    fn e2e_checksum(&self, e: &RawE2e, at: &str) -> Result<Checksum, ConfigError> {
        let Some(c) = &e.checksum else {
            return Ok(Checksum::Crc8SaeJ1850);
        };
        CHECKSUMS
            .iter()
            .find(|(name, _)| name == c.get_ref())
            .map(|&(_, kind)| kind)
            .ok_or_else(|| {
                self.error(
                    Some(c.span()),
                    &key(at, "checksum"),
                    format!(
                        "unknown checksum \"{}\"; use one of: {}",
                        c.get_ref(),
                        CHECKSUMS.map(|(n, _)| n).join(", ")
                    ),
                )
            })
    }

    /// The bytes plain protection's checksum covers, when given.
    fn e2e_checksum_bytes(&self, e: &RawE2e, at: &str) -> Result<Option<Located<(usize, usize)>>, ConfigError> {
        let Some(r) = &e.checksum_bytes else { return Ok(None) };
        match r.get_ref().as_slice() {
            &[start, end] if 0 <= start && start < end && end <= 64 => Ok(Some(Located {
                value: (start as usize, end as usize),
                key: key(at, "checksum_bytes"),
                location: self.location(r.span().start),
            })),
            _ => Err(self.error(
                Some(r.span()),
                &key(at, "checksum_bytes"),
                "must be [start, end): the first byte summed and one past the last, 0 ≤ start < end ≤ 64".into(),
            )),
        }
    }

    /// Checks the `[[bus.fault]]` table `raw` at `at`, for frames of
    /// `frame` seconds.
    pub(crate) fn fault(&self, raw: &RawFault, at: &str, frame: f64) -> Result<FaultConfig, ConfigError> {
        let kind = self.fault_kind(raw, at, frame)?;
        let message = self.fault_message(raw, &kind, at)?;
        let start = self.fault_start(raw, at, frame)?;
        let end = self.fault_end(raw, at, frame)?;
        Ok(FaultConfig {
            message,
            kind: Located {
                value: kind,
                key: key(at, "kind"),
                location: self.location(raw.kind.span().start),
            },
            start,
            end,
        })
    }

    /// The duration `d` of the fault at `at` (key `name`) in whole frames
    /// of `frame` seconds.
    fn fault_frames(
        &self,
        d: &Option<Spanned<Duration>>,
        at: &str,
        name: &str,
        frame: f64,
    ) -> Result<u64, ConfigError> {
        let seconds = self.frames(&given(d, Duration::default()), &key(at, name), frame, MAX_PERIOD_FRAMES)?;
        Ok((seconds / frame).round() as u64)
    }

    /// The error of a fault `raw` at `at` whose kind needs the key `name`
    /// (`what`: what it gives) and lacks it.
    fn fault_needs(&self, raw: &RawFault, at: &str, name: &str, what: &str) -> ConfigError {
        self.error(
            Some(raw.kind.span()),
            &key(at, name),
            format!("a \"{}\" fault needs `{name}`: {what}", raw.kind.get_ref()),
        )
    }

    /// What the fault `raw` at `at` does, with the keys its kind needs.
    fn fault_kind(&self, raw: &RawFault, at: &str, frame: f64) -> Result<FaultKind, ConfigError> {
        let needs = |name: &str, what: &str| Err(self.fault_needs(raw, at, name, what));
        match raw.kind.get_ref().as_str() {
            "drop" => Ok(FaultKind::Drop),
            "delay" => match &raw.delay {
                Some(_) => Ok(FaultKind::Delay {
                    frames: self.fault_frames(&raw.delay, at, "delay", frame)?,
                }),
                None => needs("delay", "how long each frame is held, e.g. delay = \"20ms\""),
            },
            "repeat" => Ok(FaultKind::Repeat {
                times: self.integer(&given(&raw.times, 2), &key(at, "times"), 2, 16, "write e.g. 2")? as u32,
            }),
            "stuck_counter" => Ok(FaultKind::StuckCounter),
            "bad_crc" => Ok(FaultKind::BadCrc),
            "wrong_length" => match &raw.bytes {
                Some(_) => Ok(FaultKind::WrongLength {
                    bytes: self.integer(&given(&raw.bytes, 0), &key(at, "bytes"), 0, 64, "write e.g. 4")? as usize,
                }),
                None => needs("bytes", "the length sent instead, e.g. bytes = 4"),
            },
            "override" => self.override_fault(raw, at),
            "burst" => self.burst_fault(raw, at),
            "stop" => Ok(FaultKind::Stop),
            other => Err(self.error(
                Some(raw.kind.span()),
                &key(at, "kind"),
                format!(
                    "unknown fault kind \"{other}\"; use one of: {}",
                    FaultKind::NAMES.join(", ")
                ),
            )),
        }
    }

    /// An `override` fault: its signal and the finite value sent.
    fn override_fault(&self, raw: &RawFault, at: &str) -> Result<FaultKind, ConfigError> {
        match (&raw.signal, &raw.value) {
            (Some(signal), Some(value)) if value.get_ref().is_finite() => Ok(FaultKind::Override {
                signal: self.located(signal, key(at, "signal")),
                value: *value.get_ref(),
                raw: raw.raw.unwrap_or(false),
            }),
            (Some(_), Some(value)) => {
                Err(self.error(Some(value.span()), &key(at, "value"), "must be a finite number".into()))
            }
            (None, _) => Err(self.fault_needs(raw, at, "signal", "the DBC signal sent with a fixed value")),
            (_, None) => Err(self.fault_needs(raw, at, "value", "the value sent, e.g. value = 300.0")),
        }
    }

    /// A `burst` fault: the identifier and how many frames per frame.
    fn burst_fault(&self, raw: &RawFault, at: &str) -> Result<FaultKind, ConfigError> {
        let extended = raw.extended.unwrap_or(false);
        let most = if extended { 0x1FFF_FFFF } else { 0x7FF };
        Ok(FaultKind::Burst {
            id: self.integer(
                &given(&raw.id, most),
                &key(at, "id"),
                0,
                most,
                "an identifier of the bus",
            )? as u32,
            extended,
            per_frame: self.integer(
                &given(&raw.per_frame, 1),
                &key(at, "per_frame"),
                1,
                MAX_BURST,
                "write e.g. 4",
            )? as u32,
        })
    }

    /// The message the fault `raw` at `at` acts on: named when its `kind`
    /// acts on a message, not when it acts on the whole bus.
    fn fault_message(
        &self,
        raw: &RawFault,
        kind: &FaultKind,
        at: &str,
    ) -> Result<Option<Located<String>>, ConfigError> {
        match (&raw.message, kind.needs_message()) {
            (Some(m), true) => Ok(Some(self.located(m, key(at, "message")))),
            (None, true) => Err(self.fault_needs(raw, at, "message", "the name of a message this bus sends")),
            (Some(m), false) => Err(self.error(
                Some(m.span()),
                &key(at, "message"),
                format!("a \"{}\" fault acts on the whole bus; remove `message`", kind.name()),
            )),
            (None, false) => Ok(None),
        }
    }

    /// The frame the fault `raw` at `at` begins at (0 unless given).
    fn fault_start(&self, raw: &RawFault, at: &str, frame: f64) -> Result<u64, ConfigError> {
        let Some(s) = &raw.start else { return Ok(0) };
        let seconds = s.get_ref().seconds();
        if !(0.0..=MAX_DURATION).contains(&seconds) {
            return Err(self.error(
                Some(s.span()),
                &key(at, "start"),
                format!("must be from 0s to {}s, found \"{}\"", MAX_DURATION, s.get_ref()),
            ));
        }
        Ok((seconds / frame).round() as u64)
    }

    /// When the fault `raw` at `at` ends: after a duration, a count of
    /// frames, or never.
    fn fault_end(&self, raw: &RawFault, at: &str, frame: f64) -> Result<FaultEnd, ConfigError> {
        match (&raw.duration, &raw.count) {
            (Some(d), Some(_)) => Err(self.error(
                Some(d.span()),
                &key(at, "duration"),
                "give `duration` or `count`, not both".into(),
            )),
            (Some(_), None) => Ok(FaultEnd::Frames(self.fault_frames(
                &raw.duration,
                at,
                "duration",
                frame,
            )?)),
            (None, Some(_)) => Ok(FaultEnd::Count(self.integer(
                &given(&raw.count, 1),
                &key(at, "count"),
                1,
                i64::from(u32::MAX),
                "write e.g. 10",
            )? as u64)),
            (None, None) => Ok(FaultEnd::Never),
        }
    }
}
