//! The fast thread's work: one frame of its integrator, combined
//! with the implicit side by the policy. The same code runs on the real and
//! the virtual clock; it allocates nothing after [`FastSide::new`].
//!
//! A frame `k` at time `t_k` (frames are counted; `t_k` is derived from
//! `k`, never accumulated):
//! 1. send what the previous frame's outputs made due (the boundary);
//! 2. read the inputs `u_k`;
//! 3. combine: `correct` restarts from the newest implicit state of a past
//!    frame (continuous and discrete) and re-integrates to `t_k` with the
//!    recorded inputs, events included; `select` takes the implicit state
//!    of `t_k` when it is ready. Either takes it only when its modes are
//!    this side's own: the events this side has seen are the ones the world
//!    has seen, and a correction never undoes or invents one (a refusal is
//!    counted as a disagreement);
//! 4. guard: an unusable state (not finite, or far from the implicit
//!    prediction of the same modes) takes the best substitute
//!    ([`super::guard`]);
//! 5. the major step: outputs `y_k`, discrete update and resets, the event
//!    iteration;
//! 6. send `(k, u_k, x_k, xd_k)` to the implicit thread;
//! 7. one step to `t_{k+1}`: explicit, or linearly implicit with the
//!    newest iteration matrix; a zero crossing inside the frame is located
//!    on the step's continuous extension, handled there, and the rest of
//!    the frame integrated ([`super::flow`]); a model that produced a
//!    non-finite value there (or an FMU call that failed) ends the run,
//!    named;
//! 8. when the frame ends after its output deadline (it woke late or
//!    computed too long), it counts as a miss; unless its state is the
//!    implicit result of its own time (which was on time), the outputs sent
//!    are extrapolated from the two previous frames'. The outputs are kept
//!    finite and within their ranges.

use std::sync::Arc;

use tandem_models::{Model, NonFinite, StateRef};

use super::clock::{nanos, Clock, Nanos};
use super::exchange::{FrameSender, ImplicitResult, ResultReader};
use super::flow::FrameFlow;
use super::guard::{OutputGuard, StateGuard, Substitute};
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
}

/// The recorded inputs of the last frames, for re-integration.
struct Replay {
    u: Vec<f64>,
    frames: usize,
}

impl Replay {
    fn new(frames: usize, inputs: usize) -> Self {
        Replay {
            u: vec![0.0; frames * inputs],
            frames,
        }
    }

    fn slot(&self, k: u64) -> usize {
        (k % self.frames as u64) as usize
    }

    fn store(&mut self, k: u64, u: &[f64]) {
        let s = self.slot(k);
        self.u[s * u.len()..(s + 1) * u.len()].copy_from_slice(u);
    }

    fn load(&self, k: u64, u: &mut [f64]) {
        let s = self.slot(k);
        u.copy_from_slice(&self.u[s * u.len()..(s + 1) * u.len()]);
    }
}

/// Scratch for naming a model that produced a non-finite value.
struct Probe {
    xd: Vec<f64>,
    y: Vec<f64>,
    dx: Vec<f64>,
    no_hits: Vec<bool>,
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
    x: Vec<f64>,
    xd: Vec<f64>,
    u: Vec<f64>,
    y: Vec<f64>,
    /// Outputs sent in the two previous frames, newest first, and how
    /// many of them exist.
    sent: [Vec<f64>; 2],
    sent_count: u8,
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
    recorder: Option<RowSender>,
    outputs: Option<Box<dyn OutputSink>>,
    tap: Option<Box<dyn FrameTap>>,
    u_time: Nanos,
    metrics: Arc<Metrics>,
    last_source: FrameSource,
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
        Ok(FastSide {
            stepper,
            method: settings.fast.method,
            inputs,
            policy: settings.policy,
            frame: settings.frame,
            frame_ns: nanos(settings.frame),
            deadline_ns: nanos(settings.output_deadline),
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
                xd: vec![0.0; nd],
                y: vec![0.0; ny],
                dx: vec![0.0; n],
                no_hits: vec![false; rates.len()],
            },
            rates,
            x,
            xd,
            u,
            y: vec![0.0; ny],
            sent: [vec![0.0; ny], vec![0.0; ny]],
            sent_count: 0,
            own: vec![0.0; n],
            own_xd: vec![0.0; nd],
            flow_start: vec![0.0; n],
            discontinuity: 0,
            scratch_u: vec![0.0; nu],
            replay: Replay::new(settings.max_catchup + 1, nu),
            results,
            last_used: 0,
            sender,
            recorder,
            outputs,
            tap,
            u_time: Nanos::MIN,
            metrics,
            model,
            last_source: FrameSource::Explicit,
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

    /// Where the last frame's state came from.
    pub fn last_source(&self) -> FrameSource {
        self.last_source
    }

    /// The outputs sent by the last frame.
    pub fn outputs(&self) -> &[f64] {
        &self.sent[0]
    }

    /// The recorder's end, to read its drop count after the run.
    pub fn recorder(&self) -> Option<&RowSender> {
        self.recorder.as_ref()
    }

    /// Frame records dropped because the implicit thread was not reading.
    pub fn dropped_records(&self) -> u64 {
        self.sender.as_ref().map_or(0, FrameSender::dropped)
    }

    /// Runs frame `k`; the caller has slept until its start. Fails when the
    /// model produced a non-finite value (named), or when the state stops
    /// being finite with no implicit state to restart from.
    pub fn frame(&mut self, k: u64, clock: &mut dyn Clock) -> Result<(), FastError> {
        let t = self.time_of(k);
        let start = k as Nanos * self.frame_ns;
        let deadline = start + self.deadline_ns;
        let woke = clock.now();
        self.metrics.wake_latency.record((woke - start) as f64);
        if let Some(o) = &mut self.outputs {
            o.boundary(k);
        }
        let computing = clock.now();
        if let Some(r) = &mut self.retunes {
            r.apply(k, self.model.as_mut());
        }
        self.u_time = self.u_time.max(nanos(self.inputs.read(t, &mut self.u)));

        let (mut source, replayed) = match self.policy {
            Policy::Correct => self.correct(k),
            Policy::Select => (self.select(k, woke), 0),
            Policy::Explicit => (FrameSource::Explicit, 0),
        };
        self.guard_state(k, &mut source)?;
        self.rates.hits(k, &mut self.hits);
        self.replay.store(k, &self.u);
        if self.boundary.major_step(
            self.model.as_mut(),
            &mut self.locator,
            t,
            &self.hits,
            &mut self.x,
            &mut self.xd,
            &self.u,
            &mut self.y,
            &self.metrics.fast_events,
        ) {
            self.discontinuity = k + 1;
        }
        if let Some(sender) = &mut self.sender {
            sender.send(k, woke, self.u_time, &self.u, &self.x, &self.xd);
        }
        self.flow_start.copy_from_slice(&self.x);
        let (matrix, events) = self.flow(k, true);
        if let Some(taken_at) = matrix {
            self.metrics.matrix_age.record(k.saturating_sub(taken_at) as f64);
        }
        clock.computed(replayed + 1 + events);
        let fault = self.fault(t);

        let done = clock.now();
        self.metrics.compute.record((done - computing) as f64);
        if events > 0 {
            self.metrics.event_compute.record((done - computing) as f64);
        }
        let late = if woke > deadline {
            Some(&self.metrics.missed_woke_late)
        } else if done > deadline {
            Some(&self.metrics.missed_overrun)
        } else {
            None
        };
        if let Some(cause) = late.filter(|_| self.sent_count > 0) {
            cause.increment();
            // Both late: no implicit result of this frame's time came in
            // time to stand for the fast one.
            if source != FrameSource::Implicit {
                source = FrameSource::Extrapolated;
                self.extrapolate_outputs();
            }
        }
        self.outputs_guard.check(&mut self.y, &self.metrics);
        self.sent.swap(0, 1);
        self.sent[0].copy_from_slice(&self.y);
        self.sent_count = (self.sent_count + 1).min(2);
        if let Some(o) = &mut self.outputs {
            o.write(k, t, &self.sent[0]);
        }
        if let Some(r) = &mut self.recorder {
            r.offer(k, t, &self.y);
        }
        if let Some(tap) = &mut self.tap {
            let tapping = clock.now();
            tap.frame_end(k, &self.u, &self.sent[0], &self.hits);
            self.metrics.tap.record((clock.now() - tapping) as f64);
        }
        self.last_source = source;
        self.metrics.count_source(source);
        self.metrics.frames.increment();
        match fault {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }

    /// The time of frame `k` (s), derived from its number.
    fn time_of(&self, k: u64) -> f64 {
        k as f64 * self.frame
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

    /// After frame `k`'s step (at `t`) left a non-finite state: whether the
    /// model itself produced it from the finite state the step started
    /// from, named: a NaN derivative or output (the square root of a
    /// negative number, 0/0, an FMU call that failed). A step that merely
    /// diverged (an explicit method on a mode faster than the frame)
    /// overflows to infinities first, and is the guard's to handle.
    fn fault(&mut self, t: f64) -> Option<NonFinite> {
        if self.x.iter().all(|v| v.is_finite()) || self.flow_start.iter().any(|v| !v.is_finite()) {
            return None;
        }
        // A failed FMU call is kept and reported at any state.
        if let Some(e) = self.reported_nan(t, true) {
            return Some(e);
        }
        let s = StateRef {
            t,
            x: &self.flow_start,
            xd: &self.xd,
            u: &self.u,
        };
        self.model.derivatives(s, &mut self.probe.dx);
        let i = self.probe.dx.iter().position(|v| v.is_nan())?;
        // The block that produced it, as the model names it at the state
        // the step reached.
        self.reported_nan(t, false).or_else(|| {
            Some(NonFinite {
                time: t,
                place: format!("the derivative of state \"{}\"", self.model.layout().states[i]),
                value: f64::NAN,
            })
        })
    }

    /// The NaN the model reports (its block, its FMU call) at time `t`, at
    /// the state the frame's step started from or the one it reached.
    fn reported_nan(&mut self, t: f64, at_start: bool) -> Option<NonFinite> {
        let p = &mut self.probe;
        p.xd.copy_from_slice(&self.xd);
        let x = if at_start { &self.flow_start } else { &self.x };
        match self.model.major_outputs(t, x, &mut p.xd, &self.u, &p.no_hits, &mut p.y) {
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
        let result = self.results.as_mut().map(|r| r.latest());
        let same_path = |r: &&ImplicitResult| r.k1 >= self.discontinuity && same_modes(modes, &r.xd1, &self.xd);
        let result = result.filter(same_path);
        let substitute = self.guard.check(k, t, &mut self.x, result, self.horizon, &self.metrics);
        if substitute == Some(Substitute::Implicit) {
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
    /// run): sends what the last frame made due.
    pub fn close(&mut self, frames: u64) {
        if let Some(o) = &mut self.outputs {
            o.boundary(frames);
        }
    }

    /// `correct`: restarts from the newest implicit state not used yet, if
    /// it is at most `max_catchup` frames old, and re-integrates to frame
    /// `k` (major steps and events included). Returns the source and the
    /// steps re-integrated.
    fn correct(&mut self, k: u64) -> (FrameSource, u32) {
        let Some(results) = &mut self.results else {
            return (FrameSource::Explicit, 0);
        };
        let r = results.latest();
        let stale = self.retunes.as_ref().is_some_and(|c| c.predates_change(r.k0));
        if r.seq == self.last_used || stale {
            return (FrameSource::Explicit, 0);
        }
        let from = if r.covers(k) {
            k
        } else if r.k1 < k {
            r.k1
        } else {
            // Ahead of this frame: it will cover a later one.
            return (FrameSource::Explicit, 0);
        };
        self.last_used = r.seq;
        if k - from > self.max_catchup {
            self.metrics.stale_results.increment();
            return (FrameSource::Explicit, 0);
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
            if self.boundary.major_step(
                self.model.as_mut(),
                &mut self.locator,
                tj,
                &self.hits,
                &mut self.x,
                &mut self.xd,
                &self.u,
                &mut self.y,
                &self.metrics.fast_events,
            ) {
                self.discontinuity = self.discontinuity.max(j + 1);
            }
            steps += 1 + self.flow(j, false).1;
        }
        std::mem::swap(&mut self.u, &mut self.scratch_u);
        if !same_modes(&self.model.layout().modes, &self.xd, &self.own_xd) {
            // The correction has seen other events than the world has.
            self.x.copy_from_slice(&self.own);
            self.xd.copy_from_slice(&self.own_xd);
            self.metrics.disagreements.increment();
            return (FrameSource::Explicit, steps);
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
            return FrameSource::Explicit;
        };
        let r = results.latest();
        let stale = self.retunes.as_ref().is_some_and(|c| c.predates_change(r.k0));
        if !(r.covers(k) && r.published_at <= now) || stale {
            self.metrics.implicit_late.increment();
            return FrameSource::Explicit;
        }
        if !same_modes(&self.model.layout().modes, &r.xd1, &self.xd) {
            self.metrics.disagreements.increment();
            return FrameSource::Explicit;
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

    /// Outputs from the two previous frames' by linear extrapolation (or
    /// held when there was only one).
    fn extrapolate_outputs(&mut self) {
        let [last, before] = &self.sent;
        for (i, y) in self.y.iter_mut().enumerate() {
            *y = if self.sent_count >= 2 {
                2.0 * last[i] - before[i]
            } else {
                last[i]
            };
        }
    }
}

/// The state of frame `k` (at `t`) from result `r`, which covers it: the
/// result's end exactly, or its polynomial inside a smooth step; with its
/// discrete state.
fn take_state(r: &ImplicitResult, k: u64, t: f64, x: &mut [f64], xd: &mut [f64]) {
    if k == r.k1 {
        x.copy_from_slice(&r.x1);
    } else {
        r.interpolate(t, x);
    }
    xd.copy_from_slice(&r.xd1);
}
