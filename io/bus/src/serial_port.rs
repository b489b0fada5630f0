//! The serial port under the serial transports ([`slcan`](crate::slcan),
//! [`serial_lines`](crate::serial_lines)): opened by path, shared by a
//! receiving and a sending half, and reopened with exponential back-off when
//! it vanishes (a USB adapter unplugged, a pseudo-terminal closed).
//!
//! Each half has its own file descriptor on the port (a duplicate), so a
//! receive waiting for bytes never delays a transmission. When either half's
//! I/O fails (a read gives `EIO`, a hang-up or end of file; a write fails),
//! the port is marked lost and both halves report
//! [`BusError::Disconnected`](tandem_can::BusError::Disconnected) until it is back:
//!
//! - the receiving half reopens the port at the same path (symbolic links
//!   are followed anew each time, so a udev link such as
//!   `/dev/serial/by-id/...` finds the adapter again), first at once, then
//!   after [`Backoff::initial`], doubling up to [`Backoff::max`]; it sleeps
//!   between attempts only within the timeout its caller gave;
//! - the sending half never waits: it reports the loss, and picks the new
//!   port up by itself on the first send after the receiving half reopened
//!   it (if the receiving half was dropped, the sending half makes the
//!   attempts, without sleeping, when they are due);
//! - after each reopening the transport's open sequence (for SLCAN:
//!   close, bit rate, timestamps, open) is sent again.
//!
//! Writes are non-blocking with a short deadline: a port that cannot take a
//! whole line within it is [`BusError::TxQueueFull`](tandem_can::BusError::TxQueueFull).

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, TryLockError};
use std::time::{Duration, Instant};

use serialport::{ClearBuffer, SerialPort, TTYPort};

/// A serial transport that could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum SerialOpenError {
    /// A setting the transport cannot use (what and why).
    #[error("{0}")]
    Unsupported(String),
    /// The port could not be opened or configured, or did not take the open
    /// sequence.
    #[error("serial port {path}: {source}")]
    Port {
        /// The path given.
        path: String,
        /// What went wrong.
        #[source]
        source: io::Error,
    },
}

/// How often a vanished port is reopened: at once, then after `initial`,
/// doubling up to `max` between attempts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// The wait after the first failed attempt.
    pub initial: Duration,
    /// The longest wait between attempts.
    pub max: Duration,
}

impl Default for Backoff {
    /// 10 ms doubling to 1 s.
    fn default() -> Self {
        Backoff {
            initial: Duration::from_millis(10),
            max: Duration::from_secs(1),
        }
    }
}

/// The state of a serial transport's port, readable from any thread.
/// Holding it does not keep the port open.
#[derive(Clone, Debug)]
pub struct PortStatus(Arc<Counters>);

#[derive(Debug, Default)]
struct Counters {
    connected: AtomicBool,
    losses: AtomicU64,
    reconnects: AtomicU64,
}

impl PortStatus {
    /// Whether the port is open now.
    pub fn is_connected(&self) -> bool {
        self.0.connected.load(Ordering::Acquire)
    }

    /// How many times the port was lost.
    pub fn disconnections(&self) -> u64 {
        self.0.losses.load(Ordering::Acquire)
    }

    /// How many times the port was reopened after being lost.
    pub fn reconnects(&self) -> u64 {
        self.0.reconnects.load(Ordering::Acquire)
    }
}

/// What a transport asks of its port.
pub(crate) struct PortConfig {
    /// The device path (a symbolic link is followed at each opening).
    pub path: String,
    /// The serial line's baud rate.
    pub baud: u32,
    /// Bytes written after each opening (the transport's open sequence).
    pub hello: Vec<u8>,
    /// Bytes written, best effort, when both halves are dropped.
    pub goodbye: Vec<u8>,
    /// The longest a write may wait for room.
    pub write_timeout: Duration,
    /// How often a vanished port is reopened.
    pub backoff: Backoff,
}

/// A port that is gone and not reopened yet: its path and why.
#[derive(Debug)]
struct Gone(String);

/// The longest the open sequence may take to write.
const HELLO_TIMEOUT: Duration = Duration::from_millis(200);

/// Far enough in the future to stand for "no deadline".
const FOREVER: Duration = Duration::from_secs(365 * 24 * 3600);

/// The instant `timeout` from now (a year at most, so it never overflows).
pub(crate) fn deadline_after(timeout: Duration) -> Instant {
    Instant::now() + timeout.min(FOREVER)
}

struct Shared {
    config: PortConfig,
    /// Mirrors `State::generation`, to check without locking whether a
    /// half's port is still the current one.
    generation: AtomicU64,
    /// Whether the receiving half (which makes the reopening attempts) lives.
    rx_alive: AtomicBool,
    counters: Arc<Counters>,
    state: Mutex<State>,
}

struct State {
    /// The open port (the halves use duplicates of it), `None` while lost.
    port: Option<TTYPort>,
    /// Bumped at each loss and each reopening.
    generation: u64,
    /// When the next reopening attempt is due.
    next_attempt: Instant,
    /// The wait after the next failed attempt.
    backoff: Duration,
    /// Why the port is not open (for the error message).
    why: String,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn try_lock(&self) -> Option<MutexGuard<'_, State>> {
        match self.state.try_lock() {
            Ok(guard) => Some(guard),
            Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Marks the port of `generation` lost, unless that was done already.
    fn lose(&self, state: &mut State, generation: u64, why: String) {
        if state.generation != generation || state.port.is_none() {
            return;
        }
        state.port = None;
        state.generation += 1;
        self.generation.store(state.generation, Ordering::Release);
        state.next_attempt = Instant::now();
        state.backoff = self.config.backoff.initial;
        state.why = why;
        self.counters.connected.store(false, Ordering::Release);
        self.counters.losses.fetch_add(1, Ordering::AcqRel);
    }

    /// One reopening attempt; on failure the next one is scheduled.
    fn reopen(&self, state: &mut State) -> bool {
        match open_port(&self.config) {
            Ok(port) => {
                state.port = Some(port);
                state.generation += 1;
                self.generation.store(state.generation, Ordering::Release);
                state.backoff = self.config.backoff.initial;
                self.counters.connected.store(true, Ordering::Release);
                self.counters.reconnects.fetch_add(1, Ordering::AcqRel);
                true
            }
            Err(e) => {
                state.why = format!("{e}; reopening");
                state.next_attempt = Instant::now() + state.backoff;
                state.backoff = (state.backoff * 2).min(self.config.backoff.max);
                false
            }
        }
    }

    fn disconnected(&self, why: &str) -> String {
        format!("{}: {why}", self.config.path)
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let state = self.state.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(port) = state.port.as_mut() {
            if !self.config.goodbye.is_empty() {
                let _ = write_within(port, &self.config.goodbye, self.config.write_timeout);
            }
        }
    }
}

/// Opens the port, makes it non-blocking, drops stale input and sends the
/// open sequence.
fn open_port(config: &PortConfig) -> io::Result<TTYPort> {
    let mut port = serialport::new(&config.path, config.baud)
        .timeout(config.write_timeout)
        .open_native()?;
    set_nonblocking(port.as_raw_fd())?;
    port.clear(ClearBuffer::Input)?;
    match write_within(&mut port, &config.hello, HELLO_TIMEOUT.max(config.write_timeout)) {
        Ok(()) => Ok(port),
        Err(WriteFail::Full { .. }) => Err(io::Error::new(
            io::ErrorKind::TimedOut,
            "the port did not take the open sequence",
        )),
        Err(WriteFail::Io(e)) => Err(e),
    }
}

/// Sets `O_NONBLOCK`, so that a write takes what fits instead of waiting for
/// room (the duplicates the halves use share the flag; reads wait in `poll`
/// first, as serialport does).
fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl with integer arguments on a descriptor the caller owns.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

enum WriteFail {
    /// The deadline passed with `written` bytes of the line written.
    Full {
        written: usize,
    },
    Io(io::Error),
}

/// Writes all of `bytes` unless `timeout` passes first.
fn write_within(port: &mut TTYPort, bytes: &[u8], timeout: Duration) -> Result<(), WriteFail> {
    let deadline = deadline_after(timeout);
    let mut written = 0;
    while written < bytes.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        port.set_timeout(left).map_err(|e| WriteFail::Io(e.into()))?;
        match port.write(&bytes[written..]) {
            Ok(0) => return Err(WriteFail::Io(io::ErrorKind::WriteZero.into())),
            Ok(n) => written += n,
            Err(e) if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) => {
                if left.is_zero() {
                    return Err(WriteFail::Full { written });
                }
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(WriteFail::Io(e)),
        }
    }
    Ok(())
}

/// Opens the port at `config.path`: the receiving half's link, the sending
/// half's link and the status. A port that cannot be opened now is an error
/// (only a port lost later is reopened).
pub(crate) fn open(config: PortConfig) -> Result<(Link, Link, PortStatus), SerialOpenError> {
    let port = open_port(&config).map_err(|source| SerialOpenError::Port {
        path: config.path.clone(),
        source,
    })?;
    let counters = Arc::new(Counters::default());
    counters.connected.store(true, Ordering::Release);
    let shared = Arc::new(Shared {
        generation: AtomicU64::new(0),
        rx_alive: AtomicBool::new(true),
        counters: counters.clone(),
        state: Mutex::new(State {
            port: Some(port),
            generation: 0,
            next_attempt: Instant::now(),
            backoff: config.backoff.initial,
            why: String::new(),
        }),
        config,
    });
    let link = |receiving| Link {
        shared: shared.clone(),
        port: None,
        generation: u64::MAX,
        receiving,
    };
    Ok((link(true), link(false), PortStatus(counters)))
}

/// Why a read gave no bytes.
pub(crate) enum ReadFail {
    /// The deadline passed.
    TimedOut,
    /// The port is lost (why, for [`BusError::Disconnected`](tandem_can::BusError::Disconnected)).
    Disconnected(String),
}

/// Why a write did not happen.
pub(crate) enum SendFail {
    /// No room within the write timeout; `partial` if part of the line went
    /// out (the next line should start by ending it).
    Full { partial: bool },
    /// The port is lost (why).
    Disconnected(String),
}

/// One half's access to the shared port.
pub(crate) struct Link {
    shared: Arc<Shared>,
    /// This half's duplicate of the port, if it has one.
    port: Option<TTYPort>,
    /// The generation `port` belongs to.
    generation: u64,
    /// Whether this is the receiving half (the one that reopens).
    receiving: bool,
}

impl Link {
    /// Changes with each loss and reopening of the port: a half that keeps
    /// per-connection state (a partial line) resets it when this changes.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// The port's status.
    pub(crate) fn status(&self) -> PortStatus {
        PortStatus(self.shared.counters.clone())
    }

    /// Takes a duplicate of the current port, if there is one.
    fn adopt(&mut self, state: &mut State) -> bool {
        let Some(port) = state.port.as_ref() else {
            return false;
        };
        match port.try_clone_native() {
            Ok(dup) => {
                self.port = Some(dup);
                self.generation = state.generation;
                true
            }
            Err(e) => {
                let generation = state.generation;
                self.shared
                    .lose(state, generation, format!("cannot duplicate the port: {e}"));
                false
            }
        }
    }

    /// Whether this half's port is the current one.
    fn current(&self) -> bool {
        self.port.is_some() && self.generation == self.shared.generation.load(Ordering::Acquire)
    }

    /// Makes sure this half has the current port, reopening it if due and
    /// sleeping between attempts until `deadline` at the latest.
    fn ensure_waiting(&mut self, deadline: Instant) -> Result<(), Gone> {
        loop {
            if self.current() {
                return Ok(());
            }
            self.port = None;
            let shared = self.shared.clone();
            let next_attempt = {
                let mut state = shared.lock();
                if self.adopt(&mut state) {
                    return Ok(());
                }
                if Instant::now() >= state.next_attempt && shared.reopen(&mut state) && self.adopt(&mut state) {
                    return Ok(());
                }
                if Instant::now() >= deadline {
                    return Err(Gone(shared.disconnected(&state.why)));
                }
                state.next_attempt
            };
            let now = Instant::now();
            std::thread::sleep(next_attempt.min(deadline).saturating_duration_since(now));
        }
    }

    /// Makes sure this half has the current port without waiting: takes it
    /// up if it was reopened, or (with no receiving half) reopens it if an
    /// attempt is due.
    fn ensure_now(&mut self) -> Result<(), Gone> {
        if self.current() {
            return Ok(());
        }
        self.port = None;
        let shared = self.shared.clone();
        let Some(mut state) = shared.try_lock() else {
            return Err(Gone(shared.disconnected("reopening")));
        };
        if self.adopt(&mut state) {
            return Ok(());
        }
        if !shared.rx_alive.load(Ordering::Acquire)
            && Instant::now() >= state.next_attempt
            && shared.reopen(&mut state)
            && self.adopt(&mut state)
        {
            return Ok(());
        }
        Err(Gone(shared.disconnected(&state.why)))
    }

    /// Marks this half's port lost (if no other half did already).
    fn lose(&mut self, why: String, wait_for_lock: bool) -> String {
        self.port = None;
        let message = self.shared.disconnected(&why);
        let state = if wait_for_lock {
            Some(self.shared.lock())
        } else {
            self.shared.try_lock()
        };
        if let Some(mut state) = state {
            self.shared.lose(&mut state, self.generation, why);
        }
        message
    }

    /// Reads what is there, waiting until `deadline` at most (reopening the
    /// port meanwhile if it is lost). The moment the port is found lost is
    /// reported at once.
    pub(crate) fn read(&mut self, buf: &mut [u8], deadline: Instant) -> Result<usize, ReadFail> {
        loop {
            self.ensure_waiting(deadline)
                .map_err(|Gone(why)| ReadFail::Disconnected(why))?;
            let Some(port) = self.port.as_mut() else {
                continue;
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if let Err(e) = port.set_timeout(left) {
                return Err(ReadFail::Disconnected(self.lose(e.to_string(), true)));
            }
            match port.read(buf) {
                Ok(0) => return Err(ReadFail::Disconnected(self.lose("end of file".into(), true))),
                Ok(n) => return Ok(n),
                Err(e) if matches!(e.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock) => {
                    if left.is_zero() {
                        return Err(ReadFail::TimedOut);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ReadFail::Disconnected(self.lose(e.to_string(), true))),
            }
        }
    }

    /// Writes one line with [`Link::write`], keeping `broken_line` (the
    /// generation of a port left with part of a line on it, which the next
    /// line must end first) and reporting failures as bus errors.
    pub(crate) fn write_line(
        &mut self,
        bytes: &[u8],
        broken_line: &mut Option<u64>,
    ) -> Result<(), tandem_can::BusError> {
        match self.write(bytes) {
            Ok(()) => {
                *broken_line = None;
                Ok(())
            }
            Err(SendFail::Full { partial }) => {
                if partial {
                    *broken_line = Some(self.generation);
                }
                Err(tandem_can::BusError::TxQueueFull)
            }
            Err(SendFail::Disconnected(why)) => Err(tandem_can::BusError::Disconnected(why)),
        }
    }

    /// Writes all of `bytes` within the write timeout, never waiting for a
    /// lost port.
    pub(crate) fn write(&mut self, bytes: &[u8]) -> Result<(), SendFail> {
        self.ensure_now().map_err(|Gone(why)| SendFail::Disconnected(why))?;
        let Some(port) = self.port.as_mut() else {
            return Err(SendFail::Disconnected(self.shared.disconnected("not open")));
        };
        match write_within(port, bytes, self.shared.config.write_timeout) {
            Ok(()) => Ok(()),
            Err(WriteFail::Full { written }) => Err(SendFail::Full { partial: written > 0 }),
            Err(WriteFail::Io(e)) => Err(SendFail::Disconnected(self.lose(e.to_string(), false))),
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        if self.receiving {
            self.shared.rx_alive.store(false, Ordering::Release);
        }
    }
}
