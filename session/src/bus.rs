//! A CAN bus as a device of a run: its transport, its receive thread (one
//! per bus, blocked in its transport) and its writer, which encodes the
//! messages due after each frame and hands them to the transport without
//! blocking. The receive thread meets the fast thread only through a
//! lock-free sample queue; every fault is counted.
//!
//! The same decoding runs inline on the virtual clock and in replays
//! ([`BusFeed`]), and the same encoding everywhere ([`BusWriter`]), so
//! replays are deterministic.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread;
use std::time::Duration;

use tandem_can::virtual_bus::VirtualBus;
use tandem_can::{BusError, CanFrame, CanReceiver, CanSender, Duplex};
use tandem_config::TransportConfig;
use tandem_e2e::{Checker, Protector};
use tandem_log::Direction;
use tandem_runtime::tandem::clock::MonotonicClock;
use tandem_runtime::tandem::control::RunControl;

use crate::device::{
    Device, DeviceError, DeviceKind, DeviceWriter, Halves, IoPlacement, IoThread, LogClock, Schedule, Setup, Traffic,
};
use crate::fault::{Fault, FaultInbox, FaultPlan, FaultQueue, FaultSlots, Faults};
use crate::inputs::{sample_queue, MessageInputs, ReadHalf, SampleSender};
use crate::log::{wall_ns, FaultMark, LogProducer, Logged, LoggedFrame, StallMark};
use crate::mapping::{BusMap, RxOutcome, Sample};
use crate::metrics::{DeviceMetrics, MessageE2e};
use crate::protection;

/// How long a receive thread waits in its transport before checking
/// whether the run has stopped.
const RX_POLL: Duration = Duration::from_millis(20);
/// Samples in flight from one bus's receive side to the fast thread.
const SAMPLE_QUEUE: usize = 1 << 14;
/// Frames a virtual bus holds for each node.
const VIRTUAL_QUEUE: usize = 1 << 12;

/// The in-process virtual buses, by channel; runs of one process that
/// name the same channel share it.
fn virtual_bus(channel: &str) -> VirtualBus {
    static CHANNELS: OnceLock<Mutex<HashMap<String, VirtualBus>>> = OnceLock::new();
    let mut channels = CHANNELS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    channels.entry(channel.to_string()).or_default().clone()
}

/// A transport that could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The UDP multicast group could not be joined.
    #[error("cannot join UDP multicast group {group}:{port}: {cause}")]
    Udp {
        /// The group.
        group: std::net::Ipv4Addr,
        /// The port.
        port: u16,
        /// What the system said.
        cause: std::io::Error,
    },
    /// The SocketCAN interface could not be opened.
    #[error(transparent)]
    SocketCan(#[from] tandem_bus::socketcan_bus::SocketCanOpenError),
    /// The SLCAN adapter's serial port could not be opened.
    #[error(transparent)]
    Serial(#[from] tandem_bus::serial_port::SerialOpenError),
    /// A bus carried over DCP in a run that is not served as a DCP slave.
    #[error("its transport is \"dcp\": run the configuration with `tandem run`, which serves its [dcp] slave")]
    NotServed,
}

/// Opens a bus's transport.
pub fn open_transport(transport: &TransportConfig) -> Result<Duplex, TransportError> {
    match transport {
        TransportConfig::Udp { group, port } => tandem_bus::udp::open(&tandem_bus::udp::UdpOptions {
            group: *group,
            port: *port,
            ttl: 1,
        })
        .map_err(|cause| TransportError::Udp {
            group: *group,
            port: *port,
            cause,
        }),
        TransportConfig::SocketCan { interface, fd } => tandem_bus::socketcan_bus::open(
            interface,
            &tandem_bus::socketcan_bus::SocketCanOptions {
                fd: *fd,
                ..Default::default()
            },
        )
        .map_err(TransportError::from),
        TransportConfig::Slcan { device, bitrate } => tandem_bus::slcan::open(
            device,
            &tandem_bus::slcan::SlcanOptions {
                bitrate: *bitrate,
                ..Default::default()
            },
        )
        .map_err(TransportError::from),
        TransportConfig::Virtual { channel } => Ok(virtual_bus(channel).node(VIRTUAL_QUEUE)),
        TransportConfig::Dcp => Err(TransportError::NotServed),
    }
}

/// A bus's receive side: decodes received frames into samples for the
/// fast thread, counts what became of them and logs them. Used by its
/// receive thread, and inline by replays and the virtual clock.
pub struct BusFeed {
    bus: u16,
    map: Arc<BusMap>,
    metrics: Arc<DeviceMetrics>,
    samples: SampleSender,
    log: Option<LogProducer>,
    /// Per received message: its E2E checker and its counts' index in the
    /// metrics.
    checkers: Vec<Option<(Checker, usize)>>,
}

impl BusFeed {
    /// Decodes `frame`, received at run time `time` (s), into samples and
    /// logs it at `log_ns`.
    pub fn receive(&mut self, frame: &CanFrame, time: f64, log_ns: i64) {
        let m = &self.metrics;
        let samples = &mut self.samples;
        let checkers = &mut self.checkers;
        let mut checked = None;
        let accept = |index: usize, payload: &[u8]| {
            let Some((checker, counts)) = checkers[index].as_mut() else {
                return true;
            };
            let status = checker.check(payload);
            m.e2e[*counts].counts.record(status);
            checked = Some((index, status));
            protection::accepted(status)
        };
        let outcome = self.map.decode(frame, time, accept, |s| {
            if !samples.push(s) {
                m.rx_merged.increment();
            }
        });
        match outcome {
            RxOutcome::Mapped(_) | RxOutcome::Refused(_) => m.rx_frames.increment(),
            RxOutcome::Unmapped => m.rx_unmapped.increment(),
            RxOutcome::WrongLength => m.rx_wrong_length.increment(),
        }
        if let Some((index, status)) = checked {
            if let Some(input) = self.map.rx[index].status {
                let sample = Sample {
                    message: index as u32,
                    input: input as u32,
                    value: protection::status_code(status),
                    time,
                    fresh: protection::accepted(status),
                };
                if !samples.push(sample) {
                    m.rx_merged.increment();
                }
            }
        }
        if let Some(log) = &mut self.log {
            let record = LoggedFrame {
                time_ns: log_ns,
                bus: self.bus,
                what: Logged::Frame(*frame, Direction::Rx),
            };
            log.log(record, &m.log_dropped);
        }
    }

    /// Moves samples that waited for room into the fast thread's queue.
    pub fn flush(&mut self) {
        self.samples.flush();
    }

    /// Counts a receive error by kind.
    fn count_error(&self, e: &BusError) {
        let m = &self.metrics;
        match e {
            BusError::BusOff => m.bus_off.increment(),
            BusError::Bus(_) => m.bus_errors.increment(),
            BusError::Malformed(_) => m.rx_malformed.increment(),
            BusError::Disconnected(_) => m.disconnects.increment(),
            BusError::TxQueueFull | BusError::Io(_) => m.rx_errors.increment(),
        }
    }
}

/// A bus's transmitting side, on the fast thread: after each frame it
/// encodes the messages due from the frame's outputs into frames kept
/// ready; at the next frame boundary (the start of the next frame) it hands
/// them to the transport without blocking (none: the log only), counts and
/// logs them. Nothing is allocated: the frames' room is reserved for the
/// most any frame makes due.
pub struct BusWriter {
    bus: u16,
    map: Arc<BusMap>,
    metrics: Arc<DeviceMetrics>,
    sender: Option<Box<dyn CanSender>>,
    log: Option<(LogProducer, LogClock)>,
    ready: Vec<CanFrame>,
    /// Per sent message: its E2E protector.
    protectors: Vec<Option<Protector>>,
    faults: Faults,
    /// The frame written last, if any.
    written: Option<u64>,
    /// What the last write changed, to withdraw it if a stall makes its
    /// frames stale before they are sent.
    undo: Undo,
}

/// The writer's state before its last write: the frame written before
/// it, each sent message's E2E counter, and how many frames delay faults
/// held.
struct Undo {
    written: Option<u64>,
    counters: Vec<u32>,
    held: usize,
}

impl Undo {
    /// Keeps the state a write starts from.
    fn remember(&mut self, written: Option<u64>, held: usize, protectors: &[Option<Protector>]) {
        self.written = written;
        self.held = held;
        for (counter, protector) in self.counters.iter_mut().zip(protectors) {
            *counter = protector.as_ref().map_or(0, Protector::counter);
        }
    }

    /// Sets each protector's counter back to the one it had.
    fn rewind(&self, protectors: &mut [Option<Protector>]) {
        for (protector, &counter) in protectors.iter_mut().zip(&self.counters) {
            if let Some(protector) = protector {
                protector.set_counter(counter);
            }
        }
    }
}

impl BusWriter {
    /// The writer of bus number `bus`, carrying `map`, applying `faults`.
    fn new(
        bus: u16,
        map: Arc<BusMap>,
        metrics: Arc<DeviceMetrics>,
        sender: Option<Box<dyn CanSender>>,
        log: Option<(LogProducer, LogClock)>,
        faults: Faults,
    ) -> Self {
        let most = map.tx.iter().map(|tx| tx.groups.len()).sum();
        let protectors: Vec<Option<Protector>> = map
            .tx
            .iter()
            .map(|tx| tx.protection.and_then(|p| Protector::new(p).ok()))
            .collect();
        BusWriter {
            bus,
            map,
            metrics,
            sender,
            log,
            ready: Vec::with_capacity(Faults::room(most)),
            undo: Undo {
                written: None,
                counters: vec![0; protectors.len()],
                held: 0,
            },
            protectors,
            faults,
            written: None,
        }
    }
}

impl DeviceWriter for BusWriter {
    fn schedule(&self) -> Schedule {
        Schedule::FastThread
    }

    fn write(&mut self, k: u64, y: &[f64]) {
        // What frame `k` makes due goes out at the boundary that ends it.
        let boundary = k + 1;
        let faults = &mut self.faults;
        let (bus, log, metrics) = (self.bus, &mut self.log, &self.metrics);
        faults.advance(boundary, |change| {
            // Marked in the bus log at the boundary it takes effect at.
            let Some((log, clock)) = log else { return };
            let record = LoggedFrame {
                time_ns: log_time(*clock, change.boundary),
                bus,
                what: Logged::Mark(FaultMark {
                    slot: change.slot as u16,
                    begins: change.begins,
                }),
            };
            log.log(record, &metrics.log_dropped);
        });
        let ready = &mut self.ready;
        faults.release(boundary, ready);
        self.undo.remember(self.written, faults.held(), &self.protectors);
        if faults.stopped() {
            return;
        }
        let map = &*self.map;
        let protectors = &mut self.protectors;
        let previous = self.written.replace(k);
        let clamped = map.encode_due(previous, k, y, |i, payload| {
            let tx = &map.tx[i];
            faults.override_signals(i, &tx.message, payload);
            if let Some(protector) = &mut protectors[i] {
                if let Some(counter) = faults.stuck_counter(i, protector.counter()) {
                    protector.set_counter(counter);
                }
                // The payload is the message's length, which the protection was checked against.
                let _ = protector.protect(payload);
                if faults.bad_crc(i) {
                    for byte in &mut payload[protector.config().crc_bytes()] {
                        *byte = !*byte;
                    }
                }
            }
            if let Some(frame) = tx.frame(payload) {
                faults.route(boundary, i, frame, ready);
            }
        });
        self.metrics.tx_clamped.add(clamped);
    }

    fn skipped(&mut self, from: u64, to: u64) {
        // Made due for the boundary at `from`: stale now. The write that
        // made it is withdrawn, so that its messages are due again with
        // slot `to`'s outputs, and their E2E counters count only frames
        // that reach the bus.
        self.metrics.tx_stale.add(self.ready.len() as u64);
        self.ready.clear();
        self.written = self.undo.written;
        self.faults.withdraw_held(self.undo.held);
        self.undo.rewind(&mut self.protectors);
        if let Some((log, clock)) = &mut self.log {
            let record = LoggedFrame {
                time_ns: log_time(*clock, to),
                bus: self.bus,
                what: Logged::Stall(StallMark { from, to }),
            };
            log.log(record, &self.metrics.log_dropped);
        }
    }

    fn boundary(&mut self, k: u64) {
        if self.ready.is_empty() {
            return;
        }
        let started = MonotonicClock::raw_now();
        let log_ns = self.log.as_ref().map_or(0, |(_, clock)| log_time(*clock, k));
        let m = &self.metrics;
        let mut sending = 0;
        for frame in &self.ready {
            let sent = match &mut self.sender {
                Some(s) => {
                    let before = MonotonicClock::raw_now();
                    let sent = s.send(frame);
                    let took = MonotonicClock::raw_now() - before;
                    m.tx_send.record(took as f64);
                    sending += took;
                    sent
                }
                None => Ok(()),
            };
            match sent {
                Ok(()) => {
                    m.tx_frames.increment();
                    if let Some((log, _)) = &mut self.log {
                        let record = LoggedFrame {
                            time_ns: log_ns,
                            bus: self.bus,
                            what: Logged::Frame(*frame, Direction::Tx),
                        };
                        log.log(record, &m.log_dropped);
                    }
                }
                Err(BusError::TxQueueFull) => m.tx_queue_full.increment(),
                Err(_) => m.tx_errors.increment(),
            }
        }
        self.ready.clear();
        m.tx_path.record((MonotonicClock::raw_now() - started - sending) as f64);
    }
}

/// The bus log's time of frame boundary `k`: on the virtual clock the
/// boundary's own, on the real clock now.
fn log_time(clock: LogClock, k: u64) -> i64 {
    match clock {
        LogClock::Virtual { origin_ns, frame_ns } => origin_ns + k as i64 * frame_ns,
        LogClock::Wall => wall_ns(),
    }
}

/// A CAN bus of a run.
pub struct BusDevice {
    name: String,
    bus: u16,
    transport: TransportConfig,
    map: Arc<BusMap>,
    metrics: Arc<DeviceMetrics>,
    receiver: Option<Box<dyn CanReceiver>>,
    feed: Option<BusFeed>,
    thread: IoThread,
    /// Per received message, its E2E counts' index in the metrics.
    e2e_counts: Vec<Option<usize>>,
    scheduled: Vec<Fault>,
    faults: Arc<FaultQueue>,
    inbox: Option<FaultInbox>,
}

impl BusDevice {
    /// Bus number `bus` of the run (its index in the bus log), reached by
    /// `transport`, carrying `map`.
    pub fn new(name: &str, bus: u16, transport: TransportConfig, map: BusMap, faults: FaultPlan) -> Self {
        let mut counted = 0..;
        let e2e_counts: Vec<Option<usize>> = (map.rx.iter())
            .map(|rx| rx.protection.and_then(|_| counted.next()))
            .collect();
        let e2e = (map.rx.iter().filter(|rx| rx.protection.is_some()))
            .map(|rx| MessageE2e {
                message: rx.message.name.clone(),
                counts: Default::default(),
            })
            .collect();
        let slots = Arc::new(FaultSlots::new(faults.descriptions));
        let (queue, inbox) = FaultQueue::new(Arc::clone(&slots));
        BusDevice {
            name: name.to_string(),
            bus,
            transport,
            map: Arc::new(map),
            metrics: Arc::new(DeviceMetrics {
                e2e,
                faults: Some(slots),
                ..DeviceMetrics::default()
            }),
            receiver: None,
            feed: None,
            thread: IoThread::default(),
            e2e_counts,
            scheduled: faults.faults,
            faults: Arc::new(queue),
            inbox: Some(inbox),
        }
    }

    /// Where faults are requested while the run goes on, and counted.
    pub fn fault_queue(&self) -> Arc<FaultQueue> {
        Arc::clone(&self.faults)
    }

    /// The bus's compiled mapping.
    pub fn map(&self) -> &Arc<BusMap> {
        &self.map
    }

    /// The receive side, for a replay or the virtual clock to feed (after
    /// [`Device::configure`]; none once taken or when the device is live).
    pub fn take_feed(&mut self) -> Option<BusFeed> {
        self.feed.take()
    }

    /// On the virtual clock, the receive side of an in-process transport,
    /// to poll at frame boundaries (after [`Device::configure`]; none for
    /// other transports or once taken).
    pub fn take_inline(&mut self) -> Option<InlineBus> {
        let rx = self.receiver.take()?;
        let feed = self.feed.take()?;
        Some(InlineBus { rx, feed })
    }
}

/// A bus on an in-process transport in a run on the virtual clock: what
/// the other nodes sent is received at the frame boundary where the run
/// polls it, so runs that advance in lock-step (each frame's sends done
/// before any run polls for that boundary) exchange frames
/// deterministically.
pub struct InlineBus {
    rx: Box<dyn CanReceiver>,
    feed: BusFeed,
}

impl InlineBus {
    /// Receives every frame waiting, as received at run time `time` (s),
    /// logged at `log_ns`, and hands their samples to the fast side.
    pub fn poll(&mut self, time: f64, log_ns: i64) {
        loop {
            match self.rx.recv(Duration::ZERO) {
                Ok(Some(received)) => self.feed.receive(&received.frame, time, log_ns),
                Ok(None) => break,
                Err(e) => self.feed.count_error(&e),
            }
        }
        self.feed.flush();
    }
}

impl Device for BusDevice {
    fn name(&self) -> &str {
        &self.name
    }

    fn kind(&self) -> DeviceKind {
        DeviceKind::Bus
    }

    fn metrics(&self) -> &Arc<DeviceMetrics> {
        &self.metrics
    }

    fn configure(&mut self, setup: Setup) -> Result<Halves, DeviceError> {
        let (rx_log, tx_log) = match setup.log {
            Some(l) => (Some(l.rx), Some((l.tx, l.clock))),
            None => (None, None),
        };
        let in_process = matches!(self.transport, TransportConfig::Virtual { .. });
        let opened = match setup.traffic {
            Traffic::Live => true,
            Traffic::Offline => in_process,
            Traffic::Replay => false,
        };
        let sender = if opened {
            let duplex = match setup.transport {
                Some(handed) => handed,
                None => open_transport(&self.transport).map_err(|e| DeviceError {
                    device: format!("bus {}", self.name),
                    message: e.to_string(),
                })?,
            };
            self.receiver = Some(duplex.rx);
            Some(duplex.tx)
        } else {
            None
        };
        let slots = self
            .map
            .rx
            .iter()
            .map(|m| m.inputs.len() + usize::from(m.status.is_some()))
            .sum();
        let (samples, queue) = sample_queue(SAMPLE_QUEUE, slots);
        let checkers = (self.map.rx.iter().zip(&self.e2e_counts))
            .map(|(m, &counts)| Some((Checker::new(m.protection?).ok()?, counts?)))
            .collect();
        self.feed = Some(BusFeed {
            bus: self.bus,
            map: Arc::clone(&self.map),
            metrics: Arc::clone(&self.metrics),
            samples,
            log: rx_log,
            checkers,
        });
        let read = (!self.map.rx.is_empty()).then(|| ReadHalf {
            queue,
            messages: (self.map.rx.iter().zip(&self.e2e_counts))
                .map(|(m, &e2e)| MessageInputs {
                    timeout: m.timeout,
                    inputs: m.inputs.iter().map(|&(_, input)| input).collect(),
                    status: m.status,
                    e2e,
                })
                .collect(),
            metrics: Arc::clone(&self.metrics),
        });
        let inbox = self.inbox.take();
        let sends = !self.map.tx.is_empty() || !self.scheduled.is_empty();
        let write = sends.then(|| {
            let faults = Faults::new(&self.scheduled, inbox, Arc::clone(&self.faults.slots));
            let writer = BusWriter::new(
                self.bus,
                Arc::clone(&self.map),
                Arc::clone(&self.metrics),
                sender,
                tx_log,
                faults,
            );
            Box::new(writer) as Box<dyn DeviceWriter>
        });
        Ok(Halves { read, write })
    }

    fn activate(&mut self, control: &Arc<RunControl>, io: IoPlacement) -> Result<(), DeviceError> {
        let (Some(mut rx), Some(mut feed)) = (self.receiver.take(), self.feed.take()) else {
            return Ok(());
        };
        let name = format!("tandem-rx-{}", self.name);
        self.thread
            .start(name, &format!("bus {}", self.name), control, io, move |origin, run| {
                while !run.stop_requested() {
                    feed.flush();
                    match rx.recv(RX_POLL) {
                        Ok(Some(received)) => {
                            let got = MonotonicClock::raw_now();
                            feed.receive(&received.frame, (got - origin) as f64 * 1e-9, wall_ns());
                            feed.metrics.rx_path.record((MonotonicClock::raw_now() - got) as f64);
                        }
                        Ok(None) => {}
                        Err(e) => {
                            feed.count_error(&e);
                            if matches!(e, BusError::Disconnected(_) | BusError::Io(_)) {
                                // The transport backs off itself; do not spin on a dead device.
                                thread::sleep(RX_POLL);
                            }
                        }
                    }
                }
            })
    }

    fn deactivate(&mut self) {
        self.thread.stop();
        self.receiver = None;
    }
}
