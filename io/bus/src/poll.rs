//! Waiting on file descriptors (sockets, CAN interfaces) until one is
//! readable or a deadline passes, with nanosecond timeouts: a real-time
//! step may be 1 ms.

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

/// The most descriptors waited on at once.
pub const MAX_WAITED: usize = 256;

/// Waits until one of `fds` (the first [`MAX_WAITED`]) is readable (or has
/// an error pending), at most `timeout`; whether one is. Interrupted waits
/// count as timeouts.
pub fn wait_readable(fds: &[RawFd], timeout: Duration) -> io::Result<bool> {
    let mut polls = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; MAX_WAITED];
    let n = fds.len().min(polls.len());
    for (p, &fd) in polls.iter_mut().zip(fds) {
        p.fd = fd;
        p.events = libc::POLLIN;
    }
    let limit = libc::timespec {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `polls` holds `n` initialised entries; `limit` outlives the
    // call; no signal mask.
    match unsafe { libc::ppoll(polls.as_mut_ptr(), n as libc::nfds_t, &limit, std::ptr::null()) } {
        r if r >= 0 => Ok(r > 0),
        _ => {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}
