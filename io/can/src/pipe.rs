//! Two transports joined back to back in one process: what one end sends,
//! the other receives, through bounded channels made once (no allocation
//! per frame; a send wakes a receiver waiting on the other end). A bridge
//! to another medium (a DCP federation) holds one end and a run's bus the
//! other.

use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};

use crate::frame::CanFrame;
use crate::transport::{BusError, CanReceiver, CanSender, Duplex, Received};

/// Two ends, each holding up to `capacity` frames not yet received.
pub fn pair(capacity: usize) -> (Duplex, Duplex) {
    let origin = Instant::now();
    let (a_tx, b_rx) = crossbeam_channel::bounded(capacity.max(1));
    let (b_tx, a_rx) = crossbeam_channel::bounded(capacity.max(1));
    let end = |tx, rx| Duplex {
        rx: Box::new(ChannelRx { queue: rx }),
        tx: Box::new(PipeTx { queue: tx, origin }),
    };
    (end(a_tx, a_rx), end(b_tx, b_rx))
}

/// The receiving half of an in-process transport: its frames' channel.
pub(crate) struct ChannelRx {
    pub(crate) queue: Receiver<Received>,
}

impl CanReceiver for ChannelRx {
    fn recv(&mut self, timeout: Duration) -> Result<Option<Received>, BusError> {
        if timeout.is_zero() {
            return Ok(self.queue.try_recv().ok());
        }
        Ok(self.queue.recv_timeout(timeout).ok())
    }
}

struct PipeTx {
    queue: Sender<Received>,
    origin: Instant,
}

impl CanSender for PipeTx {
    fn send(&mut self, frame: &CanFrame) -> Result<(), BusError> {
        let received = Received {
            frame: *frame,
            source_time: Some(self.origin.elapsed().as_secs_f64()),
        };
        match self.queue.try_send(received) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => Err(BusError::TxQueueFull),
            Err(TrySendError::Disconnected(_)) => Err(BusError::Disconnected("the other end is closed".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::CanId;

    #[test]
    fn each_end_receives_what_the_other_sends_and_a_full_end_refuses() {
        let (mut a, mut b) = pair(1);
        let frame = CanFrame::data(CanId::standard(0x10).unwrap(), &[1, 2]).unwrap();
        let wait = Duration::from_millis(10);
        a.tx.send(&frame).unwrap();
        assert!(matches!(a.tx.send(&frame), Err(BusError::TxQueueFull)));
        assert_eq!(b.rx.recv(wait).unwrap().unwrap().frame, frame);
        assert!(b.rx.recv(wait).unwrap().is_none());
        assert!(a.rx.recv(wait).unwrap().is_none(), "an end does not hear itself");
        b.tx.send(&frame).unwrap();
        assert_eq!(a.rx.recv(wait).unwrap().unwrap().frame, frame);
        drop(a);
        assert!(matches!(b.tx.send(&frame), Err(BusError::Disconnected(_))));
    }
}
