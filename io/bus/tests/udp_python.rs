//! Tandem's CAN over UDP against python-can's `udp_multicast` interface:
//! frames of every kind go out from Tandem, python-can echoes each back
//! with a new identifier, and Tandem decodes what python-can packed.

#[path = "../../../tests/support/peer_process.rs"]
mod peer_process;

use std::process::Command;
use std::time::{Duration, Instant};

use peer_process::start_ready;
use tandem_bus::udp::{open, UdpOptions};
use tandem_can::{CanFrame, CanId};

#[test]
fn python_can_and_tandem_exchange_frames_over_udp_multicast() {
    let ok = Command::new("python3").args(["-c", "import can, msgpack"]).status();
    assert!(
        ok.is_ok_and(|s| s.success()),
        "python-can missing: run .ci/run (it pip-installs python-can and cantools)"
    );
    let port = 43311;
    let mut bus = open(&UdpOptions {
        port,
        ..UdpOptions::default()
    })
    .unwrap();
    let std = |id| CanId::standard(id).unwrap();
    let frames = [
        CanFrame::data(std(0x001), &[]).unwrap(),
        CanFrame::data(std(0x123), &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap(),
        CanFrame::data(CanId::extended(0x1AB).unwrap(), &[0xDE, 0xAD]).unwrap(),
        CanFrame::remote(std(0x0FF), 4).unwrap(),
        CanFrame::fd(std(0x200), &[0x5A; 64], true, false).unwrap(),
        CanFrame::fd(std(0x201), &[1; 12], false, false).unwrap(),
    ];
    let (mut peer, _out) = start_ready(
        Command::new("python3")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/udp_echo.py"))
            .args([port.to_string(), frames.len().to_string()]),
    );
    for frame in &frames {
        bus.tx.send(frame).unwrap();
    }
    let mut echoes = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while echoes.len() < frames.len() && Instant::now() < deadline {
        if let Some(r) = bus.rx.recv(Duration::from_millis(100)).unwrap() {
            assert!(r.source_time.is_some(), "python-can stamps its frames");
            echoes.push(r.frame);
        }
    }
    peer.wait().unwrap();
    assert_eq!(echoes.len(), frames.len(), "echoes: {echoes:?}");
    for (sent, echo) in frames.iter().zip(&echoes) {
        let id = match sent.id() {
            CanId::Standard(id) => CanId::standard(id + 0x400).unwrap(),
            CanId::Extended(id) => CanId::extended(id + 0x400).unwrap(),
        };
        assert_eq!(echo.id(), id);
        assert_eq!(
            (echo.kind(), echo.len(), echo.payload()),
            (sent.kind(), sent.len(), sent.payload())
        );
    }
}
