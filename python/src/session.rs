//! `Session`: a real-time run of a configuration, started on a thread of
//! its own and watched from Python through the session's lock-free paths
//! (the recording ring, the input atomics, the counters); on the virtual
//! clock it advances only when Python advances the process's clock.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use tandem_config::{load_run_config, parse_run_config, ConfigError as TomlConfigError, RunConfig, TransportConfig};
use tandem_dbc::Dbc;
use tandem_models::plants::PROFILES;
use tandem_session::peer::Peer;
use tandem_session::watch::{advance_virtual_clock, virtual_clock_now, Watched};
use tandem_session::{bind, BindError, ClockMode, ControlError, Session, SessionError};

use crate::bus::PyBus;
use crate::doubles::Doubles;
use crate::errors::{chain, fault, raise, ConfigError, ModelError, Place, TandemIOError};

/// How long a wait on the real clock sleeps between looks for a Ctrl-C.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// A bus of the configuration, for peers to join.
struct BusInfo {
    name: String,
    transport: TransportConfig,
    dbc: PathBuf,
}

/// A running (or ended) session.
#[pyclass(name = "Session", module = "tandem._tandem", frozen)]
pub struct PySession {
    watched: Mutex<Watched>,
    buses: Vec<BusInfo>,
    source: String,
}

fn config_error(e: &TomlConfigError) -> PyErr {
    raise::<ConfigError>(chain(e), Place::of_config(e))
}

/// A configuration that does not bind to its model or DBC files.
fn bind_error(e: &BindError) -> PyErr {
    match e {
        BindError::Config(c) => config_error(c),
        BindError::Model { place, .. } | BindError::Plant { place, .. } => {
            raise::<ModelError>(chain(e), Place::of_config(place))
        }
        BindError::Dbc { place, .. } => raise::<ConfigError>(chain(e), Place::of_config(place)),
    }
}

/// A session that cannot be built or whose run failed to start.
fn session_error(source: &str, e: &SessionError) -> PyErr {
    match e {
        SessionError::OutputTooLarge(_) => raise::<ConfigError>(format!("{source}: record: {e}"), Place::key("record")),
        SessionError::Setup(_) | SessionError::NotRealTime { .. } => raise::<ConfigError>(chain(e), Place::default()),
        SessionError::StallsOnSharedClock => raise::<ConfigError>(chain(e), Place::key("virtual_clock.stalls")),
        SessionError::Device(_)
        | SessionError::File { .. }
        | SessionError::Replay(_)
        | SessionError::Thread { .. }
        | SessionError::Xcp(_) => raise::<TandemIOError>(chain(e), Place::default()),
    }
}

fn control_error(e: &ControlError, key: &str) -> PyErr {
    raise::<ModelError>(e.to_string(), Place::key(key))
}

/// Reads the configuration: from `text` (named `source`, paths in it
/// relative to the working directory) or from the file `source`.
fn read_config(source: &str, text: Option<&str>, duration: Option<f64>) -> PyResult<RunConfig> {
    let mut config = match text {
        Some(text) => parse_run_config(text, Path::new(source), PROFILES),
        None => load_run_config(Path::new(source), PROFILES),
    }
    .map_err(|e| config_error(&e))?;
    if let Some(d) = duration {
        config
            .set_duration(d)
            .map_err(|e| raise::<ConfigError>(format!("duration: {e}"), Place::key("duration")))?;
    }
    Ok(config)
}

impl PySession {
    fn watched(&self) -> MutexGuard<'_, Watched> {
        self.watched.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Sleeps `d` with the interpreter free, looking for Ctrl-C.
fn sleep(py: Python<'_>, d: Duration) -> PyResult<()> {
    let mut left = d;
    while !left.is_zero() {
        let nap = left.min(SIGNAL_CHECK);
        py.detach(|| std::thread::sleep(nap));
        py.check_signals()?;
        left -= nap;
    }
    Ok(())
}

#[pymethods]
impl PySession {
    /// Starts the run of a configuration: the TOML `text` named `source`,
    /// or the file `source`; on `clock` ("virtual" or "real"), writing its
    /// files into `results`, for `duration` seconds when given.
    #[staticmethod]
    #[pyo3(signature = (source, text, clock, results, duration=None))]
    fn start(
        source: &str,
        text: Option<&str>,
        clock: &str,
        results: &str,
        duration: Option<f64>,
    ) -> PyResult<PySession> {
        let clock = match clock {
            "virtual" => ClockMode::Virtual,
            "real" => ClockMode::Real,
            other => {
                return Err(raise::<ConfigError>(
                    format!("clock: \"{other}\" is no clock; use \"virtual\" (deterministic, the default) or \"real\""),
                    Place::key("clock"),
                ))
            }
        };
        let config = read_config(source, text, duration)?;
        let buses = (config.buses.iter())
            .map(|b| BusInfo {
                name: b.name.clone(),
                transport: b.transport.clone(),
                dbc: b.dbc.value.clone(),
            })
            .collect();
        let plan = bind(config).map_err(|e| bind_error(&e))?;
        let session = Session::new(plan, Watched::options(clock, results)).map_err(|e| session_error(source, &e))?;
        let watched = Watched::start(session).map_err(|e| session_error(source, &e))?;
        Ok(PySession {
            watched: Mutex::new(watched),
            buses,
            source: source.to_string(),
        })
    }

    /// "virtual" or "real".
    #[getter]
    fn clock(&self) -> &'static str {
        match self.watched().clock() {
            ClockMode::Virtual => "virtual",
            ClockMode::Real => "real",
        }
    }

    /// The frame (s).
    #[getter]
    fn frame(&self) -> f64 {
        self.watched().frame()
    }

    /// Run time (s).
    #[getter]
    fn time(&self) -> f64 {
        self.watched().time()
    }

    /// Whether the frames have stopped.
    #[getter]
    fn ended(&self) -> bool {
        self.watched().ended()
    }

    /// The recorded outputs' names.
    #[getter]
    fn recorded(&self) -> Vec<String> {
        self.watched().recorded().to_vec()
    }

    /// The model inputs that can be set.
    #[getter]
    fn inputs(&self) -> Vec<String> {
        self.watched().controls().inputs()
    }

    /// The buses' names.
    #[getter]
    fn buses(&self) -> Vec<String> {
        self.buses.iter().map(|b| b.name.clone()).collect()
    }

    /// The newest recorded row: (time, values), or None before the first.
    fn latest(&self) -> Option<(f64, Vec<f64>)> {
        self.watched().latest()
    }

    /// The recorded rows from row `start` on, as doubles (time, then the
    /// recorded outputs).
    fn rows(&self, start: usize) -> Doubles {
        Doubles::new(self.watched().rows(start))
    }

    /// Sets model input `name` from the next frame on; returns that frame.
    fn set_input(&self, name: &str, value: f64) -> PyResult<u64> {
        self.watched()
            .controls()
            .set_input(name, value)
            .map_err(|e| control_error(&e, name))
    }

    /// Changes parameter `param` of block `block` to the JSON `value` at a
    /// frame boundary; returns the change's number and its frame.
    fn set_parameter(&self, block: &str, param: &str, value: &str) -> PyResult<(u64, u64)> {
        let value = serde_json::from_str(value)
            .map_err(|e| raise::<ModelError>(format!("{block}.{param}: {e}"), Place::key(param)))?;
        self.watched()
            .controls()
            .set_parameter(block, param, &value)
            .map_err(|e| control_error(&e, param))
    }

    /// Injects a fault into bus `bus`'s sending: `request` is the JSON
    /// object of a `[[bus.fault]]` table's keys; returns the fault's slot
    /// in the bus's report and its description.
    fn fault(&self, bus: &str, request: &str) -> PyResult<(usize, String)> {
        let request: serde_json::Value = serde_json::from_str(request)
            .map_err(|e| raise::<ConfigError>(format!("fault request: {e}"), Place::default()))?;
        let injected = self
            .watched()
            .controls()
            .inject_fault(bus, &request)
            .map_err(|e| raise::<ConfigError>(e.to_string(), Place::default()))?;
        Ok((injected.slot, injected.description))
    }

    /// The counters since the start, as JSON text.
    fn counters(&self) -> String {
        self.watched().counters().to_string()
    }

    /// Runs one more frame (virtual clock: advances the process's clock to
    /// its end, every other session on it along), or sleeps about one frame
    /// (real clock).
    fn step(&self, py: Python<'_>) -> PyResult<()> {
        let (next, frame) = {
            let w = self.watched();
            (w.next_frame_end(), w.frame())
        };
        match next {
            Some(to) => py.detach(|| advance_virtual_clock(to)),
            None => sleep(py, Duration::from_secs_f64(frame.min(0.001)))?,
        }
        py.check_signals()
    }

    /// Lets `seconds` of run time pass (virtual clock: at once; real clock:
    /// by sleeping).
    fn run_for(&self, py: Python<'_>, seconds: f64) -> PyResult<()> {
        if !(seconds.is_finite() && seconds >= 0.0) {
            return Err(raise::<ConfigError>(
                format!("run_for: {seconds} s; give a finite time of 0 or more"),
                Place::key("seconds"),
            ));
        }
        if self.watched().clock() == ClockMode::Virtual {
            let to = virtual_clock_now() + seconds;
            py.detach(|| advance_virtual_clock(to));
            Ok(())
        } else {
            sleep(py, Duration::from_secs_f64(seconds))
        }
    }

    /// Stops the run and waits for its threads; returns the report as JSON
    /// text and the failure, if the run failed. None once stopped.
    fn stop(&self, py: Python<'_>) -> PyResult<Option<(String, Option<String>)>> {
        let stopped = py.detach(|| self.watched().stop());
        match stopped {
            None => Ok(None),
            Some(Ok(report)) => Ok(Some((report.json().to_string(), report.failure.clone()))),
            Some(Err(e)) => Err(fault(format!("{}: {}", self.source, chain(&e)))),
        }
    }

    /// Joins bus `name` as a node of its own.
    fn bus(&self, name: &str) -> PyResult<PyBus> {
        let known = || {
            self.buses
                .iter()
                .map(|b| b.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let info = self.buses.iter().find(|b| b.name == name).ok_or_else(|| {
            raise::<ConfigError>(
                format!("{}: no bus \"{name}\"; its buses: {}", self.source, known()),
                Place::key(name),
            )
        })?;
        let in_process = matches!(info.transport, TransportConfig::Virtual { .. });
        if self.watched().clock() == ClockMode::Virtual && !in_process {
            return Err(raise::<ConfigError>(
                format!(
                    "{}: bus {name} carries no frames on the virtual clock, which opens only in-process buses; give it \
                     transport = \"virtual\" (and a channel), or start the session with clock=\"real\"",
                    self.source
                ),
                Place::key(name),
            ));
        }
        let dbc = Dbc::load(&info.dbc).map_err(|e| raise::<ConfigError>(chain(&e), Place::key(name)))?;
        let peer = Peer::open(name, &info.transport, dbc)
            .map_err(|e| raise::<TandemIOError>(format!("bus {name}: {}", chain(&e)), Place::key(name)))?;
        Ok(PyBus::new(peer))
    }
}

/// A configuration given as JSON text (a dict's), as TOML text.
#[pyfunction]
pub fn toml_from_json(text: &str) -> PyResult<String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| raise::<ConfigError>(format!("<dict>: {e}"), Place::default()))?;
    toml::to_string(&value).map_err(|e| {
        raise::<ConfigError>(
            format!("<dict>: {e}; a configuration holds tables, strings, numbers, booleans and lists (no None)"),
            Place::default(),
        )
    })
}
