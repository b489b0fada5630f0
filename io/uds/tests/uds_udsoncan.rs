//! Tandem's UDS server on Tandem's ISO-TP on a CAN-over-UDP node, against
//! udsoncan's client on python-can-isotp (`tests/peers/uds_peer.py`):
//! sessions with their P2 and P2*, TesterPresent with and without the
//! positive response, several DIDs in one request decoded by udsoncan to the
//! integers the encodings give, the negative responses, and a DTC's status
//! through a failing test, a passing one and a clear.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use tandem_bus::udp::{open, UdpOptions};
use tandem_can::CanId;
use tandem_uds::isotp::{Config, Link};
use tandem_uds::{Server, ServerConfig};

mod common;
use common::did;

const PEER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/uds_peer.py");

/// Serves until `stop`, reporting DTC 0x123456's test as `failing` and
/// 0xABCDEF's as passing before each request; 0x000001 is never tested.
fn serve(port: u16, fd: bool, failing: Arc<AtomicBool>, stop: Arc<AtomicBool>) -> thread::JoinHandle<()> {
    let duplex = open(&UdpOptions {
        port,
        ..UdpOptions::default()
    })
    .unwrap();
    let id = |n| CanId::standard(n).unwrap();
    let config = Config {
        fd,
        tx_dl: if fd { 64 } else { 8 },
        padding: Some(0xAA),
        block_size: 8,
        st_min: 0xF2,
        ..Config::classic(id(0x7E8), id(0x7E0))
    };
    let mut link = Link::new(config, duplex).unwrap();
    let dids = vec![
        did(0xF40D, 2, false, 0.01, 0.0),
        did(0x0101, 1, true, 0.5, -10.0),
        did(0x0202, 4, false, 1.0, 0.0),
        did(0x0303, 2, false, 1.0, 0.0),
    ];
    let mut server = Server::new(ServerConfig::new(dids, vec![0x123456, 0xABCDEF, 0x000001])).unwrap();
    let values = [87.654, -25.3, 1e12, f64::NAN];
    let epoch = Instant::now();
    let mut request = vec![0; 4095];
    thread::spawn(move || {
        while !stop.load(Ordering::Relaxed) {
            let len = match link.recv(Duration::from_millis(50)).unwrap() {
                Some(r) => {
                    request[..r.len()].copy_from_slice(r);
                    r.len()
                }
                None => continue,
            };
            server.report(0, failing.load(Ordering::Relaxed));
            server.report(1, false);
            let now = epoch.elapsed().as_nanos() as u64;
            if let Some(response) = server.handle(&request[..len], &values, now) {
                link.send(response, Duration::from_secs(5)).unwrap();
            }
        }
    })
}

fn run(port: u16, fd: bool) {
    let found = Command::new("python3")
        .args(["-c", "import udsoncan, isotp, can"])
        .status();
    assert!(
        found.is_ok_and(|s| s.success()),
        "udsoncan or python-can-isotp missing: run .ci/run (it pip-installs udsoncan and can-isotp)"
    );
    let (failing, stop) = (Arc::new(AtomicBool::new(true)), Arc::new(AtomicBool::new(false)));
    let server = serve(port, fd, failing.clone(), stop.clone());
    let mut peer = Command::new("python3")
        .args([PEER, &port.to_string(), if fd { "fd" } else { "classic" }])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = peer.stdin.take().unwrap();
    let mut read = HashMap::new();
    for line in BufReader::new(peer.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        let (key, value) = line.split_once('=').unwrap_or_else(|| panic!("peer said {line:?}"));
        if (key, value) == ("phase", "1") {
            failing.store(false, Ordering::Relaxed);
            writeln!(input, "go").unwrap();
        }
        read.insert(key.to_string(), value.to_string());
    }
    let status = peer.wait().unwrap();
    stop.store(true, Ordering::Relaxed);
    server.join().unwrap();
    assert!(status.success(), "peer failed; it read {read:?}");
    // Raw values: round((value - offset) / scale), saturated: 87.654 / 0.01,
    // (-25.3 + 10) / 0.5, 1e12 beyond 32 bits.
    let expected = [
        ("session", "3 0.05 5.0"),
        ("tester_present", "True"),
        ("tester_present_suppressed", "None"),
        ("dids", "0101:-31 0202:4294967295 F40D:8765"),
        ("did_unavailable", "0x22"),
        ("did_unknown", "0x31"),
        ("confirmed_count", "1 3F"),
        ("confirmed", "123456:2F"),
        ("supported", "123456:2F ABCDEF:00 000001:10"),
        ("supported_after_pass", "123456:2E ABCDEF:00 000001:10"),
        ("supported_after_clear", "123456:00 ABCDEF:00 000001:10"),
        ("security_access", "0x11"),
        ("bad_session", "0x12"),
        ("session_back", "1"),
        ("phase", "2"),
    ];
    for (key, value) in expected {
        assert_eq!(read.get(key).map(String::as_str), Some(value), "{key}");
    }
}

#[test]
fn udsoncan_reads_dids_and_dtcs_on_classic_can() {
    run(43331, false);
}

#[test]
fn udsoncan_reads_dids_and_dtcs_on_can_fd() {
    run(43332, true);
}
