//! The SLCAN transport over pseudo-terminals: with python-can's `slcan`
//! interface at the other end, with the test playing an adapter (timestamps,
//! garbage, refusals), with a full port, and with a port that vanishes and
//! comes back.

mod serial_support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serial_support::{point_link, require_python_can, timed, Pty, Relay, ScratchDir, SLACK};
use tandem_bus::serial_port::{Backoff, SerialOpenError};
use tandem_bus::slcan::{self, SlcanOptions};
use tandem_can::{BusError, CanFrame, CanId, CanReceiver, CanSender, FrameKind, Received};

fn std_id(id: u16) -> CanId {
    CanId::standard(id).unwrap()
}

fn ext_id(id: u32) -> CanId {
    CanId::extended(id).unwrap()
}

/// Standard, extended, remote and CAN FD frames, 0 to 8 bytes (and FD 12, 64).
fn frames() -> Vec<CanFrame> {
    let bytes: Vec<u8> = (0..64).map(|i| i * 3 + 1).collect();
    let mut frames: Vec<CanFrame> = (0..=8)
        .map(|len| CanFrame::data(std_id(0x100 + len as u16), &bytes[..len]).unwrap())
        .collect();
    frames.extend([
        CanFrame::data(std_id(0x000), &[0xFF]).unwrap(),
        CanFrame::data(std_id(0x7FF), &[0x00; 8]).unwrap(),
        CanFrame::data(ext_id(0x1FFF_FFFF), &bytes[..8]).unwrap(),
        CanFrame::data(ext_id(0x0000_0000), &[]).unwrap(),
        CanFrame::data(ext_id(0x0123_4567), &bytes[..3]).unwrap(),
        CanFrame::remote(std_id(0x321), 0).unwrap(),
        CanFrame::remote(std_id(0x322), 4).unwrap(),
        CanFrame::remote(ext_id(0x1234_5678), 8).unwrap(),
        CanFrame::fd(std_id(0x42), &bytes[..12], false, false).unwrap(),
        CanFrame::fd(ext_id(0x1ABC_DEF0), &bytes, true, false).unwrap(),
    ]);
    frames
}

/// The frame as a peer command's fields: EXT RTR FD BRS ID LEN DATA.
fn peer_fields(frame: &CanFrame) -> String {
    let (fd, brs) = match frame.kind() {
        FrameKind::Fd { brs, .. } => (1, u8::from(brs)),
        _ => (0, 0),
    };
    let data: String = frame.payload().iter().map(|b| format!("{b:02X}")).collect();
    format!(
        "{} {} {fd} {brs} {:X} {} {}",
        u8::from(frame.id().is_extended()),
        u8::from(frame.is_remote()),
        frame.id().raw(),
        frame.len(),
        if data.is_empty() { "-" } else { &data }
    )
}

/// python-can's slcan interface in a child process.
struct PythonPeer {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
}

impl PythonPeer {
    fn start(port: &str) -> PythonPeer {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/slcan_peer.py");
        let mut child = Command::new("python3")
            .args([script, port, "500000"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("start python3");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut peer = PythonPeer { child, stdin, lines };
        assert_eq!(peer.line(), "ready");
        peer
    }

    fn line(&mut self) -> String {
        match self.lines.recv_timeout(Duration::from_secs(20)) {
            Ok(line) => line,
            Err(_) => panic!(
                "the python-can peer did not answer (status {:?})",
                self.child.try_wait()
            ),
        }
    }

    fn ask(&mut self, command: &str) -> String {
        writeln!(self.stdin, "{command}").unwrap();
        self.line()
    }
}

impl Drop for PythonPeer {
    fn drop(&mut self) {
        let _ = writeln!(self.stdin, "quit");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Receives until a frame comes, failing on any error or after `timeout`.
fn recv_frame(rx: &mut dyn CanReceiver, timeout: Duration) -> Received {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        match rx.recv(Duration::from_millis(50)) {
            Ok(Some(received)) => return received,
            Ok(None) => {}
            Err(e) => panic!("unexpected receive error: {e}"),
        }
    }
    panic!("no frame within {timeout:?}");
}

fn options() -> SlcanOptions {
    SlcanOptions {
        bitrate: 500_000,
        ..SlcanOptions::default()
    }
}

#[test]
fn python_can_slcan_and_tandem_exchange_frames_both_ways() {
    require_python_can();
    let tandem_pty = Pty::new();
    let python_pty = Pty::new();
    let _cable = Relay::start(&tandem_pty.master, &python_pty.master);
    let mut peer = PythonPeer::start(&python_pty.path);
    let mut bus = slcan::open(&tandem_pty.path, &options()).unwrap();

    for frame in frames() {
        assert_eq!(peer.ask(&format!("send {}", peer_fields(&frame))), "sent");
        let received = recv_frame(bus.rx.as_mut(), Duration::from_secs(5));
        assert_eq!(received.frame, frame, "python-can -> Tandem");
        assert_eq!(received.source_time, None, "python-can sends no timestamps");
    }

    for frame in frames() {
        bus.tx.send(&frame).unwrap();
        assert_eq!(
            peer.ask("recv 5"),
            format!("rx {}", peer_fields(&frame)),
            "Tandem -> python-can"
        );
    }
    // Nothing else arrived: python-can's open sequence (C, S6, O) was
    // skipped without an error.
    assert!(matches!(bus.rx.recv(Duration::from_millis(100)), Ok(None)));
}

#[test]
fn adapter_timestamps_unwrap_garbage_is_skipped_and_refusals_are_reported() {
    let mut adapter = Pty::new();
    let timestamps = SlcanOptions {
        timestamps: true,
        ..options()
    };
    let (mut rx, _tx) = slcan::open_halves(&adapter.path, &timestamps).unwrap();
    adapter.expect(b"C\rS6\rZ1\rO\r", Duration::from_secs(2));

    // BELL to `C` (already closed) is fine; BELL to `Z1` is not.
    adapter.write(b"\x07\r\x07\r");
    adapter.write(b"t1232AABBEA56\r\x00\xFFnoise\rT000001230EA5F\r");
    adapter.write(b"t12 partial garbage\rr12340005\r\x07t7FF0\r");

    let mut frames = Vec::new();
    let (mut malformed, mut refusals) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(5);
    while frames.len() < 4 && Instant::now() < deadline {
        match rx.recv(Duration::from_millis(50)) {
            Ok(Some(received)) => frames.push(received),
            Ok(None) => {}
            Err(BusError::Malformed(what)) => malformed.push(what),
            Err(BusError::Bus(what)) => refusals.push(what),
            Err(e) => panic!("unexpected error {e}"),
        }
    }
    let times: Vec<_> = frames.iter().map(|r| r.source_time).collect();
    assert_eq!(times, [Some(59.990), Some(59.999), Some(60.005), None]);
    assert_eq!(frames[0].frame, CanFrame::data(std_id(0x123), &[0xAA, 0xBB]).unwrap());
    assert_eq!(frames[1].frame, CanFrame::data(ext_id(0x123), &[]).unwrap());
    assert_eq!(frames[2].frame, CanFrame::remote(std_id(0x123), 4).unwrap());
    assert_eq!(frames[3].frame, CanFrame::data(std_id(0x7FF), &[]).unwrap());
    assert_eq!(malformed.len(), 2, "{malformed:?}");
    assert!(malformed[0].contains("noise"), "{malformed:?}");
    assert!(malformed[1].contains("t12 partial garbage"), "{malformed:?}");
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    assert!(refusals[0].contains("`Z1`"), "{refusals:?}");
    assert!(refusals[1].contains("refused a command"), "{refusals:?}");
}

/// A back-off long enough that a call sleeping until the next reopening
/// attempt would overrun its timeout by more than [`SLACK`].
fn slow_backoff() -> Backoff {
    Backoff {
        initial: Duration::from_millis(600),
        max: Duration::from_secs(2),
    }
}

#[test]
fn a_full_port_is_tx_queue_full_without_waiting() {
    let mut adapter = Pty::new();
    let write_timeout = Duration::from_millis(5);
    let (_rx, mut tx) = slcan::open_halves(
        &adapter.path,
        &SlcanOptions {
            write_timeout,
            ..options()
        },
    )
    .unwrap();
    let frame = CanFrame::data(std_id(0x123), &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
    // No one reads the adapter's end: its buffer fills. A send that waited
    // for room would never return, hence the watchdog.
    let (finished, watchdog) = mpsc::channel();
    let filler = std::thread::spawn(move || {
        let (mut sent, mut refused) = (0, Vec::new());
        while refused.len() < 3 && sent < 1_000_000 {
            let start = Instant::now();
            match tx.send(&frame) {
                Ok(()) => sent += 1,
                Err(BusError::TxQueueFull) => refused.push(start.elapsed()),
                Err(e) => panic!("unexpected error {e}"),
            }
        }
        let _ = finished.send(());
        (tx, sent, refused)
    });
    let watched = watchdog.recv_timeout(Duration::from_secs(20));
    assert!(watched.is_ok(), "a send waited for room in a full port");
    let (mut tx, sent, refused) = filler.join().unwrap();
    assert!(
        sent > 100 && refused.len() == 3,
        "{sent} frames fit, {} refused",
        refused.len()
    );
    for took in refused {
        assert!(took < write_timeout + SLACK, "a refused send took {took:?}");
    }

    // Once the adapter reads, frames go out again, starting on a fresh line.
    assert!(!adapter.drain(Duration::from_millis(100)).is_empty());
    let last = CanFrame::data(std_id(0x456), &[9]).unwrap();
    tx.send(&last).unwrap();
    let tail = adapter.read_for(10, Duration::from_millis(300));
    assert!(
        tail.ends_with(b"\rt456109\r") || tail == b"t456109\r",
        "{:?}",
        String::from_utf8_lossy(&tail)
    );
}

#[test]
fn a_vanished_port_is_reported_and_reopened_by_itself() {
    let dir = ScratchDir::new("slcan-vanish");
    let link = dir.0.join("adapter");
    let mut first = Pty::new();
    point_link(&link, &first.path);
    let slow = SlcanOptions {
        backoff: slow_backoff(),
        ..options()
    };
    let (mut rx, mut tx) = slcan::open_halves(link.to_str().unwrap(), &slow).unwrap();
    let status = rx.status();
    first.expect(b"C\rS6\rZ0\rO\r", Duration::from_secs(2));
    let frame = CanFrame::data(std_id(0x10), &[1, 2]).unwrap();
    first.write(b"t01020102\r");
    assert_eq!(recv_frame(&mut rx, Duration::from_secs(2)).frame, frame);
    tx.send(&frame).unwrap();
    first.expect(b"t01020102\r", Duration::from_secs(2));

    // Unplugged: the device and its link go away. Both halves say so, and
    // no call waits for the next reopening attempt.
    drop(first);
    point_link(&link, dir.0.join("unplugged").to_str().unwrap());
    let timeout = Duration::from_millis(200);
    let lost = timed(timeout, "the first recv", || rx.recv(timeout));
    assert!(matches!(lost, Err(BusError::Disconnected(_))), "{lost:?}");
    let lost = timed(Duration::ZERO, "send", || tx.send(&frame));
    assert!(matches!(lost, Err(BusError::Disconnected(_))), "{lost:?}");
    for _ in 0..5 {
        let timeout = Duration::from_millis(30);
        let result = timed(timeout, "recv", || rx.recv(timeout));
        assert!(matches!(result, Err(BusError::Disconnected(_))), "{result:?}");
        let result = timed(Duration::ZERO, "send", || tx.send(&frame));
        assert!(matches!(result, Err(BusError::Disconnected(_))), "{result:?}");
    }
    assert_eq!(
        (status.is_connected(), status.disconnections(), status.reconnects()),
        (false, 1, 0)
    );

    // Plugged in again (a new device node, the same link).
    let mut second = Pty::new();
    point_link(&link, &second.path);
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let timeout = Duration::from_millis(50);
        match timed(timeout, "recv", || rx.recv(timeout)) {
            Err(BusError::Disconnected(_)) => {}
            Ok(None) => break,
            other => panic!("unexpected {other:?}"),
        }
        assert!(Instant::now() < deadline, "not reconnected within 5 s");
    }
    assert_eq!(
        (status.is_connected(), status.disconnections(), status.reconnects()),
        (true, 1, 1)
    );
    second.expect(b"C\rS6\rZ0\rO\r", Duration::from_secs(2));
    second.write(b"T12345678333AABB\r");
    let received = recv_frame(&mut rx, Duration::from_secs(2));
    assert_eq!(
        received.frame,
        CanFrame::data(ext_id(0x1234_5678), &[0x33, 0xAA, 0xBB]).unwrap()
    );
    tx.send(&frame).unwrap();
    second.expect(b"t01020102\r", Duration::from_secs(2));
}

#[test]
fn opening_reports_a_missing_port_and_an_unknown_bitrate() {
    let missing = slcan::open("/dev/tandem-no-such-adapter", &options());
    assert!(matches!(missing, Err(SerialOpenError::Port { .. })));
    let pty = Pty::new();
    let odd = SlcanOptions {
        bitrate: 33_333,
        ..options()
    };
    let Err(SerialOpenError::Unsupported(message)) = slcan::open(&pty.path, &odd) else {
        panic!("33333 bit/s accepted");
    };
    assert!(message.contains("33333") && message.contains("500000"), "{message}");
}
