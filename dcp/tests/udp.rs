//! A slave serving on loopback UDP (the driver of `dcp/examples/`, on a
//! thread of this test), driven by a master written here from raw
//! datagrams: each sequence that once crashed the slave, or that it
//! answered against the specification, with the answer it must give. After
//! each, the slave still answers, and its thread ends without a panic.

use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tandem_dcp::pdu::{DataKind, Network, Pdu, Request, Response};
use tandem_dcp::slave::model::ModelMember;
use tandem_dcp::slave::{Slave, SlaveConfig};
use tandem_dcp::types::{ErrorCode, OpMode, State};

/// The driver's value references: its input, then its outputs.
const DISTANCE: u64 = 1;
const ROAD_GRADE: u64 = 3;

/// A slave serving on its own thread, stopped and joined when dropped.
struct Serving {
    address: SocketAddrV4,
    uuid: [u8; 16],
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Serving {
    /// The example driver as a slave on an ephemeral port (`extra` keys
    /// in its file).
    fn start(extra: &str) -> Serving {
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
        let text =
            format!("name = \"driver\"\nsource = \"driver.json\"\nstep = 0.01\ncontrol = \"127.0.0.1:0\"\n{extra}");
        let config = SlaveConfig::parse(&text, &examples.join("driver.toml")).unwrap();
        let identity = config.identity();
        let uuid = identity.uuid;
        let member = ModelMember::load(config).unwrap();
        let mut slave = Slave::new(identity, Box::new(member)).unwrap();
        let address = slave.local_addr();
        let stop = Arc::new(AtomicBool::new(false));
        let halt = stop.clone();
        let thread = thread::spawn(move || slave.serve(&halt, &mut |_| {}).unwrap());
        Serving {
            address,
            uuid,
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let ended = t.join();
            if !thread::panicking() {
                assert!(ended.is_ok(), "the slave's thread panicked");
            }
        }
    }
}

/// A master of raw datagrams.
struct Master {
    socket: UdpSocket,
    slave: SocketAddrV4,
    seq: u16,
}

impl Master {
    fn new(slave: SocketAddrV4) -> Master {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
        Master { socket, slave, seq: 0 }
    }

    /// Everything that comes back within a short while.
    fn answers(&self) -> Vec<Vec<u8>> {
        let mut got = Vec::new();
        let mut buf = [0; 65536];
        let until = Instant::now() + Duration::from_millis(300);
        while Instant::now() < until {
            if let Ok(n) = self.socket.recv(&mut buf) {
                got.push(buf[..n].to_vec());
            }
        }
        got
    }

    /// Sends `body` with the next sequence id; its answers. The id is used
    /// once the slave answered the request in sequence: acknowledged, or
    /// refused for anything but its sequence id (as DCPLib's slave and
    /// Tandem's count it).
    fn send(&mut self, body: Request<'_>) -> Vec<Vec<u8>> {
        let bytes = Pdu::Request {
            seq: self.seq,
            receiver: 1,
            body,
        }
        .to_vec();
        self.socket.send_to(&bytes, self.slave).unwrap();
        let answers = self.answers();
        let used = answers.iter().any(|a| match Pdu::read(a) {
            Ok(Pdu::Response { seq, body, .. }) if seq == self.seq => match body {
                Response::Nack { error, .. } => error != ErrorCode::InvalidSequenceId.code(),
                _ => true,
            },
            _ => false,
        });
        if used {
            self.seq = self.seq.wrapping_add(1);
        }
        answers
    }

    /// The refusal among `answers`: the request's id, the id the slave
    /// expects and the error code.
    fn nack(answers: &[Vec<u8>]) -> Option<(u16, u16, u16)> {
        answers.iter().find_map(|a| match Pdu::read(a) {
            Ok(Pdu::Response {
                seq,
                body: Response::Nack { expected, error },
                ..
            }) => Some((seq, expected, error)),
            _ => None,
        })
    }

    /// Sends `body` and expects it acknowledged.
    fn ok(&mut self, body: Request<'_>) -> Vec<Vec<u8>> {
        let answers = self.send(body);
        let acked = answers.iter().any(|a| {
            matches!(
                Pdu::read(a),
                Ok(Pdu::Response {
                    body: Response::Ack | Response::StateAck { .. },
                    ..
                })
            )
        });
        assert!(acked, "{} not acknowledged: {answers:02X?}", body.name());
        answers
    }

    /// Sends `body` and expects it refused with `code`.
    fn refused(&mut self, body: Request<'_>, code: ErrorCode) {
        let answers = self.send(body);
        let refusal = answers.iter().find_map(|a| match Pdu::read(a) {
            Ok(Pdu::Response {
                body: Response::Nack { error, .. },
                ..
            }) => Some(error),
            _ => None,
        });
        assert_eq!(refusal, Some(code.code()), "{}: {answers:02X?}", body.name());
    }

    /// The slave's state (`INF_state`): it is alive and answers.
    fn state(&mut self) -> State {
        let answers = self.send(Request::State);
        answers
            .iter()
            .find_map(|a| match Pdu::read(a) {
                Ok(Pdu::Response {
                    body: Response::StateAck { state },
                    ..
                }) => State::from_code(state),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no answer to INF_state: {answers:02X?}"))
    }

    /// Registers in `mode`.
    fn register(&mut self, uuid: [u8; 16], mode: OpMode) {
        self.ok(Request::Register {
            state: State::Alive.code(),
            uuid,
            op_mode: mode.code(),
            major: 1,
            minor: 0,
        });
    }

    /// Sends data `payload` of `id` (sequence `seq`) to `to`.
    fn data(&self, to: SocketAddrV4, id: u16, seq: u16, payload: &[u8]) {
        let bytes = Pdu::Data {
            kind: DataKind::InputOutput,
            seq,
            id,
            payload,
        }
        .to_vec();
        self.socket.send_to(&bytes, to).unwrap();
    }

    /// The master's address.
    fn local(&self) -> SocketAddrV4 {
        match self.socket.local_addr().unwrap() {
            SocketAddr::V4(a) => a,
            _ => unreachable!(),
        }
    }
}

/// A free port on loopback, for a data socket.
fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Configures the distance input in data id 1 from `source`, prepares.
fn input_from(m: &mut Master, source: SocketAddrV4) {
    let mut scratch = [0; 6];
    m.ok(Request::TimeRes {
        numerator: 1,
        denominator: 100,
    });
    m.ok(Request::Input {
        data_id: 1,
        pos: 0,
        target_vr: DISTANCE,
        source_type: 9,
    });
    m.ok(Request::SourceNetwork {
        data_id: 1,
        network: Network::udp(source, &mut scratch),
    });
    m.ok(Request::Scope { data_id: 1, scope: 0 });
    m.ok(Request::Prepare {
        state: State::Configuration.code(),
    });
}

#[test]
fn stc_deregister_and_stc_reset_with_a_data_port_other_than_the_control_port_leave_the_slave_serving() {
    let s = Serving::start("");
    let mut m = Master::new(s.address);
    let data_port = SocketAddrV4::new(*s.address.ip(), free_port());
    m.register(s.uuid, OpMode::NonRealTime);
    input_from(&mut m, data_port);
    m.ok(Request::Stop {
        state: State::Prepared.code(),
    });
    let answers = m.ok(Request::Deregister {
        state: State::Stopped.code(),
    });
    assert!(answers.contains(&vec![0xE0, 1, State::Alive.code()]), "{answers:02X?}");
    assert_eq!(m.state(), State::Alive);
    // Again, ending with a reset.
    let mut m = Master::new(s.address);
    m.register(s.uuid, OpMode::NonRealTime);
    input_from(&mut m, data_port);
    m.ok(Request::Stop {
        state: State::Prepared.code(),
    });
    m.ok(Request::Reset {
        state: State::Stopped.code(),
    });
    assert_eq!(m.state(), State::Configuration);
}

#[test]
fn one_input_configured_at_two_positions_takes_its_data_the_later_position_last() {
    let s = Serving::start("");
    let mut m = Master::new(s.address);
    m.register(s.uuid, OpMode::NonRealTime);
    let mut scratch = [0; 6];
    for (id, pos, vr, kind) in [
        (1, 0, DISTANCE, "in"),
        (1, 1, DISTANCE, "in"),
        (2, 0, ROAD_GRADE, "out"),
    ] {
        if kind == "in" {
            m.ok(Request::Input {
                data_id: id,
                pos,
                target_vr: vr,
                source_type: 9,
            });
        } else {
            m.ok(Request::Output {
                data_id: id,
                pos,
                source_vr: vr,
            });
        }
    }
    m.ok(Request::TargetNetwork {
        data_id: 2,
        network: Network::udp(m.local(), &mut scratch),
    });
    m.ok(Request::Scope { data_id: 2, scope: 0 });
    input_from(&mut m, s.address);
    m.ok(Request::Configure {
        state: State::Prepared.code(),
    });
    // Distance 0 at position 0, 100 m at position 1: past the 60 m where
    // the road climbs 4 %.
    let payload: Vec<u8> = [0.0f64, 100.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    m.data(s.address, 1, 0, &payload);
    m.ok(Request::Initialize {
        state: State::Configured.code(),
    });
    let answers = m.ok(Request::SendOutputs {
        state: State::Initialized.code(),
    });
    let grade = answers.iter().find_map(|a| match Pdu::read(a) {
        Ok(Pdu::Data { id: 2, payload, .. }) => Some(f64::from_le_bytes(payload.try_into().unwrap())),
        _ => None,
    });
    assert_eq!(grade, Some(0.04), "{answers:02X?}");
    assert_eq!(m.state(), State::Configured);
}

/// Registers in soft real time with one output at resolution
/// `numerator / denominator` and `steps` ticks.
fn soft_real_time_output(m: &mut Master, uuid: [u8; 16], (numerator, denominator): (u32, u32), steps: u32) {
    let mut scratch = [0; 6];
    m.register(uuid, OpMode::SoftRealTime);
    m.ok(Request::TimeRes { numerator, denominator });
    m.ok(Request::Output {
        data_id: 2,
        pos: 0,
        source_vr: ROAD_GRADE,
    });
    m.ok(Request::Steps { steps, data_id: 2 });
    m.ok(Request::TargetNetwork {
        data_id: 2,
        network: Network::udp(m.local(), &mut scratch),
    });
    m.ok(Request::Scope { data_id: 2, scope: 0 });
}

#[test]
fn a_soft_real_time_step_the_model_cannot_take_is_refused_with_invalid_steps() {
    let s = Serving::start("");
    // (2^32 - 1)^2 s: beyond any clock.
    let mut m = Master::new(s.address);
    soft_real_time_output(&mut m, s.uuid, (u32::MAX, 1), u32::MAX);
    m.refused(
        Request::Prepare {
            state: State::Configuration.code(),
        },
        ErrorCode::InvalidSteps,
    );
    assert_eq!(m.state(), State::Configuration);
    m.ok(Request::Deregister {
        state: State::Configuration.code(),
    });
    // 15 ms: not a whole number of 10 ms micro steps.
    let mut m = Master::new(s.address);
    soft_real_time_output(&mut m, s.uuid, (1, 1000), 15);
    m.refused(
        Request::Prepare {
            state: State::Configuration.code(),
        },
        ErrorCode::InvalidSteps,
    );
    m.ok(Request::Deregister {
        state: State::Configuration.code(),
    });
    // 20 ms is, and runs; a start time in the past is refused.
    let mut m = Master::new(s.address);
    soft_real_time_output(&mut m, s.uuid, (1, 1000), 20);
    m.ok(Request::Prepare {
        state: State::Configuration.code(),
    });
    m.ok(Request::Configure {
        state: State::Prepared.code(),
    });
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs() as i64;
    for start in [now - 10, -1, i64::MIN] {
        m.refused(
            Request::Run {
                state: State::Configured.code(),
                start,
            },
            ErrorCode::InvalidStartTime,
        );
    }
    m.ok(Request::Run {
        state: State::Configured.code(),
        start: 0,
    });
    m.ok(Request::Run {
        state: State::Synchronized.code(),
        start: 0,
    });
    thread::sleep(Duration::from_millis(100));
    assert_eq!(m.state(), State::Running);
}

#[test]
fn a_huge_lock_step_step_is_refused_with_invalid_steps_not_taken() {
    let s = Serving::start("");
    let mut m = Master::new(s.address);
    m.register(s.uuid, OpMode::NonRealTime);
    m.ok(Request::TimeRes {
        numerator: u32::MAX,
        denominator: 1,
    });
    m.ok(Request::Prepare {
        state: State::Configuration.code(),
    });
    m.ok(Request::Configure {
        state: State::Prepared.code(),
    });
    for state in [State::Configured, State::Synchronized] {
        m.ok(Request::Run {
            state: state.code(),
            start: 0,
        });
    }
    // 2^32 - 1 ticks of 2^32 - 1 s: 1.8e21 micro steps of 10 ms, which
    // the model would be stepping for ever.
    m.refused(
        Request::DoStep {
            state: State::Running.code(),
            steps: u32::MAX,
        },
        ErrorCode::InvalidSteps,
    );
    assert_eq!(m.state(), State::Running);
}

#[test]
fn cfg_steps_is_taken_in_lock_step_and_optional_there() {
    let s = Serving::start("");
    let mut m = Master::new(s.address);
    m.register(s.uuid, OpMode::NonRealTime);
    m.ok(Request::Steps { steps: 1, data_id: 2 });
    m.ok(Request::Clear);
    // Without it, an output data id still prepares in lock-step.
    let mut scratch = [0; 6];
    m.ok(Request::TimeRes {
        numerator: 1,
        denominator: 100,
    });
    m.ok(Request::Output {
        data_id: 2,
        pos: 0,
        source_vr: ROAD_GRADE,
    });
    m.ok(Request::TargetNetwork {
        data_id: 2,
        network: Network::udp(m.local(), &mut scratch),
    });
    m.ok(Request::Scope { data_id: 2, scope: 0 });
    m.ok(Request::Prepare {
        state: State::Configuration.code(),
    });
}

#[test]
fn another_masters_refused_requests_do_not_keep_a_silent_masters_registration_alive() {
    // The second master's registration: other bytes than the first's, and
    // the very same bytes (both start at sequence id 0, as Tandem's do).
    for seq in [1000u16, 0] {
        let s = Serving::start("master_timeout = 0.5\n");
        let mut first = Master::new(s.address);
        first.register(s.uuid, OpMode::NonRealTime);
        // The first master falls silent; a second one keeps asking to
        // register, refused as out of sequence until the first one's
        // registration times out.
        let mut second = Master::new(s.address);
        second.seq = seq;
        let [lo, hi] = seq.to_le_bytes();
        let mut refused = 0;
        let registered = (0..40).any(|_| {
            let answers = second.send(Request::Register {
                state: State::Alive.code(),
                uuid: s.uuid,
                op_mode: OpMode::NonRealTime.code(),
                major: 1,
                minor: 0,
            });
            refused += answers.iter().filter(|a| a.starts_with(&[0xB1, lo, hi, 0x01])).count();
            answers.iter().any(|a| a.starts_with(&[0xB0, lo, hi]))
        });
        assert!(
            registered,
            "sequence id {seq}: the second master was refused {refused} times and never registered"
        );
        assert!(
            refused > 0,
            "sequence id {seq}: the first master's registration was not in force"
        );
        assert_eq!(second.state(), State::Configuration);
    }
}

#[test]
fn malformed_and_foreign_datagrams_on_a_data_port_are_counted_not_fatal() {
    let s = Serving::start("");
    let mut m = Master::new(s.address);
    let data_port = SocketAddrV4::new(*s.address.ip(), free_port());
    m.register(s.uuid, OpMode::NonRealTime);
    input_from(&mut m, data_port);
    m.ok(Request::Configure {
        state: State::Prepared.code(),
    });
    let junk: [&[u8]; 5] = [&[], &[0xF0], &[0xF0, 0, 0, 1, 0, 1, 2], &[0x01; 70], &[0xB0, 0, 0, 1]];
    for bytes in junk {
        m.socket.send_to(bytes, data_port).unwrap();
        m.socket.send_to(bytes, s.address).unwrap();
    }
    m.data(data_port, 1, 0, &7.0f64.to_le_bytes());
    m.ok(Request::Initialize {
        state: State::Configured.code(),
    });
    assert_eq!(m.state(), State::Initialized);
}

#[test]
fn a_refused_request_uses_its_sequence_id_so_the_next_id_is_taken_after_a_refusal() {
    let s = Serving::start("");
    let mut m = Master::new(s.address);
    m.register(s.uuid, OpMode::NonRealTime);
    // Not allowed in CONFIGURATION: refused, and the next id expected.
    let refused = Request::Configure {
        state: State::Configuration.code(),
    };
    let answers = m.send(refused);
    let code = ErrorCode::NotAllowedInState.code();
    assert_eq!(Master::nack(&answers), Some((1, 2, code)), "{answers:02X?}");
    assert_eq!(m.seq, 2);
    // The refusal is answered again to a repeat (a lost answer), and the
    // repeat uses no id.
    m.seq = 1;
    assert_eq!(Master::nack(&m.send(refused)), Some((1, 2, code)));
    assert_eq!(m.seq, 2);
    // The next request takes the next id, as DCPLib's master sends it.
    m.ok(Request::TimeRes {
        numerator: 1,
        denominator: 100,
    });
    assert_eq!(m.seq, 3);
    // The id of the refused request is not taken again.
    m.seq = 1;
    let answers = m.send(Request::State);
    assert_eq!(
        Master::nack(&answers),
        Some((1, 3, ErrorCode::InvalidSequenceId.code())),
        "{answers:02X?}"
    );
    m.seq = 3;
    assert_eq!(m.state(), State::Configuration);
}

#[test]
fn requests_from_an_address_other_than_the_registered_masters_are_refused() {
    let s = Serving::start("");
    let mut m = Master::new(s.address);
    m.register(s.uuid, OpMode::NonRealTime);
    // Another address, with the very id the master would send next.
    let mut other = Master::new(s.address);
    other.seq = m.seq;
    for body in [
        Request::State,
        Request::Deregister {
            state: State::Configuration.code(),
        },
    ] {
        let answers = other.send(body);
        assert_eq!(
            Master::nack(&answers),
            Some((m.seq, m.seq, ErrorCode::InvalidSequenceId.code())),
            "{}: {answers:02X?}",
            body.name()
        );
        assert!(answers.iter().all(|a| a[0] == 0xB1), "{answers:02X?}");
    }
    // The master is still registered, and its next id is still its own.
    assert_eq!(m.state(), State::Configuration);
    m.ok(Request::Deregister {
        state: State::Configuration.code(),
    });
    // Once it deregistered, anyone may register.
    other.register(s.uuid, OpMode::NonRealTime);
    assert_eq!(other.state(), State::Configuration);
}
