//! Vector's ASC log format, as CANalyzer and CANoe read it (and python-can's
//! `ASCReader`): a header with the start date, then one line per frame with
//! its time relative to the start, channel, identifier (`x` marks
//! extended), direction and data.

use std::io::{self, Write};

use super::{write_hex, Direction, LogRecord, LogWriter};
use crate::frame::FrameKind;

/// Writes frames as Vector ASC. Channels are numbered from 1 in the order
/// their interfaces first appear.
pub struct AscWriter<W: Write> {
    out: W,
    start_ns: i64,
    channels: Vec<String>,
}

impl<W: Write> AscWriter<W> {
    /// A writer into `out` whose times count from `start_ns` (nanoseconds
    /// since the Unix epoch, also written as the start date); writes the
    /// header at once.
    pub fn new(mut out: W, start_ns: i64) -> io::Result<Self> {
        let date = asc_date(start_ns);
        writeln!(out, "date {date}")?;
        writeln!(out, "base hex  timestamps absolute")?;
        writeln!(out, "internal events logged")?;
        writeln!(out, "Begin Triggerblock {date}")?;
        writeln!(out, "{:>9.6} Start of measurement", 0.0)?;
        Ok(AscWriter {
            out,
            start_ns,
            channels: Vec::new(),
        })
    }

    fn channel(&mut self, interface: &str) -> usize {
        match self.channels.iter().position(|c| c == interface) {
            Some(i) => i + 1,
            None => {
                self.channels.push(interface.to_owned());
                self.channels.len()
            }
        }
    }
}

impl<W: Write + Send> LogWriter for AscWriter<W> {
    fn write(&mut self, r: &LogRecord) -> io::Result<()> {
        let channel = self.channel(&r.interface);
        let t = (r.time_ns - self.start_ns) as f64 * 1e-9;
        let id = r.frame.id();
        let id = if id.is_extended() {
            format!("{:X}x", id.raw())
        } else {
            format!("{:X}", id.raw())
        };
        let dir = match r.direction {
            Direction::Rx => "Rx",
            Direction::Tx => "Tx",
        };
        write!(self.out, "{t:>9.6} ")?;
        match r.frame.kind() {
            FrameKind::Fd { brs, esi } => {
                let flags = 1 << 12 | u32::from(brs) << 13 | u32::from(esi) << 14;
                write!(
                    self.out,
                    "CANFD {channel:>3} {dir:<4} {id:>8}  {:>32} {} {} {:x} {:>2} ",
                    "",
                    u8::from(brs),
                    u8::from(esi),
                    r.frame.dlc(),
                    r.frame.len()
                )?;
                write_hex(&mut self.out, r.frame.payload(), " ")?;
                writeln!(
                    self.out,
                    " {:>8} {:>4} {flags:>8X} {:>8} {:>8} {:>8} {:>8} {:>8}",
                    0, 0, 0, 0, 0, 0, 0
                )
            }
            FrameKind::Remote => writeln!(self.out, "{channel}  {id:<15} {dir:<4} r {:x}", r.frame.len()),
            FrameKind::Data => {
                write!(self.out, "{channel}  {id:<15} {dir:<4} d {:x} ", r.frame.len())?;
                write_hex(&mut self.out, r.frame.payload(), " ")?;
                writeln!(self.out)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn finish(&mut self) -> io::Result<()> {
        writeln!(self.out, "End TriggerBlock")?;
        self.out.flush()
    }
}

/// `Sat Nov 21 10:00:00.000 am 2026`-style date of `ns` since the epoch
/// (UTC), as python-can and CANoe write it.
fn asc_date(ns: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let ms = ns.div_euclid(1_000_000);
    let days = ms.div_euclid(86_400_000);
    let in_day = ms.rem_euclid(86_400_000);
    let (year, month, day) = civil_from_days(days);
    let (h, m, s, milli) = (
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000,
    );
    format!(
        "{} {} {day:02} {h:02}:{m:02}:{s:02}.{milli:03} {year}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[month as usize - 1]
    )
}

/// Year, month and day of `days` since 1970-01-01 (Howard Hinnant's
/// algorithm for the proleptic Gregorian calendar).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_match_the_calendar() {
        assert_eq!(asc_date(0), "Thu Jan 01 00:00:00.000 1970");
        // 2026-11-21 10:30:15.250 UTC, a Saturday.
        assert_eq!(asc_date(1_795_257_015_250_000_000), "Sat Nov 21 10:30:15.250 2026");
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
