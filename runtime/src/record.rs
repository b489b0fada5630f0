//! Recording of model outputs: to CSV files as the run goes (so that what
//! was written survives a failure later in the run), or to memory.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Receives the outputs at every recorded instant.
pub trait Recorder {
    /// Records the outputs `y` at time `t`.
    fn record(&mut self, t: f64, y: &[f64]) -> io::Result<()>;
    /// Flushes whatever is buffered.
    fn finish(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Writes `time,<output names>` then one row per instant. Values are
/// written with Rust's shortest round-trip formatting, so reading them back
/// gives the same bits.
pub struct CsvRecorder<W: Write> {
    out: W,
}

impl CsvRecorder<BufWriter<File>> {
    /// Creates `path` and writes the header.
    pub fn create(path: &Path, names: &[String]) -> io::Result<Self> {
        CsvRecorder::new(BufWriter::new(File::create(path)?), names)
    }
}

impl<W: Write> CsvRecorder<W> {
    /// Writes the header to `out`.
    pub fn new(mut out: W, names: &[String]) -> io::Result<Self> {
        write!(out, "time")?;
        for name in names {
            write!(out, ",{}", csv_field(name))?;
        }
        writeln!(out)?;
        Ok(CsvRecorder { out })
    }
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
        write!(self.out, "{t}")?;
        for v in y {
            write!(self.out, ",{v}")?;
        }
        writeln!(self.out)
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
}

/// Sends each row to two recorders.
pub struct Both<'a>(pub &'a mut dyn Recorder, pub &'a mut dyn Recorder);

impl Recorder for Both<'_> {
    fn record(&mut self, t: f64, y: &[f64]) -> io::Result<()> {
        self.0.record(t, y)?;
        self.1.record(t, y)
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
            let mut r = CsvRecorder::new(&mut buf, &["a".into(), "b,c".into()]).unwrap();
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
}
