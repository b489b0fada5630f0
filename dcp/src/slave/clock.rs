//! Waiting on the slave's sockets until a datagram comes or a deadline
//! passes, with nanosecond timeouts (a real-time step may be 1 ms).

use std::io;
use std::os::fd::RawFd;
use std::time::Duration;

/// Waits until one of `fds` is readable or `timeout` passes; whether one
/// is readable. Interrupted waits count as timeouts.
pub(crate) fn wait_readable(fds: &[RawFd], timeout: Duration) -> io::Result<bool> {
    let mut polls = [libc::pollfd {
        fd: -1,
        events: 0,
        revents: 0,
    }; 8];
    let n = fds.len().min(polls.len());
    for (p, &fd) in polls.iter_mut().zip(fds) {
        p.fd = fd;
        p.events = libc::POLLIN;
    }
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `polls` holds `n` initialised entries; `ts` outlives the call.
    let r = unsafe { libc::ppoll(polls.as_mut_ptr(), n as libc::nfds_t, &ts, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(r > 0)
}
