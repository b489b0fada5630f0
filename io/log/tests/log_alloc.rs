//! The bus log writers do not allocate per frame once warmed up (their
//! interfaces seen, their buffers grown): thousands of frames of every
//! kind on two interfaces, with the periodic flushes the log thread makes
//! (which compress BLF containers and rewrite BLF and MF4 headers), are
//! written by each format's writer with a counting allocator watching.

#[path = "../../../tests/support/counting_alloc.rs"]
mod counting_alloc;

use std::io::{self, Seek, SeekFrom, Write};

use tandem_can::{CanFrame, CanId};
use tandem_log::{AscWriter, BlfWriter, CandumpWriter, Direction, LogRecord, LogWriter, Mf4Writer};

/// A file that keeps nothing: writing and seeking cost no allocation.
#[derive(Default)]
struct Discard {
    position: u64,
    len: u64,
}

impl Write for Discard {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.position += buf.len() as u64;
        self.len = self.len.max(self.position);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Seek for Discard {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.position = match to {
            SeekFrom::Start(p) => p,
            SeekFrom::End(d) => self.len.saturating_add_signed(d),
            SeekFrom::Current(d) => self.position.saturating_add_signed(d),
        };
        Ok(self.position)
    }
}

/// Frames of every kind on two interfaces, payloads varying.
fn records() -> Vec<LogRecord> {
    let std = CanId::standard(0x123).unwrap();
    let ext = CanId::extended(0x18FF_3000).unwrap();
    (0..4000u32)
        .map(|i| {
            let byte = i as u8;
            let frame = match i % 4 {
                0 => CanFrame::data(std, &[byte; 8]).unwrap(),
                1 => CanFrame::fd(ext, &[byte.wrapping_mul(31); 64], true, i % 8 == 1).unwrap(),
                2 => CanFrame::remote(ext, 4).unwrap(),
                _ => CanFrame::fd(std, &[byte; 12], false, false).unwrap(),
            };
            LogRecord {
                time_ns: 1_795_257_015_250_000_000 + i64::from(i) * 137_913,
                interface: if i % 3 == 0 { "can0" } else { "can1" }.into(),
                frame,
                direction: if i % 5 == 0 { Direction::Tx } else { Direction::Rx },
            }
        })
        .collect()
}

/// Allocations while `writer` writes `records` after a warm-up of the
/// same, flushing every 100 frames as the log thread does when idle.
fn allocations(mut writer: impl LogWriter, records: &[LogRecord]) -> u64 {
    let write_all = |writer: &mut dyn LogWriter| {
        for (i, r) in records.iter().enumerate() {
            writer.write(r).unwrap();
            if i % 100 == 99 {
                writer.flush().unwrap();
            }
        }
    };
    write_all(&mut writer);
    let count = counting_alloc::allocations_in(|| write_all(&mut writer));
    writer.finish().unwrap();
    count
}

#[test]
fn no_writer_allocates_per_frame_once_warm() {
    let records = records();
    let start = records[0].time_ns;
    // The counter sees this test's allocations: it is checked first.
    assert!(counting_alloc::allocations_in(|| drop(std::hint::black_box(vec![1u8; 64]))) > 0);
    assert_eq!(
        allocations(CandumpWriter::new(Discard::default()), &records),
        0,
        "candump"
    );
    assert_eq!(
        allocations(AscWriter::new(Discard::default(), start).unwrap(), &records),
        0,
        "ASC"
    );
    assert_eq!(
        allocations(BlfWriter::new(Discard::default(), start).unwrap(), &records),
        0,
        "BLF"
    );
    assert_eq!(
        allocations(Mf4Writer::new(Discard::default(), start).unwrap(), &records),
        0,
        "MF4"
    );
}
