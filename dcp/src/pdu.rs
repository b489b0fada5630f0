//! The protocol data units of DCP 1.0: decoding from a datagram and
//! encoding into one. Every field is little-endian and packed; a datagram
//! holds one PDU. Fields a slave checks semantically (a state id, an
//! operating mode, a data type) are kept as their raw codes, so that a bad
//! value gets its own error code rather than a decoding failure.
//!
//! ```
//! use tandem_dcp::pdu::{Pdu, Request};
//! let mut buf = Vec::new();
//! Pdu::Request { seq: 7, receiver: 1, body: Request::DoStep { state: 0x0B, steps: 10 } }.write(&mut buf);
//! assert_eq!(buf, [0x07, 7, 0, 1, 0x0B, 10, 0, 0, 0]);
//! assert_eq!(Pdu::read(&buf).unwrap(), Pdu::Request { seq: 7, receiver: 1, body: Request::DoStep { state: 0x0B, steps: 10 } });
//! ```

use std::net::{Ipv4Addr, SocketAddrV4};

use crate::types::{State, Transport};

/// One PDU, borrowing the variable-length parts of its datagram.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pdu<'a> {
    /// A request of the master (`STC_*`, `CFG_*`, `INF_*`).
    Request {
        /// `pdu_seq_id`.
        seq: u16,
        /// The slave's id.
        receiver: u8,
        /// What is asked.
        body: Request<'a>,
    },
    /// A slave's response (`RSP_*`).
    Response {
        /// `resp_seq_id`: the `pdu_seq_id` of the request answered.
        seq: u16,
        /// The slave's id.
        sender: u8,
        /// The answer.
        body: Response<'a>,
    },
    /// `NTF_state_changed`.
    StateChanged {
        /// The slave's id.
        sender: u8,
        /// Its new state (raw code).
        state: u8,
    },
    /// `NTF_log`.
    Log {
        /// The slave's id.
        sender: u8,
        /// When (`time`, i64).
        time: i64,
        /// `log_template_id`.
        template: u8,
        /// `log_arg_val`.
        args: &'a [u8],
    },
    /// `DAT_input_output` or `DAT_parameter`.
    Data {
        /// Which of the two.
        kind: DataKind,
        /// `pdu_seq_id` of this data id's stream.
        seq: u16,
        /// `data_id` or `param_id`.
        id: u16,
        /// The values, packed in position order.
        payload: &'a [u8],
    },
}

/// Which data PDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataKind {
    /// `DAT_input_output` (0xF0).
    InputOutput,
    /// `DAT_parameter` (0xF1).
    Parameter,
}

/// Network information of a `CFG_*_network_information` PDU: the
/// transport and its own bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Network<'a> {
    /// `transport_protocol` (raw code).
    pub transport: u8,
    /// The transport's part (for UDP/IPv4: port u16, address u32).
    pub address: &'a [u8],
}

impl<'a> Network<'a> {
    /// UDP/IPv4 information for `address`. The IPv4 address goes as a
    /// little-endian u32 whose most significant byte is the first octet
    /// (so 192.168.2.6 is `06 02 A8 C0`), as the reference implementation
    /// sends it.
    pub fn udp(address: SocketAddrV4, scratch: &'a mut [u8; 6]) -> Network<'a> {
        scratch[..2].copy_from_slice(&address.port().to_le_bytes());
        scratch[2..].copy_from_slice(&u32::from(*address.ip()).to_le_bytes());
        Network {
            transport: Transport::UdpIpv4.code(),
            address: &scratch[..],
        }
    }

    /// The UDP/IPv4 address, when this is UDP/IPv4 information of the
    /// right length.
    pub fn as_udp(&self) -> Option<SocketAddrV4> {
        if self.transport != Transport::UdpIpv4.code() || self.address.len() != 6 {
            return None;
        }
        let port = u16::from_le_bytes([self.address[0], self.address[1]]);
        let ip = u32::from_le_bytes([self.address[2], self.address[3], self.address[4], self.address[5]]);
        Some(SocketAddrV4::new(Ipv4Addr::from(ip), port))
    }
}

/// A request of the master. `state` fields are the state the master
/// believes the slave is in (raw code).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)] // the fields are the specification's, named as there
pub enum Request<'a> {
    /// `STC_register` (0x01).
    Register {
        state: u8,
        uuid: [u8; 16],
        op_mode: u8,
        major: u8,
        minor: u8,
    },
    /// `STC_deregister` (0x02).
    Deregister { state: u8 },
    /// `STC_prepare` (0x03).
    Prepare { state: u8 },
    /// `STC_configure` (0x04).
    Configure { state: u8 },
    /// `STC_initialize` (0x05).
    Initialize { state: u8 },
    /// `STC_run` (0x06): `start` in seconds of UNIX time, 0 for now.
    Run { state: u8, start: i64 },
    /// `STC_do_step` (0x07).
    DoStep { state: u8, steps: u32 },
    /// `STC_send_outputs` (0x08).
    SendOutputs { state: u8 },
    /// `STC_stop` (0x09).
    Stop { state: u8 },
    /// `STC_reset` (0x0A).
    Reset { state: u8 },
    /// `CFG_time_res` (0x20): the resolution is numerator / denominator s.
    TimeRes { numerator: u32, denominator: u32 },
    /// `CFG_steps` (0x21).
    Steps { steps: u32, data_id: u16 },
    /// `CFG_input` (0x22).
    Input {
        data_id: u16,
        pos: u16,
        target_vr: u64,
        source_type: u8,
    },
    /// `CFG_output` (0x23).
    Output { data_id: u16, pos: u16, source_vr: u64 },
    /// `CFG_clear` (0x24).
    Clear,
    /// `CFG_target_network_information` (0x25).
    TargetNetwork { data_id: u16, network: Network<'a> },
    /// `CFG_source_network_information` (0x26).
    SourceNetwork { data_id: u16, network: Network<'a> },
    /// `CFG_parameter` (0x27): the value encoded in `source_type`.
    Parameter { vr: u64, source_type: u8, value: &'a [u8] },
    /// `CFG_tunable_parameter` (0x28).
    TunableParameter {
        param_id: u16,
        pos: u16,
        vr: u64,
        source_type: u8,
    },
    /// `CFG_param_network_information` (0x29).
    ParamNetwork { param_id: u16, network: Network<'a> },
    /// `CFG_logging` (0x2A).
    Logging { category: u8, level: u8, mode: u8 },
    /// `CFG_scope` (0x2B).
    Scope { data_id: u16, scope: u8 },
    /// `INF_state` (0x80).
    State,
    /// `INF_error` (0x81).
    Error,
    /// `INF_log` (0x82).
    Log { category: u8, max: u8 },
}

/// A slave's response.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Response<'a> {
    /// `RSP_ack` (0xB0).
    Ack,
    /// `RSP_nack` (0xB1): the sequence id expected next and the error.
    Nack {
        /// `exp_seq_id`.
        expected: u16,
        /// `error_code` (raw).
        error: u16,
    },
    /// `RSP_state_ack` (0xB2).
    StateAck {
        /// The slave's state (raw).
        state: u8,
    },
    /// `RSP_error_ack` (0xB3).
    ErrorAck {
        /// `error_code` (raw).
        error: u16,
    },
    /// `RSP_log_ack` (0xB4).
    LogAck {
        /// The log entries.
        entries: &'a [u8],
    },
}

/// Why a datagram is not a PDU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PduError {
    /// Nothing to read.
    #[error("an empty datagram is not a PDU")]
    Empty,
    /// The first byte names no PDU.
    #[error("type id 0x{0:02X} names no DCP 1.0 PDU")]
    UnknownType(u8),
    /// A known PDU of the wrong length.
    #[error("{name} (type id 0x{type_id:02X}) takes {expected} bytes, this one has {found}")]
    Length {
        /// The PDU's type id.
        type_id: u8,
        /// Its name.
        name: &'static str,
        /// What it takes (the least, for PDUs of variable length).
        expected: usize,
        /// What it has.
        found: usize,
    },
}

/// The name of the PDU with type id `type_id`, if it is one.
pub fn name(type_id: u8) -> Option<&'static str> {
    Some(match type_id {
        0x01 => "STC_register",
        0x02 => "STC_deregister",
        0x03 => "STC_prepare",
        0x04 => "STC_configure",
        0x05 => "STC_initialize",
        0x06 => "STC_run",
        0x07 => "STC_do_step",
        0x08 => "STC_send_outputs",
        0x09 => "STC_stop",
        0x0A => "STC_reset",
        0x20 => "CFG_time_res",
        0x21 => "CFG_steps",
        0x22 => "CFG_input",
        0x23 => "CFG_output",
        0x24 => "CFG_clear",
        0x25 => "CFG_target_network_information",
        0x26 => "CFG_source_network_information",
        0x27 => "CFG_parameter",
        0x28 => "CFG_tunable_parameter",
        0x29 => "CFG_param_network_information",
        0x2A => "CFG_logging",
        0x2B => "CFG_scope",
        0x80 => "INF_state",
        0x81 => "INF_error",
        0x82 => "INF_log",
        0xB0 => "RSP_ack",
        0xB1 => "RSP_nack",
        0xB2 => "RSP_state_ack",
        0xB3 => "RSP_error_ack",
        0xB4 => "RSP_log_ack",
        0xE0 => "NTF_state_changed",
        0xE1 => "NTF_log",
        0xF0 => "DAT_input_output",
        0xF1 => "DAT_parameter",
        _ => return None,
    })
}

/// The sequence id and receiver of a request datagram too short or too
/// long for its type, so that the slave can answer `INVALID_LENGTH`.
pub fn request_header(bytes: &[u8]) -> Option<(u8, u16, u8)> {
    match bytes {
        // STC (0x01–0x1F), CFG (0x20–0x7F) and INF (0x80–0xAF) requests.
        [t @ 0x01..=0xAF, s0, s1, receiver, ..] => Some((*t, u16::from_le_bytes([*s0, *s1]), *receiver)),
        _ => None,
    }
}

/// Little-endian reads at fixed offsets of a datagram whose length is
/// already checked.
struct Fields<'a>(&'a [u8]);

impl<'a> Fields<'a> {
    fn u8(&self, at: usize) -> u8 {
        self.0[at]
    }
    fn u16(&self, at: usize) -> u16 {
        u16::from_le_bytes([self.0[at], self.0[at + 1]])
    }
    fn u32(&self, at: usize) -> u32 {
        u32::from_le_bytes(self.0[at..at + 4].try_into().unwrap_or_default())
    }
    fn u64(&self, at: usize) -> u64 {
        u64::from_le_bytes(self.0[at..at + 8].try_into().unwrap_or_default())
    }
    fn rest(&self, at: usize) -> &'a [u8] {
        &self.0[at..]
    }
    /// The state byte of a state-change request (the last byte of one
    /// shorter than that).
    fn state(&self) -> u8 {
        self.u8(4.min(self.0.len() - 1))
    }
    /// The network information at byte 6 on.
    fn network(&self) -> Network<'a> {
        Network {
            transport: self.u8(6),
            address: self.rest(7),
        }
    }

    /// The body of request `type_id` (one [`name`] knows, of a length
    /// checked).
    fn request(&self, type_id: u8) -> Request<'a> {
        let state = self.state();
        match type_id {
            0x01 => {
                let mut uuid = [0; 16];
                uuid.copy_from_slice(&self.0[5..21]);
                Request::Register {
                    state,
                    uuid,
                    op_mode: self.u8(21),
                    major: self.u8(22),
                    minor: self.u8(23),
                }
            }
            0x02 => Request::Deregister { state },
            0x03 => Request::Prepare { state },
            0x04 => Request::Configure { state },
            0x05 => Request::Initialize { state },
            0x06 => Request::Run {
                state,
                start: self.u64(5) as i64,
            },
            0x07 => Request::DoStep {
                state,
                steps: self.u32(5),
            },
            0x08 => Request::SendOutputs { state },
            0x09 => Request::Stop { state },
            0x0A => Request::Reset { state },
            0x20..=0x2B => self.configuration(type_id),
            0x80 => Request::State,
            0x81 => Request::Error,
            // 0x82, the one request type left.
            _ => Request::Log {
                category: self.u8(4),
                max: self.u8(5),
            },
        }
    }

    /// The body of configuration request `type_id` (0x20 to 0x2B).
    fn configuration(&self, type_id: u8) -> Request<'a> {
        match type_id {
            0x20 => Request::TimeRes {
                numerator: self.u32(4),
                denominator: self.u32(8),
            },
            0x21 => Request::Steps {
                steps: self.u32(4),
                data_id: self.u16(8),
            },
            0x22 => Request::Input {
                data_id: self.u16(4),
                pos: self.u16(6),
                target_vr: self.u64(8),
                source_type: self.u8(16),
            },
            0x23 => Request::Output {
                data_id: self.u16(4),
                pos: self.u16(6),
                source_vr: self.u64(8),
            },
            0x24 => Request::Clear,
            0x25 => Request::TargetNetwork {
                data_id: self.u16(4),
                network: self.network(),
            },
            0x26 => Request::SourceNetwork {
                data_id: self.u16(4),
                network: self.network(),
            },
            0x27 => Request::Parameter {
                vr: self.u64(4),
                source_type: self.u8(12),
                value: self.rest(13),
            },
            0x28 => Request::TunableParameter {
                param_id: self.u16(4),
                pos: self.u16(6),
                vr: self.u64(8),
                source_type: self.u8(16),
            },
            0x29 => Request::ParamNetwork {
                param_id: self.u16(4),
                network: self.network(),
            },
            0x2A => Request::Logging {
                category: self.u8(4),
                level: self.u8(5),
                mode: self.u8(6),
            },
            // 0x2B, the one configuration type left.
            _ => Request::Scope {
                data_id: self.u16(4),
                scope: self.u8(6),
            },
        }
    }

    /// The body of response `type_id` (0xB0 to 0xB4).
    fn response(&self, type_id: u8) -> Response<'a> {
        match type_id {
            0xB0 => Response::Ack,
            0xB1 => Response::Nack {
                expected: self.u16(4),
                error: self.u16(6),
            },
            0xB2 => Response::StateAck { state: self.u8(4) },
            0xB3 => Response::ErrorAck { error: self.u16(4) },
            // 0xB4, the one response type left.
            _ => Response::LogAck { entries: self.rest(4) },
        }
    }
}

/// The fixed length of PDU `type_id` (one [`name`] knows), or the least
/// for a variable one; and whether it is variable.
fn length(type_id: u8) -> (usize, bool) {
    match type_id {
        0x01 => (24, false),
        0x02..=0x05 | 0x08..=0x0A => (5, false),
        0x06 => (13, false),
        0x07 => (9, false),
        0x20 => (12, false),
        0x21 => (10, false),
        0x22 | 0x28 => (17, false),
        0x23 => (16, false),
        0x24 | 0x80 | 0x81 | 0xB0 => (4, false),
        0x25 | 0x26 | 0x29 => (7, true),
        0x27 => (13, true),
        0x2A | 0x2B => (7, false),
        0x82 => (6, false),
        0xB1 => (8, false),
        0xB2 => (5, false),
        0xB3 => (6, false),
        0xB4 => (4, true),
        0xE0 => (3, false),
        0xE1 => (11, true),
        _ => (5, true), // 0xF0, 0xF1
    }
}

impl<'a> Pdu<'a> {
    /// Decodes one datagram.
    pub fn read(bytes: &'a [u8]) -> Result<Pdu<'a>, PduError> {
        let &type_id = bytes.first().ok_or(PduError::Empty)?;
        let name = name(type_id).ok_or(PduError::UnknownType(type_id))?;
        let found = bytes.len();
        let (expected, variable) = length(type_id);
        if found < expected || (!variable && found != expected) {
            return Err(PduError::Length {
                type_id,
                name,
                expected,
                found,
            });
        }
        let f = Fields(bytes);
        Ok(match type_id {
            0x01..=0xAF => Pdu::Request {
                seq: f.u16(1),
                receiver: f.u8(3),
                body: f.request(type_id),
            },
            0xB0..=0xBF => Pdu::Response {
                seq: f.u16(1),
                sender: f.u8(3),
                body: f.response(type_id),
            },
            0xE0 => Pdu::StateChanged {
                sender: f.u8(1),
                state: f.u8(2),
            },
            0xE1 => Pdu::Log {
                sender: f.u8(1),
                time: f.u64(2) as i64,
                template: f.u8(10),
                args: f.rest(11),
            },
            _ => Pdu::Data {
                kind: if type_id == 0xF0 {
                    DataKind::InputOutput
                } else {
                    DataKind::Parameter
                },
                seq: f.u16(1),
                id: f.u16(3),
                payload: f.rest(5),
            },
        })
    }

    /// Encodes into `out` (cleared first; no allocation once `out` has
    /// room for the PDU).
    pub fn write(&self, out: &mut Vec<u8>) {
        out.clear();
        match *self {
            Pdu::Request { seq, receiver, body } => {
                out.push(body.type_id());
                out.extend_from_slice(&seq.to_le_bytes());
                out.push(receiver);
                body.write_fields(out);
            }
            Pdu::Response { seq, sender, body } => {
                let type_id = match body {
                    Response::Ack => 0xB0,
                    Response::Nack { .. } => 0xB1,
                    Response::StateAck { .. } => 0xB2,
                    Response::ErrorAck { .. } => 0xB3,
                    Response::LogAck { .. } => 0xB4,
                };
                out.push(type_id);
                out.extend_from_slice(&seq.to_le_bytes());
                out.push(sender);
                match body {
                    Response::Ack => {}
                    Response::Nack { expected, error } => {
                        out.extend_from_slice(&expected.to_le_bytes());
                        out.extend_from_slice(&error.to_le_bytes());
                    }
                    Response::StateAck { state } => out.push(state),
                    Response::ErrorAck { error } => out.extend_from_slice(&error.to_le_bytes()),
                    Response::LogAck { entries } => out.extend_from_slice(entries),
                }
            }
            Pdu::StateChanged { sender, state } => out.extend_from_slice(&[0xE0, sender, state]),
            Pdu::Log {
                sender,
                time,
                template,
                args,
            } => {
                out.extend_from_slice(&[0xE1, sender]);
                out.extend_from_slice(&time.to_le_bytes());
                out.push(template);
                out.extend_from_slice(args);
            }
            Pdu::Data { kind, seq, id, payload } => {
                Pdu::data_header(kind, seq, id, out);
                out.extend_from_slice(payload);
            }
        }
    }

    /// The PDU's bytes, in a buffer of their own.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(&mut out);
        out
    }

    /// Starts a data PDU in `out` (cleared first); its payload is appended
    /// after.
    pub fn data_header(kind: DataKind, seq: u16, id: u16, out: &mut Vec<u8>) {
        out.clear();
        out.push(match kind {
            DataKind::InputOutput => 0xF0,
            DataKind::Parameter => 0xF1,
        });
        out.extend_from_slice(&seq.to_le_bytes());
        out.extend_from_slice(&id.to_le_bytes());
    }
}

impl Request<'_> {
    /// The PDU's type id.
    pub fn type_id(&self) -> u8 {
        match self {
            Request::Register { .. } => 0x01,
            Request::Deregister { .. } => 0x02,
            Request::Prepare { .. } => 0x03,
            Request::Configure { .. } => 0x04,
            Request::Initialize { .. } => 0x05,
            Request::Run { .. } => 0x06,
            Request::DoStep { .. } => 0x07,
            Request::SendOutputs { .. } => 0x08,
            Request::Stop { .. } => 0x09,
            Request::Reset { .. } => 0x0A,
            Request::TimeRes { .. } => 0x20,
            Request::Steps { .. } => 0x21,
            Request::Input { .. } => 0x22,
            Request::Output { .. } => 0x23,
            Request::Clear => 0x24,
            Request::TargetNetwork { .. } => 0x25,
            Request::SourceNetwork { .. } => 0x26,
            Request::Parameter { .. } => 0x27,
            Request::TunableParameter { .. } => 0x28,
            Request::ParamNetwork { .. } => 0x29,
            Request::Logging { .. } => 0x2A,
            Request::Scope { .. } => 0x2B,
            Request::State => 0x80,
            Request::Error => 0x81,
            Request::Log { .. } => 0x82,
        }
    }

    /// The specification's name of the PDU.
    pub fn name(&self) -> &'static str {
        name(self.type_id()).unwrap_or("?")
    }

    /// The state a state-change request names, if it is one.
    pub fn state(&self) -> Option<u8> {
        match *self {
            Request::Register { state, .. }
            | Request::Deregister { state }
            | Request::Prepare { state }
            | Request::Configure { state }
            | Request::Initialize { state }
            | Request::Run { state, .. }
            | Request::DoStep { state, .. }
            | Request::SendOutputs { state }
            | Request::Stop { state }
            | Request::Reset { state } => Some(state),
            _ => None,
        }
    }

    /// A state-change request of type `type_id` naming `state`, for those
    /// with no other field.
    pub fn transition(type_id: u8, state: State) -> Option<Request<'static>> {
        let state = state.code();
        Some(match type_id {
            0x02 => Request::Deregister { state },
            0x03 => Request::Prepare { state },
            0x04 => Request::Configure { state },
            0x05 => Request::Initialize { state },
            0x08 => Request::SendOutputs { state },
            0x09 => Request::Stop { state },
            0x0A => Request::Reset { state },
            _ => return None,
        })
    }

    /// Appends the fields after the common header.
    fn write_fields(&self, out: &mut Vec<u8>) {
        if let Some(state) = self.state() {
            out.push(state);
        }
        let network = |out: &mut Vec<u8>, id: u16, n: &Network<'_>| {
            out.extend_from_slice(&id.to_le_bytes());
            out.push(n.transport);
            out.extend_from_slice(n.address);
        };
        match *self {
            Request::Register {
                uuid,
                op_mode,
                major,
                minor,
                ..
            } => {
                out.extend_from_slice(&uuid);
                out.extend_from_slice(&[op_mode, major, minor]);
            }
            Request::Run { start, .. } => out.extend_from_slice(&start.to_le_bytes()),
            Request::DoStep { steps, .. } => out.extend_from_slice(&steps.to_le_bytes()),
            Request::TimeRes { numerator, denominator } => {
                out.extend_from_slice(&numerator.to_le_bytes());
                out.extend_from_slice(&denominator.to_le_bytes());
            }
            Request::Steps { steps, data_id } => {
                out.extend_from_slice(&steps.to_le_bytes());
                out.extend_from_slice(&data_id.to_le_bytes());
            }
            Request::Input {
                data_id,
                pos,
                target_vr,
                source_type,
            } => {
                out.extend_from_slice(&data_id.to_le_bytes());
                out.extend_from_slice(&pos.to_le_bytes());
                out.extend_from_slice(&target_vr.to_le_bytes());
                out.push(source_type);
            }
            Request::Output {
                data_id,
                pos,
                source_vr,
            } => {
                out.extend_from_slice(&data_id.to_le_bytes());
                out.extend_from_slice(&pos.to_le_bytes());
                out.extend_from_slice(&source_vr.to_le_bytes());
            }
            Request::TargetNetwork { data_id, network: n } | Request::SourceNetwork { data_id, network: n } => {
                network(out, data_id, &n)
            }
            Request::ParamNetwork { param_id, network: n } => network(out, param_id, &n),
            Request::Parameter { vr, source_type, value } => {
                out.extend_from_slice(&vr.to_le_bytes());
                out.push(source_type);
                out.extend_from_slice(value);
            }
            Request::TunableParameter {
                param_id,
                pos,
                vr,
                source_type,
            } => {
                out.extend_from_slice(&param_id.to_le_bytes());
                out.extend_from_slice(&pos.to_le_bytes());
                out.extend_from_slice(&vr.to_le_bytes());
                out.push(source_type);
            }
            Request::Logging { category, level, mode } => out.extend_from_slice(&[category, level, mode]),
            Request::Scope { data_id, scope } => {
                out.extend_from_slice(&data_id.to_le_bytes());
                out.push(scope);
            }
            Request::Log { category, max } => out.extend_from_slice(&[category, max]),
            Request::Deregister { .. }
            | Request::Prepare { .. }
            | Request::Configure { .. }
            | Request::Initialize { .. }
            | Request::SendOutputs { .. }
            | Request::Stop { .. }
            | Request::Reset { .. }
            | Request::Clear
            | Request::State
            | Request::Error => {}
        }
    }
}

/// The full count of a 16-bit sequence id `seq`, given the full count
/// `last` of the one before it (the nearest count with these low bits).
pub fn unwrap_seq(last: Option<i64>, seq: u16) -> i64 {
    let Some(last) = last else {
        return seq as i64;
    };
    let delta = seq.wrapping_sub(last as u16) as i16;
    last.saturating_add(delta as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_ids_unwrap_across_their_wrap() {
        assert_eq!(unwrap_seq(None, 5), 5);
        assert_eq!(unwrap_seq(Some(65535), 0), 65536);
        assert_eq!(unwrap_seq(Some(65536), 65535), 65535);
        assert_eq!(unwrap_seq(Some(70000), (70003 % 65536) as u16), 70003);
    }

    #[test]
    fn every_request_round_trips() {
        let mut scratch = [0; 6];
        let network = Network::udp(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 5000), &mut scratch);
        let requests = [
            Request::Register {
                state: 0,
                uuid: [7; 16],
                op_mode: 2,
                major: 1,
                minor: 0,
            },
            Request::Run { state: 5, start: -3 },
            Request::DoStep {
                state: 11,
                steps: 70000,
            },
            Request::TimeRes {
                numerator: 1,
                denominator: 1000,
            },
            Request::Steps { steps: 3, data_id: 9 },
            Request::Input {
                data_id: 1,
                pos: 2,
                target_vr: u64::MAX,
                source_type: 9,
            },
            Request::Output {
                data_id: 1,
                pos: 2,
                source_vr: 5,
            },
            Request::Clear,
            Request::TargetNetwork { data_id: 4, network },
            Request::Parameter {
                vr: 3,
                source_type: 10,
                value: b"\x02\0\0\0hi",
            },
            Request::Scope { data_id: 4, scope: 2 },
            Request::State,
            Request::Log { category: 0, max: 5 },
        ];
        let mut buf = Vec::new();
        for body in requests {
            let pdu = Pdu::Request {
                seq: 0xBEEF,
                receiver: 3,
                body,
            };
            pdu.write(&mut buf);
            assert_eq!(Pdu::read(&buf), Ok(pdu), "{}", body.name());
        }
        if let Ok(Pdu::Request {
            body: Request::TargetNetwork { network, .. },
            ..
        }) = Pdu::read(&{
            Pdu::Request {
                seq: 0,
                receiver: 1,
                body: Request::TargetNetwork { data_id: 4, network },
            }
            .write(&mut buf);
            buf.clone()
        }) {
            assert_eq!(
                network.as_udp(),
                Some(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 5000))
            );
        } else {
            panic!("network information did not decode");
        }
    }

    #[test]
    fn wrong_lengths_and_types_are_errors_not_panics() {
        assert_eq!(Pdu::read(&[]), Err(PduError::Empty));
        assert_eq!(Pdu::read(&[0x55]), Err(PduError::UnknownType(0x55)));
        assert!(matches!(
            Pdu::read(&[0x07, 0, 0, 1, 11, 1, 0, 0]),
            Err(PduError::Length {
                expected: 9,
                found: 8,
                ..
            })
        ));
        assert!(matches!(Pdu::read(&[0xF0, 0, 0]), Err(PduError::Length { .. })));
        assert_eq!(request_header(&[0x07, 2, 1, 9]), Some((0x07, 0x0102, 9)));
        assert_eq!(request_header(&[0xB0, 2, 1, 9]), None);
        for len in 0..40 {
            for t in 0..=255u8 {
                let mut bytes = vec![0xA5; len];
                if let Some(b) = bytes.first_mut() {
                    *b = t;
                }
                let _ = Pdu::read(&bytes);
            }
        }
    }
}
