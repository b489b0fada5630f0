//! Recording of model outputs: to CSV files as the run goes (so that what
//! was written survives a failure later in the run), or to memory.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Receives the outputs at every recorded instant.
pub trait Recorder {
    /// Records the outputs `y` at time `t`.
    fn record(&mut self, t: f64, y: &[f64]) -> io::Result<()>;
    /// Records the outputs `y` at time `t` with a label for the row (a
    /// real-time frame's source); by default the label is dropped.
    fn record_labelled(&mut self, t: f64, y: &[f64], label: &'static str) -> io::Result<()> {
        let _ = label;
        self.record(t, y)
    }
    /// Flushes whatever is buffered.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes `time,<output names>` then one row per instant, and the rows'
/// labels in a last column when it has one. Values are written in their
/// shortest round-trip form ([`write_number`]), so reading them back gives
/// the same bits.
pub struct CsvRecorder<W: Write> {
    out: W,
    labelled: bool,
    digits: ryu::Buffer,
}

impl CsvRecorder<BufWriter<File>> {
    /// Creates `path` and writes the header (with a last column `label`
    /// for the rows' labels, if given).
    pub fn create(path: &Path, names: &[String], label: Option<&str>) -> io::Result<Self> {
        CsvRecorder::new(BufWriter::new(File::create(path)?), names, label)
    }
}

impl<W: Write> CsvRecorder<W> {
    /// Writes the header to `out` (with a last column `label` for the
    /// rows' labels, if given).
    pub fn new(mut out: W, names: &[String], label: Option<&str>) -> io::Result<Self> {
        write!(out, "time")?;
        for name in names.iter().map(String::as_str).chain(label) {
            write!(out, ",{}", csv_field(name))?;
        }
        writeln!(out)?;
        Ok(CsvRecorder {
            out,
            labelled: label.is_some(),
            digits: ryu::Buffer::new(),
        })
    }

    /// The values of a row, without its end.
    fn values(&mut self, t: f64, y: &[f64]) -> io::Result<()> {
        write_number(&mut self.out, &mut self.digits, t)?;
        for &v in y {
            self.out.write_all(b",")?;
            write_number(&mut self.out, &mut self.digits, v)?;
        }
        Ok(())
    }
}

/// Writes `v` in the shortest form that reads back to the same bits, as
/// ryu gives it, with an exponent where that is shorter (2.2e-308 takes 8
/// characters, not 326) and without ryu's trailing `.0` on whole numbers
/// (`1`, not `1.0`); NaN and the infinities as `NaN`, `inf`, `-inf`.
/// Allocates nothing.
pub fn write_number(out: &mut impl Write, digits: &mut ryu::Buffer, v: f64) -> io::Result<()> {
    let text = digits.format(v);
    out.write_all(text.strip_suffix(".0").unwrap_or(text).as_bytes())
}

/// Quotes a header field when it holds a comma or a quote.
fn csv_field(name: &str) -> String {
    if name.contains([',', '"', '\n']) {
        format!("\"{}\"", name.replace('"', "\"\""))
    } else {
        name.to_string()
    }
}

impl<W: Write> Recorder for CsvRecorder<W> {
    fn record(&mut self, t: f64, y: &[f64]) -> io::Result<()> {
        self.values(t, y)?;
        // A row without a label leaves the label column empty.
        self.out.write_all(if self.labelled { b",\n" } else { b"\n" })
    }
    fn record_labelled(&mut self, t: f64, y: &[f64], label: &'static str) -> io::Result<()> {
        if !self.labelled {
            return self.record(t, y);
        }
        self.values(t, y)?;
        writeln!(self.out, ",{label}")
    }
    fn finish(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl<W: Write> Drop for CsvRecorder<W> {
    /// Keeps the rows written so far when a run stops on an error.
    fn drop(&mut self) {
        let _ = self.out.flush();
    }
}

/// Keeps every recorded row in memory.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    /// Recorded times.
    pub time: Vec<f64>,
    /// Recorded outputs, one row per time.
    pub rows: Vec<Vec<f64>>,
    /// The labels of the rows recorded with one (a real-time frame's
    /// source), in order.
    pub labels: Vec<&'static str>,
}

impl Trace {
    /// The values of output `j` over time.
    pub fn column(&self, j: usize) -> Vec<f64> {
        self.rows.iter().map(|r| r[j]).collect()
    }
}

impl Recorder for Trace {
    fn record(&mut self, t: f64, y: &[f64]) -> io::Result<()> {
        self.time.push(t);
        self.rows.push(y.to_vec());
        Ok(())
    }
    fn record_labelled(&mut self, t: f64, y: &[f64], label: &'static str) -> io::Result<()> {
        self.labels.push(label);
        self.record(t, y)
    }
}

/// Sends each row to two recorders.
pub struct Both<'a>(pub &'a mut dyn Recorder, pub &'a mut dyn Recorder);

impl Recorder for Both<'_> {
    fn record(&mut self, t: f64, y: &[f64]) -> io::Result<()> {
        self.0.record(t, y)?;
        self.1.record(t, y)
    }
    fn record_labelled(&mut self, t: f64, y: &[f64], label: &'static str) -> io::Result<()> {
        self.0.record_labelled(t, y, label)?;
        self.1.record_labelled(t, y, label)
    }
    fn finish(&mut self) -> io::Result<()> {
        self.0.finish()?;
        self.1.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_rows_round_trip_exactly() {
        let mut buf = Vec::new();
        {
            let mut r = CsvRecorder::new(&mut buf, &["a".into(), "b,c".into()], None).unwrap();
            r.record(0.1, &[1.0 / 3.0, -2.5e-300]).unwrap();
            r.finish().unwrap();
        }
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(text.lines().next(), Some("time,a,\"b,c\""));
        let row: Vec<f64> = text
            .lines()
            .nth(1)
            .unwrap()
            .split(',')
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(row, vec![0.1, 1.0 / 3.0, -2.5e-300]);
    }

    #[test]
    fn numbers_are_written_in_their_shortest_round_trip_form() {
        let written = |v: f64| {
            let mut out = Vec::new();
            write_number(&mut out, &mut ryu::Buffer::new(), v).unwrap();
            String::from_utf8(out).unwrap()
        };
        // The shortest form that reads back, never the exact decimal (326
        // characters for 2.2e-308).
        let cases = [
            (2.2e-308, "2.2e-308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (5e-324, "5e-324"),
            (1e300, "1e300"),
            (1.0, "1"),
            (-0.0, "-0"),
            (0.0, "0"),
            (123456.0, "123456"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.3333333333333333"),
            (1e-7, "1e-7"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
        ];
        for (v, text) in cases {
            assert_eq!(written(v), text);
            let back: f64 = text.parse().unwrap();
            assert!(back.to_bits() == v.to_bits() || v.is_nan(), "{text}");
        }
    }

    #[test]
    fn a_label_column_holds_each_rows_label() {
        let mut buf = Vec::new();
        {
            let mut r = CsvRecorder::new(&mut buf, &["a".into()], Some("frame_source")).unwrap();
            r.record_labelled(0.0, &[1.5], "implicit").unwrap();
            r.record_labelled(0.001, &[2.0], "held").unwrap();
            r.record(0.002, &[2.5]).unwrap();
        }
        let text = String::from_utf8(buf).unwrap();
        assert_eq!(text, "time,a,frame_source\n0,1.5,implicit\n0.001,2,held\n0.002,2.5,\n");
    }
}
