//! The TOML configuration of a real-time run (`tandem run CONFIG.toml`):
//! the model, the frame, the tandem's policy and threads, the inputs, what
//! to record and the costs of the virtual clock.
//!
//! The file is read into raw structures that mirror it (and give its JSON
//! Schema), then validated into a [`RunConfig`]. Every error names the file,
//! the line and column, the key, what is wrong and how to fix it.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::bus::{BusConfig, RawBus};

use tandem_runtime::tandem::{
    Extrapolation, FastSettings, ImplicitSolver, ImplicitThreadSettings, Placement, Policy, TandemSettings,
};
use tandem_runtime::Method;

use crate::duration::Duration;
use crate::simulation::{DEFAULT_STEP, DEFAULT_STOP};

/// Frame used when the file gives none (s).
pub const DEFAULT_FRAME: f64 = DEFAULT_STEP;
/// Run length used when the file gives none (s).
pub const DEFAULT_DURATION: f64 = DEFAULT_STOP;
/// The largest `max_catchup`, `newton_iterations`: more would not fit in a
/// frame on any machine.
pub const MAX_COUNT: i64 = 1000;

/// The model of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelRef {
    /// A built-in model, by name (the caller checks that it exists).
    Builtin(String),
    /// A JSON block diagram, its path resolved against the directory of the
    /// configuration file.
    File(PathBuf),
}

/// The inputs of the model over the run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InputsConfig {
    /// A built-in input profile, one of the names the loader was given.
    pub profile: Option<String>,
    /// Per-input piecewise-linear breakpoints `(time s, value)`, in time
    /// order, overriding the profile for those inputs; sorted by input name
    /// (the caller checks the names).
    pub points: Vec<(String, Vec<(f64, f64)>)>,
}

/// What to record to a CSV file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordConfig {
    /// The CSV file, as written (relative to the current directory).
    pub file: PathBuf,
    /// The outputs to record; `None` records them all (the caller checks
    /// the names).
    pub signals: Option<Vec<String>>,
    /// Record every `decimation`-th frame; at least 1.
    pub decimation: u32,
}

/// The compute time that the virtual clock charges, and the faults it
/// injects (used with `--virtual-clock` only). All times in seconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VirtualClockConfig {
    /// Charged per explicit step.
    pub fast_cost: f64,
    /// Charged per implicit step.
    pub implicit_cost: f64,
    /// Between a thread's wake-up time and when it runs.
    pub wake_latency: f64,
    /// `(at, delay)`: the implicit step that starts at or after `at` takes
    /// `delay` longer. Sorted by `at` (the file may list them in any order).
    pub implicit_delays: Vec<(f64, f64)>,
    /// `(at, extra)`: the frame at or after `at` takes `extra` longer.
    /// Sorted by `at`.
    pub fast_overruns: Vec<(f64, f64)>,
}

/// A validated run configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// The model to run.
    pub model: ModelRef,
    /// Frame, policy and threads.
    pub settings: TandemSettings,
    /// The inputs.
    pub inputs: InputsConfig,
    /// The recording, if any.
    pub record: Option<RecordConfig>,
    /// The virtual clock's costs and faults.
    pub virtual_clock: VirtualClockConfig,
    /// The CAN buses (`[[bus]]`).
    pub buses: Vec<BusConfig>,
    /// Where all bus traffic is logged (`record.bus_log`): candump, or ASC
    /// for a `.asc` name.
    pub bus_log: Option<PathBuf>,
    /// A virtual ECU started beside the run (`[ecu]`).
    pub ecu: Option<EcuConfig>,
}

/// A virtual ECU process started beside a run: `tandem ecu CONFIG` on
/// another configuration, for the run's duration.
#[derive(Clone, Debug, PartialEq)]
pub struct EcuConfig {
    /// The ECU's configuration, resolved against this file's directory.
    pub config: PathBuf,
}

/// A line and a column in a file, both from 1; the column counts
/// characters, not bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
}

/// A configuration file that cannot be used: where, which key, what is
/// wrong and the fix. Shown as `FILE:LINE:COLUMN: KEY: MESSAGE`, e.g.
/// `ev.toml:12:10: implicit.method: unknown implicit method "bdf7"; use one
/// of: bdf, bdf1, bdf2, trapezoidal`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct ConfigError {
    /// The configuration file, as given.
    pub file: PathBuf,
    /// Where in the file; `None` when the error is about the whole file
    /// (it cannot be read).
    pub location: Option<Location>,
    /// The dotted key, as `implicit.method` or
    /// `virtual_clock.implicit_delays[0].at`; empty when there is none (a
    /// syntax error between keys, or an unreadable file).
    pub key: String,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(Location { line, column }) = self.location {
            write!(f, ":{line}:{column}")?;
        }
        if !self.key.is_empty() {
            write!(f, ": {}", self.key)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Reads and validates the run configuration at `path`. `profiles` are the
/// built-in input profiles that `inputs.profile` may name.
pub fn load_run_config(path: &Path, profiles: &[&str]) -> Result<RunConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        location: None,
        key: String::new(),
        message: format!(
            "cannot read the run configuration: {e}; check the path (config/examples/ev.toml is a complete example)"
        ),
    })?;
    parse_run_config(&text, path, profiles)
}

/// Validates the run configuration `text`, read from `origin`: errors name
/// `origin`, and a model file is resolved against its directory. `profiles`
/// are the built-in input profiles that `inputs.profile` may name.
pub fn parse_run_config(text: &str, origin: &Path, profiles: &[&str]) -> Result<RunConfig, ConfigError> {
    let source = Source { text, origin };
    let raw: RawRunConfig = toml::from_str(text).map_err(|e| source.toml_error(&e))?;
    source.validate(raw, profiles)
}

/// The JSON Schema (Draft 2020-12) of run configuration files, pretty
/// printed: `config/schema.json`, for editors and checks.
pub fn run_config_schema() -> String {
    let generator = SchemaSettings::draft2020_12()
        .with_transform(RecursiveTransform(tidy_schema))
        .into_generator();
    let schema = generator.into_root_schema_for::<RawRunConfig>();
    let mut json = serde_json::to_string_pretty(&schema).expect("a schema is JSON");
    json.push('\n');
    json
}

/// Drops the `"default": null` of optional keys (TOML has no null; the
/// descriptions give the defaults) and joins the lines of descriptions,
/// which are wrapped doc comments, keeping paragraph breaks.
fn tidy_schema(schema: &mut Schema) {
    if schema.get("default").is_some_and(serde_json::Value::is_null) {
        schema.remove("default");
    }
    if let Some(serde_json::Value::String(text)) = schema.get_mut("description") {
        *text = text
            .split("\n\n")
            .map(|paragraph| paragraph.split('\n').map(str::trim).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n\n");
    }
}

// ---------------------------------------------------------------------------
// The file as written. The doc comments are the schema's descriptions.

/// The configuration of a real-time tandem run (`tandem run CONFIG.toml`). Every key but `model` is optional.
/// Durations are strings with a unit: "20s", "1ms", "50us" (or "50µs"), "100ns", "2min".
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "TandemRunConfig", title = "Tandem run configuration")]
struct RawRunConfig {
    /// The model to run: a built-in model name such as "ev", or the path to a JSON block diagram (a value that ends
    /// in ".json" or contains "/"), relative to this file's directory.
    #[schemars(with = "String", length(min = 1))]
    model: Spanned<String>,
    /// The frame period: the fast thread steps the model and publishes its outputs once per frame. Default "1ms".
    #[serde(default)]
    #[schemars(with = "Duration")]
    frame: Option<Spanned<Duration>>,
    /// How long the run lasts; at least one frame. Default "10s".
    #[serde(default)]
    #[schemars(with = "Duration")]
    duration: Option<Spanned<Duration>>,
    /// How the fast thread combines its explicit result with the implicit thread's: "correct" restarts the explicit
    /// integrator from the newest implicit state and re-integrates to now; "select" uses the implicit state of the
    /// frame when it is ready by the output deadline, else the explicit one; "explicit" runs no implicit thread (the
    /// baseline). Default "correct".
    #[serde(default)]
    #[schemars(schema_with = "policy_schema")]
    policy: Option<Spanned<String>>,
    /// With the "correct" policy, the most frames re-integrated per correction (0 to 1000). Default 4.
    #[serde(default)]
    #[schemars(with = "u32", range(max = 1000))]
    max_catchup: Option<Spanned<i64>>,
    /// How long after the start of a frame its outputs are due; more than 0 and at most one frame. Default 0.8 of
    /// the frame.
    #[serde(default)]
    #[schemars(with = "Duration")]
    output_deadline: Option<Spanned<Duration>>,
    /// The fast thread: explicit integrator, one step per frame.
    #[serde(default)]
    fast: RawFast,
    /// The implicit thread: a stiff integrator running behind (or ahead of) the fast thread.
    #[serde(default)]
    implicit: RawImplicit,
    /// The model's inputs over the run.
    #[serde(default)]
    inputs: RawInputs,
    /// Recording outputs to a CSV file. Nothing is recorded without this table.
    #[serde(default)]
    #[schemars(with = "RawRecord")]
    record: Option<RawRecord>,
    /// Only with --virtual-clock: the compute time charged per step and faults to inject, so that a run is
    /// deterministic and independent of the machine.
    #[serde(default)]
    virtual_clock: RawVirtualClock,
    /// CAN buses: each a transport, a DBC, and the signals mapped to the model's inputs and outputs.
    #[serde(default)]
    bus: Vec<RawBus>,
    /// A virtual ECU to start beside this run (`tandem ecu` on its own configuration), for the run's duration.
    #[serde(default)]
    #[schemars(with = "RawEcu")]
    ecu: Option<RawEcu>,
}

/// A virtual ECU started beside the run.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Ecu")]
struct RawEcu {
    /// The ECU's run configuration, relative to this file's directory.
    #[schemars(with = "String", length(min = 1))]
    config: Spanned<String>,
}

/// The fast thread: it steps the model with an explicit method once per frame and publishes the outputs.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "FastThread")]
struct RawFast {
    /// The CPU core to pin the thread to, from 0. Omit it to leave the thread unpinned.
    #[serde(default)]
    #[schemars(with = "u32")]
    core: Option<Spanned<i64>>,
    /// The SCHED_FIFO priority, 1 to 99; above implicit.priority. Default 80.
    #[serde(default)]
    #[schemars(with = "u8", range(min = 1, max = 99))]
    priority: Option<Spanned<i64>>,
    /// The explicit method: "euler", "heun" or "rk4" (classic fourth-order Runge-Kutta). Default "rk4".
    #[serde(default)]
    #[schemars(schema_with = "method_schema")]
    method: Option<Spanned<String>>,
}

/// The implicit thread: it integrates the model with a stiff method and publishes a state every macro step.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ImplicitThread")]
struct RawImplicit {
    /// The CPU core to pin the thread to, from 0. Omit it to leave the thread unpinned.
    #[serde(default)]
    #[schemars(with = "u32")]
    core: Option<Spanned<i64>>,
    /// The SCHED_FIFO priority, 1 to 99; below fast.priority, so that the fast thread always preempts this one.
    /// Default 70.
    #[serde(default)]
    #[schemars(with = "u8", range(min = 1, max = 99))]
    priority: Option<Spanned<i64>>,
    /// The integrator: "bdf" (variable order and step, landing on every frame time), or one fixed step per macro
    /// step of "bdf1" (backward Euler), "bdf2" or "trapezoidal". Default "bdf".
    #[serde(default)]
    #[schemars(schema_with = "implicit_method_schema")]
    method: Option<Spanned<String>>,
    /// Relative tolerance of the BDF's error control and of Newton's convergence test, between 0 and 1. Default
    /// 1e-6.
    #[serde(default)]
    #[schemars(with = "f64", extend("exclusiveMinimum" = 0, "exclusiveMaximum" = 1))]
    rtol: Option<Spanned<f64>>,
    /// Absolute tolerance, above 0. Default 1e-8.
    #[serde(default)]
    #[schemars(with = "f64", extend("exclusiveMinimum" = 0))]
    atol: Option<Spanned<f64>>,
    /// The most Newton iterations per step of a fixed-step method (1 to 1000). Default 4.
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 1000))]
    newton_iterations: Option<Spanned<i64>>,
    /// Time between two published implicit results: a whole number of frames. Default one frame.
    #[serde(default)]
    #[schemars(with = "Duration")]
    macro_step: Option<Spanned<Duration>>,
    /// How far ahead of the fast thread's newest frame the implicit thread may integrate, on extrapolated inputs: a
    /// whole number of frames, at least macro_step. Default macro_step.
    #[serde(default)]
    #[schemars(with = "Duration")]
    lead: Option<Spanned<Duration>>,
    /// How inputs past the newest sample are predicted: "hold" (the last sample), "linear" (a line through the last
    /// two) or "quadratic" (a parabola through the last three). Default "linear".
    #[serde(default)]
    #[schemars(schema_with = "extrapolation_schema")]
    extrapolation: Option<Spanned<String>>,
    /// When the implicit state is this far behind the fast thread's newest frame, the implicit thread restarts from
    /// the fast thread's state. Default 20 frames.
    #[serde(default)]
    #[schemars(with = "Duration")]
    max_lag: Option<Spanned<Duration>>,
}

/// The model's inputs: a built-in profile, and breakpoints that override it input by input. Inputs given by
/// neither keep their default values.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Inputs")]
struct RawInputs {
    /// A built-in input profile, such as "ev-drive-cycle" for the "ev" model.
    #[serde(default)]
    #[schemars(with = "String")]
    profile: Option<Spanned<String>>,
    /// Piecewise-linear inputs: for each input name, breakpoints [time in seconds, value] in time order (a time
    /// may repeat, for a step). Before the first breakpoint the input holds the first value, after the last the
    /// last value. They override the profile for those inputs.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Vec<(f64, f64)>>")]
    points: BTreeMap<String, Spanned<Vec<Spanned<Vec<f64>>>>>,
}

/// Recording outputs to a CSV file, a row per recorded frame.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Record")]
struct RawRecord {
    /// The CSV file to write, relative to the current directory.
    #[serde(default)]
    #[schemars(with = "String", length(min = 1))]
    file: Option<Spanned<String>>,
    /// The outputs to record, by name. Default: all of them.
    #[serde(default)]
    #[schemars(with = "Vec<String>", length(min = 1))]
    signals: Option<Spanned<Vec<Spanned<String>>>>,
    /// Record every n-th frame (1 records them all). Default 1.
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1))]
    decimation: Option<Spanned<i64>>,
    /// Log every frame of every bus to this file, relative to the current directory: candump's log format, or
    /// Vector ASC for a name ending in ".asc".
    #[serde(default)]
    #[schemars(with = "String", length(min = 1))]
    bus_log: Option<Spanned<String>>,
}

/// The virtual clock (--virtual-clock): instead of reading the machine's clock, the run charges a fixed compute
/// time per step, so that deadline misses and corrections are deterministic. Every cost defaults to "0s".
#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "VirtualClock")]
struct RawVirtualClock {
    /// The compute time charged per explicit step of the fast thread.
    #[serde(default)]
    #[schemars(with = "Duration")]
    fast_cost: Option<Spanned<Duration>>,
    /// The compute time charged per step of the implicit thread.
    #[serde(default)]
    #[schemars(with = "Duration")]
    implicit_cost: Option<Spanned<Duration>>,
    /// The time between a thread's wake-up time and when it runs.
    #[serde(default)]
    #[schemars(with = "Duration")]
    wake_latency: Option<Spanned<Duration>>,
    /// Injected implicit-thread delays, as [[virtual_clock.implicit_delays]] tables.
    #[serde(default)]
    implicit_delays: Vec<RawDelay>,
    /// Injected frame overruns of the fast thread, as [[virtual_clock.fast_overruns]] tables.
    #[serde(default)]
    fast_overruns: Vec<RawOverrun>,
}

/// An injected delay: the implicit step that starts at or after `at` takes `delay` longer.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ImplicitDelay")]
struct RawDelay {
    /// Run time from which the next implicit step is delayed.
    #[schemars(with = "Duration")]
    at: Spanned<Duration>,
    /// How much longer that step takes.
    #[schemars(with = "Duration")]
    delay: Spanned<Duration>,
}

/// An injected overrun: the frame that starts at or after `at` takes `extra` longer.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "FastOverrun")]
struct RawOverrun {
    /// Run time from which the next frame overruns.
    #[schemars(with = "Duration")]
    at: Spanned<Duration>,
    /// How much longer that frame takes.
    #[schemars(with = "Duration")]
    extra: Spanned<Duration>,
}

/// A string that is one of `names`.
fn names_schema<'a>(names: impl IntoIterator<Item = &'a str>) -> Schema {
    let names: Vec<&str> = names.into_iter().collect();
    json_schema!({ "type": "string", "enum": names })
}

fn policy_schema(_: &mut SchemaGenerator) -> Schema {
    names_schema(Policy::ALL.map(Policy::name))
}

fn method_schema(_: &mut SchemaGenerator) -> Schema {
    names_schema(Method::ALL.map(Method::name))
}

fn implicit_method_schema(_: &mut SchemaGenerator) -> Schema {
    names_schema(ImplicitSolver::NAMES)
}

fn extrapolation_schema(_: &mut SchemaGenerator) -> Schema {
    names_schema(Extrapolation::ALL.map(Extrapolation::name))
}

// ---------------------------------------------------------------------------
// Validation.

/// The text being read and where it came from, for messages.
pub(crate) struct Source<'a> {
    pub(crate) text: &'a str,
    pub(crate) origin: &'a Path,
}

/// A value as given in the file with where it is, or a default (no span).
struct Given<T> {
    value: T,
    span: Option<Range<usize>>,
}

/// The value of `field` with its span, or `default`.
fn given<T: Clone>(field: &Option<Spanned<T>>, default: T) -> Given<T> {
    match field {
        Some(s) => Given {
            value: s.get_ref().clone(),
            span: Some(s.span()),
        },
        None => Given {
            value: default,
            span: None,
        },
    }
}

/// How a duration is shown in messages: as written when it was.
fn shown(d: &Given<Duration>) -> String {
    if d.span.is_some() {
        format!("\"{}\"", d.value)
    } else {
        format!("{} (the default)", d.value)
    }
}

impl Source<'_> {
    /// An error at byte `span` (none: the start of the file) about `key`.
    pub(crate) fn error(&self, span: Option<Range<usize>>, key: &str, message: String) -> ConfigError {
        ConfigError {
            file: self.origin.to_path_buf(),
            location: Some(self.location(span.map_or(0, |s| s.start))),
            key: key.to_string(),
            message,
        }
    }

    /// Line and column of byte `offset`.
    pub(crate) fn location(&self, offset: usize) -> Location {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &self.text[..offset];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        Location {
            line: before.matches('\n').count() + 1,
            column: before[line_start..].chars().count() + 1,
        }
    }

    /// A syntax or type error from the TOML reader, with the key it is
    /// about found from its span.
    fn toml_error(&self, e: &toml::de::Error) -> ConfigError {
        let span = e.span();
        let mut message = e.message().trim_end().to_string();
        let start = span.as_ref().map_or(0, |s| s.start);
        let mut key = if span.as_ref().is_some_and(|s| s.is_empty() && s.start == 0) {
            // Errors about the whole document (a missing top-level key) have an
            // empty span at its start, where the first key may be.
            String::new()
        } else {
            key_at(self.text, start).unwrap_or_default()
        };
        if let Some(field) = message
            .strip_prefix("missing field `")
            .and_then(|m| m.strip_suffix('`'))
        {
            let field = field.to_string();
            let example = match field.as_str() {
                "model" => "model = \"ev\" (a built-in model) or model = \"my-model.json\"".to_string(),
                "at" => "at = \"5s\"".to_string(),
                "delay" => "delay = \"3ms\"".to_string(),
                "extra" => "extra = \"1.5ms\"".to_string(),
                _ => format!("{field} = ..."),
            };
            message = format!("missing key `{field}`; add it, e.g. {example}");
            key = if key.is_empty() {
                field
            } else {
                format!("{key}.{field}")
            };
        } else if message == "duplicate key" {
            // The second key is not in the recovered table: name it as written.
            if let Some(written) = span.and_then(|s| self.text.get(s)) {
                key = written.trim().to_string();
            }
            message = format!("`{key}` is given twice; keep one");
        }
        ConfigError {
            file: self.origin.to_path_buf(),
            location: Some(self.location(start)),
            key,
            message,
        }
    }

    /// Checks every value and builds the run configuration.
    fn validate(&self, raw: RawRunConfig, profiles: &[&str]) -> Result<RunConfig, ConfigError> {
        let model = self.model(&raw.model)?;
        let settings = self.settings(&raw)?;
        let inputs = self.inputs(&raw.inputs, profiles)?;
        let record = match &raw.record {
            Some(record) => self.record(record)?,
            None => None,
        };
        let virtual_clock = virtual_clock(&raw.virtual_clock);
        let buses = self.buses(&raw.bus)?;
        let bus_log = raw
            .record
            .as_ref()
            .and_then(|r| r.bus_log.as_ref())
            .map(|f| PathBuf::from(f.get_ref()));
        let dir = self.origin.parent().unwrap_or(Path::new(""));
        let ecu = raw.ecu.as_ref().map(|e| EcuConfig {
            config: dir.join(e.config.get_ref()),
        });
        Ok(RunConfig {
            model,
            settings,
            inputs,
            record,
            virtual_clock,
            buses,
            bus_log,
            ecu,
        })
    }

    fn model(&self, model: &Spanned<String>) -> Result<ModelRef, ConfigError> {
        let name = model.get_ref().trim();
        if name.is_empty() {
            return Err(self.error(
                Some(model.span()),
                "model",
                "the model is empty; write a built-in model name such as \"ev\", or the path to a JSON block \
                 diagram such as \"models/my-model.json\""
                    .into(),
            ));
        }
        if name.ends_with(".json") || name.contains(['/', '\\']) {
            let dir = self.origin.parent().unwrap_or(Path::new(""));
            Ok(ModelRef::File(dir.join(name)))
        } else {
            Ok(ModelRef::Builtin(name.to_string()))
        }
    }

    /// A name parsed with its `FromStr`, whose message lists the valid ones.
    fn named<T: std::str::FromStr<Err = String>>(
        &self,
        field: &Option<Spanned<String>>,
        key: &str,
        default: T,
    ) -> Result<T, ConfigError> {
        match field {
            Some(s) => s.get_ref().parse().map_err(|m| self.error(Some(s.span()), key, m)),
            None => Ok(default),
        }
    }

    /// A duration more than zero.
    fn positive(&self, d: &Given<Duration>, key: &str, example: &str) -> Result<f64, ConfigError> {
        if d.value.seconds() > 0.0 {
            Ok(d.value.seconds())
        } else {
            Err(self.error(
                d.span.clone(),
                key,
                format!("must be longer than 0, found {}; write e.g. \"{example}\"", shown(d)),
            ))
        }
    }

    /// An integer in `min..=max`; `fix` ends the message.
    fn integer(&self, v: &Given<i64>, key: &str, min: i64, max: i64, fix: &str) -> Result<i64, ConfigError> {
        if (min..=max).contains(&v.value) {
            Ok(v.value)
        } else {
            Err(self.error(
                v.span.clone(),
                key,
                format!("must be {min} to {max}, found {}; {fix}", v.value),
            ))
        }
    }

    /// A whole number of frames, at least one.
    fn frames(&self, d: &Given<Duration>, key: &str, frame: f64) -> Result<f64, ConfigError> {
        let s = d.value.seconds();
        let n = (s / frame).round();
        if n >= 1.0 && (s - n * frame).abs() <= 1e-9 * s {
            return Ok(n * frame);
        }
        let below = (s / frame).floor().max(1.0);
        let frame_shown = Duration::from_seconds(frame).unwrap_or_default();
        let multiple = |k: f64| Duration::from_seconds(k * frame).unwrap_or_default();
        Err(self.error(
            d.span.clone(),
            key,
            format!(
                "must be a whole number of frames (the frame is {frame_shown}), found {}; write e.g. \"{}\" \
                 or \"{}\"",
                shown(d),
                multiple(below),
                multiple(below + 1.0),
            ),
        ))
    }

    /// A core number, or `None` when not given (unpinned).
    fn core(&self, field: &Option<Spanned<i64>>, key: &str) -> Result<Option<usize>, ConfigError> {
        if field.is_none() {
            return Ok(None);
        }
        let n = self.integer(&given(field, 0), key, 0, 4095, "omit it to leave the thread unpinned")?;
        Ok(Some(n as usize))
    }

    fn settings(&self, raw: &RawRunConfig) -> Result<TandemSettings, ConfigError> {
        let frame = given(&raw.frame, Duration::from_seconds(DEFAULT_FRAME).unwrap_or_default());
        let frame_s = self.positive(&frame, "frame", "1ms")?;
        let duration = given(
            &raw.duration,
            Duration::from_seconds(DEFAULT_DURATION).unwrap_or_default(),
        );
        let duration_s = self.positive(&duration, "duration", "20s")?;
        if duration_s < frame_s {
            let (span, key) = match &duration.span {
                Some(span) => (Some(span.clone()), "duration"),
                None => (frame.span.clone(), "frame"),
            };
            return Err(self.error(
                span,
                key,
                format!(
                    "the run ({}) is shorter than one frame ({}); make duration at least the frame",
                    shown(&duration),
                    shown(&frame)
                ),
            ));
        }
        let mut s = TandemSettings::new(frame_s, duration_s);
        s.policy = self.named(&raw.policy, "policy", s.policy)?;
        let catchup = given(&raw.max_catchup, s.max_catchup as i64);
        s.max_catchup = self.integer(&catchup, "max_catchup", 0, MAX_COUNT, "write e.g. 4")? as usize;
        let deadline = given(
            &raw.output_deadline,
            Duration::from_seconds(s.output_deadline).unwrap_or_default(),
        );
        let d = deadline.value.seconds();
        if !(d > 0.0 && d <= frame_s * (1.0 + 1e-9)) {
            return Err(self.error(
                deadline.span.clone(),
                "output_deadline",
                format!(
                    "must be more than 0 and at most the frame ({}), found {}; write e.g. \"{}\" \
                     (0.8 of the frame)",
                    frame.value,
                    shown(&deadline),
                    Duration::from_seconds(0.8 * frame_s).unwrap_or_default()
                ),
            ));
        }
        s.output_deadline = d.min(frame_s);

        let fast = &raw.fast;
        let fast_priority = given(&fast.priority, i64::from(s.fast.placement.priority));
        let fix = "write e.g. 80 (SCHED_FIFO priorities go from 1, the lowest, to 99)";
        self.integer(&fast_priority, "fast.priority", 1, 99, fix)?;
        s.fast = FastSettings {
            placement: Placement {
                core: self.core(&fast.core, "fast.core")?,
                priority: fast_priority.value as u8,
            },
            method: self.named(&fast.method, "fast.method", s.fast.method)?,
        };

        let imp = &raw.implicit;
        let imp_priority = given(&imp.priority, i64::from(s.implicit.placement.priority));
        let fix = "write e.g. 70 (SCHED_FIFO priorities go from 1, the lowest, to 99)";
        self.integer(&imp_priority, "implicit.priority", 1, 99, fix)?;
        if imp_priority.value >= fast_priority.value {
            let (span, key) = match (&imp_priority.span, &fast_priority.span) {
                (Some(span), _) => (Some(span.clone()), "implicit.priority"),
                (None, span) => (span.clone(), "fast.priority"),
            };
            let (i, f) = (imp_priority.value, fast_priority.value);
            let fix = if f > 1 {
                format!("set implicit.priority to at most {} or raise fast.priority", f - 1)
            } else {
                "raise fast.priority".to_string()
            };
            return Err(self.error(
                span,
                key,
                format!(
                    "implicit.priority ({i}{}) must be below fast.priority ({f}{}) so that the fast thread always \
                     preempts the implicit one; {fix}",
                    if imp_priority.span.is_some() {
                        ""
                    } else {
                        ", the default"
                    },
                    if fast_priority.span.is_some() {
                        ""
                    } else {
                        ", the default"
                    },
                ),
            ));
        }
        let rtol = given(&imp.rtol, s.implicit.rtol);
        if !(rtol.value > 0.0 && rtol.value < 1.0) {
            return Err(self.error(
                rtol.span,
                "implicit.rtol",
                format!(
                    "must be between 0 and 1 (exclusive), found {}; write e.g. 1e-6",
                    rtol.value
                ),
            ));
        }
        let atol = given(&imp.atol, s.implicit.atol);
        if !(atol.value > 0.0 && atol.value.is_finite()) {
            return Err(self.error(
                atol.span,
                "implicit.atol",
                format!("must be more than 0, found {}; write e.g. 1e-8", atol.value),
            ));
        }
        let newton = given(&imp.newton_iterations, i64::from(s.implicit.max_newton));
        self.integer(&newton, "implicit.newton_iterations", 1, MAX_COUNT, "write e.g. 4")?;
        let frame_duration = Duration::from_seconds(frame_s).unwrap_or_default();
        let macro_step = given(&imp.macro_step, frame_duration);
        let macro_step_s = self.frames(&macro_step, "implicit.macro_step", frame_s)?;
        let lead = given(&imp.lead, macro_step.value);
        let lead_s = self.frames(&lead, "implicit.lead", frame_s)?;
        if lead_s < macro_step_s * (1.0 - 1e-9) {
            let (span, key) = match (&lead.span, &macro_step.span) {
                (Some(span), _) => (Some(span.clone()), "implicit.lead"),
                (None, span) => (span.clone(), "implicit.macro_step"),
            };
            return Err(self.error(
                span,
                key,
                format!(
                    "implicit.lead ({}) must be at least implicit.macro_step ({}); write e.g. lead = \"{}\"",
                    shown(&lead),
                    shown(&macro_step),
                    macro_step.value
                ),
            ));
        }
        let max_lag = given(
            &imp.max_lag,
            Duration::from_seconds(s.implicit.max_lag).unwrap_or_default(),
        );
        let max_lag_s = self.positive(&max_lag, "implicit.max_lag", "20ms")?;
        s.implicit = ImplicitThreadSettings {
            placement: Placement {
                core: self.core(&imp.core, "implicit.core")?,
                priority: imp_priority.value as u8,
            },
            solver: self.named(&imp.method, "implicit.method", s.implicit.solver)?,
            rtol: rtol.value,
            atol: atol.value,
            max_newton: newton.value as u32,
            macro_step: macro_step_s,
            lead: lead_s,
            extrapolation: self.named(&imp.extrapolation, "implicit.extrapolation", s.implicit.extrapolation)?,
            max_lag: max_lag_s,
        };
        Ok(s)
    }

    fn inputs(&self, raw: &RawInputs, profiles: &[&str]) -> Result<InputsConfig, ConfigError> {
        let profile = match &raw.profile {
            Some(p) if profiles.contains(&p.get_ref().as_str()) => Some(p.get_ref().clone()),
            Some(p) => {
                let fix = if profiles.is_empty() {
                    "there are no built-in profiles here; remove inputs.profile and give inputs.points".to_string()
                } else {
                    format!("use one of: {}", profiles.join(", "))
                };
                return Err(self.error(
                    Some(p.span()),
                    "inputs.profile",
                    format!("unknown input profile \"{}\"; {fix}", p.get_ref()),
                ));
            }
            None => None,
        };
        let mut points = Vec::with_capacity(raw.points.len());
        for (name, list) in &raw.points {
            let key = format!("inputs.points.{}", key_segment(name));
            if list.get_ref().is_empty() {
                return Err(self.error(
                    Some(list.span()),
                    &key,
                    format!(
                        "no breakpoints; give at least one [time_s, value], e.g. {} = [[0, 0], [10, 1]], or remove it",
                        key_segment(name)
                    ),
                ));
            }
            let mut previous: Option<f64> = None;
            let mut breakpoints = Vec::with_capacity(list.get_ref().len());
            for (i, point) in list.get_ref().iter().enumerate() {
                let here = format!("{key}[{i}]");
                // A tuple would let TOML ignore a third number.
                let &[t, v] = point.get_ref().as_slice() else {
                    return Err(self.error(
                        Some(point.span()),
                        &here,
                        format!(
                            "a breakpoint is [time_s, value], found {} number(s); write e.g. [12.5, 30]",
                            point.get_ref().len()
                        ),
                    ));
                };
                if !t.is_finite() || !v.is_finite() {
                    return Err(self.error(
                        Some(point.span()),
                        &here,
                        format!("a breakpoint must be finite, found [{t}, {v}]"),
                    ));
                }
                if let Some(p) = previous.filter(|&p| t < p) {
                    return Err(self.error(
                        Some(point.span()),
                        &here,
                        format!(
                            "time {t} s comes after {p} s; breakpoints must be in time order (a time may repeat, \
                             for a step)"
                        ),
                    ));
                }
                previous = Some(t);
                breakpoints.push((t, v));
            }
            points.push((name.clone(), breakpoints));
        }
        Ok(InputsConfig { profile, points })
    }

    fn record(&self, raw: &RawRecord) -> Result<Option<RecordConfig>, ConfigError> {
        let Some(file) = &raw.file else {
            if raw.bus_log.is_some() && raw.signals.is_none() && raw.decimation.is_none() {
                return Ok(None);
            }
            let span = raw
                .signals
                .as_ref()
                .map(|s| s.span())
                .or(raw.decimation.as_ref().map(|d| d.span()));
            return match span {
                Some(span) => Err(self.error(
                    Some(span),
                    "record.file",
                    "nothing is recorded without a file; add e.g. file = \"run.csv\" to [record], or remove \
                     [record]"
                        .into(),
                )),
                None => Ok(None),
            };
        };
        if file.get_ref().trim().is_empty() {
            return Err(self.error(
                Some(file.span()),
                "record.file",
                "the file name is empty; write e.g. file = \"run.csv\"".into(),
            ));
        }
        let signals = match &raw.signals {
            None => None,
            Some(list) if list.get_ref().is_empty() => {
                return Err(self.error(
                    Some(list.span()),
                    "record.signals",
                    "no signals listed; name at least one output, or remove record.signals to record them all".into(),
                ))
            }
            Some(list) => {
                let mut names: Vec<String> = Vec::with_capacity(list.get_ref().len());
                for (i, name) in list.get_ref().iter().enumerate() {
                    if names.contains(name.get_ref()) {
                        return Err(self.error(
                            Some(name.span()),
                            &format!("record.signals[{i}]"),
                            format!("\"{}\" is listed twice; keep one", name.get_ref()),
                        ));
                    }
                    names.push(name.get_ref().clone());
                }
                Some(names)
            }
        };
        let decimation = given(&raw.decimation, 1);
        self.integer(
            &decimation,
            "record.decimation",
            1,
            i64::from(u32::MAX),
            "write 1 to record every frame, 10 for every 10th",
        )?;
        Ok(Some(RecordConfig {
            file: PathBuf::from(file.get_ref()),
            signals,
            decimation: decimation.value as u32,
        }))
    }
}

fn virtual_clock(raw: &RawVirtualClock) -> VirtualClockConfig {
    let seconds = |d: &Spanned<Duration>| d.get_ref().seconds();
    let cost = |d: &Option<Spanned<Duration>>| d.as_ref().map_or(0.0, seconds);
    let mut implicit_delays: Vec<(f64, f64)> = raw
        .implicit_delays
        .iter()
        .map(|d| (seconds(&d.at), seconds(&d.delay)))
        .collect();
    let mut fast_overruns: Vec<(f64, f64)> = raw
        .fast_overruns
        .iter()
        .map(|o| (seconds(&o.at), seconds(&o.extra)))
        .collect();
    // Durations are finite, so the order is total; the sort is stable.
    implicit_delays.sort_by(|a, b| a.0.total_cmp(&b.0));
    fast_overruns.sort_by(|a, b| a.0.total_cmp(&b.0));
    VirtualClockConfig {
        fast_cost: cost(&raw.fast_cost),
        implicit_cost: cost(&raw.implicit_cost),
        wake_latency: cost(&raw.wake_latency),
        implicit_delays,
        fast_overruns,
    }
}

// ---------------------------------------------------------------------------
// Finding the key of an error from the TOML reader.

/// A key as written in a dotted path: bare when it can be, else quoted.
fn key_segment(key: &str) -> String {
    let bare = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        key.to_string()
    } else {
        format!("{key:?}")
    }
}

/// The dotted path of the innermost key or value whose span holds byte
/// `offset`, as `virtual_clock.implicit_delays[0].at`; else (a syntax error
/// past a value) of the last key before `offset` on its line.
fn key_at(text: &str, offset: usize) -> Option<String> {
    let (table, _) = DeTable::parse_recoverable(text);
    let line_start = text
        .get(..offset)
        .and_then(|before| before.rfind('\n'))
        .map_or(0, |i| i + 1);
    let mut best = Best {
        offset,
        line_start,
        found: None,
    };
    best.table(table.get_ref(), "", 0);
    best.found.map(|(_, path)| path)
}

/// The search of [`key_at`].
struct Best {
    offset: usize,
    line_start: usize,
    /// (whether the span holds the offset, depth), and the path.
    found: Option<((bool, usize), String)>,
}

impl Best {
    fn holds(&self, span: &Range<usize>) -> bool {
        span.contains(&self.offset) || (span.is_empty() && span.start == self.offset)
    }

    /// Keeps `path` if it ranks above the match so far.
    fn consider(&mut self, rank: (bool, usize), path: &str) {
        if self.found.as_ref().is_none_or(|(r, _)| rank > *r) {
            self.found = Some((rank, path.to_string()));
        }
    }

    fn table(&mut self, table: &DeTable<'_>, prefix: &str, depth: usize) {
        for (key, value) in table.iter() {
            let segment = key_segment(key.get_ref());
            let path = if prefix.is_empty() {
                segment
            } else {
                format!("{prefix}.{segment}")
            };
            if self.holds(&key.span()) || self.holds(&value.span()) {
                self.consider((true, depth + 1), &path);
            } else if (self.line_start..=self.offset).contains(&key.span().start) {
                self.consider((false, depth + 1), &path);
            }
            self.value(value.get_ref(), &path, depth + 1);
        }
    }

    fn value(&mut self, value: &DeValue<'_>, path: &str, depth: usize) {
        match value {
            DeValue::Table(table) => self.table(table, path, depth),
            DeValue::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    let path = format!("{path}[{i}]");
                    if self.holds(&item.span()) {
                        self.consider((true, depth + 1), &path);
                    }
                    self.value(item.get_ref(), &path, depth + 1);
                }
            }
            _ => {}
        }
    }
}
