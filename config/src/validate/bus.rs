//! The `[[bus]]` and `[[serial]]` tables: transports, DBC files, the
//! signal and field mappings (names kept with their place), timeouts.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;

use tandem_runtime::tandem::Extrapolation;
use toml::Spanned;

use super::checks::given;
use crate::bounds::{MAX_DURATION, MAX_PERIOD_FRAMES};
use crate::bus::{
    BusConfig, NamePairs, ReceiveConfig, SerialConfig, Timeout, TimeoutPolicy, TransmitConfig, TransportConfig,
};
use crate::duration::Duration;
use crate::error::{ConfigError, Located};
use crate::raw::{RawBus, RawReceive, RawSerial, RawTransmit};
use crate::text::ConfigText;

// Validation.

impl ConfigText<'_> {
    /// Checks the `[[bus]]` tables.
    pub(super) fn buses(&self, raw: &[RawBus], frame: f64) -> Result<Vec<BusConfig>, ConfigError> {
        let mut buses: Vec<BusConfig> = Vec::with_capacity(raw.len());
        for (i, bus) in raw.iter().enumerate() {
            let at = format!("bus[{i}]");
            let name = bus.name.as_ref().map_or("can0".to_string(), |n| n.get_ref().clone());
            let span = bus.name.as_ref().map_or(bus.transport.span(), |n| n.span());
            self.unique_name(buses.iter().map(|b| b.name.as_str()), &name, span, &at, "buses")?;
            let dbc = Located {
                value: self.dir().join(bus.dbc.get_ref()),
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
            let faults = bus
                .fault
                .iter()
                .enumerate()
                .map(|(j, f)| self.fault(f, &format!("{at}.fault[{j}]"), frame))
                .collect::<Result<_, _>>()?;
            let transport = self.transport(bus, &at, &name)?;
            buses.push(BusConfig {
                name,
                transport,
                dbc,
                receive,
                transmit,
                diagnostics: (bus.diagnostics.as_ref())
                    .map(|d| self.diagnostics(d, &format!("{at}.diagnostics")))
                    .transpose()?,
                faults,
            });
        }
        Ok(buses)
    }

    fn transport(&self, bus: &RawBus, at: &str, name: &str) -> Result<TransportConfig, ConfigError> {
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
            "virtual" => Ok(TransportConfig::Virtual {
                channel: bus
                    .channel
                    .as_ref()
                    .map_or_else(|| name.to_string(), |c| c.get_ref().clone()),
            }),
            "dcp" => Ok(TransportConfig::Dcp),
            other => Err(self.error(
                Some(bus.transport.span()),
                &format!("{at}.transport"),
                format!("unknown transport \"{other}\"; use one of: udp, socketcan, slcan, virtual, dcp"),
            )),
        }
    }

    fn pairs(
        &self,
        signals: &Spanned<BTreeMap<Spanned<String>, Spanned<String>>>,
        at: &str,
        port: &str,
    ) -> Result<NamePairs, ConfigError> {
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
        Ok(ReceiveConfig {
            message: self.located(&raw.message, format!("{at}.message")),
            timeout: self.timeout(&raw.timeout, &raw.on_timeout, at)?,
            extrapolation: self.named(&raw.extrapolation, &format!("{at}.extrapolation"), Extrapolation::Hold)?,
            // A message whose E2E status alone drives an input needs no signal.
            signals: if raw.signals.get_ref().is_empty()
                && raw.e2e.as_ref().is_some_and(|e| e.get_ref().status.is_some())
            {
                Vec::new()
            } else {
                self.pairs(&raw.signals, at, "input")?
            },
            e2e: raw.e2e.as_ref().map(|e| self.e2e(e, at, true)).transpose()?,
        })
    }

    /// A receive timeout and its policy (`on_timeout` needs `timeout`).
    fn timeout(
        &self,
        timeout: &Option<Spanned<Duration>>,
        on_timeout: &Option<Spanned<String>>,
        at: &str,
    ) -> Result<Option<Timeout>, ConfigError> {
        let policy = match on_timeout {
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
        match (timeout, on_timeout) {
            (Some(_), _) => Ok(Some(Timeout {
                after: self.within(
                    &given(timeout, Duration::default()),
                    &format!("{at}.timeout"),
                    (0.0, MAX_DURATION),
                    "50ms",
                )?,
                policy,
            })),
            (None, Some(p)) => Err(self.error(
                Some(p.span()),
                &format!("{at}.on_timeout"),
                "on_timeout needs a timeout; add e.g. timeout = \"50ms\"".into(),
            )),
            (None, None) => Ok(None),
        }
    }

    fn transmit(&self, raw: &RawTransmit, at: &str) -> Result<TransmitConfig, ConfigError> {
        let key = format!("{at}.cycle");
        Ok(TransmitConfig {
            message: self.located(&raw.message, format!("{at}.message")),
            cycle: match &raw.cycle {
                Some(c) => Some(Located {
                    value: self.within(
                        &given(&raw.cycle, Duration::default()),
                        &key,
                        (0.0, MAX_DURATION),
                        "10ms",
                    )?,
                    key,
                    location: self.location(c.span().start),
                }),
                None => None,
            },
            signals: self.pairs(&raw.signals, at, "output")?,
            e2e: raw.e2e.as_ref().map(|e| self.e2e(e, at, false)).transpose()?,
        })
    }

    /// Checks the `[[serial]]` tables, for frames of `frame` seconds.
    pub(super) fn serial(&self, raw: &[RawSerial], frame: f64) -> Result<Vec<SerialConfig>, ConfigError> {
        let mut devices: Vec<SerialConfig> = Vec::with_capacity(raw.len());
        for (i, device) in raw.iter().enumerate() {
            let at = format!("serial[{i}]");
            let name = device
                .name
                .as_ref()
                .map_or_else(|| format!("serial{i}"), |n| n.get_ref().clone());
            let span = device.name.as_ref().map_or(device.device.span(), |n| n.span());
            self.unique_name(
                devices.iter().map(|d| d.name.as_str()),
                &name,
                span,
                &at,
                "serial devices",
            )?;
            let baud = given(&device.baud, 115_200);
            self.integer(&baud, &format!("{at}.baud"), 1, 4_000_000, "write e.g. 115200")?;
            let fields = |map: &Option<Spanned<BTreeMap<Spanned<String>, Spanned<String>>>>, side: &str| {
                map.iter()
                    .flat_map(|m| m.get_ref().iter())
                    .map(|(field, port)| {
                        let key = format!("{at}.{side}.{}", field.get_ref());
                        (field.get_ref().clone(), self.located(port, key))
                    })
                    .collect::<Vec<_>>()
            };
            let receive = fields(&device.receive, "receive");
            let transmit = fields(&device.transmit, "transmit");
            if receive.is_empty() && transmit.is_empty() {
                return Err(self.error(
                    Some(device.device.span()),
                    &at,
                    "no fields mapped; add e.g. receive = { spd = \"wheel_speed\" } (line field = model input) or \
                     transmit = { valve = \"valve_command\" } (line field = model output)"
                        .into(),
                ));
            }
            let cycle = match &device.cycle {
                None => frame,
                Some(c) => {
                    let c = given(&Some(c.clone()), Duration::default());
                    self.frames(&c, &format!("{at}.cycle"), frame, MAX_PERIOD_FRAMES)?
                }
            };
            devices.push(SerialConfig {
                name,
                device: device.device.get_ref().clone(),
                baud: baud.value as u32,
                receive,
                timeout: self.timeout(&device.timeout, &device.on_timeout, &at)?,
                extrapolation: self.named(
                    &device.extrapolation,
                    &format!("{at}.extrapolation"),
                    Extrapolation::Hold,
                )?,
                transmit,
                cycle,
            });
        }
        Ok(devices)
    }
}
