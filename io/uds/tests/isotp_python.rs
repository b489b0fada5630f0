//! Tandem's ISO-TP against python-can-isotp over CAN-over-UDP multicast:
//! Tandem sends messages of every frame form (single, first with and
//! without the 4095-byte escape, consecutive) and python-can-isotp sends
//! each back reversed, on classic CAN and CAN FD, with normal and extended
//! addressing, each side asking its own block size and STmin. The peer
//! records every frame with its kernel receive timestamp; from those the
//! test checks each sender kept the other's STmin and block size and that
//! Tandem's frames carry the configured padding.
//! The peer is `tests/peers/isotp_peer.py`.

#[path = "../../../tests/support/peer_process.rs"]
mod peer_process;
#[path = "../../../tests/support/rng.rs"]
mod rng;

use std::io::BufRead;
use std::process::Command;
use std::time::Duration;

use peer_process::{start_ready, unhex};
use rng::Rng;
use tandem_bus::udp::{open, UdpOptions};
use tandem_can::CanId;
use tandem_uds::isotp::{st_min_ns, Addressing, Config, Link};

const PEER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/isotp_peer.py");
const TANDEM_TX: u16 = 0x7E0;
const PEER_TX: u16 = 0x7E8;

/// One exchange's settings.
struct Case {
    port: u16,
    fd: bool,
    tx_dl: usize,
    /// The address bytes (N_TA) (Tandem writes, the peer writes).
    extended: Option<(u8, u8)>,
    padding: Option<u8>,
    peer_padding: Option<u8>,
    /// Tandem's (block size, STmin) asked of the peer.
    flow: (u8, u8),
    /// The peer's, asked of Tandem.
    peer_flow: (u8, u8),
    lengths: &'static [usize],
}

/// A frame the peer heard: identifier, receive time in s, data.
type Heard = (u32, f64, Vec<u8>);

fn exchange(case: &Case) -> Vec<Heard> {
    let found = Command::new("python3")
        .args(["-c", "import isotp, can, msgpack"])
        .status();
    assert!(
        found.is_ok_and(|s| s.success()),
        "python-can-isotp missing: run .ci/run (it pip-installs can-isotp and python-can)"
    );
    let duplex = open(&UdpOptions {
        port: case.port,
        ..UdpOptions::default()
    })
    .unwrap();
    let id = |n| CanId::standard(n).unwrap();
    let config = Config {
        addressing: case
            .extended
            .map_or(Addressing::Normal, |(tx, rx)| Addressing::Extended { tx, rx }),
        fd: case.fd,
        tx_dl: case.tx_dl,
        padding: case.padding,
        block_size: case.flow.0,
        st_min: case.flow.1,
        max_len: 8192,
        ..Config::classic(id(TANDEM_TX), id(PEER_TX))
    };
    let mut link = Link::new(config, duplex).unwrap();
    let peer_config = format!(
        r#"{{"port": {}, "txid": {PEER_TX}, "rxid": {TANDEM_TX}, "fd": {}, "tx_dl": {}, "padding": {},
            "blocksize": {}, "stmin": {}, "extended": {}, "max_frame_size": 8192, "count": {}}}"#,
        case.port,
        if case.fd { "true" } else { "false" },
        case.tx_dl,
        case.peer_padding.map_or("null".into(), |p| p.to_string()),
        case.peer_flow.0,
        case.peer_flow.1,
        case.extended
            .map_or("null".into(), |(tandem, peer)| format!("[{peer}, {tandem}]")),
        case.lengths.len(),
    );
    let (mut peer, mut out) = start_ready(Command::new("python3").args([PEER, &peer_config]));
    let mut rng = Rng(0x2545_F491);
    for &len in case.lengths {
        let message: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        link.send(&message, Duration::from_secs(20))
            .unwrap_or_else(|e| panic!("sending {len} bytes: {e}"));
        let back = link.recv(Duration::from_secs(20)).unwrap();
        let expected: Vec<u8> = message.iter().rev().copied().collect();
        assert_eq!(back, Some(&expected[..]), "{len}-byte message echoed reversed");
    }
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert!(peer.wait().unwrap().success());
    let counts = link.counts();
    assert_eq!(
        (counts.sent, counts.received),
        (case.lengths.len() as u64, case.lengths.len() as u64)
    );
    assert_eq!((counts.ignored, counts.rx_aborted, counts.tx_aborted), (0, 0, 0));
    parse_heard(&line)
}

/// The peer's JSON list of `[id, timestamp, "hex"]`, in the order of the
/// kernel's timestamps: the peer's own frames come back to its socket
/// through the loopback's queues, which can hand it a frame Tandem sent in
/// answer before the peer's own frame it answers, stamped later.
fn parse_heard(line: &str) -> Vec<Heard> {
    let body = line.trim().trim_start_matches('[').trim_end_matches(']');
    let mut heard: Vec<Heard> = body
        .split("], [")
        .map(|entry| {
            let fields: Vec<&str> = entry.trim_matches(['[', ']']).split(", ").collect();
            let data = unhex(fields[2].trim_matches('"'));
            (fields[0].parse().unwrap(), fields[1].parse().unwrap(), data)
        })
        .collect();
    heard.sort_by(|a, b| a.1.total_cmp(&b.1));
    heard
}

/// Checks, from the peer's timestamps, that each side's consecutive frames
/// kept the separation and block size the other asked for.
fn check_flow_control(case: &Case, heard: &[Heard]) {
    let offset = usize::from(case.extended.is_some());
    for (sender, (bs, st_min)) in [(TANDEM_TX, case.peer_flow), (PEER_TX, case.flow)] {
        let st = st_min_ns(st_min) as f64 / 1e9;
        let (mut last_cf, mut in_block, mut gaps) = (None::<f64>, 0u32, Vec::new());
        for (id, time, data) in heard {
            let pci = data[offset] >> 4;
            if *id == u32::from(sender) {
                match pci {
                    2 => {
                        if let Some(last) = last_cf {
                            gaps.push(time - last);
                        }
                        last_cf = Some(*time);
                        in_block += 1;
                        assert!(
                            bs == 0 || in_block <= u32::from(bs),
                            "{sender:#X} overran block size {bs}"
                        );
                    }
                    _ => last_cf = None,
                }
            } else if pci == 3 {
                (last_cf, in_block) = (None, 0);
            }
        }
        assert!(gaps.len() > 10, "{sender:#X}: only {} gaps measured", gaps.len());
        gaps.sort_by(f64::total_cmp);
        // python-can-isotp starts its STmin timer before its frame leaves
        // its queue, so its single gaps jitter below STmin; its median
        // shows it kept Tandem's flow control. Tandem's every gap must keep
        // the peer's.
        let (gap, which) = if sender == TANDEM_TX {
            (gaps[0], "shortest")
        } else {
            (gaps[gaps.len() / 2], "median")
        };
        assert!(
            gap >= st,
            "{sender:#X}'s {which} gap between consecutive frames is {:.1} us, STmin {st_min:#04X}",
            gap * 1e6
        );
    }
}

/// Checks Tandem's frames: padded with the configured byte to 8 bytes (and
/// CAN FD frames to their DLC, with 0xCC when no byte is configured), the
/// address byte first.
fn check_padding(case: &Case, heard: &[Heard]) {
    let offset = usize::from(case.extended.is_some());
    let pad = case.padding.unwrap_or(0xCC);
    let mut remaining = 0usize;
    for (_, _, data) in heard.iter().filter(|(id, ..)| *id == u32::from(TANDEM_TX)) {
        if let Some((tandem, _)) = case.extended {
            assert_eq!(data[0], tandem, "address byte");
        }
        let p = &data[offset..];
        let used = match p[0] >> 4 {
            0 if data.len() <= 8 => 1 + usize::from(p[0] & 0xF),
            0 => 2 + usize::from(p[1]),
            1 => {
                let len = usize::from(p[0] & 0xF) << 8 | usize::from(p[1]);
                let (len, header) = if len == 0 {
                    (u32::from_be_bytes([p[2], p[3], p[4], p[5]]) as usize, 6)
                } else {
                    (len, 2)
                };
                remaining = len - (p.len() - header);
                p.len()
            }
            2 => {
                let take = remaining.min(p.len() - 1);
                remaining -= take;
                1 + take
            }
            _ => 3,
        };
        if case.padding.is_some() {
            assert!(data.len() >= 8, "padded frame of {} bytes", data.len());
        }
        assert!(
            p[used..].iter().all(|&b| b == pad),
            "padding of {data:02X?} is not {pad:#04X}"
        );
        if !case.fd {
            assert!(
                case.padding.is_some() || p.len() == used,
                "unpadded frame carries {used} bytes"
            );
        }
    }
}

fn run(case: Case) {
    let heard = exchange(&case);
    check_flow_control(&case, &heard);
    check_padding(&case, &heard);
}

#[test]
fn classic_normal_addressing_with_padding_block_size_and_stmin() {
    run(Case {
        port: 43321,
        fd: false,
        tx_dl: 8,
        extended: None,
        padding: Some(0x55),
        peer_padding: Some(0xAA),
        flow: (8, 0xF5),
        peer_flow: (5, 2),
        lengths: &[1, 7, 8, 62, 4095],
    });
}

#[test]
fn classic_extended_addressing_unpadded() {
    run(Case {
        port: 43322,
        fd: false,
        tx_dl: 8,
        extended: Some((0x12, 0x34)),
        padding: None,
        peer_padding: None,
        flow: (0, 1),
        peer_flow: (16, 0xF9),
        lengths: &[5, 6, 7, 100, 4095],
    });
}

#[test]
fn can_fd_normal_addressing_with_escapes() {
    run(Case {
        port: 43323,
        fd: true,
        tx_dl: 64,
        extended: None,
        padding: None,
        peer_padding: None,
        flow: (4, 1),
        peer_flow: (0, 1),
        lengths: &[7, 8, 20, 62, 63, 1000, 4095, 4096, 8000],
    });
}

#[test]
fn can_fd_extended_addressing_with_padding() {
    run(Case {
        port: 43324,
        fd: true,
        tx_dl: 32,
        extended: Some((0xF1, 0x0E)),
        padding: Some(0x00),
        peer_padding: Some(0x00),
        flow: (3, 2),
        peer_flow: (7, 0xF2),
        lengths: &[6, 7, 29, 30, 31, 700, 5000],
    });
}
