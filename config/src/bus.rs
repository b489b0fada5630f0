//! The `[[bus]]` and `[[serial]]` tables of a run configuration: which CAN
//! transport, which DBC, which received signals drive which model inputs,
//! which model outputs are sent in which messages; and the serial devices
//! that exchange `name=value` lines.
//!
//! Names of messages, signals and ports are kept with their place in the
//! file, so that a name the DBC or the model does not know is reported at
//! its line and column once both are loaded.

use std::net::Ipv4Addr;
use std::path::PathBuf;

use tandem_runtime::tandem::Extrapolation;

use crate::e2e::E2eConfig;
use crate::error::Located;
use crate::fault::FaultConfig;

/// What a run does when a received message (or a serial device) stops
/// arriving.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeoutPolicy {
    /// Keep the last received values.
    Hold,
    /// Return the message's inputs to the model's default values.
    Default,
    /// Stop the run with an error naming the message.
    Fault,
}

impl TimeoutPolicy {
    /// Every policy.
    pub const ALL: [TimeoutPolicy; 3] = [TimeoutPolicy::Hold, TimeoutPolicy::Default, TimeoutPolicy::Fault];

    /// The name used in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            TimeoutPolicy::Hold => "hold",
            TimeoutPolicy::Default => "default",
            TimeoutPolicy::Fault => "fault",
        }
    }
}

/// Names mapped to names, each with its place: (DBC signal, model port).
pub type NamePairs = Vec<(Located<String>, Located<String>)>;

/// A receive timeout and what it does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timeout {
    /// How long without a frame (s).
    pub after: f64,
    /// What then.
    pub policy: TimeoutPolicy,
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
    /// A bus inside this process, shared by the runs naming its channel.
    Virtual {
        /// The channel.
        channel: String,
    },
    /// Frames carried across a DCP federation by the run's `[dcp]` slave:
    /// what this run sends leaves in its `<bus>.tx` output, what others
    /// send comes in through its `<bus>.rx` input.
    Dcp,
    /// An SLCAN adapter on a serial port.
    Slcan {
        /// The serial device, e.g. `/dev/ttyACM0`.
        device: String,
        /// The CAN bit rate (bit/s).
        bitrate: u32,
    },
}

impl TransportConfig {
    /// Whether the transport carries CAN FD frames (longer than 8 bytes).
    pub fn carries_fd(&self) -> bool {
        match self {
            TransportConfig::SocketCan { fd, .. } => *fd,
            TransportConfig::Udp { .. }
            | TransportConfig::Virtual { .. }
            | TransportConfig::Slcan { .. }
            | TransportConfig::Dcp => true,
        }
    }
}

/// A received message and the model inputs its signals drive.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceiveConfig {
    /// The DBC message name.
    pub message: Located<String>,
    /// Receive timeout and its policy, if any.
    pub timeout: Option<Timeout>,
    /// How the implicit thread predicts the inputs it drives.
    pub extrapolation: Extrapolation,
    /// (DBC signal, model input) pairs.
    pub signals: NamePairs,
    /// Its end-to-end protection, checked on receive.
    pub e2e: Option<E2eConfig>,
}

/// A transmitted message and the model outputs its signals carry.
#[derive(Clone, Debug, PartialEq)]
pub struct TransmitConfig {
    /// The DBC message name.
    pub message: Located<String>,
    /// Its period (s); `None`: the DBC's GenMsgCycleTime.
    pub cycle: Option<Located<f64>>,
    /// (DBC signal, model output) pairs.
    pub signals: NamePairs,
    /// Its end-to-end protection, written on transmit.
    pub e2e: Option<E2eConfig>,
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
    /// Its diagnostic server, if any.
    pub diagnostics: Option<crate::diag::DiagnosticsConfig>,
    /// Faults injected into what it sends.
    pub faults: Vec<FaultConfig>,
}

/// A serial device speaking the `name=value` line protocol.
#[derive(Clone, Debug, PartialEq)]
pub struct SerialConfig {
    /// Its name in logs and reports.
    pub name: String,
    /// The serial device, e.g. `/dev/ttyUSB0`.
    pub device: String,
    /// Baud rate.
    pub baud: u32,
    /// (line field, model input) pairs.
    pub receive: Vec<(String, Located<String>)>,
    /// Receive timeout and its policy, if any.
    pub timeout: Option<Timeout>,
    /// How the implicit thread predicts the received inputs.
    pub extrapolation: Extrapolation,
    /// (line field, model output) pairs.
    pub transmit: Vec<(String, Located<String>)>,
    /// A line of the sent fields every this many seconds (a whole number
    /// of frames).
    pub cycle: f64,
}
