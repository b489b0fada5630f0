//! The master's side of a DCP session driven in-process: `tandem
//! federate`'s lock-step run of one member, over a line in memory to a
//! Tandem slave (the one of [`crate::dcp_slave`]), where the fuzzer's
//! bytes lose, duplicate, reorder and corrupt datagrams both ways and
//! inject datagrams of their own. Whatever they do, the master must not
//! panic or hang; and when they only lose, duplicate and reorder, a run
//! that completes must record the same rows as a run on a perfect line.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, SocketAddrV4};
use std::os::fd::RawFd;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use tandem_dcp::federation::wire::Wire;
use tandem_dcp::federation::{run_lock_step_on, Federation};
use tandem_dcp::slave::model::ModelMember;
use tandem_dcp::slave::{describe, Now, Slave};
use tandem_runtime::record::Recorder;

use crate::dcp_slave::{slave_config, Bounded, Memory, MASTER};

/// The federation file: one member whose outputs drive two of its
/// inputs, five steps.
const FEDERATION: &str = "[federation]\nstep = 0.01\nstop = 0.05\ntimeout = 0.001\nretries = 3\n\n\
[[slave]]\nname = \"fuzz\"\ndescription = \"fuzz.dcpx\"\naddress = \"127.0.0.1:47001\"\n\n\
[[connection]]\nfrom = \"fuzz.z\"\nto = \"fuzz.c\"\n\n[[connection]]\nfrom = \"fuzz.w\"\nto = \"fuzz.a\"\n";

/// The federation file, with the slave's description next to it,
/// written once per process.
fn federation_file() -> &'static PathBuf {
    static FILE: OnceLock<PathBuf> = OnceLock::new();
    FILE.get_or_init(|| {
        let config = slave_config();
        let dir = config.file.parent().expect("the slave file's folder").to_path_buf();
        let identity = config.identity();
        let member = ModelMember::load(config).expect("the fuzzed slave's model loads");
        std::fs::write(dir.join("fuzz.dcpx"), describe(&identity, &member).write()).expect("the description");
        std::fs::write(dir.join("federation.toml"), FEDERATION).expect("the federation file");
        dir.join("federation.toml")
    })
}

/// The fuzzer's bytes, shared by both directions of the line.
#[derive(Clone, Default)]
struct Faults {
    bytes: Arc<Mutex<VecDeque<u8>>>,
    /// A datagram was corrupted or injected.
    unclean: Arc<Mutex<bool>>,
}

impl Faults {
    /// The next byte, if any is left.
    fn next(&self) -> Option<u8> {
        self.bytes.lock().unwrap_or_else(|e| e.into_inner()).pop_front()
    }

    /// Up to `n` of the next bytes.
    fn take(&self, n: usize) -> Vec<u8> {
        (0..n).map_while(|_| self.next()).collect()
    }

    fn taint(&self) {
        *self.unclean.lock().unwrap_or_else(|e| e.into_inner()) = true;
    }

    fn clean(&self) -> bool {
        !*self.unclean.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What becomes of `datagram`, each put in `out` (nothing: lost).
    fn pass(&self, datagram: Vec<u8>, held: &mut Option<Vec<u8>>, out: &mut Vec<Vec<u8>>) {
        match self.next().map(|d| d % 8) {
            Some(0) => {}
            Some(1) => {
                out.push(datagram.clone());
                out.push(datagram);
            }
            Some(2) if held.is_none() => *held = Some(datagram),
            Some(3) => {
                let mut bad = datagram;
                let at = self.next().unwrap_or(0) as usize % bad.len().max(1);
                if let Some(b) = bad.get_mut(at) {
                    *b ^= self.next().unwrap_or(1) | 1;
                }
                self.taint();
                out.push(bad);
            }
            _ => {
                out.push(datagram);
                out.extend(held.take());
            }
        }
    }
}

/// A line in memory from the master to a slave served in-process.
struct Line {
    slave: Slave,
    net: Memory,
    faults: Faults,
    /// What came back to the master.
    inbox: VecDeque<Vec<u8>>,
    held_down: Option<Vec<u8>>,
    held_up: Option<Vec<u8>>,
}

impl Wire for Line {
    fn local(&self) -> SocketAddrV4 {
        MASTER
    }

    fn send(&mut self, datagrams: &[(SocketAddrV4, &[u8])]) -> io::Result<()> {
        let mut down = Vec::new();
        for (_, bytes) in datagrams {
            self.faults.pass(bytes.to_vec(), &mut self.held_down, &mut down);
        }
        for bytes in down {
            self.net.deliver(0, SocketAddr::V4(MASTER), &bytes);
        }
        self.slave.turn(Now::system());
        let mut up = Vec::new();
        for (to, bytes) in self.net.sent() {
            if to == MASTER {
                self.faults.pass(bytes, &mut self.held_up, &mut up);
            }
        }
        if self.faults.next().is_some_and(|d| d.is_multiple_of(16)) {
            let n = self.faults.next().unwrap_or(0) as usize;
            up.push(self.faults.take(n));
            self.faults.taint();
        }
        self.inbox.extend(up);
        Ok(())
    }

    fn receive(&mut self, buf: &mut [u8], _deadline: Option<Instant>) -> io::Result<Option<usize>> {
        Ok(self.inbox.pop_front().map(|bytes| {
            let n = bytes.len().min(buf.len());
            buf[..n].copy_from_slice(&bytes[..n]);
            n
        }))
    }

    fn raw_fd(&self) -> Option<RawFd> {
        None
    }
}

/// Rows recorded.
#[derive(Default)]
struct Rows(Vec<Vec<f64>>);

impl Recorder for Rows {
    fn record(&mut self, t: f64, y: &[f64]) -> io::Result<()> {
        self.0.push(std::iter::once(t).chain(y.iter().copied()).collect());
        Ok(())
    }
}

/// The lock-step run of the federation over a line faulted by `data`:
/// its rows if it completed, and whether the line only lost, duplicated
/// and reordered.
fn run(data: &[u8]) -> (Option<Vec<Vec<f64>>>, bool) {
    let federation = Federation::load(federation_file()).expect("the fuzzed federation file reads");
    let config = slave_config();
    let identity = config.identity();
    let member = ModelMember::load(config).expect("the fuzzed slave's model loads");
    let net = Memory::default();
    let slave = Slave::with_network(identity, Box::new(Bounded(member)), Box::new(net.clone())).reporting_to(|_, _| {});
    let faults = Faults::default();
    faults.bytes.lock().unwrap_or_else(|e| e.into_inner()).extend(data);
    let line = Line {
        slave,
        net,
        faults: faults.clone(),
        inbox: VecDeque::new(),
        held_down: None,
        held_up: None,
    };
    let mut rows = Rows::default();
    let result = run_lock_step_on(&federation, vec![Box::new(line)], &mut rows, &mut |_| {});
    (result.ok().map(|_| rows.0), faults.clean())
}

/// The rows of the run on a perfect line.
fn perfect() -> &'static Vec<Vec<f64>> {
    static ROWS: OnceLock<Vec<Vec<f64>>> = OnceLock::new();
    ROWS.get_or_init(|| run(&[]).0.expect("the run on a perfect line completes"))
}

/// The fuzz target.
pub fn dcp_master(data: &[u8]) {
    let (rows, clean) = run(data);
    if let (Some(rows), true) = (rows, clean) {
        let expected = perfect();
        assert_eq!(rows.len(), expected.len(), "a completed run has another number of rows");
        for (got, want) in rows.iter().zip(expected) {
            let same = got.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits());
            assert!(
                same,
                "lost, duplicated or reordered datagrams changed a row: {got:?} for {want:?}"
            );
        }
    }
}
