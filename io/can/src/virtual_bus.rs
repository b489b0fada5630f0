//! An in-process CAN bus: every frame a node sends reaches every other
//! node, in order, through bounded lock-free channels. For unit tests and
//! for plant and ECU models run in one process.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use crossbeam_channel::{Sender, TrySendError};

use crate::frame::CanFrame;
use crate::pipe::ChannelRx;
use crate::transport::{BusError, CanSender, Duplex, Received};

/// The nodes of a bus: each node's number and its receive queue.
type Nodes = Arc<Mutex<Vec<(usize, Sender<Received>)>>>;

/// A virtual bus; [`VirtualBus::node`] attaches a node.
#[derive(Clone)]
pub struct VirtualBus {
    nodes: Nodes,
    origin: Instant,
}

impl Default for VirtualBus {
    fn default() -> Self {
        Self::new()
    }
}

impl VirtualBus {
    /// An empty bus; frames are stamped with seconds since its creation.
    pub fn new() -> Self {
        VirtualBus {
            nodes: Arc::default(),
            origin: Instant::now(),
        }
    }

    /// Attaches a node whose receive queue holds `capacity` frames; a
    /// frame sent while another node's queue is full is reported as
    /// [`BusError::TxQueueFull`] (the other nodes still get it).
    pub fn node(&self, capacity: usize) -> Duplex {
        let (tx, rx) = crossbeam_channel::bounded(capacity.max(1));
        let mut nodes = self.nodes.lock().unwrap_or_else(PoisonError::into_inner);
        let id = nodes.len();
        nodes.push((id, tx));
        Duplex {
            rx: Box::new(ChannelRx { queue: rx }),
            tx: Box::new(VirtualTx { bus: self.clone(), id }),
        }
    }
}

struct VirtualTx {
    bus: VirtualBus,
    id: usize,
}

impl CanSender for VirtualTx {
    fn send(&mut self, frame: &CanFrame) -> Result<(), BusError> {
        let source_time = Some(self.bus.origin.elapsed().as_secs_f64());
        let received = Received {
            frame: *frame,
            source_time,
        };
        let nodes = self.bus.nodes.lock().unwrap_or_else(PoisonError::into_inner);
        let mut full = false;
        for (_, queue) in nodes.iter().filter(|(id, _)| *id != self.id) {
            if let Err(TrySendError::Full(_)) = queue.try_send(received) {
                full = true;
            }
        }
        if full {
            Err(BusError::TxQueueFull)
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::CanId;
    use std::time::Duration;

    #[test]
    fn frames_reach_every_other_node_and_full_queues_are_reported() {
        let bus = VirtualBus::new();
        let mut a = bus.node(1);
        let mut b = bus.node(1);
        let mut c = bus.node(4);
        let frame = CanFrame::data(CanId::standard(0x10).unwrap(), &[1, 2]).unwrap();
        a.tx.send(&frame).unwrap();
        let wait = Duration::from_millis(10);
        assert_eq!(b.rx.recv(wait).unwrap().unwrap().frame, frame);
        assert_eq!(c.rx.recv(wait).unwrap().unwrap().frame, frame);
        assert!(a.rx.recv(wait).unwrap().is_none(), "a node does not hear itself");
        a.tx.send(&frame).unwrap();
        assert!(
            matches!(a.tx.send(&frame), Err(BusError::TxQueueFull)),
            "b's queue of one is full"
        );
        assert_eq!(c.rx.recv(wait).unwrap().unwrap().frame, frame);
        assert_eq!(c.rx.recv(wait).unwrap().unwrap().frame, frame, "c still got both");
    }
}
