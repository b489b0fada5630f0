//! The lock-free paths between the threads: each frame the fast thread
//! sends its frame number, inputs and state to the implicit thread through a
//! ring (ringbuf); the implicit thread publishes its newest result, with the
//! polynomial that interpolates it and the discrete state that goes with
//! it, through a latest-value triple buffer; and for a model that keeps
//! state inside (an FMU's internal discrete variables), the fast thread
//! publishes that state's newest export through another. Neither side
//! allocates, locks or waits on the other. Frames are counted, not timed: a
//! frame's time in seconds is always derived from its number, never
//! accumulated.

use ringbuf::traits::{Consumer, Observer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};
use triple_buffer::{Input, Output, TripleBuffer};

use super::clock::Nanos;
use crate::hermite::Hermite;

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
    /// Values in one record: frame, publication time, input sample time,
    /// inner events, inputs, states.
    fn len(self) -> usize {
        4 + self.inputs + self.states + self.discrete
    }
}

/// What the fast thread sends each frame: the frame's number, the inputs it
/// read and the state it integrates from (after the frame's major step:
/// discrete update, resets and the event iteration).
#[derive(Clone, Debug, PartialEq)]
pub struct FrameRecord {
    /// Frame number.
    pub frame: u64,
    /// When it was sent, on the run's clock.
    pub sent_at: Nanos,
    /// When the inputs were sampled, on the run's clock: the frame's start
    /// for profiles, the newest receive time for bus inputs. Never
    /// decreases.
    pub u_time: Nanos,
    /// Inputs held over the frame.
    pub u: Vec<f64>,
    /// Continuous state at `t`.
    pub x: Vec<f64>,
    /// Discrete state held over the frame.
    pub xd: Vec<f64>,
    /// The events that changed the model's inner state so far
    /// ([`tandem_models::Model::inner_events`]), this frame's major step
    /// included.
    pub inner_events: u64,
}

impl FrameRecord {
    /// A zeroed record of `shape`.
    pub fn new(shape: RecordShape) -> Self {
        FrameRecord {
            frame: 0,
            sent_at: 0,
            u_time: 0,
            u: vec![0.0; shape.inputs],
            x: vec![0.0; shape.states],
            xd: vec![0.0; shape.discrete],
            inner_events: 0,
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
    /// full because the implicit thread has stopped reading. The numbers
    /// travel as the bits of `f64` slots, unchanged.
    #[expect(clippy::too_many_arguments, reason = "the fields of one record, in the ring's order")]
    pub fn send(
        &mut self,
        frame: u64,
        sent_at: Nanos,
        u_time: Nanos,
        u: &[f64],
        x: &[f64],
        xd: &[f64],
        inner_events: u64,
    ) {
        if self.ring.vacant_len() < self.scratch.len() {
            self.dropped += 1;
            return;
        }
        let s = &mut self.scratch;
        s[0] = f64::from_bits(frame);
        s[1] = f64::from_bits(sent_at as u64);
        s[2] = f64::from_bits(u_time as u64);
        s[3] = f64::from_bits(inner_events);
        let (a, b) = (4 + u.len(), 4 + u.len() + x.len());
        s[4..a].copy_from_slice(u);
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
        into.frame = s[0].to_bits();
        into.sent_at = s[1].to_bits() as Nanos;
        into.u_time = s[2].to_bits() as Nanos;
        into.inner_events = s[3].to_bits();
        let (a, b) = (4 + into.u.len(), 4 + into.u.len() + into.x.len());
        into.u.copy_from_slice(&s[4..a]);
        into.x.copy_from_slice(&s[a..b]);
        into.xd.copy_from_slice(&s[b..]);
        true
    }
}

/// An implicit result: the state of frame `k1` (before that frame's major
/// step) with the discrete state that goes with it, and the cubic Hermite
/// polynomial through the macro step from frame `k0` (values and
/// derivatives at both ends), so that the fast thread can read the state of
/// a frame inside it when nothing discontinuous happened there.
#[derive(Clone, Debug, PartialEq)]
pub struct ImplicitResult {
    /// Publication number, from 1; 0 means nothing yet.
    pub seq: u64,
    /// The frame the macro step starts at.
    pub k0: u64,
    /// The frame it ends at.
    pub k1: u64,
    /// Nothing discontinuous happened in the step (no event, no major step
    /// that changed a state): the polynomial holds at every frame of it,
    /// with the discrete state `xd1`. Else only `k1` is covered.
    pub smooth: bool,
    /// The step's ends, from `k0` frames (`step.t0`) to `k1` (`step.t1`),
    /// and the polynomial through them.
    pub step: Hermite,
    /// Discrete state at `t1` (before frame `k1`'s major step).
    pub xd1: Vec<f64>,
    /// The events that had changed the model's inner state by `t1`
    /// ([`tandem_models::Model::inner_events`]); [`UNSYNCED`] when the
    /// implicit side's inner state is not the fast side's path (it could
    /// not take it at a restart), so that no count matches.
    pub inner1: u64,
    /// When it was published, on the run's clock.
    pub published_at: Nanos,
}

impl ImplicitResult {
    /// An empty result for `n` continuous and `nd` discrete states.
    pub fn new(n: usize, nd: usize) -> Self {
        ImplicitResult {
            seq: 0,
            k0: 0,
            k1: 0,
            smooth: false,
            step: Hermite::new(n),
            xd1: vec![0.0; nd],
            inner1: 0,
            published_at: 0,
        }
    }

    /// Whether the result gives the state of frame `k`: its end, or any
    /// frame of a smooth step.
    pub fn covers(&self, k: u64) -> bool {
        self.seq > 0 && (k == self.k1 || (self.smooth && k >= self.k0 && k <= self.k1))
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

/// A latest-value exchange of results for `n` continuous and `nd` discrete
/// states.
pub fn result_exchange(n: usize, nd: usize) -> (ResultPublisher, ResultReader) {
    let (input, output) = TripleBuffer::new(&ImplicitResult::new(n, nd)).split();
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

/// The inner-event count of a result whose inner state is not the fast
/// side's path.
pub const UNSYNCED: u64 = u64::MAX;

/// The fast side's newest export of the model's inner state
/// ([`tandem_models::Model::export_inner`]).
#[derive(Debug, PartialEq)]
pub struct InnerExport {
    /// The inner events the state follows.
    pub events: u64,
    /// The state as the model wrote it.
    pub bytes: Vec<u8>,
}

impl Clone for InnerExport {
    /// A copy with the same capacity: each of the triple buffer's three
    /// buffers is a copy of the first, and none may grow on the fast thread.
    fn clone(&self) -> Self {
        let mut bytes = Vec::with_capacity(self.bytes.capacity());
        bytes.extend_from_slice(&self.bytes);
        InnerExport {
            events: self.events,
            bytes,
        }
    }
}

/// The fast thread's end of the inner-state exchange.
pub struct InnerPublisher {
    input: Input<InnerExport>,
}

/// The implicit thread's end of the inner-state exchange.
pub struct InnerReader {
    output: Output<InnerExport>,
}

/// A latest-value exchange of inner states starting with `first` (the
/// fast side's initial export), each buffer with `first`'s capacity.
pub fn inner_exchange(first: &InnerExport) -> (InnerPublisher, InnerReader) {
    let (input, output) = TripleBuffer::new(first).split();
    (InnerPublisher { input }, InnerReader { output })
}

impl InnerPublisher {
    /// The buffer to fill in place before [`InnerPublisher::publish`].
    pub fn buffer(&mut self) -> &mut InnerExport {
        self.input.input_buffer_mut()
    }

    /// Publishes the filled buffer.
    pub fn publish(&mut self) {
        self.input.publish();
    }
}

impl InnerReader {
    /// The newest published export.
    pub fn latest(&mut self) -> &InnerExport {
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
        for k in 0..3u64 {
            let v = k as f64;
            tx.send(k, 7, k as Nanos * 1000 - 500, &[v, -v], &[1.0, 2.0, v], &[9.0], 3 * k);
        }
        assert_eq!(tx.dropped(), 1);
        let mut r = FrameRecord::new(shape);
        assert!(rx.receive(&mut r));
        assert_eq!(
            (
                r.frame,
                r.sent_at,
                r.u_time,
                r.u.as_slice(),
                r.x.as_slice(),
                r.xd.as_slice()
            ),
            (0, 7, -500, &[0.0, -0.0][..], &[1.0, 2.0, 0.0][..], &[9.0][..])
        );
        assert!(rx.receive(&mut r));
        assert_eq!((r.frame, r.inner_events), (1, 3));
        assert!(!rx.receive(&mut r));
    }

    #[test]
    fn hermite_interpolation_is_exact_for_cubics() {
        // x(t) = t³ - 2t, x' = 3t² - 2 on [1, 3].
        let x = |t: f64| t * t * t - 2.0 * t;
        let f = |t: f64| 3.0 * t * t - 2.0;
        let mut r = ImplicitResult::new(1, 0);
        r.seq = 1;
        (r.k0, r.k1, r.step.t0, r.step.t1) = (1, 3, 1.0, 3.0);
        (r.step.x0[0], r.step.f0[0], r.step.x1[0], r.step.f1[0]) = (x(1.0), f(1.0), x(3.0), f(3.0));
        let mut out = [0.0];
        for t in [1.0, 1.3, 2.0, 2.9, 3.0] {
            r.step.state_at(t, &mut out);
            assert!((out[0] - x(t)).abs() < 1e-12, "t = {t}");
        }
        assert!(r.covers(3) && !r.covers(2), "a step with an event covers its end only");
        r.smooth = true;
        assert!(r.covers(2) && r.covers(1) && !r.covers(4) && !r.covers(0));
    }

    #[test]
    fn the_reader_sees_the_newest_publication() {
        let (mut publisher, mut reader) = result_exchange(1, 0);
        assert_eq!(reader.latest().seq, 0);
        for t in [1.0, 2.0] {
            publisher.buffer().step.t1 = t;
            publisher.publish(5);
        }
        let r = reader.latest();
        assert_eq!((r.seq, r.step.t1, r.published_at), (2, 2.0, 5));
    }

    #[test]
    fn inner_states_cross_in_buffers_that_keep_their_capacity() {
        let mut first = InnerExport {
            events: 0,
            bytes: Vec::with_capacity(64),
        };
        first.bytes.extend_from_slice(&[1, 2, 3]);
        let (mut publisher, mut reader) = inner_exchange(&first);
        assert_eq!(reader.latest(), &first);
        for events in 1..=3u64 {
            let b = publisher.buffer();
            assert!(b.bytes.capacity() >= 64, "every buffer keeps the first one's room");
            b.events = events;
            b.bytes.clear();
            b.bytes.resize(40, events as u8);
            publisher.publish();
        }
        let newest = reader.latest();
        assert_eq!((newest.events, newest.bytes.len(), newest.bytes[0]), (3, 40, 3));
    }
}
