//! The slave itself: its sockets, its state machine, and its model.

use std::collections::BTreeMap;
use std::io;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tandem_config::{ConfigError, DcpEndpoint};
use tandem_io::poll::{wait_readable, MAX_WAITED};
use tandem_runtime::tandem::metrics::{Histogram, Snapshot};

use super::member::Member;
use super::realtime::age_histogram;
use super::wiring::Wiring;
use super::SlaveCounters;
use crate::description::Description;
use crate::net::{send_all, BATCH};
use crate::pdu::{request_header, unwrap_seq, DataKind, Pdu, Request, Response};
use crate::types::{ErrorCode, OpMode, Scope, State, MAX_PDU, VERSION};

/// Why a slave cannot start or go on.
#[derive(Debug, thiserror::Error)]
pub enum SlaveError {
    /// Its file or its model.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Its model cannot be described.
    #[error("{file}: {message}")]
    Model {
        /// The slave file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// A socket.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: io::Error,
    },
}

/// The master a slave is registered with.
#[derive(Clone, Copy, Debug)]
struct Registration {
    id: u8,
    op_mode: OpMode,
    master: SocketAddr,
    /// The sequence id of the last request carried out.
    last_seq: u16,
}

/// Datagrams in one buffer: their bytes back to back, and each one's
/// address and place in it. Kept within its first capacity, adding and
/// clearing allocate nothing.
struct Datagrams {
    bytes: Vec<u8>,
    list: Vec<(SocketAddrV4, Range<usize>)>,
}

impl Datagrams {
    /// Room for `count` datagrams of `bytes` bytes in all.
    fn with_capacity(bytes: usize, count: usize) -> Datagrams {
        Datagrams {
            bytes: Vec::with_capacity(bytes),
            list: Vec::with_capacity(count),
        }
    }

    /// Whether `bytes` more would pass the first capacity.
    fn full_for(&self, bytes: &[u8]) -> bool {
        self.list.len() == self.list.capacity() || self.bytes.len() + bytes.len() > self.bytes.capacity()
    }

    /// Adds `bytes` for `to` (an IPv6 peer cannot be one of the slave's).
    fn push(&mut self, to: SocketAddr, bytes: &[u8]) {
        let SocketAddr::V4(to) = to else { return };
        let start = self.bytes.len();
        self.bytes.extend_from_slice(bytes);
        self.list.push((to, start..self.bytes.len()));
    }

    /// Forgets them all.
    fn clear(&mut self) {
        self.list.clear();
        self.bytes.clear();
    }

    /// Each one's address and bytes, in the order added.
    fn iter(&self) -> impl Iterator<Item = (SocketAddrV4, &[u8])> {
        self.list.iter().map(|(to, range)| (*to, &self.bytes[range.clone()]))
    }
}

/// Datagrams waiting to be sent together, in one buffer made at start-up:
/// queueing and sending allocate nothing (a burst that would not fit is
/// sent first).
struct Outbox {
    socket: UdpSocket,
    waiting: Datagrams,
}

/// The bytes an outbox holds.
const OUTBOX_BYTES: usize = 4 * MAX_PDU;
/// The datagrams it holds.
const OUTBOX_DATAGRAMS: usize = 64;

impl Outbox {
    /// An outbox sending from `socket`.
    fn new(socket: UdpSocket) -> Outbox {
        Outbox {
            socket,
            waiting: Datagrams::with_capacity(OUTBOX_BYTES, OUTBOX_DATAGRAMS),
        }
    }

    /// Queues `bytes` for `to`.
    fn queue(&mut self, to: SocketAddr, bytes: &[u8]) {
        if self.waiting.full_for(bytes) {
            self.flush();
        }
        self.waiting.push(to, bytes);
    }

    /// Sends what is queued (a datagram that cannot leave is lost, as on
    /// the wire).
    fn flush(&mut self) {
        let mut burst: [(SocketAddrV4, &[u8]); BATCH] =
            [(SocketAddrV4::new(std::net::Ipv4Addr::UNSPECIFIED, 0), &[]); BATCH];
        let mut n = 0;
        for datagram in self.waiting.iter() {
            burst[n] = datagram;
            n += 1;
            if n == BATCH {
                let _ = send_all(&self.socket, &burst);
                n = 0;
            }
        }
        let _ = send_all(&self.socket, &burst[..n]);
        self.waiting.clear();
    }
}

/// The clock of a real-time run: point `k` is due at `origin + k h`.
#[derive(Clone, Copy, Debug)]
struct RealTime {
    origin: Instant,
    next: i64,
}

/// Who a slave is and where it listens.
#[derive(Clone, Debug)]
pub struct Identity {
    /// Its name.
    pub name: String,
    /// Its UUID.
    pub uuid: [u8; 16],
    /// Where it listens, and how long it waits for its master.
    pub endpoint: DcpEndpoint,
}

/// A DCP slave running one Tandem model or run.
pub struct Slave {
    identity: Identity,
    member: Box<dyn Member>,
    description: Description,
    control: UdpSocket,
    /// Data sockets bound for `CFG_source_network_information` on ports
    /// other than the control port.
    data: Vec<UdpSocket>,
    state: State,
    registration: Option<Registration>,
    /// The last request carried out.
    last_request: Vec<u8>,
    /// Everything the last request sent, to send again when it is
    /// repeated (buffers kept from request to request).
    replies: Datagrams,
    /// What is to be sent at the end of the current burst.
    outbox: Outbox,
    /// A request is being answered: what is sent is kept in `replies`.
    answering: bool,
    wiring: Wiring,
    /// Resolution ticks since t = 0.
    ticks: u64,
    /// The newest full sequence count of each input data id.
    in_seq: BTreeMap<u16, i64>,
    /// The next sequence id of each output data id.
    out_seq: BTreeMap<u16, u16>,
    /// Input data arrived since the last step.
    fresh: bool,
    /// The previous step had fresh data: the next one waits for it.
    expect_data: bool,
    /// The age of input data on arrival in real time.
    ages: Histogram,
    realtime: Option<RealTime>,
    last_heard: Instant,
    last_error: ErrorCode,
    counters: SlaveCounters,
    /// A run stopped or failed since `serve` last said so.
    ended: bool,
    rx: Vec<u8>,
    out: Vec<u8>,
}

impl Slave {
    /// A slave of `member`, its control socket bound.
    pub fn new(identity: Identity, member: Box<dyn Member>) -> Result<Slave, SlaveError> {
        let endpoint = identity.endpoint;
        let control = UdpSocket::bind(endpoint.control).map_err(|source| SlaveError::Io {
            what: format!("cannot listen on {} for control PDUs", endpoint.control),
            source,
        })?;
        control.set_nonblocking(true).map_err(|source| SlaveError::Io {
            what: "cannot make the control socket non-blocking".into(),
            source,
        })?;
        let local = match control.local_addr() {
            Ok(SocketAddr::V4(a)) => a,
            _ => endpoint.control,
        };
        let outgoing = control.try_clone().map_err(|source| SlaveError::Io {
            what: "cannot share the control socket".into(),
            source,
        })?;
        let description = describe_at(&identity, member.as_ref(), local.port());
        Ok(Slave {
            identity,
            member,
            description,
            control,
            data: Vec::new(),
            state: State::Alive,
            registration: None,
            last_request: Vec::with_capacity(MAX_PDU),
            replies: Datagrams::with_capacity(MAX_PDU, OUTBOX_DATAGRAMS),
            outbox: Outbox::new(outgoing),
            answering: false,
            wiring: Wiring::default(),
            ticks: 0,
            in_seq: BTreeMap::new(),
            out_seq: BTreeMap::new(),
            fresh: false,
            expect_data: false,
            ages: age_histogram(),
            realtime: None,
            last_heard: Instant::now(),
            last_error: ErrorCode::None,
            counters: SlaveCounters::default(),
            ended: false,
            rx: vec![0; MAX_PDU + 1],
            out: Vec::with_capacity(MAX_PDU),
        })
    }

    /// Its description.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The address its control socket is bound to.
    pub fn local_addr(&self) -> SocketAddrV4 {
        match self.control.local_addr() {
            Ok(SocketAddr::V4(a)) => a,
            _ => self.identity.endpoint.control,
        }
    }

    /// What it counted so far.
    pub fn counters(&self) -> SlaveCounters {
        self.counters
    }

    /// The ages of input data on arrival in real time (s).
    pub fn data_ages(&self) -> Snapshot {
        self.ages.snapshot()
    }

    /// What its member's last real-time run reported, once, if it reports.
    pub fn run_report(&mut self) -> Option<String> {
        self.member.report()
    }

    /// Serves masters until `stop` is set: requests, data and, in real
    /// time, the steps on its own clock; `run_ended` is called after each
    /// run that stopped or failed.
    pub fn serve(&mut self, stop: &AtomicBool, run_ended: &mut dyn FnMut(&mut Slave)) -> Result<(), SlaveError> {
        while !stop.load(Ordering::Relaxed) {
            let timeout = match (self.realtime, self.step_h()) {
                (Some(rt), Some(h)) if self.state.runs() => {
                    let due = rt.origin + Duration::from_secs_f64(h * rt.next as f64);
                    due.saturating_duration_since(Instant::now())
                        .min(Duration::from_millis(50))
                }
                _ => Duration::from_millis(50),
            };
            let mut fds = [self.control.as_raw_fd(); MAX_WAITED];
            let n = 1 + self.data.len().min(MAX_WAITED - 1);
            for (fd, s) in fds[1..].iter_mut().zip(&self.data) {
                *fd = s.as_raw_fd();
            }
            wait_readable(&fds[..n], timeout).map_err(|source| SlaveError::Io {
                what: "cannot wait for PDUs".into(),
                source,
            })?;
            self.drain();
            self.realtime_steps();
            self.watch_master();
            self.outbox.flush();
            if std::mem::take(&mut self.ended) {
                run_ended(self);
            }
        }
        Ok(())
    }

    /// Handles every datagram waiting on its sockets.
    fn drain(&mut self) {
        for k in 0..=self.data.len() {
            loop {
                let socket = if k == 0 { &self.control } else { &self.data[k - 1] };
                match socket.recv_from(&mut self.rx) {
                    Ok((n, from)) => {
                        let bytes = std::mem::take(&mut self.rx);
                        self.datagram(&bytes[..n.min(MAX_PDU)], from);
                        self.rx = bytes;
                    }
                    Err(_) => break,
                }
            }
        }
    }

    /// One datagram.
    fn datagram(&mut self, bytes: &[u8], from: SocketAddr) {
        match Pdu::read(bytes) {
            Ok(Pdu::Request { seq, receiver, body }) => self.request(bytes, seq, receiver, body, from),
            Ok(Pdu::Data {
                kind: DataKind::InputOutput,
                seq,
                id,
                payload,
            }) => self.data_in(seq, id, payload),
            Ok(_) => self.counters.malformed += 1,
            Err(_) => {
                self.counters.malformed += 1;
                // A request of the wrong length is answered, if it is ours.
                if let Some((_, seq, receiver)) = request_header(bytes) {
                    if self.for_me(receiver) && self.sequence_ok(seq) {
                        self.nack(seq, receiver, ErrorCode::InvalidLength, from);
                    }
                }
            }
        }
    }

    /// Whether a request with `receiver` is for this slave.
    fn for_me(&self, receiver: u8) -> bool {
        match self.registration {
            Some(r) => r.id == receiver,
            None => receiver > 0,
        }
    }

    /// Whether `seq` is the next sequence id (always, before registration).
    fn sequence_ok(&self, seq: u16) -> bool {
        self.registration.is_none_or(|r| r.last_seq.wrapping_add(1) == seq)
    }

    /// A request of the master.
    fn request(&mut self, bytes: &[u8], seq: u16, receiver: u8, body: Request<'_>, from: SocketAddr) {
        if !self.for_me(receiver) {
            self.counters.malformed += 1;
            return;
        }
        self.last_heard = Instant::now();
        if let Some(r) = self.registration {
            if seq == r.last_seq && bytes == self.last_request.as_slice() {
                self.counters.repeats += 1;
                for (to, reply) in self.replies.iter() {
                    self.outbox.queue(SocketAddr::V4(to), reply);
                }
                return;
            }
            if !self.sequence_ok(seq) {
                self.nack(seq, receiver, ErrorCode::InvalidSequenceId, from);
                return;
            }
        }
        self.counters.requests += 1;
        self.replies.clear();
        self.answering = true;
        let result = self
            .supported(&body)
            .and_then(|()| self.allowed(&body))
            .and_then(|()| self.carry_out(seq, receiver, body, from));
        self.answering = false;
        match result {
            Ok(()) => {
                if let Some(r) = &mut self.registration {
                    r.last_seq = seq;
                }
                self.last_request.clear();
                self.last_request.extend_from_slice(bytes);
            }
            Err(code) => self.nack(seq, receiver, code, from),
        }
    }

    /// Refuses a request.
    fn nack(&mut self, seq: u16, receiver: u8, code: ErrorCode, from: SocketAddr) {
        self.counters.refused += 1;
        let expected = self.registration.map_or(seq, |r| r.last_seq.wrapping_add(1));
        let pdu = Pdu::Response {
            seq,
            sender: receiver,
            body: Response::Nack {
                expected,
                error: code.code(),
            },
        };
        pdu.write(&mut self.out);
        self.outbox.queue(from, &self.out);
    }

    /// The support check: what this slave never does, or not in its mode.
    fn supported(&self, body: &Request<'_>) -> Result<(), ErrorCode> {
        // The mode's own refusals need a mode: before registration the
        // state check answers.
        let mode = self.registration.map(|r| r.op_mode);
        let nrt = mode == Some(OpMode::NonRealTime);
        match body {
            Request::Logging { .. } | Request::Log { .. } => Err(ErrorCode::NotSupportedPdu),
            Request::Steps { .. } if nrt => Err(ErrorCode::NotSupportedPdu),
            Request::DoStep { .. } if mode.is_some() && !nrt => Err(ErrorCode::NotSupportedPdu),
            _ => Ok(()),
        }
    }

    /// The state check: which requests each state takes.
    fn allowed(&self, body: &Request<'_>) -> Result<(), ErrorCode> {
        use State::*;
        let s = self.state;
        let ok = match body {
            Request::Register { .. } => s == Alive,
            Request::Deregister { .. } => matches!(s, Configuration | Stopped | ErrorResolved),
            Request::Prepare { .. } => s == Configuration,
            Request::Configure { .. } => s == Prepared,
            Request::Initialize { .. } => s == Configured,
            Request::Run { .. } => matches!(s, Configured | Synchronized),
            Request::DoStep { .. } => s.runs(),
            Request::SendOutputs { .. } => matches!(s, Initialized | Computed),
            Request::Stop { .. } => s.stoppable(),
            Request::Reset { .. } => matches!(s, Stopped | ErrorResolved),
            Request::State => true,
            Request::Error => matches!(s, ErrorHandling | ErrorResolved),
            Request::Log { .. } => s != Alive,
            _ => s == Configuration,
        };
        if ok {
            Ok(())
        } else {
            Err(ErrorCode::NotAllowedInState)
        }
    }

    /// The semantic checks and the request carried out.
    fn carry_out(&mut self, seq: u16, receiver: u8, body: Request<'_>, from: SocketAddr) -> Result<(), ErrorCode> {
        if body.state().is_some_and(|s| s != self.state.code()) {
            return Err(ErrorCode::InvalidStateId);
        }
        match body {
            Request::Register {
                uuid,
                op_mode,
                major,
                minor,
                ..
            } => {
                if uuid != self.description.uuid {
                    return Err(ErrorCode::InvalidUuid);
                }
                let op_mode = OpMode::from_code(op_mode)
                    .filter(|m| self.description.op_modes.contains(m))
                    .ok_or(ErrorCode::InvalidOpMode)?;
                if let Err(why) = self.member.admits(op_mode) {
                    eprintln!("{}: {why}", self.identity.name);
                    return Err(ErrorCode::InvalidOpMode);
                }
                if major != VERSION.0 {
                    return Err(ErrorCode::InvalidMajorVersion);
                }
                if minor != VERSION.1 {
                    return Err(ErrorCode::InvalidMinorVersion);
                }
                self.registration = Some(Registration {
                    id: receiver,
                    op_mode,
                    master: from,
                    last_seq: seq,
                });
                self.ack(seq);
                self.enter(State::Configuration);
            }
            Request::State => {
                let pdu = Pdu::Response {
                    seq,
                    sender: receiver,
                    body: Response::StateAck {
                        state: self.state.code(),
                    },
                };
                self.reply_to(from, pdu);
            }
            Request::Error => {
                let pdu = Pdu::Response {
                    seq,
                    sender: receiver,
                    body: Response::ErrorAck {
                        error: self.last_error.code(),
                    },
                };
                self.reply_to(from, pdu);
            }
            Request::Deregister { .. } => {
                self.ack(seq);
                self.enter(State::Alive);
                self.forget();
            }
            Request::Reset { .. } => {
                self.ack(seq);
                self.wiring = Wiring::default();
                self.data.clear();
                self.enter(State::Configuration);
            }
            Request::Prepare { .. } => {
                let nrt = self.op_mode() == OpMode::NonRealTime;
                if let Some(code) = self.wiring.incomplete(false, !nrt) {
                    return Err(code);
                }
                self.open_data_sockets()?;
                self.ack(seq);
                self.enter(State::Preparing);
                self.enter(State::Prepared);
            }
            Request::Configure { .. } => {
                self.ack(seq);
                self.enter(State::Configuring);
                // A model that cannot start is a fault of the transition.
                if let Err(e) = self.start_model() {
                    self.fail(&e);
                    return Ok(());
                }
                self.enter(State::Configured);
            }
            Request::Initialize { .. } => {
                self.take_fresh_data()?;
                self.ack(seq);
                self.enter(State::Initializing);
                self.evaluate();
                self.enter(State::Initialized);
            }
            Request::SendOutputs { .. } => {
                self.ack(seq);
                if self.state == State::Initialized {
                    self.enter(State::SendingI);
                    self.send_outputs(true);
                    self.enter(State::Configured);
                } else {
                    self.enter(State::SendingD);
                    self.send_outputs(false);
                    self.enter(State::Running);
                }
            }
            Request::Run { start, .. } => self.run(seq, start)?,
            Request::DoStep { steps, .. } => {
                let h = self.seconds(steps as u64).ok_or(ErrorCode::InvalidSteps)?;
                if steps == 0 || !self.whole_micro_steps(h) {
                    return Err(ErrorCode::InvalidSteps);
                }
                self.take_fresh_data()?;
                self.ack(seq);
                self.enter(State::Computing);
                let t = self.seconds(self.ticks).unwrap_or(0.0);
                if let Err(e) = self.member.step(t, h) {
                    self.fail(&e);
                    return Ok(());
                }
                self.ticks += steps as u64;
                self.enter(State::Computed);
            }
            Request::Stop { .. } => {
                self.ack(seq);
                self.enter(State::Stopping);
                self.outbox.flush();
                self.end_real_time();
                self.enter(State::Stopped);
            }
            config => {
                self.configure(config)?;
                self.ack(seq);
            }
        }
        Ok(())
    }

    /// A `CFG_*` request.
    fn configure(&mut self, body: Request<'_>) -> Result<(), ErrorCode> {
        let ports = &self.description.ports;
        match body {
            Request::TimeRes { numerator, denominator } => {
                if numerator == 0 || denominator == 0 {
                    return Err(ErrorCode::InvalidTimeResolution);
                }
                self.wiring.resolution = Some((numerator, denominator));
            }
            Request::Steps { steps, data_id } => {
                if steps == 0 {
                    return Err(ErrorCode::InvalidSteps);
                }
                self.wiring.steps.insert(data_id, steps);
            }
            Request::Input {
                data_id,
                pos,
                target_vr,
                source_type,
            } => self.wiring.input(ports, data_id, pos, target_vr, source_type)?,
            Request::Output {
                data_id,
                pos,
                source_vr,
            } => self.wiring.output(ports, data_id, pos, source_vr)?,
            Request::Clear => self.wiring = Wiring::default(),
            Request::TargetNetwork { data_id, network } | Request::SourceNetwork { data_id, network } => {
                if network.transport != crate::types::Transport::UdpIpv4.code() {
                    return Err(ErrorCode::InvalidTransportProtocol);
                }
                let address = network.as_udp().ok_or(ErrorCode::InvalidNetworkInformation)?;
                if matches!(body, Request::TargetNetwork { .. }) {
                    if address.ip().is_unspecified() || address.port() == 0 {
                        return Err(ErrorCode::InvalidNetworkInformation);
                    }
                    let targets = self.wiring.targets.entry(data_id).or_default();
                    if !targets.contains(&address) {
                        targets.push(address);
                    }
                } else {
                    self.wiring.sources.insert(data_id, address);
                }
            }
            Request::Parameter { .. } | Request::TunableParameter { .. } => {
                return Err(ErrorCode::InvalidValueReference)
            }
            Request::ParamNetwork { network, .. } => {
                if network.transport != crate::types::Transport::UdpIpv4.code() {
                    return Err(ErrorCode::InvalidTransportProtocol);
                }
            }
            Request::Scope { data_id, scope } => {
                let scope = Scope::from_code(scope).ok_or(ErrorCode::InvalidScope)?;
                self.wiring.scopes.insert(data_id, scope);
            }
            _ => return Err(ErrorCode::NotAllowedInState),
        }
        Ok(())
    }

    /// `STC_run`: from CONFIGURED to SYNCHRONIZED at once (the start time
    /// is the real-time clock's origin), from SYNCHRONIZED to RUNNING.
    fn run(&mut self, seq: u16, start: i64) -> Result<(), ErrorCode> {
        if self.state == State::Synchronized {
            self.ack(seq);
            self.enter(State::Running);
            return Ok(());
        }
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        if start != 0 && (start as f64) < now.as_secs_f64().floor() {
            return Err(ErrorCode::InvalidStartTime);
        }
        let mode = self.op_mode();
        let origin = Instant::now() + Duration::from_secs(start.max(0) as u64).saturating_sub(now);
        let h = match mode {
            OpMode::NonRealTime => 0.0,
            _ => self.step_h().ok_or(ErrorCode::InvalidTimeResolution)?,
        };
        self.ack(seq);
        self.enter(State::Synchronizing);
        // The master hears the acceptance before the start's work.
        self.outbox.flush();
        if mode != OpMode::NonRealTime {
            // A start that fails is a fault of the transition.
            if let Err(e) = self.member.start(origin, h, mode == OpMode::HardRealTime) {
                self.fail(&e);
                return Ok(());
            }
            self.realtime = Some(RealTime { origin, next: 0 });
        }
        self.enter(State::Synchronized);
        Ok(())
    }

    /// Ends a real-time run, if one is on.
    fn end_real_time(&mut self) {
        if self.realtime.take().is_some() {
            self.member.stop();
        }
    }

    /// Binds a socket for every input data id that comes in on a port
    /// other than the control port.
    fn open_data_sockets(&mut self) -> Result<(), ErrorCode> {
        let control = self.local_addr();
        self.data.clear();
        let mut ports: Vec<u16> = self.wiring.sources.values().map(|a| a.port()).collect();
        ports.sort_unstable();
        ports.dedup();
        for port in ports.into_iter().filter(|&p| p != control.port()) {
            let socket = UdpSocket::bind(SocketAddrV4::new(*self.identity.endpoint.control.ip(), port))
                .map_err(|_| ErrorCode::InvalidNetworkInformation)?;
            socket
                .set_nonblocking(true)
                .map_err(|_| ErrorCode::InvalidNetworkInformation)?;
            self.data.push(socket);
        }
        Ok(())
    }

    /// Loads the model afresh at t = 0 and computes its first outputs.
    fn start_model(&mut self) -> Result<(), String> {
        self.end_real_time();
        self.member.configure()?;
        self.ticks = 0;
        self.in_seq.clear();
        self.out_seq.clear();
        self.fresh = false;
        self.expect_data = false;
        Ok(())
    }

    /// In lock-step, refuses a step whose input data has not arrived after
    /// the previous step had data; then starts waiting for the next.
    fn take_fresh_data(&mut self) -> Result<(), ErrorCode> {
        let lock_step = self.op_mode() == OpMode::NonRealTime && !self.wiring.inputs.is_empty();
        if lock_step && self.expect_data && !self.fresh {
            return Err(ErrorCode::Generic);
        }
        self.expect_data = self.fresh;
        self.fresh = false;
        Ok(())
    }

    /// The outputs at the current point with the current inputs.
    fn evaluate(&mut self) {
        if let Err(e) = self.member.evaluate() {
            let message = format!(
                "the model failed at t = {} s: {e}",
                self.seconds(self.ticks).unwrap_or(0.0)
            );
            self.fail(&message);
        }
    }

    /// Sends every output data id in force now. Allocates nothing but the
    /// copies kept to answer a repeated request.
    fn send_outputs(&mut self, initializing: bool) {
        let Slave {
            wiring,
            out_seq,
            out,
            member,
            counters,
            replies,
            outbox,
            answering,
            ..
        } = self;
        let mut failed = None;
        member.collect();
        'ids: for (&id, slots) in &wiring.outputs {
            if !wiring.active(id, initializing) {
                continue;
            }
            let seq = out_seq.entry(id).or_insert(0);
            Pdu::data_header(DataKind::InputOutput, *seq, id, out);
            *seq = seq.wrapping_add(1);
            if let Err(e) = member.give(slots, out) {
                failed = Some(e);
                break 'ids;
            }
            for to in &wiring.targets[&id] {
                outbox.queue(SocketAddr::V4(*to), out);
                counters.data_out += 1;
                if *answering {
                    replies.push(SocketAddr::V4(*to), out);
                }
            }
        }
        if let Some(message) = failed {
            self.fail(&message);
        }
    }

    /// A data PDU.
    fn data_in(&mut self, seq: u16, id: u16, payload: &[u8]) {
        use State::*;
        let initializing = matches!(self.state, Configured | Initializing | Initialized | SendingI);
        let taking = (Configured.code()..=SendingD.code()).contains(&self.state.code());
        let Some(slots) = self.wiring.inputs.get(&id) else {
            self.counters.malformed += 1;
            return;
        };
        if !taking {
            // A sender still running after this slave stopped, or already
            // before it runs.
            self.counters.data_stale += 1;
            return;
        }
        if !self.wiring.active(id, initializing) {
            return;
        }
        let last = self.in_seq.get(&id).copied();
        let full = unwrap_seq(last, seq);
        if let Some(last) = last {
            if full <= last {
                self.counters.data_stale += 1;
                return;
            }
            self.counters.data_lost += (full - last - 1) as u64;
        }
        if !self.member.take(slots, payload, full) {
            self.counters.malformed += 1;
            return;
        }
        self.in_seq.insert(id, full);
        self.fresh = true;
        self.counters.data_in += 1;
        if let (Some(rt), Some(h)) = (self.realtime, self.step_h()) {
            let sent = rt.origin + Duration::from_secs_f64(h * full.max(0) as f64);
            self.ages
                .record(Instant::now().saturating_duration_since(sent).as_secs_f64());
        }
    }

    /// The real-time steps now due: at point k, the outputs of point k
    /// leave, then the model steps to k + 1 with its inputs held or
    /// extrapolated from their newest samples.
    fn realtime_steps(&mut self) {
        let (Some(mut rt), Some(h)) = (self.realtime, self.step_h()) else {
            return;
        };
        if !self.state.runs() {
            return;
        }
        let now = Instant::now();
        let due = |k: i64| rt.origin + Duration::from_secs_f64(h * k as f64);
        if now < due(rt.next) {
            return;
        }
        if now > due(rt.next + 1) {
            self.counters.missed_deadlines += 1;
            if self.op_mode() == OpMode::HardRealTime {
                self.fail(&format!("missed the deadline of point {} in hard real time", rt.next));
                return;
            }
        }
        let k = rt.next;
        self.send_outputs(false);
        if !self.state.runs() {
            return;
        }
        let newest = self.wiring.inputs.keys().map(|id| self.in_seq.get(id).copied()).min();
        if k > 1 && newest.is_some_and(|p| p.is_none_or(|p| p < k - 1)) {
            self.counters.late_inputs += 1;
        }
        match self.member.advance(k, h) {
            Ok(()) => {
                rt.next = k + 1;
                self.realtime = Some(rt);
            }
            Err(e) => self.fail(&e),
        }
    }

    /// Stops and returns to ALIVE when the master has been silent too
    /// long.
    fn watch_master(&mut self) {
        let timeout = self.identity.endpoint.master_timeout;
        if self.registration.is_none() || self.last_heard.elapsed().as_secs_f64() < timeout {
            return;
        }
        self.counters.master_lost += 1;
        eprintln!(
            "{}: no request from the master for {timeout} s: stopped, waiting for a master again",
            self.identity.name,
        );
        self.last_error = ErrorCode::HeartbeatMissed;
        self.enter(State::ErrorHandling);
        self.end_real_time();
        self.enter(State::ErrorResolved);
        self.state = State::Alive;
        self.forget();
    }

    /// Goes to ERRORHANDLING and ERRORRESOLVED over a fault, saying why.
    fn fail(&mut self, message: &str) {
        eprintln!("{}: {message}", self.identity.name);
        self.last_error = ErrorCode::Generic;
        self.end_real_time();
        self.enter(State::ErrorHandling);
        self.enter(State::ErrorResolved);
    }

    /// Forgets the master and its configuration.
    fn forget(&mut self) {
        self.registration = None;
        self.wiring = Wiring::default();
        self.data.clear();
        self.end_real_time();
    }

    /// The registered operating mode (non-real-time before registration).
    fn op_mode(&self) -> OpMode {
        self.registration.map_or(OpMode::NonRealTime, |r| r.op_mode)
    }

    /// `ticks` of the resolution in seconds, once there is one.
    fn seconds(&self, ticks: u64) -> Option<f64> {
        let (n, d) = self.wiring.resolution?;
        Some(ticks as f64 * n as f64 / d as f64)
    }

    /// The real-time communication step: its outputs' steps (the least)
    /// at the resolution.
    fn step_h(&self) -> Option<f64> {
        let steps = self.wiring.steps.values().copied().min().unwrap_or(1);
        self.seconds(steps as u64)
    }

    /// Whether `h` is a whole number of the model's micro steps.
    fn whole_micro_steps(&self, h: f64) -> bool {
        let micro = self.member.micro_step();
        let n = (h / micro).round();
        n >= 1.0 && (n * micro - h).abs() <= 1e-9 * h
    }

    /// `RSP_ack` for `seq`.
    fn ack(&mut self, seq: u16) {
        let sender = self.registration.map_or(0, |r| r.id);
        if let Some(master) = self.registration.map(|r| r.master) {
            self.reply_to(
                master,
                Pdu::Response {
                    seq,
                    sender,
                    body: Response::Ack,
                },
            );
        }
    }

    /// Enters `state` and notifies the master.
    fn enter(&mut self, state: State) {
        self.state = state;
        self.ended |= matches!(state, State::Stopped | State::ErrorResolved);
        if let Some(r) = self.registration {
            self.reply_to(
                r.master,
                Pdu::StateChanged {
                    sender: r.id,
                    state: state.code(),
                },
            );
        }
    }

    /// Sends `pdu` to `to`, keeping it to answer a repeated request.
    fn reply_to(&mut self, to: SocketAddr, pdu: Pdu<'_>) {
        pdu.write(&mut self.out);
        self.outbox.queue(to, &self.out);
        if self.answering {
            self.replies.push(to, &self.out);
        }
    }
}

/// The DCP slave description of `member` served as `identity`, at the
/// configured control port.
pub fn describe(identity: &Identity, member: &dyn Member) -> Description {
    describe_at(identity, member, identity.endpoint.control.port())
}

/// The description of `member` served as `identity` on control port `port`.
fn describe_at(identity: &Identity, member: &dyn Member, port: u16) -> Description {
    let endpoint = identity.endpoint;
    Description {
        name: identity.name.clone(),
        uuid: identity.uuid,
        op_modes: member.op_modes().to_vec(),
        fixed_resolution: None,
        recommended_resolution: whole_per_second(member.micro_step()),
        control: Some(SocketAddrV4::new(endpoint.host, port)),
        heartbeat: Some(endpoint.master_timeout),
        ports: member.ports().clone(),
    }
}

/// `(1, n)` when `step` is `1 / n` s for a whole `n`: the resolution at
/// which one step count is one micro step.
fn whole_per_second(step: f64) -> Option<(u32, u32)> {
    let n = (1.0 / step).round();
    ((1.0..=u32::MAX as f64).contains(&n) && (n * step - 1.0).abs() < 1e-9).then_some((1, n as u32))
}
