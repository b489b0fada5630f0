//! The run configuration file as written: serde structures that mirror
//! the TOML (each value kept with its span, for line and column in errors)
//! and give its JSON Schema. Their doc comments are the schema's
//! descriptions. Validation turns them into the types of [`crate::run`].

use std::collections::BTreeMap;

use schemars::generate::SchemaSettings;
use schemars::transform::RecursiveTransform;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;
use toml::Spanned;

use tandem_runtime::linalg::LinearSolver;
use tandem_runtime::tandem::{Extrapolation, FastMethod, ImplicitSolver, Policy};

use crate::duration::Duration;

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

/// The configuration of a real-time tandem run (`tandem run CONFIG.toml`). Every key but `model` is optional.
/// Durations are strings with a unit: "20s", "1ms", "50us" (or "50µs"), "100ns", "2min".
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "TandemRunConfig", title = "Tandem run configuration")]
pub(crate) struct RawRunConfig {
    /// The model to run: a built-in model name such as "ev", or the path to a JSON block diagram (a value that ends
    /// in ".json" or contains "/"), an FMU (".fmu"), or a system of sub-models integrated as one plant: an SSP
    /// package (".ssp") or a co-simulation system file (".toml"), relative to this file's directory.
    #[schemars(with = "String", length(min = 1))]
    pub(crate) model: Spanned<String>,
    /// The frame period: the fast thread steps the model and publishes its outputs once per frame. Default "1ms".
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) frame: Option<Spanned<Duration>>,
    /// How long the run lasts; at least one frame. Default "10s".
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) duration: Option<Spanned<Duration>>,
    /// How the fast thread combines its own result with the implicit thread's: "correct" restarts the fast integrator
    /// from the newest implicit state and re-integrates to now; "select" uses the implicit state of the frame when it
    /// is ready by the output deadline, else the fast one; "explicit" runs the fast thread alone (no implicit
    /// integration; with a linearly implicit fast.method the implicit thread only prepares its matrices). Default
    /// "correct".
    #[serde(default)]
    #[schemars(schema_with = "policy_schema")]
    pub(crate) policy: Option<Spanned<String>>,
    /// With the "correct" policy, the most frames re-integrated per correction (0 to 1000). Default 4.
    #[serde(default)]
    #[schemars(with = "u32", range(max = 1000))]
    pub(crate) max_catchup: Option<Spanned<i64>>,
    /// How long after the start of a frame its outputs are due; more than 0 and at most one frame. Default 0.8 of
    /// the frame.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) output_deadline: Option<Spanned<Duration>>,
    /// The fast thread: one step per frame, explicit or linearly implicit.
    #[serde(default)]
    pub(crate) fast: RawFast,
    /// The implicit thread: a stiff integrator running behind (or ahead of) the fast thread.
    #[serde(default)]
    pub(crate) implicit: RawImplicit,
    /// The model's state events (zero crossings: impacts, end stops, switches, time events) on both threads.
    #[serde(default)]
    pub(crate) events: RawEvents,
    /// The model's inputs over the run.
    #[serde(default)]
    pub(crate) inputs: RawInputs,
    /// Recording outputs to a CSV file. Nothing is recorded without this table.
    #[serde(default)]
    #[schemars(with = "RawRecord")]
    pub(crate) record: Option<RawRecord>,
    /// Only with --virtual-clock: the compute time charged per step and faults to inject, so that a run is
    /// deterministic and independent of the machine.
    #[serde(default)]
    pub(crate) virtual_clock: RawVirtualClock,
    /// CAN buses: each a transport, a DBC, and the signals mapped to the model's inputs and outputs.
    #[serde(default)]
    pub(crate) bus: Vec<RawBus>,
    /// Serial devices that exchange `name=value` lines (sensors, rigs, emulators): each a port and the fields
    /// mapped to the model's inputs and outputs.
    #[serde(default)]
    pub(crate) serial: Vec<RawSerial>,
    /// A virtual ECU to start beside this run (`tandem ecu` on its own configuration), for the run's duration.
    #[serde(default)]
    #[schemars(with = "RawEcu")]
    pub(crate) ecu: Option<RawEcu>,
    /// Serve this run as a DCP slave (`tandem run` waits for a federation master and runs when it says so); its
    /// ports are the buses whose transport is "dcp".
    #[serde(default)]
    #[schemars(with = "RawDcp")]
    pub(crate) dcp: Option<RawDcp>,
    /// An ASAM XCP slave on Ethernet in the run, for measurement and calibration tools (CANape, INCA, pyXCP). Off
    /// without this table.
    #[serde(default)]
    #[schemars(with = "RawXcp")]
    pub(crate) xcp: Option<RawXcp>,
    /// How an FMU model (a `model` ending in ".fmu") is loaded.
    #[serde(default)]
    #[schemars(with = "RawFmu")]
    pub(crate) fmu: Option<RawFmu>,
    /// Compile a JSON block diagram model (or a system file's diagrams) to machine code (with Cranelift) for the
    /// integrators' evaluations; false: the interpreter evaluates it. The results are the same bit for bit. Default
    /// true.
    #[serde(default)]
    #[schemars(with = "bool")]
    pub(crate) compile: Option<Spanned<bool>>,
}

/// How an FMU model, or the FMUs of a system model, are loaded.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Fmu")]
pub(crate) struct RawFmu {
    /// Run the FMU's code in processes of their own (the tandem binary run again as their helper, one per integrator
    /// thread), for FMUs not trusted to keep the run alive: a crash in it then ends the run with an error naming the
    /// FMU, the FMI function and the signal. Each FMI call that returns something costs a round trip between the
    /// processes (about 10 microseconds). Default false.
    #[serde(default)]
    #[schemars(with = "bool")]
    pub(crate) isolate: Option<Spanned<bool>>,
    /// Start values set before the FMU is initialised, by variable name (an FMI 3 alias too): numbers, Booleans, or
    /// text (a String's, an FMI 3 Binary's hexadecimal digits), for any variable the standard lets a user set
    /// (parameters, inputs, and variables with initial "exact" or "approx"). Default none.
    #[serde(default)]
    #[schemars(with = "std::collections::BTreeMap<String, RawStartValue>")]
    pub(crate) parameters: std::collections::BTreeMap<String, Spanned<RawStartValue>>,
}

/// A start value of `fmu.parameters`: a number, a Boolean, or text.
#[derive(Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "StartValue")]
pub(crate) enum RawStartValue {
    /// A TOML integer or float.
    Number(f64),
    /// `true` or `false`.
    Boolean(bool),
    /// A string.
    Text(String),
}

/// The run as a DCP slave of a federation.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Dcp")]
pub(crate) struct RawDcp {
    /// The UDP address (IPv4:port) its control PDUs come to, e.g. "127.0.0.1:47011".
    #[schemars(with = "String", length(min = 1))]
    pub(crate) control: Spanned<String>,
    /// The slave's name in its description. Default the file's name without ".toml".
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) name: Option<Spanned<String>>,
    /// The address its description gives masters, when it listens on 0.0.0.0. Default control's address.
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) host: Option<Spanned<String>>,
    /// Seconds without a request from its master, once registered, after which it stops and waits for a master
    /// again (0.01 to 86400). Default 10.
    #[serde(default)]
    #[schemars(with = "f64")]
    pub(crate) master_timeout: Option<Spanned<f64>>,
}

/// The run's XCP slave.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Xcp")]
pub(crate) struct RawXcp {
    /// The address and port masters reach it at, over UDP and TCP both, e.g. "127.0.0.1:5555" (port 0: any free
    /// port, printed at the start).
    #[schemars(with = "String", length(min = 1))]
    pub(crate) listen: Spanned<String>,
    /// Start the first frame only once a master has started its DAQ lists, and at the end keep serving until the
    /// master disconnects (at most 10 s), so that a master records every frame (used with --virtual-clock by test
    /// benches). Default false: the run starts at once and masters connect whenever they like.
    #[serde(default)]
    #[schemars(with = "bool")]
    pub(crate) wait: Option<Spanned<bool>>,
}

/// A virtual ECU started beside the run.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Ecu")]
pub(crate) struct RawEcu {
    /// The ECU's run configuration, relative to this file's directory.
    #[schemars(with = "String", length(min = 1))]
    pub(crate) config: Spanned<String>,
}

/// The fast thread: it steps the model once per frame (explicit or linearly implicit method) and publishes the outputs.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "FastThread")]
pub(crate) struct RawFast {
    /// The CPU core to pin the thread to, from 0. Omit it to leave the thread unpinned.
    #[serde(default)]
    #[schemars(with = "u32")]
    pub(crate) core: Option<Spanned<i64>>,
    /// The SCHED_FIFO priority, 1 to 99; above implicit.priority. Default 80.
    #[serde(default)]
    #[schemars(with = "u8", range(min = 1, max = 99))]
    pub(crate) priority: Option<Spanned<i64>>,
    /// The method, one step per frame: explicit "euler", "heun" or "rk4" (classic fourth-order Runge-Kutta), stable
    /// only on modes slower than the frame; or linearly implicit (Rosenbrock-W) "rosenbrock-euler", "ros2" or
    /// "ros34pw2", stable on stiff modes at a fixed cost, with the iteration matrix prepared by the implicit thread.
    /// Default "ros34pw2".
    #[serde(default)]
    #[schemars(schema_with = "method_schema")]
    pub(crate) method: Option<Spanned<String>>,
    /// A linearly implicit method's iteration matrix is prepared again at the newest frame's state this often: a
    /// whole number of frames; "0s" keeps the matrix of the initial state for the whole run (then, under policy
    /// "explicit", there is no implicit thread at all). Default "1ms" (at least one frame).
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) matrix_interval: Option<Spanned<Duration>>,
}

/// The model's state events in a real-time run.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Events")]
pub(crate) struct RawEvents {
    /// Locate zero crossings inside frames, on both threads (true), or switch modes only at frame boundaries
    /// (false). Default true.
    #[serde(default)]
    #[schemars(with = "bool")]
    pub(crate) locate: Option<Spanned<bool>>,
    /// The most events each thread locates in one frame (1 to 1000); a crossing beyond them is handled at the next
    /// frame boundary, and counted. Default 4.
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 1000))]
    pub(crate) max_per_frame: Option<Spanned<i64>>,
}

/// The implicit thread: it integrates the model with a stiff method and publishes a state every macro step.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "ImplicitThread")]
pub(crate) struct RawImplicit {
    /// The CPU core to pin the thread to, from 0. Omit it to leave the thread unpinned.
    #[serde(default)]
    #[schemars(with = "u32")]
    pub(crate) core: Option<Spanned<i64>>,
    /// The SCHED_FIFO priority, 1 to 99; below fast.priority, so that the fast thread always preempts this one.
    /// Default 70.
    #[serde(default)]
    #[schemars(with = "u8", range(min = 1, max = 99))]
    pub(crate) priority: Option<Spanned<i64>>,
    /// The integrator: "bdf" (variable order and step, landing on every frame time), or one fixed step per macro
    /// step of "bdf1" (backward Euler), "bdf2" or "trapezoidal". Default "bdf".
    #[serde(default)]
    #[schemars(schema_with = "implicit_method_schema")]
    pub(crate) method: Option<Spanned<String>>,
    /// Relative tolerance of the BDF's error control and of Newton's convergence test, between 0 and 1. Default
    /// 1e-6.
    #[serde(default)]
    #[schemars(with = "f64", extend("exclusiveMinimum" = 0, "exclusiveMaximum" = 1))]
    pub(crate) rtol: Option<Spanned<f64>>,
    /// Absolute tolerance, above 0. Default 1e-8.
    #[serde(default)]
    #[schemars(with = "f64", extend("exclusiveMinimum" = 0))]
    pub(crate) atol: Option<Spanned<f64>>,
    /// The most Newton iterations per step of a fixed-step method (1 to 1000). Default 4.
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1, max = 1000))]
    pub(crate) newton_iterations: Option<Spanned<i64>>,
    /// How both sides store the Jacobian and factor the iteration matrix: "dense" LU, "sparse" LU on the model's
    /// Jacobian structure, or "auto" (sparse for 64 states and more when at most a tenth of the matrix can be
    /// nonzero). Default "auto".
    #[serde(default)]
    #[schemars(schema_with = "linear_solver_schema")]
    pub(crate) linear_solver: Option<Spanned<String>>,
    /// CPU cores of threads that difference the implicit side's Jacobians beside it (each its own copy of the
    /// model, pinned there at the implicit thread's priority), at most 8, none of them fast.core or implicit.core.
    /// Used for models whose derivatives depend on their state alone (built-in plants; diagrams without zero
    /// crossings or algebraic loops). Default none.
    #[serde(default)]
    #[schemars(with = "Vec<u32>")]
    pub(crate) helper_cores: Option<Spanned<Vec<Spanned<i64>>>>,
    /// Time between two published implicit results: a whole number of frames. Default one frame.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) macro_step: Option<Spanned<Duration>>,
    /// How far ahead of the fast thread's newest frame the implicit thread may integrate, on extrapolated inputs: a
    /// whole number of frames, at least macro_step. Default macro_step.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) lead: Option<Spanned<Duration>>,
    /// When the implicit state is this far behind the fast thread's newest frame, the implicit thread restarts from
    /// the fast thread's state. Default 20 frames.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) max_lag: Option<Spanned<Duration>>,
}

/// The model's inputs: a built-in profile, and breakpoints that override it input by input. Inputs given by
/// neither keep their default values.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Inputs")]
pub(crate) struct RawInputs {
    /// A built-in input profile, such as "ev-drive-cycle" for the "ev" model.
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) profile: Option<Spanned<String>>,
    /// How the implicit thread predicts these inputs (the profile's and the points') past the newest frame: "hold"
    /// (the last value), "linear" (a line through the last two) or "quadratic" (a parabola through the last three).
    /// Inputs driven by a bus or a serial device follow their own table's `extrapolation`. Default "linear" (smooth
    /// profiles).
    #[serde(default)]
    #[schemars(schema_with = "extrapolation_schema")]
    pub(crate) extrapolation: Option<Spanned<String>>,
    /// Piecewise-linear inputs: for each input name, breakpoints [time in seconds, value] in time order (a time
    /// may repeat, for a step). Before the first breakpoint the input holds the first value, after the last the
    /// last value. They override the profile for those inputs.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, Vec<(f64, f64)>>")]
    pub(crate) points: BTreeMap<String, Spanned<Vec<Spanned<Vec<f64>>>>>,
}

/// Recording outputs to a CSV file, a row per recorded frame.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Record")]
pub(crate) struct RawRecord {
    /// The CSV file to write, relative to the current directory.
    #[serde(default)]
    #[schemars(with = "String", length(min = 1))]
    pub(crate) file: Option<Spanned<String>>,
    /// The outputs to record, by name; for an FMU model, also any of its numeric variables (a local, a state, a
    /// derivative, an array element such as "y[2]"), which then become outputs too. Default: all the outputs.
    #[serde(default)]
    #[schemars(with = "Vec<String>", length(min = 1))]
    pub(crate) signals: Option<Spanned<Vec<Spanned<String>>>>,
    /// Record every n-th frame (1 records them all). Default 1.
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1))]
    pub(crate) decimation: Option<Spanned<i64>>,
    /// Add a last column, frame_source, saying what each frame's slot sent: implicit, fast or catch-up (its own
    /// outputs, on time), extrapolated or held (computed outputs of earlier frames, the frame being late), skipped
    /// (nothing: the run was stalled). Default false.
    #[serde(default)]
    #[schemars(with = "bool")]
    pub(crate) frame_source: Option<Spanned<bool>>,
    /// Log every frame of every bus to this file, relative to the current directory: candump's log format, or
    /// Vector ASC for a name ending in ".asc".
    #[serde(default)]
    #[schemars(with = "String", length(min = 1))]
    pub(crate) bus_log: Option<Spanned<String>>,
}

/// The virtual clock (--virtual-clock): instead of reading the machine's clock, the run charges a fixed compute
/// time per step, so that deadline misses and corrections are deterministic. Every cost defaults to "0s".
#[derive(Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "VirtualClock")]
pub(crate) struct RawVirtualClock {
    /// The compute time charged per step of the fast thread.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) fast_cost: Option<Spanned<Duration>>,
    /// The compute time charged per step of the implicit thread.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) implicit_cost: Option<Spanned<Duration>>,
    /// The time between a thread's wake-up time and when it runs.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) wake_latency: Option<Spanned<Duration>>,
    /// Injected implicit-thread delays, as [[virtual_clock.implicit_delays]] tables.
    #[serde(default)]
    pub(crate) implicit_delays: Vec<RawDelay>,
    /// Injected frame overruns of the fast thread, as [[virtual_clock.fast_overruns]] tables.
    #[serde(default)]
    pub(crate) fast_overruns: Vec<RawOverrun>,
    /// Injected stalls of the whole process (as SIGSTOP and SIGCONT would make), as [[virtual_clock.stalls]]
    /// tables.
    #[serde(default)]
    pub(crate) stalls: Vec<RawStall>,
}

/// A fault injected into the virtual clock: a struct whose keys are the
/// run time `at` it applies from and one duration, each with its doc (the
/// schema's description), named `$schema` in the schema.
macro_rules! injected {
    (
        $(#[doc = $doc:literal])*
        struct $name:ident as $schema:tt {
            $(#[doc = $at_doc:literal])* at,
            $(#[doc = $how_doc:literal])* $how:ident $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        #[schemars(rename = $schema)]
        pub(crate) struct $name {
            $(#[doc = $at_doc])*
            #[schemars(with = "Duration")]
            pub(crate) at: Spanned<Duration>,
            $(#[doc = $how_doc])*
            #[schemars(with = "Duration")]
            pub(crate) $how: Spanned<Duration>,
        }
    };
}

injected! {
    /// An injected stall: at `at`, the whole process stops for `duration` (neither thread runs; work under way ends
    /// that much later).
    struct RawStall as "Stall" {
        /// Run time at which the process stops.
        at,
        /// How long it stays stopped.
        duration,
    }
}

injected! {
    /// An injected delay: the implicit step that starts at or after `at` takes `delay` longer.
    struct RawDelay as "ImplicitDelay" {
        /// Run time from which the next implicit step is delayed.
        at,
        /// How much longer that step takes.
        delay,
    }
}

injected! {
    /// An injected overrun: the frame that starts at or after `at` takes `extra` longer.
    struct RawOverrun as "FastOverrun" {
        /// Run time from which the next frame overruns.
        at,
        /// How much longer that frame takes.
        extra,
    }
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
    names_schema(FastMethod::ALL.map(FastMethod::name))
}

fn implicit_method_schema(_: &mut SchemaGenerator) -> Schema {
    names_schema(ImplicitSolver::NAMES)
}

fn linear_solver_schema(_: &mut SchemaGenerator) -> Schema {
    names_schema(LinearSolver::ALL.map(LinearSolver::name))
}

fn extrapolation_schema(_: &mut SchemaGenerator) -> Schema {
    names_schema(Extrapolation::ALL.map(Extrapolation::name))
}

/// A CAN bus: its transport, its DBC, and how its signals map to the model's inputs and outputs.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Bus")]
pub(crate) struct RawBus {
    /// The bus's name in logs and reports. Default "can0".
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) name: Option<Spanned<String>>,
    /// How the bus is reached: "udp" (CAN over UDP multicast, python-can's udp_multicast), "socketcan" (a Linux
    /// CAN interface), "slcan" (a serial SLCAN adapter), "virtual" (a bus inside this process, shared by the runs
    /// that name the same channel) or "dcp" (frames carried across a DCP federation by this run's [dcp] slave).
    #[schemars(with = "String", extend("enum" = ["udp", "socketcan", "slcan", "virtual", "dcp"]))]
    pub(crate) transport: Spanned<String>,
    /// udp: the multicast group. Default "239.74.163.2" (python-can's).
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) group: Option<Spanned<String>>,
    /// udp: the port. Default 43113 (python-can's).
    #[serde(default)]
    #[schemars(with = "u16")]
    pub(crate) port: Option<Spanned<i64>>,
    /// virtual: the channel; runs in one process that name the same channel share the bus. Default the bus's name.
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) channel: Option<Spanned<String>>,
    /// socketcan: the interface, e.g. "can0" or "vcan0".
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) interface: Option<Spanned<String>>,
    /// socketcan: open the interface for CAN FD. Default false.
    #[serde(default)]
    pub(crate) fd: Option<bool>,
    /// slcan: the serial device, e.g. "/dev/ttyACM0".
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) device: Option<Spanned<String>>,
    /// slcan: the CAN bit rate in bit/s, one of 10000, 20000, 50000, 100000, 125000, 250000, 500000, 800000,
    /// 1000000. Default 500000.
    #[serde(default)]
    #[schemars(with = "u32")]
    pub(crate) bitrate: Option<Spanned<i64>>,
    /// The DBC file describing the messages, relative to this file's directory.
    #[schemars(with = "String")]
    pub(crate) dbc: Spanned<String>,
    /// Messages received: their signals drive model inputs.
    #[serde(default)]
    pub(crate) receive: Vec<RawReceive>,
    /// Messages sent: their signals carry model outputs.
    #[serde(default)]
    pub(crate) transmit: Vec<RawTransmit>,
    /// A UDS diagnostic server on this bus, over ISO-TP.
    #[serde(default)]
    pub(crate) diagnostics: Option<crate::diag::RawDiagnostics>,
    /// Faults injected into what this bus sends, at scheduled times.
    #[serde(default)]
    pub(crate) fault: Vec<RawFault>,
}

/// A received message.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Receive")]
pub(crate) struct RawReceive {
    /// The message's name in the DBC.
    #[schemars(with = "String")]
    pub(crate) message: Spanned<String>,
    /// DBC signal name = model input name.
    #[schemars(with = "BTreeMap<String, String>")]
    pub(crate) signals: Spanned<BTreeMap<Spanned<String>, Spanned<String>>>,
    /// With no frame of this message for this long, `on_timeout` applies. Default: no timeout.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) timeout: Option<Spanned<Duration>>,
    /// On a timeout: "hold" the last values, return the inputs to the model's "default" values, or "fault": stop
    /// the run. Default "hold".
    #[serde(default)]
    #[schemars(with = "String", extend("enum" = ["hold", "default", "fault"]))]
    pub(crate) on_timeout: Option<Spanned<String>>,
    /// How the implicit thread predicts the inputs this message drives past their newest sample: "hold", "linear"
    /// or "quadratic". Default "hold": CAN signals change in steps, and a line through two samples of a step
    /// overshoots.
    #[serde(default)]
    #[schemars(schema_with = "extrapolation_schema")]
    pub(crate) extrapolation: Option<Spanned<String>>,
    /// The message's end-to-end protection, checked on each frame received. Default: none.
    #[serde(default)]
    #[schemars(with = "Option<RawE2e>")]
    pub(crate) e2e: Option<Spanned<RawE2e>>,
}

/// A sent message.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Transmit")]
pub(crate) struct RawTransmit {
    /// The message's name in the DBC.
    #[schemars(with = "String")]
    pub(crate) message: Spanned<String>,
    /// DBC signal name = model output name.
    #[schemars(with = "BTreeMap<String, String>")]
    pub(crate) signals: Spanned<BTreeMap<Spanned<String>, Spanned<String>>>,
    /// Its period, a whole number of frames. Default: the DBC's GenMsgCycleTime.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) cycle: Option<Spanned<Duration>>,
    /// The message's end-to-end protection, written into each frame sent. Default: none.
    #[serde(default)]
    #[schemars(with = "Option<RawE2e>")]
    pub(crate) e2e: Option<Spanned<RawE2e>>,
}

/// Where an E2E field sits: the name of a DBC signal of the message, or its lowest bit (bit 8 is bit 0 of byte 1).
#[derive(Clone, Deserialize, JsonSchema)]
#[serde(untagged)]
pub(crate) enum RawFieldPlace {
    /// A DBC signal.
    Signal(String),
    /// A bit offset.
    Bit(i64),
}

/// A message's end-to-end protection: an AUTOSAR E2E profile, or a plain rolling counter and checksum.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "E2e")]
pub(crate) struct RawE2e {
    /// "1A" (profile 1, both data ID bytes), "1C" (profile 1, data ID nibble), "1" (profile 1 with
    /// `data_id_mode`), "2", "5", "11" or "plain".
    #[schemars(with = "String", extend("enum" = ["1", "1A", "1C", "2", "5", "11", "plain"]))]
    pub(crate) profile: Spanned<String>,
    /// Profiles 1, 5 and 11: the 16-bit data ID.
    #[serde(default)]
    #[schemars(with = "u16")]
    pub(crate) data_id: Option<Spanned<i64>>,
    /// Profiles 1 and 11: how the data ID enters the CRC: "both", "alt", "low" (profile 1 only) or "nibble".
    #[serde(default)]
    #[schemars(with = "String", extend("enum" = ["both", "alt", "low", "nibble"]))]
    pub(crate) data_id_mode: Option<Spanned<String>>,
    /// Profile 2: the 16 data IDs, one per counter value.
    #[serde(default)]
    #[schemars(with = "Vec<u8>")]
    pub(crate) data_ids: Option<Spanned<Vec<i64>>>,
    /// The CRC (profiles) or checksum (plain): a DBC signal or a bit offset. Default: the profile's place (byte 0).
    #[serde(default)]
    #[schemars(with = "RawFieldPlace")]
    pub(crate) crc: Option<Spanned<RawFieldPlace>>,
    /// The counter: a DBC signal or a bit offset. Default: the profile's place (the low nibble of byte 1).
    #[serde(default)]
    #[schemars(with = "RawFieldPlace")]
    pub(crate) counter: Option<Spanned<RawFieldPlace>>,
    /// Profile 1C: the data ID nibble: a DBC signal or a bit offset. Default: the high nibble of byte 1.
    #[serde(default)]
    #[schemars(with = "RawFieldPlace")]
    pub(crate) data_id_nibble: Option<Spanned<RawFieldPlace>>,
    /// Plain: the checksum: "crc8" (SAE J1850), "crc8h2f", "crc16" (CCITT-FALSE), "crc32p4", "xor" or "sum".
    /// Default "crc8".
    #[serde(default)]
    #[schemars(with = "String", extend("enum" = ["crc8", "crc8h2f", "crc16", "crc32p4", "xor", "sum"]))]
    pub(crate) checksum: Option<Spanned<String>>,
    /// Plain: the bytes the checksum covers, [start, end). Default: every byte after the checksum, or every byte
    /// before it when it ends the message.
    #[serde(default)]
    #[schemars(with = "[usize; 2]")]
    pub(crate) checksum_bytes: Option<Spanned<Vec<i64>>>,
    /// The largest counter step a receiver accepts as lost frames rather than a wrong sequence. Default 1.
    #[serde(default)]
    #[schemars(with = "u8")]
    pub(crate) max_delta_counter: Option<Spanned<i64>>,
    /// Received messages: a model input that receives each frame's check status as AUTOSAR numbers it (0 OK,
    /// 1 no new data: the message timed out, 7 error, 8 repeated, 0x20 OK with frames lost, 0x40 wrong
    /// sequence).
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) status: Option<Spanned<String>>,
}

/// A frame fault injected at a scheduled time.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Fault")]
pub(crate) struct RawFault {
    /// The sent message affected (all kinds but "burst" and "stop").
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) message: Option<Spanned<String>>,
    /// "drop", "delay", "repeat", "stuck_counter", "bad_crc", "wrong_length", "override", "burst" (frames of an
    /// identifier the DBC does not define) or "stop" (the node sends nothing).
    #[schemars(with = "String", extend("enum" = ["drop", "delay", "repeat", "stuck_counter", "bad_crc", "wrong_length", "override", "burst", "stop"]))]
    pub(crate) kind: Spanned<String>,
    /// When it begins, rounded to a frame boundary. Default "0s".
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) start: Option<Spanned<Duration>>,
    /// How long it lasts. Give `duration` or `count`; neither: to the end of the run.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) duration: Option<Spanned<Duration>>,
    /// How many frames of the message it affects (for "burst" and "stop", frames of the run).
    #[serde(default)]
    #[schemars(with = "u64")]
    pub(crate) count: Option<Spanned<i64>>,
    /// delay: by how long, a whole number of frames.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) delay: Option<Spanned<Duration>>,
    /// repeat: copies sent of each frame. Default 2.
    #[serde(default)]
    #[schemars(with = "u32")]
    pub(crate) times: Option<Spanned<i64>>,
    /// wrong_length: the bytes sent (0 to 64, not the message's length).
    #[serde(default)]
    #[schemars(with = "u8")]
    pub(crate) bytes: Option<Spanned<i64>>,
    /// override: the DBC signal.
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) signal: Option<Spanned<String>>,
    /// override: the value sent (physical, or raw with raw = true).
    #[serde(default)]
    #[schemars(with = "f64")]
    pub(crate) value: Option<Spanned<f64>>,
    /// override: `value` is the signal's raw integer. Default false.
    #[serde(default)]
    pub(crate) raw: Option<bool>,
    /// burst: the identifier. Default 0x7FF (0x1FFFFFFF when extended).
    #[serde(default)]
    #[schemars(with = "u32")]
    pub(crate) id: Option<Spanned<i64>>,
    /// burst: a 29-bit identifier. Default false.
    #[serde(default)]
    pub(crate) extended: Option<bool>,
    /// burst: frames sent per frame of the run. Default 1, at most 64.
    #[serde(default)]
    #[schemars(with = "u32")]
    pub(crate) per_frame: Option<Spanned<i64>>,
}

/// A serial device speaking the `name=value` line protocol (documented in io/bus/src/serial_lines.rs): each received
/// line's fields drive model inputs; every `cycle` a line of model outputs is sent.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Serial")]
pub(crate) struct RawSerial {
    /// The device's name in logs and reports. Default "serial0", "serial1", ... in order.
    #[serde(default)]
    #[schemars(with = "String")]
    pub(crate) name: Option<Spanned<String>>,
    /// The serial device, e.g. "/dev/ttyUSB0".
    #[schemars(with = "String", length(min = 1))]
    pub(crate) device: Spanned<String>,
    /// The baud rate. Default 115200.
    #[serde(default)]
    #[schemars(with = "u32", range(min = 1))]
    pub(crate) baud: Option<Spanned<i64>>,
    /// Received fields: field name in the device's lines = model input name.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub(crate) receive: Option<Spanned<BTreeMap<Spanned<String>, Spanned<String>>>>,
    /// With no line carrying a received field for this long, `on_timeout` applies. Default: no timeout.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) timeout: Option<Spanned<Duration>>,
    /// On a timeout: "hold" the last values, return the inputs to the model's "default" values, or "fault": stop
    /// the run. Default "hold".
    #[serde(default)]
    #[schemars(with = "String", extend("enum" = ["hold", "default", "fault"]))]
    pub(crate) on_timeout: Option<Spanned<String>>,
    /// Sent fields: field name in the lines Tandem sends = model output name.
    #[serde(default)]
    #[schemars(with = "BTreeMap<String, String>")]
    pub(crate) transmit: Option<Spanned<BTreeMap<Spanned<String>, Spanned<String>>>>,
    /// How often a line of the sent fields goes out: a whole number of frames. Default every frame.
    #[serde(default)]
    #[schemars(with = "Duration")]
    pub(crate) cycle: Option<Spanned<Duration>>,
    /// How the implicit thread predicts the received inputs past their newest sample: "hold", "linear" or
    /// "quadratic". Default "hold".
    #[serde(default)]
    #[schemars(schema_with = "extrapolation_schema")]
    pub(crate) extrapolation: Option<Spanned<String>>,
}
