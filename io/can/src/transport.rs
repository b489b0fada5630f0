//! What every CAN transport (virtual bus, CAN over UDP, SLCAN, SocketCAN)
//! offers: a receiving half and a sending half, each used by its own I/O
//! thread, so that a blocking receive never delays a transmission.

use std::io;
use std::time::Duration;

use crate::frame::CanFrame;

/// A frame as it came off the bus.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Received {
    /// The frame.
    pub frame: CanFrame,
    /// When the source says it arrived, in seconds on the source's own clock
    /// (the kernel's receive timestamp, an adapter's timer), if it gives one.
    /// Tandem stamps every frame with its own monotonic clock as well.
    pub source_time: Option<f64>,
}

/// Something that went wrong on a bus. The I/O threads count each kind and
/// carry on; none of them stops a run.
#[derive(Debug, thiserror::Error)]
pub enum BusError {
    /// The transmit queue is full; the frame was not sent.
    #[error("transmit queue full; frame dropped")]
    TxQueueFull,
    /// The controller went bus-off.
    #[error("controller is bus-off")]
    BusOff,
    /// An error frame or controller error was reported (its description).
    #[error("bus error: {0}")]
    Bus(String),
    /// Bytes that are not a frame were received and skipped (what they were).
    #[error("malformed input skipped: {0}")]
    Malformed(String),
    /// The device is gone (unplugged, closed); the transport tries to reopen
    /// it with back-off and reports this error until it has.
    #[error("device disconnected: {0}")]
    Disconnected(String),
    /// Any other I/O error.
    #[error(transparent)]
    Io(#[from] io::Error),
}

/// The receiving half of a transport.
pub trait CanReceiver: Send {
    /// The next frame, waiting at most `timeout`; `Ok(None)` when none came.
    fn recv(&mut self, timeout: Duration) -> Result<Option<Received>, BusError>;
}

/// The sending half of a transport.
pub trait CanSender: Send {
    /// Sends `frame` without blocking: a full queue is
    /// [`BusError::TxQueueFull`], never a wait.
    fn send(&mut self, frame: &CanFrame) -> Result<(), BusError>;
}

/// Both halves of an open transport.
pub struct Duplex {
    /// The receiving half.
    pub rx: Box<dyn CanReceiver>,
    /// The sending half.
    pub tx: Box<dyn CanSender>,
}
