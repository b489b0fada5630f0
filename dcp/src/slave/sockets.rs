//! A slave's view of the network ([`Net`]): its control socket, the data
//! sockets the master asks for, sending and waiting. [`Sockets`] are the
//! real UDP/IPv4 ones; a test or a fuzz target gives its own to drive a
//! slave in-process, without sockets.

use std::io;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::Duration;

use tandem_bus::poll::{wait_readable, MAX_WAITED};

use super::error::SlaveError;
use crate::net::send_all;

/// What a slave needs of the network.
pub trait Net: Send {
    /// The address its control socket is bound to.
    fn local(&self) -> SocketAddrV4;
    /// How many sockets it has: the control socket, then the data sockets.
    fn sockets(&self) -> usize;
    /// The next datagram waiting on socket `k` (0 is the control socket),
    /// copied into `buf` (cut to its length): its length and its sender;
    /// `None` when none waits, or there is no socket `k`.
    fn receive(&mut self, k: usize, buf: &mut [u8]) -> Option<(usize, SocketAddr)>;
    /// Binds a data socket on each of `ports` at the control socket's
    /// address, in place of those before.
    fn open_data(&mut self, ports: &[u16]) -> io::Result<()>;
    /// Closes the data sockets.
    fn close_data(&mut self);
    /// Sends `datagrams` in order; one that cannot leave is lost, as on
    /// the wire.
    fn send(&mut self, datagrams: &[(SocketAddrV4, &[u8])]);
    /// Waits at most `timeout` for a datagram on any socket.
    fn wait(&mut self, timeout: Duration) -> io::Result<()>;
}

/// The most data sockets a slave binds (each a port the master names).
pub const MAX_DATA_SOCKETS: usize = 64;

/// A slave's UDP/IPv4 sockets.
pub struct Sockets {
    control: UdpSocket,
    data: Vec<UdpSocket>,
    local: SocketAddrV4,
}

impl Sockets {
    /// The control socket bound at `control`, non-blocking.
    pub fn bind(control: SocketAddrV4) -> Result<Sockets, SlaveError> {
        let io = |what: String| move |error| SlaveError::Io { what, error };
        let socket = UdpSocket::bind(control).map_err(io(format!("cannot listen on {control} for control PDUs")))?;
        socket
            .set_nonblocking(true)
            .map_err(io("cannot make the control socket non-blocking".into()))?;
        let local = match socket.local_addr() {
            Ok(SocketAddr::V4(a)) => a,
            _ => control,
        };
        Ok(Sockets {
            control: socket,
            data: Vec::with_capacity(MAX_DATA_SOCKETS),
            local,
        })
    }
}

impl Net for Sockets {
    fn local(&self) -> SocketAddrV4 {
        self.local
    }

    fn sockets(&self) -> usize {
        1 + self.data.len()
    }

    fn receive(&mut self, k: usize, buf: &mut [u8]) -> Option<(usize, SocketAddr)> {
        let socket = if k == 0 { &self.control } else { self.data.get(k - 1)? };
        loop {
            match socket.recv_from(buf) {
                Ok(got) => return Some(got),
                // A refusal answers an earlier datagram sent from this
                // socket; an interruption, nothing: the next may be there.
                Err(e) if matches!(e.kind(), io::ErrorKind::ConnectionRefused | io::ErrorKind::Interrupted) => {}
                Err(_) => return None,
            }
        }
    }

    fn open_data(&mut self, ports: &[u16]) -> io::Result<()> {
        self.data.clear();
        if ports.len() > MAX_DATA_SOCKETS {
            return Err(io::Error::other(format!(
                "{} data ports pass the bound of {MAX_DATA_SOCKETS}",
                ports.len()
            )));
        }
        for &port in ports {
            let socket = UdpSocket::bind(SocketAddrV4::new(*self.local.ip(), port))?;
            socket.set_nonblocking(true)?;
            self.data.push(socket);
        }
        Ok(())
    }

    fn close_data(&mut self) {
        self.data.clear();
    }

    fn send(&mut self, datagrams: &[(SocketAddrV4, &[u8])]) {
        let _ = send_all(&self.control, datagrams);
    }

    fn wait(&mut self, timeout: Duration) -> io::Result<()> {
        let mut fds = [self.control.as_raw_fd(); MAX_WAITED];
        let n = 1 + self.data.len().min(MAX_WAITED - 1);
        for (fd, s) in fds[1..].iter_mut().zip(&self.data) {
            *fd = s.as_raw_fd();
        }
        wait_readable(&fds[..n], timeout).map(|_| ())
    }
}
