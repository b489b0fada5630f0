//! The transmit path. Writers that never block (CAN buses) run on the fast
//! thread itself ([`FastOutputs`]): each frame's outputs are encoded when
//! the frame ends and sent when the next one starts, with no thread
//! wake-up in between. For the others (serial devices, whose writes may
//! wait) the fast thread queues each frame's outputs in a lock-free ring,
//! and a transmitter hands the rows to them: on the real clock from a
//! thread of its own that wakes at the frame boundaries after frames with
//! something due, on the virtual clock inline after every frame.

use std::sync::Arc;
use std::thread::{self, JoinHandle};

use ringbuf::traits::{Consumer, Observer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};
use tandem_runtime::tandem::clock::{Clock, MonotonicClock, Nanos};
use tandem_runtime::tandem::control::RunControl;
use tandem_runtime::tandem::metrics::Counter;
use tandem_runtime::tandem::outputs::OutputSink;

use crate::device::{prioritize, DeviceWriter, IoPlacement, Schedule};
use crate::metrics::DeviceMetrics;

/// Output rows in flight from the fast thread to the transmitter.
const RING: usize = 256;

/// The fast thread's end: each frame's number and outputs, queued.
pub struct OutputQueue {
    ring: HeapProd<f64>,
    row: Vec<f64>,
    dropped: Arc<Counter>,
}

impl OutputSink for OutputQueue {
    fn write(&mut self, k: u64, _t: f64, y: &[f64]) {
        if self.ring.vacant_len() < self.row.len() {
            self.dropped.increment();
            return;
        }
        self.row[0] = k as f64;
        self.row[1..].copy_from_slice(y);
        self.ring.push_slice(&self.row);
    }
}

/// Hands queued output rows to the devices' writers.
pub struct Transmitter {
    ring: HeapCons<f64>,
    row: Vec<f64>,
    writers: Vec<(Box<dyn DeviceWriter>, Arc<DeviceMetrics>)>,
    last: Option<u64>,
}

/// The fast thread's outputs: the writers that run on it, and the queue to
/// the transmitter for the others.
pub struct FastOutputs {
    writers: Vec<Box<dyn DeviceWriter>>,
    queue: Option<OutputQueue>,
}

impl OutputSink for FastOutputs {
    fn boundary(&mut self, k: u64) {
        for w in &mut self.writers {
            w.boundary(k);
        }
    }

    fn write(&mut self, k: u64, t: f64, y: &[f64]) {
        for w in &mut self.writers {
            w.write(k, y);
        }
        if let Some(queue) = &mut self.queue {
            queue.write(k, t, y);
        }
    }

    fn skipped(&mut self, from: u64, to: u64) {
        for w in &mut self.writers {
            w.skipped(from, to);
        }
    }
}

/// The fast side's outputs on the virtual clock when the run shares
/// in-process buses with others: what a frame's outputs make due is sent
/// as soon as the frame ends rather than when the next one starts (the
/// same boundary in virtual time), so that runs advancing in lock-step
/// have all sent for a boundary before any of them receives at it.
pub struct SendAtFrameEnd(pub Box<dyn OutputSink>);

impl OutputSink for SendAtFrameEnd {
    fn boundary(&mut self, _k: u64) {}

    fn write(&mut self, k: u64, t: f64, y: &[f64]) {
        self.0.write(k, t, y);
        self.0.boundary(k + 1);
    }

    fn skipped(&mut self, from: u64, to: u64) {
        self.0.skipped(from, to);
    }
}

/// The transmit paths of `writers` (each with its device's counters) for
/// rows of `outputs` values: those that may run on the fast thread go into
/// the fast thread's outputs, the others behind a queue to a transmitter
/// (rows lost to a full queue are counted in `dropped`).
pub fn transmit_paths(
    outputs: usize,
    writers: Vec<(Box<dyn DeviceWriter>, Arc<DeviceMetrics>)>,
    dropped: Arc<Counter>,
) -> (Option<FastOutputs>, Option<Transmitter>) {
    if writers.is_empty() {
        return (None, None);
    }
    let (fast, threaded): (Vec<_>, Vec<_>) = writers
        .into_iter()
        .partition(|(w, _)| w.schedule() == Schedule::FastThread);
    let (queue, transmitter) = if threaded.is_empty() {
        (None, None)
    } else {
        let (q, t) = output_queue(outputs, threaded, dropped);
        (Some(q), Some(t))
    };
    let fast = FastOutputs {
        writers: fast.into_iter().map(|(w, _)| w).collect(),
        queue,
    };
    (Some(fast), transmitter)
}

/// A queue of rows of `outputs` values from the fast thread to a
/// transmitter serving `writers` (each with its device's counters); rows
/// lost to a full queue are counted in `dropped`.
fn output_queue(
    outputs: usize,
    writers: Vec<(Box<dyn DeviceWriter>, Arc<DeviceMetrics>)>,
    dropped: Arc<Counter>,
) -> (OutputQueue, Transmitter) {
    let width = outputs + 1;
    let (ring, cons) = HeapRb::<f64>::new(width * RING).split();
    (
        OutputQueue {
            ring,
            row: vec![0.0; width],
            dropped,
        },
        Transmitter {
            ring: cons,
            row: vec![0.0; width],
            writers,
            last: None,
        },
    )
}

impl Transmitter {
    /// The first frame at or after `k` after which a writer has something
    /// due.
    pub fn next_due(&self, k: u64) -> Option<u64> {
        self.writers.iter().filter_map(|(w, _)| w.schedule().next_due(k)).min()
    }

    /// Hands every queued row to the writers; returns the newest frame
    /// written so far.
    pub fn pump(&mut self) -> Option<u64> {
        while self.ring.occupied_len() >= self.row.len() {
            self.ring.pop_slice(&mut self.row);
            let k = self.row[0] as u64;
            for (writer, _) in &mut self.writers {
                writer.write(k, &self.row[1..]);
            }
            self.last = Some(k);
        }
        self.last
    }

    /// Starts the transmit thread, placed as `io` says: after each
    /// frame with something due, it wakes at the next frame boundary, takes
    /// the frame's outputs and sends what is due. Ends when the run is
    /// asked to stop.
    pub fn spawn(
        mut self,
        frame_ns: Nanos,
        control: Arc<RunControl>,
        io: IoPlacement,
    ) -> std::io::Result<JoinHandle<()>> {
        thread::Builder::new().name("tandem-tx".into()).spawn(move || {
            prioritize(io);
            let Some(origin) = control.wait_for_origin() else {
                return;
            };
            let mut clock = MonotonicClock::with_origin(origin);
            let mut k = 0;
            while !control.stop_requested() {
                let Some(due) = self.next_due(k) else { return };
                let boundary = (due as Nanos + 1) * frame_ns;
                clock.sleep_until(boundary);
                // The fast thread queues the row at the end of frame `due`;
                // if it is late, wait for it up to half a frame.
                let give_up = boundary + frame_ns / 2;
                loop {
                    if self.pump().is_some_and(|f| f >= due) || clock.now() > give_up {
                        break;
                    }
                    let now = clock.now();
                    clock.sleep_until(now + 20_000);
                }
                let done = clock.now();
                for (_, metrics) in &self.writers {
                    metrics.tx_path.record((done - boundary) as f64);
                }
                k = due + 1;
            }
        })
    }
}
