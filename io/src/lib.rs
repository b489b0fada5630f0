//! Tandem's I/O: where model inputs and outputs meet the outside world.
//!
//! - [`frame`]: the CAN frame every part shares.
//! - [`transport`]: the receiving and sending halves every transport offers.
//!
//! `models` never depends on this crate, and the real-time runtime meets it
//! only through lock-free queues.

pub mod frame;
pub mod transport;

pub use frame::{CanFrame, CanId, FrameError, FrameKind};
pub use transport::{BusError, CanReceiver, CanSender, Duplex, Received};
