//! Vector's ASC log format, as CANalyzer and CANoe read it (and python-can's
//! `ASCReader`): a header with the start date, then one line per frame with
//! its time relative to the start, channel, identifier (`x` marks
//! extended), direction and data.

use std::io::{self, Write};

use super::{write_hex, ChannelNumbers, Direction, Entry, LogWriter};
use tandem_can::frame::FrameKind;

/// Writes frames as Vector ASC. Channels are numbered from 1 in the order
/// their interfaces are declared or first appear.
pub struct AscWriter<W: Write> {
    out: W,
    start_ns: i64,
    channels: ChannelNumbers,
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
            channels: ChannelNumbers::default(),
        })
    }
}

impl<W: Write + Send> LogWriter for AscWriter<W> {
    fn declare(&mut self, interface: &str) -> io::Result<()> {
        self.channels.of(interface);
        Ok(())
    }

    fn comment(&mut self, time_ns: i64, text: &str) -> io::Result<()> {
        let t = (time_ns - self.start_ns) as f64 * 1e-9;
        // One line: the text's first.
        writeln!(self.out, "// {t:>9.6} {}", text.lines().next().unwrap_or_default())
    }

    fn write_entry(&mut self, r: &Entry<'_>) -> io::Result<()> {
        let channel = self.channels.of(r.interface);
        let t = (r.time_ns - self.start_ns) as f64 * 1e-9;
        // The identifier as text, `x` marking extended, formatted on the
        // stack so that it can be padded without allocating.
        let mut id_text = [0u8; 9];
        let id_len = {
            let mut cursor = &mut id_text[..];
            let id = r.frame.id();
            write!(cursor, "{:X}{}", id.raw(), if id.is_extended() { "x" } else { "" })?;
            9 - cursor.len()
        };
        let id = std::str::from_utf8(&id_text[..id_len]).unwrap_or_default();
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
        MONTHS[month as usize - 1].0
    )
}

/// The month names of ASC dates (English, and the German ones that differ).
const MONTHS: [(&str, i64); 16] = [
    ("Jan", 1),
    ("Feb", 2),
    ("Mar", 3),
    ("Apr", 4),
    ("May", 5),
    ("Jun", 6),
    ("Jul", 7),
    ("Aug", 8),
    ("Sep", 9),
    ("Oct", 10),
    ("Nov", 11),
    ("Dec", 12),
    ("Mär", 3),
    ("Mai", 5),
    ("Okt", 10),
    ("Dez", 12),
];

/// Nanoseconds since the epoch of an ASC date after its weekday, e.g.
/// `Nov 21 10:30:15.250 2026` or `Nov 21 10:30:15.250 am 2026` (read as
/// UTC), or `None` when it is not one.
pub(super) fn parse_asc_date(text: &str) -> Option<i64> {
    let mut fields = text.split_ascii_whitespace();
    let month = fields.next()?;
    let month = MONTHS.iter().find(|(name, _)| *name == month)?.1;
    let day: i64 = fields.next()?.parse().ok()?;
    let mut clock = fields.next()?.split(':');
    let hour: i64 = clock.next()?.parse().ok()?;
    let minute: i64 = clock.next()?.parse().ok()?;
    let second_ns = super::seconds_to_ns(clock.next()?)?;
    let mut next = fields.next()?;
    let hour = match next.to_ascii_lowercase().as_str() {
        "am" | "pm" if !(1..=12).contains(&hour) => return None,
        "am" => {
            next = fields.next()?;
            hour % 12
        }
        "pm" => {
            next = fields.next()?;
            hour % 12 + 12
        }
        _ => hour,
    };
    let year: i64 = next.parse().ok()?;
    if fields.next().is_some()
        || !(1..=9999).contains(&year)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second_ns >= 61_000_000_000
    {
        return None;
    }
    let seconds = days_from_civil(year, month, day).checked_mul(86_400)? + hour * 3600 + minute * 60;
    seconds.checked_mul(1_000_000_000)?.checked_add(second_ns)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (the inverse of
/// [`civil_from_days`], Howard Hinnant's algorithm).
pub(super) fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Year, month and day of `days` since 1970-01-01 (Howard Hinnant's
/// algorithm for the proleptic Gregorian calendar).
pub(super) fn civil_from_days(days: i64) -> (i64, i64, i64) {
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
        assert_eq!(days_from_civil(2000, 2, 29), 11_016);
        let date = asc_date(1_795_257_015_250_000_000);
        assert_eq!(parse_asc_date(&date[4..]), Some(1_795_257_015_250_000_000));
        assert_eq!(
            parse_asc_date("Nov 21 10:30:15.250 am 2026"),
            Some(1_795_257_015_250_000_000)
        );
        assert_eq!(
            parse_asc_date("Nov 21 12:00:00 am 2026"),
            parse_asc_date("Nov 21 00:00:00 2026")
        );
        assert_eq!(
            parse_asc_date("Nov 21 10:30:15.250 pm 2026"),
            Some(1_795_300_215_250_000_000)
        );
        assert_eq!(parse_asc_date("Foo 21 10:30:15 2026"), None);
    }
}
