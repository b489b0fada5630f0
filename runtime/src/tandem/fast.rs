//! The fast thread's work: one frame of its integrator, combined
//! with the implicit side by the policy. The same code runs on the real and
//! the virtual clock; it allocates nothing after [`FastSide::new`].
//!
//! Frames are counted; frame `k`'s time `t_k` is derived from `k`, never
//! accumulated. Each frame has a slot on the clock, from `t_k` to the next
//! frame's start, and its outputs are due by the output deadline inside it.
//! Computing frame `k`:
//! 1. read the inputs `u_k`;
//! 2. combine: `correct` restarts from the newest implicit state of a past
//!    frame (continuous and discrete) and re-integrates to `t_k` with the
//!    recorded inputs, events included; `select` takes the implicit state
//!    of `t_k` when it is ready. Either takes it only when its modes and
//!    its model's inner events are this side's own: the events this side
//!    has seen are the ones the world has seen, and a correction never
//!    undoes or invents one (a refusal is counted as a disagreement). A
//!    model that keeps state inside (an FMU's internal discrete variables)
//!    is set back to its checkpoint of frame `from` before the
//!    re-integration, so that the events after it are handled once; one
//!    that cannot be set back takes no correction across its events (a
//!    refusal counted apart);
//! 3. guard: an unusable state (not finite, or far from the implicit
//!    prediction of the same modes) takes the implicit prediction
//!    ([`super::guard`]);
//! 4. the major step: outputs `y_k`, discrete update and resets, the event
//!    iteration;
//! 5. send `(k, u_k, x_k, xd_k)` and the model's inner-event count to the
//!    implicit thread, after publishing the model's inner state when that
//!    changed since the last export;
//! 6. one step to `t_{k+1}`: explicit, or linearly implicit with the
//!    newest iteration matrix; a zero crossing inside the frame is located
//!    on the step's continuous extension, handled there, and the rest of
//!    the frame integrated ([`super::flow`]); a model that produced a
//!    non-finite value there (or an FMU call that failed) ends the run,
//!    named.
//!
//! Serving slot `k` ([`FastSide::frame`]): send what the previous slot's
//! outputs made due (the boundary), compute frame `k`, and hand its
//! outputs to the transmitting I/O. When the slot ends after its output
//! deadline (the thread woke late or computed too long) it counts as a
//! miss, and unless its state is the implicit result of its own time (which
//! was on time) the outputs sent are the two previous frames' extrapolated.
//!
//! A stall (the process stopped, the host starved it) is caught up, not
//! extrapolated across: a wake-up after later slots have begun skips the
//! slots that passed (nothing is sent late as if on time; what was due in
//! them is sent once, at the next slot, with its outputs), and the frames
//! of those slots are computed in order, with the inputs of their own
//! times, before the current one: at least one per slot, then as many as
//! the slot's deadline allows. A slot served while frames are still owed
//! sends the newest computed outputs, extrapolated over at most
//! [`MAX_EXTRAPOLATED_FRAMES`] frames and held beyond. Outputs are only
//! ever extrapolated from computed ones, and no state is. Every frame is
//! recorded once, when computed, with its computed outputs and the source
//! its slot sent ([`FrameSource`]); a backlog longer than
//! [`MAX_BACKLOG_SECONDS`] ends the run.

use std::sync::Arc;

use tandem_models::{MajorStep, Model, NonFinite, StateRef};

use super::backlog::{Backlog, SlotFate, TooFarBehind};
use super::clock::{nanos, Clock, Nanos};
use super::exchange::{FrameSender, ImplicitResult, InnerPublisher, ResultReader, UNSYNCED};
use super::flow::FrameFlow;
use super::guard::{OutputGuard, StateGuard};
use super::hybrid::{same_modes, Boundary};
use super::inputs::InputSource;
use super::metrics::{FrameSource, Metrics};
use super::outputs::{FrameTap, OutputSink};
use super::recording::RowSender;
use super::retune::FastRetunes;
use super::settings::{FastMethod, Policy, TandemSettings};
use super::stepper::FastStepper;
use crate::events::locator::EventLocator;
use crate::rates::{FrameRates, RateError};

/// Frames beyond the newest computed one that a slot's outputs are
/// extrapolated over; further, they are held.
pub const MAX_EXTRAPOLATED_FRAMES: u64 = 3;

/// The longest backlog a run catches up (s of frames): a stall longer than
/// this ends the run.
pub const MAX_BACKLOG_SECONDS: f64 = 10.0;

/// The most frames a backlog holds, whatever the frame.
const MAX_BACKLOG_FRAMES: u64 = 1 << 20;

/// Why a frame could not be computed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FastError {
    /// The model produced a non-finite output or state (or an FMU call
    /// failed): the place is named.
    #[error(transparent)]
    NonFinite(#[from] NonFinite),
    /// The explicit integrator diverged with no implicit state to restart
    /// from (under `explicit`, or before the first implicit result).
    #[error("the explicit method diverged at t = {time} s: state \"{state}\" is {value}; the model is too stiff for {method} at a {frame} s frame: use policy \"correct\" or \"select\" (the implicit thread keeps it stable), a linearly implicit fast.method (ros2, ros34pw2), or a shorter frame")]
    Diverged {
        /// Frame time.
        time: f64,
        /// The first non-finite state.
        state: String,
        /// Its value.
        value: f64,
        /// The explicit method.
        method: &'static str,
        /// The frame (s).
        frame: f64,
    },
    /// The fast thread fell further behind real time than it catches up
    /// (a stall longer than [`MAX_BACKLOG_SECONDS`], or a model whose
    /// frames take longer than the frame to compute).
    #[error("at t = {time} s the fast thread was {owed} frames ({seconds} s) behind real time, more than the {most} frames a run catches up: the process was stopped or starved that long, or the model's frames take longer to compute than the frame (see the summary's fast compute); give the run a core of its own, or a longer frame")]
    Behind {
        /// The slot's time (s).
        time: f64,
        /// Frames owed.
        owed: u64,
        /// The same in seconds.
        seconds: f64,
        /// The most frames owed that a run catches up.
        most: u64,
    },
}

/// The recorded inputs of the last frames, for re-integration, and the
/// model's inner-event count at each frame's start (before its major step).
struct Replay {
    u: Vec<f64>,
    events: Vec<u64>,
    frames: usize,
}

impl Replay {
    fn new(frames: usize, inputs: usize) -> Self {
        Replay {
            u: vec![0.0; frames * inputs],
            events: vec![0; frames],
            frames,
        }
    }

    fn slot(&self, k: u64) -> usize {
        (k % self.frames as u64) as usize
    }

    fn store(&mut self, k: u64, u: &[f64], events: u64) {
        let s = self.slot(k);
        self.u[s * u.len()..(s + 1) * u.len()].copy_from_slice(u);
        self.events[s] = events;
    }

    fn load(&self, k: u64, u: &mut [f64]) {
        let s = self.slot(k);
        u.copy_from_slice(&self.u[s * u.len()..(s + 1) * u.len()]);
    }

    /// The inner-event count at frame `k`'s start.
    fn events(&self, k: u64) -> u64 {
        self.events[self.slot(k)]
    }
}

/// Scratch for naming a model that produced a non-finite value.
struct Probe {
    x: Vec<f64>,
    xd: Vec<f64>,
    y: Vec<f64>,
    dx: Vec<f64>,
    no_hits: Vec<bool>,
}

/// The outputs of the two newest computed frames, newest first: what late
/// slots extrapolate or hold.
struct Computed {
    frames: [u64; 2],
    y: [Vec<f64>; 2],
    count: u8,
}

impl Computed {
    fn new(outputs: usize) -> Self {
        Computed {
            frames: [0; 2],
            y: [vec![0.0; outputs], vec![0.0; outputs]],
            count: 0,
        }
    }

    /// Keeps frame `k`'s outputs `y` as the newest.
    fn push(&mut self, k: u64, y: &[f64]) {
        self.y.swap(0, 1);
        self.y[0].copy_from_slice(y);
        self.frames = [k, self.frames[0]];
        self.count = (self.count + 1).min(2);
    }

    /// The outputs for slot `k` (after the newest computed frame): the two
    /// newest extrapolated to it over at most [`MAX_EXTRAPOLATED_FRAMES`],
    /// else the newest held. `None` before any frame was computed.
    fn late(&self, k: u64, out: &mut [f64]) -> Option<SlotFate> {
        let [newest, before] = &self.y;
        let [k1, k0] = self.frames;
        match self.count {
            0 => None,
            2 if k - k1 <= MAX_EXTRAPOLATED_FRAMES => {
                let s = (k - k1) as f64 / (k1 - k0) as f64;
                for ((o, a), b) in out.iter_mut().zip(newest).zip(before) {
                    *o = a + s * (a - b);
                }
                Some(SlotFate::Extrapolated)
            }
            _ => {
                out.copy_from_slice(newest);
                Some(SlotFate::Held)
            }
        }
    }
}

/// What computing a frame gave besides its state and outputs.
struct Outcome {
    /// Where its state came from.
    source: FrameSource,
    /// The non-finite value the model produced, if it did: the run ends
    /// once the frame is served.
    fault: Option<NonFinite>,
}

/// The fast side of a tandem run.
pub struct FastSide {
    model: Box<dyn Model>,
    stepper: FastStepper,
    method: FastMethod,
    inputs: Box<dyn InputSource>,
    policy: Policy,
    frame: f64,
    frame_ns: Nanos,
    deadline_ns: Nanos,
    /// Frames in the run.
    frames: u64,
    max_catchup: u64,
    rtol: f64,
    atol: f64,
    /// How many frames old an implicit result may be to predict a frame's
    /// state.
    horizon: u64,
    guard: StateGuard,
    outputs_guard: OutputGuard,
    rates: FrameRates,
    hits: Vec<bool>,
    locator: EventLocator,
    boundary: Boundary,
    flow: FrameFlow,
    /// The next frame to compute: the state is at its time, before its
    /// major step.
    next: u64,
    x: Vec<f64>,
    xd: Vec<f64>,
    u: Vec<f64>,
    /// The outputs of the newest computed frame.
    y: Vec<f64>,
    /// What a late slot sends (extrapolated or held outputs).
    late: Vec<f64>,
    computed: Computed,
    /// Frames whose slots passed before they were computed.
    backlog: Backlog,
    /// The state before a correction, to measure it and to keep it when
    /// the correction's modes disagree.
    own: Vec<f64>,
    own_xd: Vec<f64>,
    /// The state the frame's step started from.
    flow_start: Vec<f64>,
    /// The first frame whose state follows this side's newest event or
    /// state-changing major step: an implicit result that ends before it
    /// describes another path, and bounds nothing.
    discontinuity: u64,
    probe: Probe,
    scratch_u: Vec<f64>,
    replay: Replay,
    results: Option<ResultReader>,
    last_used: u64,
    sender: Option<FrameSender>,
    /// Where the model's inner state goes to the implicit thread, when it
    /// can be exported.
    inner: Option<InnerPublisher>,
    /// The inner-event count of the newest export ([`UNSYNCED`]: export
    /// at the next frame).
    exported: u64,
    recorder: Option<RowSender>,
    outputs: Option<Box<dyn OutputSink>>,
    tap: Option<Box<dyn FrameTap>>,
    u_time: Nanos,
    metrics: Arc<Metrics>,
    retunes: Option<FastRetunes>,
}

/// The parts a fast side is built from.
pub struct FastParts {
    /// The model instance of this thread.
    pub model: Box<dyn Model>,
    /// Its integrator (a linearly implicit one with its matrices).
    pub stepper: FastStepper,
    /// Its inputs.
    pub inputs: Box<dyn InputSource>,
    /// Implicit results (absent under `explicit`).
    pub results: Option<ResultReader>,
    /// Frames to the implicit thread (absent under `explicit`).
    pub sender: Option<FrameSender>,
    /// The model's inner state to the implicit thread, when the model
    /// exports one and the implicit side integrates; the exchange starts
    /// with this side's model's initial export.
    pub inner: Option<InnerPublisher>,
    /// Recording, if any.
    pub recorder: Option<RowSender>,
    /// Where each frame's outputs go (the transmitting I/O), if anywhere.
    pub outputs: Option<Box<dyn OutputSink>>,
    /// What watches each frame's end, if anything.
    pub tap: Option<Box<dyn FrameTap>>,
    /// Where to count.
    pub metrics: Arc<Metrics>,
    /// Parameter changes to swap in at frame boundaries, if any.
    pub retunes: Option<FastRetunes>,
}

impl FastSide {
    /// Builds the fast side; the model's rates must land on the frame grid.
    pub fn new(settings: &TandemSettings, parts: FastParts) -> Result<Self, RateError> {
        let FastParts {
            mut model,
            stepper,
            inputs,
            results,
            sender,
            inner,
            recorder,
            outputs,
            tap,
            metrics,
            retunes,
        } = parts;
        let rates = FrameRates::new(model.as_ref(), settings.frame)?;
        let layout = model.layout().clone();
        let (n, nd, nu, ny) = (
            layout.states.len(),
            layout.discrete,
            layout.inputs.len(),
            layout.outputs.len(),
        );
        let mut x = vec![0.0; n];
        let mut xd = vec![0.0; nd];
        model.initial_state(&mut x, &mut xd);
        let u = layout.inputs.iter().map(|v| v.default).collect();
        let events = settings.events;
        let backlog = (settings.in_frames(MAX_BACKLOG_SECONDS)).clamp(1, MAX_BACKLOG_FRAMES);
        Ok(FastSide {
            stepper,
            method: settings.fast.method,
            inputs,
            policy: settings.policy,
            frame: settings.frame,
            frame_ns: nanos(settings.frame),
            deadline_ns: nanos(settings.output_deadline),
            frames: settings.frames(),
            max_catchup: settings.max_catchup as u64,
            rtol: settings.implicit.rtol,
            atol: settings.implicit.atol,
            horizon: settings.in_frames(settings.implicit.max_lag),
            guard: StateGuard::new(
                &x,
                settings.implicit.atol,
                matches!(settings.fast.method, FastMethod::Explicit(_)),
            ),
            outputs_guard: OutputGuard::new(&layout.outputs),
            hits: vec![false; rates.len()],
            locator: EventLocator::new(&layout, events.locator_settings(), events.max_per_frame),
            boundary: Boundary::new(n, nd),
            flow: FrameFlow::new(n),
            probe: Probe {
                x: vec![0.0; n],
                xd: vec![0.0; nd],
                y: vec![0.0; ny],
                dx: vec![0.0; n],
                no_hits: vec![false; rates.len()],
            },
            rates,
            next: 0,
            x,
            xd,
            u,
            y: vec![0.0; ny],
            late: vec![0.0; ny],
            computed: Computed::new(ny),
            backlog: Backlog::new(backlog as usize),
            own: vec![0.0; n],
            own_xd: vec![0.0; nd],
            flow_start: vec![0.0; n],
            discontinuity: 0,
            scratch_u: vec![0.0; nu],
            replay: Replay::new(settings.max_catchup + 1, nu),
            results,
            last_used: 0,
            sender,
            inner,
            exported: model.inner_events(),
            recorder,
            outputs,
            tap,
            u_time: Nanos::MIN,
            metrics,
            model,
            retunes,
        })
    }

    /// The continuous state (at the next frame's time after a frame).
    pub fn state(&self) -> &[f64] {
        &self.x
    }

    /// The discrete state (at the next frame's time after a frame, before
    /// its major step).
    pub fn discrete_state(&self) -> &[f64] {
        &self.xd
    }

    /// The next frame to compute (all before it are computed).
    pub fn next_frame(&self) -> u64 {
        self.next
    }

    /// Starts the run at frame `first` instead of 0, from the initial
    /// state, for as many frames as the settings say: time far into a run
    /// without the frames before it.
    pub fn start_at(&mut self, first: u64) {
        self.frames += first - self.next;
        self.next = first;
    }

    /// The recorder's end, to read its drop count after the run.
    pub fn recorder(&self) -> Option<&RowSender> {
        self.recorder.as_ref()
    }

    /// Frame records dropped because the implicit thread was not reading.
    pub fn dropped_records(&self) -> u64 {
        self.sender.as_ref().map_or(0, FrameSender::dropped)
    }

    /// Serves slot `slot` (the caller has slept until its start), or the
    /// slot in progress when the thread woke after later ones had begun;
    /// returns the next slot to wake for. Fails when the model produced a
    /// non-finite value (named), when the state stops being finite with no
    /// implicit state to restart from, or when the thread fell further
    /// behind than a run catches up.
    pub fn frame(&mut self, slot: u64, clock: &mut dyn Clock) -> Result<u64, FastError> {
        let woke = clock.now();
        self.metrics.wake_latency.record((woke - self.start_of(slot)) as f64);
        let slot = self.skip_passed(slot, woke)?;
        if let Some(o) = &mut self.outputs {
            o.boundary(slot);
        }
        let deadline = self.start_of(slot) + self.deadline_ns;
        if self.next < slot {
            // Owed frames: at least one per slot, so that the backlog
            // shrinks whatever the frames cost, then as the deadline allows.
            self.catch_up(clock)?;
            while self.next < slot && clock.now() <= deadline {
                self.catch_up(clock)?;
            }
        }
        if self.next == slot {
            self.serve_own(slot, woke, deadline, clock)?;
        } else {
            self.serve_behind(slot)?;
        }
        Ok(slot + 1)
    }

    /// Where slot `k` starts on the clock.
    fn start_of(&self, k: u64) -> Nanos {
        k as Nanos * self.frame_ns
    }

    /// The time of frame `k` (s), derived from its number.
    fn time_of(&self, k: u64) -> f64 {
        k as f64 * self.frame
    }

    /// Woken at `woke` for `slot`: when a later slot has begun (a stall),
    /// the slots before it passed while the thread did not run. Their
    /// frames are owed, what was due in them goes out once with the
    /// current slot's outputs, and the stall is counted. Returns the slot
    /// to serve.
    fn skip_passed(&mut self, slot: u64, woke: Nanos) -> Result<u64, FastError> {
        let current = ((woke.max(0) / self.frame_ns) as u64).min(self.frames.saturating_sub(1));
        if current <= slot {
            return Ok(slot);
        }
        for k in slot..current {
            self.owe(k, SlotFate::Skipped)?;
        }
        self.metrics.missed_woke_late.add(current - slot);
        self.metrics.stalls.record((woke - self.start_of(slot)) as f64);
        if let Some(o) = &mut self.outputs {
            o.skipped(slot, current);
        }
        Ok(current)
    }

    /// Keeps `fate` for frame `k`, owed.
    fn owe(&mut self, k: u64, fate: SlotFate) -> Result<(), FastError> {
        self.backlog.owe(self.next, k, fate).map_err(|TooFarBehind { owed }| {
            let most = self.backlog.capacity();
            FastError::Behind {
                time: self.time_of(k),
                owed,
                seconds: owed as f64 * self.frame,
                most,
            }
        })
    }

    /// Computes the oldest owed frame, late, and records it with what its
    /// slot sent.
    fn catch_up(&mut self, clock: &mut dyn Clock) -> Result<(), FastError> {
        let k = self.next;
        let outcome = self.compute(k, true, clock)?;
        let source = self.backlog.settle(k).map_or(outcome.source, FrameSource::from);
        self.metrics.caught_up.increment();
        self.settle(k, source, clock);
        match outcome.fault {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Serves slot `k` with its own frame, computed now (woken at `woke`,
    /// its outputs due at `deadline`).
    fn serve_own(&mut self, k: u64, woke: Nanos, deadline: Nanos, clock: &mut dyn Clock) -> Result<(), FastError> {
        let outcome = self.compute(k, false, clock)?;
        let done = clock.now();
        let late = if woke > deadline {
            Some(&self.metrics.missed_woke_late)
        } else if done > deadline {
            Some(&self.metrics.missed_overrun)
        } else {
            None
        };
        let mut source = outcome.source;
        // Both late: no implicit result of this frame's time came in time
        // to stand for the fast one.
        if let Some(cause) = late.filter(|_| self.computed.count > 0) {
            cause.increment();
            if source != FrameSource::Implicit {
                if let Some(fate) = self.computed.late(k, &mut self.late) {
                    self.outputs_guard.check(&mut self.late, &self.metrics);
                    source = fate.into();
                }
            }
        }
        let (t, sent) = (self.time_of(k), if source.on_time() { &self.y } else { &self.late });
        if let Some(o) = &mut self.outputs {
            o.write(k, t, sent);
        }
        self.settle(k, source, clock);
        match outcome.fault {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// Serves slot `k` while frames before it are still owed: the newest
    /// computed outputs, extrapolated or held; the frame is owed.
    fn serve_behind(&mut self, k: u64) -> Result<(), FastError> {
        let fate = self.computed.late(k, &mut self.late).unwrap_or(SlotFate::Held);
        self.outputs_guard.check(&mut self.late, &self.metrics);
        self.owe(k, fate)?;
        self.metrics.missed_behind.increment();
        let t = self.time_of(k);
        if let Some(o) = &mut self.outputs {
            o.write(k, t, &self.late);
        }
        Ok(())
    }

    /// Frame `k` is computed and its slot served: records its computed
    /// outputs with `source`, hands them to the tap (which, as the
    /// recording, sees every frame once, when it is computed), and keeps
    /// them for late slots.
    fn settle(&mut self, k: u64, source: FrameSource, clock: &mut dyn Clock) {
        let t = self.time_of(k);
        if let Some(r) = &mut self.recorder {
            r.offer(k, t, &self.y, source);
        }
        if let Some(tap) = &mut self.tap {
            let tapping = clock.now();
            tap.frame_end(k, &self.u, &self.y, &self.hits);
            self.metrics.tap.record((clock.now() - tapping) as f64);
        }
        self.computed.push(k, &self.y);
        self.metrics.count_source(source);
        self.metrics.frames.increment();
    }

    /// Computes frame `k`, the next one: its inputs (those of its own time
    /// only when `late`, computed after its slot), the policy's state, the
    /// guard, the major step (its outputs into `y`, kept finite and in
    /// range), the record to the implicit thread and the step to the next
    /// frame.
    fn compute(&mut self, k: u64, late: bool, clock: &mut dyn Clock) -> Result<Outcome, FastError> {
        let began = clock.now();
        let t = self.time_of(k);
        if let Some(r) = &mut self.retunes {
            r.apply(k, self.model.as_mut());
        }
        let sampled = if late {
            self.inputs.read_late(t, &mut self.u)
        } else {
            self.inputs.read(t, &mut self.u)
        };
        self.u_time = self.u_time.max(nanos(sampled));
        let (mut source, replayed) = match self.policy {
            Policy::Correct => self.correct(k),
            Policy::Select => (self.select(k, began), 0),
            Policy::Explicit => (FrameSource::Fast, 0),
        };
        self.guard_state(k, &mut source)?;
        self.rates.hits(k, &mut self.hits);
        self.replay.store(k, &self.u, self.model.inner_events());
        if self.major_step(t) {
            self.discontinuity = k + 1;
        }
        let events = self.model.inner_events();
        if self.sender.is_some() && events != self.exported {
            // Published before the record that carries its count: the
            // implicit side that reads the record finds it.
            self.export_inner(events);
        }
        if let Some(sender) = &mut self.sender {
            sender.send(k, began, self.u_time, &self.u, &self.x, &self.xd, events);
        }
        self.flow_start.copy_from_slice(&self.x);
        let (matrix, events) = self.flow(k, true);
        if let Some(taken_at) = matrix {
            self.metrics.matrix_age.record(k.saturating_sub(taken_at) as f64);
        }
        clock.computed(replayed + 1 + events);
        let fault = self.fault(t);
        self.outputs_guard.check(&mut self.y, &self.metrics);
        self.next = k + 1;
        let took = (clock.now() - began) as f64;
        self.metrics.compute.record(took);
        if events > 0 {
            self.metrics.event_compute.record(took);
        }
        Ok(Outcome { source, fault })
    }

    /// The major step at `t` on this side's state, with its inputs and
    /// rate hits, its outputs into `y`; whether it changed a state.
    fn major_step(&mut self, t: f64) -> bool {
        let mut step = MajorStep {
            t,
            x: &mut self.x,
            xd: &mut self.xd,
            u: &self.u,
            hits: &self.hits,
            y: &mut self.y,
        };
        let counts = &self.metrics.fast_events;
        self.boundary
            .major_step(self.model.as_mut(), &mut self.locator, &mut step, counts)
    }

    /// Publishes the model's inner state after `events` events to the
    /// implicit thread, when it exports one.
    fn export_inner(&mut self, events: u64) {
        self.exported = events;
        let Some(publisher) = &mut self.inner else {
            return;
        };
        let buffer = publisher.buffer();
        if self.model.export_inner(&mut buffer.bytes) {
            buffer.events = events;
            publisher.publish();
        }
    }

    /// Frame `k`'s step from `x` (after its major step) to the next frame,
    /// with its events; counts them when `counted` (a frame's own step, not
    /// a re-integration). Returns the frame of the iteration matrix used
    /// (for a linearly implicit method) and the extra steps the events
    /// took.
    fn flow(&mut self, k: u64, counted: bool) -> (Option<u64>, u32) {
        let (t0, t1) = (self.time_of(k), self.time_of(k + 1));
        let stepper = &mut self.stepper;
        let mut step = |model: &mut dyn Model, t: f64, h: f64, x: &mut [f64], xd: &[f64], u: &[f64]| {
            stepper.step(model, t, h, x, xd, u)
        };
        let (matrix, flowed) = self.flow.run(
            self.model.as_mut(),
            &mut self.locator,
            &mut step,
            (t0, self.frame, t1),
            &mut self.x,
            &mut self.xd,
            &self.u,
            counted.then_some(&self.metrics.fast_events),
        );
        if flowed.events > 0 || flowed.deferred {
            self.discontinuity = self.discontinuity.max(k + 1);
        }
        (matrix, flowed.events)
    }

    /// After frame `k`'s step (from `t`) left a non-finite state: whether
    /// the model itself produced it from the finite state the step started
    /// from, named: a NaN derivative or output (the square root of a
    /// negative number, 0/0, an FMU call that failed). The derivatives are
    /// probed at that state at the step's start, middle and end, the times
    /// its stages evaluate (a quantity that turns negative inside the step
    /// is found where it does). A step that merely diverged (an explicit
    /// method on a mode faster than the frame) overflows to infinities
    /// first, and is the guard's to handle.
    fn fault(&mut self, t: f64) -> Option<NonFinite> {
        if self.x.iter().all(|v| v.is_finite()) || self.flow_start.iter().any(|v| !v.is_finite()) {
            return None;
        }
        // A failed FMU call is kept and reported at any state.
        if let Some(e) = self.reported_nan(t, true) {
            return Some(e);
        }
        let (tau, i) = [t, t + 0.5 * self.frame, t + self.frame].into_iter().find_map(|tau| {
            let s = StateRef {
                t: tau,
                x: &self.flow_start,
                xd: &self.xd,
                u: &self.u,
            };
            self.model.derivatives(s, &mut self.probe.dx);
            self.probe.dx.iter().position(|v| v.is_nan()).map(|i| (tau, i))
        })?;
        // The block that produced it, as the model names it at the state
        // the step reached.
        self.reported_nan(tau, false).or_else(|| {
            Some(NonFinite {
                time: tau,
                place: format!("the derivative of state \"{}\"", self.model.layout().states[i]),
                value: f64::NAN,
            })
        })
    }

    /// The NaN the model reports (its block, its FMU call) at time `t`, at
    /// the state the frame's step started from or the one it reached.
    fn reported_nan(&mut self, t: f64, at_start: bool) -> Option<NonFinite> {
        let p = &mut self.probe;
        p.x.copy_from_slice(if at_start { &self.flow_start } else { &self.x });
        p.xd.copy_from_slice(&self.xd);
        let mut step = MajorStep {
            t,
            x: &mut p.x,
            xd: &mut p.xd,
            u: &self.u,
            hits: &p.no_hits,
            y: &mut p.y,
        };
        match self.model.major_outputs(&mut step) {
            Err(e) if e.value.is_nan() => Some(e),
            _ => None,
        }
    }

    /// Replaces an unusable state by the best substitute (see
    /// [`super::guard`]); fails when the state is not finite and nothing
    /// can replace it (no implicit prediction, and no good state or too
    /// many extrapolated in a row). A result whose modes are not this
    /// side's, or that ends before this side's newest event, predicts
    /// another path, and is not used.
    fn guard_state(&mut self, k: u64, source: &mut FrameSource) -> Result<(), FastError> {
        let t = self.time_of(k);
        let modes = &self.model.layout().modes;
        let events = self.model.inner_events();
        let result = self.results.as_mut().map(|r| r.latest());
        let same_path = |r: &&ImplicitResult| {
            r.k1 >= self.discontinuity && same_modes(modes, &r.xd1, &self.xd) && r.inner1 == events
        };
        let result = result.filter(same_path);
        if self.guard.check(k, t, &mut self.x, result, self.horizon, &self.metrics) {
            *source = FrameSource::Implicit;
        }
        // Not finite, and nothing could replace it (the guard left it).
        match self.x.iter().position(|v| !v.is_finite()) {
            Some(i) => Err(FastError::Diverged {
                time: t,
                state: self.model.layout().states[i].clone(),
                value: self.x[i],
                method: self.method.name(),
                frame: self.frame,
            }),
            None => Ok(()),
        }
    }

    /// At the boundary after the last frame (`frames`, the number of frames
    /// run): computes the frames still owed (a stall near the end), then
    /// sends what the last frame made due.
    pub fn close(&mut self, frames: u64, clock: &mut dyn Clock) -> Result<(), FastError> {
        while self.next < frames {
            self.catch_up(clock)?;
        }
        if let Some(o) = &mut self.outputs {
            o.boundary(frames);
        }
        Ok(())
    }

    /// `correct`: restarts from the newest implicit state not used yet, if
    /// it is at most `max_catchup` frames old, and re-integrates to frame
    /// `k` (major steps and events included), the model's inner state set
    /// back to that frame's first. Returns the source and the steps
    /// re-integrated.
    fn correct(&mut self, k: u64) -> (FrameSource, u32) {
        let Some(results) = &mut self.results else {
            return (FrameSource::Fast, 0);
        };
        let r = results.latest();
        let stale = self.retunes.as_ref().is_some_and(|c| c.predates_change(r.k0));
        if r.seq == self.last_used || stale {
            return (FrameSource::Fast, 0);
        }
        let from = if r.covers(k) {
            k
        } else if r.k1 < k {
            r.k1
        } else {
            // Ahead of this frame: it will cover a later one.
            return (FrameSource::Fast, 0);
        };
        self.last_used = r.seq;
        if k - from > self.max_catchup {
            self.metrics.stale_results.increment();
            return (FrameSource::Fast, 0);
        }
        // The inner events this side had handled by frame `from`'s start:
        // the result must have seen the same, and the model goes back there.
        let own_events = self.model.inner_events();
        let start_events = if from == k {
            own_events
        } else {
            self.replay.events(from)
        };
        if r.inner1 != start_events {
            self.metrics.disagreements.increment();
            return (FrameSource::Fast, 0);
        }
        let restored = start_events != own_events;
        if restored {
            if !self.model.restore_inner(start_events) {
                self.metrics.inner_refusals.increment();
                return (FrameSource::Fast, 0);
            }
            self.metrics.inner_restores.increment();
            // The same count may now stand for another state.
            self.exported = UNSYNCED;
        }
        self.own.copy_from_slice(&self.x);
        self.own_xd.copy_from_slice(&self.xd);
        take_state(r, from, from as f64 * self.frame, &mut self.x, &mut self.xd);
        // Re-integrate frames from..k with the inputs they read.
        std::mem::swap(&mut self.u, &mut self.scratch_u);
        let mut steps = 0;
        for j in from..k {
            let tj = self.time_of(j);
            self.replay.load(j, &mut self.u);
            self.rates.hits(j, &mut self.hits);
            // Outputs are not sent again.
            if self.major_step(tj) {
                self.discontinuity = self.discontinuity.max(j + 1);
            }
            steps += 1 + self.flow(j, false).1;
        }
        std::mem::swap(&mut self.u, &mut self.scratch_u);
        let inner_agrees = self.model.inner_events() == own_events;
        if !inner_agrees || !same_modes(&self.model.layout().modes, &self.xd, &self.own_xd) {
            // The correction has seen other events than the world has.
            self.x.copy_from_slice(&self.own);
            self.xd.copy_from_slice(&self.own_xd);
            let undone = if restored {
                self.model.revert_inner()
            } else {
                inner_agrees || self.model.restore_inner(own_events)
            };
            if !undone {
                self.metrics.inner_refusals.increment();
            }
            if restored || !inner_agrees {
                self.exported = UNSYNCED;
            }
            self.metrics.disagreements.increment();
            return (FrameSource::Fast, steps);
        }
        self.record_correction();
        let replayed = (k - from) as u32;
        self.metrics.catchup_frames.record(replayed as f64);
        (
            if replayed == 0 {
                FrameSource::Implicit
            } else {
                FrameSource::CatchUp
            },
            steps,
        )
    }

    /// `select`: the implicit state of frame `k` when it was published by
    /// `now` and its modes are this side's.
    fn select(&mut self, k: u64, now: Nanos) -> FrameSource {
        let Some(results) = &mut self.results else {
            return FrameSource::Fast;
        };
        let r = results.latest();
        let stale = self.retunes.as_ref().is_some_and(|c| c.predates_change(r.k0));
        if !(r.covers(k) && r.published_at <= now) || stale {
            self.metrics.implicit_late.increment();
            return FrameSource::Fast;
        }
        if !same_modes(&self.model.layout().modes, &r.xd1, &self.xd) || r.inner1 != self.model.inner_events() {
            self.metrics.disagreements.increment();
            return FrameSource::Fast;
        }
        self.own.copy_from_slice(&self.x);
        take_state(r, k, k as f64 * self.frame, &mut self.x, &mut self.xd);
        self.record_correction();
        FrameSource::Implicit
    }

    /// Counts the size of the change from `own` to `x` in units of the
    /// implicit tolerances (weighted RMS); a non-finite explicit state that
    /// the correction replaced is not a size and is not counted.
    fn record_correction(&self) {
        let sum: f64 = self
            .x
            .iter()
            .zip(&self.own)
            .map(|(a, b)| ((a - b) / (self.atol + self.rtol * a.abs())).powi(2))
            .sum();
        let size = (sum / self.x.len().max(1) as f64).sqrt();
        if size.is_finite() {
            self.metrics.correction.record(size);
        }
    }
}

/// The state of frame `k` (at `t`) from result `r`, which covers it: the
/// result's end exactly, or its polynomial inside a smooth step; with its
/// discrete state.
fn take_state(r: &ImplicitResult, k: u64, t: f64, x: &mut [f64], xd: &mut [f64]) {
    if k == r.k1 {
        x.copy_from_slice(&r.step.x1);
    } else {
        r.step.state_at(t, x);
    }
    xd.copy_from_slice(&r.xd1);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_slots_extrapolate_computed_outputs_over_three_frames_then_hold() {
        let mut c = Computed::new(1);
        let mut out = [0.0];
        assert_eq!(c.late(0, &mut out), None, "nothing computed yet");
        c.push(4, &[10.0]);
        assert_eq!(c.late(5, &mut out), Some(SlotFate::Held));
        assert_eq!(out, [10.0]);
        c.push(5, &[12.0]);
        for (k, y) in [(6, 14.0), (8, 18.0)] {
            assert_eq!(c.late(k, &mut out), Some(SlotFate::Extrapolated));
            assert_eq!(out, [y]);
        }
        assert_eq!(c.late(9, &mut out), Some(SlotFate::Held), "four frames on");
        assert_eq!(out, [12.0]);
    }
}
