//! SocketCAN on a real kernel CAN stack, through virtual CAN interfaces.
//!
//! Needs `vcan0` carrying CAN FD frames (`ip link add vcan0 type vcan &&
//! ip link set vcan0 mtu 72 && ip link set up vcan0`); the tests that change
//! interfaces create their own and need root. The QEMU test host (tests/qemu,
//! run by `socketcan_qemu.rs`) provides all of it and sets `TANDEM_VCAN=vcan0`,
//! which makes anything missing a failure. Elsewhere, without `vcan0`, each
//! test says it is skipped and passes.
//!
//! The tests run at the same time on one bus: each uses its own block of
//! identifiers (their low 11 bits) and filters on it, and only the error
//! frame test receives error frames.

use std::fs::File;
use std::io::{self, Read, Write};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use socketcan::errors::{CAN_ERR_ACK, CAN_ERR_BUSOFF};
use socketcan::nl::{CanInterface, Mtu};
use socketcan::{CanErrorFrame, CanSocket, Socket};
use tandem_bus::socketcan_bus::{open, SocketCanOpenError, SocketCanOptions};
use tandem_can::{BusError, CanFrame, CanId, Duplex, Received};

const SKIPPED: &str = "skipped: no vcan0 (runs inside the QEMU test host, see tests/qemu)";

/// How long a frame may take to arrive (QEMU's TCG is slow).
const ARRIVAL: Duration = Duration::from_secs(2);

/// Says something on stderr, where `cargo test` shows it even when it
/// captures the tests' output.
fn note(test: &str, message: &str) {
    let _ = io::stderr().write_all(format!("{test}: {message}\n").as_bytes());
}

/// Whether the QEMU test host runs the tests: then nothing may be missing.
fn required() -> bool {
    std::env::var_os("TANDEM_VCAN").is_some()
}

/// The bus under test: `TANDEM_VCAN`'s interface, else `vcan0` if there is
/// one; `None` (the test is skipped) without.
fn vcan(test: &str) -> Option<String> {
    if let Ok(name) = std::env::var("TANDEM_VCAN") {
        return Some(name);
    }
    match open("vcan0", &SocketCanOptions::default()) {
        Ok(_) => Some("vcan0".to_string()),
        Err(SocketCanOpenError::NoSuchInterface(_) | SocketCanOpenError::NotSupported(_)) => {
            note(test, SKIPPED);
            None
        }
        Err(e) => panic!("{e}"),
    }
}

/// Options receiving only the identifiers of `block` (their low 11 bits),
/// without error frames.
fn options(block: u32, fd: bool) -> SocketCanOptions {
    SocketCanOptions {
        fd,
        filters: vec![(block, 0x700)],
        error_frames: false,
        timestamps: true,
    }
}

fn std_id(id: u16) -> CanId {
    CanId::standard(id).unwrap()
}

fn ext_id(id: u32) -> CanId {
    CanId::extended(id).unwrap()
}

/// The next frame, which must come within [`ARRIVAL`].
fn next(bus: &mut Duplex) -> Received {
    match bus.rx.recv(ARRIVAL) {
        Ok(Some(received)) => received,
        other => panic!("expected a frame, got {other:?}"),
    }
}

/// Asserts that nothing arrives for a while.
fn silent(bus: &mut Duplex) {
    let got = bus.rx.recv(Duration::from_millis(200));
    assert!(matches!(got, Ok(None)), "expected nothing, got {got:?}");
}

#[test]
fn classic_frames_travel_both_ways() {
    let Some(vcan) = vcan("classic_frames_travel_both_ways") else {
        return;
    };
    let mut a = open(&vcan, &options(0x100, false)).unwrap();
    let mut b = open(&vcan, &options(0x100, false)).unwrap();
    let frames = [
        CanFrame::data(std_id(0x101), &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap(),
        CanFrame::data(ext_id(0x1ABC_D102), &[0xAA]).unwrap(),
        CanFrame::data(std_id(0x103), &[]).unwrap(),
        CanFrame::remote(std_id(0x104), 4).unwrap(),
        CanFrame::remote(ext_id(0x1000_0105), 8).unwrap(),
    ];
    for frame in &frames {
        a.tx.send(frame).unwrap();
        assert_eq!(next(&mut b).frame, *frame);
    }
    for frame in &frames {
        b.tx.send(frame).unwrap();
        assert_eq!(next(&mut a).frame, *frame);
    }
    // A socket does not receive what it sent itself.
    silent(&mut a);
    silent(&mut b);
    // A classic socket refuses a CAN FD frame.
    let fd = CanFrame::fd(std_id(0x106), &[0; 12], false, false).unwrap();
    assert!(matches!(a.tx.send(&fd), Err(BusError::Io(e)) if e.kind() == io::ErrorKind::InvalidInput));
}

#[test]
fn fd_frames_travel_both_ways() {
    let Some(vcan) = vcan("fd_frames_travel_both_ways") else {
        return;
    };
    let mut a = open(&vcan, &options(0x200, true)).unwrap();
    let mut b = open(&vcan, &options(0x200, true)).unwrap();
    let mut classic = open(&vcan, &options(0x200, false)).unwrap();
    let payload: Vec<u8> = (0..64).collect();
    let classic_frame = CanFrame::data(std_id(0x204), &[4, 2]).unwrap();
    let frames = [
        CanFrame::fd(std_id(0x201), &payload, true, false).unwrap(),
        CanFrame::fd(ext_id(0x1ABC_D202), &payload[..12], false, true).unwrap(),
        CanFrame::fd(std_id(0x203), &payload[..8], true, true).unwrap(),
        classic_frame,
    ];
    for frame in &frames {
        a.tx.send(frame).unwrap();
        assert_eq!(next(&mut b).frame, *frame);
    }
    for frame in &frames {
        b.tx.send(frame).unwrap();
        assert_eq!(next(&mut a).frame, *frame);
    }
    // A classic socket on the same bus sees the classic frames only.
    assert_eq!(next(&mut classic).frame, classic_frame);
    assert_eq!(next(&mut classic).frame, classic_frame);
    silent(&mut classic);
}

#[test]
fn filters_drop_other_identifiers() {
    let Some(vcan) = vcan("filters_drop_other_identifiers") else {
        return;
    };
    let mut tx = open(&vcan, &options(0x300, false)).unwrap();
    let filtered = SocketCanOptions {
        filters: vec![(0x300, 0x1FFF_FFFF), (0x310, 0x7F0)],
        error_frames: false,
        ..SocketCanOptions::default()
    };
    let mut rx = open(&vcan, &filtered).unwrap();
    let sent = [
        (CanFrame::data(std_id(0x301), &[1]).unwrap(), false),
        (CanFrame::data(std_id(0x300), &[2]).unwrap(), true),
        (CanFrame::data(ext_id(0x1234_5300), &[3]).unwrap(), false),
        (CanFrame::data(ext_id(0x300), &[4]).unwrap(), true),
        (CanFrame::remote(std_id(0x31A), 1).unwrap(), true),
        (CanFrame::data(std_id(0x320), &[6]).unwrap(), false),
    ];
    for (frame, _) in &sent {
        tx.tx.send(frame).unwrap();
    }
    for (frame, _) in sent.iter().filter(|(_, kept)| *kept) {
        assert_eq!(next(&mut rx).frame, *frame);
    }
    silent(&mut rx);
}

#[test]
fn kernel_timestamps_are_present_and_monotonic() {
    let Some(vcan) = vcan("kernel_timestamps_are_present_and_monotonic") else {
        return;
    };
    let mut tx = open(&vcan, &options(0x400, false)).unwrap();
    let mut rx = open(&vcan, &options(0x400, false)).unwrap();
    let untimed = SocketCanOptions {
        timestamps: false,
        ..options(0x400, false)
    };
    let mut rx_untimed = open(&vcan, &untimed).unwrap();
    let start = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
    let mut times = Vec::new();
    for i in 0..20u8 {
        let frame = CanFrame::data(std_id(0x400 + u16::from(i)), &[i]).unwrap();
        tx.tx.send(&frame).unwrap();
        let received = next(&mut rx);
        assert_eq!(received.frame, frame);
        times.push(received.source_time.expect("a kernel receive timestamp"));
        assert_eq!(next(&mut rx_untimed).source_time, None);
        std::thread::sleep(Duration::from_millis(2));
    }
    let end = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs_f64();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    assert!(times[19] - times[0] >= 0.019, "{times:?}");
    assert!(
        start - 0.01 <= times[0] && times[19] <= end + 0.01,
        "{start} {times:?} {end}"
    );
}

#[test]
fn error_frames_report_bus_off_and_bus_errors() {
    let Some(vcan) = vcan("error_frames_report_bus_off_and_bus_errors") else {
        return;
    };
    let errors = SocketCanOptions {
        error_frames: true,
        ..options(0x500, false)
    };
    let mut rx = open(&vcan, &errors).unwrap();
    let mut no_errors = open(&vcan, &options(0x500, false)).unwrap();
    // Error frames come from a controller's driver; a raw socket can send
    // them on a vcan.
    let controller = CanSocket::open(&vcan).unwrap();
    controller
        .write_frame(&CanErrorFrame::new_error(CAN_ERR_BUSOFF, &[]).unwrap())
        .unwrap();
    assert!(matches!(rx.rx.recv(ARRIVAL), Err(BusError::BusOff)));
    controller
        .write_frame(&CanErrorFrame::new_error(CAN_ERR_ACK, &[]).unwrap())
        .unwrap();
    match rx.rx.recv(ARRIVAL) {
        Err(BusError::Bus(description)) => assert_eq!(description, "no ack"),
        other => panic!("expected a bus error, got {other:?}"),
    }
    silent(&mut rx);
    silent(&mut no_errors);
}

/// A vcan of this test's own, deleted when dropped.
struct Scratch {
    name: &'static str,
    interface: Option<CanInterface>,
}

impl Scratch {
    /// Creates `name` (up, classic frames only: MTU 16); `None` (the test is skipped) where
    /// that is not possible outside the QEMU test host.
    fn create(test: &str, name: &'static str) -> Option<Scratch> {
        vcan(test)?;
        if let Ok(old) = CanInterface::open(name) {
            let _ = old.delete();
        }
        let created = CanInterface::create_vcan(name, None)
            .and_then(|i| i.set_mtu(Mtu::Standard).map(|()| i))
            .and_then(|i| i.bring_up().map(|()| i));
        match created {
            Ok(interface) => Some(Scratch {
                name,
                interface: Some(interface),
            }),
            Err(e) if !required() => {
                note(test, &format!("skipped: cannot create {name} ({e}; needs root)"));
                None
            }
            Err(e) => panic!("cannot create {name}: {e}"),
        }
    }

    fn interface(&self) -> &CanInterface {
        self.interface.as_ref().unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(interface) = self.interface.take() {
            let _ = interface.delete();
        }
    }
}

/// Gives `interface` a root `pfifo` queue of length 0 (rtnetlink
/// RTM_NEWQDISC, as `tc qdisc replace dev IF root handle 1: pfifo limit 0`):
/// the queue drops every frame, and the kernel answers each send with
/// ENOBUFS, as it does when a controller's transmit queue is full.
fn drop_every_frame(interface: &str) -> io::Result<()> {
    let index: i32 = std::fs::read_to_string(format!("/sys/class/net/{interface}/ifindex"))?
        .trim()
        .parse()
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("ifindex: {e}")))?;
    // SAFETY: a plain socket(2) call; the descriptor is owned right after.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_ROUTE,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a new descriptor that nothing else owns.
    let mut netlink = File::from(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) });
    let flags = (libc::NLM_F_REQUEST | libc::NLM_F_ACK | libc::NLM_F_CREATE | libc::NLM_F_REPLACE) as u16;
    let mut msg = Vec::new();
    // struct nlmsghdr: length (set below), type, flags, sequence, port.
    msg.extend(0u32.to_ne_bytes());
    msg.extend(libc::RTM_NEWQDISC.to_ne_bytes());
    msg.extend(flags.to_ne_bytes());
    msg.extend(1u32.to_ne_bytes());
    msg.extend(0u32.to_ne_bytes());
    // struct tcmsg: family and padding, interface, handle 1:0, parent root
    // (TC_H_ROOT), info.
    msg.extend([libc::AF_UNSPEC as u8, 0, 0, 0]);
    msg.extend(index.to_ne_bytes());
    msg.extend(0x0001_0000u32.to_ne_bytes());
    msg.extend(0xFFFF_FFFFu32.to_ne_bytes());
    msg.extend(0u32.to_ne_bytes());
    // TCA_KIND "pfifo", padded to 4 bytes; TCA_OPTIONS struct tc_fifo_qopt.
    msg.extend(10u16.to_ne_bytes());
    msg.extend(libc::TCA_KIND.to_ne_bytes());
    msg.extend(b"pfifo\0\0\0");
    msg.extend(8u16.to_ne_bytes());
    msg.extend(libc::TCA_OPTIONS.to_ne_bytes());
    msg.extend(0u32.to_ne_bytes());
    let len = msg.len() as u32;
    msg[..4].copy_from_slice(&len.to_ne_bytes());
    netlink.write_all(&msg)?;
    let mut reply = [0u8; 1024];
    let n = netlink.read(&mut reply)?;
    let is_ack = n >= 20 && u16::from_ne_bytes([reply[4], reply[5]]) == libc::NLMSG_ERROR as u16;
    if !is_ack {
        return Err(io::Error::new(io::ErrorKind::InvalidData, "no netlink acknowledgement"));
    }
    match i32::from_ne_bytes([reply[16], reply[17], reply[18], reply[19]]) {
        0 => Ok(()),
        e => Err(io::Error::from_raw_os_error(-e)),
    }
}

#[test]
fn a_full_transmit_queue_is_reported_without_blocking() {
    let test = "a_full_transmit_queue_is_reported_without_blocking";
    let Some(scratch) = Scratch::create(test, "tandemtx0") else {
        return;
    };
    let mut bus = open(scratch.name, &SocketCanOptions::default()).unwrap();
    let frame = CanFrame::data(std_id(0x600), &[1, 2, 3]).unwrap();
    bus.tx.send(&frame).unwrap();
    drop_every_frame(scratch.name).unwrap();
    let mut slowest = Duration::ZERO;
    for _ in 0..1000 {
        let start = Instant::now();
        let sent = bus.tx.send(&frame);
        slowest = slowest.max(start.elapsed());
        assert!(matches!(sent, Err(BusError::TxQueueFull)), "{sent:?}");
    }
    note(
        test,
        &format!("1000 sends to a full queue, the slowest took {slowest:?}"),
    );
    assert!(slowest < Duration::from_millis(100), "{slowest:?}");
}

#[test]
fn interface_states_give_clear_errors() {
    let test = "interface_states_give_clear_errors";
    let Some(scratch) = Scratch::create(test, "tandemst0") else {
        return;
    };
    let name = scratch.name;
    let fd = SocketCanOptions {
        fd: true,
        ..SocketCanOptions::default()
    };
    let e = open(name, &fd).err().unwrap();
    assert!(matches!(e, SocketCanOpenError::NotFd { mtu: 16, .. }), "{e}");
    assert!(e.to_string().contains(&format!("ip link set {name} mtu 72")), "{e}");

    let mut bus = open(name, &SocketCanOptions::default()).unwrap();
    let frame = CanFrame::data(std_id(0x700), &[7]).unwrap();
    bus.tx.send(&frame).unwrap();
    scratch.interface().bring_down().unwrap();
    let e = open(name, &SocketCanOptions::default()).err().unwrap();
    assert!(matches!(e, SocketCanOpenError::Down(_)), "{e}");
    assert!(e.to_string().contains(&format!("ip link set up {name}")), "{e}");
    assert!(matches!(bus.rx.recv(ARRIVAL), Err(BusError::Disconnected(_))));
    assert!(matches!(bus.tx.send(&frame), Err(BusError::Disconnected(m)) if m.contains("down")));
    scratch.interface().bring_up().unwrap();
    bus.tx.send(&frame).unwrap();
    drop(scratch);
    assert!(matches!(bus.tx.send(&frame), Err(BusError::Disconnected(m)) if m.contains("removed")));
}

#[test]
fn a_missing_interface_names_the_fix() {
    let e = open("tandem-none0", &SocketCanOptions::default()).err().unwrap();
    assert!(matches!(e, SocketCanOpenError::NoSuchInterface(_)), "{e}");
    let message = e.to_string();
    assert!(message.contains("no such interface tandem-none0"), "{message}");
    assert!(
        message.contains("ip link add tandem-none0 type vcan && ip link set up tandem-none0"),
        "{message}"
    );
    // `lo` is no CAN interface; a kernel without CAN says so first.
    match open("lo", &SocketCanOptions::default()).err().unwrap() {
        SocketCanOpenError::NotCan(name) => assert_eq!(name, "lo"),
        SocketCanOpenError::NotSupported(name) if !required() => {
            note("a_missing_interface_names_the_fix", "this kernel has no CAN sockets");
            assert_eq!(name, "lo");
        }
        e => panic!("{e}"),
    }
}
