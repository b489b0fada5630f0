//! A DCP slave driven in-process, without sockets, by a sequence of
//! operations decoded from fuzzer bytes: raw datagrams on any of its
//! sockets, well-formed requests (in sequence, naming its state, most of
//! the time) and data PDUs, retransmissions, and time passing. Whatever
//! the sequence, the slave must not panic, must answer with PDUs only, and
//! must keep within its bounds.

use std::collections::VecDeque;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use tandem_dcp::pdu::{DataKind, Network, Pdu, Request, Response};
use tandem_dcp::ports::Ports;
use tandem_dcp::slave::member::{Member, MemberError};
use tandem_dcp::slave::model::ModelMember;
use tandem_dcp::slave::sockets::Net;
use tandem_dcp::slave::wiring::Slot;
use tandem_dcp::slave::{Now, Slave, SlaveConfig};
use tandem_dcp::types::{OpMode, State, MAX_PDU};

/// The slave's control address.
pub const CONTROL: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 47001);
/// The master's address.
pub const MASTER: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 50000);
/// The ports a fuzzed configuration names for data, beside the control
/// port.
const DATA_PORTS: [u16; 2] = [47002, 47003];

/// A model of four inputs and three outputs, one of each kind of wire
/// type the slave file gives them.
const DIAGRAM: &str = r#"{
  "name": "fuzz",
  "blocks": [
    {"id": "a", "type": "Inport", "params": {"default": 1.0}},
    {"id": "b", "type": "Inport", "params": {"default": 0.0}},
    {"id": "c", "type": "Inport", "params": {"default": 0.0}},
    {"id": "d", "type": "Inport", "params": {"default": 0.0}},
    {"id": "sum", "type": "Sum", "params": {"signs": "++"}},
    {"id": "x", "type": "Integrator", "params": {"initial": 0.0}},
    {"id": "k", "type": "Gain", "params": {"gain": 2}},
    {"id": "y", "type": "Output"},
    {"id": "z", "type": "Output"},
    {"id": "w", "type": "Output"}
  ],
  "links": [
    {"from": "a", "to": "sum.1"},
    {"from": "b", "to": "sum.2"},
    {"from": "sum", "to": "y"},
    {"from": "c", "to": "x"},
    {"from": "x", "to": "z"},
    {"from": "d", "to": "k"},
    {"from": "k", "to": "w"}
  ],
  "simulation": {"solver": "rk4", "step": 0.01, "stop": 1}
}"#;

/// The slave file of the fuzzed slave (its source next to it).
const SLAVE_FILE: &str = "name = \"fuzz\"\nsource = \"fuzz.json\"\nstep = 0.01\ncontrol = \"127.0.0.1:47001\"\n\
types = { a = \"uint8\", b = \"string\", c = \"binary\", y = \"int16\", z = \"float32\" }\n";

/// The most micro steps the fuzzed member really takes in one step (a
/// longer step is answered as taken, so that an input runs in
/// milliseconds).
const FUZZ_MICRO_STEPS: f64 = 1000.0;

/// The folder of the fuzzed slave's files, written once per process.
fn files() -> &'static Path {
    static FILES: OnceLock<PathBuf> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("tandem-fuzz-dcp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a temporary folder");
        std::fs::write(dir.join("fuzz.json"), DIAGRAM).expect("the diagram is written");
        std::fs::write(dir.join("fuzz.toml"), SLAVE_FILE).expect("the slave file is written");
        dir
    })
}

/// The fuzzed slave's file (read once per process).
pub fn slave_config() -> SlaveConfig {
    static CONFIG: OnceLock<SlaveConfig> = OnceLock::new();
    CONFIG
        .get_or_init(|| SlaveConfig::load(&files().join("fuzz.toml")).expect("the fuzzed slave's file reads"))
        .clone()
}

/// A model member whose steps cost at most [`FUZZ_MICRO_STEPS`] micro
/// steps, and which never takes hard real time (it would raise the fuzzing
/// thread to SCHED_FIFO).
pub struct Bounded(pub ModelMember);

impl Member for Bounded {
    fn ports(&self) -> &Ports {
        self.0.ports()
    }
    fn op_modes(&self) -> &[OpMode] {
        self.0.op_modes()
    }
    fn micro_step(&self) -> f64 {
        self.0.micro_step()
    }
    fn configure(&mut self) -> Result<(), MemberError> {
        self.0.configure()
    }
    fn evaluate(&mut self) -> Result<(), MemberError> {
        self.0.evaluate()
    }
    fn step(&mut self, t: f64, h: f64) -> Result<(), MemberError> {
        if h / self.micro_step() > FUZZ_MICRO_STEPS {
            return Ok(());
        }
        self.0.step(t, h)
    }
    fn start(&mut self, origin: Instant, h: f64, hard: bool) -> Result<(), MemberError> {
        if hard {
            return Err(MemberError::HardRealTimeRefused("a fuzzed slave".into()));
        }
        self.0.start(origin, h, false)
    }
    fn advance(&mut self, k: i64, h: f64) -> Result<(), MemberError> {
        if h / self.micro_step() > FUZZ_MICRO_STEPS {
            return Ok(());
        }
        self.0.advance(k, h)
    }
    fn stop(&mut self) {
        self.0.stop()
    }
    fn take(&mut self, slots: &[Slot], payload: &[u8], point: i64) -> bool {
        self.0.take(slots, payload, point)
    }
    fn collect(&mut self) {
        self.0.collect()
    }
    fn give(&mut self, slots: &[Slot], out: &mut Vec<u8>) -> Result<(), MemberError> {
        self.0.give(slots, out)
    }
}

/// What the network in memory holds.
#[derive(Default)]
struct Wire {
    /// Datagrams waiting: socket, sender, bytes.
    inbox: VecDeque<(usize, SocketAddr, Vec<u8>)>,
    /// Data sockets open.
    data: usize,
    /// Datagrams the slave sent since the harness last looked.
    sent: Vec<(SocketAddrV4, Vec<u8>)>,
}

/// A network in memory, shared by the slave and its harness.
#[derive(Clone, Default)]
pub struct Memory(Arc<Mutex<Wire>>);

impl Memory {
    fn wire(&self) -> MutexGuard<'_, Wire> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Puts `bytes` from `from` on socket `k`.
    pub fn deliver(&self, k: usize, from: SocketAddr, bytes: &[u8]) {
        self.wire().inbox.push_back((k, from, bytes.to_vec()));
    }

    /// What the slave sent since the last call.
    pub fn sent(&self) -> Vec<(SocketAddrV4, Vec<u8>)> {
        std::mem::take(&mut self.wire().sent)
    }

    /// How many sockets the slave has.
    pub fn sockets(&self) -> usize {
        1 + self.wire().data
    }
}

impl Net for Memory {
    fn local(&self) -> SocketAddrV4 {
        CONTROL
    }

    fn sockets(&self) -> usize {
        1 + self.wire().data
    }

    fn receive(&mut self, k: usize, buf: &mut [u8]) -> Option<(usize, SocketAddr)> {
        let mut wire = self.wire();
        if k > wire.data {
            return None;
        }
        let at = wire.inbox.iter().position(|(s, _, _)| *s == k)?;
        let (_, from, bytes) = wire.inbox.remove(at)?;
        let n = bytes.len().min(buf.len());
        buf[..n].copy_from_slice(&bytes[..n]);
        Some((n, from))
    }

    fn open_data(&mut self, ports: &[u16]) -> io::Result<()> {
        let mut wire = self.wire();
        wire.data = 0;
        // Another program holds the second data port.
        if ports.contains(&DATA_PORTS[1]) {
            return Err(io::ErrorKind::AddrInUse.into());
        }
        wire.data = ports.len();
        Ok(())
    }

    fn close_data(&mut self) {
        self.wire().data = 0;
    }

    fn send(&mut self, datagrams: &[(SocketAddrV4, &[u8])]) {
        let mut wire = self.wire();
        // The harness reads them after each turn: a bounded queue.
        for (to, bytes) in datagrams {
            if wire.sent.len() < 4096 {
                wire.sent.push((*to, bytes.to_vec()));
            }
        }
    }

    fn wait(&mut self, _timeout: Duration) -> io::Result<()> {
        Ok(())
    }
}

/// Reads the fuzzer's bytes as the operations' fields.
pub struct Bytes<'a>(pub &'a [u8]);

impl Bytes<'_> {
    /// The next byte (0 once they run out).
    pub fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }
    /// The next two bytes, little endian.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    /// The next four bytes, little endian.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }
    /// Up to `n` of the next bytes.
    pub fn take(&mut self, n: usize) -> &[u8] {
        let (taken, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        taken
    }
    /// Whether any are left.
    pub fn more(&self) -> bool {
        !self.0.is_empty()
    }
}

/// A slave and the master's side of the conversation with it.
pub struct Harness {
    /// The slave.
    pub slave: Slave,
    /// Its network.
    pub net: Memory,
    /// The clocks the slave is given.
    pub now: Now,
    /// The next sequence id the master sends.
    seq: u16,
    /// The last request sent, to send again.
    last: Vec<u8>,
    /// The next sequence id of each data id the master sends.
    data_seq: [u16; 8],
    /// Datagrams the slave sent, in all.
    pub answers: u64,
}

impl Harness {
    /// A fresh slave of [`slave_config`].
    pub fn new() -> Harness {
        let config = slave_config();
        let identity = config.identity();
        let member = ModelMember::load(config).expect("the fuzzed slave's model loads");
        let net = Memory::default();
        let slave =
            Slave::with_network(identity, Box::new(Bounded(member)), Box::new(net.clone())).reporting_to(|_, _| {});
        Harness {
            slave,
            net,
            now: Now::system(),
            seq: 0,
            last: Vec::new(),
            data_seq: [0; 8],
            answers: 0,
        }
    }

    /// One turn of the slave; checks what it sent, and follows its
    /// acknowledgements and refusals to keep the master's sequence ids.
    pub fn turn(&mut self) {
        self.slave.turn(self.now);
        for (_, bytes) in self.net.sent() {
            self.answers += 1;
            assert!(bytes.len() <= MAX_PDU, "a datagram of {} bytes", bytes.len());
            let pdu = Pdu::read(&bytes).unwrap_or_else(|e| panic!("the slave sent a datagram that is not a PDU: {e}"));
            match pdu {
                Pdu::Response {
                    body: Response::Nack { expected, .. },
                    ..
                } => self.seq = expected,
                Pdu::Response { seq, .. } if seq == self.seq => self.seq = seq.wrapping_add(1),
                Pdu::Request { .. } => panic!("the slave sent a request"),
                _ => {}
            }
        }
    }

    /// Sends request `body` to the slave as the master, in sequence.
    pub fn request(&mut self, body: Request<'_>) {
        let bytes = Pdu::Request {
            seq: self.seq,
            receiver: 1,
            body,
        }
        .to_vec();
        self.net.deliver(0, SocketAddr::V4(MASTER), &bytes);
        self.last = bytes;
        self.turn();
    }

    /// Sends the last request again.
    pub fn repeat(&mut self) {
        let last = std::mem::take(&mut self.last);
        self.net.deliver(0, SocketAddr::V4(MASTER), &last);
        self.last = last;
        self.turn();
    }

    /// Sends a data PDU of `id` with `payload` on socket `k`.
    pub fn data(&mut self, k: usize, id: u16, payload: &[u8]) {
        let slot = &mut self.data_seq[id as usize % 8];
        let bytes = Pdu::Data {
            kind: DataKind::InputOutput,
            seq: *slot,
            id,
            payload,
        }
        .to_vec();
        *slot = slot.wrapping_add(1);
        self.net.deliver(k, SocketAddr::V4(MASTER), &bytes);
        self.turn();
    }

    /// Lets `d` pass on the slave's clocks.
    pub fn wait(&mut self, d: Duration) {
        self.now.at += d;
        self.now.unix += d;
        self.turn();
    }

    /// The slave's state as the master names it: its own, or (when
    /// `raw` is odd) the raw byte `raw`.
    fn state(&self, raw: u8) -> u8 {
        if raw % 4 == 1 {
            raw
        } else {
            self.slave.state().code()
        }
    }

    /// One operation decoded from `b`.
    pub fn operate(&mut self, b: &mut Bytes<'_>) {
        match b.u8() % 8 {
            0 => {
                // A raw datagram on any socket.
                let k = b.u8() as usize % self.net.sockets();
                let n = b.u8() as usize;
                let bytes = b.take(n).to_vec();
                self.net.deliver(k, SocketAddr::V4(MASTER), &bytes);
                self.turn();
            }
            1..=3 => {
                let body_bytes = [b.u8(), b.u8(), b.u8(), b.u8(), b.u8(), b.u8()];
                let mut scratch = [0; 6];
                let body = self.request_of(b, body_bytes, &mut scratch);
                self.request(body);
            }
            4 => {
                let k = b.u8() as usize % self.net.sockets();
                let id = b.u8() as u16 % 8;
                let n = b.u8() as usize;
                let payload = b.take(n).to_vec();
                self.data(k, id, &payload);
            }
            5 => self.repeat(),
            6 => {
                let ms = b.u16() as u64;
                self.wait(Duration::from_millis(if ms > 60_000 { ms * 1000 } else { ms }));
            }
            _ => {
                // A data PDU of well-formed float64 values.
                let k = b.u8() as usize % self.net.sockets();
                let id = b.u8() as u16 % 8;
                let n = b.u8() as usize % 5;
                let payload: Vec<u8> = (0..n).flat_map(|v| (v as f64 * 1.5).to_le_bytes()).collect();
                self.data(k, id, &payload);
            }
        }
    }

    /// A well-formed request: its kind and fields from `f` and `b`.
    fn request_of<'s>(&self, b: &mut Bytes<'_>, f: [u8; 6], scratch: &'s mut [u8; 6]) -> Request<'s> {
        let state = self.state(f[1]);
        let small = |x: u8| x as u16 % 8;
        match f[0] % 24 {
            0 => Request::Register {
                state,
                uuid: if f[2].is_multiple_of(8) {
                    [f[3]; 16]
                } else {
                    self.slave.description().uuid
                },
                op_mode: f[4] % 4,
                major: 1,
                minor: f[5] / 128,
            },
            1 => Request::Deregister { state },
            2 => Request::Prepare { state },
            3 => Request::Configure { state },
            4 => Request::Initialize { state },
            5 => Request::Run {
                state,
                start: match f[2] % 4 {
                    0 => 0,
                    1 => self.now.unix.as_secs() as i64 + f[3] as i64,
                    2 => i64::from_le_bytes([f[3], f[4], f[5], f[2], f[3], f[4], f[5], f[2]]),
                    _ => -(f[3] as i64),
                },
            },
            6 => Request::DoStep {
                state,
                steps: if f[2].is_multiple_of(2) { f[3] as u32 } else { b.u32() },
            },
            7 => Request::SendOutputs { state },
            8 => Request::Stop { state },
            9 => Request::Reset { state },
            10 => Request::TimeRes {
                numerator: if f[2].is_multiple_of(2) { 1 } else { b.u32() },
                denominator: if f[3].is_multiple_of(2) { 100 } else { b.u32() },
            },
            11 => Request::Steps {
                steps: if f[2].is_multiple_of(2) { f[3] as u32 } else { b.u32() },
                data_id: small(f[4]),
            },
            12 | 13 => Request::Input {
                data_id: small(f[2]),
                pos: if f[3] > 250 { b.u16() } else { f[3] as u16 % 6 },
                target_vr: f[4] as u64 % 9,
                source_type: f[5] % 13,
            },
            14 | 15 => Request::Output {
                data_id: small(f[2]),
                pos: if f[3] > 250 { b.u16() } else { f[3] as u16 % 6 },
                source_vr: f[4] as u64 % 9,
            },
            16 => Request::Clear,
            17 | 18 => {
                let port = match f[3] % 4 {
                    0 => CONTROL.port(),
                    1 => DATA_PORTS[0],
                    2 => DATA_PORTS[1],
                    _ => b.u16(),
                };
                let ip = if f[4].is_multiple_of(8) {
                    Ipv4Addr::UNSPECIFIED
                } else {
                    Ipv4Addr::LOCALHOST
                };
                let network = Network::udp(SocketAddrV4::new(ip, port), scratch);
                if f[0] % 24 == 17 {
                    Request::TargetNetwork {
                        data_id: small(f[2]),
                        network,
                    }
                } else {
                    Request::SourceNetwork {
                        data_id: small(f[2]),
                        network,
                    }
                }
            }
            19 => Request::Scope {
                data_id: small(f[2]),
                scope: f[3] % 4,
            },
            20 => Request::State,
            21 => Request::Error,
            22 => Request::Logging {
                category: f[2],
                level: f[3],
                mode: f[4],
            },
            _ => Request::Log {
                category: f[2],
                max: f[3],
            },
        }
    }
}

impl Default for Harness {
    fn default() -> Harness {
        Harness::new()
    }
}

/// The states a session passes on its way to a run, for seeds and tests:
/// the slave registered in `mode` (a [`OpMode`] code), configured with
/// inputs a and d in data id 1 from a data port, outputs y, z, w in data
/// id 2 to the master, and prepared and configured.
pub fn configure(h: &mut Harness, mode: u8) {
    let uuid = h.slave.description().uuid;
    let steps: &[Request<'_>] = &[
        Request::Register {
            state: 0,
            uuid,
            op_mode: mode,
            major: 1,
            minor: 0,
        },
        Request::TimeRes {
            numerator: 1,
            denominator: 100,
        },
        Request::Input {
            data_id: 1,
            pos: 0,
            target_vr: 1,
            source_type: 0,
        },
        Request::Input {
            data_id: 1,
            pos: 1,
            target_vr: 4,
            source_type: 9,
        },
        Request::Output {
            data_id: 2,
            pos: 0,
            source_vr: 5,
        },
        Request::Output {
            data_id: 2,
            pos: 1,
            source_vr: 6,
        },
        Request::Output {
            data_id: 2,
            pos: 2,
            source_vr: 7,
        },
        Request::Steps { steps: 1, data_id: 2 },
        Request::Scope { data_id: 1, scope: 0 },
        Request::Scope { data_id: 2, scope: 0 },
    ];
    for body in steps {
        h.request(*body);
    }
    let mut a = [0; 6];
    let mut b = [0; 6];
    h.request(Request::SourceNetwork {
        data_id: 1,
        network: Network::udp(SocketAddrV4::new(Ipv4Addr::LOCALHOST, DATA_PORTS[0]), &mut a),
    });
    h.request(Request::TargetNetwork {
        data_id: 2,
        network: Network::udp(MASTER, &mut b),
    });
    h.request(Request::Prepare {
        state: State::Configuration.code(),
    });
    h.request(Request::Configure {
        state: State::Prepared.code(),
    });
}

/// The fuzz target: a fresh slave, optionally brought to CONFIGURED first
/// (the first byte says how), then the operations of the rest.
pub fn dcp_slave(data: &[u8]) {
    let mut b = Bytes(data);
    let mut h = Harness::new();
    match b.u8() % 4 {
        0 => {}
        1 => configure(&mut h, OpMode::NonRealTime.code()),
        2 => configure(&mut h, OpMode::SoftRealTime.code()),
        _ => configure(&mut h, OpMode::HardRealTime.code()),
    }
    let mut ops = 0;
    while b.more() && ops < 2000 {
        h.operate(&mut b);
        ops += 1;
    }
}
