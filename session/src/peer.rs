//! Another node on a session's bus, for scripts and tests that play the
//! ECU or watch the traffic: frames and DBC messages sent and received
//! through a transport of its own on the same bus.

use std::time::Duration;

use tandem_can::{BusError, CanFrame, Duplex, Received};
use tandem_config::TransportConfig;
use tandem_dbc::Dbc;
use tandem_uds::isotp;

use crate::bus::{open_transport, TransportError};

/// A message a [`Peer`] cannot send or read.
#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    /// The bus has no DBC message of that name.
    #[error("bus {bus}: no message \"{message}\" in its DBC; its messages: {known}")]
    UnknownMessage {
        /// The bus.
        bus: String,
        /// The name asked for.
        message: String,
        /// The DBC's messages.
        known: String,
    },
    /// The message has no signal of that name.
    #[error("bus {bus}: message {message} has no signal \"{signal}\"; its signals: {known}")]
    UnknownSignal {
        /// The bus.
        bus: String,
        /// The message.
        message: String,
        /// The name asked for.
        signal: String,
        /// The message's signals.
        known: String,
    },
    /// The frame cannot be made (identifier or length out of range).
    #[error("bus {bus}: {cause}")]
    Frame {
        /// The bus.
        bus: String,
        /// What is wrong.
        cause: tandem_can::FrameError,
    },
    /// An ISO-TP node cannot be opened (its settings, or the transport).
    #[error("bus {bus}: ISO-TP: {cause}")]
    IsoTp {
        /// The bus.
        bus: String,
        /// What is wrong.
        cause: String,
    },
    /// The transport failed.
    #[error("bus {bus}: {cause}")]
    Bus {
        /// The bus.
        bus: String,
        /// What the transport said.
        cause: BusError,
    },
}

/// A node of its own on a session's bus.
pub struct Peer {
    bus: String,
    transport: TransportConfig,
    duplex: Duplex,
    dbc: Dbc,
}

impl Peer {
    /// Joins bus `bus` through `transport` (a transport of its own: for
    /// UDP and in-process buses another node beside the session's), coding
    /// messages with `dbc`.
    pub fn open(bus: &str, transport: &TransportConfig, dbc: Dbc) -> Result<Peer, TransportError> {
        Ok(Peer {
            bus: bus.to_string(),
            transport: transport.clone(),
            duplex: open_transport(transport)?,
            dbc,
        })
    }

    /// Another node on the same bus speaking ISO-TP with `config`: whole
    /// messages sent and received (a tester's side of UDS, for one).
    pub fn isotp(&self, config: isotp::Config) -> Result<isotp::Link, PeerError> {
        let failed = |cause: String| PeerError::IsoTp {
            bus: self.bus.clone(),
            cause,
        };
        let duplex = open_transport(&self.transport).map_err(|e| failed(e.to_string()))?;
        isotp::Link::new(config, duplex).map_err(|e| failed(e.to_string()))
    }

    /// The bus's DBC.
    pub fn dbc(&self) -> &Dbc {
        &self.dbc
    }

    fn message(&self, name: &str) -> Result<&tandem_dbc::Message, PeerError> {
        self.dbc.message(name).ok_or_else(|| PeerError::UnknownMessage {
            bus: self.bus.clone(),
            message: name.to_string(),
            known: names(self.dbc.messages().iter().map(|m| m.name.as_str())),
        })
    }

    /// Sends `frame`.
    pub fn send_frame(&mut self, frame: &CanFrame) -> Result<(), PeerError> {
        self.duplex.tx.send(frame).map_err(|cause| PeerError::Bus {
            bus: self.bus.clone(),
            cause,
        })
    }

    /// Sends DBC message `message` with `signals` (physical values; the
    /// signals not given are sent as raw 0). Returns the frame sent.
    pub fn send_message(&mut self, message: &str, signals: &[(String, f64)]) -> Result<CanFrame, PeerError> {
        let m = self.message(message)?;
        let mut payload = vec![0u8; m.len];
        for (name, value) in signals {
            let signal = m.signal(name).ok_or_else(|| PeerError::UnknownSignal {
                bus: self.bus.clone(),
                message: m.name.clone(),
                signal: name.clone(),
                known: names(m.signals.iter().map(|s| s.name.as_str())),
            })?;
            signal.encode(*value, &mut payload);
        }
        let frame = if m.len > 8 {
            CanFrame::fd(m.id, &payload, true, false)
        } else {
            CanFrame::data(m.id, &payload)
        }
        .map_err(|cause| PeerError::Frame {
            bus: self.bus.clone(),
            cause,
        })?;
        self.send_frame(&frame)?;
        Ok(frame)
    }

    /// The next frame the other nodes sent, waiting up to `timeout`.
    pub fn receive(&mut self, timeout: Duration) -> Result<Option<Received>, PeerError> {
        self.duplex.rx.recv(timeout).map_err(|cause| PeerError::Bus {
            bus: self.bus.clone(),
            cause,
        })
    }

    /// The DBC message `frame` is, with the signals it carries (physical
    /// values), when the DBC knows its identifier.
    pub fn decode(&self, frame: &CanFrame) -> Option<(&str, Vec<(String, f64)>)> {
        let m = self.dbc.message_by_id(frame.id())?;
        let payload = frame.payload();
        let signals = (m.signals.iter())
            .filter(|s| m.carries(s, payload))
            .map(|s| (s.name.clone(), s.decode(payload)))
            .collect();
        Some((m.name.as_str(), signals))
    }
}

/// `a, b, c`.
fn names<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.collect::<Vec<_>>().join(", ")
}
