//! The `[[bus]]` tables of a run configuration: which CAN transport, which
//! DBC, which received signals drive which model inputs, which model
//! outputs are sent in which messages, and the `[ecu]` started beside a run.
//!
//! Names of messages, signals and ports are kept with their place in the
//! file, so that a name the DBC or the model does not know is reported at
//! its line and column once both are loaded.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use toml::Spanned;

use tandem_io::mapping::TimeoutPolicy;

use crate::run::{ConfigError, Location, Source};
use crate::Duration;

/// A name as written in the file, with its place.
#[derive(Clone, Debug, PartialEq)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    /// The dotted key it was given under, e.g. `bus[0].receive[1].message`.
    pub key: String,
    /// Where.
    pub location: Location,
}

impl<T> Located<T> {
    /// An error about this value: `FILE:LINE:COL: KEY: MESSAGE`.
    pub fn error(&self, file: &std::path::Path, message: String) -> ConfigError {
        ConfigError {
            file: file.to_path_buf(),
            location: Some(self.location),
            key: self.key.clone(),
            message,
        }
    }
}

/// How a bus is reached.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportConfig {
    /// CAN over UDP multicast (python-can's `udp_multicast`).
    Udp {
        /// Multicast group.
        group: Ipv4Addr,
        /// Port.
        port: u16,
    },
    /// A SocketCAN interface such as `can0` or `vcan0`.
    SocketCan {
        /// The interface.
        interface: String,
        /// Open it for CAN FD.
        fd: bool,
    },
    /// An SLCAN adapter on a serial port.
    Slcan {
        /// The serial device, e.g. `/dev/ttyACM0`.
        device: String,
        /// The CAN bit rate (bit/s).
        bitrate: u32,
    },
}

/// A received message and the model inputs its signals drive.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceiveConfig {
    /// The DBC message name.
    pub message: Located<String>,
    /// Receive timeout (s), if any.
    pub timeout: Option<f64>,
    /// What happens on a timeout.
    pub on_timeout: TimeoutPolicy,
    /// (DBC signal, model input) pairs.
    pub signals: Vec<(Located<String>, Located<String>)>,
}

/// A transmitted message and the model outputs its signals carry.
#[derive(Clone, Debug, PartialEq)]
pub struct TransmitConfig {
    /// The DBC message name.
    pub message: Located<String>,
    /// Its period (s); `None`: the DBC's GenMsgCycleTime.
    pub cycle: Option<Located<f64>>,
    /// (DBC signal, model output) pairs.
    pub signals: Vec<(Located<String>, Located<String>)>,
}

/// One CAN bus of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct BusConfig {
    /// Its name in logs and reports (`can0` by default).
    pub name: String,
    /// How it is reached.
    pub transport: TransportConfig,
    /// The DBC file, resolved against the configuration's directory.
    pub dbc: Located<PathBuf>,
    /// Received messages.
    pub receive: Vec<ReceiveConfig>,
    /// Transmitted messages.
    pub transmit: Vec<TransmitConfig>,
}

// ---------------------------------------------------------------------------
// The file as written. The doc comments are the schema's descriptions.

/// A CAN bus: its transport, its DBC, and how its signals map to the model's inputs and outputs.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Bus")]
pub(crate) struct RawBus {
    /// The bus's name in logs and reports. Default "can0".
    #[serde(default)]
    #[schemars(with = "String")]
    name: Option<Spanned<String>>,
    /// How the bus is reached: "udp" (CAN over UDP multicast, python-can's udp_multicast), "socketcan" (a Linux
    /// CAN interface) or "slcan" (a serial SLCAN adapter).
    #[schemars(with = "String", extend("enum" = ["udp", "socketcan", "slcan"]))]
    transport: Spanned<String>,
    /// udp: the multicast group. Default "239.74.163.2" (python-can's).
    #[serde(default)]
    #[schemars(with = "String")]
    group: Option<Spanned<String>>,
    /// udp: the port. Default 43113 (python-can's).
    #[serde(default)]
    #[schemars(with = "u16")]
    port: Option<Spanned<i64>>,
    /// socketcan: the interface, e.g. "can0" or "vcan0".
    #[serde(default)]
    #[schemars(with = "String")]
    interface: Option<Spanned<String>>,
    /// socketcan: open the interface for CAN FD. Default false.
    #[serde(default)]
    fd: Option<bool>,
    /// slcan: the serial device, e.g. "/dev/ttyACM0".
    #[serde(default)]
    #[schemars(with = "String")]
    device: Option<Spanned<String>>,
    /// slcan: the CAN bit rate in bit/s, one of 10000, 20000, 50000, 100000, 125000, 250000, 500000, 800000,
    /// 1000000. Default 500000.
    #[serde(default)]
    #[schemars(with = "u32")]
    bitrate: Option<Spanned<i64>>,
    /// The DBC file describing the messages, relative to this file's directory.
    #[schemars(with = "String")]
    dbc: Spanned<String>,
    /// Messages received: their signals drive model inputs.
    #[serde(default)]
    receive: Vec<RawReceive>,
    /// Messages sent: their signals carry model outputs.
    #[serde(default)]
    transmit: Vec<RawTransmit>,
}

/// A received message.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Receive")]
struct RawReceive {
    /// The message's name in the DBC.
    #[schemars(with = "String")]
    message: Spanned<String>,
    /// DBC signal name = model input name.
    #[schemars(with = "BTreeMap<String, String>")]
    signals: Spanned<BTreeMap<Spanned<String>, Spanned<String>>>,
    /// With no frame of this message for this long, `on_timeout` applies. Default: no timeout.
    #[serde(default)]
    #[schemars(with = "Duration")]
    timeout: Option<Spanned<Duration>>,
    /// On a timeout: "hold" the last values, return the inputs to the model's "default" values, or "fault": stop
    /// the run. Default "hold".
    #[serde(default)]
    #[schemars(with = "String", extend("enum" = ["hold", "default", "fault"]))]
    on_timeout: Option<Spanned<String>>,
}

/// A sent message.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Transmit")]
struct RawTransmit {
    /// The message's name in the DBC.
    #[schemars(with = "String")]
    message: Spanned<String>,
    /// DBC signal name = model output name.
    #[schemars(with = "BTreeMap<String, String>")]
    signals: Spanned<BTreeMap<Spanned<String>, Spanned<String>>>,
    /// Its period, a whole number of frames. Default: the DBC's GenMsgCycleTime.
    #[serde(default)]
    #[schemars(with = "Duration")]
    cycle: Option<Spanned<Duration>>,
}

// ---------------------------------------------------------------------------
// Validation.

impl Source<'_> {
    fn located<T: Clone>(&self, value: &Spanned<T>, key: String) -> Located<T> {
        Located {
            value: value.get_ref().clone(),
            key,
            location: self.location(value.span().start),
        }
    }

    /// Checks the `[[bus]]` tables.
    pub(crate) fn buses(&self, raw: &[RawBus]) -> Result<Vec<BusConfig>, ConfigError> {
        let mut buses: Vec<BusConfig> = Vec::with_capacity(raw.len());
        for (i, bus) in raw.iter().enumerate() {
            let at = format!("bus[{i}]");
            let name = bus.name.as_ref().map_or("can0".to_string(), |n| n.get_ref().clone());
            if buses.iter().any(|b| b.name == name) {
                let span = bus.name.as_ref().map_or(bus.transport.span(), |n| n.span());
                return Err(self.error(
                    Some(span),
                    &format!("{at}.name"),
                    format!("two buses are named \"{name}\"; give each bus its own name"),
                ));
            }
            let dir = self.origin.parent().unwrap_or(std::path::Path::new(""));
            let dbc = Located {
                value: dir.join(bus.dbc.get_ref()),
                key: format!("{at}.dbc"),
                location: self.location(bus.dbc.span().start),
            };
            let receive = bus
                .receive
                .iter()
                .enumerate()
                .map(|(j, r)| self.receive(r, &format!("{at}.receive[{j}]")))
                .collect::<Result<_, _>>()?;
            let transmit = bus
                .transmit
                .iter()
                .enumerate()
                .map(|(j, t)| self.transmit(t, &format!("{at}.transmit[{j}]")))
                .collect::<Result<_, _>>()?;
            buses.push(BusConfig {
                name,
                transport: self.transport(bus, &at)?,
                dbc,
                receive,
                transmit,
            });
        }
        Ok(buses)
    }

    fn transport(&self, bus: &RawBus, at: &str) -> Result<TransportConfig, ConfigError> {
        let kind = bus.transport.get_ref().as_str();
        let required = |field: &Option<Spanned<String>>, key: &str, example: &str| {
            field.as_ref().map(|f| f.get_ref().clone()).ok_or_else(|| {
                self.error(
                    Some(bus.transport.span()),
                    &format!("{at}.{key}"),
                    format!("transport \"{kind}\" needs `{key}`; add e.g. {key} = \"{example}\""),
                )
            })
        };
        match kind {
            "udp" => {
                let group = match &bus.group {
                    None => Ipv4Addr::new(239, 74, 163, 2),
                    Some(g) => match g.get_ref().parse::<Ipv4Addr>() {
                        Ok(a) if a.is_multicast() => a,
                        _ => {
                            return Err(self.error(
                                Some(g.span()),
                                &format!("{at}.group"),
                                format!(
                                    "\"{}\" is not an IPv4 multicast group; use one in 224.0.0.0/4, e.g. \
                                     \"239.74.163.2\"",
                                    g.get_ref()
                                ),
                            ))
                        }
                    },
                };
                let port = match &bus.port {
                    None => 43113,
                    Some(p) => u16::try_from(*p.get_ref()).ok().filter(|&p| p > 0).ok_or_else(|| {
                        self.error(
                            Some(p.span()),
                            &format!("{at}.port"),
                            format!("port {} is not between 1 and 65535", p.get_ref()),
                        )
                    })?,
                };
                Ok(TransportConfig::Udp { group, port })
            }
            "socketcan" => Ok(TransportConfig::SocketCan {
                interface: required(&bus.interface, "interface", "vcan0")?,
                fd: bus.fd.unwrap_or(false),
            }),
            "slcan" => {
                const RATES: [i64; 9] = [
                    10_000, 20_000, 50_000, 100_000, 125_000, 250_000, 500_000, 800_000, 1_000_000,
                ];
                let bitrate = match &bus.bitrate {
                    None => 500_000,
                    Some(b) if RATES.contains(b.get_ref()) => *b.get_ref() as u32,
                    Some(b) => {
                        return Err(self.error(
                            Some(b.span()),
                            &format!("{at}.bitrate"),
                            format!(
                                "SLCAN adapters cannot run at {} bit/s; use one of {}",
                                b.get_ref(),
                                RATES.map(|r| r.to_string()).join(", ")
                            ),
                        ))
                    }
                };
                Ok(TransportConfig::Slcan {
                    device: required(&bus.device, "device", "/dev/ttyACM0")?,
                    bitrate,
                })
            }
            other => Err(self.error(
                Some(bus.transport.span()),
                &format!("{at}.transport"),
                format!("unknown transport \"{other}\"; use one of: udp, socketcan, slcan"),
            )),
        }
    }

    fn pairs(
        &self,
        signals: &Spanned<BTreeMap<Spanned<String>, Spanned<String>>>,
        at: &str,
        port: &str,
    ) -> Result<Vec<(Located<String>, Located<String>)>, ConfigError> {
        if signals.get_ref().is_empty() {
            return Err(self.error(
                Some(signals.span()),
                &format!("{at}.signals"),
                format!("no signals mapped; write e.g. signals = {{ VehicleSpeed = \"vehicle_speed\" }} (DBC signal = model {port})"),
            ));
        }
        Ok(signals
            .get_ref()
            .iter()
            .map(|(signal, port)| {
                let key = format!("{at}.signals.{}", signal.get_ref());
                (self.located(signal, key.clone()), self.located(port, key))
            })
            .collect())
    }

    fn receive(&self, raw: &RawReceive, at: &str) -> Result<ReceiveConfig, ConfigError> {
        let on_timeout = match &raw.on_timeout {
            None => TimeoutPolicy::Hold,
            Some(p) => *TimeoutPolicy::ALL
                .iter()
                .find(|q| q.name() == p.get_ref())
                .ok_or_else(|| {
                    self.error(
                        Some(p.span()),
                        &format!("{at}.on_timeout"),
                        format!(
                            "unknown timeout policy \"{}\"; use one of: hold, default, fault",
                            p.get_ref()
                        ),
                    )
                })?,
        };
        if raw.on_timeout.is_some() && raw.timeout.is_none() {
            let span = raw.on_timeout.as_ref().map(|p| p.span());
            return Err(self.error(
                span,
                &format!("{at}.on_timeout"),
                "on_timeout needs a timeout; add e.g. timeout = \"50ms\"".into(),
            ));
        }
        Ok(ReceiveConfig {
            message: self.located(&raw.message, format!("{at}.message")),
            timeout: raw.timeout.as_ref().map(|t| t.get_ref().seconds()),
            on_timeout,
            signals: self.pairs(&raw.signals, at, "input")?,
        })
    }

    fn transmit(&self, raw: &RawTransmit, at: &str) -> Result<TransmitConfig, ConfigError> {
        Ok(TransmitConfig {
            message: self.located(&raw.message, format!("{at}.message")),
            cycle: raw.cycle.as_ref().map(|c| Located {
                value: c.get_ref().seconds(),
                key: format!("{at}.cycle"),
                location: self.location(c.span().start),
            }),
            signals: self.pairs(&raw.signals, at, "output")?,
        })
    }
}
