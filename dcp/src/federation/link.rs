//! The master's line to one slave: requests with their sequence ids,
//! answers waited for with a timeout, everything sent again when an answer
//! is missing, and the slave's output data taken as it comes.
//!
//! Policies: a request unanswered within the timeout is sent again with
//! the same sequence id (the slave answers a repeat without doing it
//! twice), up to the retries, then the slave is given up, by name, and
//! not asked anything again; an `INVALID_SEQUENCE_ID` refusal expecting a
//! later id means the request was already answered; a
//! `PROTOCOL_ERROR_GENERIC` refusal of a step (its input data lost) sends
//! the step's data again, and its requests with the next sequence ids (a
//! slave uses a refused request's id, as DCPLib's and Tandem's do; if it
//! then says it expects one of the ids given up, those are filled with
//! `INF_state` first: an id is never given to two requests, so a late
//! answer cannot be taken for another request's); a refusal still
//! standing after the retries
//! (another master holds the slave) ends the run naming the refusal; any
//! other refusal, or a slave that reports ERRORHANDLING or ALIVE
//! (restarted), ends the run with the slave's name and the code. Output
//! data that comes while no exchange waits for it (real time: a slave's
//! first points, while the master still starts the others) is kept for
//! [`Link::take_data`], up to [`HELD`] datagrams.

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddrV4;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::wire::{Udp, Wire};
use crate::frames::{self, FramesError};
use crate::pdu::{unwrap_seq, DataKind, Pdu, Request, Response};
use crate::ports::Ports;
use crate::slave::wiring::Slot;
use crate::types::{ErrorCode, State, MAX_PDU};
use crate::values::{self, ValueError};

/// What went wrong with a slave.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    /// No answer after every retry.
    #[error("slave \"{slave}\" at {address} does not answer {request} after {tries} tries over {waited:.1} s; is it running, and reachable?")]
    Silent {
        /// Its name.
        slave: String,
        /// Its address.
        address: SocketAddrV4,
        /// The request.
        request: &'static str,
        /// Tries.
        tries: u32,
        /// Seconds waited in all.
        waited: f64,
    },
    /// A refusal.
    #[error("slave \"{slave}\" refused {request}: {code}")]
    Refused {
        /// Its name.
        slave: String,
        /// The request.
        request: &'static str,
        /// The error code (its name, or its number when unknown), and what
        /// it means here.
        code: String,
        /// The error code, when it is one of DCP 1.0's.
        error: Option<ErrorCode>,
    },
    /// A state it should not be in.
    #[error("slave \"{slave}\" reports state {state}: {why}")]
    State {
        /// Its name.
        slave: String,
        /// The state.
        state: String,
        /// What it means.
        why: &'static str,
    },
    /// Output data the master cannot read.
    #[error("slave \"{slave}\" sent output {port} that cannot be read: {cause}")]
    Data {
        /// Its name.
        slave: String,
        /// The port.
        port: String,
        /// Why.
        cause: DataError,
    },
    /// An input value the master cannot encode as its port's type.
    #[error("slave \"{slave}\": input {port} cannot be sent: {cause}")]
    Input {
        /// Its name.
        slave: String,
        /// The port.
        port: String,
        /// Why.
        cause: ValueError,
    },
    /// A socket.
    #[error("slave \"{slave}\": {what}: {error}")]
    Io {
        /// Its name.
        slave: String,
        /// What was being done.
        what: &'static str,
        /// The error (in the message, so not a source).
        error: io::Error,
    },
}

impl LinkError {
    /// The name of the slave it concerns.
    pub fn slave(&self) -> &str {
        match self {
            LinkError::Silent { slave, .. }
            | LinkError::Refused { slave, .. }
            | LinkError::State { slave, .. }
            | LinkError::Data { slave, .. }
            | LinkError::Input { slave, .. }
            | LinkError::Io { slave, .. } => slave,
        }
    }
}

/// What the line counted; shared with the federation's report.
#[derive(Debug, Default)]
pub struct LinkStats {
    /// Requests sent (first tries).
    pub requests: AtomicU64,
    /// Datagrams sent again after a timeout or a refusal.
    pub resent: AtomicU64,
    /// Output data dropped as duplicates or older than the newest.
    pub stale: AtomicU64,
    /// Datagrams that were not PDUs, not for this line or not understood.
    pub malformed: AtomicU64,
    /// Output data that came while no exchange waited for it and found
    /// no room to be kept.
    pub dropped: AtomicU64,
}

/// The most output data datagrams a line keeps while no exchange waits
/// for them.
pub const HELD: usize = 256;

/// The master's line and protocol state for one slave.
pub(crate) struct Link {
    pub(crate) name: String,
    wire: Box<dyn Wire>,
    pub(crate) address: SocketAddrV4,
    pub(crate) id: u8,
    next_seq: u16,
    timeout: Duration,
    retries: u32,
    pub(crate) stats: Arc<LinkStats>,
    /// The sequence id of the next input data.
    data_seq: u16,
    /// The newest output data's full sequence count.
    out_seq: Option<i64>,
    datagrams: Vec<Vec<u8>>,
    rx: Vec<u8>,
    /// Output data kept while no exchange waited for it, oldest first,
    /// and spent buffers to keep the next in.
    held: VecDeque<Vec<u8>>,
    spare: Vec<Vec<u8>>,
    /// When the slave was last heard from.
    last_heard: Instant,
    /// The slave was given up: it is asked nothing again.
    gone: bool,
    /// The state the slave last said it is in.
    state: Option<State>,
}

/// The most requests an exchange sends.
const MAX_REQUESTS: usize = 4;

/// Output data expected in an exchange: its data id, slots, and where the
/// values go.
pub(crate) struct Outputs<'a> {
    pub(crate) data_id: u16,
    pub(crate) slots: &'a [Slot],
    pub(crate) ports: &'a Ports,
    pub(crate) into: &'a mut [f64],
}

impl Link {
    /// A line over UDP/IPv4 to slave `id` named `name` at `address`.
    pub(crate) fn open(
        name: &str,
        id: u8,
        address: SocketAddrV4,
        timeout: Duration,
        retries: u32,
    ) -> Result<Link, LinkError> {
        let wire = Udp::open(address).map_err(|(what, error)| LinkError::Io {
            slave: name.to_string(),
            what,
            error,
        })?;
        Ok(Link::on(name, id, address, timeout, retries, Box::new(wire)))
    }

    /// A line on `wire` to slave `id` named `name` at `address`.
    pub(crate) fn on(
        name: &str,
        id: u8,
        address: SocketAddrV4,
        timeout: Duration,
        retries: u32,
        wire: Box<dyn Wire>,
    ) -> Link {
        Link {
            name: name.to_string(),
            wire,
            address,
            id,
            next_seq: 0,
            timeout,
            retries,
            stats: Arc::default(),
            data_seq: 0,
            out_seq: None,
            datagrams: Vec::new(),
            rx: vec![0; MAX_PDU + 1],
            held: VecDeque::new(),
            spare: Vec::new(),
            last_heard: Instant::now(),
            gone: false,
            state: None,
        }
    }

    /// Waits until the slave says it is in `state` (a notification, or its
    /// answer to `INF_state`, asked after each timeout without one), at
    /// most until `deadline`. For a transition a slave ends at a time of
    /// its own: DCPLib's slaves, for one, are SYNCHRONIZED only at the
    /// start time.
    pub(crate) fn await_state(&mut self, state: State, deadline: Instant) -> Result<(), LinkError> {
        let started = Instant::now();
        let mut asked = 0;
        while self.state != Some(state) {
            let now = Instant::now();
            if now >= deadline {
                self.gone = true;
                return Err(LinkError::Silent {
                    slave: self.name.clone(),
                    address: self.address,
                    request: "INF_state (waiting for it to be in the state asked)",
                    tries: asked,
                    waited: started.elapsed().as_secs_f64(),
                });
            }
            let next = self.next_seq.wrapping_sub(1);
            let heard = self.hear(
                Some((now + self.timeout).min(deadline)),
                next,
                next,
                &["INF_state"],
                &mut None,
            );
            if let Heard::Timeout = heard? {
                self.ask_state()?;
                asked += 1;
            }
        }
        Ok(())
    }

    /// The slave's state, as it answers `INF_state` now.
    pub(crate) fn asked_state(&mut self) -> Result<Option<State>, LinkError> {
        self.exchange(None, &[Request::State], None, None)?;
        Ok(self.state)
    }

    /// How many times an exchange is sent again before the slave is given
    /// up.
    pub(crate) fn retries(&self) -> u32 {
        self.retries
    }

    /// The master's address as the slave sees it (where its data goes).
    pub(crate) fn local(&self) -> SocketAddrV4 {
        self.wire.local()
    }

    /// How long an exchange waits in all before it gives the slave up:
    /// the timeout of each try, times the tries.
    pub(crate) fn patience(&self) -> Duration {
        self.timeout * (self.retries + 1)
    }

    /// Whether the slave was given up (it is asked nothing again).
    pub(crate) fn gone(&self) -> bool {
        self.gone
    }

    /// Sends `requests` (at most [`MAX_REQUESTS`], after input data `data`
    /// of `data_id`, when given) and waits until the last is acknowledged,
    /// the slave has notified state `until` (when given: a slave may
    /// acknowledge a transition before it ends) and, when `outputs` is
    /// given, its data has come.
    pub(crate) fn exchange(
        &mut self,
        data: Option<(u16, &[Slot], &Ports, &[f64])>,
        requests: &[Request<'_>],
        mut outputs: Option<Outputs<'_>>,
        until: Option<State>,
    ) -> Result<(), LinkError> {
        assert!(
            (1..=MAX_REQUESTS).contains(&requests.len()),
            "an exchange is 1 to {MAX_REQUESTS} requests"
        );
        let mut first = self.next_seq;
        self.datagrams.resize_with(requests.len() + 1, Vec::new);
        let mut n = 0;
        if let Some((data_id, slots, ports, u)) = data {
            let out = &mut self.datagrams[0];
            Pdu::data_header(DataKind::InputOutput, self.data_seq, data_id, out);
            self.data_seq = self.data_seq.wrapping_add(1);
            for slot in slots {
                let v = &ports.inputs[slot.variable];
                values::encode(slot.data_type, &u[v.elements.clone()], out).map_err(|cause| LinkError::Input {
                    slave: self.name.clone(),
                    port: v.name.clone(),
                    cause,
                })?;
            }
            n = 1;
        }
        self.next_seq = self.number(n, first, requests);
        let total = n + requests.len();
        let mut last = self.next_seq.wrapping_sub(1);
        let name = requests.last().map_or("?", |r| r.name());
        let mut names = [""; MAX_REQUESTS];
        for (n, r) in names.iter_mut().zip(requests) {
            *n = r.name();
        }
        self.stats.requests.fetch_add(requests.len() as u64, Ordering::Relaxed);
        let started = Instant::now();
        let mut tries = 0;
        let mut acked = false;
        let mut got_data = outputs.is_none();
        let mut reached = until.is_none();
        // The last refusal heard that left the request to be sent again:
        // the request's name, the code and the id the slave expects.
        let mut refusal: Option<(&'static str, ErrorCode, u16)> = None;
        // The ids given up after a refusal for lost input data, from the
        // refused one on: the slave may not have had the later ones.
        let mut abandoned: Option<(u16, u16)> = None;
        // Ids given up that the slave never had, to fill before the next
        // try.
        let mut gap: Option<(u16, u16)> = None;
        loop {
            if tries > 0 {
                self.stats.resent.fetch_add(total as u64, Ordering::Relaxed);
            }
            if let Some((from, to)) = gap.take() {
                self.fill(from, to)?;
            }
            let mut burst = [(self.address, &[][..]); MAX_REQUESTS + 1];
            for (b, d) in burst.iter_mut().zip(&self.datagrams[..total]) {
                b.1 = d;
            }
            self.wire.send(&burst[..total]).map_err(|error| LinkError::Io {
                slave: self.name.clone(),
                what: "cannot send",
                error,
            })?;
            tries += 1;
            let deadline = Instant::now() + self.timeout;
            let mut resend = false;
            while !(resend || (acked && got_data && reached)) {
                match self.hear(Some(deadline), first, last, &names, &mut outputs)? {
                    Heard::Timeout => break,
                    Heard::State(s) => reached |= Some(s) == until,
                    Heard::Acked => acked = true,
                    Heard::Data => got_data = true,
                    Heard::Refused { seq, code, expected } => {
                        refusal = Some((
                            names
                                .get(seq.wrapping_sub(first) as usize)
                                .copied()
                                .unwrap_or("a request"),
                            code,
                            expected,
                        ));
                        match code {
                            // Its input data did not come: the data goes
                            // again, and the requests with the next ids
                            // (the slave used the refused one, and the ids
                            // after it that reached it). Answers to the ids
                            // given up are then no longer the exchange's.
                            ErrorCode::Generic => {
                                abandoned = Some((seq, last));
                                first = self.next_seq;
                                self.next_seq = self.number(n, first, requests);
                                last = self.next_seq.wrapping_sub(1);
                                acked = false;
                                resend = true;
                            }
                            // The slave never had the ids given up from
                            // `expected` on (lost, or it does not count a
                            // refused id): they are filled before the
                            // requests go again, never given to them.
                            ErrorCode::InvalidSequenceId => {
                                if let Some((_, to)) =
                                    abandoned.filter(|&(from, to)| expected.wrapping_sub(from) <= to.wrapping_sub(from))
                                {
                                    abandoned = None;
                                    gap = Some((expected, to));
                                    resend = true;
                                }
                            }
                            _ => {}
                        }
                    }
                    Heard::Nothing => {}
                }
            }
            if acked && got_data && reached {
                return Ok(());
            }
            if tries > self.retries {
                self.gone = true;
                return Err(match refusal {
                    Some((request, code, expected)) => LinkError::Refused {
                        slave: self.name.clone(),
                        request,
                        code: format!("{}{}", code.name(), standing(code, expected, tries)),
                        error: Some(code),
                    },
                    None => LinkError::Silent {
                        slave: self.name.clone(),
                        address: self.address,
                        request: name,
                        tries,
                        waited: started.elapsed().as_secs_f64(),
                    },
                });
            }
        }
    }

    /// Sends `INF_state` (taken in every state, changing nothing) with each
    /// sequence id from `from` to `to`: ids the master gave up that the
    /// slave never had, so that the next request's id is the one it
    /// expects. The answers belong to no exchange.
    fn fill(&mut self, from: u16, to: u16) -> Result<(), LinkError> {
        let datagrams: Vec<Vec<u8>> = (0..=to.wrapping_sub(from))
            .map(|k| {
                Pdu::Request {
                    seq: from.wrapping_add(k),
                    receiver: self.id,
                    body: Request::State,
                }
                .to_vec()
            })
            .collect();
        let burst: Vec<(SocketAddrV4, &[u8])> = datagrams.iter().map(|d| (self.address, d.as_slice())).collect();
        self.stats.requests.fetch_add(datagrams.len() as u64, Ordering::Relaxed);
        self.wire.send(&burst).map_err(|error| LinkError::Io {
            slave: self.name.clone(),
            what: "cannot send",
            error,
        })
    }

    /// Writes `requests`, numbered from sequence id `first`, into the
    /// datagrams after the `n` before them; the id after the last.
    fn number(&mut self, n: usize, first: u16, requests: &[Request<'_>]) -> u16 {
        for (k, body) in requests.iter().enumerate() {
            let pdu = Pdu::Request {
                seq: first.wrapping_add(k as u16),
                receiver: self.id,
                body: *body,
            };
            pdu.write(&mut self.datagrams[n + k]);
        }
        first.wrapping_add(requests.len() as u16)
    }

    /// The next datagram from the slave by `deadline` (without one: what
    /// has come), heard during an exchange of requests `first..=last`.
    fn hear(
        &mut self,
        deadline: Option<Instant>,
        first: u16,
        last: u16,
        names: &[&'static str],
        outputs: &mut Option<Outputs<'_>>,
    ) -> Result<Heard, LinkError> {
        let mut rx = std::mem::take(&mut self.rx);
        let heard = match self.wire.receive(&mut rx, deadline) {
            Ok(Some(size)) => self.heard(&rx[..size.min(MAX_PDU)], first, last, names, outputs),
            Ok(None) => Ok(Heard::Timeout),
            Err(error) => Err(LinkError::Io {
                slave: self.name.clone(),
                what: "cannot receive",
                error,
            }),
        };
        self.rx = rx;
        heard
    }

    /// One datagram from the slave during an exchange of requests
    /// `first..=last`.
    fn heard(
        &mut self,
        bytes: &[u8],
        first: u16,
        last: u16,
        names: &[&'static str],
        outputs: &mut Option<Outputs<'_>>,
    ) -> Result<Heard, LinkError> {
        self.last_heard = Instant::now();
        let in_exchange = |seq: u16| seq.wrapping_sub(first) <= last.wrapping_sub(first);
        match Pdu::read(bytes) {
            Ok(Pdu::Response { seq, body, .. }) if in_exchange(seq) => {
                if let Response::StateAck { state } = body {
                    self.state = State::from_code(state).or(self.state);
                }
                match body {
                    Response::Ack | Response::StateAck { .. } if seq == last => Ok(Heard::Acked),
                    Response::Nack { expected, error } => {
                        // Already carried out: the slave expects a later id.
                        // Never a registration: a slave that expects the id
                        // after it is another master's.
                        let registering = names.first() == Some(&"STC_register");
                        let done = !registering
                            && expected.wrapping_sub(first) > seq.wrapping_sub(first)
                            && expected.wrapping_sub(first) <= last.wrapping_sub(first).wrapping_add(1);
                        match ErrorCode::from_code(error) {
                        Some(ErrorCode::InvalidSequenceId) if done && seq == last => Ok(Heard::Acked),
                        Some(code @ (ErrorCode::InvalidSequenceId | ErrorCode::Generic)) => {
                            Ok(Heard::Refused { seq, code, expected })
                        }
                        code => Err(LinkError::Refused {
                            slave: self.name.clone(),
                            request: names.get(seq.wrapping_sub(first) as usize).copied().unwrap_or("a request"),
                            code: match code {
                                Some(ErrorCode::InvalidOpMode) => {
                                    "INVALID_OP_MODE: it does not run in this federation's mode here (its own output \
                                     says why; its description lists its modes)"
                                        .to_string()
                                }
                                Some(ErrorCode::NotAllowedInState) => {
                                    "PROTOCOL_ERROR_PDU_NOT_ALLOWED_IN_THIS_STATE: it is not in the state the master \
                                     left it in (restarted, or taken by another master)"
                                        .to_string()
                                }
                                Some(c) => c.name().to_string(),
                                None => format!("error code 0x{error:04X}"),
                            },
                            error: code,
                        }),
                    }
                    }
                    _ => Ok(Heard::Nothing),
                }
            }
            Ok(Pdu::StateChanged { state, .. }) => match State::from_code(state) {
                Some(s @ (State::ErrorHandling | State::ErrorResolved)) => Err(LinkError::State {
                    slave: self.name.clone(),
                    state: s.name().into(),
                    why: "it met an error (its own output says which)",
                }),
                Some(s) => {
                    self.state = Some(s);
                    Ok(Heard::State(s))
                }
                None => Ok(Heard::Nothing),
            },
            Ok(Pdu::Data {
                kind: DataKind::InputOutput,
                seq,
                id,
                payload,
            }) => match outputs.as_mut().filter(|o| o.data_id == id) {
                Some(out) => self.output_data(seq, payload, out),
                None => {
                    self.hold(bytes);
                    Ok(Heard::Nothing)
                }
            },
            Ok(_) => Ok(Heard::Nothing),
            Err(_) => {
                self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                Ok(Heard::Nothing)
            }
        }
    }

    /// Output data for `out`: its values read, unless it is stale.
    fn output_data(&mut self, seq: u16, payload: &[u8], out: &mut Outputs<'_>) -> Result<Heard, LinkError> {
        let full = unwrap_seq(self.out_seq, seq);
        if self.out_seq.is_some_and(|l| full <= l) {
            self.stats.stale.fetch_add(1, Ordering::Relaxed);
            return Ok(Heard::Nothing);
        }
        let mut at = 0;
        for slot in out.slots {
            let v = &out.ports.outputs[slot.variable];
            let into = &mut out.into[v.elements.clone()];
            let read = if v.carries_frames() {
                count_frames(&payload[at..], into)
            } else {
                values::decode(slot.data_type, &payload[at..], into).map_err(DataError::from)
            };
            at += read.map_err(|cause| LinkError::Data {
                slave: self.name.clone(),
                port: v.name.clone(),
                cause,
            })?;
        }
        self.out_seq = Some(full);
        Ok(Heard::Data)
    }

    /// Keeps data no exchange waits for, for [`Link::take_data`].
    fn hold(&mut self, bytes: &[u8]) {
        if self.held.len() >= HELD {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let mut kept = self.spare.pop().unwrap_or_default();
        kept.clear();
        kept.extend_from_slice(bytes);
        self.held.push_back(kept);
    }

    /// Asks the slave's state (`INF_state`) without waiting for the answer;
    /// gives the slave up when nothing has come from it for `silence`.
    pub(crate) fn heartbeat(&mut self, silence: Duration) -> Result<(), LinkError> {
        if self.last_heard.elapsed() > silence {
            self.gone = true;
            return Err(LinkError::Silent {
                slave: self.name.clone(),
                address: self.address,
                request: "INF_state (the heartbeat)",
                tries: (silence.as_millis() / 500) as u32,
                waited: self.last_heard.elapsed().as_secs_f64(),
            });
        }
        self.ask_state()
    }

    /// Sends `INF_state`.
    fn ask_state(&mut self) -> Result<(), LinkError> {
        let pdu = Pdu::Request {
            seq: self.next_seq,
            receiver: self.id,
            body: Request::State,
        };
        self.next_seq = self.next_seq.wrapping_add(1);
        let mut out = std::mem::take(&mut self.datagrams);
        out.resize_with(1, Vec::new);
        pdu.write(&mut out[0]);
        let sent = self.wire.send(&[(self.address, &out[0])]);
        self.datagrams = out;
        sent.map_err(|error| LinkError::Io {
            slave: self.name.clone(),
            what: "cannot send",
            error,
        })
    }

    /// The next output data waiting, without blocking (what was kept
    /// first): its full sequence count (the point it was sent for), its
    /// values in `outputs.into`.
    pub(crate) fn take_data(&mut self, outputs: &mut Outputs<'_>) -> Result<Option<i64>, LinkError> {
        while let Some(kept) = self.held.pop_front() {
            let heard = match Pdu::read(&kept) {
                Ok(Pdu::Data {
                    kind: DataKind::InputOutput,
                    seq,
                    id,
                    payload,
                }) if id == outputs.data_id => self.output_data(seq, payload, outputs),
                _ => {
                    self.stats.malformed.fetch_add(1, Ordering::Relaxed);
                    Ok(Heard::Nothing)
                }
            };
            self.spare.push(kept);
            if let Heard::Data = heard? {
                return Ok(self.out_seq);
            }
        }
        let mut wanted = Some(Outputs {
            data_id: outputs.data_id,
            slots: outputs.slots,
            ports: outputs.ports,
            into: &mut *outputs.into,
        });
        let next = self.next_seq;
        loop {
            let heard = self.hear(None, next, next, &["INF_state"], &mut wanted);
            match heard? {
                Heard::Data => return Ok(self.out_seq),
                Heard::Timeout => return Ok(None),
                _ => {}
            }
        }
    }

    /// Its descriptor, to wait on, if it has one.
    pub(crate) fn raw_fd(&self) -> Option<RawFd> {
        self.wire.raw_fd()
    }
}

/// What a refusal still standing after `tries` tries means.
fn standing(code: ErrorCode, expected: u16, tries: u32) -> String {
    match code {
        ErrorCode::InvalidSequenceId => format!(
            " after {tries} tries: it expects sequence id {expected}, so it serves another master (or its last \
             master, silent, until its master_timeout ends)"
        ),
        _ => format!(" after {tries} tries: its input data did not arrive"),
    }
}

/// A value of CAN frames, recorded as how many frames it holds; the bytes
/// it takes.
fn count_frames(bytes: &[u8], into: &mut [f64]) -> Result<usize, DataError> {
    let (value, used) = frames::value(bytes)?;
    let mut count = 0;
    frames::decode(value, &mut |_| count += 1)?;
    into.fill(count as f64);
    Ok(used)
}

/// Why a slave's output value cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    /// A value of a numeric type.
    #[error(transparent)]
    Value(#[from] ValueError),
    /// A value of CAN frames.
    #[error(transparent)]
    Frames(#[from] FramesError),
}

/// What one datagram meant to an exchange.
enum Heard {
    /// Nothing came by the deadline.
    Timeout,
    Nothing,
    State(State),
    Acked,
    Data,
    /// A refusal to send the request again after (out of sequence, or its
    /// input data lost).
    Refused {
        seq: u16,
        code: ErrorCode,
        expected: u16,
    },
}

#[cfg(test)]
mod tests {
    use super::super::testing::{next_into, pdu, variable};
    use super::*;
    use crate::ports::Causality;
    use crate::types::DataType;
    use std::collections::VecDeque;
    use std::net::Ipv4Addr;

    /// The bursts a master sent, each a list of datagrams.
    type Bursts = Arc<std::sync::Mutex<Vec<Vec<Vec<u8>>>>>;

    /// A slave in a script: each burst the master sends is answered with
    /// the next list of datagrams; the bursts are kept.
    struct Script(VecDeque<Vec<Vec<u8>>>, VecDeque<Vec<u8>>, Bursts);

    impl Wire for Script {
        fn local(&self) -> SocketAddrV4 {
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9)
        }
        fn send(&mut self, burst: &[(SocketAddrV4, &[u8])]) -> io::Result<()> {
            let sent = burst.iter().map(|(_, bytes)| bytes.to_vec()).collect();
            self.2.lock().unwrap().push(sent);
            let answers = self.0.pop_front().unwrap_or_default();
            self.1.extend(answers);
            Ok(())
        }
        fn receive(&mut self, buf: &mut [u8], _: Option<Instant>) -> io::Result<Option<usize>> {
            Ok(next_into(&mut self.1, buf))
        }
        fn raw_fd(&self) -> Option<RawFd> {
            None
        }
    }

    fn line(script: Vec<Vec<Vec<u8>>>) -> Link {
        recorded_line(script).0
    }

    /// A line to a scripted slave, and the bursts the master sent on it.
    fn recorded_line(script: Vec<Vec<Vec<u8>>>) -> (Link, Bursts) {
        let sent = Arc::default();
        let wire = Script(script.into(), VecDeque::new(), Arc::clone(&sent));
        let address = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8);
        (
            Link::on("s", 1, address, Duration::from_millis(1), 2, Box::new(wire)),
            sent,
        )
    }

    /// A refusal of request `seq` with `code`, expecting `expected`.
    fn nack(seq: u16, expected: u16, code: ErrorCode) -> Vec<u8> {
        pdu(Pdu::Response {
            seq,
            sender: 1,
            body: Response::Nack {
                expected,
                error: code.code(),
            },
        })
    }

    /// A step with its input data, and its outputs asked for, on `link`.
    fn step_with_data(link: &mut Link) -> Result<(), LinkError> {
        let ports = Ports {
            inputs: vec![variable("u", 1, Causality::Input)],
            outputs: Vec::new(),
        };
        let slots = [Slot {
            pos: 0,
            variable: 0,
            data_type: DataType::Float64,
        }];
        link.exchange(
            Some((1, &slots, &ports, &[0.5])),
            &[
                Request::DoStep {
                    state: State::Running.code(),
                    steps: 1,
                },
                Request::SendOutputs {
                    state: State::Computed.code(),
                },
            ],
            None,
            None,
        )
    }

    /// Each burst's datagrams: the first byte of a data PDU, a request's
    /// sequence id.
    fn ids(bursts: &[Vec<Vec<u8>>]) -> Vec<Vec<u16>> {
        bursts
            .iter()
            .map(|b| {
                b.iter()
                    .map(|d| match Pdu::read(d) {
                        Ok(Pdu::Request { seq, .. }) => seq,
                        _ => d[0] as u16,
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_step_refused_for_its_lost_input_data_goes_again_with_its_data_and_the_next_sequence_ids() {
        let ack = |seq| {
            pdu(Pdu::Response {
                seq,
                sender: 1,
                body: Response::Ack,
            })
        };
        // The slave uses the refused id and refuses the request after it
        // as not allowed (it did not step): both ids are spent.
        let (mut link, sent) = recorded_line(vec![
            vec![nack(0, 1, ErrorCode::Generic), nack(1, 2, ErrorCode::NotAllowedInState)],
            vec![ack(2), ack(3)],
        ]);
        step_with_data(&mut link).unwrap();
        assert_eq!(ids(&sent.lock().unwrap()), [vec![0xF0, 0, 1], vec![0xF0, 2, 3]]);
        let next = link.next_seq;
        assert_eq!(next, 4);

        // The request after the refused one was lost: the slave expects
        // its id, which INF_state fills before the requests go again with
        // their own ids (a late answer to a given-up id is never taken for
        // theirs).
        let state = pdu(Pdu::Response {
            seq: 1,
            sender: 1,
            body: Response::StateAck {
                state: State::Running.code(),
            },
        });
        let (mut link, sent) = recorded_line(vec![
            vec![nack(0, 1, ErrorCode::Generic)],
            vec![
                nack(2, 1, ErrorCode::InvalidSequenceId),
                nack(3, 1, ErrorCode::InvalidSequenceId),
            ],
            vec![state],
            vec![ack(2), ack(3)],
        ]);
        step_with_data(&mut link).unwrap();
        let sent = sent.lock().unwrap();
        assert_eq!(
            ids(&sent),
            [vec![0xF0, 0, 1], vec![0xF0, 2, 3], vec![1], vec![0xF0, 2, 3]]
        );
        assert!(matches!(
            Pdu::read(&sent[2][0]),
            Ok(Pdu::Request {
                body: Request::State,
                ..
            })
        ));
        assert_eq!(link.next_seq, 4);
    }

    #[test]
    fn data_that_comes_during_an_exchange_is_kept_for_take_data() {
        let data = pdu(Pdu::Data {
            kind: DataKind::InputOutput,
            seq: 0,
            id: 1,
            payload: &2.5f64.to_le_bytes(),
        });
        let ack = pdu(Pdu::Response {
            seq: 0,
            sender: 1,
            body: Response::Ack,
        });
        let mut link = line(vec![vec![data, ack, pdu(Pdu::StateChanged { sender: 1, state: 0x0B })]]);
        link.exchange(
            None,
            &[Request::Run { state: 0x0A, start: 0 }],
            None,
            Some(State::Running),
        )
        .unwrap();
        let ports = Ports {
            inputs: Vec::new(),
            outputs: vec![variable("y", 1, Causality::Output)],
        };
        let slots = [Slot {
            pos: 0,
            variable: 0,
            data_type: DataType::Float64,
        }];
        let mut y = [0.0];
        let mut outputs = Outputs {
            data_id: 1,
            slots: &slots,
            ports: &ports,
            into: &mut y,
        };
        assert_eq!(link.take_data(&mut outputs).unwrap(), Some(0));
        assert_eq!(outputs.into, [2.5]);
        assert_eq!(link.take_data(&mut outputs).unwrap(), None);
        assert_eq!(link.stats.malformed.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn a_refusal_that_stands_after_the_retries_is_reported_as_a_refusal_and_the_slave_given_up() {
        let nack = nack(0, 4321, ErrorCode::InvalidSequenceId);
        let mut link = line(vec![vec![nack.clone()], vec![nack.clone()], vec![nack]]);
        let e = link.exchange(None, &[Request::State], None, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "slave \"s\" refused INF_state: INVALID_SEQUENCE_ID after 3 tries: it expects sequence id 4321, so it \
             serves another master (or its last master, silent, until its master_timeout ends)"
        );
        assert!(link.gone());
        let mut silent = line(vec![]);
        let e = silent.exchange(None, &[Request::State], None, None).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("slave \"s\" at 127.0.0.1:8 does not answer INF_state after 3 tries"),
            "{e}"
        );
        assert!(silent.gone());
    }
}
