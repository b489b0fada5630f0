//! A [`Machine`] over a Tandem transport, with blocking send and receive of
//! whole messages.

use std::time::{Duration, Instant};

use tandem_can::transport::{BusError, Duplex};

use super::config::{Config, ConfigError};
use super::machine::{Counts, Event, Fault, Machine, SendError};

/// Why [`Link::send`] or [`Link::recv`] failed.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// The message cannot be sent.
    #[error(transparent)]
    Send(#[from] SendError),
    /// The transmission was aborted.
    #[error(transparent)]
    Fault(Fault),
    /// The transport failed.
    #[error(transparent)]
    Bus(#[from] BusError),
    /// The transmission did not finish within the time given.
    #[error("transmission did not finish in time")]
    Timeout,
}

/// An ISO-TP node on a transport: see the [module](super) documentation.
/// It owns both halves of the transport and drives them from the calling
/// thread. Nothing allocates after [`Link::new`].
pub struct Link {
    machine: Machine,
    duplex: Duplex,
    epoch: Instant,
    inbox: Vec<u8>,
    inbox_len: Option<usize>,
}

impl Link {
    /// A node for `config` on `duplex`.
    pub fn new(config: Config, duplex: Duplex) -> Result<Self, ConfigError> {
        let machine = Machine::new(config)?;
        Ok(Link {
            inbox: vec![0; config.max_len],
            machine,
            duplex,
            epoch: Instant::now(),
            inbox_len: None,
        })
    }

    /// Messages and faults so far.
    pub fn counts(&self) -> Counts {
        self.machine.counts()
    }

    fn now(&self) -> u64 {
        self.epoch.elapsed().as_nanos() as u64
    }

    /// Sends `message`, returning once its last frame is out or with the
    /// fault that aborted it; messages received meanwhile wait for
    /// [`Link::recv`] (the latest one).
    pub fn send(&mut self, message: &[u8], timeout: Duration) -> Result<(), LinkError> {
        self.machine.send(message)?;
        let end = self.now() + timeout.as_nanos() as u64;
        loop {
            if let Some(fault) = self.step(end)? {
                if fault.aborts_transmission() {
                    return Err(LinkError::Fault(fault));
                }
            }
            if !self.machine.is_sending() {
                return Ok(());
            }
            if self.now() >= end {
                self.machine.cancel_send();
                return Err(LinkError::Timeout);
            }
        }
    }

    /// The next message received within `timeout`, `None` if none came.
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<&[u8]>, LinkError> {
        let end = self.now() + timeout.as_nanos() as u64;
        while self.inbox_len.is_none() {
            self.step(end)?;
            if self.inbox_len.is_none() && self.now() >= end {
                return Ok(None);
            }
        }
        Ok(self.inbox_len.take().map(|len| &self.inbox[..len]))
    }

    /// Sends what is due, waits for one frame (until the machine's next
    /// deadline or `end`) and feeds it in; returns a fault it caused.
    fn step(&mut self, end: u64) -> Result<Option<Fault>, LinkError> {
        let now = self.now();
        while let Some(frame) = self.machine.transmit(now) {
            self.duplex.tx.send(&frame)?;
        }
        if let Some(fault) = self.machine.expire(now) {
            return Ok(Some(fault));
        }
        let until = self.machine.deadline().map_or(end, |d| d.min(end));
        let wait = Duration::from_nanos(until.saturating_sub(now));
        let received = match self.duplex.rx.recv(wait) {
            Ok(Some(received)) => received,
            Ok(None) | Err(BusError::Malformed(_)) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        match self.machine.on_frame(&received.frame, self.now()) {
            Some(Event::Received(len)) => {
                self.inbox[..len].copy_from_slice(&self.machine.message()[..len]);
                self.inbox_len = Some(len);
                Ok(None)
            }
            Some(Event::Fault(fault)) => Ok(Some(fault)),
            None => Ok(None),
        }
    }
}
