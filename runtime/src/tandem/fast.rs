//! The fast thread's work: one frame of its integrator, combined
//! with the implicit side by the policy. The same code runs on the real and
//! the virtual clock; it allocates nothing after [`FastSide::new`].
//!
//! A frame `k` at time `t_k`:
//! 1. send what the previous frame's outputs made due (the boundary);
//! 2. read the inputs `u_k`;
//! 3. combine: `correct` restarts from the newest implicit state of a past
//!    frame and re-integrates to `t_k` with the recorded inputs; `select`
//!    takes the implicit state of `t_k` when it is ready;
//! 4. guard: an unusable state (not finite, or far from the implicit
//!    prediction) takes the best substitute ([`super::guard`]);
//! 5. outputs `y_k` from the state at `t_k`, discrete update;
//! 6. send `(t_k, u_k, x_k)` to the implicit thread;
//! 7. one step to `t_{k+1}`: explicit, or linearly implicit with the
//!    newest iteration matrix;
//! 8. when the frame ends after its output deadline (it woke late or
//!    computed too long), it counts as a miss; unless its state is the
//!    implicit result of its own time (which was on time), the outputs sent
//!    are extrapolated from the two previous frames'. The outputs are kept
//!    finite and within their ranges.

use std::sync::Arc;

use tandem_models::{Model, NonFinite};

use super::clock::{nanos, Clock, Nanos};
use super::exchange::{FrameSender, ResultReader};
use super::guard::{OutputGuard, StateGuard, Substitute};
use super::inputs::InputSource;
use super::metrics::{FrameSource, Metrics};
use super::outputs::OutputSink;
use super::recording::RowSender;
use super::retune::FastRetunes;
use super::settings::{FastMethod, Policy, TandemSettings};
use super::stepper::FastStepper;
use crate::rates::{set_hits, TickRate};

/// Why a frame could not be computed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FastError {
    /// The model produced a non-finite output or state.
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

/// The recorded inputs and discrete states of the last frames, for
/// re-integration.
struct Replay {
    u: Vec<f64>,
    xd: Vec<f64>,
    frames: usize,
}

impl Replay {
    fn new(frames: usize, inputs: usize, discrete: usize) -> Self {
        Replay {
            u: vec![0.0; frames * inputs],
            xd: vec![0.0; frames * discrete],
            frames,
        }
    }

    fn slot(&self, k: u64) -> usize {
        (k % self.frames as u64) as usize
    }

    fn store(&mut self, k: u64, u: &[f64], xd: &[f64]) {
        let s = self.slot(k);
        self.u[s * u.len()..(s + 1) * u.len()].copy_from_slice(u);
        self.xd[s * xd.len()..(s + 1) * xd.len()].copy_from_slice(xd);
    }

    fn load(&self, k: u64, u: &mut [f64], xd: &mut [f64]) {
        let s = self.slot(k);
        u.copy_from_slice(&self.u[s * u.len()..(s + 1) * u.len()]);
        xd.copy_from_slice(&self.xd[s * xd.len()..(s + 1) * xd.len()]);
    }
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
    /// How old an implicit result may be to predict a frame's state (s).
    horizon: f64,
    guard: StateGuard,
    outputs_guard: OutputGuard,
    rates: Vec<TickRate>,
    hits: Vec<bool>,
    x: Vec<f64>,
    xd: Vec<f64>,
    u: Vec<f64>,
    y: Vec<f64>,
    /// Outputs sent in the two previous frames, newest first, and how
    /// many of them exist.
    sent: [Vec<f64>; 2],
    sent_count: u8,
    /// The state before a correction, to measure it.
    own: Vec<f64>,
    scratch_u: Vec<f64>,
    scratch_xd: Vec<f64>,
    replay: Replay,
    results: Option<ResultReader>,
    last_used: u64,
    sender: Option<FrameSender>,
    recorder: Option<RowSender>,
    outputs: Option<Box<dyn OutputSink>>,
    u_time: f64,
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
    /// Where to count.
    pub metrics: Arc<Metrics>,
    /// Parameter changes to swap in at frame boundaries, if any.
    pub retunes: Option<FastRetunes>,
}

impl FastSide {
    /// Builds the fast side; the model's rates must land on the frame grid.
    pub fn new(settings: &TandemSettings, parts: FastParts) -> Result<Self, crate::rates::RateError> {
        let FastParts {
            mut model,
            stepper,
            inputs,
            results,
            sender,
            recorder,
            outputs,
            metrics,
            retunes,
        } = parts;
        let rates = crate::rates::tick_rates(model.as_ref(), settings.frame)?;
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
            horizon: settings.implicit.max_lag,
            guard: StateGuard::new(
                &x,
                settings.implicit.atol,
                matches!(settings.fast.method, FastMethod::Explicit(_)),
            ),
            outputs_guard: OutputGuard::new(&layout.outputs),
            hits: vec![false; rates.len()],
            rates,
            x,
            xd,
            u,
            y: vec![0.0; ny],
            sent: [vec![0.0; ny], vec![0.0; ny]],
            sent_count: 0,
            own: vec![0.0; n],
            scratch_u: vec![0.0; nu],
            scratch_xd: vec![0.0; nd],
            replay: Replay::new(settings.max_catchup + 1, nu, nd),
            results,
            last_used: 0,
            sender,
            recorder,
            outputs,
            u_time: f64::NEG_INFINITY,
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

    /// Runs frame `k`; the caller has slept until its start. Fails only when
    /// the state stops being finite with no implicit state to restart from.
    pub fn frame(&mut self, k: u64, clock: &mut dyn Clock) -> Result<(), FastError> {
        let t = k as f64 * self.frame;
        let start = k as Nanos * self.frame_ns;
        let deadline = start + self.deadline_ns;
        let woke = clock.now();
        self.metrics.wake_latency.record((woke - start) as f64);
        if let Some(o) = &mut self.outputs {
            o.boundary(k);
        }
        let computing = clock.now();
        if let Some(r) = &mut self.retunes {
            r.apply(k, t, self.model.as_mut());
        }
        self.u_time = self.u_time.max(self.inputs.read(t, &mut self.u));

        let (mut source, replayed) = match self.policy {
            Policy::Correct => self.correct(k, t),
            Policy::Select => (self.select(t, woke), 0),
            Policy::Explicit => (FrameSource::Explicit, 0),
        };
        self.guard_state(t, &mut source)?;
        set_hits(&self.rates, k, &mut self.hits);
        self.replay.store(k, &self.u, &self.xd);
        // A non-finite output is the output guard's to replace; the state
        // is finite here.
        let _ = self
            .model
            .major_outputs(t, &self.x, &mut self.xd, &self.u, &self.hits, &mut self.y);
        self.model.update(t, &self.hits, &mut self.x, &mut self.xd, &self.u);
        if let Some(sender) = &mut self.sender {
            sender.send(t, woke, self.u_time, &self.u, &self.x, &self.xd);
        }
        let matrix = self
            .stepper
            .step(self.model.as_mut(), t, self.frame, &mut self.x, &self.xd, &self.u);
        if let Some(taken_at) = matrix {
            self.metrics.matrix_age.record(k.saturating_sub(taken_at) as f64);
        }
        clock.computed(replayed + 1);

        let done = clock.now();
        self.metrics.compute.record((done - computing) as f64);
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
        self.last_source = source;
        self.metrics.count_source(source);
        self.metrics.frames.increment();
        Ok(())
    }

    /// Replaces an unusable state by the best substitute (see
    /// [`super::guard`]); fails when the state is not finite and nothing
    /// can replace it (no implicit prediction, and no good state or too
    /// many extrapolated in a row).
    fn guard_state(&mut self, t: f64, source: &mut FrameSource) -> Result<(), FastError> {
        let result = self.results.as_mut().map(|r| r.latest());
        let substitute = self.guard.check(t, &mut self.x, result, self.horizon, &self.metrics);
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
    /// `k`. Returns the source and the frames re-integrated.
    fn correct(&mut self, k: u64, t: f64) -> (FrameSource, u32) {
        let Some(results) = &mut self.results else {
            return (FrameSource::Explicit, 0);
        };
        let r = results.latest();
        let stale = self.retunes.as_ref().is_some_and(|c| c.predates_change(r.t0));
        if r.seq == self.last_used || stale {
            return (FrameSource::Explicit, 0);
        }
        let from = if r.covers(t) {
            k
        } else if r.t1 < t {
            let j = (r.t1 / self.frame + 1e-6).floor() as u64;
            if !r.covers(j as f64 * self.frame) {
                return (FrameSource::Explicit, 0);
            }
            j
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
        r.interpolate(from as f64 * self.frame, &mut self.x);
        // Re-integrate frames from..k with what they read and held.
        std::mem::swap(&mut self.u, &mut self.scratch_u);
        self.scratch_xd.copy_from_slice(&self.xd);
        for j in from..k {
            let tj = j as f64 * self.frame;
            self.replay.load(j, &mut self.u, &mut self.xd);
            set_hits(&self.rates, j, &mut self.hits);
            // Outputs are not sent again; a failure shows at this frame.
            let _ = self
                .model
                .major_outputs(tj, &self.x, &mut self.xd, &self.u, &self.hits, &mut self.y);
            self.model.update(tj, &self.hits, &mut self.x, &mut self.xd, &self.u);
            self.stepper
                .step(self.model.as_mut(), tj, self.frame, &mut self.x, &self.xd, &self.u);
        }
        std::mem::swap(&mut self.u, &mut self.scratch_u);
        self.xd.copy_from_slice(&self.scratch_xd);
        self.record_correction();
        let replayed = (k - from) as u32;
        self.metrics.catchup_frames.record(replayed as f64);
        (
            if replayed == 0 {
                FrameSource::Implicit
            } else {
                FrameSource::CatchUp
            },
            replayed,
        )
    }

    /// `select`: the implicit state of `t` when it was published by now.
    fn select(&mut self, t: f64, now: Nanos) -> FrameSource {
        let Some(results) = &mut self.results else {
            return FrameSource::Explicit;
        };
        let r = results.latest();
        let stale = self.retunes.as_ref().is_some_and(|c| c.predates_change(r.t0));
        if !(r.covers(t) && r.published_at <= now) || stale {
            self.metrics.implicit_late.increment();
            return FrameSource::Explicit;
        }
        self.own.copy_from_slice(&self.x);
        r.interpolate(t, &mut self.x);
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
