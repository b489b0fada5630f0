//! A master's line to one slave on the network ([`Wire`]): UDP/IPv4
//! ([`Udp`]), or a test's or fuzz target's own in memory.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

use tandem_bus::poll::wait_readable;

use crate::net::send_all;

/// What a master's line to a slave needs of the network.
pub trait Wire: Send {
    /// The master's address as the slave sees it (where its data goes).
    fn local(&self) -> SocketAddrV4;
    /// Sends `datagrams` in order.
    fn send(&mut self, datagrams: &[(SocketAddrV4, &[u8])]) -> io::Result<()>;
    /// The next datagram that came back, into `buf` (cut to its length):
    /// its length; `None` when none has come by `deadline` (at once
    /// without one).
    fn receive(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> io::Result<Option<usize>>;
    /// A descriptor readable when a datagram waits, if there is one (a
    /// real-time master waits on every line at once).
    fn raw_fd(&self) -> Option<RawFd>;
}

/// A line over UDP/IPv4: one unconnected socket (data may come from
/// another port of the slave's, or through a relay).
pub struct Udp {
    socket: UdpSocket,
    local: SocketAddrV4,
}

impl Udp {
    /// A socket for a slave at `address`: non-blocking, and the address of
    /// the interface that reaches the slave.
    pub fn open(address: SocketAddrV4) -> Result<Udp, (&'static str, io::Error)> {
        let socket = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0))
            .and_then(|s| s.set_nonblocking(true).map(|()| s))
            .map_err(|e| ("cannot open a UDP socket", e))?;
        let probe = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0))
            .and_then(|p| p.connect(address).and(p.local_addr()))
            .map_err(|e| ("cannot reach its address", e))?;
        let port = socket
            .local_addr()
            .map_err(|e| ("cannot read the socket's address", e))?
            .port();
        let local = match probe {
            SocketAddr::V4(a) => SocketAddrV4::new(*a.ip(), port),
            SocketAddr::V6(_) => SocketAddrV4::new(Ipv4Addr::LOCALHOST, port),
        };
        Ok(Udp { socket, local })
    }
}

impl Wire for Udp {
    fn local(&self) -> SocketAddrV4 {
        self.local
    }

    fn send(&mut self, datagrams: &[(SocketAddrV4, &[u8])]) -> io::Result<()> {
        send_all(&self.socket, datagrams)
    }

    fn receive(&mut self, buf: &mut [u8], deadline: Option<Instant>) -> io::Result<Option<usize>> {
        loop {
            match self.socket.recv(buf) {
                Ok(n) => return Ok(Some(n)),
                // Nothing listens where an earlier datagram went: waiting
                // and sending again is the policy for that too.
                Err(e) if matches!(e.kind(), io::ErrorKind::ConnectionRefused | io::ErrorKind::Interrupted) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let left = deadline.map_or(std::time::Duration::ZERO, |d| {
                        d.saturating_duration_since(Instant::now())
                    });
                    if left.is_zero() {
                        return Ok(None);
                    }
                    wait_readable(&[self.socket.as_raw_fd()], left)?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn raw_fd(&self) -> Option<RawFd> {
        Some(self.socket.as_raw_fd())
    }
}
