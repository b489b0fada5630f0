//! Every PDU against its byte layout as the DCP 1.0 specification's
//! tables give it (section 3.3.7, tables 65 to 99; all values
//! little-endian and packed; UDP/IPv4 network information from table
//! 134: port, then the address). The bytes are written out by hand from
//! the tables, not produced by the implementation.

use std::net::{Ipv4Addr, SocketAddrV4};

use tandem_dcp::pdu::{DataKind, Network, Pdu, Request, Response};

/// `pdu` encodes to `bytes`, and `bytes` decode to `pdu`.
fn both_ways(pdu: Pdu<'_>, bytes: &[u8]) {
    let mut out = Vec::new();
    pdu.write(&mut out);
    assert_eq!(out, bytes, "{pdu:?} encodes differently");
    assert_eq!(Pdu::read(bytes), Ok(pdu), "{bytes:02X?} decodes differently");
}

fn req(seq: u16, receiver: u8, body: Request<'_>) -> Pdu<'_> {
    Pdu::Request { seq, receiver, body }
}

#[test]
fn state_change_requests() {
    // STC_register: type 0x01, pdu_seq_id u16, receiver u8, state_id u8,
    // slave_uuid 16 bytes, op_mode u8, major u8, minor u8 (24 bytes).
    let uuid = [
        0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x1F,
    ];
    let mut register = vec![0x01, 0x34, 0x12, 0x05, 0x00];
    register.extend_from_slice(&uuid);
    register.extend_from_slice(&[0x02, 0x01, 0x00]);
    assert_eq!(register.len(), 24);
    both_ways(
        req(
            0x1234,
            5,
            Request::Register {
                state: 0,
                uuid,
                op_mode: 2,
                major: 1,
                minor: 0,
            },
        ),
        &register,
    );
    // The five-byte ones: type, seq, receiver, state_id.
    both_ways(
        req(1, 2, Request::Deregister { state: 0x10 }),
        &[0x02, 0x01, 0x00, 0x02, 0x10],
    );
    both_ways(
        req(1, 2, Request::Prepare { state: 0x01 }),
        &[0x03, 0x01, 0x00, 0x02, 0x01],
    );
    both_ways(
        req(1, 2, Request::Configure { state: 0x03 }),
        &[0x04, 0x01, 0x00, 0x02, 0x03],
    );
    both_ways(
        req(1, 2, Request::Initialize { state: 0x05 }),
        &[0x05, 0x01, 0x00, 0x02, 0x05],
    );
    both_ways(
        req(1, 2, Request::SendOutputs { state: 0x0D }),
        &[0x08, 0x01, 0x00, 0x02, 0x0D],
    );
    both_ways(
        req(1, 2, Request::Stop { state: 0x0B }),
        &[0x09, 0x01, 0x00, 0x02, 0x0B],
    );
    both_ways(
        req(1, 2, Request::Reset { state: 0x10 }),
        &[0x0A, 0x01, 0x00, 0x02, 0x10],
    );
    // STC_run: + time i64 (13 bytes). 1 700 000 000 s = 0x6553F100.
    both_ways(
        req(
            0xFFFF,
            1,
            Request::Run {
                state: 0x05,
                start: 1_700_000_000,
            },
        ),
        &[
            0x06, 0xFF, 0xFF, 0x01, 0x05, 0x00, 0xF1, 0x53, 0x65, 0x00, 0x00, 0x00, 0x00,
        ],
    );
    // STC_do_step: + steps u32 (9 bytes).
    both_ways(
        req(
            7,
            1,
            Request::DoStep {
                state: 0x0B,
                steps: 0x01020304,
            },
        ),
        &[0x07, 0x07, 0x00, 0x01, 0x0B, 0x04, 0x03, 0x02, 0x01],
    );
}

#[test]
fn configuration_requests() {
    // CFG_time_res: numerator u32, denominator u32 (12 bytes).
    both_ways(
        req(
            2,
            1,
            Request::TimeRes {
                numerator: 1,
                denominator: 1000,
            },
        ),
        &[0x20, 0x02, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0xE8, 0x03, 0x00, 0x00],
    );
    // CFG_steps: steps u32, then data_id u16 (10 bytes).
    both_ways(
        req(
            3,
            1,
            Request::Steps {
                steps: 10,
                data_id: 0x0102,
            },
        ),
        &[0x21, 0x03, 0x00, 0x01, 0x0A, 0x00, 0x00, 0x00, 0x02, 0x01],
    );
    // CFG_input: data_id u16, pos u16, target_vr u64, source_data_type u8 (17).
    both_ways(
        req(
            4,
            1,
            Request::Input {
                data_id: 1,
                pos: 2,
                target_vr: 0x0A0B,
                source_type: 0x09,
            },
        ),
        &[
            0x22, 0x04, 0x00, 0x01, 0x01, 0x00, 0x02, 0x00, 0x0B, 0x0A, 0, 0, 0, 0, 0, 0, 0x09,
        ],
    );
    // CFG_output: data_id u16, pos u16, source_vr u64 (16).
    both_ways(
        req(
            5,
            1,
            Request::Output {
                data_id: 1,
                pos: 0,
                source_vr: 7,
            },
        ),
        &[
            0x23, 0x05, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x07, 0, 0, 0, 0, 0, 0, 0,
        ],
    );
    // CFG_clear: the header alone (4).
    both_ways(req(6, 1, Request::Clear), &[0x24, 0x06, 0x00, 0x01]);
    // CFG_target/source_network_information over UDP/IPv4: data_id u16,
    // transport_protocol u8 (0 = UDP_IPv4), port u16, ip_address u32 (13).
    // The address as a little-endian u32 whose high byte is the first
    // octet: 192.168.2.6 is 06 02 A8 C0 (the specification gives no order;
    // this is the reference implementation's), port 60000 is 60 EA.
    let mut scratch = [0; 6];
    let network = Network::udp(SocketAddrV4::new(Ipv4Addr::new(192, 168, 2, 6), 60000), &mut scratch);
    let bytes = [
        0x25, 0x08, 0x00, 0x01, 0x03, 0x00, 0x00, 0x60, 0xEA, 0x06, 0x02, 0xA8, 0xC0,
    ];
    both_ways(req(8, 1, Request::TargetNetwork { data_id: 3, network }), &bytes);
    let mut source = bytes;
    source[0] = 0x26;
    both_ways(req(8, 1, Request::SourceNetwork { data_id: 3, network }), &source);
    let mut param = bytes;
    param[0] = 0x29;
    both_ways(req(8, 1, Request::ParamNetwork { param_id: 3, network }), &param);
    // CFG_parameter: parameter_vr u64, source_data_type u8, then the value
    // (a string: u32 length and its bytes).
    both_ways(
        req(
            9,
            1,
            Request::Parameter {
                vr: 4,
                source_type: 0x0A,
                value: &[2, 0, 0, 0, b'h', b'i'],
            },
        ),
        &[
            0x27, 0x09, 0x00, 0x01, 0x04, 0, 0, 0, 0, 0, 0, 0, 0x0A, 2, 0, 0, 0, b'h', b'i',
        ],
    );
    // CFG_tunable_parameter: param_id u16, pos u16, parameter_vr u64, type u8 (17).
    both_ways(
        req(
            10,
            1,
            Request::TunableParameter {
                param_id: 1,
                pos: 0,
                vr: 4,
                source_type: 0x09,
            },
        ),
        &[
            0x28, 0x0A, 0x00, 0x01, 0x01, 0x00, 0x00, 0x00, 0x04, 0, 0, 0, 0, 0, 0, 0, 0x09,
        ],
    );
    // CFG_logging: category, level, mode (7). CFG_scope: data_id, scope (7).
    both_ways(
        req(
            11,
            1,
            Request::Logging {
                category: 0,
                level: 3,
                mode: 1,
            },
        ),
        &[0x2A, 0x0B, 0x00, 0x01, 0, 3, 1],
    );
    both_ways(
        req(12, 1, Request::Scope { data_id: 2, scope: 2 }),
        &[0x2B, 0x0C, 0x00, 0x01, 0x02, 0x00, 0x02],
    );
}

#[test]
fn information_requests_responses_notifications_and_data() {
    both_ways(req(1, 3, Request::State), &[0x80, 0x01, 0x00, 0x03]);
    both_ways(req(1, 3, Request::Error), &[0x81, 0x01, 0x00, 0x03]);
    both_ways(
        req(1, 3, Request::Log { category: 0, max: 10 }),
        &[0x82, 0x01, 0x00, 0x03, 0x00, 0x0A],
    );
    // RSP_ack: type, resp_seq_id u16, sender u8 (4).
    let rsp = |seq, sender, body| Pdu::Response { seq, sender, body };
    both_ways(rsp(0x0102, 3, Response::Ack), &[0xB0, 0x02, 0x01, 0x03]);
    // RSP_nack: + exp_seq_id u16, error_code u16 (8): 0x2013 is
    // INVALID_SEQUENCE_ID.
    both_ways(
        rsp(
            5,
            3,
            Response::Nack {
                expected: 4,
                error: 0x2013,
            },
        ),
        &[0xB1, 0x05, 0x00, 0x03, 0x04, 0x00, 0x13, 0x20],
    );
    // RSP_state_ack: + state_id (5). RSP_error_ack: + error_code u16 (6).
    both_ways(
        rsp(5, 3, Response::StateAck { state: 0x0B }),
        &[0xB2, 0x05, 0x00, 0x03, 0x0B],
    );
    both_ways(
        rsp(5, 3, Response::ErrorAck { error: 0x1002 }),
        &[0xB3, 0x05, 0x00, 0x03, 0x02, 0x10],
    );
    both_ways(
        rsp(5, 3, Response::LogAck { entries: &[9, 8] }),
        &[0xB4, 0x05, 0x00, 0x03, 9, 8],
    );
    // NTF_state_changed: type, sender, state_id (3, no sequence id).
    both_ways(Pdu::StateChanged { sender: 3, state: 0x05 }, &[0xE0, 0x03, 0x05]);
    // NTF_log: sender, time i64, log_template_id, arguments.
    both_ways(
        Pdu::Log {
            sender: 3,
            time: 1,
            template: 7,
            args: &[0xAA],
        },
        &[0xE1, 0x03, 1, 0, 0, 0, 0, 0, 0, 0, 0x07, 0xAA],
    );
    // DAT_input_output: type, pdu_seq_id u16, data_id u16, payload
    // (here a uint8 then a float32, packed: the specification's figure 35).
    let payload = [0x07, 0x00, 0x00, 0x80, 0x3F];
    both_ways(
        Pdu::Data {
            kind: DataKind::InputOutput,
            seq: 0,
            id: 1,
            payload: &payload,
        },
        &[0xF0, 0x00, 0x00, 0x01, 0x00, 0x07, 0x00, 0x00, 0x80, 0x3F],
    );
    both_ways(
        Pdu::Data {
            kind: DataKind::Parameter,
            seq: 0x0201,
            id: 4,
            payload: &[],
        },
        &[0xF1, 0x01, 0x02, 0x04, 0x00],
    );
}

#[test]
fn a_pdu_one_byte_short_or_long_is_refused_with_its_name() {
    let full = [0x07, 0x07, 0x00, 0x01, 0x0B, 0x04, 0x03, 0x02, 0x01];
    let e = Pdu::read(&full[..8]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "STC_do_step (type id 0x07) takes 9 bytes, this one has 8"
    );
    let mut long = full.to_vec();
    long.push(0);
    assert!(Pdu::read(&long).is_err());
}
