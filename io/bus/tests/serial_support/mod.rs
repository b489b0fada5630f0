//! Pseudo-terminals standing in for serial devices, for the serial
//! transport tests: the test holds the master end and plays the device,
//! the transport opens the slave's path (or a symbolic link to it).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serialport::{SerialPort, TTYPort};

/// What a call may take beyond its timeout on a loaded machine: far less
/// than the back-offs the tests set (600 ms and more), which a call must
/// never wait out.
pub const SLACK: Duration = Duration::from_millis(250);

/// Calls `f`, checking it returned within `timeout` and [`SLACK`].
pub fn timed<T>(timeout: Duration, what: &str, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let result = f();
    assert!(start.elapsed() < timeout + SLACK, "{what} took {:?}", start.elapsed());
    result
}

/// Fails the test unless python-can (with pyserial, which its `slcan`
/// interface uses) can be imported.
pub fn require_python_can() {
    let ok = Command::new("python3")
        .args(["-c", "import can, serial"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "python-can missing: run .ci/run (it pip-installs python-can and cantools)"
    );
}

/// A pseudo-terminal pair: the master end for the test, the slave's path
/// for the transport.
pub struct Pty {
    /// The device's end.
    pub master: TTYPort,
    /// The path the transport opens (`/dev/pts/N`).
    pub path: String,
    /// Kept open so that the master's reads do not fail before the
    /// transport opens the slave.
    _slave: TTYPort,
}

impl Pty {
    /// A new pair.
    pub fn new() -> Pty {
        let (master, slave) = TTYPort::pair().expect("cannot create a pseudo-terminal");
        let path = slave.name().expect("the slave has a path");
        Pty {
            master,
            path,
            _slave: slave,
        }
    }

    /// Writes `bytes` as the device.
    pub fn write(&mut self, bytes: &[u8]) {
        self.master.write_all(bytes).expect("write to the pseudo-terminal");
    }

    /// Reads what the transport wrote until `want` bytes came or `timeout`
    /// passed.
    pub fn read_for(&mut self, want: usize, timeout: Duration) -> Vec<u8> {
        let deadline = Instant::now() + timeout;
        let mut out = Vec::new();
        let mut buf = [0; 4096];
        while out.len() < want {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            self.master.set_timeout(left).unwrap();
            match self.master.read(&mut buf) {
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => break,
                Err(e) => panic!("read from the pseudo-terminal: {e}"),
            }
        }
        out
    }

    /// Reads until `expected` came (or `timeout` passed) and checks it is
    /// exactly that.
    pub fn expect(&mut self, expected: &[u8], timeout: Duration) {
        let got = self.read_for(expected.len(), timeout);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(expected),
            "the device received something else"
        );
    }

    /// Reads and discards everything until nothing comes for `quiet`.
    pub fn drain(&mut self, quiet: Duration) -> Vec<u8> {
        let mut out = Vec::new();
        loop {
            let got = self.read_for(1 << 20, quiet);
            if got.is_empty() {
                return out;
            }
            out.extend_from_slice(&got);
        }
    }
}

/// A scratch directory, removed on drop.
pub struct ScratchDir(pub PathBuf);

impl ScratchDir {
    /// A fresh directory named after `name` and this process.
    pub fn new(name: &str) -> ScratchDir {
        let dir = std::env::temp_dir().join(format!("tandem-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        ScratchDir(dir)
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Points the symbolic link `link` at `target`, atomically (as udev
/// replaces `/dev/serial/by-id/...` links).
pub fn point_link(link: &Path, target: &str) {
    let tmp = link.with_extension("new");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(target, &tmp).unwrap();
    std::fs::rename(&tmp, link).unwrap();
}

/// Copies bytes both ways between two pseudo-terminal masters, joining
/// their slaves as a null-modem cable would.
pub struct Relay {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Relay {
    /// Starts copying between `a` and `b`.
    pub fn start(a: &TTYPort, b: &TTYPort) -> Relay {
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for (from, to) in [(a, b), (b, a)] {
            let mut from = from.try_clone_native().unwrap();
            let mut to = to.try_clone_native().unwrap();
            let stop = stop.clone();
            threads.push(std::thread::spawn(move || {
                from.set_timeout(Duration::from_millis(20)).unwrap();
                to.set_timeout(Duration::from_secs(1)).unwrap();
                let mut buf = [0; 4096];
                while !stop.load(Ordering::Relaxed) {
                    match from.read(&mut buf) {
                        Ok(n) => {
                            let _ = to.write_all(&buf[..n]);
                        }
                        // Timed out, or no one has the slave open yet.
                        Err(_) => std::thread::sleep(Duration::from_millis(1)),
                    }
                }
            }));
        }
        Relay { stop, threads }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}
