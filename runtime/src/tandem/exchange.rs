//! The two lock-free paths between the threads: each frame the fast thread
//! sends its time, inputs and state to the implicit thread through a ring
//! (ringbuf); the implicit thread publishes its newest result, with the
//! polynomial that interpolates it, through a latest-value triple buffer.
//! Neither side allocates, locks or waits on the other.

use ringbuf::traits::{Consumer, Observer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};
use triple_buffer::{Input, Output, TripleBuffer};

use super::clock::Nanos;

/// Sizes of one frame record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordShape {
    /// Inputs.
    pub inputs: usize,
    /// Continuous states.
    pub states: usize,
    /// Discrete states.
    pub discrete: usize,
}

impl RecordShape {
    /// Values in one record: time, publication time, input sample time,
    /// inputs, states.
    fn len(self) -> usize {
        3 + self.inputs + self.states + self.discrete
    }
}

/// What the fast thread sends each frame: the frame's time, the inputs it
/// read and the state it integrates from (after its discrete update).
#[derive(Clone, Debug, PartialEq)]
pub struct FrameRecord {
    /// Frame time (s).
    pub t: f64,
    /// When it was sent, on the run's clock.
    pub sent_at: Nanos,
    /// When the inputs were sampled (s): the frame time for profiles, the
    /// newest receive time for bus inputs. Never decreases.
    pub u_time: f64,
    /// Inputs held over the frame.
    pub u: Vec<f64>,
    /// Continuous state at `t`.
    pub x: Vec<f64>,
    /// Discrete state held over the frame.
    pub xd: Vec<f64>,
}

impl FrameRecord {
    /// A zeroed record of `shape`.
    pub fn new(shape: RecordShape) -> Self {
        FrameRecord {
            t: 0.0,
            sent_at: 0,
            u_time: 0.0,
            u: vec![0.0; shape.inputs],
            x: vec![0.0; shape.states],
            xd: vec![0.0; shape.discrete],
        }
    }
}

/// The fast thread's end of the frame ring.
pub struct FrameSender {
    ring: HeapProd<f64>,
    scratch: Vec<f64>,
    dropped: u64,
}

/// The implicit thread's end of the frame ring.
pub struct FrameReceiver {
    ring: HeapCons<f64>,
    scratch: Vec<f64>,
}

/// A ring of `capacity` frame records of `shape`.
pub fn frame_ring(shape: RecordShape, capacity: usize) -> (FrameSender, FrameReceiver) {
    let (ring, cons) = HeapRb::<f64>::new(shape.len() * capacity).split();
    let scratch = vec![0.0; shape.len()];
    (
        FrameSender {
            ring,
            scratch: scratch.clone(),
            dropped: 0,
        },
        FrameReceiver { ring: cons, scratch },
    )
}

impl FrameSender {
    /// Sends one record whole, or drops it (and counts) when the ring is
    /// full because the implicit thread has stopped reading.
    pub fn send(&mut self, t: f64, sent_at: Nanos, u_time: f64, u: &[f64], x: &[f64], xd: &[f64]) {
        if self.ring.vacant_len() < self.scratch.len() {
            self.dropped += 1;
            return;
        }
        let s = &mut self.scratch;
        s[0] = t;
        s[1] = sent_at as f64;
        s[2] = u_time;
        let (a, b) = (3 + u.len(), 3 + u.len() + x.len());
        s[3..a].copy_from_slice(u);
        s[a..b].copy_from_slice(x);
        s[b..].copy_from_slice(xd);
        self.ring.push_slice(s);
    }

    /// Records dropped because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

impl FrameReceiver {
    /// Takes the oldest record into `into`, if there is one.
    pub fn receive(&mut self, into: &mut FrameRecord) -> bool {
        if self.ring.occupied_len() < self.scratch.len() {
            return false;
        }
        self.ring.pop_slice(&mut self.scratch);
        let s = &self.scratch;
        into.t = s[0];
        into.sent_at = s[1] as Nanos;
        into.u_time = s[2];
        let (a, b) = (3 + into.u.len(), 3 + into.u.len() + into.x.len());
        into.u.copy_from_slice(&s[3..a]);
        into.x.copy_from_slice(&s[a..b]);
        into.xd.copy_from_slice(&s[b..]);
        true
    }
}

/// An implicit result: the state at `t1` and the cubic Hermite polynomial
/// through the step `[t0, t1]` (values and derivatives at both ends), so
/// that the fast thread can read the state at any frame time inside it.
#[derive(Clone, Debug, PartialEq)]
pub struct ImplicitResult {
    /// Publication number, from 1; 0 means nothing yet.
    pub seq: u64,
    /// Start of the step (s).
    pub t0: f64,
    /// End of the step (s).
    pub t1: f64,
    /// State at `t0`.
    pub x0: Vec<f64>,
    /// Derivative at `t0`.
    pub f0: Vec<f64>,
    /// State at `t1`.
    pub x1: Vec<f64>,
    /// Derivative at `t1`.
    pub f1: Vec<f64>,
    /// When it was published, on the run's clock.
    pub published_at: Nanos,
}

impl ImplicitResult {
    /// An empty result for `n` states.
    pub fn new(n: usize) -> Self {
        ImplicitResult {
            seq: 0,
            t0: 0.0,
            t1: 0.0,
            x0: vec![0.0; n],
            f0: vec![0.0; n],
            x1: vec![0.0; n],
            f1: vec![0.0; n],
            published_at: 0,
        }
    }

    /// Whether `t` lies in `[t0, t1]` (to a nanosecond).
    pub fn covers(&self, t: f64) -> bool {
        self.seq > 0 && t >= self.t0 - 1e-9 && t <= self.t1 + 1e-9
    }

    /// Writes the state at `t` (inside the step) into `out`. The ends are
    /// returned exactly.
    pub fn interpolate(&self, t: f64, out: &mut [f64]) {
        let h = self.t1 - self.t0;
        if (t - self.t1).abs() <= 1e-9 || h <= 0.0 {
            out.copy_from_slice(&self.x1);
            return;
        }
        if (t - self.t0).abs() <= 1e-9 {
            out.copy_from_slice(&self.x0);
            return;
        }
        let s = (t - self.t0) / h;
        let (s2, s3) = (s * s, s * s * s);
        let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
        let h10 = s3 - 2.0 * s2 + s;
        let h01 = -2.0 * s3 + 3.0 * s2;
        let h11 = s3 - s2;
        let ends = self.x0.iter().zip(&self.f0).zip(self.x1.iter().zip(&self.f1));
        for (o, ((x0, f0), (x1, f1))) in out.iter_mut().zip(ends) {
            *o = h00 * x0 + h * h10 * f0 + h01 * x1 + h * h11 * f1;
        }
    }
}

/// The implicit thread's end of the result exchange.
pub struct ResultPublisher {
    input: Input<ImplicitResult>,
    seq: u64,
}

/// The fast thread's end of the result exchange.
pub struct ResultReader {
    output: Output<ImplicitResult>,
}

/// A latest-value exchange of results for `n` states.
pub fn result_exchange(n: usize) -> (ResultPublisher, ResultReader) {
    let (input, output) = TripleBuffer::new(&ImplicitResult::new(n)).split();
    (ResultPublisher { input, seq: 0 }, ResultReader { output })
}

impl ResultPublisher {
    /// The buffer to fill in place before [`ResultPublisher::publish`].
    pub fn buffer(&mut self) -> &mut ImplicitResult {
        self.input.input_buffer_mut()
    }

    /// Publishes the filled buffer, stamped with its number and `now`.
    pub fn publish(&mut self, now: Nanos) {
        self.seq += 1;
        let b = self.input.input_buffer_mut();
        b.seq = self.seq;
        b.published_at = now;
        self.input.publish();
    }
}

impl ResultReader {
    /// The newest published result (seq 0 when none yet).
    pub fn latest(&mut self) -> &ImplicitResult {
        self.output.update();
        self.output.peek_output_buffer()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_cross_the_ring_whole_and_in_order_and_overflow_is_counted() {
        let shape = RecordShape {
            inputs: 2,
            states: 3,
            discrete: 1,
        };
        let (mut tx, mut rx) = frame_ring(shape, 2);
        for k in 0..3 {
            let k = k as f64;
            tx.send(k, 7, k - 0.5, &[k, -k], &[1.0, 2.0, k], &[9.0]);
        }
        assert_eq!(tx.dropped(), 1);
        let mut r = FrameRecord::new(shape);
        assert!(rx.receive(&mut r));
        assert_eq!(
            (
                r.t,
                r.sent_at,
                r.u_time,
                r.u.as_slice(),
                r.x.as_slice(),
                r.xd.as_slice()
            ),
            (0.0, 7, -0.5, &[0.0, -0.0][..], &[1.0, 2.0, 0.0][..], &[9.0][..])
        );
        assert!(rx.receive(&mut r));
        assert_eq!(r.t, 1.0);
        assert!(!rx.receive(&mut r));
    }

    #[test]
    fn hermite_interpolation_is_exact_for_cubics() {
        // x(t) = t³ - 2t, x' = 3t² - 2 on [1, 3].
        let x = |t: f64| t * t * t - 2.0 * t;
        let f = |t: f64| 3.0 * t * t - 2.0;
        let mut r = ImplicitResult::new(1);
        r.seq = 1;
        (r.t0, r.t1) = (1.0, 3.0);
        (r.x0[0], r.f0[0], r.x1[0], r.f1[0]) = (x(1.0), f(1.0), x(3.0), f(3.0));
        let mut out = [0.0];
        for t in [1.0, 1.3, 2.0, 2.9, 3.0] {
            r.interpolate(t, &mut out);
            assert!((out[0] - x(t)).abs() < 1e-12, "t = {t}");
        }
        assert!(r.covers(2.0) && !r.covers(3.1) && !r.covers(0.9));
    }

    #[test]
    fn the_reader_sees_the_newest_publication() {
        let (mut publisher, mut reader) = result_exchange(1);
        assert_eq!(reader.latest().seq, 0);
        for t in [1.0, 2.0] {
            publisher.buffer().t1 = t;
            publisher.publish(5);
        }
        let r = reader.latest();
        assert_eq!((r.seq, r.t1, r.published_at), (2, 2.0, 5));
    }
}
