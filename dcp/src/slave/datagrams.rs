//! Datagrams a slave keeps: those waiting to be sent together
//! ([`Outbox`]), and the answers of its last request, kept to answer it
//! again when it is repeated ([`Datagrams`]). Both are buffers made before
//! a run: adding and clearing allocate nothing within their capacity.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::ops::Range;

use super::sockets::Net;
use crate::net::BATCH;
use crate::types::MAX_PDU;

/// Datagrams in one buffer: their bytes back to back, and each one's
/// address and place in it.
pub(super) struct Datagrams {
    bytes: Vec<u8>,
    list: Vec<(SocketAddrV4, Range<usize>)>,
}

impl Datagrams {
    /// Room for `count` datagrams of `bytes` bytes in all.
    pub(super) fn with_capacity(bytes: usize, count: usize) -> Datagrams {
        Datagrams {
            bytes: Vec::with_capacity(bytes),
            list: Vec::with_capacity(count),
        }
    }

    /// Room for at least `count` datagrams of `bytes` bytes in all.
    pub(super) fn reserve(&mut self, bytes: usize, count: usize) {
        self.bytes.reserve(bytes.saturating_sub(self.bytes.len()));
        self.list.reserve(count.saturating_sub(self.list.len()));
    }

    /// Whether `bytes` more would pass the capacity.
    fn full_for(&self, bytes: &[u8]) -> bool {
        self.list.len() == self.list.capacity() || self.bytes.len() + bytes.len() > self.bytes.capacity()
    }

    /// Adds `bytes` for `to` (an IPv6 peer cannot be one of a slave's).
    pub(super) fn push(&mut self, to: SocketAddr, bytes: &[u8]) {
        let SocketAddr::V4(to) = to else { return };
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        self.list.push((to, start..self.bytes.len()));
    }

    /// Forgets them all.
    pub(super) fn clear(&mut self) {
        self.list.clear();
        self.bytes.clear();
    }

    /// Each one's address and bytes, in the order added.
    pub(super) fn iter(&self) -> impl Iterator<Item = (SocketAddrV4, &[u8])> {
        self.list.iter().map(|(to, range)| (*to, &self.bytes[range.clone()]))
    }
}

/// The bytes an outbox holds.
const OUTBOX_BYTES: usize = 4 * MAX_PDU;
/// The datagrams it holds.
pub(super) const OUTBOX_DATAGRAMS: usize = 64;

/// Datagrams waiting to be sent together: a burst that would not fit is
/// sent first, so queueing never allocates.
pub(super) struct Outbox {
    waiting: Datagrams,
}

impl Outbox {
    /// An empty outbox.
    pub(super) fn new() -> Outbox {
        Outbox {
            waiting: Datagrams::with_capacity(OUTBOX_BYTES, OUTBOX_DATAGRAMS),
        }
    }

    /// Queues `bytes` for `to`, sending what waits through `net` first
    /// when they would not fit.
    pub(super) fn queue(&mut self, net: &mut dyn Net, to: SocketAddr, bytes: &[u8]) {
        if self.waiting.full_for(bytes) {
            self.flush(net);
        }
        self.waiting.push(to, bytes);
    }

    /// Sends what waits through `net`.
    pub(super) fn flush(&mut self, net: &mut dyn Net) {
        let mut burst: [(SocketAddrV4, &[u8]); BATCH] = [(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0), &[]); BATCH];
        let mut n = 0;
        for datagram in self.waiting.iter() {
            burst[n] = datagram;
            n += 1;
            if n == BATCH {
                net.send(&burst);
                n = 0;
            }
        }
        if n > 0 {
            net.send(&burst[..n]);
        }
        self.waiting.clear();
    }
}
