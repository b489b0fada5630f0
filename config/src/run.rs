//! A validated run configuration (`tandem run CONFIG.toml`): the model, the
//! frame, the tandem's policy and threads, the inputs, what to record, the
//! buses and serial devices, and the costs of the virtual clock. Names
//! that only the model or a DBC can check are kept with their place in
//! the file ([`Located`]), so that the binding step reports them there.

use std::path::PathBuf;

use tandem_models::ModelRef;
use tandem_runtime::tandem::virtual_clock::VirtualCosts;
use tandem_runtime::tandem::{Extrapolation, TandemSettings};

use crate::bus::{BusConfig, SerialConfig};
use crate::error::{ConfigError, Located};
use crate::simulation::{DEFAULT_STEP, DEFAULT_STOP};

/// Frame used when the file gives none (s).
pub const DEFAULT_FRAME: f64 = DEFAULT_STEP;
/// Run length used when the file gives none (s).
pub const DEFAULT_DURATION: f64 = DEFAULT_STOP;
/// The largest `max_catchup`, `newton_iterations`: more would not fit in a
/// frame on any machine.
pub const MAX_COUNT: i64 = 1000;

/// The inputs of the model over the run.
#[derive(Clone, Debug, PartialEq)]
pub struct InputsConfig {
    /// A built-in input profile, one of the names the loader was given.
    pub profile: Option<Located<String>>,
    /// How the implicit thread predicts these inputs past the newest frame.
    pub extrapolation: Extrapolation,
    /// Per-input piecewise-linear breakpoints, overriding the profile for
    /// those inputs; sorted by input name.
    pub points: Vec<InputPoints>,
}

impl Default for InputsConfig {
    fn default() -> Self {
        InputsConfig {
            profile: None,
            extrapolation: Extrapolation::Linear,
            points: Vec::new(),
        }
    }
}

/// An input's piecewise-linear breakpoints `(time s, value)`, in time
/// order: the input's name, and the points.
pub type InputPoints = (Located<String>, Vec<(f64, f64)>);

/// What to record to a CSV file.
#[derive(Clone, Debug, PartialEq)]
pub struct RecordConfig {
    /// The CSV file, as written (relative to the run's results folder).
    pub file: PathBuf,
    /// The outputs to record; `None` records them all.
    pub signals: Option<Vec<Located<String>>>,
    /// Record every `decimation`-th frame; at least 1.
    pub decimation: u32,
    /// Add a column with each frame's source (what its slot sent).
    pub frame_source: bool,
}

/// A validated run configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct RunConfig {
    /// The configuration file, as given (errors found later name it).
    pub file: PathBuf,
    /// The model to run (a file is resolved against the file's directory).
    pub model: Located<ModelRef>,
    /// Frame, policy and threads.
    pub settings: TandemSettings,
    /// The inputs.
    pub inputs: InputsConfig,
    /// The recording, if any.
    pub record: Option<RecordConfig>,
    /// The virtual clock's costs and injected faults (`--virtual-clock`).
    pub virtual_costs: VirtualCosts,
    /// The CAN buses (`[[bus]]`).
    pub buses: Vec<BusConfig>,
    /// The serial devices (`[[serial]]`).
    pub serial: Vec<SerialConfig>,
    /// Where all bus traffic is logged (`record.bus_log`, relative to the
    /// results folder): candump, or ASC for a `.asc` name.
    pub bus_log: Option<PathBuf>,
    /// A virtual ECU started beside the run (`[ecu]`).
    pub ecu: Option<EcuConfig>,
    /// The run served as a DCP slave (`[dcp]`).
    pub dcp: Option<crate::DcpConfig>,
    /// The run's XCP slave (`[xcp]`), off when absent.
    pub xcp: Option<XcpConfig>,
    /// Whether an FMU model runs out of process (`fmu.isolate`).
    pub isolate_fmu: bool,
    /// An FMU model's start values by variable name (`fmu.parameters`).
    pub fmu_parameters: Vec<(String, Located<StartValue>)>,
    /// Whether a block diagram model is compiled to machine code
    /// (`compile`; else interpreted).
    pub compile: bool,
}

/// A start value an FMU model is given before it is initialised.
#[derive(Clone, Debug, PartialEq)]
pub enum StartValue {
    /// A number.
    Number(f64),
    /// A Boolean.
    Boolean(bool),
    /// Text: a String's value, an FMI 3 Binary's hexadecimal digits, or a
    /// number in its type's notation.
    Text(String),
}

/// A run length given instead of the configuration's that cannot be.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RunLengthError {
    /// Not a length a run may have.
    #[error(transparent)]
    OutOfRange(#[from] crate::bounds::DurationOutOfRange),
    /// Shorter than one frame.
    #[error("the run ({duration} s) is shorter than one frame ({frame} s); make it at least the frame")]
    ShorterThanFrame {
        /// The length given (s).
        duration: f64,
        /// The frame (s).
        frame: f64,
    },
}

impl RunConfig {
    /// Runs for `seconds` instead of the configuration's duration.
    pub fn set_duration(&mut self, seconds: f64) -> Result<(), RunLengthError> {
        crate::bounds::check_duration(seconds)?;
        let frame = self.settings.frame;
        if seconds < frame {
            return Err(RunLengthError::ShorterThanFrame {
                duration: seconds,
                frame,
            });
        }
        self.settings.duration = seconds;
        Ok(())
    }

    /// An error about `value`, at its place in this file.
    pub fn error_at<T>(&self, value: &Located<T>, message: String) -> ConfigError {
        value.error(&self.file, message)
    }
}

/// The run's XCP slave: where masters reach it (UDP and TCP).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct XcpConfig {
    /// The address and port it listens on.
    pub listen: std::net::SocketAddr,
    /// Whether the run waits for a master's DAQ before its first frame and
    /// for its DISCONNECT after the last.
    pub wait: bool,
}

/// A virtual ECU process started beside a run: `tandem ecu CONFIG` on
/// another configuration, for the run's duration.
#[derive(Clone, Debug, PartialEq)]
pub struct EcuConfig {
    /// The ECU's configuration, resolved against this file's directory.
    pub config: Located<PathBuf>,
}
