//! What slaves and masters do with their UDP sockets beyond the standard
//! library: send a burst of datagrams in one system call (waiting on
//! several is [`tandem_bus::poll::wait_readable`]).

use std::io;
use std::net::{SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;

/// Datagrams handed to the kernel per system call.
pub const BATCH: usize = 16;

/// How long a send waits for room in a full socket buffer.
const ROOM_WAIT: libc::c_int = 10;

/// Sends each `(to, bytes)` of `datagrams` from `socket`, in order, in as
/// few system calls as the kernel takes. A full socket buffer is waited
/// for (briefly); a datagram that cannot be sent is skipped and the others
/// still go. Returns the first error, unless it was a refusal from the
/// other end (a port with nothing listening: the protocol's retries handle
/// that).
pub fn send_all(socket: &UdpSocket, datagrams: &[(SocketAddrV4, &[u8])]) -> io::Result<()> {
    let mut first_error = None;
    for chunk in datagrams.chunks(BATCH) {
        let mut names = [sockaddr(SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, 0)); BATCH];
        let mut iovs = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; BATCH];
        // SAFETY: an all-zero mmsghdr is a valid empty header.
        let mut headers: [libc::mmsghdr; BATCH] = unsafe { std::mem::zeroed() };
        for (k, (to, bytes)) in chunk.iter().enumerate() {
            names[k] = sockaddr(*to);
            iovs[k] = libc::iovec {
                iov_base: bytes.as_ptr() as *mut libc::c_void,
                iov_len: bytes.len(),
            };
        }
        for k in 0..chunk.len() {
            headers[k].msg_hdr.msg_name = &mut names[k] as *mut libc::sockaddr_in as *mut libc::c_void;
            headers[k].msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            headers[k].msg_hdr.msg_iov = &mut iovs[k];
            headers[k].msg_hdr.msg_iovlen = 1;
        }
        let mut sent = 0;
        while sent < chunk.len() {
            // SAFETY: headers[sent..chunk.len()] point into `names`, `iovs`
            // and the callers' buffers, all alive for the call.
            let r = unsafe {
                libc::sendmmsg(
                    socket.as_raw_fd(),
                    headers[sent..].as_mut_ptr(),
                    (chunk.len() - sent) as libc::c_uint,
                    0,
                )
            };
            if r >= 0 {
                sent += r as usize;
                continue;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock if wait_writable(socket) => {}
                // A refusal answers an earlier datagram: this one was not
                // sent yet.
                io::ErrorKind::ConnectionRefused => {}
                _ => {
                    first_error.get_or_insert(e);
                    sent += 1;
                }
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Waits up to [`ROOM_WAIT`] ms for room to send on `socket`; whether
/// there is.
fn wait_writable(socket: &UdpSocket) -> bool {
    let mut poll = libc::pollfd {
        fd: socket.as_raw_fd(),
        events: libc::POLLOUT,
        revents: 0,
    };
    // SAFETY: one initialised entry, alive for the call.
    unsafe { libc::poll(&mut poll, 1, ROOM_WAIT) > 0 }
}

/// `address` as the C library has it.
fn sockaddr(address: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: address.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from_ne_bytes(address.ip().octets()),
        },
        sin_zero: [0; 8],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tandem_bus::poll::wait_readable;

    /// A receiving socket on loopback, its address, and a sending one.
    fn sockets() -> (UdpSocket, SocketAddrV4, UdpSocket) {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = match rx.local_addr().unwrap() {
            std::net::SocketAddr::V4(a) => a,
            _ => unreachable!(),
        };
        (rx, to, UdpSocket::bind("127.0.0.1:0").unwrap())
    }

    #[test]
    fn a_burst_arrives_whole_and_in_order() {
        let (rx, to, tx) = sockets();
        let payloads: Vec<Vec<u8>> = (0..20u8).map(|k| vec![k; k as usize + 1]).collect();
        let burst: Vec<(SocketAddrV4, &[u8])> = payloads.iter().map(|p| (to, p.as_slice())).collect();
        send_all(&tx, &burst).unwrap();
        let mut buf = [0; 64];
        for p in &payloads {
            assert!(wait_readable(&[rx.as_raw_fd()], Duration::from_secs(1)).unwrap());
            let n = rx.recv(&mut buf).unwrap();
            assert_eq!(&buf[..n], p.as_slice());
        }
        assert!(!wait_readable(&[rx.as_raw_fd()], Duration::from_millis(10)).unwrap());
    }

    #[test]
    fn a_datagram_that_cannot_leave_is_skipped_and_the_others_go() {
        let (rx, to, tx) = sockets();
        let too_long = vec![0u8; 70_000];
        let burst: [(SocketAddrV4, &[u8]); 3] = [(to, &[1]), (to, &too_long), (to, &[3])];
        let e = send_all(&tx, &burst).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EMSGSIZE), "{e}");
        let mut buf = [0; 8];
        for expected in [1u8, 3] {
            assert!(wait_readable(&[rx.as_raw_fd()], Duration::from_secs(1)).unwrap());
            assert_eq!(rx.recv(&mut buf).unwrap(), 1);
            assert_eq!(buf[0], expected);
        }
    }
}
