//! Counters and fixed-bucket histograms that the real-time threads update
//! with plain atomic stores (each has one writer) and a normal thread reads
//! at any time: nothing is allocated, locked or printed on the hot path,
//! and no two writers share a cache line.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crossbeam_utils::CachePadded;

/// How values map to buckets.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scale {
    /// Buckets of equal `width` from 0.
    Linear {
        /// Bucket width.
        width: f64,
    },
    /// Whole numbers, one bucket each from 0 (percentiles are exact).
    Counts,
    /// `per_decade` buckets per factor of ten from `min`.
    Log {
        /// Lower edge of the first bucket.
        min: f64,
        /// Buckets per decade.
        per_decade: f64,
    },
}

impl Scale {
    /// Bucket of `v` among `n` (the first and last also take what falls
    /// below and above).
    fn bucket(self, v: f64, n: usize) -> usize {
        let i = match self {
            Scale::Linear { width } => v / width,
            Scale::Counts => v.round(),
            Scale::Log { min, per_decade } => (v / min).log10() * per_decade,
        };
        if i.is_nan() || i < 0.0 {
            0
        } else {
            (i as usize).min(n - 1)
        }
    }

    /// The value reported for bucket `i`: its lower edge on a linear
    /// scale (whole microseconds, truncated, as cyclictest reports), the
    /// value itself for counts, the upper edge on a log scale.
    fn reported(self, i: usize) -> f64 {
        match self {
            Scale::Linear { width } => i as f64 * width,
            Scale::Counts => i as f64,
            Scale::Log { min, per_decade } => min * 10f64.powf((i + 1) as f64 / per_decade),
        }
    }
}

/// A histogram with one writer and any number of readers.
pub struct Histogram {
    scale: Scale,
    buckets: Box<[AtomicU64]>,
    /// Count, sum and maximum, on a cache line of their own so that the
    /// two threads' histograms never share one.
    totals: CachePadded<Totals>,
}

struct Totals {
    count: AtomicU64,
    sum: AtomicU64,
    max: AtomicU64,
}

impl Histogram {
    /// `n` buckets on `scale`.
    pub fn new(scale: Scale, n: usize) -> Self {
        Histogram {
            scale,
            buckets: (0..n).map(|_| AtomicU64::new(0)).collect(),
            totals: CachePadded::new(Totals {
                count: AtomicU64::new(0),
                sum: AtomicU64::new(0f64.to_bits()),
                max: AtomicU64::new(f64::NEG_INFINITY.to_bits()),
            }),
        }
    }

    /// Counts `v`. Only one thread may record into a histogram.
    pub fn record(&self, v: f64) {
        let b = &self.buckets[self.scale.bucket(v, self.buckets.len())];
        b.store(b.load(Relaxed) + 1, Relaxed);
        let t = &self.totals;
        t.count.store(t.count.load(Relaxed) + 1, Relaxed);
        t.sum
            .store((f64::from_bits(t.sum.load(Relaxed)) + v).to_bits(), Relaxed);
        if v > f64::from_bits(t.max.load(Relaxed)) {
            t.max.store(v.to_bits(), Relaxed);
        }
    }

    /// A copy of the counts now. Only the buckets that hold counts are
    /// copied: a snapshot of a histogram of 50 000 buckets (the latency
    /// histograms) is as small as the spread of its values, so that
    /// statistics taken every second make no large, short-lived
    /// allocations (which the system allocator would serve from a heap it
    /// then keeps growing).
    pub fn snapshot(&self) -> Snapshot {
        let counts = (self.buckets.iter().enumerate())
            .filter_map(|(i, b)| match b.load(Relaxed) {
                0 => None,
                c => Some((i as u32, c)),
            })
            .collect();
        Snapshot {
            scale: self.scale,
            counts,
            len: self.buckets.len(),
            count: self.totals.count.load(Relaxed),
            sum: f64::from_bits(self.totals.sum.load(Relaxed)),
            max: f64::from_bits(self.totals.max.load(Relaxed)),
        }
    }
}

impl Histogram {
    /// A snapshot with room for every bucket of this histogram, to keep
    /// and refresh with [`Histogram::snapshot_into`] (its memory is taken
    /// once, here).
    pub fn keeper(&self) -> Snapshot {
        let mut s = self.snapshot();
        s.counts.reserve_exact(self.buckets.len() - s.counts.len());
        s
    }

    /// Copies the counts now into `into` (a snapshot of this histogram,
    /// made by [`Histogram::keeper`]), reusing its memory: nothing is
    /// allocated, however many buckets have counted.
    pub fn snapshot_into(&self, into: &mut Snapshot) {
        into.counts.clear();
        into.counts.extend(
            (self.buckets.iter().enumerate()).filter_map(|(i, b)| match b.load(Relaxed) {
                0 => None,
                c => Some((i as u32, c)),
            }),
        );
        into.count = self.totals.count.load(Relaxed);
        into.sum = f64::from_bits(self.totals.sum.load(Relaxed));
        into.max = f64::from_bits(self.totals.max.load(Relaxed));
    }
}

/// A histogram's counts at one moment.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    scale: Scale,
    /// The buckets that hold counts, `(index, count)` in index order.
    counts: Vec<(u32, u64)>,
    /// The histogram's buckets (the last also takes what falls above it).
    len: usize,
    /// Values counted.
    pub count: u64,
    /// Their sum.
    pub sum: f64,
    /// The largest (−∞ when none; over an interval, the run's largest so far).
    pub max: f64,
}

impl Snapshot {
    /// The value of the bucket that holds fraction `p` of the counts (see
    /// [`Scale`]; never above the maximum); NaN when empty.
    pub fn percentile(&self, p: f64) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        let rank = ((p * self.count as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for &(i, c) in &self.counts {
            seen += c;
            if seen >= rank {
                // The last bucket also holds everything above it.
                let last = i as usize + 1 == self.len;
                return if last {
                    self.max
                } else {
                    self.scale.reported(i as usize).min(self.max)
                };
            }
        }
        self.max
    }

    /// The buckets that hold counts: the value each stands for (see
    /// [`Scale`]; the last bucket also holds everything above it) and its
    /// count, in increasing order.
    pub fn buckets(&self) -> impl Iterator<Item = (f64, u64)> + '_ {
        self.counts.iter().map(|&(i, c)| (self.scale.reported(i as usize), c))
    }

    /// The count of the last bucket, which holds everything above the
    /// others.
    pub fn overflow(&self) -> u64 {
        match self.counts.last() {
            Some(&(i, c)) if i as usize + 1 == self.len => c,
            _ => 0,
        }
    }

    /// The mean; NaN when empty.
    pub fn mean(&self) -> f64 {
        self.sum / self.count as f64
    }

    /// What was counted since `earlier` (a snapshot of the same histogram).
    pub fn since(&self, earlier: &Snapshot) -> Snapshot {
        let mut counts = Vec::with_capacity(self.counts.len());
        let mut before = earlier.counts.iter().peekable();
        for &(i, c) in &self.counts {
            while before.next_if(|&&(j, _)| j < i).is_some() {}
            let old = before.next_if(|&&(j, _)| j == i).map_or(0, |&(_, c)| c);
            if c > old {
                counts.push((i, c - old));
            }
        }
        Snapshot {
            scale: self.scale,
            counts,
            len: self.len,
            count: self.count - earlier.count,
            sum: self.sum - earlier.sum,
            max: self.max,
        }
    }
}

/// A counter with one writer, on a cache line of its own (the fast and the
/// implicit thread write different counters and must not contend).
#[derive(Default)]
pub struct Counter(CachePadded<AtomicU64>);

impl Counter {
    /// Adds one.
    pub fn increment(&self) {
        self.add(1);
    }
    /// Adds `n`.
    pub fn add(&self, n: u64) {
        self.0.store(self.0.load(Relaxed) + n, Relaxed);
    }
    /// The count.
    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// The state events one side handled, each counter written by that side
/// only.
#[derive(Default)]
pub struct EventCounts {
    /// Events located inside frames and handled where they happened.
    pub located: Counter,
    /// Crossings past a frame's limit (or chattering), handled at the next
    /// frame boundary instead.
    pub deferred: Counter,
    /// Event iterations that ran out of rounds (a reset that re-triggers
    /// itself); the state after the last round stands.
    pub storms: Counter,
}

/// Where a frame's outputs came from: what its slot sent, and how the
/// state they were computed from came to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameSource {
    /// The fast thread's own step (explicit or linearly implicit).
    Fast,
    /// The implicit state of this very frame.
    Implicit,
    /// An implicit state of a past frame, re-integrated to this one.
    CatchUp,
    /// Nothing computed was ready by the output deadline: the slot sent
    /// the newest computed outputs extrapolated to its time.
    Extrapolated,
    /// The fast thread was behind (after a stall): the slot sent the
    /// newest computed outputs, held; the frame was computed afterwards.
    Held,
    /// The slot passed while the fast thread did not run (a stall): it
    /// sent nothing; the frame was computed afterwards.
    Skipped,
}

impl FrameSource {
    /// Every source, in report order.
    pub const ALL: [FrameSource; 6] = [
        FrameSource::Fast,
        FrameSource::Implicit,
        FrameSource::CatchUp,
        FrameSource::Extrapolated,
        FrameSource::Held,
        FrameSource::Skipped,
    ];

    /// Its name in reports and recordings.
    pub fn name(self) -> &'static str {
        match self {
            FrameSource::Fast => "fast",
            FrameSource::Implicit => "implicit",
            FrameSource::CatchUp => "catch-up",
            FrameSource::Extrapolated => "extrapolated",
            FrameSource::Held => "held",
            FrameSource::Skipped => "skipped",
        }
    }

    /// Whether the slot sent the frame's own computed outputs.
    pub fn on_time(self) -> bool {
        matches!(self, FrameSource::Fast | FrameSource::Implicit | FrameSource::CatchUp)
    }
}

/// Everything measured during a run. The fast thread writes the frame
/// fields, the implicit thread the implicit ones.
pub struct Metrics {
    /// Frames run.
    pub frames: Counter,
    /// Frames by the source of their outputs, in [`FrameSource::ALL`] order.
    pub sources: [Counter; 6],
    /// Slots that missed their output deadline because the fast thread
    /// woke after it (their outputs extrapolated, or nothing sent when a
    /// later slot had begun).
    pub missed_woke_late: Counter,
    /// Slots whose frame's computation ran past the output deadline (their
    /// outputs extrapolated).
    pub missed_overrun: Counter,
    /// Slots served while the fast thread caught up after a stall (the
    /// newest computed outputs held or extrapolated).
    pub missed_behind: Counter,
    /// Stalls: wake-ups of the fast thread after a later slot than the one
    /// it slept for had begun, by how late it woke (ns).
    pub stalls: Histogram,
    /// Frames computed after their slot had passed (a stall's skipped and
    /// held slots), caught up with the inputs of their own time.
    pub caught_up: Counter,
    /// `select`: frames without an implicit result in time.
    pub implicit_late: Counter,
    /// `correct`: results too old to catch up from (beyond `max_catchup`).
    pub stale_results: Counter,
    /// Frames whose state was unusable because a value was not finite.
    pub unusable_nonfinite: Counter,
    /// Frames whose state was unusable because it lay too far from the
    /// implicit prediction.
    pub unusable_out_of_bound: Counter,
    /// Unusable states replaced by the implicit prediction.
    pub substituted_implicit: Counter,
    /// Output values that were not finite (the value sent last was sent
    /// again).
    pub outputs_nonfinite: Counter,
    /// Output values outside their stated range (clamped to it).
    pub outputs_clamped: Counter,
    /// A linearly implicit fast method: frames since the state its
    /// iteration matrix was taken at.
    pub matrix_age: Histogram,
    /// Iteration matrices prepared and published by the implicit thread.
    pub matrix_updates: Counter,
    /// Wake-up latency (ns past the frame's start).
    pub wake_latency: Histogram,
    /// Fast thread's computation per frame (ns): from reading the inputs to
    /// the step taken (the sends at the frame's start are the devices' to
    /// measure).
    pub compute: Histogram,
    /// Time the frame-end taps took per frame (ns, in 10 ns bins): the
    /// measurement sampling after the outputs are sent. Empty without one.
    pub tap: Histogram,
    /// The same, of the frames whose own step handled an event (located it,
    /// ran the event iteration and integrated the rest of the frame).
    pub event_compute: Histogram,
    /// Size of each correction: weighted RMS of the state change in units
    /// of the implicit tolerances.
    pub correction: Histogram,
    /// Frames re-integrated per correction.
    pub catchup_frames: Histogram,
    /// Implicit steps taken.
    pub implicit_steps: Counter,
    /// Implicit steps that used extrapolated inputs.
    pub extrapolated_inputs: Counter,
    /// Restarts of the implicit integrator from the fast thread's state
    /// because it fell too far behind.
    pub resyncs: Counter,
    /// Implicit steps that failed (Newton did not converge, or the BDF
    /// gave up); each is followed by a restart.
    pub implicit_failures: Counter,
    /// Implicit lag each time the implicit thread looks for work (whole
    /// frames behind the fast thread's newest frame, before any resync;
    /// ahead counts as 0).
    pub implicit_lag: Histogram,
    /// Newton iterations per implicit step (a macro step: every BDF step
    /// to the next result).
    pub newton: Histogram,
    /// Implicit thread's computation per step (ns).
    pub implicit_compute: Histogram,
    /// Events on the fast side (the frames' own steps; re-integrations
    /// repeat events already counted).
    pub fast_events: EventCounts,
    /// Events on the implicit side.
    pub implicit_events: EventCounts,
    /// Implicit results the fast side did not take because their modes
    /// or their model's inner events (the events they saw) disagree with
    /// its own.
    pub disagreements: Counter,
    /// Restarts of the implicit side from the fast thread's state because
    /// its modes (or its model's inner events) at a frame disagreed with
    /// those the fast thread sent.
    pub event_resyncs: Counter,
    /// `correct`: corrections that set the model's inner state (an FMU's
    /// internal discrete variables) back to their start before
    /// re-integrating across the events the fast side had handled.
    pub inner_restores: Counter,
    /// `correct`: corrections not taken because the model could not set
    /// its inner state back to their start (an FMU without
    /// `canGetAndSetFMUstate`, or more events ago than it keeps), and
    /// refused ones whose re-integration handled an event the model could
    /// not undo.
    pub inner_refusals: Counter,
    /// Restarts of the implicit side that took the fast side's exported
    /// inner state, past events the implicit side had not handled alike.
    pub inner_imports: Counter,
    /// Restarts of the implicit side that could not take the fast side's
    /// inner state (an FMU without `canSerializeFMUstate`, or no export of
    /// that count): its results are not taken until a restart that can.
    pub inner_unsynced: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        let micro = Scale::Linear { width: 1_000.0 };
        Metrics {
            frames: Counter::default(),
            sources: Default::default(),
            missed_woke_late: Counter::default(),
            missed_overrun: Counter::default(),
            missed_behind: Counter::default(),
            stalls: Histogram::new(
                Scale::Log {
                    min: 1e5,
                    per_decade: 20.0,
                },
                120,
            ),
            caught_up: Counter::default(),
            implicit_late: Counter::default(),
            stale_results: Counter::default(),
            unusable_nonfinite: Counter::default(),
            unusable_out_of_bound: Counter::default(),
            substituted_implicit: Counter::default(),
            outputs_nonfinite: Counter::default(),
            outputs_clamped: Counter::default(),
            matrix_age: Histogram::new(Scale::Counts, 10_000),
            matrix_updates: Counter::default(),
            wake_latency: Histogram::new(micro, 50_000),
            compute: Histogram::new(micro, 50_000),
            tap: Histogram::new(Scale::Linear { width: 10.0 }, 10_000),
            event_compute: Histogram::new(micro, 50_000),
            correction: Histogram::new(
                Scale::Log {
                    min: 1e-4,
                    per_decade: 10.0,
                },
                160,
            ),
            catchup_frames: Histogram::new(Scale::Counts, 1_024),
            implicit_steps: Counter::default(),
            extrapolated_inputs: Counter::default(),
            resyncs: Counter::default(),
            implicit_failures: Counter::default(),
            implicit_lag: Histogram::new(Scale::Counts, 10_000),
            newton: Histogram::new(Scale::Counts, 1_024),
            implicit_compute: Histogram::new(micro, 50_000),
            fast_events: EventCounts::default(),
            implicit_events: EventCounts::default(),
            disagreements: Counter::default(),
            event_resyncs: Counter::default(),
            inner_restores: Counter::default(),
            inner_refusals: Counter::default(),
            inner_imports: Counter::default(),
            inner_unsynced: Counter::default(),
        }
    }
}

impl Metrics {
    /// Frames whose state was unusable, whatever the cause.
    pub fn unusable(&self) -> u64 {
        self.unusable_nonfinite.get() + self.unusable_out_of_bound.get()
    }

    /// Slots that did not send their frame's own outputs on time.
    pub fn missed(&self) -> u64 {
        self.missed_woke_late.get() + self.missed_overrun.get() + self.missed_behind.get()
    }

    /// Counts a frame whose state came from `source`.
    pub fn count_source(&self, source: FrameSource) {
        self.sources[source as usize].increment();
    }

    /// Frames that came from `source`.
    pub fn from_source(&self, source: FrameSource) -> u64 {
        self.sources[source as usize].get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_buckets() {
        let h = Histogram::new(Scale::Linear { width: 1.0 }, 100);
        for v in 0..100 {
            h.record(v as f64 + 0.5);
        }
        let s = h.snapshot();
        assert_eq!(
            s.percentile(0.5),
            49.0,
            "the 50th of 0.5, 1.5, …: 49.5, in bucket [49, 50)"
        );
        assert_eq!(s.percentile(0.99), 98.0);
        assert_eq!(s.percentile(1.0), 99.5, "the last bucket reports the maximum");
        assert_eq!(s.mean(), 50.0);
        h.record(1e9);
        assert_eq!(
            h.snapshot().percentile(1.0),
            1e9,
            "overflow lands in the last bucket, the max is exact"
        );
    }

    #[test]
    fn counts_have_exact_percentiles() {
        let h = Histogram::new(Scale::Counts, 10);
        for v in [0.0, 0.0, 1.0, 3.0] {
            h.record(v);
        }
        let s = h.snapshot();
        assert_eq!(
            (s.percentile(0.5), s.percentile(0.75), s.percentile(1.0)),
            (0.0, 1.0, 3.0)
        );
    }

    #[test]
    fn an_interval_is_the_difference_of_two_snapshots() {
        let h = Histogram::new(
            Scale::Log {
                min: 1.0,
                per_decade: 1.0,
            },
            10,
        );
        h.record(5.0);
        let before = h.snapshot();
        h.record(500.0);
        h.record(0.01);
        let d = h.snapshot().since(&before);
        assert_eq!(d.count, 2);
        assert_eq!(d.percentile(0.5), 10.0, "below the minimum counts in the first bucket");
        assert_eq!(d.percentile(1.0), 500.0);
        // Only the buckets that counted in the interval: 0.01 in the
        // first (reported at its upper edge, 10), 500 in [100, 1000).
        assert_eq!(d.buckets().collect::<Vec<_>>(), [(10.0, 1), (1000.0, 1)]);
    }

    #[test]
    fn a_snapshot_holds_only_the_buckets_that_counted() {
        let h = Histogram::new(Scale::Linear { width: 1_000.0 }, 50_000);
        for v in [1_500.0, 1_700.0, 20_000.0, 1e12] {
            h.record(v);
        }
        let s = h.snapshot();
        assert_eq!(
            s.buckets().collect::<Vec<_>>(),
            [(1_000.0, 2), (20_000.0, 1), (49_999_000.0, 1)]
        );
        assert_eq!(s.overflow(), 1);
        assert_eq!(s.counts.len(), 3, "none of the empty buckets");
        // A keeper is refreshed in the memory it took once.
        let mut kept = h.keeper();
        let room = kept.counts.capacity();
        for v in 0..50_000 {
            h.record(v as f64 * 1_000.0);
        }
        h.snapshot_into(&mut kept);
        assert_eq!((kept.counts.len(), kept.counts.capacity()), (50_000, room));
        assert_eq!(kept.count, 50_004);
    }
}
