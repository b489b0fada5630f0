//! Frame faults a bus injects into what it sends: compiled from the
//! `[[bus.fault]]` tables (or a request at run time) against the bus's
//! mapping, and applied by its writer at frame boundaries. What each fault
//! did is counted in its [`FaultSlot`], which the report reads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use ringbuf::traits::{Consumer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};
use std::path::{Path, PathBuf};

use tandem_can::{CanFrame, CanId};
use tandem_config::{ConfigError, FaultConfig, FaultEnd, FaultKind, RunConfig};
use tandem_runtime::tandem::metrics::Counter;

use crate::lookup::list;
use crate::mapping::BusMap;

/// Faults a bus can take at run time beyond its configured ones.
pub const RUNTIME_FAULTS: usize = 64;

/// What a compiled fault does.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Action {
    /// The message is not sent.
    Drop,
    /// Its frames are sent this many frames later.
    Delay(u64),
    /// Its frames are sent this many times.
    Repeat(u32),
    /// Its E2E counter is frozen.
    StuckCounter,
    /// Its CRC is sent inverted.
    BadCrc,
    /// It is sent with this many bytes.
    WrongLength(usize),
    /// Signal `signal` (its index in the DBC message) carries `value`,
    /// physical or, when `raw`, its raw bits.
    Override {
        /// The signal's index.
        signal: usize,
        /// The value.
        value: f64,
        /// Whether `value` is raw.
        raw: bool,
    },
    /// `per_frame` copies of `frame` every frame.
    Burst {
        /// The frame of an identifier the DBC does not define.
        frame: CanFrame,
        /// Copies per frame.
        per_frame: u32,
    },
    /// Nothing is sent.
    Stop,
}

/// A fault compiled against a bus's mapping.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fault {
    /// The sent message affected (its index in [`BusMap::tx`]); `None`
    /// for bus faults.
    pub message: Option<usize>,
    /// What it does.
    pub action: Action,
    /// The frame it begins at (or the next one, when that is past).
    pub start: u64,
    /// How long it lasts.
    pub end: FaultEnd,
    /// Its slot in the bus's [`FaultSlots`].
    pub slot: usize,
}

/// The faults a bus's configuration schedules, compiled, with their
/// descriptions.
#[derive(Clone, Debug, Default)]
pub struct FaultPlan {
    /// The faults, in slots 0, 1, ...
    pub faults: Vec<Fault>,
    /// How each is described.
    pub descriptions: Vec<String>,
}

impl FaultPlan {
    /// The faults of `bus`'s configuration compiled against `map`, for
    /// frames of `frame` s.
    pub fn of(
        config: &RunConfig,
        bus: &tandem_config::BusConfig,
        map: &BusMap,
        frame: f64,
    ) -> Result<Self, ConfigError> {
        let mut plan = FaultPlan::default();
        for (slot, f) in bus.faults.iter().enumerate() {
            plan.faults.push(compile(&config.file, map, f, slot)?);
            plan.descriptions.push(describe(f, frame));
        }
        Ok(plan)
    }
}

/// Compiles `fault` (from `file`) against `map`, into slot `slot`.
pub fn compile(file: &Path, map: &BusMap, fault: &FaultConfig, slot: usize) -> Result<Fault, ConfigError> {
    let message = match &fault.message {
        None => None,
        Some(name) => Some(
            map.tx
                .iter()
                .position(|tx| tx.message.name == name.value)
                .ok_or_else(|| {
                    let sent = list(map.tx.iter().map(|tx| tx.message.name.as_str()));
                    name.error(
                        file,
                        format!(
                            "this bus sends no message \"{}\"; faults act on sent messages: {sent}",
                            name.value
                        ),
                    )
                })?,
        ),
    };
    let tx = message.map(|i| &map.tx[i]);
    let action =
        match &fault.kind.value {
            FaultKind::Drop => Action::Drop,
            FaultKind::Delay { frames } => Action::Delay(*frames),
            FaultKind::Repeat { times } => Action::Repeat(*times),
            FaultKind::StuckCounter | FaultKind::BadCrc => {
                if tx.is_some_and(|tx| tx.protection.is_none()) {
                    return Err(fault.kind.error(
                        file,
                        format!(
                            "a \"{}\" fault needs the message's E2E protection; give its transmit table an e2e table",
                            fault.kind.value.name()
                        ),
                    ));
                }
                if fault.kind.value == FaultKind::StuckCounter {
                    Action::StuckCounter
                } else {
                    Action::BadCrc
                }
            }
            FaultKind::WrongLength { bytes } => {
                let len = tx.map_or(0, |tx| tx.message.len);
                if *bytes == len || (*bytes > 8 && !tandem_can::frame::FD_LENGTHS.contains(bytes)) {
                    return Err(fault.kind.error(
                        file,
                        format!(
                        "wrong_length: {bytes} bytes is {}; give another length (0 to 8, or a CAN FD length: 12, 16, \
                         20, 24, 32, 48, 64)",
                        if *bytes == len { "the message's own length" } else { "no CAN frame length" }
                    ),
                    ));
                }
                Action::WrongLength(*bytes)
            }
            FaultKind::Override { signal, value, raw } => {
                let m = tx.map(|tx| &tx.message);
                let index = m.and_then(|m| m.signals.iter().position(|s| s.name == signal.value));
                match index {
                    Some(index) => Action::Override {
                        signal: index,
                        value: *value,
                        raw: *raw,
                    },
                    None => {
                        return Err(signal.error(
                            file,
                            format!(
                                "message {} has no signal \"{}\"",
                                m.map_or("", |m| m.name.as_str()),
                                signal.value
                            ),
                        ))
                    }
                }
            }
            FaultKind::Burst {
                id,
                extended,
                per_frame,
            } => {
                let id = CanId::new(*id, *extended).map_err(|e| fault.kind.error(file, e.to_string()))?;
                if map.tx.iter().any(|tx| tx.message.id == id) || map.rx.iter().any(|rx| rx.message.id == id) {
                    return Err(fault.kind.error(
                        file,
                        format!(
                            "burst: identifier {:#x} is a message of the bus's DBC; give an unknown one",
                            id.raw()
                        ),
                    ));
                }
                let frame = CanFrame::data(id, &[0xA5; 8]).map_err(|e| fault.kind.error(file, e.to_string()))?;
                Action::Burst {
                    frame,
                    per_frame: *per_frame,
                }
            }
            FaultKind::Stop => Action::Stop,
        };
    Ok(Fault {
        message,
        action,
        start: fault.start,
        end: fault.end,
        slot,
    })
}

/// What one fault did: the frames it began and ended at (`u64::MAX`: not
/// yet), and how many frames it affected. One writer: the bus's writer.
pub struct FaultSlot {
    began: AtomicU64,
    ended: AtomicU64,
    /// Frames it affected (of its message; for bus faults, frames of the
    /// run).
    pub affected: Counter,
}

impl Default for FaultSlot {
    fn default() -> Self {
        FaultSlot {
            began: AtomicU64::new(u64::MAX),
            ended: AtomicU64::new(u64::MAX),
            affected: Counter::default(),
        }
    }
}

impl FaultSlot {
    /// The frame it began at, if it has.
    pub fn began(&self) -> Option<u64> {
        Some(self.began.load(Ordering::Acquire)).filter(|&k| k != u64::MAX)
    }

    /// The frame it ended at, if it has.
    pub fn ended(&self) -> Option<u64> {
        Some(self.ended.load(Ordering::Acquire)).filter(|&k| k != u64::MAX)
    }

    /// Records that it began at frame `k`.
    pub fn begin(&self, k: u64) {
        self.began.store(k, Ordering::Release);
    }

    /// Records that it ended at frame `k`.
    pub fn end(&self, k: u64) {
        self.ended.store(k, Ordering::Release);
    }
}

/// Every fault slot of one bus, with a description of each in use (what
/// the report and the log's markers say).
pub struct FaultSlots {
    /// The slots: the configured faults', then room for run-time ones.
    pub slots: Vec<FaultSlot>,
    /// What each slot in use holds, e.g. `drop VCU_Speeds for 500 frames`.
    descriptions: Mutex<Vec<String>>,
}

impl FaultSlots {
    /// Slots for `configured` (described), and [`RUNTIME_FAULTS`] more.
    pub fn new(configured: Vec<String>) -> Self {
        FaultSlots {
            slots: (0..configured.len() + RUNTIME_FAULTS)
                .map(|_| FaultSlot::default())
                .collect(),
            descriptions: Mutex::new(configured),
        }
    }

    /// Each slot in use: its description and slot.
    pub fn described(&self) -> Vec<(String, &FaultSlot)> {
        let descriptions = self.descriptions.lock().unwrap_or_else(PoisonError::into_inner);
        descriptions.iter().cloned().zip(&self.slots).collect()
    }

    /// The description of slot `slot`.
    pub fn description(&self, slot: usize) -> String {
        let descriptions = self.descriptions.lock().unwrap_or_else(PoisonError::into_inner);
        descriptions.get(slot).cloned().unwrap_or_default()
    }

    /// Calls `f` with the description of slot `slot` (nothing when it is
    /// free), without copying it.
    pub fn with_description(&self, slot: usize, f: impl FnOnce(&str)) {
        let descriptions = self.descriptions.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(d) = descriptions.get(slot) {
            f(d);
        }
    }

    /// Takes the next free slot for a fault described as `description`.
    fn take(&self, description: String) -> Option<usize> {
        let mut descriptions = self.descriptions.lock().unwrap_or_else(PoisonError::into_inner);
        (descriptions.len() < self.slots.len()).then(|| {
            descriptions.push(description);
            descriptions.len() - 1
        })
    }
}

/// How a fault is described in reports and the bus log.
pub fn describe(fault: &FaultConfig, frame: f64) -> String {
    let target = fault
        .message
        .as_ref()
        .map_or("the bus".to_string(), |m| m.value.clone());
    let what = match &fault.kind.value {
        FaultKind::Delay { frames } => format!("delay {target} by {} s", *frames as f64 * frame),
        FaultKind::Repeat { times } => format!("repeat {target} ×{times}"),
        FaultKind::WrongLength { bytes } => format!("wrong_length {target} ({bytes} bytes)"),
        FaultKind::Override { signal, value, raw } => {
            format!(
                "override {target}.{} = {value}{}",
                signal.value,
                if *raw { " (raw)" } else { "" }
            )
        }
        FaultKind::Burst { id, per_frame, .. } => format!("burst of id {id:#x} ×{per_frame} per frame"),
        kind => format!("{} {target}", kind.name()),
    };
    let when = match fault.end {
        FaultEnd::Frames(n) => format!(" for {} s", n as f64 * frame),
        FaultEnd::Count(1) => " for 1 frame".to_string(),
        FaultEnd::Count(n) => format!(" for {n} frames"),
        FaultEnd::Never => String::new(),
    };
    format!("{what}{when}")
}

/// The queue of faults requested at run time, from normal threads to a
/// bus's writer.
pub struct FaultQueue {
    producer: Mutex<HeapProd<Fault>>,
    /// The slots the faults are counted in.
    pub slots: Arc<FaultSlots>,
}

/// A fault request refused.
#[derive(Debug, thiserror::Error)]
pub enum FaultRequestError {
    /// The request does not describe a fault of this bus.
    #[error("{0}")]
    Invalid(String),
    /// Every run-time slot is taken, or the writer has not taken the
    /// previous requests yet.
    #[error("this bus has taken {RUNTIME_FAULTS} faults at run time already, or its queue is full; start another run")]
    Full,
}

impl FaultQueue {
    /// A queue feeding a writer's [`FaultInbox`], counting in `slots`.
    pub fn new(slots: Arc<FaultSlots>) -> (Self, FaultInbox) {
        let (producer, consumer) = HeapRb::new(RUNTIME_FAULTS).split();
        (
            FaultQueue {
                producer: Mutex::new(producer),
                slots,
            },
            FaultInbox { consumer },
        )
    }

    /// Queues `fault` (its slot is assigned here), described as
    /// `description`; returns its slot.
    pub fn push(&self, mut fault: Fault, description: String) -> Result<usize, FaultRequestError> {
        let mut producer = self.producer.lock().unwrap_or_else(PoisonError::into_inner);
        let slot = self.slots.take(description).ok_or(FaultRequestError::Full)?;
        fault.slot = slot;
        producer.try_push(fault).map_err(|_| FaultRequestError::Full)?;
        Ok(slot)
    }
}

/// Injects faults into a running session's buses: what the Python package
/// and the dashboard call.
#[derive(Clone, Default)]
pub struct FaultTrigger {
    /// Each bus: its name, its writer's queue and its mapping.
    buses: Vec<(String, Arc<FaultQueue>, Arc<BusMap>)>,
    /// The run's frame (s).
    frame: f64,
}

/// A fault a session took at run time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Injected {
    /// Its slot in its bus's report.
    pub slot: usize,
    /// How the report describes it.
    pub description: String,
}

impl FaultTrigger {
    /// A trigger for `buses` (name, queue, mapping), in a run of frames of
    /// `frame` s.
    pub fn new(buses: Vec<(String, Arc<FaultQueue>, Arc<BusMap>)>, frame: f64) -> Self {
        FaultTrigger { buses, frame }
    }

    /// Each bus, with the messages it sends.
    pub fn targets(&self) -> Vec<(String, Vec<String>)> {
        (self.buses.iter())
            .map(|(name, _, map)| (name.clone(), map.tx.iter().map(|tx| tx.message.name.clone()).collect()))
            .collect()
    }

    /// Injects the fault `request` describes into bus `bus`: the keys of a
    /// `[[bus.fault]]` table (`kind`, `message`, `start` as a run time,
    /// `duration` or `count`, and the kind's own), numbers of seconds or
    /// duration strings for times. Without `start` it begins at the next
    /// frame the writer takes it at.
    pub fn inject(&self, bus: &str, request: &serde_json::Value) -> Result<Injected, FaultRequestError> {
        let Some((_, queue, map)) = self.buses.iter().find(|(name, ..)| name == bus) else {
            let names = list(self.buses.iter().map(|(n, ..)| n.as_str()));
            return Err(FaultRequestError::Invalid(format!(
                "no bus \"{bus}\"; the session's buses: {names}"
            )));
        };
        if map.tx.is_empty() {
            return Err(FaultRequestError::Invalid(format!(
                "bus {bus} sends no message; faults act on what a bus sends (its [[bus.transmit]] tables)"
            )));
        }
        let origin = PathBuf::from(format!("fault request for bus {bus}"));
        let config = tandem_config::parse_fault_request(request, &origin, self.frame)
            .map_err(|e| FaultRequestError::Invalid(e.to_string()))?;
        // A request has no lines: its keys are named without a place.
        let fault = compile(&origin, map, &config, 0).map_err(|e| {
            let unplaced = ConfigError { location: None, ..e };
            FaultRequestError::Invalid(unplaced.to_string())
        })?;
        let description = describe(&config, self.frame);
        let slot = queue.push(fault, description.clone())?;
        Ok(Injected { slot, description })
    }
}

/// The writer's end of a [`FaultQueue`].
pub struct FaultInbox {
    /// Requested faults, in order.
    pub consumer: HeapCons<Fault>,
}

/// Frames a bus's writer holds back for delay faults.
const DELAY_LINE: usize = 1024;

/// A fault in a writer's hands.
#[derive(Clone, Copy, Debug)]
struct Active {
    fault: Fault,
    /// The boundary it began at.
    began: Option<u64>,
    /// Frames it affected.
    affected: u64,
    /// The counter a stuck-counter fault holds.
    stuck: Option<u32>,
}

impl Active {
    /// Whether it acts on message `message` now.
    fn on(&self, message: usize) -> bool {
        self.began.is_some() && self.fault.message == Some(message)
    }
}

/// The faults of one bus's writer: the configured ones, those requested
/// at run time, and the frames they hold back. Allocation-free once
/// built: every list has room for the most it can hold.
pub struct Faults {
    active: Vec<Active>,
    inbox: Option<FaultInbox>,
    slots: Arc<FaultSlots>,
    delayed: Vec<(u64, CanFrame)>,
    /// Frames a delay fault could not hold (its line was full).
    pub overflow: u64,
}

/// A fault beginning or ending, at a frame boundary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    /// The fault's slot.
    pub slot: usize,
    /// The boundary (frame number) it took effect at.
    pub boundary: u64,
    /// Whether it began (else it ended).
    pub begins: bool,
}

impl Faults {
    /// The faults `configured`, those arriving at `inbox`, counted in
    /// `slots`.
    pub fn new(configured: &[Fault], inbox: Option<FaultInbox>, slots: Arc<FaultSlots>) -> Self {
        let mut active = Vec::with_capacity(configured.len() + RUNTIME_FAULTS);
        active.extend(configured.iter().map(|&fault| Active {
            fault,
            began: None,
            affected: 0,
            stuck: None,
        }));
        let delays = configured.iter().any(|f| matches!(f.action, Action::Delay(_))) || inbox.is_some();
        Faults {
            active,
            inbox,
            slots,
            delayed: Vec::with_capacity(if delays { DELAY_LINE } else { 0 }),
            overflow: 0,
        }
    }

    /// The most frames the faults can add to one boundary's sending
    /// beyond `due` frames due: repeats, bursts and released delays.
    pub fn room(due: usize) -> usize {
        due * 16 + RUNTIME_FAULTS * 4 + DELAY_LINE
    }

    /// Moves to boundary `boundary`: takes the faults requested since,
    /// begins those due and ends those past, calling `changed` for each.
    pub fn advance(&mut self, boundary: u64, mut changed: impl FnMut(Change)) {
        if let Some(inbox) = &mut self.inbox {
            while self.active.len() < self.active.capacity() {
                let Some(fault) = inbox.consumer.try_pop() else { break };
                self.active.push(Active {
                    fault,
                    began: None,
                    affected: 0,
                    stuck: None,
                });
            }
        }
        let slots = &self.slots.slots;
        self.active.retain_mut(|a| {
            let began = match a.began {
                Some(b) => b,
                None if a.fault.start <= boundary => {
                    a.began = Some(boundary);
                    slots[a.fault.slot].begin(boundary);
                    changed(Change {
                        slot: a.fault.slot,
                        boundary,
                        begins: true,
                    });
                    boundary
                }
                None => return true,
            };
            let over = match a.fault.end {
                FaultEnd::Frames(n) => boundary >= began + n,
                FaultEnd::Count(n) => a.affected >= n,
                FaultEnd::Never => false,
            };
            if over {
                slots[a.fault.slot].end(boundary);
                changed(Change {
                    slot: a.fault.slot,
                    boundary,
                    begins: false,
                });
            }
            !over
        });
    }

    /// Whether a stop fault holds the node silent; counts the boundary.
    pub fn stopped(&mut self) -> bool {
        let mut stopped = false;
        for a in self
            .active
            .iter_mut()
            .filter(|a| a.began.is_some() && a.fault.action == Action::Stop)
        {
            a.affected += 1;
            self.slots.slots[a.fault.slot].affected.increment();
            stopped = true;
        }
        stopped
    }

    /// Edits the payload of message `message` (of DBC message `dbc`)
    /// before it is protected: signal overrides.
    pub fn override_signals(&self, message: usize, dbc: &tandem_dbc::Message, payload: &mut [u8]) {
        for a in self.active.iter().filter(|a| a.on(message)) {
            if let Action::Override { signal, value, raw } = a.fault.action {
                let signal = &dbc.signals[signal];
                if raw {
                    signal.encode_raw(value as u64, payload);
                } else {
                    signal.encode(value, payload);
                }
            }
        }
    }

    /// The counter message `message` must carry while a stuck-counter
    /// fault holds it (`next`: the counter it would carry).
    pub fn stuck_counter(&mut self, message: usize, next: u32) -> Option<u32> {
        let a = self
            .active
            .iter_mut()
            .find(|a| a.on(message) && a.fault.action == Action::StuckCounter)?;
        Some(*a.stuck.get_or_insert(next))
    }

    /// Whether a bad-CRC fault acts on message `message`.
    pub fn bad_crc(&self, message: usize) -> bool {
        self.active
            .iter()
            .any(|a| a.on(message) && a.fault.action == Action::BadCrc)
    }

    /// Sends `frame` of message `message` at boundary `boundary` into
    /// `ready`, as the faults on it say: with another length, not at all,
    /// later, or several times. Counts what each fault affected.
    pub fn route(&mut self, boundary: u64, message: usize, frame: CanFrame, ready: &mut Vec<CanFrame>) {
        let mut frame = frame;
        let mut copies = 1;
        let mut hold = None;
        for a in self.active.iter_mut().filter(|a| a.on(message)) {
            match a.fault.action {
                Action::WrongLength(bytes) => frame = resized(&frame, bytes),
                Action::Drop => copies = 0,
                Action::Repeat(times) => copies = copies.max(times),
                Action::Delay(frames) => hold = Some(boundary + frames),
                _ => {}
            }
            a.affected += 1;
            self.slots.slots[a.fault.slot].affected.increment();
        }
        if copies == 0 {
            return;
        }
        match hold {
            Some(release) if self.delayed.len() < self.delayed.capacity() => self.delayed.push((release, frame)),
            Some(_) => self.overflow += 1,
            None => {
                for _ in 0..copies {
                    push(ready, frame);
                }
            }
        }
    }

    /// How many frames delay faults hold: a mark to withdraw to.
    pub fn held(&self) -> usize {
        self.delayed.len()
    }

    /// Lets go of the frames delay faults took after `mark` (from
    /// [`held`](Self::held)): those of a write that is withdrawn.
    pub fn withdraw_held(&mut self, mark: usize) {
        self.delayed.truncate(mark);
    }

    /// Adds to `ready` the delayed frames due by `boundary` and the
    /// frames of bursts.
    pub fn release(&mut self, boundary: u64, ready: &mut Vec<CanFrame>) {
        let mut i = 0;
        while i < self.delayed.len() {
            if self.delayed[i].0 <= boundary {
                push(ready, self.delayed.remove(i).1);
            } else {
                i += 1;
            }
        }
        for a in self.active.iter_mut().filter(|a| a.began.is_some()) {
            if let Action::Burst { frame, per_frame } = a.fault.action {
                for _ in 0..per_frame {
                    push(ready, frame);
                }
                a.affected += 1;
                self.slots.slots[a.fault.slot].affected.increment();
            }
        }
    }
}

/// Pushes `frame` when there is room (reserved beforehand).
fn push(ready: &mut Vec<CanFrame>, frame: CanFrame) {
    if ready.len() < ready.capacity() {
        ready.push(frame);
    }
}

/// `frame` with `bytes` bytes of payload: cut, or padded with zeros.
fn resized(frame: &CanFrame, bytes: usize) -> CanFrame {
    let mut payload = [0u8; 64];
    let n = frame.payload().len().min(bytes);
    payload[..n].copy_from_slice(&frame.payload()[..n]);
    let built = if bytes > 8 {
        CanFrame::fd(frame.id(), &payload[..bytes], true, false)
    } else {
        CanFrame::data(frame.id(), &payload[..bytes])
    };
    built.unwrap_or(*frame)
}
