//! The slave's state machine of DCP 1.0: each datagram read, each request
//! checked in the specified order (receiver, sequence, support, state,
//! state id, semantics), carried out, answered and notified; the master it
//! is registered with, and the faults that end a run.

use std::collections::BTreeMap;
use std::fmt;
use std::net::SocketAddr;
use std::time::Instant;

use tandem_runtime::tandem::metrics::{Histogram, Snapshot};

use super::counters::SlaveCounters;
use super::datagrams::{Datagrams, Outbox, OUTBOX_DATAGRAMS};
use super::describe::{describe_at, Identity};
use super::error::SlaveError;
use super::member::Member;
use super::pacing::{start_instant, Now, Pacing};
use super::realtime::age_histogram;
use super::sockets::{Net, Sockets};
use super::wiring::Wiring;
use crate::description::Description;
use crate::pdu::{request_header, DataKind, Pdu, Request, Response};
use crate::types::{ErrorCode, OpMode, State, MAX_PDU, VERSION};

/// The master a slave is registered with.
#[derive(Clone, Copy, Debug)]
pub(super) struct Registration {
    id: u8,
    op_mode: OpMode,
    master: SocketAddr,
    /// The sequence id of the last request carried out.
    last_seq: u16,
}

/// Where a slave's messages (faults, refusals it explains) go: its name,
/// and the message.
pub type Reporter = fn(&str, &str);

/// Prints a slave's message on standard error.
fn to_stderr(name: &str, message: &str) {
    eprintln!("{name}: {message}");
}

/// A DCP slave running one Tandem model or run.
pub struct Slave {
    pub(super) identity: Identity,
    pub(super) member: Box<dyn Member>,
    description: Description,
    pub(super) net: Box<dyn Net>,
    pub(super) state: State,
    pub(super) registration: Option<Registration>,
    /// The last request carried out.
    last_request: Vec<u8>,
    /// Everything the last request sent, to send again when it is
    /// repeated (buffers kept from request to request).
    pub(super) replies: Datagrams,
    /// What is to be sent at the end of the current burst.
    pub(super) outbox: Outbox,
    /// A request is being answered: what is sent is kept in `replies`.
    pub(super) answering: bool,
    pub(super) wiring: Wiring,
    /// Resolution ticks since t = 0.
    pub(super) ticks: u64,
    /// The newest full sequence count of each input data id (every
    /// configured one has an entry once configured).
    pub(super) in_seq: BTreeMap<u16, Option<i64>>,
    /// The next sequence id of each output data id.
    pub(super) out_seq: BTreeMap<u16, u16>,
    /// Input data arrived since the last step.
    pub(super) fresh: bool,
    /// The previous step had fresh data: the next one waits for it.
    pub(super) expect_data: bool,
    /// The age of input data on arrival in real time.
    pub(super) ages: Histogram,
    pub(super) pacing: Option<Pacing>,
    /// The clocks of the current turn.
    pub(super) now: Now,
    /// When the registered master was last heard.
    pub(super) last_heard: Instant,
    last_error: ErrorCode,
    pub(super) counters: SlaveCounters,
    /// A run stopped or failed since the last turn said so.
    pub(super) ended: bool,
    pub(super) rx: Vec<u8>,
    pub(super) out: Vec<u8>,
    report: Reporter,
}

impl Slave {
    /// A slave of `member`, its control socket bound.
    pub fn new(identity: Identity, member: Box<dyn Member>) -> Result<Slave, SlaveError> {
        let sockets = Sockets::bind(identity.endpoint.control)?;
        Ok(Slave::with_network(identity, member, Box::new(sockets)))
    }

    /// A slave of `member` on `net` (a test or a fuzz target's own, to
    /// drive it in-process with [`Slave::turn`]).
    pub fn with_network(identity: Identity, member: Box<dyn Member>, net: Box<dyn Net>) -> Slave {
        let description = describe_at(&identity, member.as_ref(), net.local().port());
        let now = Now::system();
        Slave {
            identity,
            member,
            description,
            net,
            state: State::Alive,
            registration: None,
            last_request: Vec::with_capacity(MAX_PDU),
            replies: Datagrams::with_capacity(MAX_PDU, OUTBOX_DATAGRAMS),
            outbox: Outbox::new(),
            answering: false,
            wiring: Wiring::default(),
            ticks: 0,
            in_seq: BTreeMap::new(),
            out_seq: BTreeMap::new(),
            fresh: false,
            expect_data: false,
            ages: age_histogram(),
            pacing: None,
            now,
            last_heard: now.at,
            last_error: ErrorCode::None,
            counters: SlaveCounters::default(),
            ended: false,
            rx: vec![0; MAX_PDU + 1],
            out: Vec::with_capacity(MAX_PDU),
            report: to_stderr,
        }
    }

    /// Sends its messages to `report` instead of standard error.
    pub fn reporting_to(mut self, report: Reporter) -> Slave {
        self.report = report;
        self
    }

    /// Its description.
    pub fn description(&self) -> &Description {
        &self.description
    }

    /// The address its control socket is bound to.
    pub fn local_addr(&self) -> std::net::SocketAddrV4 {
        self.net.local()
    }

    /// Its state.
    pub fn state(&self) -> State {
        self.state
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

    /// Says `message`, with its name.
    pub(super) fn say(&self, message: &str) {
        (self.report)(&self.identity.name, message);
    }

    /// One datagram from `from`.
    pub(super) fn datagram(&mut self, bytes: &[u8], from: SocketAddr) {
        match Pdu::read(bytes) {
            Ok(Pdu::Request { seq, receiver, body }) => self.request(bytes, seq, receiver, Ok(body), from),
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
                    if self.for_me(receiver) {
                        self.request(bytes, seq, receiver, Err(ErrorCode::InvalidLength), from);
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

    /// A request (`body`, or why it cannot be read) with sequence id `seq`
    /// from `from`.
    ///
    /// Once registered, only the registered master's address is served: a
    /// request from any other is refused as out of the master's sequence
    /// (`INVALID_SEQUENCE_ID`, expecting the master's next id), whatever
    /// its id. A request from the master that repeats the last (same id,
    /// same bytes) is answered again from what the last one sent. Any other
    /// request from the master must carry the next id; in sequence, it uses
    /// its id whether it is carried out or refused, as DCPLib's slave
    /// counts it (its refusal says the next id is `seq + 1`): a master that
    /// moves on to the next id after a refusal is not locked out, and the
    /// refusal is answered again to a repeat like an acknowledgement.
    ///
    /// Only a request in sequence (or a repeat) is the master heard:
    /// another address's requests (even ones with the same bytes as the
    /// silent master's registration) do not keep a silent master's
    /// registration alive.
    fn request(
        &mut self,
        bytes: &[u8],
        seq: u16,
        receiver: u8,
        body: Result<Request<'_>, ErrorCode>,
        from: SocketAddr,
    ) {
        if !self.for_me(receiver) {
            self.counters.malformed += 1;
            return;
        }
        if let Some(r) = self.registration {
            if seq == r.last_seq && from == r.master && bytes == self.last_request.as_slice() {
                self.last_heard = self.now.at;
                self.counters.repeats += 1;
                for (to, reply) in self.replies.iter() {
                    self.outbox.queue(self.net.as_mut(), SocketAddr::V4(to), reply);
                }
                return;
            }
            let next = r.last_seq.wrapping_add(1);
            if from != r.master || seq != next {
                self.nack(seq, receiver, ErrorCode::InvalidSequenceId, next, from);
                return;
            }
        }
        self.last_heard = self.now.at;
        self.counters.requests += 1;
        self.replies.clear();
        self.answering = true;
        let result = body.and_then(|body| {
            self.supported(&body)
                .and_then(|()| self.allowed(&body))
                .and_then(|()| self.carry_out(seq, receiver, body, from))
        });
        if let Err(code) = result {
            self.nack(seq, receiver, code, seq.wrapping_add(1), from);
        }
        self.answering = false;
        if let Some(r) = &mut self.registration {
            r.last_seq = seq;
        }
        self.last_request.clear();
        self.last_request.extend_from_slice(bytes);
    }

    /// Refuses request `seq` with `code`, saying the sequence id it
    /// expects next (kept with the request's replies while it is being
    /// answered).
    fn nack(&mut self, seq: u16, receiver: u8, code: ErrorCode, expected: u16, from: SocketAddr) {
        self.counters.refused += 1;
        let pdu = Pdu::Response {
            seq,
            sender: receiver,
            body: Response::Nack {
                expected,
                error: code.code(),
            },
        };
        self.reply_to(from, pdu);
    }

    /// The support check: what this slave never does, or not in its mode.
    /// `CFG_steps` is taken in every mode: in non-real time it names the
    /// step the master will grant (DCPLib's slaves require it there too).
    fn supported(&self, body: &Request<'_>) -> Result<(), ErrorCode> {
        // The mode's own refusals need a mode: before registration the
        // state check answers.
        let mode = self.registration.map(|r| r.op_mode);
        match body {
            Request::Logging { .. } | Request::Log { .. } => Err(ErrorCode::NotSupportedPdu),
            Request::DoStep { .. } if mode.is_some_and(|m| m != OpMode::NonRealTime) => Err(ErrorCode::NotSupportedPdu),
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

    /// The state id check, the semantic checks, and the request carried
    /// out.
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
            } => self.register(seq, receiver, from, uuid, op_mode, (major, minor))?,
            Request::State => self.inform(
                seq,
                receiver,
                from,
                Response::StateAck {
                    state: self.state.code(),
                },
            ),
            Request::Error => self.inform(
                seq,
                receiver,
                from,
                Response::ErrorAck {
                    error: self.last_error.code(),
                },
            ),
            Request::Deregister { .. } => {
                self.ack(seq);
                self.enter(State::Alive);
                self.forget();
            }
            Request::Reset { .. } => {
                self.ack(seq);
                self.wiring = Wiring::default();
                self.net.close_data();
                self.enter(State::Configuration);
            }
            Request::Prepare { .. } => self.prepare(seq)?,
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
            Request::DoStep { steps, .. } => self.do_step(seq, steps)?,
            Request::Stop { .. } => {
                self.ack(seq);
                self.enter(State::Stopping);
                self.outbox.flush(self.net.as_mut());
                self.end_real_time();
                self.enter(State::Stopped);
            }
            config => {
                self.wiring.configure(config, &self.description.ports)?;
                self.ack(seq);
            }
        }
        Ok(())
    }

    /// `STC_register`.
    #[expect(
        clippy::too_many_arguments,
        reason = "the fields of STC_register, as the DCP standard lists them"
    )]
    fn register(
        &mut self,
        seq: u16,
        receiver: u8,
        from: SocketAddr,
        uuid: [u8; 16],
        op_mode: u8,
        (major, minor): (u8, u8),
    ) -> Result<(), ErrorCode> {
        if uuid != self.description.uuid {
            return Err(ErrorCode::InvalidUuid);
        }
        let op_mode = OpMode::from_code(op_mode)
            .filter(|m| self.description.op_modes.contains(m))
            .ok_or(ErrorCode::InvalidOpMode)?;
        if let Err(why) = self.member.admits(op_mode) {
            self.say(&why.to_string());
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
        Ok(())
    }

    /// `INF_state` and `INF_error`: `body` to the asker.
    fn inform(&mut self, seq: u16, receiver: u8, from: SocketAddr, body: Response<'_>) {
        let pdu = Pdu::Response {
            seq,
            sender: receiver,
            body,
        };
        self.reply_to(from, pdu);
    }

    /// `STC_prepare`: the configuration checked complete (and, in real
    /// time, its step one the member can take), the data ports opened.
    fn prepare(&mut self, seq: u16) -> Result<(), ErrorCode> {
        let real_time = self.op_mode() != OpMode::NonRealTime;
        if let Some(code) = self.wiring.incomplete(false, real_time) {
            return Err(code);
        }
        if real_time {
            self.realtime_h()?;
        }
        let ports = self.wiring.source_ports(self.net.local().port());
        self.net
            .open_data(&ports)
            .map_err(|_| ErrorCode::InvalidNetworkInformation)?;
        // Room to keep what a step sends, for a repeated request, before
        // any run.
        let (bytes, count) = self.wiring.output_bytes(&self.description.ports);
        self.replies.reserve(bytes + MAX_PDU, count + OUTBOX_DATAGRAMS);
        self.ack(seq);
        self.enter(State::Preparing);
        self.enter(State::Prepared);
        Ok(())
    }

    /// `STC_run`: from CONFIGURED to SYNCHRONIZED at once (in real time
    /// the start time is the clock's origin), from SYNCHRONIZED to
    /// RUNNING.
    fn run(&mut self, seq: u16, start: i64) -> Result<(), ErrorCode> {
        if self.state == State::Synchronized {
            self.ack(seq);
            self.enter(State::Running);
            return Ok(());
        }
        let mode = self.op_mode();
        // Non-real time has no start time.
        let pacing = match mode {
            OpMode::NonRealTime => None,
            _ => {
                let h = self.realtime_h()?;
                let origin = start_instant(start, self.now).ok_or(ErrorCode::InvalidStartTime)?;
                let pacing = Pacing { origin, h, next: 0 };
                // A start so far ahead that the clock cannot hold its points.
                pacing.due(1).ok_or(ErrorCode::InvalidStartTime)?;
                Some(pacing)
            }
        };
        self.ack(seq);
        self.enter(State::Synchronizing);
        // The master hears the acceptance before the start's work.
        self.outbox.flush(self.net.as_mut());
        if let Some(pacing) = pacing {
            // A start that fails is a fault of the transition.
            if let Err(e) = self.member.start(pacing.origin, pacing.h, mode == OpMode::HardRealTime) {
                self.fail(&e);
                return Ok(());
            }
            self.pacing = Some(pacing);
        }
        self.enter(State::Synchronized);
        Ok(())
    }

    /// `STC_do_step` of `steps` resolution ticks, once its input data is
    /// in.
    fn do_step(&mut self, seq: u16, steps: u32) -> Result<(), ErrorCode> {
        let h = self.seconds(steps as u64).ok_or(ErrorCode::InvalidSteps)?;
        if steps == 0 || !self.takes_step(h) {
            return Err(ErrorCode::InvalidSteps);
        }
        let ticks = self.ticks.checked_add(steps as u64).ok_or(ErrorCode::InvalidSteps)?;
        self.take_fresh_data()?;
        self.ack(seq);
        self.enter(State::Computing);
        let t = self.seconds(self.ticks).unwrap_or(0.0);
        if let Err(e) = self.member.step(t, h) {
            self.fail(&e);
            return Ok(());
        }
        self.ticks = ticks;
        self.enter(State::Computed);
        Ok(())
    }

    /// Ends a real-time run, if one is on.
    pub(super) fn end_real_time(&mut self) {
        if self.pacing.take().is_some() {
            self.member.stop();
        }
    }

    /// Loads the model afresh at t = 0 and computes its first outputs;
    /// every configured data id starts its sequence.
    fn start_model(&mut self) -> Result<(), super::member::MemberError> {
        self.end_real_time();
        self.member.configure()?;
        self.ticks = 0;
        self.in_seq = self.wiring.inputs.keys().map(|&id| (id, None)).collect();
        self.out_seq = self.wiring.outputs.keys().map(|&id| (id, 0)).collect();
        self.fresh = false;
        // A master that configured input data on the control port sends it
        // before STC_initialize and every step: a loss of the first is
        // refused like any other.
        self.expect_data = self.master_sends_data();
        Ok(())
    }

    /// Goes to ERRORHANDLING and ERRORRESOLVED over a fault, saying why.
    pub(super) fn fail(&mut self, why: &dyn fmt::Display) {
        self.say(&why.to_string());
        self.last_error = ErrorCode::Generic;
        self.end_real_time();
        self.enter(State::ErrorHandling);
        self.enter(State::ErrorResolved);
    }

    /// The master fell silent: ERRORHANDLING, the run stopped, and back
    /// to ALIVE for the next master.
    pub(super) fn lost_master(&mut self) {
        self.last_error = ErrorCode::HeartbeatMissed;
        self.enter(State::ErrorHandling);
        self.end_real_time();
        self.enter(State::ErrorResolved);
        self.state = State::Alive;
        self.forget();
    }

    /// Forgets the master and its configuration.
    fn forget(&mut self) {
        self.registration = None;
        self.wiring = Wiring::default();
        self.net.close_data();
        self.end_real_time();
    }

    /// The registered operating mode (non-real-time before registration).
    pub(super) fn op_mode(&self) -> OpMode {
        self.registration.map_or(OpMode::NonRealTime, |r| r.op_mode)
    }

    /// `ticks` of the resolution in seconds, once there is one.
    pub(super) fn seconds(&self, ticks: u64) -> Option<f64> {
        let (n, d) = self.wiring.resolution?;
        Some(ticks as f64 * n as f64 / d as f64)
    }

    /// The real-time communication step: its outputs' steps (the least)
    /// at the resolution; `INVALID_STEPS` unless the member takes it.
    fn realtime_h(&self) -> Result<f64, ErrorCode> {
        let steps = self.wiring.steps.values().copied().min().unwrap_or(1);
        let h = self.seconds(steps as u64).ok_or(ErrorCode::IncompleteTimeResolution)?;
        let clock = Pacing {
            origin: self.now.at,
            h,
            next: 0,
        };
        if !self.takes_step(h) || clock.due(1).is_none() {
            return Err(ErrorCode::InvalidSteps);
        }
        Ok(h)
    }

    /// Whether the member takes steps of `h` s.
    fn takes_step(&self, h: f64) -> bool {
        h > 0.0 && self.member.takes_step(h)
    }

    /// `RSP_ack` for `seq`.
    pub(super) fn ack(&mut self, seq: u16) {
        if let Some(r) = self.registration {
            self.reply_to(
                r.master,
                Pdu::Response {
                    seq,
                    sender: r.id,
                    body: Response::Ack,
                },
            );
        }
    }

    /// Enters `state` and notifies the master.
    pub(super) fn enter(&mut self, state: State) {
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
        self.outbox.queue(self.net.as_mut(), to, &self.out);
        if self.answering {
            self.replies.push(to, &self.out);
        }
    }
}
