//! A bus's `[bus.diagnostics]` table: the UDS server a run answers testers
//! with over ISO-TP (identifiers, framing, flow control), the data
//! identifiers it reads from model signals and the trouble codes model
//! outputs drive. Signal and output names keep their place, checked once the
//! model is loaded.

use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

use crate::error::{ConfigError, Located};
use crate::text::ConfigText;

/// The diagnostic server on a bus.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Diagnostics")]
pub(crate) struct RawDiagnostics {
    /// The CAN identifier of the tester's requests (the run receives them), e.g. 0x7E0.
    #[schemars(with = "u32")]
    request_id: Spanned<i64>,
    /// The CAN identifier of the run's responses, e.g. 0x7E8.
    #[schemars(with = "u32")]
    response_id: Spanned<i64>,
    /// Both identifiers are 29-bit. Default false (11-bit).
    #[serde(default)]
    extended_id: Option<bool>,
    /// Send CAN FD frames of up to 64 bytes. Default false (classic 8-byte frames).
    #[serde(default)]
    fd: Option<bool>,
    /// "normal" (the identifier addresses the frame) or "extended" (a first address byte: `ecu_address` on the
    /// requests, `tester_address` on the responses). Default "normal".
    #[serde(default)]
    #[schemars(with = "String", extend("enum" = ["normal", "extended"]))]
    addressing: Option<Spanned<String>>,
    /// extended addressing: the address byte of the requests.
    #[serde(default)]
    #[schemars(with = "u8")]
    ecu_address: Option<Spanned<i64>>,
    /// extended addressing: the address byte of the responses.
    #[serde(default)]
    #[schemars(with = "u8")]
    tester_address: Option<Spanned<i64>>,
    /// Pad every frame sent to 8 bytes with this byte (0 to 255). Default no padding (CAN FD frames are rounded
    /// up to their length code with 0xCC).
    #[serde(default)]
    #[schemars(with = "u8")]
    padding: Option<Spanned<i64>>,
    /// The block size asked of the tester (0 to 255; 0: no further flow control). Default 0.
    #[serde(default)]
    #[schemars(with = "u8")]
    block_size: Option<Spanned<i64>>,
    /// STmin asked of the tester, as sent: 0 to 127 (ms) or 241 to 249 (0xF1-0xF9: 100 to 900 us). Default 0.
    #[serde(default)]
    #[schemars(with = "u8")]
    stmin: Option<Spanned<i64>>,
    /// Data identifiers ReadDataByIdentifier (0x22) reads.
    #[serde(default)]
    did: Vec<RawDid>,
    /// Trouble codes ReadDTCInformation (0x19) reports and ClearDiagnosticInformation (0x14) clears.
    #[serde(default)]
    dtc: Vec<RawDtc>,
}

/// A data identifier: a model signal's value as a scaled integer, big endian.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Did")]
struct RawDid {
    /// The identifier, 0 to 0xFFFF.
    #[schemars(with = "u16")]
    id: Spanned<i64>,
    /// The model output (or input) it reads.
    #[schemars(with = "String")]
    signal: Spanned<String>,
    /// Its length in bytes, 1 to 8. Default 2.
    #[serde(default)]
    #[schemars(with = "u8")]
    bytes: Option<Spanned<i64>>,
    /// Physical units per raw step: raw = round((value - offset) / scale), saturated. Default 1.
    #[serde(default)]
    #[schemars(with = "f64")]
    scale: Option<Spanned<f64>>,
    /// The physical value of raw 0. Default 0.
    #[serde(default)]
    offset: Option<f64>,
    /// Two's complement rather than unsigned. Default false.
    #[serde(default)]
    signed: Option<bool>,
}

/// A trouble code failing while a model output is above 0.5.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Dtc")]
struct RawDtc {
    /// The 24-bit code, e.g. 0xC07300.
    #[schemars(with = "u32")]
    code: Spanned<i64>,
    /// The model output whose value above 0.5 means the test fails.
    #[schemars(with = "String")]
    output: Spanned<String>,
}

/// A data identifier as validated.
#[derive(Clone, Debug, PartialEq)]
pub struct DidConfig {
    /// The identifier.
    pub id: u16,
    /// The model output or input it reads.
    pub signal: Located<String>,
    /// Length in bytes (1 to 8).
    pub bytes: u8,
    /// Physical units per raw step (finite, not 0).
    pub scale: f64,
    /// Physical value of raw 0.
    pub offset: f64,
    /// Two's complement.
    pub signed: bool,
}

/// A trouble code as validated.
#[derive(Clone, Debug, PartialEq)]
pub struct DtcConfig {
    /// The 24-bit code.
    pub code: u32,
    /// The model output that fails it above 0.5.
    pub output: Located<String>,
}

/// A bus's diagnostic server as validated.
#[derive(Clone, Debug, PartialEq)]
pub struct DiagnosticsConfig {
    /// The requests' identifier.
    pub request_id: u32,
    /// The responses' identifier.
    pub response_id: u32,
    /// Both are 29-bit.
    pub extended_id: bool,
    /// CAN FD frames (TX_DL 64).
    pub fd: bool,
    /// Extended addressing: (the requests' address byte, the responses').
    pub addresses: Option<(u8, u8)>,
    /// The padding byte.
    pub padding: Option<u8>,
    /// Block size asked of the tester.
    pub block_size: u8,
    /// STmin asked of the tester, as sent.
    pub st_min: u8,
    /// The data identifiers.
    pub dids: Vec<DidConfig>,
    /// The trouble codes.
    pub dtcs: Vec<DtcConfig>,
}

impl ConfigText<'_> {
    /// An integer of `field` in `min..=max` (`default` when absent).
    fn ranged(
        &self,
        field: &Option<Spanned<i64>>,
        key: &str,
        (min, max): (i64, i64),
        default: i64,
    ) -> Result<i64, ConfigError> {
        match field {
            None => Ok(default),
            Some(v) if (min..=max).contains(v.get_ref()) => Ok(*v.get_ref()),
            Some(v) => Err(self.error(
                Some(v.span()),
                key,
                format!("must be {min} to {max} ({min:#X} to {max:#X}), found {}", v.get_ref()),
            )),
        }
    }

    /// Checks a `[bus.diagnostics]` table found at `at`.
    pub(crate) fn diagnostics(&self, raw: &RawDiagnostics, at: &str) -> Result<DiagnosticsConfig, ConfigError> {
        let extended_id = raw.extended_id.unwrap_or(false);
        let id_max = if extended_id { 0x1FFF_FFFF } else { 0x7FF };
        let id = |field: &Spanned<i64>, name: &str| {
            self.ranged(&Some(field.clone()), &format!("{at}.{name}"), (0, id_max), 0)
                .map_err(|mut e| {
                    if !extended_id {
                        e.message.push_str("; set extended_id = true for 29-bit identifiers");
                    }
                    e
                })
        };
        let request_id = id(&raw.request_id, "request_id")? as u32;
        let response_id = id(&raw.response_id, "response_id")? as u32;
        if request_id == response_id {
            return Err(self.error(
                Some(raw.response_id.span()),
                &format!("{at}.response_id"),
                "the responses need an identifier of their own, other than request_id".into(),
            ));
        }
        let byte = |field: &Option<Spanned<i64>>, name: &str| {
            self.ranged(field, &format!("{at}.{name}"), (0, 255), 0)
                .map(|v| v as u8)
        };
        let addresses = match raw.addressing.as_ref().map(|a| a.get_ref().as_str()) {
            None | Some("normal") => None,
            Some("extended") => {
                let required = |field: &Option<Spanned<i64>>, name: &str| match field {
                    Some(_) => byte(field, name),
                    None => Err(self.error(
                        raw.addressing.as_ref().map(Spanned::span),
                        &format!("{at}.{name}"),
                        format!("extended addressing needs `{name}`; add e.g. {name} = 0x10"),
                    )),
                };
                Some((
                    required(&raw.ecu_address, "ecu_address")?,
                    required(&raw.tester_address, "tester_address")?,
                ))
            }
            Some(other) => {
                return Err(self.error(
                    raw.addressing.as_ref().map(Spanned::span),
                    &format!("{at}.addressing"),
                    format!("unknown addressing \"{other}\"; use one of: normal, extended"),
                ))
            }
        };
        let st_min = byte(&raw.stmin, "stmin")?;
        if st_min > 0x7F && !(0xF1..=0xF9).contains(&st_min) {
            let span = raw.stmin.as_ref().map(Spanned::span);
            return Err(self.error(
                span,
                &format!("{at}.stmin"),
                format!("{st_min:#04X} is reserved; use 0 to 127 (ms) or 0xF1 to 0xF9 (100 to 900 us)"),
            ));
        }
        let mut dids: Vec<DidConfig> = Vec::with_capacity(raw.did.len());
        for (i, did) in raw.did.iter().enumerate() {
            let key = format!("{at}.did[{i}]");
            let id = self.ranged(&Some(did.id.clone()), &format!("{key}.id"), (0, 0xFFFF), 0)? as u16;
            if dids.iter().any(|d| d.id == id) {
                return Err(self.error(
                    Some(did.id.span()),
                    &format!("{key}.id"),
                    format!("DID {id:#06X} is given twice; each identifier reads one signal"),
                ));
            }
            let scale = did.scale.as_ref().map_or(1.0, |s| *s.get_ref());
            if scale == 0.0 || !scale.is_finite() {
                return Err(self.error(
                    did.scale.as_ref().map(Spanned::span),
                    &format!("{key}.scale"),
                    format!("must be a finite number other than 0, found {scale}; write e.g. scale = 0.01"),
                ));
            }
            dids.push(DidConfig {
                id,
                signal: self.located(&did.signal, format!("{key}.signal")),
                bytes: self.ranged(&did.bytes, &format!("{key}.bytes"), (1, 8), 2)? as u8,
                scale,
                offset: did.offset.unwrap_or(0.0),
                signed: did.signed.unwrap_or(false),
            });
        }
        let mut dtcs: Vec<DtcConfig> = Vec::with_capacity(raw.dtc.len());
        for (i, dtc) in raw.dtc.iter().enumerate() {
            let key = format!("{at}.dtc[{i}]");
            let code = self.ranged(&Some(dtc.code.clone()), &format!("{key}.code"), (1, 0xFF_FFFF), 0)? as u32;
            if dtcs.iter().any(|d| d.code == code) {
                return Err(self.error(
                    Some(dtc.code.span()),
                    &format!("{key}.code"),
                    format!("DTC {code:#08X} is given twice"),
                ));
            }
            dtcs.push(DtcConfig {
                code,
                output: self.located(&dtc.output, format!("{key}.output")),
            });
        }
        Ok(DiagnosticsConfig {
            request_id,
            response_id,
            extended_id,
            fd: raw.fd.unwrap_or(false),
            addresses,
            padding: raw
                .padding
                .as_ref()
                .map(|_| byte(&raw.padding, "padding"))
                .transpose()?,
            block_size: byte(&raw.block_size, "block_size")?,
            st_min,
            dids,
            dtcs,
        })
    }
}
