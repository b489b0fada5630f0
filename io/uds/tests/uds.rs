//! Tandem's UDS server on requests written out from ISO 14229-1's message
//! layouts: the negative response each malformed request earns, DID
//! encodings at their limits, DTC status bits, clearing one DTC, and S3.

use tandem_uds::{Server, ServerConfig, Session, S3_NS};

mod common;
use common::did;

fn server() -> Server {
    let dids = vec![
        did(0x0001, 1, false, 1.0, 0.0),
        did(0x0002, 2, true, 0.1, 100.0),
        did(0x0003, 8, true, 1.0, 0.0),
    ];
    Server::new(ServerConfig::new(dids, vec![0x0A0B0C, 0x112233])).unwrap()
}

const VALUES: [f64; 3] = [300.0, 90.0, -1.0];

fn answer(server: &mut Server, request: &[u8]) -> Option<Vec<u8>> {
    server.handle(request, &VALUES, 0).map(<[u8]>::to_vec)
}

#[test]
fn malformed_requests_get_the_standard_negative_responses() {
    let mut s = server();
    let cases: [(&[u8], [u8; 3]); 14] = [
        (&[0x10], [0x7F, 0x10, 0x13]),
        (&[0x10, 0x04], [0x7F, 0x10, 0x12]),
        (&[0x10, 0x01, 0x00], [0x7F, 0x10, 0x13]),
        (&[0x3E, 0x01], [0x7F, 0x3E, 0x12]),
        (&[0x3E], [0x7F, 0x3E, 0x13]),
        (&[0x22], [0x7F, 0x22, 0x13]),
        (&[0x22, 0x00, 0x01, 0x00], [0x7F, 0x22, 0x13]),
        (&[0x22, 0x77, 0x77], [0x7F, 0x22, 0x31]),
        (&[0x19, 0x03], [0x7F, 0x19, 0x12]),
        (&[0x19, 0x02], [0x7F, 0x19, 0x13]),
        (&[0x19, 0x0A, 0xFF], [0x7F, 0x19, 0x13]),
        (&[0x14, 0xFF, 0xFF], [0x7F, 0x14, 0x13]),
        (&[0x14, 0x00, 0x00, 0x01], [0x7F, 0x14, 0x31]),
        (&[0x31, 0x01, 0x02, 0x03], [0x7F, 0x31, 0x11]),
    ];
    for (request, response) in cases {
        assert_eq!(
            answer(&mut s, request).as_deref(),
            Some(&response[..]),
            "{request:02X?}"
        );
    }
    assert_eq!(answer(&mut s, &[]), None);
}

#[test]
fn dids_saturate_and_unknown_ones_are_left_out() {
    let mut s = server();
    // 300 saturates one unsigned byte; (90 - 100) / 0.1 = -100 = 0xFF9C; -1 in eight bytes.
    let response = answer(&mut s, &[0x22, 0x00, 0x01, 0x12, 0x34, 0x00, 0x02, 0x00, 0x03]).unwrap();
    let expected = [
        &[0x62, 0x00, 0x01, 0xFF][..],
        &[0x00, 0x02, 0xFF, 0x9C],
        &[0x00, 0x03, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
    ]
    .concat();
    assert_eq!(response, expected);
    assert_eq!(
        s.handle(&[0x22, 0x00, 0x01], &[f64::NAN, 0.0, 0.0], 0),
        Some(&[0x7F, 0x22, 0x22][..])
    );
}

#[test]
fn dtc_status_follows_test_results_and_clears_one_code() {
    let mut s = server();
    assert_eq!(
        answer(&mut s, &[0x19, 0x0A]).unwrap(),
        [0x59, 0x0A, 0x3F, 0x0A, 0x0B, 0x0C, 0x10, 0x11, 0x22, 0x33, 0x10]
    );
    s.report(0, true);
    s.report(1, true);
    s.report(1, false);
    // testFailed only while failing; the rest latch.
    assert_eq!(
        answer(&mut s, &[0x19, 0x02, 0x01]).unwrap(),
        [0x59, 0x02, 0x3F, 0x0A, 0x0B, 0x0C, 0x2F]
    );
    assert_eq!(
        answer(&mut s, &[0x19, 0x01, 0x08]).unwrap(),
        [0x59, 0x01, 0x3F, 0x01, 0x00, 0x02]
    );
    assert_eq!(answer(&mut s, &[0x14, 0x11, 0x22, 0x33]).unwrap(), [0x54]);
    assert_eq!(
        answer(&mut s, &[0x19, 0x02, 0xFF]).unwrap()[3..],
        [0x0A, 0x0B, 0x0C, 0x2F, 0x11, 0x22, 0x33, 0x10]
    );
}

#[test]
fn sessions_answer_their_timing_and_fall_back_after_s3() {
    let mut s = server();
    // P2 50 ms = 0x0032; P2* 5000 ms in 10 ms units = 0x01F4.
    assert_eq!(
        s.handle(&[0x10, 0x03], &VALUES, 1),
        Some(&[0x50, 0x03, 0x00, 0x32, 0x01, 0xF4][..])
    );
    assert_eq!(s.session(), Session::Extended);
    assert_eq!(
        s.handle(&[0x3E, 0x80], &VALUES, S3_NS),
        None,
        "suppressed positive response"
    );
    assert_eq!(s.session(), Session::Extended, "TesterPresent kept it");
    s.handle(&[0x3E, 0x00], &VALUES, 2 * S3_NS + 2);
    assert_eq!(s.session(), Session::Default, "S3 expired first");
}
