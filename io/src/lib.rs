//! Tandem's I/O: where model inputs and outputs meet the outside world.
//!
//! - [`frame`]: the CAN frame every part shares.
//! - [`dbc`]: the DBC signal database: message layouts, signal decode and encode.
//! - [`e2e`]: AUTOSAR E2E protection (profiles 1, 2, 5, 11) and plain counter
//!   and checksum signals: protect on transmit, check on receive.
//! - [`isotp`]: ISO-TP (ISO 15765-2) on classic CAN and CAN FD, without I/O and over any transport.
//! - [`uds`]: a small UDS (ISO 14229-1) diagnostic server, without I/O.
//! - [`transport`]: the receiving and sending halves every transport offers.
//! - [`socketcan_bus`]: SocketCAN, a Linux CAN interface (`can0`, `vcan0`).
//! - [`log`]: bus logs in candump, Vector ASC, Vector BLF and ASAM MDF4, written and read.
//! - [`virtual_bus`]: an in-process bus for tests and single-process loops.
//! - [`udp`]: CAN over UDP multicast, as python-can's `udp_multicast`.
//! - [`slcan`]: SLCAN (Lawicel ASCII) serial CAN adapters, and python-can's `slcan`.
//! - [`serial_lines`]: serial sensors and rigs exchanging `name=value` lines.
//! - [`serial_port`]: the serial port under both, reopened with back-off when it vanishes.
//!
//! This crate depends on no other Tandem crate: it knows frames, transports,
//! signal coding, serial protocols and logs, not models or runs.
//!
//! ```
//! use tandem_io::log::parse_line;
//! use tandem_io::serial_lines;
//!
//! // A frame of a candump log.
//! let record = parse_line("(1.250000) can0 123#DEADBEEF").unwrap();
//! assert_eq!((record.time_ns, record.frame.id().raw()), (1_250_000_000, 0x123));
//! assert_eq!(record.frame.payload(), &[0xDE, 0xAD, 0xBE, 0xEF]);
//!
//! // A line of the serial `name=value` protocol.
//! let line = serial_lines::parse_line("t=0.5 speed=12.5 valve=1").unwrap();
//! assert_eq!(line.time(), Some(0.5));
//! assert_eq!(line.fields().collect::<Vec<_>>(), [("speed", 12.5), ("valve", 1.0)]);
//! ```

pub mod dbc;
pub mod e2e;
pub mod frame;
pub mod isotp;
pub mod log;
pub mod pipe;
pub mod poll;
pub mod serial_lines;
pub mod serial_port;
pub mod slcan;
pub mod socketcan_bus;
pub mod transport;
pub mod udp;
pub mod uds;
pub mod virtual_bus;

pub use frame::{CanFrame, CanId, FrameError, FrameKind};
pub use transport::{BusError, CanReceiver, CanSender, Duplex, Received};
