//! A run's CAN buses: each `[[bus]]` of the configuration compiled against
//! its DBC and the model (every name checked, with its place in the file),
//! its transport opened, and its I/O threads started.

use std::path::Path;
use std::sync::Arc;
use std::thread::JoinHandle;

use anyhow::{bail, Context};
use crossbeam_channel::Sender;
use tandem_config::{BusConfig, Located, TransportConfig};
use tandem_io::bus_metrics::BusMetrics;
use tandem_io::bus_threads::BusLink;
use tandem_io::dbc::{Dbc, Message, Multiplex};
use tandem_io::log::LogRecord;
use tandem_io::mapping::{BusMap, RxMessage, TxMessage};
use tandem_io::Duplex;
use tandem_models::Model;

/// One compiled bus.
pub struct Bus {
    /// Its configuration.
    pub config: BusConfig,
    /// Its link for the I/O threads.
    pub link: BusLink,
}

/// Compiles every bus of the configuration at `path` against `model`, for
/// frames of `frame` seconds; `log` receives every frame's record.
pub fn compile(
    path: &Path,
    configs: &[BusConfig],
    model: &dyn Model,
    frame: f64,
    log: Option<&Sender<LogRecord>>,
) -> anyhow::Result<Vec<Bus>> {
    configs
        .iter()
        .map(|config| {
            let map = compile_one(path, config, model, frame)?;
            Ok(Bus {
                config: config.clone(),
                link: BusLink {
                    name: config.name.as_str().into(),
                    map: Arc::new(map),
                    metrics: Arc::new(BusMetrics::default()),
                    log: log.cloned(),
                },
            })
        })
        .collect()
}

fn list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

fn compile_one(path: &Path, config: &BusConfig, model: &dyn Model, frame: f64) -> anyhow::Result<BusMap> {
    let dbc = Dbc::load(&config.dbc.value).map_err(|e| {
        anyhow::anyhow!(
            "{e}\n  (the DBC of {}: {})",
            config.dbc.key,
            config.dbc.error(path, "fix the DBC or point to another".into())
        )
    })?;
    let layout = model.layout();
    let message = |name: &Located<String>| -> anyhow::Result<Message> {
        dbc.message(&name.value).cloned().ok_or_else(|| {
            name.error(
                path,
                format!(
                    "{} has no message \"{}\"; its messages: {}",
                    config.dbc.value.display(),
                    name.value,
                    list(dbc.messages().iter().map(|m| m.name.as_str()))
                ),
            )
            .into()
        })
    };
    let signal = |m: &Message, name: &Located<String>| -> anyhow::Result<usize> {
        m.signals.iter().position(|s| s.name == name.value).ok_or_else(|| {
            name.error(
                path,
                format!(
                    "message {} has no signal \"{}\"; its signals: {}",
                    m.name,
                    name.value,
                    list(m.signals.iter().map(|s| s.name.as_str()))
                ),
            )
            .into()
        })
    };
    let port = |kind: &str, ports: &[tandem_models::Variable], name: &Located<String>| -> anyhow::Result<usize> {
        ports.iter().position(|v| v.name == name.value).ok_or_else(|| {
            name.error(
                path,
                format!(
                    "the model has no {kind} \"{}\"; its {kind}s: {}",
                    name.value,
                    list(ports.iter().map(|v| v.name.as_str()))
                ),
            )
            .into()
        })
    };
    let mut map = BusMap::default();
    for rx in &config.receive {
        let m = message(&rx.message)?;
        let inputs = rx
            .signals
            .iter()
            .map(|(s, input)| Ok((signal(&m, s)?, port("input", &layout.inputs, input)?)))
            .collect::<anyhow::Result<_>>()?;
        map.rx.push(RxMessage {
            message: m,
            inputs,
            timeout: rx.timeout,
            policy: rx.on_timeout,
        });
    }
    for tx in &config.transmit {
        let m = message(&tx.message)?;
        let mut fields = Vec::with_capacity(tx.signals.len());
        for (s, output) in &tx.signals {
            let index = signal(&m, s)?;
            if m.signals[index].multiplex == Multiplex::Multiplexor {
                return Err(s
                    .error(
                        path,
                        format!(
                            "{} is the multiplexor of {}; Tandem sets it from the multiplexed signals mapped, so map \
                             those instead",
                            s.value, m.name
                        ),
                    )
                    .into());
            }
            fields.push((index, port("output", &layout.outputs, output)?));
        }
        let (cycle, place) = match (&tx.cycle, m.cycle_time) {
            (Some(c), _) => (c.value, c.error(path, String::new())),
            (None, Some(d)) => (d.as_secs_f64(), tx.message.error(path, String::new())),
            (None, None) => bail!(tx.message.error(
                path,
                format!(
                    "message {} has no GenMsgCycleTime in the DBC; give its period, e.g. cycle = \"10ms\"",
                    m.name
                )
            )),
        };
        let frames = cycle / frame;
        if frames < 1.0 - 1e-9 || (frames - frames.round()).abs() > 1e-6 {
            let mut e = place;
            e.message = format!(
                "message {}: its period {cycle} s is not a whole number of frames of {frame} s; give a cycle that is",
                m.name
            );
            bail!(e);
        }
        map.tx.push(TxMessage::new(m, frames.round() as u64, fields));
    }
    Ok(map)
}

/// Opens a bus's transport.
pub fn open(config: &BusConfig) -> anyhow::Result<Duplex> {
    let name = &config.name;
    Ok(match &config.transport {
        TransportConfig::Udp { group, port } => tandem_io::udp::open(&tandem_io::udp::UdpOptions {
            group: *group,
            port: *port,
            ttl: 1,
        })
        .with_context(|| format!("bus {name}: cannot join UDP multicast group {group}:{port}"))?,
        TransportConfig::SocketCan { interface, fd } => tandem_io::socketcan_bus::open(
            interface,
            &tandem_io::socketcan_bus::SocketCanOptions {
                fd: *fd,
                ..Default::default()
            },
        )
        .with_context(|| format!("bus {name}"))?,
        TransportConfig::Slcan { device, bitrate } => tandem_io::slcan::open(
            device,
            &tandem_io::slcan::SlcanOptions {
                bitrate: *bitrate,
                ..Default::default()
            },
        )
        .with_context(|| format!("bus {name}"))?,
    })
}

/// The log writer: a thread that writes every record it receives to
/// `path` (candump, or ASC for `.asc`) until every sender is dropped.
pub fn spawn_log_writer(
    path: &Path,
    start_ns: i64,
) -> anyhow::Result<(Sender<LogRecord>, JoinHandle<std::io::Result<u64>>)> {
    let mut writer = tandem_io::log::create(path, start_ns)
        .with_context(|| format!("cannot create the bus log {}", path.display()))?;
    let (tx, rx) = crossbeam_channel::bounded::<LogRecord>(1 << 16);
    let handle = std::thread::Builder::new().name("tandem-log".into()).spawn(move || {
        let mut written = 0;
        loop {
            match rx.recv_timeout(std::time::Duration::from_millis(100)) {
                Ok(record) => {
                    writer.write(&record)?;
                    written += 1;
                }
                // Flush when idle, so that a killed run keeps its log.
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => writer.flush()?,
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
            }
        }
        writer.finish()?;
        Ok(written)
    })?;
    Ok((tx, handle))
}
