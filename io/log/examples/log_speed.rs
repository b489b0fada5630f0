//! How fast each bus log format is written and read back: one hour of two
//! busy buses (1000 frames/s each, classic and CAN FD, 7.2 million frames)
//! written by Tandem's writer for candump, ASC, BLF and MF4, then read by
//! the reader replay uses, printing each one's time and how many times
//! faster than real time reading is.
//!
//! ```sh
//! cargo run --release -p tandem-log --example log_speed [SECONDS [EXTENSION...]]
//! ```
//!
//! (extensions `log`, `asc`, `blf`, `mf4`; all by default).

use std::fs::File;
use std::time::Instant;

use tandem_can::{CanFrame, CanId};
use tandem_log::{create, Direction, Entry, LogReader};

fn main() {
    let seconds: i64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(3600);
    let mut extensions: Vec<String> = std::env::args().skip(2).collect();
    if extensions.is_empty() {
        extensions = ["log", "asc", "blf", "mf4"].map(String::from).to_vec();
    }
    let dir = std::env::temp_dir().join(format!("tandem-log-speed-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let classic = CanId::standard(0x200).expect("an identifier");
    let fd = CanId::extended(0x18FF_3000).expect("an identifier");
    let frames = seconds * 2000;
    println!("{seconds} s of two buses at 1000 frames/s each: {frames} frames");
    for extension in &extensions {
        let name = format!("hour.{extension}");
        let path = dir.join(&name);
        let started = Instant::now();
        let mut writer = create(&path, 1_700_000_000_000_000_000).expect("the log is created");
        for i in 0..frames {
            let byte = i as u8;
            let frame = if i % 4 == 3 {
                CanFrame::fd(fd, &[byte; 32], true, false)
            } else {
                CanFrame::data(classic, &[byte, byte ^ 0x5A, 3, 4, 5, 6, 7, 8])
            }
            .expect("a frame");
            let entry = Entry {
                time_ns: 1_700_000_000_000_000_000 + i * 500_000,
                interface: if i % 2 == 0 { "can0" } else { "can1" },
                frame,
                direction: if i % 3 == 0 { Direction::Tx } else { Direction::Rx },
            };
            writer.write_entry(&entry).expect("the frame is written");
        }
        writer.finish().expect("the log is finished");
        let wrote = started.elapsed().as_secs_f64();
        let size = std::fs::metadata(&path).map_or(0, |m| m.len());
        let started = Instant::now();
        let mut reader = LogReader::new(File::open(&path).expect("the log opens"), &path).expect("the log reads");
        let mut count = 0i64;
        while let Some(entry) = reader.next_entry() {
            entry.expect("a frame");
            count += 1;
        }
        let read = started.elapsed().as_secs_f64();
        assert_eq!(count, frames, "{name}");
        println!(
            "  {name}: {:.0} MB, written in {wrote:.2} s, read in {read:.2} s: {:.0} frames/s, {:.0}x real time",
            size as f64 / 1e6,
            count as f64 / read,
            seconds as f64 / read
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
