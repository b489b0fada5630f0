//! The serving loop: wait for datagrams or the next real-time point, then
//! a turn: every datagram waiting handled (a bounded number per socket, so
//! that a flood cannot hold off the steps due), the real-time step due
//! taken, the master watched, what is queued sent.

use std::sync::atomic::{AtomicBool, Ordering};

use super::error::SlaveError;
use super::machine::Slave;
use super::pacing::Now;
use crate::types::MAX_PDU;

/// The most datagrams read from one socket in one turn.
const PER_TURN: usize = 256;

impl Slave {
    /// Serves masters until `stop` is set: requests, data and, in real
    /// time, the steps on its own clock; `run_ended` is called after each
    /// run that stopped or failed.
    pub fn serve(&mut self, stop: &AtomicBool, run_ended: &mut dyn FnMut(&mut Slave)) -> Result<(), SlaveError> {
        while !stop.load(Ordering::Relaxed) {
            let timeout = self.wait_for();
            self.net.wait(timeout).map_err(|error| SlaveError::Io {
                what: "cannot wait for PDUs".into(),
                error,
            })?;
            if self.turn(Now::system()) {
                run_ended(self);
            }
        }
        Ok(())
    }

    /// One turn at `now`: the datagrams waiting handled, the real-time
    /// step due taken, the master watched and what is queued sent. Whether
    /// a run stopped or failed since the last turn.
    pub fn turn(&mut self, now: Now) -> bool {
        self.now = now;
        self.drain();
        self.realtime_step();
        self.watch_master();
        self.outbox.flush(self.net.as_mut());
        std::mem::take(&mut self.ended)
    }

    /// Handles the datagrams waiting on its sockets: the data sockets'
    /// first (data other slaves sent before a request that came meanwhile
    /// is taken before it), then the control socket's. A datagram may open
    /// or close data sockets (`STC_prepare`, `STC_reset`,
    /// `STC_deregister`): each socket is looked up afresh, after the
    /// datagram before.
    fn drain(&mut self) {
        let mut k = 1;
        while k < self.net.sockets() {
            self.read(k);
            k += 1;
        }
        self.read(0);
    }

    /// Handles what waits on socket `k`, [`PER_TURN`] datagrams at most.
    fn read(&mut self, k: usize) {
        for _ in 0..PER_TURN {
            let Some((n, from)) = self.net.receive(k, &mut self.rx) else {
                break;
            };
            let bytes = std::mem::take(&mut self.rx);
            self.datagram(&bytes[..n.min(MAX_PDU)], from);
            self.rx = bytes;
        }
    }
}
