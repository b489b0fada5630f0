//! `Model`: a model loaded for offline runs (a JSON block diagram from a
//! file or text, a Model Exchange FMU, a built-in plant), inspected,
//! changed (parameters, inputs as time series) and simulated with the
//! options of `tandem sim`, the Python interpreter free while it runs. A
//! block diagram runs compiled to machine code, as `tandem sim` runs it.

use std::io;
use std::path::Path;
use std::sync::{Mutex, MutexGuard, PoisonError};

use pyo3::prelude::*;
use serde_json::{json, Value};
use tandem_config::bounds::check_output_size;
use tandem_config::{fixed_step, Overrides};
use tandem_fmi::{FmuSetup, ModelLoadError, Recorded, Use};
use tandem_models::diagram::{compile_str, FileError, SimulationDef};
use tandem_models::reference::{LoadError, ModelRef};
use tandem_models::Model;
use tandem_runtime::record::Recorder;
use tandem_runtime::{ChatterPolicy, EventSettings, SimError, Simulation, Summary};
use tandem_session::offline::{sim_error_block, sim_error_message, InputSeries, Inputs};

use crate::doubles::Doubles;
use crate::errors::{chain, fault, raise, ConfigError, ModelError, Place, TandemIOError};

/// Rows between two looks for a Ctrl-C while a simulation runs.
const SIGNAL_CHECK_ROWS: usize = 4096;

/// A loaded model and what was changed of it.
struct Loaded {
    /// The file or name it came from (`<dict>`, `<text>` for text).
    source: String,
    /// Its JSON, when it is a block diagram.
    text: Option<String>,
    model: Box<dyn Model>,
    /// How a block diagram is evaluated (what was compiled to machine
    /// code); none for other models.
    evaluation: Option<String>,
    simulation: SimulationDef,
    name: String,
    inputs: Inputs,
}

/// A model for offline runs.
#[pyclass(name = "Model", module = "tandem._tandem", frozen)]
pub struct PyModel {
    loaded: Mutex<Loaded>,
}

impl PyModel {
    fn lock(&self) -> MutexGuard<'_, Loaded> {
        self.loaded.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A model that cannot be loaded, as `tandem sim` says it: a file that
/// cannot be read is an I/O error, the rest model errors.
fn load_error(error: &ModelLoadError) -> PyErr {
    match error {
        ModelLoadError::Model(LoadError::File(FileError::Diagram { path, error: d })) => {
            raise::<ModelError>(chain(error), Place::of_diagram(path, d))
        }
        ModelLoadError::Model(LoadError::File(FileError::Io { path, .. })) => raise::<TandemIOError>(
            chain(error),
            Place {
                file: Some(path.clone()),
                ..Place::default()
            },
        ),
        _ => raise::<ModelError>(chain(error), Place::default()),
    }
}

/// A keyword argument's error, with its name.
fn option_error(source: &str, key: &str, message: impl std::fmt::Display) -> PyErr {
    raise::<ConfigError>(format!("{source}: {key}: {message}"), Place::key(key))
}

/// The memory the machine has available for new allocations (bytes):
/// Linux's `MemAvailable`, when it can be read.
fn available_memory() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// `bytes` in words: `1.5 GB`.
fn size(bytes: f64) -> String {
    format!("{:.1} GB", bytes / 1e9)
}

/// The rows of a run, kept in memory up to a bound; looks for Ctrl-C now
/// and then.
struct Rows {
    values: Vec<f64>,
    rows: usize,
    /// The most values kept (the memory available when the run started).
    limit: usize,
    interrupted: Option<PyErr>,
}

impl Recorder for Rows {
    fn record(&mut self, t: f64, y: &[f64]) -> io::Result<()> {
        if self.values.len() + 1 + y.len() > self.limit {
            return Err(io::Error::other(format!(
                "the rows kept in memory reached the {} the machine had available when the run started (row {}); \
                 shorten the run or lengthen the step, or simulate with the command line (tandem sim), which \
                 writes rows to a file as they come",
                size(self.limit as f64 * 8.0),
                self.rows
            )));
        }
        self.values.push(t);
        self.values.extend_from_slice(y);
        self.rows += 1;
        if self.rows.is_multiple_of(SIGNAL_CHECK_ROWS) {
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                self.interrupted = Some(e);
                return Err(io::Error::other("interrupted"));
            }
        }
        Ok(())
    }
}

/// A run's summary as JSON text.
fn summary_json(summary: &Summary, stop: f64) -> String {
    json!({
        "steps": summary.steps,
        "stop": stop,
        "evaluations": summary.evaluations,
        "events": summary.events,
        "shortened": summary.shortened,
        "disabled": summary.disabled,
        "restarts": summary.restarts,
        "bdf": summary.bdf.as_ref().map(|s| s.to_string()),
        "wall_s": summary.wall.as_secs_f64(),
    })
    .to_string()
}

/// What a simulation returns: the column names, the rows (time first) as
/// doubles, and the summary as JSON text.
type Outcome = (Vec<String>, Doubles, String);

#[pymethods]
impl PyModel {
    /// Loads a JSON block diagram or an FMU from its path, or a built-in
    /// model by name (as `tandem sim` takes them); an FMU's outputs are
    /// the variables `signals` chooses (as `--signals`; none: its own
    /// outputs), its start values `start_values` (`NAME`, `VALUE` as
    /// `--set` takes them).
    #[staticmethod]
    #[pyo3(signature = (source, signals = Vec::new(), start_values = Vec::new()))]
    fn load(source: &str, signals: Vec<String>, start_values: Vec<(String, String)>) -> PyResult<PyModel> {
        let reference = ModelRef::parse(source, Path::new(""));
        let text = match &reference {
            ModelRef::File(path) if path.extension().is_some_and(|e| e == "json") => std::fs::read_to_string(path).ok(),
            _ => None,
        };
        let fmu = matches!(&reference, ModelRef::File(path) if tandem_fmi::is_fmu(path));
        let fmu_options = !signals.is_empty() || !start_values.is_empty();
        if fmu_options && !fmu {
            return Err(raise::<ModelError>(
                format!(
                    "{source}: signals and start_values apply to FMU models only; a block diagram's outputs are its \
                     Output blocks and its values change with set_parameter"
                ),
                Place::default(),
            ));
        }
        let mut setup = FmuSetup::default();
        if !signals.is_empty() {
            setup.recorded = Recorded::patterns(signals);
        }
        for (name, value) in start_values {
            setup.parameters.set(&name, tandem_fmi::Value::parse(&value));
        }
        let loaded = tandem_fmi::load_with(&reference, Use::Offline, None, &tandem_jit::prepare, &setup)
            .map_err(|e| load_error(&e))?;
        let inputs = Inputs::new(loaded.model.layout().inputs.len());
        Ok(PyModel {
            loaded: Mutex::new(Loaded {
                source: source.to_string(),
                text,
                model: loaded.model,
                evaluation: loaded.evaluation,
                simulation: loaded.simulation,
                name: loaded.name,
                inputs,
            }),
        })
    }

    /// Compiles a block diagram from its JSON `text`; errors name `source`.
    #[staticmethod]
    fn from_json(text: &str, source: &str) -> PyResult<PyModel> {
        let compiled = compile_str(text).map_err(|e| {
            let place = Place::of_diagram(source, &e);
            let error = FileError::Diagram {
                path: source.to_string(),
                error: Box::new(e),
            };
            raise::<ModelError>(error.to_string(), place)
        })?;
        let (model, evaluation) = tandem_jit::prepare(compiled.model);
        let inputs = Inputs::new(model.layout().inputs.len());
        Ok(PyModel {
            loaded: Mutex::new(Loaded {
                source: source.to_string(),
                text: Some(text.to_string()),
                name: compiled.name.unwrap_or_else(|| source.to_string()),
                model,
                evaluation,
                simulation: compiled.simulation,
                inputs,
            }),
        })
    }

    /// The model's name.
    #[getter]
    fn name(&self) -> String {
        self.lock().name.clone()
    }

    /// How a block diagram is evaluated: what was compiled to machine code
    /// (`tandem check`'s line); `None` for other models.
    #[getter]
    fn evaluation(&self) -> Option<String> {
        self.lock().evaluation.clone()
    }

    /// Where it came from.
    #[getter]
    fn source(&self) -> String {
        self.lock().source.clone()
    }

    /// Its JSON text, for a block diagram.
    #[getter]
    fn text(&self) -> Option<String> {
        self.lock().text.clone()
    }

    /// Its inputs: (name, default, unit).
    #[getter]
    fn inputs(&self) -> Vec<(String, f64, Option<String>)> {
        let l = self.lock();
        let layout = l.model.layout();
        layout
            .inputs
            .iter()
            .map(|v| (v.name.clone(), v.default, v.unit.clone()))
            .collect()
    }

    /// Its outputs: (name, unit).
    #[getter]
    fn outputs(&self) -> Vec<(String, Option<String>)> {
        let l = self.lock();
        let layout = l.model.layout();
        layout
            .outputs
            .iter()
            .map(|v| (v.name.clone(), v.unit.clone()))
            .collect()
    }

    /// Its continuous states, by name.
    #[getter]
    fn states(&self) -> Vec<String> {
        self.lock().model.layout().states.clone()
    }

    /// Its discrete rates: (a block running at it, period, offset).
    #[getter]
    fn sample_times(&self) -> Vec<(String, f64, f64)> {
        let l = self.lock();
        let layout = l.model.layout();
        (layout.rates.iter().zip(&layout.rate_users))
            .map(|(r, user)| (user.clone(), r.period, r.offset))
            .collect()
    }

    /// Its tunable parameters as JSON text: `[[block, param, value], …]`.
    #[getter]
    fn parameters(&self) -> String {
        Value::from(
            (self.lock().model.tunables().into_iter())
                .map(|(b, p, v)| json!([b, p, v]))
                .collect::<Vec<_>>(),
        )
        .to_string()
    }

    /// Its own simulation settings as JSON text.
    #[getter]
    fn settings(&self) -> String {
        let l = self.lock();
        let s = &l.simulation;
        json!({"solver": s.solver, "step": s.step, "stop": s.stop, "rtol": s.rtol, "atol": s.atol}).to_string()
    }

    /// Sets parameter `param` of block `block` to the JSON `value`; a
    /// change of the model's shape (signals, states, ports, rates) is
    /// refused.
    fn set_parameter(&self, block: &str, param: &str, value: &str) -> PyResult<()> {
        let value: Value = serde_json::from_str(value)
            .map_err(|e| raise::<ModelError>(format!("{block}.{param}: {e}"), Place::key(param)))?;
        let mut l = self.lock();
        let place = || Place {
            block: Some(block.to_string()),
            key: Some(param.to_string()),
            file: Some(l.source.clone()),
            ..Place::default()
        };
        let mut definition = l
            .model
            .retune(block, param, &value)
            .map_err(|e| raise::<ModelError>(format!("{}: {e}", l.source), place()))?;
        if l.model.swap_definition(&mut definition) {
            // A compiled diagram is compiled again with the new value.
            if let Some(now) = l.model.evaluation() {
                l.evaluation = Some(format!("{now} (after {block}.{param} changed)"));
            }
        }
        Ok(())
    }

    /// Drives input `name` by `values` at `times` (joined linearly, or each
    /// held until the next when `hold`), sampled at every step.
    fn set_input(&self, name: &str, times: Vec<f64>, values: Vec<f64>, hold: bool) -> PyResult<()> {
        let mut l = self.lock();
        let index = input_index(&l, name)?;
        let series = InputSeries::new(times, values, hold)
            .map_err(|e| raise::<ModelError>(format!("{}: input \"{name}\": {e}", l.source), Place::key(name)))?;
        l.inputs.set(index, Some(series));
        Ok(())
    }

    /// Returns input `name` to its default.
    fn clear_input(&self, name: &str) -> PyResult<()> {
        let mut l = self.lock();
        let index = input_index(&l, name)?;
        l.inputs.set(index, None);
        Ok(())
    }

    /// Simulates a fresh copy of the model with `tandem sim`'s options
    /// over its own settings; the interpreter is free meanwhile and
    /// Ctrl-C stops it.
    #[pyo3(signature = (solver=None, step=None, stop=None, rtol=None, atol=None, events=true, event_tolerance=1e-12, chatter="stop", max_consecutive_events=1000, record_events=false, large_output=false))]
    #[expect(
        clippy::too_many_arguments,
        reason = "the keyword arguments of Model.simulate in Python"
    )]
    fn simulate(
        &self,
        py: Python<'_>,
        solver: Option<String>,
        step: Option<f64>,
        stop: Option<f64>,
        rtol: Option<f64>,
        atol: Option<f64>,
        events: bool,
        event_tolerance: f64,
        chatter: &str,
        max_consecutive_events: u32,
        record_events: bool,
        large_output: bool,
    ) -> PyResult<Outcome> {
        let (model, settings, events, source, text, inputs, columns, expected_rows) = {
            let l = self.lock();
            let source = l.source.clone();
            let overrides = Overrides {
                solver,
                step,
                stop,
                rtol,
                atol,
            };
            let settings = fixed_step(&l.simulation, &overrides).map_err(|e| {
                let key = e.origin.trim_start_matches("--").replace('-', "_");
                option_error(&source, &key, &e.message)
            })?;
            let chatter: ChatterPolicy = chatter.parse().map_err(|e| option_error(&source, "chatter", e))?;
            let events =
                EventSettings::with_options(events, event_tolerance, max_consecutive_events, chatter, record_events)
                    .map_err(|e| option_error(&source, e.option(), &e))?;
            let mut columns = vec!["time".to_string()];
            columns.extend(l.model.layout().outputs.iter().map(|v| v.name.clone()));
            let rows = (settings.stop / settings.step).ceil() + 1.0;
            check_output_size(rows, columns.len(), large_output).map_err(|e| option_error(&source, "stop", e))?;
            let bytes = rows * columns.len() as f64 * 8.0;
            if let Some(available) = available_memory().filter(|&a| bytes > a) {
                return Err(option_error(
                    &source,
                    "stop",
                    format!(
                        "{rows:.0} rows of {} values are {} in memory, more than the {} this machine has available; \
                         shorten the run or lengthen the step, or simulate with the command line (tandem sim), \
                         which writes rows to a file as they come",
                        columns.len(),
                        size(bytes),
                        size(available)
                    ),
                ));
            }
            (
                l.model.fork(),
                settings,
                events,
                source,
                l.text.clone(),
                l.inputs.clone(),
                columns,
                rows,
            )
        };
        let sim_error = |e: &SimError| sim_error_message(&source, text.as_deref(), e);
        let mut simulation = Simulation::owning(model, settings).map_err(|e| {
            let place = Place {
                block: sim_error_block(&e).map(str::to_string),
                ..Place::default()
            };
            raise::<ModelError>(sim_error(&e), place)
        })?;
        simulation = simulation.with_events(events);
        // The rows expected, reserved at once: no copy as they grow (event
        // rows, when recorded, may add to them).
        let expected = expected_rows * columns.len() as f64;
        let limit = available_memory().map_or(usize::MAX, |a| (a / 8.0) as usize);
        let mut rows = Rows {
            values: Vec::with_capacity((expected as usize).min(limit)),
            rows: 0,
            limit,
            interrupted: None,
        };
        let result = py.detach(|| inputs.run(&mut simulation, &mut rows, &mut |_| {}));
        if let Some(interrupted) = rows.interrupted {
            return Err(interrupted);
        }
        match result {
            Ok(summary) => Ok((
                columns,
                Doubles::new(rows.values),
                summary_json(&summary, settings.stop),
            )),
            Err(e) => {
                let error = fault(sim_error(&e));
                error
                    .value(py)
                    .setattr("partial", (columns, Doubles::new(rows.values)))?;
                Err(error)
            }
        }
    }
}

/// The index of input `name`, or an error listing the inputs.
fn input_index(l: &Loaded, name: &str) -> PyResult<usize> {
    let inputs = &l.model.layout().inputs;
    inputs.iter().position(|v| v.name == name).ok_or_else(|| {
        let known: Vec<&str> = inputs.iter().map(|v| v.name.as_str()).collect();
        raise::<ModelError>(
            format!(
                "{}: no input \"{name}\"; its inputs: {}",
                l.source,
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ),
            Place::key(name),
        )
    })
}
