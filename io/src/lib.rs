//! Tandem's I/O: where model inputs and outputs meet the outside world.
//!
//! - [`frame`]: the CAN frame every part shares.
//! - [`dbc`]: the DBC signal database: message layouts, signal decode and encode.
//! - [`transport`]: the receiving and sending halves every transport offers.
//! - [`socketcan_bus`]: SocketCAN, a Linux CAN interface (`can0`, `vcan0`).
//! - [`log`]: candump and Vector ASC bus logs.
//! - [`virtual_bus`]: an in-process bus for tests and single-process loops.
//! - [`udp`]: CAN over UDP multicast, as python-can's `udp_multicast`.
//! - [`slcan`]: SLCAN (Lawicel ASCII) serial CAN adapters, and python-can's `slcan`.
//! - [`serial_lines`]: serial sensors and rigs exchanging `name=value` lines.
//! - [`serial_port`]: the serial port under both, reopened with back-off when it vanishes.
//!
//! `models` never depends on this crate, and the real-time runtime meets it
//! only through lock-free queues.

pub mod bus_inputs;
pub mod bus_metrics;
pub mod bus_threads;
pub mod dbc;
pub mod frame;
pub mod log;
pub mod mapping;
pub mod serial_lines;
pub mod serial_port;
pub mod slcan;
pub mod socketcan_bus;
pub mod transport;
pub mod udp;
pub mod virtual_bus;

pub use frame::{CanFrame, CanId, FrameError, FrameKind};
pub use transport::{BusError, CanReceiver, CanSender, Duplex, Received};
