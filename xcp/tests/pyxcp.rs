//! pyXCP (PyPI `pyxcp`) as the master of the demo slave over UDP and over
//! TCP: tests/pyxcp_master.py connects, reads the A2L name and text,
//! measures, calibrates, switches pages and records a DAQ list on the
//! 1 kHz event, checking each sample against the demo's closed form.
//! A second master is refused while the first is connected, its answer
//! taking nothing from the first master's packet counter.

use std::io::{Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::process::Command;
use std::time::Duration;

#[path = "../examples/demo_slave.rs"]
#[allow(dead_code)] // its `main` is the example's, unused here
mod demo;

fn require_pyxcp() {
    let ok = Command::new("python3").args(["-c", "import pyxcp"]).status();
    assert!(
        ok.is_ok_and(|s| s.success()),
        "python3 cannot import pyxcp: run .ci/run (it pip-installs pyxcp)"
    );
}

fn master(protocol: &str) {
    let running = demo::start("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = match protocol {
        "UDP" => running.server.udp_addr().port(),
        _ => running.server.tcp_addr().port(),
    };
    let out = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/pyxcp_master.py"))
        .args([protocol, &port.to_string()])
        .output()
        .unwrap();
    running.stop();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.lines().any(|l| l.starts_with("ok ")),
        "pyXCP over {protocol} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn pyxcp_masters_the_demo_slave_over_udp() {
    require_pyxcp();
    master("UDP");
}

#[test]
fn pyxcp_masters_the_demo_slave_over_tcp() {
    require_pyxcp();
    master("TCP");
}

/// One framed command over UDP and its answer.
fn ask(socket: &UdpSocket, packet: &[u8]) -> Vec<u8> {
    ask_counted(socket, packet).1
}

/// One framed command over UDP: its answer's counter (CTR) and packet.
fn ask_counted(socket: &UdpSocket, packet: &[u8]) -> (u16, Vec<u8>) {
    let mut d = Vec::new();
    tandem_xcp::packet::frame(0, packet, &mut d);
    socket.send(&d).unwrap();
    let mut buf = [0u8; 1500];
    let n = socket.recv(&mut buf).unwrap();
    (u16::from_le_bytes([buf[2], buf[3]]), buf[4..n].to_vec())
}

/// One framed command over TCP: its answer's counter and packet.
fn ask_tcp(stream: &mut TcpStream, packet: &[u8]) -> (u16, Vec<u8>) {
    let mut d = Vec::new();
    tandem_xcp::packet::frame(0, packet, &mut d);
    stream.write_all(&d).unwrap();
    let mut header = [0u8; 4];
    stream.read_exact(&mut header).unwrap();
    let mut body = vec![0u8; u16::from_le_bytes([header[0], header[1]]) as usize];
    stream.read_exact(&mut body).unwrap();
    (u16::from_le_bytes([header[2], header[3]]), body)
}

#[test]
fn a_second_master_is_answered_busy_until_the_first_disconnects() {
    let running = demo::start("127.0.0.1:0".parse().unwrap()).unwrap();
    let socket = |_| {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.connect(running.server.udp_addr()).unwrap();
        s
    };
    let (first, second) = (socket(1), socket(2));
    assert_eq!(ask(&first, &[0xFF, 0])[0], 0xFF);
    assert_eq!(ask(&second, &[0xFF, 0]), [0xFE, 0x10], "ERR_CMD_BUSY");
    assert_eq!(ask(&first, &[0xFE]), [0xFF]);
    assert_eq!(ask(&second, &[0xFF, 0])[0], 0xFF);
    running.stop();
}

#[test]
fn the_busy_answer_to_a_second_master_takes_nothing_from_the_first_masters_counter() {
    let running = demo::start("127.0.0.1:0".parse().unwrap()).unwrap();
    let udp = || {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.connect(running.server.udp_addr()).unwrap();
        s
    };
    // Over UDP: CONNECT, a second master's CONNECT, GET_STATUS.
    let (first, second) = (udp(), udp());
    let (c0, connected) = ask_counted(&first, &[0xFF, 0]);
    assert_eq!(connected[0], 0xFF);
    assert_eq!(ask_counted(&second, &[0xFF, 0]), (0, vec![0xFE, 0x10]), "ERR_CMD_BUSY");
    let (c1, status) = ask_counted(&first, &[0xFD]);
    assert_eq!(status[0], 0xFF);
    assert_eq!(c1, c0.wrapping_add(1), "the first master's counter skipped");
    assert_eq!(ask_counted(&first, &[0xFE]).0, c0.wrapping_add(2));

    // Over TCP: a second connection is answered busy and closed.
    let tcp = || {
        let s = TcpStream::connect(running.server.tcp_addr()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s
    };
    let mut first = tcp();
    let (c0, connected) = ask_tcp(&mut first, &[0xFF, 0]);
    assert_eq!(connected[0], 0xFF);
    let mut second = tcp();
    assert_eq!(ask_tcp(&mut second, &[0xFF, 0]), (0, vec![0xFE, 0x10]), "ERR_CMD_BUSY");
    let (c1, status) = ask_tcp(&mut first, &[0xFD]);
    assert_eq!(status[0], 0xFF);
    assert_eq!(c1, c0.wrapping_add(1), "the first master's counter skipped");
    running.stop();
}
