//! The transports to the world outside the process: CAN on a Linux
//! interface, over UDP multicast and through SLCAN serial adapters, and
//! serial devices exchanging `name=value` lines.
//!
//! - [`socketcan_bus`]: SocketCAN, a Linux CAN interface (`can0`, `vcan0`).
//! - [`udp`]: CAN over UDP multicast, as python-can's `udp_multicast`.
//! - [`slcan`]: SLCAN (Lawicel ASCII) serial CAN adapters, and python-can's `slcan`.
//! - [`serial_lines`]: serial sensors and rigs exchanging `name=value` lines.
//! - [`serial_port`]: the serial port under both, reopened with back-off when it vanishes.
//! - [`poll`]: waits on file descriptors with nanosecond timeouts.
//!
//! Each CAN transport implements the halves of [`tandem_can::transport`];
//! this crate depends on `tandem-can` alone of Tandem's crates. It must not
//! depend on the DBC codec, E2E, diagnostics or logs (they work on frames,
//! whatever carries them), nor on models or runs.
//!
//! ```
//! use tandem_bus::serial_lines;
//!
//! // A line of the serial `name=value` protocol.
//! let line = serial_lines::parse_line("t=0.5 speed=12.5 valve=1").unwrap();
//! assert_eq!(line.time(), Some(0.5));
//! assert_eq!(line.fields().collect::<Vec<_>>(), [("speed", 12.5), ("valve", 1.0)]);
//! ```

pub mod poll;
pub mod serial_lines;
pub mod serial_port;
pub mod slcan;
pub mod socketcan_bus;
pub mod udp;
