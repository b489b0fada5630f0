//! The recording: what the fast thread records, prepared before the
//! tandem is assembled (its size bounded, its CSV file created with its
//! header), then drained as the run goes to the observer and the file.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

use tandem_config::bounds::check_output_size;
use tandem_models::Layout;
use tandem_runtime::record::{CsvRecorder, Recorder};
use tandem_runtime::tandem::assemble::RecordPlan;
use tandem_runtime::tandem::recording::RowReceiver;
use tandem_runtime::tandem::TandemSettings;

use super::error::SessionError;
use super::files::{create_output, in_results};
use super::options::{Observer, Options};
use crate::bind::BoundRecording;

/// A recording's CSV file, and where it is.
pub(super) type CsvFile = (CsvRecorder<BufWriter<File>>, PathBuf);

/// The recording: the fast thread's rows, drained to the observer and
/// into a CSV file.
pub(super) struct Recording {
    rows: RowReceiver,
    /// The CSV file, open while the run writes it.
    pub(super) csv: Option<CsvFile>,
    /// The CSV file, kept for the report after `csv` is closed.
    pub(super) file: Option<PathBuf>,
    /// The rows drained so far.
    pub(super) written: usize,
    /// The first error writing the CSV file.
    pub(super) error: Option<io::Error>,
}

/// Recorded rows as they reach the observer (and the CSV file).
struct Rows<'a> {
    csv: Option<&'a mut CsvRecorder<BufWriter<File>>>,
    observer: &'a mut dyn Observer,
}

impl Recorder for Rows<'_> {
    fn record(&mut self, t: f64, y: &[f64]) -> io::Result<()> {
        self.observer.record(t, y);
        match self.csv.as_mut() {
            Some(csv) => csv.record(t, y),
            None => Ok(()),
        }
    }
    fn record_labelled(&mut self, t: f64, y: &[f64], label: &'static str) -> io::Result<()> {
        self.observer.record(t, y);
        match self.csv.as_mut() {
            Some(csv) => csv.record_labelled(t, y, label),
            None => Ok(()),
        }
    }
}

impl Recording {
    /// The recording whose rows come from `rows`, written into `csv` when
    /// it has a file.
    pub(super) fn new(rows: RowReceiver, csv: Option<CsvFile>) -> Self {
        Recording {
            rows,
            file: csv.as_ref().map(|(_, file)| file.clone()),
            csv,
            written: 0,
            error: None,
        }
    }

    /// Hands what the ring holds to `observer` and writes it to the CSV
    /// file; the first write error is kept and reported at the end (the
    /// rest of the run goes on, the observer still sees every row).
    pub(super) fn drain(&mut self, observer: &mut dyn Observer) {
        let csv = match (&mut self.csv, &self.error) {
            (Some((csv, _)), None) => Some(csv),
            _ => None,
        };
        let mut rows = Rows { csv, observer };
        match self.rows.drain(&mut rows) {
            Ok(n) => self.written += n,
            Err(e) => self.error = Some(e),
        }
    }
}

/// What a run records, prepared before its tandem is assembled.
pub(super) struct RecordSetup {
    /// The CSV file, created with its header, when the recording has one.
    pub(super) csv: Option<CsvFile>,
    /// The recorded outputs' names, when there is a recording.
    pub(super) recorded: Option<Vec<String>>,
    /// What the fast thread records.
    pub(super) plan: Option<RecordPlan>,
}

/// A stage of [`Session::new`](super::Session::new): refuses a recording
/// file larger than the bound (unless `options.large_output`), creates
/// the file in `options.results` with its header, and says what the fast
/// thread records of `layout`'s outputs.
pub(super) fn prepare_recording(
    record: Option<BoundRecording>,
    settings: &TandemSettings,
    options: &Options,
    layout: &Layout,
) -> Result<RecordSetup, SessionError> {
    let csv = match &record {
        Some(r) => {
            if r.file.is_some() {
                let rows = settings.frames() as f64 / r.decimation as f64;
                check_output_size(rows, r.signals.len() + 1, options.large_output)?;
            }
            recording_file(r, &options.results, layout)?
        }
        None => None,
    };
    let recorded = record
        .as_ref()
        .map(|r| r.signals.iter().map(|&i| layout.outputs[i].name.clone()).collect());
    let plan = record.map(|r| RecordPlan {
        signals: r.signals,
        decimation: r.decimation,
    });
    Ok(RecordSetup { csv, recorded, plan })
}

/// The CSV file of a recording, if it has one, created with its header.
fn recording_file(record: &BoundRecording, results: &Path, layout: &Layout) -> Result<Option<CsvFile>, SessionError> {
    let Some(file) = &record.file else {
        return Ok(None);
    };
    let file = in_results(results, file);
    let header: Vec<String> = record.signals.iter().map(|&i| layout.outputs[i].name.clone()).collect();
    let csv = create_output(&file, "cannot create the recording", |f| {
        CsvRecorder::create(f, &header, record.frame_source.then_some("frame_source"))
    })?;
    Ok(Some((csv, file)))
}

#[cfg(test)]
mod tests {
    use super::super::options::ClockMode;
    use super::super::testing::ev;
    use super::*;

    #[test]
    fn a_recording_file_is_created_with_its_header() {
        let (dir, plan) = ev("recording-file", "duration = \"10ms\"\n");
        let record = BoundRecording {
            file: Some("out/run.csv".into()),
            signals: vec![0, 1],
            decimation: 2,
            frame_source: true,
        };
        let options = Options::new(ClockMode::Virtual, &dir);
        let layout = plan.model.layout();
        let setup = prepare_recording(Some(record), &plan.settings, &options, layout).unwrap();
        let names = [layout.outputs[0].name.clone(), layout.outputs[1].name.clone()];
        assert_eq!(setup.recorded.as_deref(), Some(&names[..]));
        let record_plan = setup.plan.expect("the fast thread records");
        assert_eq!((record_plan.signals, record_plan.decimation), (vec![0, 1], 2));
        let (csv, file) = setup.csv.expect("a file");
        assert_eq!(file, dir.join("out/run.csv"));
        drop(csv);
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text, format!("time,{},{},frame_source\n", names[0], names[1]));
    }

    #[test]
    fn no_recording_prepares_nothing() {
        let (dir, plan) = ev("recording-none", "");
        let options = Options::new(ClockMode::Virtual, &dir);
        let setup = prepare_recording(None, &plan.settings, &options, plan.model.layout()).unwrap();
        assert!(setup.csv.is_none() && setup.recorded.is_none() && setup.plan.is_none());
    }

    #[test]
    fn a_recording_above_the_bound_is_refused_unless_allowed() {
        let (dir, plan) = ev("recording-bound", "");
        let record = || BoundRecording {
            file: Some("big.csv".into()),
            signals: vec![0],
            decimation: 1,
            frame_source: false,
        };
        let settings = TandemSettings::new(1e-6, 1e4);
        let mut options = Options::new(ClockMode::Virtual, &dir);
        let refused = prepare_recording(Some(record()), &settings, &options, plan.model.layout());
        assert!(matches!(refused, Err(SessionError::OutputTooLarge(_))));
        assert!(!dir.join("big.csv").exists());
        options.large_output = true;
        let allowed = prepare_recording(Some(record()), &settings, &options, plan.model.layout()).unwrap();
        assert!(allowed.csv.is_some());
    }
}
