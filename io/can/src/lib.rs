//! The CAN frame and the transport traits every Tandem bus implements,
//! with two transports that need no operating system: two ends joined back
//! to back and an in-process bus.
//!
//! - [`frame`]: the CAN frame every part shares (classic, remote, CAN FD).
//! - [`transport`]: the receiving and sending halves every transport offers.
//! - [`pipe`]: two transports joined back to back in one process.
//! - [`virtual_bus`]: an in-process bus for tests and single-process loops.
//!
//! This crate depends on no other Tandem crate and on nothing tied to an
//! operating system (no sockets, serial ports or `libc`): the DBC codec, the
//! logs, ISO-TP and the OS transports (`tandem-bus`) build on it, never the
//! other way round.
//!
//! ```
//! use std::time::Duration;
//! use tandem_can::virtual_bus::VirtualBus;
//! use tandem_can::{CanFrame, CanId};
//!
//! let bus = VirtualBus::new();
//! let (mut a, mut b) = (bus.node(16), bus.node(16));
//! a.tx.send(&CanFrame::data(CanId::standard(0x123)?, &[1, 2, 3])?)?;
//! let received = b.rx.recv(Duration::from_millis(10))?.expect("a frame");
//! assert_eq!(received.frame.payload(), &[1, 2, 3]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod frame;
pub mod pipe;
pub mod transport;
pub mod virtual_bus;

pub use frame::{CanFrame, CanId, FrameError, FrameKind};
pub use transport::{BusError, CanReceiver, CanSender, Duplex, Received};
