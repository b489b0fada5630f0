//! One offline simulation: run on a worker thread into a [`Table`],
//! cancelled or stopped at its wall-time bound with its rows kept.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem_models::diagram::locate_block;
use tandem_runtime::record::Recorder;
use tandem_runtime::{SimError, Simulation};
use tandem_session::offline::sim_error_block;

use crate::error::ApiError;
use crate::registry::Entry;
use crate::table::Table;

/// Rows a simulation buffers before handing them to its table.
const FLUSH_ROWS: usize = 4096;
/// The longest a row waits in that buffer.
const FLUSH_EVERY: Duration = Duration::from_millis(50);

/// What a simulation whose rows were dropped says in its status.
pub(crate) const DROPPED: &str =
    "its rows were dropped: over the server's memory budget (--memory-budget), which keeps the newest results; \
     run it again to see them";

/// How a simulation stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum JobState {
    Running,
    Done,
    Failed,
    Cancelled,
}

impl JobState {
    fn name(self) -> &'static str {
        match self {
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }
}

/// One simulation, running or ended.
pub struct Job {
    id: String,
    /// The model's name, for the CSV file's name.
    pub(crate) name: String,
    /// Its rows.
    pub(crate) table: Arc<Table>,
    expected_rows: u64,
    /// How its model is evaluated (a block diagram's machine code), in
    /// one line.
    evaluation: Option<String>,
    cancel: AtomicBool,
    outcome: Mutex<(JobState, Option<String>, Option<String>)>,
}

impl Job {
    /// A running simulation called `id` of model `name`, filling `table`
    /// with `expected_rows`, its model evaluated as `evaluation` says.
    pub(crate) fn new(
        id: String,
        name: String,
        table: Arc<Table>,
        expected_rows: u64,
        evaluation: Option<String>,
    ) -> Arc<Job> {
        Arc::new(Job {
            id,
            name,
            table,
            expected_rows,
            evaluation,
            cancel: AtomicBool::new(false),
            outcome: Mutex::new((JobState::Running, None, None)),
        })
    }

    /// Asks it to stop at its next batch of rows.
    pub(crate) fn cancel(&self) {
        self.cancel.store(true, Ordering::Release);
    }

    fn state(&self) -> JobState {
        self.outcome.lock().unwrap_or_else(|e| e.into_inner()).0
    }
}

impl Entry for Job {
    fn id(&self) -> &str {
        &self.id
    }

    fn running(&self) -> bool {
        self.state() == JobState::Running
    }

    fn table(&self) -> &Table {
        &self.table
    }

    /// Its status, as the API shows it.
    fn json(&self) -> Value {
        let (state, error, summary) = self.outcome.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let status = self.table.status();
        json!({
            "id": self.id,
            "name": self.name,
            "state": state.name(),
            "progress": status.progress,
            "rows": status.rows,
            "expected_rows": self.expected_rows,
            "columns": self.table.columns(),
            "evaluation": self.evaluation,
            "error": error,
            "summary": summary,
            "dropped": self.table.dropped().then_some(DROPPED),
        })
    }
}

/// A simulation's error as `tandem sim` words it, at the block's line
/// and column when it names one.
pub(crate) fn sim_error(model: &str, error: &SimError) -> ApiError {
    let mut e = ApiError::unprocessable(error.to_string());
    if let Some(block) = sim_error_block(error) {
        e = e.at("block", block);
        if let Some((line, column)) = locate_block(model, block) {
            e = e.at("line", line).at("column", column);
        }
    }
    e
}

/// Why a simulation stopped before its end.
enum Stopped {
    Cancelled,
    TimeLimit(Duration),
    Failed(String),
}

/// Rows into the job's table, in batches; stops the run when cancelled
/// or out of time.
struct Collect<'a> {
    job: &'a Job,
    rows: Vec<f64>,
    flushed: Instant,
    started: Instant,
    wall: Duration,
    stopped: Option<Stopped>,
}

impl Collect<'_> {
    fn flush(&mut self) {
        let progress = self.table_progress();
        self.job.table.append(&self.rows, Some(progress));
        self.rows.clear();
        self.flushed = Instant::now();
    }

    fn table_progress(&self) -> f64 {
        let width = self.job.table.columns().len();
        let rows = self.job.table.status().rows + (self.rows.len() / width) as u64;
        (rows as f64 / self.job.expected_rows.max(1) as f64).min(1.0)
    }
}

impl Recorder for Collect<'_> {
    fn record(&mut self, t: f64, y: &[f64]) -> io::Result<()> {
        self.rows.push(t);
        self.rows.extend_from_slice(y);
        if self.rows.len() >= FLUSH_ROWS * (y.len() + 1) || self.flushed.elapsed() >= FLUSH_EVERY {
            self.flush();
            if self.job.cancel.load(Ordering::Acquire) {
                self.stopped = Some(Stopped::Cancelled);
            } else if self.started.elapsed() > self.wall {
                self.stopped = Some(Stopped::TimeLimit(self.wall));
            }
            if self.stopped.is_some() {
                return Err(io::Error::other("stopped"));
            }
        }
        Ok(())
    }

    fn finish(&mut self) -> io::Result<()> {
        self.flush();
        Ok(())
    }
}

/// Runs the simulation into the job's table; its summary line, or why it
/// stopped.
fn run(simulation: &mut Simulation<'static>, job: &Job, wall: Duration, model: &str) -> Result<String, Stopped> {
    let mut collect = Collect {
        job,
        rows: Vec::new(),
        flushed: Instant::now(),
        started: Instant::now(),
        wall,
        stopped: None,
    };
    let result = simulation.run(&mut collect, &mut |_| {});
    collect.flush();
    match (result, collect.stopped) {
        (Ok(summary), _) => Ok(format!(
            "{} steps to t = {} s in {:.3} s, {} evaluations, {} events",
            summary.steps,
            simulation.time(),
            summary.wall.as_secs_f64(),
            summary.evaluations,
            summary.events
        )),
        (Err(_), Some(stopped)) => Err(stopped),
        (Err(e), None) => Err(Stopped::Failed(sim_error(model, &e).message)),
    }
}

/// Records the outcome and ends the table's stream.
fn finish(job: &Job, outcome: Result<String, Stopped>) {
    let (state, error, summary) = match outcome {
        Ok(summary) => (JobState::Done, None, Some(summary)),
        Err(Stopped::Cancelled) => (
            JobState::Cancelled,
            Some("cancelled; the rows before are kept".into()),
            None,
        ),
        Err(Stopped::TimeLimit(wall)) => (
            JobState::Failed,
            Some(format!(
                "stopped after {} s of wall time, the server's limit of one simulation; the rows before are kept",
                wall.as_secs()
            )),
            None,
        ),
        Err(Stopped::Failed(e)) => (JobState::Failed, Some(e), None),
    };
    *job.outcome.lock().unwrap_or_else(|e| e.into_inner()) = (state, error.clone(), summary.clone());
    job.table.end(json!({
        "type": "end",
        "state": state.name(),
        "rows": job.table.status().rows,
        "error": error,
        "summary": summary,
    }));
}

/// Runs `simulation` into `job`'s table on a thread of its own, stopping
/// it after `wall` of wall time; `model` is its text, to place errors;
/// `ended` is called once it has ended.
pub(crate) fn spawn(
    job: Arc<Job>,
    mut simulation: Simulation<'static>,
    wall: Duration,
    model: String,
    ended: impl FnOnce() + Send + 'static,
) -> io::Result<()> {
    std::thread::Builder::new()
        .name(format!("simulation {}", job.id))
        .spawn(move || {
            let outcome = run(&mut simulation, &job, wall, &model);
            finish(&job, outcome);
            ended();
        })
        .map(drop)
}
