//! Tandem's BLF, MF4 and ASC logs against their reference implementations:
//! python-can (`BLFReader`, `BLFWriter`, `ASCWriter`) and asammdf (its
//! reader, its writer and its bus logging extraction with a DBC), driven
//! through `tests/peers/logs_peer.py`. The same frames (classic and CAN
//! FD, standard and extended identifiers, received and sent, on two
//! interfaces, remote frames where the format has them) are written by
//! Tandem and read by the peer, and written by the peer and read by
//! Tandem, every frame, identifier, flag, byte and time compared. MF4
//! files whose data bytes are variable-length signal data (VLSD, in SD
//! blocks or a VLSD channel group), checked by asammdf's reader, read as
//! their candump equivalent.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use tandem_can::{CanFrame, CanId, FrameKind};
use tandem_dbc::Dbc;
use tandem_log::{create, Direction, LogReader, LogRecord};

const PEER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/logs_peer.py");
/// The DBC whose signals asammdf extracts from the MF4 log.
const DBC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../config/examples/ev.dbc");
/// Rounds of [`frames`] in most logs.
const ROUNDS: usize = 6;
/// Rounds of [`frames`] in BLF logs: over 128 KiB of objects, so that
/// they fill several log containers and python-can's writer splits an
/// object between two.
const BLF_ROUNDS: usize = 400;
/// A real bus's log start: 2026-11-21 10:30:15.250123456 UTC.
const EPOCH_START: i64 = 1_795_257_015_250_123_456;
/// One step of an f64 holding seconds since the epoch around 2026 (2^-22
/// s, rounded up): python-can keeps a frame's time and the log's start as
/// such floats, each within half a step of the truth, so it cannot be
/// closer.
const EPOCH_FLOAT_STEP_NS: i64 = 239;

/// Fails, saying how to install them, when the peer's packages are missing.
fn require(module: &str) {
    let found = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .status();
    if !found.is_ok_and(|s| s.success()) {
        panic!("the Python package {module} is missing: run .ci/run (it pip-installs python-can and asammdf)");
    }
}

/// Runs the peer with `args` and `input` on stdin; its stdout.
fn peer(args: &[&str], input: &str) -> String {
    let mut child = Command::new("python3")
        .arg(PEER)
        .args(args)
        .env("TZ", "UTC")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "logs_peer.py {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A fresh path in the temporary directory.
fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tandem-log-peers-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// xorshift64*: the same payloads on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Rounds of frames of every kind on two interfaces, starting at `start`
/// ns, with irregular gaps; remote frames only when `remote`.
fn frames(start: i64, remote: bool, rounds: usize) -> Vec<LogRecord> {
    let std = |id| CanId::standard(id).unwrap();
    let ext = |id| CanId::extended(id).unwrap();
    let mut rng = Rng(0x5EED_1065_0BAD_CAFE);
    let mut out = Vec::new();
    let mut t = start;
    for round in 0..rounds {
        let mut kinds = vec![
            (
                CanFrame::data(std(0x100), &rng.bytes(8)).unwrap(),
                "can0",
                Direction::Rx,
            ),
            (
                CanFrame::data(std(0x200), &rng.bytes(8)).unwrap(),
                "can1",
                Direction::Tx,
            ),
            (
                CanFrame::data(std(0x201), &rng.bytes(8)).unwrap(),
                "can0",
                Direction::Tx,
            ),
            (
                CanFrame::data(ext(0x18FF_3000), &rng.bytes(8)).unwrap(),
                "can1",
                Direction::Rx,
            ),
            (
                CanFrame::data(std(0x7FF), &rng.bytes(round % 9)).unwrap(),
                "can0",
                Direction::Rx,
            ),
            (
                CanFrame::fd(std(0x300), &rng.bytes(12), true, false).unwrap(),
                "can1",
                Direction::Tx,
            ),
            (
                CanFrame::fd(ext(0x1ABC_DEF0), &rng.bytes(64), round % 2 == 0, true).unwrap(),
                "can0",
                Direction::Rx,
            ),
            (
                CanFrame::fd(std(0x301), &rng.bytes([0, 5, 8, 20, 48, 64][round % 6]), false, false).unwrap(),
                "can1",
                Direction::Rx,
            ),
        ];
        if remote {
            kinds.push((CanFrame::remote(ext(0x0123_4567), 4).unwrap(), "can0", Direction::Tx));
        }
        for (frame, interface, direction) in kinds {
            t += 1_000_000 + (rng.next() % 3_000_000) as i64;
            out.push(LogRecord {
                time_ns: t,
                interface: interface.into(),
                frame,
                direction,
            });
        }
    }
    out
}

/// The channel number a writer gives an interface of [`frames`].
fn channel(interface: &str) -> u16 {
    match interface {
        "can0" => 1,
        _ => 2,
    }
}

/// A frame as a peer line (see logs_peer.py).
fn peer_line(r: &LogRecord) -> String {
    let (fd, brs, esi) = match r.frame.kind() {
        FrameKind::Fd { brs, esi } => (true, brs, esi),
        _ => (false, false, false),
    };
    let flags = [
        r.frame.id().is_extended(),
        fd,
        brs,
        esi,
        r.frame.is_remote(),
        r.direction == Direction::Tx,
    ]
    .map(|f| u8::from(f).to_string())
    .join(" ");
    let data: String = r.frame.payload().iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{} {} {:X} {flags} {}",
        r.time_ns,
        channel(&r.interface),
        r.frame.id().raw(),
        if data.is_empty() { "-" } else { &data }
    )
}

/// The nanoseconds an f64 of seconds holds, rounded (its whole seconds
/// and its fraction apart, both exact, so that a time since the epoch
/// loses nothing to the conversion).
fn float_ns(seconds: f64) -> i64 {
    let whole = seconds.trunc();
    whole as i64 * 1_000_000_000 + ((seconds - whole) * 1e9).round() as i64
}

/// A peer's frame line: time (s), and the rest as [`peer_line`] writes it.
fn parse_peer_line(line: &str) -> (f64, String) {
    let (time, rest) = line.split_once(' ').unwrap();
    (
        time.parse().unwrap_or_else(|_| panic!("bad peer line {line:?}")),
        rest.to_owned(),
    )
}

/// `r` as [`peer_line`] writes it, without the time.
fn without_time(r: &LogRecord) -> String {
    peer_line(r).split_once(' ').unwrap().1.to_owned()
}

/// Writes `records` with Tandem's writer for `path`'s format.
fn tandem_writes(path: &Path, start_ns: i64, records: &[LogRecord]) {
    let mut writer = create(path, start_ns).unwrap();
    for r in records {
        writer.write(r).unwrap();
    }
    writer.finish().unwrap();
}

/// Every record of the log at `path`, read by Tandem.
fn tandem_reads(path: &Path) -> Vec<LogRecord> {
    LogReader::new(File::open(path).unwrap(), path)
        .unwrap()
        .map(|r| r.unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// The peer's `start SECONDS` line and its frame lines.
fn peer_reads(args: &[&str]) -> (f64, Vec<(f64, String)>, Vec<String>) {
    let out = peer(args, "");
    let mut lines = out.lines();
    let start = lines
        .next()
        .and_then(|l| l.strip_prefix("start "))
        .expect("a start line")
        .parse()
        .unwrap();
    let (signals, frames): (Vec<&str>, Vec<&str>) = lines.partition(|l| l.starts_with("signal "));
    (
        start,
        frames.into_iter().map(parse_peer_line).collect(),
        signals.into_iter().map(str::to_owned).collect(),
    )
}

#[test]
fn python_can_reads_tandems_blf_to_the_nanosecond() {
    require("can");
    // A virtual clock's log starts at 0: python-can's float seconds are
    // then exact to the nanosecond, and so must Tandem's times be.
    let records = frames(0, true, BLF_ROUNDS);
    let path = temp("virtual.blf");
    tandem_writes(&path, 0, &records);
    let (start, read, _) = peer_reads(&["read-blf", path.to_str().unwrap()]);
    assert_eq!(start, 0.0);
    assert_eq!(read.len(), records.len());
    for (r, (t, rest)) in records.iter().zip(&read) {
        assert_eq!(rest, &without_time(r));
        assert_eq!(float_ns(*t), r.time_ns, "{rest}");
    }
    // A real bus's log is dated: the header holds its start to the
    // millisecond, and each time is the nanoseconds after it.
    let records = frames(EPOCH_START, true, BLF_ROUNDS);
    let path = temp("epoch.blf");
    tandem_writes(&path, EPOCH_START, &records);
    let (start, read, _) = peer_reads(&["read-blf", path.to_str().unwrap()]);
    assert_eq!(start, (EPOCH_START / 1_000_000) as f64 / 1e3);
    assert_eq!(read.len(), records.len());
    for (r, (t, rest)) in records.iter().zip(&read) {
        assert_eq!(rest, &without_time(r));
        assert!(
            (float_ns(*t) - r.time_ns).abs() <= EPOCH_FLOAT_STEP_NS,
            "{t} vs {}",
            r.time_ns
        );
    }
}

#[test]
fn tandem_reads_python_cans_blf() {
    require("can");
    let records = frames(EPOCH_START, true, BLF_ROUNDS);
    let input: String = records.iter().map(|r| peer_line(r) + "\n").collect();
    let path = temp("python-can.blf");
    peer(&["write-blf", path.to_str().unwrap()], &input);
    let containers = std::fs::read(&path)
        .unwrap()
        .windows(4)
        .filter(|w| w == b"LOBJ")
        .count();
    assert!(containers >= 2, "{containers} log container(s)");
    let read = tandem_reads(&path);
    assert_eq!(read.len(), records.len());
    for (r, w) in read.iter().zip(&records) {
        assert_eq!((r.frame, r.direction), (w.frame, w.direction));
        assert_eq!(r.interface, channel(&w.interface).to_string());
        // python-can computes each time from f64 seconds since the epoch.
        assert!(
            (r.time_ns - w.time_ns).abs() <= EPOCH_FLOAT_STEP_NS,
            "{} vs {}",
            r.time_ns,
            w.time_ns
        );
    }
}

#[test]
fn tandem_reads_python_cans_asc() {
    require("can");
    let records = frames(EPOCH_START, true, ROUNDS);
    let input: String = records.iter().map(|r| peer_line(r) + "\n").collect();
    let path = temp("python-can.asc");
    peer(&["write-asc", path.to_str().unwrap()], &input);
    let read = tandem_reads(&path);
    assert_eq!(read.len(), records.len());
    // ASC times are microseconds after the trigger block's date, which
    // python-can writes to the millisecond: each frame is within 1 µs of
    // its time after the first, and the first within 1 ms of its own.
    let first = records[0].time_ns;
    assert!(
        (0..1_000_000).contains(&(first - read[0].time_ns)),
        "{} vs {first}",
        read[0].time_ns
    );
    for (r, w) in read.iter().zip(&records) {
        assert_eq!((r.frame, r.direction), (w.frame, w.direction));
        assert_eq!(r.interface, channel(&w.interface).to_string());
        let (after, was_after) = (r.time_ns - read[0].time_ns, w.time_ns - first);
        assert!((after - was_after).abs() <= 1_000, "{after} vs {was_after}");
    }
}

#[test]
fn asammdf_reads_tandems_mf4_and_extracts_its_signals() {
    require("asammdf");
    let records = frames(EPOCH_START, true, ROUNDS);
    let path = temp("tandem.mf4");
    let start = EPOCH_START - 2_000_000_000;
    tandem_writes(&path, start, &records);
    // Remote frames have a channel group of their own (CAN_RemoteFrame),
    // which asammdf loads but lists apart from the data frames.
    let records: Vec<LogRecord> = records.into_iter().filter(|r| !r.frame.is_remote()).collect();
    let (peer_start, read, signals) = peer_reads(&["read-mf4", path.to_str().unwrap(), DBC]);
    // asammdf keeps the start to the microsecond (a datetime).
    assert!((peer_start - start as f64 * 1e-9).abs() < 1e-6, "{peer_start}");
    // One channel group per frame kind: compare in time order.
    let mut read = read;
    read.sort_by(|a, b| a.0.total_cmp(&b.0));
    assert_eq!(read.len(), records.len());
    for (r, (t, rest)) in records.iter().zip(&read) {
        assert_eq!(rest, &without_time(r));
        // The master channel is f64 seconds from the start, read back bit for bit.
        assert_eq!(t.to_bits(), ((r.time_ns - start) as f64 * 1e-9).to_bits(), "{rest}");
    }
    // Every signal of every frame the DBC describes, as Tandem's DBC codec
    // decodes it, is among asammdf's extracted values at the frame's time.
    let dbc = Dbc::load(Path::new(DBC)).unwrap();
    let extracted: Vec<(String, f64, f64)> = signals
        .iter()
        .map(|l| {
            let mut f = l.split(' ').skip(1);
            let (name, t, v) = (f.next().unwrap(), f.next().unwrap(), f.next().unwrap());
            (name.to_owned(), t.parse().unwrap(), v.parse().unwrap())
        })
        .collect();
    let mut expected = 0;
    for r in &records {
        let Some(message) = dbc.messages().iter().find(|m| m.id == r.frame.id()) else {
            continue;
        };
        let t = (r.time_ns - start) as f64 * 1e-9;
        for signal in &message.signals {
            expected += 1;
            let value = signal.decode(r.frame.payload());
            let found = extracted.iter().any(|(name, et, ev)| {
                name.ends_with(&signal.name) && *et == t && (ev - value).abs() <= 1e-9 * value.abs().max(1.0)
            });
            assert!(
                found,
                "asammdf did not extract {}.{} = {value} at {t} s",
                message.name, signal.name
            );
        }
    }
    assert!(expected >= ROUNDS * 14, "only {expected} signals checked");
    assert_eq!(
        extracted.len(),
        expected,
        "asammdf extracted other values than the frames carry"
    );
}

#[test]
fn tandem_reads_asammdfs_mf4_in_time_order_plain_and_compressed() {
    require("asammdf");
    let records = frames(EPOCH_START, false, ROUNDS);
    let input: String = records.iter().map(|r| peer_line(r) + "\n").collect();
    // asammdf writes a data group per frame kind, which Tandem merges; its
    // compressions 1 and 2 write DZ blocks (deflate; transposed, then deflate).
    for compression in ["0", "1", "2"] {
        let path = temp(&format!("asammdf-{compression}.mf4"));
        peer(
            &[
                "write-mf4",
                path.to_str().unwrap(),
                &EPOCH_START.to_string(),
                compression,
            ],
            &input,
        );
        let read = tandem_reads(&path);
        assert_eq!(read.len(), records.len());
        for (r, w) in read.iter().zip(&records) {
            assert_eq!(
                (r.time_ns, r.frame, r.direction),
                (w.time_ns, w.frame, w.direction),
                "compression {compression}"
            );
            assert_eq!(r.interface, channel(&w.interface).to_string());
        }
        if compression == "2" {
            // A damaged DZ block is named by its offset.
            let mut bytes = std::fs::read(&path).unwrap();
            let dz = bytes.windows(4).position(|w| w == b"##DZ").expect("a DZ block");
            // A DZ block has no links: 24 bytes of header, 24 of parameters, then the zipped data.
            let zipped = dz + 48;
            for b in &mut bytes[zipped + 2..zipped + 12] {
                *b ^= 0x5A;
            }
            let damaged = temp("damaged.mf4");
            std::fs::write(&damaged, &bytes).unwrap();
            let e = LogReader::new(File::open(&damaged).unwrap(), &damaged)
                .unwrap()
                .find_map(Result::err)
                .expect("an error")
                .to_string();
            assert!(e.contains(&format!(":byte {dz}: the DZ block's zlib data")), "{e}");
        }
    }
}

#[test]
fn tandem_reads_vlsd_data_bytes_as_asammdf_does_equal_to_the_candump_log() {
    require("asammdf");
    // Whole microseconds, which candump logs hold.
    let mut records = frames(EPOCH_START, false, ROUNDS);
    for r in &mut records {
        r.time_ns -= r.time_ns % 1000;
    }
    let input: String = records.iter().map(|r| peer_line(r) + "\n").collect();
    // The candump log of the same frames, read back by Tandem, is the reference.
    let candump = temp("vlsd-reference.log");
    tandem_writes(&candump, EPOCH_START, &records);
    let reference = tandem_reads(&candump);
    assert_eq!(reference.len(), records.len());
    for kind in ["sd", "cg"] {
        let path = temp(&format!("vlsd-{kind}.mf4"));
        peer(
            &["write-mf4-vlsd", path.to_str().unwrap(), &EPOCH_START.to_string(), kind],
            &input,
        );
        // asammdf reads the file as meant: every frame, byte for byte.
        let (_, theirs, _) = peer_reads(&["read-mf4", path.to_str().unwrap()]);
        let expected: Vec<String> = records.iter().map(without_time).collect();
        assert_eq!(
            theirs.iter().map(|(_, l)| l.clone()).collect::<Vec<_>>(),
            expected,
            "{kind}"
        );
        let read = tandem_reads(&path);
        assert_eq!(read.len(), reference.len(), "{kind}");
        for (r, c) in read.iter().zip(&reference) {
            assert_eq!(
                (r.time_ns, r.frame, r.direction),
                (c.time_ns, c.frame, c.direction),
                "{kind}"
            );
            assert_eq!(r.interface, channel(&c.interface).to_string(), "{kind}");
        }
    }
}

#[test]
fn malformed_vlsd_data_bytes_are_errors_naming_the_offset() {
    require("asammdf");
    let records = frames(EPOCH_START, false, 1);
    let input: String = records.iter().map(|r| peer_line(r) + "\n").collect();
    let first_error = |bytes: &[u8], name: &str| -> String {
        let path = temp(name);
        std::fs::write(&path, bytes).unwrap();
        match LogReader::new(File::open(&path).unwrap(), &path) {
            Err(e) => e.to_string(),
            Ok(mut reader) => reader.find_map(Result::err).expect("an error").to_string(),
        }
    };
    for kind in ["sd", "cg"] {
        let path = temp(&format!("vlsd-bad-{kind}.mf4"));
        peer(
            &["write-mf4-vlsd", path.to_str().unwrap(), &EPOCH_START.to_string(), kind],
            &input,
        );
        let bytes = std::fs::read(&path).unwrap();
        // The records are the DT block's data, 29 bytes each after its id;
        // the data bytes' u64 offset is the last 8 of a record.
        let dt = bytes.windows(4).rposition(|w| w == b"##DT").unwrap();
        let first_fixed = if kind == "sd" {
            dt + 24
        } else {
            // After the first VLSD record: id, u32 length, the bytes.
            let len = u32::from_le_bytes(bytes[dt + 25..dt + 29].try_into().unwrap()) as usize;
            dt + 24 + 5 + len
        };
        assert_eq!(bytes[first_fixed], 1, "{kind}: a CAN_DataFrame record");
        let offset_at = first_fixed + 1 + 20;
        let mut past_end = bytes.clone();
        past_end[offset_at..offset_at + 8].copy_from_slice(&1_000_000u64.to_le_bytes());
        let e = first_error(&past_end, &format!("past-end-{kind}.mf4"));
        let expected = if kind == "sd" {
            "points to offset 1000000 of its signal data, past its end"
        } else {
            "points to offset 1000000 of VLSD channel group 2"
        };
        assert!(e.contains(expected) && e.contains(":byte "), "{kind}: {e}");
        // A value longer than a CAN frame's 64 bytes.
        let mut huge = bytes.clone();
        let length_at = if kind == "sd" {
            bytes.windows(4).position(|w| w == b"##SD").unwrap() + 24
        } else {
            dt + 25
        };
        huge[length_at..length_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        let e = first_error(&huge, &format!("huge-{kind}.mf4"));
        assert!(
            e.contains("4294967295 data bytes, more than the 64 of a CAN frame") && e.contains(":byte "),
            "{kind}: {e}"
        );
    }
}
