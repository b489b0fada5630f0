//! The I/O threads of a run: one receive thread per bus, blocked in its
//! transport, and one transmit thread for all buses, which wakes at the
//! frame boundaries after frames with messages due. They meet the fast
//! thread only through lock-free queues: samples in, output rows out.
//! Neither ever blocks the fast thread; every fault is counted.
//!
//! The same encoding and decoding run inline on the virtual clock (see
//! [`TxEncoder`] and [`BusMap::decode`]), so replays are deterministic.

use std::io;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crossbeam_channel::Sender;
use tandem_runtime::record::Recorder;
use tandem_runtime::tandem::clock::{Clock, MonotonicClock, Nanos};
use tandem_runtime::tandem::control::RunControl;
use tandem_runtime::tandem::recording::RowReceiver;
use tandem_runtime::tandem::settings::Placement;
use tandem_runtime::tandem::threads::place_current_thread;

use crate::bus_inputs::SampleSender;
use crate::bus_metrics::BusMetrics;
use crate::frame::CanFrame;
use crate::log::{Direction, LogRecord};
use crate::mapping::{BusMap, RxOutcome};
use crate::transport::{BusError, CanReceiver, CanSender};

/// How long a receive thread waits in its transport before checking
/// whether the run has stopped.
const RX_POLL: Duration = Duration::from_millis(20);

/// Nanoseconds since the Unix epoch, for log records of real buses.
pub fn wall_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// One bus as the I/O threads see it.
#[derive(Clone)]
pub struct BusLink {
    /// Its name, for logs.
    pub name: Arc<str>,
    /// Its mapping.
    pub map: Arc<BusMap>,
    /// Its counters.
    pub metrics: Arc<BusMetrics>,
    /// Where its traffic is logged, if anywhere.
    pub log: Option<Sender<LogRecord>>,
}

impl BusLink {
    /// Logs `frame` (unless there is no log); a full log queue drops the
    /// record and counts it.
    pub fn log(&self, time_ns: i64, frame: &CanFrame, direction: Direction) {
        if let Some(log) = &self.log {
            let record = LogRecord {
                time_ns,
                interface: self.name.to_string(),
                frame: *frame,
                direction,
            };
            if log.try_send(record).is_err() {
                self.metrics.log_dropped.increment();
            }
        }
    }

    /// Decodes a received `frame` at run time `time` (s) into `samples`
    /// and counts what became of it.
    pub fn receive(&self, frame: &CanFrame, time: f64, samples: &mut SampleSender) {
        let m = &self.metrics;
        match self.map.decode(frame, time, |s| {
            if !samples.push(s) {
                m.rx_dropped.increment();
            }
        }) {
            RxOutcome::Mapped(_) => m.rx_frames.increment(),
            RxOutcome::Unmapped => m.rx_unmapped.increment(),
            RxOutcome::WrongLength => m.rx_wrong_length.increment(),
        }
    }

    /// Counts a receive error by kind.
    pub fn count_rx_error(&self, e: &BusError) {
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

/// Gives the calling I/O thread SCHED_FIFO `priority` where the system
/// allows it (best effort: without it, the thread runs as a normal one).
pub fn prioritize(priority: u8) {
    let _ = place_current_thread(Placement { core: None, priority });
}

/// Starts `link`'s receive thread on `rx`, at SCHED_FIFO `priority`.
/// Frames are stamped with the run's clock once `control` has an origin;
/// the thread ends when the run is asked to stop.
pub fn spawn_receiver(
    link: BusLink,
    mut rx: Box<dyn CanReceiver>,
    mut samples: SampleSender,
    control: Arc<RunControl>,
    priority: u8,
) -> io::Result<JoinHandle<()>> {
    thread::Builder::new()
        .name(format!("tandem-rx-{}", link.name))
        .spawn(move || {
            prioritize(priority);
            let Some(origin) = control.wait_for_origin() else {
                return;
            };
            while !control.stop_requested() {
                match rx.recv(RX_POLL) {
                    Ok(Some(received)) => {
                        let got = MonotonicClock::raw_now();
                        link.receive(&received.frame, (got - origin) as f64 * 1e-9, &mut samples);
                        link.metrics.rx_path.record((MonotonicClock::raw_now() - got) as f64);
                        link.log(wall_ns(), &received.frame, Direction::Rx);
                    }
                    Ok(None) => {}
                    Err(e) => {
                        link.count_rx_error(&e);
                        if matches!(e, BusError::Disconnected(_) | BusError::Io(_)) {
                            // The transport backs off itself; do not spin on a dead device.
                            thread::sleep(RX_POLL);
                        }
                    }
                }
            }
        })
}

/// Encodes the messages due in each output row and hands them to each
/// bus's sender. Used by the transmit thread, and inline on the virtual
/// clock (with `send` writing to the log only).
pub struct TxEncoder {
    links: Vec<(BusLink, Option<Box<dyn CanSender>>)>,
    frame: f64,
    /// Log time of the frame being sent: wall clock, or virtual.
    time_ns: Box<dyn FnMut(f64) -> i64 + Send>,
    /// The newest frame sent.
    last_frame: Option<u64>,
}

impl TxEncoder {
    /// An encoder for `links`, each with its sender (none: log only),
    /// for frames of `frame` seconds; `time_ns` gives the log time of a
    /// frame sent for the output row at run time `t`.
    pub fn new(
        links: Vec<(BusLink, Option<Box<dyn CanSender>>)>,
        frame: f64,
        time_ns: Box<dyn FnMut(f64) -> i64 + Send>,
    ) -> Self {
        TxEncoder {
            links,
            frame,
            time_ns,
            last_frame: None,
        }
    }

    /// The first frame at or after `k` after which some message is due.
    pub fn next_due(&self, k: u64) -> Option<u64> {
        self.links
            .iter()
            .flat_map(|(link, _)| link.map.tx.iter())
            .map(|tx| k.div_ceil(tx.period) * tx.period)
            .min()
    }

    /// The newest frame whose row has been sent.
    pub fn last_frame(&self) -> Option<u64> {
        self.last_frame
    }
}

impl Recorder for TxEncoder {
    fn record(&mut self, t: f64, y: &[f64]) -> io::Result<()> {
        let k = (t / self.frame).round() as u64;
        self.last_frame = Some(k);
        let time_ns = (self.time_ns)(t);
        for (link, sender) in &mut self.links {
            let m = &link.metrics;
            let clamped = link.map.encode_due(k, y, |frame| {
                let sent = match sender {
                    Some(s) => s.send(frame),
                    None => Ok(()),
                };
                match sent {
                    Ok(()) => {
                        m.tx_frames.increment();
                        link.log(time_ns, frame, Direction::Tx);
                    }
                    Err(BusError::TxQueueFull) => m.tx_queue_full.increment(),
                    Err(_) => m.tx_errors.increment(),
                }
            });
            m.tx_clamped.add(clamped);
        }
        Ok(())
    }
}

/// Starts the transmit thread, at SCHED_FIFO `priority`: after each frame
/// with a message due, it wakes at the next frame boundary, takes the
/// frame's output row and sends the due messages. Ends when the run is
/// asked to stop.
pub fn spawn_transmitter(
    mut encoder: TxEncoder,
    mut rows: RowReceiver,
    frame_ns: Nanos,
    control: Arc<RunControl>,
    priority: u8,
) -> io::Result<JoinHandle<()>> {
    thread::Builder::new().name("tandem-tx".into()).spawn(move || {
        prioritize(priority);
        let Some(origin) = control.wait_for_origin() else {
            return;
        };
        let mut clock = MonotonicClock::with_origin(origin);
        let mut k = 0;
        while !control.stop_requested() {
            let Some(due) = encoder.next_due(k) else { return };
            let boundary = (due as Nanos + 1) * frame_ns;
            clock.sleep_until(boundary);
            // The fast thread offers the row at the end of frame `due`; if
            // it is late, wait for it up to half a frame.
            let give_up = boundary + frame_ns / 2;
            loop {
                let _ = rows.drain(&mut encoder);
                if encoder.last_frame().is_some_and(|f| f >= due) || clock.now() > give_up {
                    break;
                }
                let now = clock.now();
                clock.sleep_until(now + 20_000);
            }
            let done = clock.now();
            for (link, _) in &encoder.links {
                link.metrics.tx_path.record((done - boundary) as f64);
            }
            k = due + 1;
        }
    })
}
