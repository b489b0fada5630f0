//! The binding step: a validated configuration meets its model and its DBC
//! files. Every name the file gives (the model, inputs, outputs, messages,
//! signals, serial fields) is checked here, in one place, and a name that
//! does not exist is reported at its line and column with the valid ones.
//! The result, a [`Plan`], holds everything a [`crate::Session`] needs, as
//! indices.

use std::path::PathBuf;

use tandem_can::frame::CLASSIC_MAX_LEN;
use tandem_config::{BusConfig, ConfigError, Located, RunConfig, SerialConfig, StartValue, TransportConfig, XcpConfig};
use tandem_cosim::{plant, plant::PlantError, Loading};
use tandem_dbc::{Dbc, DbcError, Message, Multiplex};
use tandem_fmi::{FmuSetup, Host, ModelLoadError, Parameters, Recorded, Use, Value};
use tandem_models::{interpreted, plants, Model, ModelRef, PrepareDiagram, Variable};
use tandem_runtime::tandem::inputs::Signals;
use tandem_runtime::tandem::virtual_clock::VirtualCosts;
use tandem_runtime::tandem::{Extrapolation, TandemSettings};

use crate::diag::{self, DiagPlan};
use crate::fault::FaultPlan;
use crate::lookup::{list, port, signal_index};
use crate::mapping::{BusMap, RxMessage, TxMessage};
use crate::protection;
use crate::serial::SerialMap;

/// A configuration that does not fit its model or its DBC files.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// A name, a file or a value, at its place in the configuration.
    #[error(transparent)]
    Config(Box<ConfigError>),
    /// The model cannot be loaded.
    #[error("{place}")]
    Model {
        /// The `model =` line, with the error as its message.
        place: Box<ConfigError>,
        /// Why.
        error: Box<ModelLoadError>,
    },
    /// A system (an SSP package, a system file) cannot be the plant.
    #[error("{place}")]
    Plant {
        /// The `model =` line, with the error as its message.
        place: Box<ConfigError>,
        /// Why.
        error: Box<PlantError>,
    },
    /// A DBC file cannot be loaded.
    #[error("{error}\n  (the DBC of {place})")]
    Dbc {
        /// The `dbc =` line.
        place: Box<ConfigError>,
        /// Why.
        error: Box<DbcError>,
    },
}

impl From<ConfigError> for BindError {
    fn from(e: ConfigError) -> Self {
        BindError::Config(Box::new(e))
    }
}

/// Which outputs are recorded, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BoundRecording {
    /// The CSV file (relative paths are in the run's results folder); with
    /// none, the rows go to the session's observer only.
    pub file: Option<PathBuf>,
    /// Output indices, in column order.
    pub signals: Vec<usize>,
    /// Every how many frames.
    pub decimation: u64,
    /// Whether the CSV file has a column with each frame's source.
    pub frame_source: bool,
}

/// A bus bound to the model.
pub struct BoundBus {
    /// Its name in logs and reports.
    pub name: String,
    /// How it is reached.
    pub transport: TransportConfig,
    /// Its signals as model inputs and outputs.
    pub map: BusMap,
    /// Its diagnostic server, if any.
    pub diagnostics: Option<DiagPlan>,
    /// The faults it injects into what it sends.
    pub faults: FaultPlan,
}

/// A serial device bound to the model.
pub struct BoundSerial {
    /// Its name in reports.
    pub name: String,
    /// The serial port.
    pub device: String,
    /// Baud rate.
    pub baud: u32,
    /// Its fields as model inputs and outputs.
    pub map: SerialMap,
}

/// A configuration bound to its model: everything a session needs.
pub struct Plan {
    /// Frame, policy and threads.
    pub settings: TandemSettings,
    /// The virtual clock's costs and injected faults.
    pub virtual_costs: VirtualCosts,
    /// The bus log, if any (relative paths are in the results folder).
    pub bus_log: Option<PathBuf>,
    /// The model.
    pub model: Box<dyn Model>,
    /// Its name, for reports.
    pub name: String,
    /// How a block diagram model is evaluated (what was compiled), for
    /// reports.
    pub evaluation: Option<String>,
    /// The inputs' breakpoints by input index (profile, then points).
    pub inputs: Signals,
    /// How the implicit thread predicts each input past its newest sample:
    /// the `[inputs]` table's order, or the bus message's or serial
    /// device's that drives it.
    pub extrapolation: Vec<Extrapolation>,
    /// What is recorded, if anything.
    pub record: Option<BoundRecording>,
    /// The buses.
    pub buses: Vec<BoundBus>,
    /// The serial devices.
    pub serial: Vec<BoundSerial>,
    /// The run's XCP slave (`[xcp]`), if any.
    pub xcp: Option<XcpConfig>,
}

impl Plan {
    /// A plan that runs `model` (called `name`) with `settings`, its inputs
    /// driven by `inputs`, nothing recorded and no device.
    pub fn new(model: Box<dyn Model>, name: &str, settings: TandemSettings, inputs: Signals) -> Plan {
        Plan {
            extrapolation: vec![Extrapolation::Linear; model.layout().inputs.len()],
            settings,
            virtual_costs: VirtualCosts::default(),
            bus_log: None,
            model,
            name: name.to_string(),
            evaluation: None,
            inputs,
            record: None,
            buses: Vec::new(),
            serial: Vec::new(),
            xcp: None,
        }
    }
}

/// Binds `config` to its model and DBC files.
pub fn bind(config: RunConfig) -> Result<Plan, BindError> {
    let model_error = |error: ModelLoadError| BindError::Model {
        place: Box::new(
            fmu_setup_place(&config, &error).unwrap_or_else(|| config.error_at(&config.model, error.to_string())),
        ),
        error: Box::new(error),
    };
    // An FMU run out of process runs in this program, started again as its
    // helper (see tandem_fmi::isolate).
    let host = match config.isolate_fmu {
        true => Some(Host::this_program().map_err(|e| {
            model_error(ModelLoadError::NoHost {
                model: config.model.value.to_string(),
                error: e,
            })
        })?),
        false => None,
    };
    let prepare: PrepareDiagram<'_> = if config.compile {
        &tandem_jit::prepare
    } else {
        &interpreted
    };
    let loaded = match &config.model.value {
        ModelRef::File(path) if plant::is_system(path) => {
            let loading = Loading {
                isolate_fmus: config.isolate_fmu,
                interpret: !config.compile,
            };
            plant::load(path, loading).map_err(|error| BindError::Plant {
                place: Box::new(config.error_at(&config.model, error.to_string())),
                error: Box::new(error),
            })?
        }
        model => tandem_fmi::load_with(model, Use::RealTime, host.as_ref(), prepare, &fmu_setup(&config))
            .map_err(model_error)?,
    };
    let model = loaded.model;
    let layout = model.layout();
    let inputs = input_signals(&config, layout.inputs.as_slice())?;
    let record = match &config.record {
        None => None,
        Some(r) => Some(BoundRecording {
            file: Some(r.file.clone()),
            signals: match &r.signals {
                None => (0..layout.outputs.len()).collect(),
                Some(names) => names
                    .iter()
                    .map(|name| port(&config, "output", &layout.outputs, name))
                    .collect::<Result<_, _>>()?,
            },
            decimation: u64::from(r.decimation),
            frame_source: r.frame_source,
        }),
    };
    let frame = config.settings.frame;
    let buses: Vec<BoundBus> = config
        .buses
        .iter()
        .map(|bus| {
            let map = bus_map(&config, bus, model.as_ref(), frame)?;
            Ok(BoundBus {
                name: bus.name.clone(),
                transport: bus.transport.clone(),
                diagnostics: (bus.diagnostics.as_ref())
                    .map(|d| diag::bind(&config, &bus.name, &bus.transport, d, layout))
                    .transpose()?,
                faults: FaultPlan::of(&config, bus, &map, frame)?,
                map,
            })
        })
        .collect::<Result<_, BindError>>()?;
    let serial: Vec<BoundSerial> = config
        .serial
        .iter()
        .map(|device| serial_map(&config, device, model.as_ref()))
        .collect::<Result<_, ConfigError>>()?;
    let mut extrapolation = vec![config.inputs.extrapolation; layout.inputs.len()];
    for (bus, bound) in config.buses.iter().zip(&buses) {
        for (rx, message) in bus.receive.iter().zip(&bound.map.rx) {
            for &(_, input) in &message.inputs {
                extrapolation[input] = rx.extrapolation;
            }
        }
    }
    for (device, bound) in config.serial.iter().zip(&serial) {
        for &(_, input) in &bound.map.receive {
            extrapolation[input] = device.extrapolation;
        }
    }
    Ok(Plan {
        extrapolation,
        settings: config.settings,
        virtual_costs: config.virtual_costs,
        bus_log: config.bus_log,
        name: loaded.name,
        evaluation: loaded.evaluation,
        model,
        inputs,
        record,
        buses,
        serial,
        xcp: config.xcp,
    })
}

/// An FMU model's start values (`fmu.parameters`) and outputs: its own,
/// and the variables `record.signals` names.
fn fmu_setup(config: &RunConfig) -> FmuSetup {
    let mut parameters = Parameters::new();
    for (name, value) in &config.fmu_parameters {
        let value = match &value.value {
            StartValue::Number(v) => Value::Real(*v),
            StartValue::Boolean(v) => Value::Boolean(*v),
            StartValue::Text(v) => Value::Text(v.clone()),
        };
        parameters.set(name, value);
    }
    let names = config.record.iter().flat_map(|r| r.signals.iter().flatten());
    let recorded = Recorded::outputs_and(names.map(|n| n.value.as_str()));
    FmuSetup { parameters, recorded }
}

/// The place in the configuration of what an FMU refused of its setup: a
/// start value's key, or a recorded signal's.
fn fmu_setup_place(config: &RunConfig, error: &ModelLoadError) -> Option<ConfigError> {
    let ModelLoadError::Fmu { error: fmu, .. } = error else {
        return None;
    };
    let message = || format!("{}: {fmu}", config.model.value);
    if let Some(name) = fmu.start_value_name() {
        let (_, value) = config.fmu_parameters.iter().find(|(n, _)| n == name)?;
        return Some(config.error_at(value, message()));
    }
    let name = fmu.signal_name()?;
    let signals = config.record.as_ref()?.signals.as_ref()?;
    let signal = signals.iter().find(|s| s.value == name)?;
    Some(config.error_at(signal, message()))
}

/// The profile's signals overridden by the configuration's points, as
/// input indices.
fn input_signals(config: &RunConfig, inputs: &[Variable]) -> Result<Signals, ConfigError> {
    let mut signals: Signals = Vec::new();
    if let Some(name) = &config.inputs.profile {
        for (input, points) in plants::profile(&name.value).unwrap_or_default() {
            let i = inputs.iter().position(|v| v.name == *input).ok_or_else(|| {
                config.error_at(
                    name,
                    format!(
                        "profile {} drives input \"{input}\", which the model does not have; its inputs: {}",
                        name.value,
                        list(inputs.iter().map(|v| v.name.as_str()))
                    ),
                )
            })?;
            signals.push((i, points.to_vec()));
        }
    }
    for (name, points) in &config.inputs.points {
        let i = port(config, "input", inputs, name)?;
        signals.retain(|(j, _)| *j != i);
        signals.push((i, points.clone()));
    }
    Ok(signals)
}

/// Compiles `bus` against its DBC and `model`, for frames of `frame` s.
fn bus_map(config: &RunConfig, bus: &BusConfig, model: &dyn Model, frame: f64) -> Result<BusMap, BindError> {
    let dbc = Dbc::load(&bus.dbc.value).map_err(|error| BindError::Dbc {
        place: Box::new(config.error_at(&bus.dbc, "fix the DBC or point to another".into())),
        error: Box::new(error),
    })?;
    let layout = model.layout();
    let message = |name: &Located<String>| -> Result<Message, ConfigError> {
        let m = dbc.message(&name.value).cloned().ok_or_else(|| {
            config.error_at(
                name,
                format!(
                    "{} has no message \"{}\"; its messages: {}",
                    bus.dbc.value.display(),
                    name.value,
                    list(dbc.messages().iter().map(|m| m.name.as_str()))
                ),
            )
        })?;
        if m.len > CLASSIC_MAX_LEN && !bus.transport.carries_fd() {
            return Err(config.error_at(
                name,
                format!(
                    "message {} is {} bytes long, a CAN FD frame, but bus {} is opened for classic CAN only; set \
                     fd = true on the bus",
                    m.name, m.len, bus.name
                ),
            ));
        }
        Ok(m)
    };
    let signal = |m: &Message, name: &Located<String>| signal_index(config, m, name);
    let mut map = BusMap::default();
    for rx in &bus.receive {
        let m = message(&rx.message)?;
        let inputs = rx
            .signals
            .iter()
            .map(|(s, input)| Ok((signal(&m, s)?, port(config, "input", &layout.inputs, input)?)))
            .collect::<Result<_, ConfigError>>()?;
        let protection = rx
            .e2e
            .as_ref()
            .map(|e| protection::resolve(config, e, &m))
            .transpose()?;
        let status = match rx.e2e.as_ref().and_then(|e| e.status.as_ref()) {
            Some(name) => Some(port(config, "input", &layout.inputs, name)?),
            None => None,
        };
        map.rx.push(RxMessage {
            message: m,
            inputs,
            timeout: rx.timeout,
            protection,
            status,
        });
    }
    for tx in &bus.transmit {
        let m = message(&tx.message)?;
        let mut fields = Vec::with_capacity(tx.signals.len());
        for (s, output) in &tx.signals {
            let index = signal(&m, s)?;
            if m.signals[index].multiplex == Multiplex::Multiplexor {
                return Err(config
                    .error_at(
                        s,
                        format!(
                            "{} is the multiplexor of {}; Tandem sets it from the multiplexed signals mapped, so map \
                             those instead",
                            s.value, m.name
                        ),
                    )
                    .into());
            }
            fields.push((index, port(config, "output", &layout.outputs, output)?));
        }
        let (cycle, place) = match (&tx.cycle, m.cycle_time) {
            (Some(c), _) => (c.value, c.clone().map(|_| ())),
            (None, Some(d)) => (d.as_secs_f64(), tx.message.clone().map(|_| ())),
            (None, None) => {
                return Err(config
                    .error_at(
                        &tx.message,
                        format!(
                            "message {} is not periodic in {} (no GenMsgCycleTime, or 0); give its period here, \
                             e.g. cycle = \"10ms\", or a GenMsgCycleTime in the DBC",
                            m.name,
                            bus.dbc.value.display()
                        ),
                    )
                    .into())
            }
        };
        let frames = cycle / frame;
        if frames < 1.0 - 1e-9 || (frames - frames.round()).abs() > 1e-6 {
            return Err(config
                .error_at(
                    &place,
                    format!(
                        "message {}: its period {cycle} s is not a whole number of frames of {frame} s; give a cycle \
                         that is",
                        m.name
                    ),
                )
                .into());
        }
        let protection = tx
            .e2e
            .as_ref()
            .map(|e| protection::resolve(config, e, &m))
            .transpose()?;
        map.tx
            .push(TxMessage::new(m, frames.round() as u64, fields, protection));
    }
    Ok(map)
}

/// Binds a serial device's fields to `model`'s ports.
fn serial_map(config: &RunConfig, device: &SerialConfig, model: &dyn Model) -> Result<BoundSerial, ConfigError> {
    let layout = model.layout();
    let receive = device
        .receive
        .iter()
        .map(|(field, input)| Ok((field.clone(), port(config, "input", &layout.inputs, input)?)))
        .collect::<Result<_, ConfigError>>()?;
    let mut transmit = Vec::with_capacity(device.transmit.len());
    for (field, output) in &device.transmit {
        let mut line = String::new();
        if let Err(e) = tandem_bus::serial_lines::format_line(&mut line, None, [(field.as_str(), 0.0)]) {
            return Err(config.error_at(output, format!("{e}; rename the field")));
        }
        transmit.push((field.clone(), port(config, "output", &layout.outputs, output)?));
    }
    Ok(BoundSerial {
        name: device.name.clone(),
        device: device.device.clone(),
        baud: device.baud,
        map: SerialMap {
            receive,
            timeout: device.timeout,
            transmit,
            period: (device.cycle / config.settings.frame).round().max(1.0) as u64,
        },
    })
}
