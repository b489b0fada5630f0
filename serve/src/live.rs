//! A real-time run seen from the server: its session's lock-free metrics,
//! the recorded rows its observer hands over, its controls and the log
//! of its changes.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};
use tandem_runtime::tandem::metrics::Metrics;
use tandem_session::report::devices::DeviceView;
use tandem_session::report::live::counters_json;
use tandem_session::{ClockMode, Controls, Observer, Report, Session, SessionError};

use crate::confine::{relative, relative_json};
use crate::registry::Entry;
use crate::table::Table;

/// What the status of a run whose configuration has an `[ecu]` says of it.
const ECU_NOT_STARTED: &str = "this configuration's [ecu] is not started by a run started here; start the ECU \
                               yourself, or run the configuration with `tandem run`, which starts it";

/// How often the observer hands recorded rows to the table.
const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// How a run stands.
#[derive(Clone, Debug)]
enum RunState {
    Running,
    Ended { failure: Option<String>, report: Value },
}

/// What a run started here writes and leaves out, for its status.
#[derive(Clone, Debug, Default)]
pub(crate) struct About {
    /// The files it writes (its recording, its bus log), in the served folder.
    pub(crate) files: Vec<String>,
    /// Whether its configuration has an `[ecu]`, which a run started here does not start.
    pub(crate) ecu: bool,
}

/// A real-time run seen from the server.
pub struct LiveRun {
    pub(crate) id: String,
    name: String,
    config: String,
    clock: ClockMode,
    frame: f64,
    duration: f64,
    inputs: Vec<String>,
    /// The unit of each input and output that declares one, by name.
    units: BTreeMap<String, String>,
    pub(crate) table: Arc<Table>,
    metrics: Arc<Metrics>,
    devices: Vec<DeviceView>,
    pub(crate) controls: Mutex<Controls>,
    pub(crate) changes: Mutex<Vec<Value>>,
    state: Mutex<RunState>,
    /// The served folder, whose absolute path its end shows relative.
    folder: Option<PathBuf>,
    /// When it started (s since the Unix epoch).
    started: f64,
    /// Whether a stop was asked while it ran: it ends "stopped", not "done".
    stop_asked: AtomicBool,
    about: About,
}

impl LiveRun {
    pub(crate) fn is_running(&self) -> bool {
        matches!(*self.state.lock().unwrap_or_else(|e| e.into_inner()), RunState::Running)
    }

    /// Asks the run to stop at its next frame; one still running then ends "stopped".
    pub(crate) fn stop(&self) {
        if self.is_running() {
            self.stop_asked.store(true, Ordering::Relaxed);
        }
        self.controls.lock().unwrap_or_else(|e| e.into_inner()).stop();
    }

    /// How an ended run ended: failed, stopped when asked, else done.
    fn ended(&self, failure: &Option<String>) -> &'static str {
        if failure.is_some() {
            "failed"
        } else if self.stop_asked.load(Ordering::Relaxed) {
            "stopped"
        } else {
            "done"
        }
    }

    /// Run time now (s), from the frames run.
    pub(crate) fn now(&self) -> f64 {
        self.metrics.frames.get() as f64 * self.frame
    }

    /// The run's statistics now, counted from its start.
    pub(crate) fn stats(&self) -> Value {
        let mut stats = counters_json(&self.metrics, &self.devices);
        stats["type"] = json!("stats");
        stats["t"] = json!(self.now());
        stats
    }

    /// Logs a change: into the list, and on the server's standard error.
    pub(crate) fn log_change(&self, entry: Value) {
        eprintln!("run {}: change {entry}", self.id);
        self.changes.lock().unwrap_or_else(|e| e.into_inner()).push(entry);
    }

    /// Records the run's end.
    pub fn finish(&self, outcome: Result<&Report, &SessionError>) {
        let (mut failure, mut report) = match outcome {
            Ok(report) => (report.failure.clone(), report.json()),
            Err(e) => (Some(e.to_string()), Value::Null),
        };
        if let Some(folder) = &self.folder {
            failure = failure.map(|f| relative(folder, &f));
            relative_json(folder, &mut report);
        }
        let state = self.ended(&failure);
        let end = json!({"type": "end", "state": state, "error": failure, "report": report});
        // Ended before the stream says so: a client told of the end finds
        // the run ended.
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = RunState::Ended { failure, report };
        self.table.end(end);
    }
}

/// What the session shows a [`LiveRun`]: its recorded rows, and each poll
/// of its watching thread (a normal thread), where applied changes are
/// logged.
pub struct RunObserver {
    run: Arc<LiveRun>,
    rows: Vec<f64>,
    flushed: Instant,
    /// The frames have stopped: the last rows drained go to the table at
    /// once.
    stopped: bool,
}

impl RunObserver {
    /// Hands the rows held to the table.
    fn flush(&mut self) {
        self.run
            .table
            .append(&self.rows, Some(self.run.now() / self.run.duration));
        self.rows.clear();
        self.flushed = Instant::now();
    }
}

impl Observer for RunObserver {
    fn record(&mut self, t: f64, y: &[f64]) {
        self.rows.push(t);
        self.rows.extend_from_slice(y);
        if self.stopped {
            self.flush();
        }
    }

    fn tick(&mut self, running: bool) {
        self.stopped = !running;
        if !running || self.flushed.elapsed() >= FLUSH_EVERY {
            self.flush();
            let applied = self.run.controls.lock().unwrap_or_else(|e| e.into_inner()).applied();
            for a in applied {
                let requested = self
                    .run
                    .changes
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .iter()
                    .find(|c| c["seq"] == a.seq)
                    .cloned();
                let mut entry = requested.unwrap_or_else(|| json!({"type": "change", "seq": a.seq}));
                entry["applied_at_frame"] = json!(a.frame);
                entry["applied_at"] = json!(a.frame as f64 * self.run.frame);
                self.run.log_change(entry);
            }
        }
    }
}

/// Makes `session` a [`LiveRun`] called `id` (its configuration shown as
/// `config`), keeping at most `keep` recorded values, and the observer to
/// run it with.
pub fn attach(session: &mut Session, id: String, config: String, keep: usize) -> Option<(Arc<LiveRun>, RunObserver)> {
    attach_in(session, id, config, keep, None, About::default())
}

/// As [`attach`], for a run of the served `folder`, whose absolute path
/// its end shows relative, with what it writes and leaves out (`about`).
pub(crate) fn attach_in(
    session: &mut Session,
    id: String,
    config: String,
    keep: usize,
    folder: Option<PathBuf>,
    about: About,
) -> Option<(Arc<LiveRun>, RunObserver)> {
    let controls = session.controls()?;
    let settings = session.settings();
    let mut columns = vec!["time".to_string()];
    columns.extend(session.recorded().unwrap_or_default().iter().cloned());
    let run = Arc::new(LiveRun {
        id,
        name: session.name().to_string(),
        config,
        clock: session.clock(),
        frame: settings.frame,
        duration: settings.duration,
        inputs: controls.inputs(),
        units: session.units().iter().cloned().collect(),
        table: Table::new(columns, keep, None),
        metrics: Arc::clone(session.metrics()),
        devices: session.devices(),
        controls: Mutex::new(controls),
        changes: Mutex::new(Vec::new()),
        state: Mutex::new(RunState::Running),
        folder,
        started: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64()),
        stop_asked: AtomicBool::new(false),
        about,
    });
    let observer = RunObserver {
        run: Arc::clone(&run),
        rows: Vec::new(),
        flushed: Instant::now(),
        stopped: false,
    };
    Some((run, observer))
}

impl Entry for LiveRun {
    fn id(&self) -> &str {
        &self.id
    }

    fn running(&self) -> bool {
        self.is_running()
    }

    fn table(&self) -> &Table {
        &self.table
    }

    /// Its status, as the API shows it.
    fn json(&self) -> Value {
        let controls = self.controls.lock().unwrap_or_else(|e| e.into_inner());
        let faults: serde_json::Map<String, Value> = controls
            .fault_targets()
            .into_iter()
            .map(|(bus, sent)| (bus, json!(sent)))
            .collect();
        let tunable: Vec<Value> = controls
            .tunables()
            .into_iter()
            .map(|(block, param, value)| json!({"block": block, "param": param, "value": value}))
            .collect();
        drop(controls);
        let (state, error, report) = match &*self.state.lock().unwrap_or_else(|e| e.into_inner()) {
            RunState::Running => ("running", None, Value::Null),
            RunState::Ended { failure, report } => (self.ended(failure), failure.clone(), report.clone()),
        };
        json!({
            "id": self.id,
            "name": self.name,
            "config": self.config,
            "state": state,
            "clock": match self.clock { ClockMode::Real => "real", ClockMode::Virtual => "virtual" },
            "frame": self.frame,
            "duration": self.duration,
            "frames": self.metrics.frames.get(),
            "outputs": &self.table.columns()[1..],
            "inputs": self.inputs,
            "units": self.units,
            "tunable": tunable,
            "faults": faults,
            "error": error,
            "report": report,
            "dropped": self.table.dropped().then_some(crate::job::DROPPED),
            "started": self.started,
            "files": self.about.files,
            "ecu": self.about.ecu.then_some(ECU_NOT_STARTED),
        })
    }
}
