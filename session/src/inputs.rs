//! The fast thread's side of the receive path: samples queued by each
//! device's receive thread become model inputs at the start of a frame, and
//! each received message's timeout policy is applied there.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ringbuf::traits::{Consumer, Observer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};
use tandem_config::{Timeout, TimeoutPolicy};
use tandem_runtime::tandem::inputs::InputSource;

use tandem_e2e::CheckStatus;

use crate::mapping::Sample;
use crate::metrics::DeviceMetrics;
use crate::protection::status_code;

/// The receiving thread's end of a device's sample queue. When the queue
/// is (nearly) full, samples wait here instead, the newest of each
/// (message, input) replacing an older one (merged, and counted), and go
/// into the queue in time order as room frees up: the fast thread always
/// gets each input's newest value, and nothing waits unboundedly. The
/// receiving side calls [`SampleSender::flush`] before the fast thread
/// reads the queue (virtual clock) or at each turn of its loop (real
/// clock).
pub struct SampleSender {
    ring: HeapProd<Sample>,
    /// Samples that found the queue full, in the order they came; at most
    /// one per (message, input) the device drives.
    waiting: Vec<Sample>,
    /// How many (message, input) pairs the device drives: the most samples
    /// that can wait, and the room the queue keeps for them.
    slots: usize,
}

impl SampleSender {
    /// Queues `sample`; `false` when it replaced an older sample of its
    /// message and input that was still waiting for room (that one is
    /// merged away), or belongs to no pair the queue was made for (lost).
    pub fn push(&mut self, sample: Sample) -> bool {
        self.move_waiting(self.slots);
        // Room is kept for one waiting sample per pair, so that `flush`
        // can always empty `waiting` once the queue has been read.
        if self.waiting.is_empty() && self.ring.vacant_len() > self.slots {
            return self.ring.try_push(sample).is_ok();
        }
        let same = |w: &Sample| w.message == sample.message && w.input == sample.input;
        match self.waiting.iter().position(same) {
            Some(i) => {
                self.waiting.remove(i);
                self.waiting.push(sample);
                false
            }
            None if self.waiting.len() < self.slots => {
                self.waiting.push(sample);
                true
            }
            None => false,
        }
    }

    /// Moves every waiting sample into the queue that fits, the room kept
    /// for them included.
    pub fn flush(&mut self) {
        self.move_waiting(0);
    }

    /// Moves waiting samples into the queue while it has more than `keep`
    /// free places.
    fn move_waiting(&mut self, keep: usize) {
        while let Some(&first) = self.waiting.first() {
            if self.ring.vacant_len() <= keep || self.ring.try_push(first).is_err() {
                break;
            }
            self.waiting.remove(0);
        }
    }
}

/// The fast thread's end of a device's sample queue.
pub struct SampleReceiver {
    ring: HeapCons<Sample>,
}

impl SampleReceiver {
    /// The oldest sample, if it was taken by `until` (s).
    fn pop_until(&mut self, until: f64) -> Option<Sample> {
        if self.ring.try_peek()?.time > until + EPS {
            return None;
        }
        self.ring.try_pop()
    }
}

/// A sample queue of `capacity` samples for a device whose messages drive
/// `slots` (message, input) pairs in all (room for `slots` more is added
/// for samples that wait).
pub fn sample_queue(capacity: usize, slots: usize) -> (SampleSender, SampleReceiver) {
    let (ring, cons) = HeapRb::new(capacity + slots).split();
    (
        SampleSender {
            ring,
            waiting: Vec::with_capacity(slots),
            slots,
        },
        SampleReceiver { ring: cons },
    )
}

/// A receive-timeout fault: which device and message, shared with the
/// thread that stops the run. 0 is none; otherwise `device << 32 | message`
/// plus one.
#[derive(Default)]
pub struct Fault(AtomicU64);

impl Fault {
    /// The first fault raised: (device, message), if any.
    pub fn get(&self) -> Option<(usize, usize)> {
        match self.0.load(Ordering::Acquire) {
            0 => None,
            v => Some((((v - 1) >> 32) as usize, ((v - 1) & 0xFFFF_FFFF) as usize)),
        }
    }

    fn raise(&self, device: usize, message: usize) {
        let v = ((device as u64) << 32 | message as u64) + 1;
        let _ = self.0.compare_exchange(0, v, Ordering::AcqRel, Ordering::Acquire);
    }
}

/// What one received message drives.
pub struct MessageInputs {
    /// Its receive timeout and policy, if any.
    pub timeout: Option<Timeout>,
    /// The model inputs its signals drive.
    pub inputs: Vec<usize>,
    /// The model input receiving its E2E check status, if any: set to
    /// "no new data" when the message times out.
    pub status: Option<usize>,
    /// Its E2E counts in the device's metrics, if it is protected.
    pub e2e: Option<usize>,
}

/// What the fast thread reads of one device: its sample queue, for each
/// of its messages the timeout and the inputs it drives, and its counters.
pub struct ReadHalf {
    /// Samples from the device's receive thread.
    pub queue: SampleReceiver,
    /// Per message (indexed as [`Sample::message`]): its timeout, and the
    /// model inputs it drives.
    pub messages: Vec<MessageInputs>,
    /// Where timeouts are counted.
    pub metrics: Arc<DeviceMetrics>,
}

struct MessageState {
    last: f64,
    timed_out: bool,
    inputs: MessageInputs,
}

struct DeviceRx {
    /// The device's index in the session (for faults).
    device: usize,
    queue: SampleReceiver,
    messages: Vec<MessageState>,
    metrics: Arc<DeviceMetrics>,
}

/// Model inputs driven by received samples, over a base source (the
/// profile) for the inputs no device drives.
pub struct DeviceInputs {
    base: Box<dyn InputSource>,
    devices: Vec<DeviceRx>,
    latest: Vec<f64>,
    defaults: Vec<f64>,
    driven: Vec<usize>,
    newest: f64,
    fault: Arc<Fault>,
}

/// Tolerance on times (s).
const EPS: f64 = 1e-9;

impl DeviceInputs {
    /// Inputs over `base`, whose model inputs have `defaults`; a
    /// receive-timeout fault is raised in `fault`.
    pub fn new(base: Box<dyn InputSource>, defaults: Vec<f64>, fault: Arc<Fault>) -> Self {
        DeviceInputs {
            base,
            devices: Vec::new(),
            latest: defaults.clone(),
            defaults,
            driven: Vec::new(),
            newest: f64::NEG_INFINITY,
            fault,
        }
    }

    /// Adds the read half of device number `device`.
    pub fn add(&mut self, device: usize, half: ReadHalf) {
        let messages: Vec<MessageState> = half
            .messages
            .into_iter()
            .map(|inputs| MessageState {
                last: 0.0,
                timed_out: false,
                inputs,
            })
            .collect();
        for m in &messages {
            for &i in m.inputs.inputs.iter().chain(&m.inputs.status) {
                if !self.driven.contains(&i) {
                    self.driven.push(i);
                }
            }
        }
        self.devices.push(DeviceRx {
            device,
            queue: half.queue,
            messages,
            metrics: half.metrics,
        });
    }
}

impl DeviceInputs {
    /// The inputs at frame time `t` from the samples taken up to `until`
    /// (all queued samples when infinite), with the timeouts that passed by
    /// `t`.
    fn take(&mut self, t: f64, until: f64, base_time: f64, u: &mut [f64]) -> f64 {
        for device in &mut self.devices {
            while let Some(s) = device.queue.pop_until(until) {
                self.latest[s.input as usize] = s.value;
                let m = &mut device.messages[s.message as usize];
                if s.fresh {
                    m.last = m.last.max(s.time);
                    m.timed_out = false;
                }
                self.newest = self.newest.max(s.time);
            }
            for (i, m) in device.messages.iter_mut().enumerate() {
                let Some(timeout) = m.inputs.timeout else { continue };
                if m.timed_out || t - m.last <= timeout.after + EPS {
                    continue;
                }
                m.timed_out = true;
                device.metrics.timeouts.increment();
                if let Some(e2e) = m.inputs.e2e {
                    device.metrics.e2e[e2e].counts.record(CheckStatus::NoNewData);
                }
                if let Some(status) = m.inputs.status {
                    self.latest[status] = status_code(CheckStatus::NoNewData);
                }
                match timeout.policy {
                    TimeoutPolicy::Hold => {}
                    TimeoutPolicy::Default => {
                        for &input in &m.inputs.inputs {
                            self.latest[input] = self.defaults[input];
                        }
                        self.newest = self.newest.max(t);
                    }
                    TimeoutPolicy::Fault => self.fault.raise(device.device, i),
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

impl InputSource for DeviceInputs {
    fn read(&mut self, t: f64, u: &mut [f64]) -> f64 {
        let base_time = self.base.read(t, u);
        self.take(t, f64::INFINITY, base_time, u)
    }

    /// A frame computed after its slot (catching up after a stall) takes
    /// only the samples received by its time; later ones wait for the
    /// frames of their time.
    fn read_late(&mut self, t: f64, u: &mut [f64]) -> f64 {
        let base_time = self.base.read_late(t, u);
        self.take(t, t, base_time, u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(input: u32, value: f64) -> Sample {
        Sample {
            message: 0,
            input,
            value,
            time: value,
            fresh: true,
        }
    }

    #[test]
    fn a_full_queue_merges_samples_so_that_each_input_keeps_its_newest_in_time_order() {
        let (mut tx, mut rx) = sample_queue(4, 2);
        let mut merged = 0;
        for k in 0..20 {
            if !tx.push(sample(k % 2, f64::from(k))) {
                merged += 1;
            }
        }
        tx.flush();
        let got: Vec<(u32, f64)> = std::iter::from_fn(|| rx.ring.try_pop())
            .map(|s| (s.input, s.value))
            .collect();
        // The first four fill the queue up to its reserve of two; the rest
        // wait, each replacing the older one of its input; the last two
        // (18 and 19) go into the reserve when flushed.
        assert_eq!(got, [(0, 0.0), (1, 1.0), (0, 2.0), (1, 3.0), (0, 18.0), (1, 19.0)]);
        assert_eq!(merged, 14);
        assert!(got.windows(2).all(|w| w[0].1 < w[1].1), "in time order");
    }
}
