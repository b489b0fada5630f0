//! Diagnostics without I/O: ISO-TP ([`isotp`]), which carries long
//! messages in CAN frames, and the UDS server below, which answers them.
//!
//! This crate depends on `tandem-can` alone of Tandem's crates (ISO-TP's
//! [`Link`](isotp::Link) runs over any [`Duplex`](tandem_can::Duplex)): it
//! must not depend on a particular transport, the DBC codec, logs or models.
//!
//! # The UDS server
//!
//! A small UDS (ISO 14229-1) server without I/O: request bytes in,
//! response bytes out, with no allocation per request.
//!
//! | service | sub-functions / form | negative responses |
//! |---|---|---|
//! | 0x10 DiagnosticSessionControl | 0x01 default, 0x02 programming, 0x03 extended; answers P2 (ms) and P2* (10 ms) | 0x12, 0x13 |
//! | 0x3E TesterPresent | 0x00 | 0x12, 0x13 |
//! | 0x22 ReadDataByIdentifier | one or more DIDs; unknown ones are left out | 0x13, 0x31 (none known), 0x22 (a value not available yet), 0x14 (response too long) |
//! | 0x19 ReadDTCInformation | 0x01 number by status mask, 0x02 by status mask, 0x0A supported DTCs | 0x12, 0x13 |
//! | 0x14 ClearDiagnosticInformation | group 0xFFFFFF or one DTC | 0x13, 0x31 |
//!
//! Any other service is answered 0x11 (serviceNotSupported). The
//! suppress-positive-response bit holds for 0x10 and 0x3E. A non-default
//! session falls back to the default one after S3 (5 s) without a request.
//! Each DID's value comes from the caller at every request ([`Server::handle`]
//! takes one per DID); each DTC's status from the test results the caller
//! reports ([`Server::report`]).
//!
//! ```
//! use tandem_uds::{Did, Encoding, Server, ServerConfig};
//!
//! let speed = Did { id: 0xF40D, encoding: Encoding { bytes: 2, signed: false, scale: 0.01, offset: 0.0 } };
//! let mut server = Server::new(ServerConfig::new(vec![speed], vec![0x012345])).unwrap();
//! assert_eq!(server.handle(&[0x22, 0xF4, 0x0D], &[12.34], 0), Some(&[0x62, 0xF4, 0x0D, 0x04, 0xD2][..]));
//! server.report(0, true);
//! assert_eq!(server.handle(&[0x19, 0x02, 0x08], &[0.0], 0), Some(&[0x59, 0x02, 0x3F, 0x01, 0x23, 0x45, 0x2F][..]));
//! assert_eq!(server.handle(&[0x27, 0x01], &[0.0], 0), Some(&[0x7F, 0x27, 0x11][..]));
//! ```

mod did;
pub mod dtc;
pub mod isotp;

pub use did::{Did, Encoding};
pub use dtc::Dtc;

/// The first byte of a negative response (`0x7F, SID, NRC`).
pub const NEGATIVE_RESPONSE: u8 = 0x7F;
use dtc::AVAILABILITY_MASK;

/// Negative response codes this server sends.
pub mod nrc {
    /// serviceNotSupported.
    pub const SERVICE_NOT_SUPPORTED: u8 = 0x11;
    /// subFunctionNotSupported.
    pub const SUB_FUNCTION_NOT_SUPPORTED: u8 = 0x12;
    /// incorrectMessageLengthOrInvalidFormat.
    pub const INCORRECT_LENGTH: u8 = 0x13;
    /// responseTooLong.
    pub const RESPONSE_TOO_LONG: u8 = 0x14;
    /// conditionsNotCorrect.
    pub const CONDITIONS_NOT_CORRECT: u8 = 0x22;
    /// requestOutOfRange.
    pub const REQUEST_OUT_OF_RANGE: u8 = 0x31;
}

/// S3: how long a non-default session lasts without a request, in ns.
pub const S3_NS: u64 = 5_000_000_000;
/// The suppress-positive-response bit of a sub-function byte.
const SUPPRESS: u8 = 0x80;
/// DTCFormatIdentifier: ISO 14229-1 DTC format.
const DTC_FORMAT_ISO14229: u8 = 0x01;

/// What the server serves.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerConfig {
    /// The data identifiers, in the order of the values given to [`Server::handle`].
    pub dids: Vec<Did>,
    /// The trouble codes (24 bits each), in the order [`Server::report`] numbers them.
    pub dtcs: Vec<u32>,
    /// P2 (ms): the server's response time it announces.
    pub p2_ms: u16,
    /// P2* (ms, sent in 10 ms units): its extended response time.
    pub p2_star_ms: u32,
    /// The longest response, in bytes (the ISO-TP link's `max_len`).
    pub max_response: usize,
}

impl ServerConfig {
    /// `dids` and `dtcs` with P2 50 ms, P2* 5 s and 4095-byte responses.
    pub fn new(dids: Vec<Did>, dtcs: Vec<u32>) -> Self {
        ServerConfig {
            dids,
            dtcs,
            p2_ms: 50,
            p2_star_ms: 5000,
            max_response: 4095,
        }
    }
}

/// A [`ServerConfig`] the server cannot serve.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Two DIDs share an identifier.
    #[error("DID {0:#06X} is listed twice")]
    DuplicateDid(u16),
    /// A DID's encoding is out of bounds.
    #[error("DID {id:#06X}: {problem}")]
    Encoding {
        /// The DID.
        id: u16,
        /// What is wrong.
        problem: &'static str,
    },
    /// A DTC code beyond 24 bits, or listed twice.
    #[error("DTC {0:#08X} is beyond 0xFFFFFF or listed twice")]
    Dtc(u32),
    /// P2* beyond 655 350 ms, or a response bound below 8 bytes.
    #[error("p2_star_ms must be at most 655350 and max_response at least 8")]
    Timing,
}

/// The diagnostic session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Session {
    /// 0x01.
    Default,
    /// 0x02.
    Programming,
    /// 0x03.
    Extended,
}

/// The server: see the [module](self) documentation.
pub struct Server {
    config: ServerConfig,
    dtcs: Vec<Dtc>,
    session: Session,
    last_request: u64,
    response: Vec<u8>,
}

impl Server {
    /// A server for `config`, its response buffer allocated.
    pub fn new(config: ServerConfig) -> Result<Self, ConfigError> {
        for (i, did) in config.dids.iter().enumerate() {
            if config.dids[..i].iter().any(|d| d.id == did.id) {
                return Err(ConfigError::DuplicateDid(did.id));
            }
            let e = did.encoding;
            let problem = if !(1..=8).contains(&e.bytes) {
                "bytes must be 1 to 8"
            } else if e.scale == 0.0 || !e.scale.is_finite() {
                "scale must be a finite number other than 0"
            } else if !e.offset.is_finite() {
                "offset must be finite"
            } else {
                continue;
            };
            return Err(ConfigError::Encoding { id: did.id, problem });
        }
        for (i, &code) in config.dtcs.iter().enumerate() {
            if code > 0xFF_FFFF || config.dtcs[..i].contains(&code) {
                return Err(ConfigError::Dtc(code));
            }
        }
        if config.p2_star_ms > 655_350 || config.max_response < 8 {
            return Err(ConfigError::Timing);
        }
        let capacity = config.max_response.max(3 + 4 * config.dtcs.len());
        Ok(Server {
            dtcs: config.dtcs.iter().map(|&c| Dtc::new(c)).collect(),
            config,
            session: Session::Default,
            last_request: 0,
            response: Vec::with_capacity(capacity),
        })
    }

    /// The session now.
    pub fn session(&self) -> Session {
        self.session
    }

    /// The trouble codes and their status.
    pub fn dtcs(&self) -> &[Dtc] {
        &self.dtcs
    }

    /// Records the test result of DTC number `index` (in [`ServerConfig::dtcs`]'s order).
    pub fn report(&mut self, index: usize, failed: bool) {
        if let Some(dtc) = self.dtcs.get_mut(index) {
            dtc.report(failed);
        }
    }

    /// The response to `request` at `now` (ns), with `values` holding each
    /// DID's value (NaN: not available); `None` when the positive response
    /// is suppressed or the request is empty.
    pub fn handle(&mut self, request: &[u8], values: &[f64], now: u64) -> Option<&[u8]> {
        let &sid = request.first()?;
        if self.session != Session::Default && now.saturating_sub(self.last_request) > S3_NS {
            self.session = Session::Default;
        }
        self.last_request = now;
        self.response.clear();
        let outcome = match sid {
            0x10 => self.session_control(request),
            0x3E => self.tester_present(request),
            0x22 => self.read_data(request, values),
            0x19 => self.read_dtc(request),
            0x14 => self.clear(request),
            _ => Err(nrc::SERVICE_NOT_SUPPORTED),
        };
        match outcome {
            Ok(true) => Some(&self.response),
            Ok(false) => None,
            Err(code) => {
                self.response.clear();
                self.response.extend_from_slice(&[NEGATIVE_RESPONSE, sid, code]);
                Some(&self.response)
            }
        }
    }

    /// The sub-function byte of a two-byte request, and whether it
    /// suppresses the positive response.
    fn sub_function(request: &[u8]) -> Result<(u8, bool), u8> {
        match request {
            [_, sub] => Ok((sub & !SUPPRESS, sub & SUPPRESS != 0)),
            _ => Err(nrc::INCORRECT_LENGTH),
        }
    }

    fn session_control(&mut self, request: &[u8]) -> Result<bool, u8> {
        let (sub, suppress) = match request {
            [_, sub, ..] if !matches!(sub & !SUPPRESS, 1..=3) => return Err(nrc::SUB_FUNCTION_NOT_SUPPORTED),
            _ => Self::sub_function(request)?,
        };
        self.session = match sub {
            1 => Session::Default,
            2 => Session::Programming,
            _ => Session::Extended,
        };
        let [p2_high, p2_low] = self.config.p2_ms.to_be_bytes();
        let [star_high, star_low] = ((self.config.p2_star_ms / 10) as u16).to_be_bytes();
        self.response
            .extend_from_slice(&[0x50, sub, p2_high, p2_low, star_high, star_low]);
        Ok(!suppress)
    }

    fn tester_present(&mut self, request: &[u8]) -> Result<bool, u8> {
        let (sub, suppress) = match request {
            [_, sub, ..] if sub & !SUPPRESS != 0 => return Err(nrc::SUB_FUNCTION_NOT_SUPPORTED),
            _ => Self::sub_function(request)?,
        };
        self.response.extend_from_slice(&[0x7E, sub]);
        Ok(!suppress)
    }

    fn read_data(&mut self, request: &[u8], values: &[f64]) -> Result<bool, u8> {
        let ids = &request[1..];
        if ids.is_empty() || !ids.len().is_multiple_of(2) {
            return Err(nrc::INCORRECT_LENGTH);
        }
        self.response.push(0x62);
        for pair in ids.chunks_exact(2) {
            let id = u16::from_be_bytes([pair[0], pair[1]]);
            let Some(index) = self.config.dids.iter().position(|d| d.id == id) else {
                continue;
            };
            let encoding = self.config.dids[index].encoding;
            let value = values.get(index).copied().unwrap_or(f64::NAN);
            if value.is_nan() {
                return Err(nrc::CONDITIONS_NOT_CORRECT);
            }
            let start = self.response.len();
            let end = start + 2 + usize::from(encoding.bytes);
            if end > self.config.max_response {
                return Err(nrc::RESPONSE_TOO_LONG);
            }
            self.response.extend_from_slice(pair);
            self.response.resize(end, 0);
            encoding.write(value, &mut self.response[start + 2..]);
        }
        if self.response.len() == 1 {
            return Err(nrc::REQUEST_OUT_OF_RANGE);
        }
        Ok(true)
    }

    fn read_dtc(&mut self, request: &[u8]) -> Result<bool, u8> {
        let (sub, mask) = match request {
            [_, sub @ (0x01 | 0x02), mask] => (*sub, *mask),
            [_, 0x0A] => (0x0A, 0xFF),
            [_, 0x01 | 0x02 | 0x0A, ..] | [_] => return Err(nrc::INCORRECT_LENGTH),
            _ => return Err(nrc::SUB_FUNCTION_NOT_SUPPORTED),
        };
        self.response.extend_from_slice(&[0x59, sub, AVAILABILITY_MASK]);
        let matching = |d: &&Dtc| sub == 0x0A || d.status() & mask & AVAILABILITY_MASK != 0;
        if sub == 0x01 {
            let count = self.dtcs.iter().filter(matching).count() as u16;
            let [high, low] = count.to_be_bytes();
            self.response.extend_from_slice(&[DTC_FORMAT_ISO14229, high, low]);
        } else {
            for dtc in self.dtcs.iter().filter(matching) {
                let [_, a, b, c] = dtc.code().to_be_bytes();
                self.response.extend_from_slice(&[a, b, c, dtc.status()]);
            }
        }
        Ok(true)
    }

    fn clear(&mut self, request: &[u8]) -> Result<bool, u8> {
        let [_, a, b, c] = *request else {
            return Err(nrc::INCORRECT_LENGTH);
        };
        let group = u32::from_be_bytes([0, a, b, c]);
        let mut cleared = false;
        for dtc in &mut self.dtcs {
            if group == 0xFF_FFFF || dtc.code() == group {
                dtc.clear();
                cleared = true;
            }
        }
        if !cleared && group != 0xFF_FFFF {
            return Err(nrc::REQUEST_OUT_OF_RANGE);
        }
        self.response.push(0x54);
        Ok(true)
    }
}
