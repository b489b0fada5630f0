//! The fast thread's side of the receive path: samples queued by each
//! bus's receive thread become model inputs at the start of a frame, and
//! each received message's timeout policy is applied there.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ringbuf::traits::{Consumer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};
use tandem_runtime::tandem::inputs::InputSource;

use crate::bus_metrics::BusMetrics;
use crate::mapping::{BusMap, Sample, TimeoutPolicy};

/// The receive thread's end of a bus's sample queue.
pub struct SampleSender {
    ring: HeapProd<Sample>,
}

impl SampleSender {
    /// Queues `sample`; `false` when the queue is full (the sample is lost).
    pub fn push(&mut self, sample: Sample) -> bool {
        self.ring.try_push(sample).is_ok()
    }
}

/// A sample queue of `capacity` samples.
pub fn sample_queue(capacity: usize) -> (SampleSender, HeapCons<Sample>) {
    let (ring, cons) = HeapRb::new(capacity).split();
    (SampleSender { ring }, cons)
}

/// A receive-timeout fault: which bus and message, shared with the
/// thread that stops the run. 0 is none; otherwise `bus << 32 | message`
/// plus one.
#[derive(Default)]
pub struct Fault(AtomicU64);

impl Fault {
    /// The first fault raised: (bus, message), if any.
    pub fn get(&self) -> Option<(usize, usize)> {
        match self.0.load(Ordering::Acquire) {
            0 => None,
            v => Some((((v - 1) >> 32) as usize, ((v - 1) & 0xFFFF_FFFF) as usize)),
        }
    }

    fn raise(&self, bus: usize, message: usize) {
        let v = ((bus as u64) << 32 | message as u64) + 1;
        let _ = self.0.compare_exchange(0, v, Ordering::AcqRel, Ordering::Acquire);
    }
}

struct MessageState {
    last: f64,
    timed_out: bool,
    timeout: Option<f64>,
    policy: TimeoutPolicy,
    inputs: Vec<usize>,
}

struct BusRx {
    queue: HeapCons<Sample>,
    messages: Vec<MessageState>,
    metrics: Arc<BusMetrics>,
}

/// Model inputs driven by received signals, over a base source (the
/// profile) for the inputs no bus drives.
pub struct BusInputs {
    base: Box<dyn InputSource>,
    buses: Vec<BusRx>,
    latest: Vec<f64>,
    defaults: Vec<f64>,
    driven: Vec<usize>,
    newest: f64,
    fault: Arc<Fault>,
}

/// Tolerance on times (s).
const EPS: f64 = 1e-9;

impl BusInputs {
    /// Inputs over `base`, whose model inputs have `defaults`; a
    /// receive-timeout fault is raised in `fault`.
    pub fn new(base: Box<dyn InputSource>, defaults: Vec<f64>, fault: Arc<Fault>) -> Self {
        BusInputs {
            base,
            buses: Vec::new(),
            latest: defaults.clone(),
            defaults,
            driven: Vec::new(),
            newest: f64::NEG_INFINITY,
            fault,
        }
    }

    /// Adds a bus: its mapping, the consuming end of its sample queue and
    /// its metrics.
    pub fn add_bus(&mut self, map: &BusMap, queue: HeapCons<Sample>, metrics: Arc<BusMetrics>) {
        let messages = map
            .rx
            .iter()
            .map(|m| MessageState {
                last: 0.0,
                timed_out: false,
                timeout: m.timeout,
                policy: m.policy,
                inputs: m.inputs.iter().map(|&(_, input)| input).collect(),
            })
            .collect::<Vec<_>>();
        for m in &messages {
            for &i in &m.inputs {
                if !self.driven.contains(&i) {
                    self.driven.push(i);
                }
            }
        }
        self.buses.push(BusRx {
            queue,
            messages,
            metrics,
        });
    }
}

impl InputSource for BusInputs {
    fn read(&mut self, t: f64, u: &mut [f64]) -> f64 {
        let base_time = self.base.read(t, u);
        for (b, bus) in self.buses.iter_mut().enumerate() {
            while let Some(s) = bus.queue.try_pop() {
                self.latest[s.input as usize] = s.value;
                let m = &mut bus.messages[s.message as usize];
                m.last = m.last.max(s.time);
                m.timed_out = false;
                self.newest = self.newest.max(s.time);
            }
            for (i, m) in bus.messages.iter_mut().enumerate() {
                let Some(timeout) = m.timeout else { continue };
                if m.timed_out || t - m.last <= timeout + EPS {
                    continue;
                }
                m.timed_out = true;
                bus.metrics.timeouts.increment();
                match m.policy {
                    TimeoutPolicy::Hold => {}
                    TimeoutPolicy::Default => {
                        for &input in &m.inputs {
                            self.latest[input] = self.defaults[input];
                        }
                        self.newest = self.newest.max(t);
                    }
                    TimeoutPolicy::Fault => self.fault.raise(b, i),
                }
            }
        }
        for &i in &self.driven {
            u[i] = self.latest[i];
        }
        if self.newest.is_finite() {
            self.newest.min(base_time)
        } else {
            base_time
        }
    }
}
