//! The implicit thread's work: it takes the frames the fast thread sends
//! (inputs and state), integrates the same model with an implicit method
//! from its own state, macro step by macro step, and publishes each result
//! with the polynomial that interpolates it and its discrete state. It may
//! run up to `lead` ahead of the fast thread's newest frame, on inputs
//! extrapolated from their timestamped samples; when it falls more than
//! `max_lag` behind, it restarts from the fast thread's newest state. A
//! linearly implicit fast method also needs its iteration matrix (`I − hγJ`),
//! which only this thread factors: the side prepares that method's
//! iteration matrix at the newest frame's state every `matrix_interval`
//! frames (under the `explicit` policy that is all it does).
//!
//! Its frames are the fast side's, hybrid parts included: at each frame
//! boundary it runs the frame's major step (discrete update, resets, the
//! event iteration) with that frame's inputs, and inside each frame it
//! locates zero crossings on the BDF's interpolating polynomial (a
//! fixed-step method's: on the step's Hermite extension), handles them and
//! restarts there. The events the fast thread has seen are the world's:
//! when this side's modes at a frame disagree with those the fast thread
//! sent for it, it restarts from the fast thread's newest state.
//!
//! A model that keeps state inside (an FMU's internal discrete variables,
//! which change at its events) is carried too: each frame record holds the
//! fast side's inner-event count, and a restart whose count differs from
//! this side's (or that follows a disagreement) takes the fast side's
//! newest export of that state when its count is the record's, else goes
//! back to this side's own checkpoint of it when its own path is the
//! world's; when neither can be done the restart is counted and this
//! side's results are marked as of another path ([`UNSYNCED`]), which the
//! fast side does not take, until a restart that can. A count that
//! disagrees with the one sent for a frame is a disagreement as the modes'
//! is. Taking an export runs the model's own deserialization, which for an
//! FMU allocates and frees the state it reads (the FMU's code, not this
//! side's).
//!
//! Time is counted in frames; seconds are derived from frame numbers,
//! never accumulated. Nothing is allocated after [`ImplicitSide::new`].

use std::sync::Arc;

use tandem_models::{Definition, MajorStep, Model, StateRef};

use super::clock::{nanos, Nanos};
use super::exchange::{FrameReceiver, FrameRecord, InnerReader, RecordShape, ResultPublisher, UNSYNCED};
use super::extrapolate::InputHistory;
use super::flow::FrameFlow;
use super::hybrid::Boundary;
use super::matrix::MatrixPublisher;
use super::metrics::Metrics;
use super::placement::place_current_thread;
use super::retune::ImplicitRetunes;
use super::settings::{Extrapolation, ImplicitSolver, Placement, TandemSettings};
use crate::bdf::helpers::ThreadSetup;
use crate::bdf::jacobian::{Increments, Jacobian};
use crate::bdf::{Bdf, BdfError, BdfOptions, Tolerance};
use crate::events::locator::{EventLocator, SettleError};
use crate::implicit::{FixedImplicit, ImplicitSettings};
use crate::ode::{ModelOde, OdeSystem};
use crate::rates::FrameRates;
use crate::step::FixedStepper;

/// BDF steps allowed per frame of a macro step: a sound step needs a few;
/// more means the state is one the model cannot step from, and the side
/// restarts from the fast thread's state instead of stepping forever.
pub const MAX_STEPS_PER_FRAME: u32 = 500;

/// Frames whose modes the side keeps to compare with its own: it may lag
/// the fast thread by this much and still check each macro step's start.
const MODE_HISTORY: usize = 64;

/// What one call of [`ImplicitSide::try_step`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepOutcome {
    /// A step was taken (or an iteration matrix prepared); it waits in the
    /// publishers' buffers.
    Stepped,
    /// The next step is beyond the lead, or the side waits for a frame
    /// newer than the one its last step failed from.
    Waiting,
    /// The step failed; the side restarted from the fast state.
    Failed,
    /// The side's modes disagreed with the fast thread's; it restarted
    /// from the fast state without a result.
    Resynced,
}

enum Integrator {
    Bdf(Box<Bdf>),
    Fixed(Box<FixedImplicit>),
}

impl Integrator {
    /// Its Jacobian.
    fn jacobian_mut(&mut self) -> &mut Jacobian {
        match self {
            Integrator::Bdf(bdf) => bdf.jacobian_mut(),
            Integrator::Fixed(fixed) => fixed.jacobian_mut(),
        }
    }
}

/// Why a macro step produced no result.
enum Interrupted {
    /// The integrator failed (Newton did not converge, or the BDF gave
    /// up); the failure is counted, not kept.
    Failed,
    /// The side's modes at the step's first frame are not the fast
    /// thread's.
    Disagreed,
}

/// The modes and inner-event counts of the frames the fast thread sent,
/// newest last, in a ring.
struct SentModes {
    frames: Vec<u64>,
    modes: Vec<f64>,
    inner_events: Vec<u64>,
    /// Modes per frame.
    width: usize,
}

impl SentModes {
    fn new(width: usize) -> Self {
        SentModes {
            frames: vec![u64::MAX; MODE_HISTORY],
            modes: vec![0.0; MODE_HISTORY * width],
            inner_events: vec![0; MODE_HISTORY],
            width,
        }
    }

    fn push(&mut self, frame: u64, xd: &[f64], where_modes: &[usize], inner_events: u64) {
        let slot = (frame % MODE_HISTORY as u64) as usize;
        self.frames[slot] = frame;
        self.inner_events[slot] = inner_events;
        for (m, &i) in self.modes[slot * self.width..(slot + 1) * self.width]
            .iter_mut()
            .zip(where_modes)
        {
            *m = xd[i];
        }
    }

    /// The modes and the inner-event count sent for `frame`, if still kept.
    fn get(&self, frame: u64) -> Option<(&[f64], u64)> {
        let slot = (frame % MODE_HISTORY as u64) as usize;
        (self.frames[slot] == frame).then(|| {
            (
                &self.modes[slot * self.width..(slot + 1) * self.width],
                self.inner_events[slot],
            )
        })
    }
}

/// The implicit side of a tandem run.
pub struct ImplicitSide {
    model: Box<dyn Model>,
    /// None: the side only prepares iteration matrices.
    integrator: Option<Integrator>,
    frame: f64,
    frame_ns: Nanos,
    macro_frames: u64,
    lead_frames: u64,
    max_lag_frames: u64,
    receiver: FrameReceiver,
    history: InputHistory,
    newest: FrameRecord,
    incoming: FrameRecord,
    have_frame: bool,
    /// The state has been taken from a frame at least once.
    synced: bool,
    /// The integrator's history is valid (false after a restart).
    started: bool,
    /// The state is frame `k`'s after its major step (taken from the fast
    /// thread), not before it.
    past_major: bool,
    /// After a failed step: no step until a frame newer than this one.
    failed_at: Option<u64>,
    /// The frame of the state, and the state (before that frame's major
    /// step, unless `past_major`).
    k: u64,
    x: Vec<f64>,
    xd: Vec<f64>,
    u: Vec<f64>,
    /// Outputs of the major steps (not sent anywhere).
    y: Vec<f64>,
    rates: FrameRates,
    hits: Vec<bool>,
    /// The inputs the integrator's history was built with.
    u_integrated: Vec<f64>,
    /// The inputs predicted by holding them: their changes are steps.
    stepwise: Vec<usize>,
    locator: EventLocator,
    boundary: Boundary,
    flow: FrameFlow,
    sent_modes: SentModes,
    /// The fast side's exports of the model's inner state, when it makes
    /// them.
    inner: Option<InnerReader>,
    /// The model's inner state is the fast side's path's (else its results
    /// are marked [`UNSYNCED`]).
    inner_synced: bool,
    publisher: Option<ResultPublisher>,
    /// A result waits in the publisher's buffer.
    result_pending: bool,
    matrices: Option<MatrixPublisher>,
    matrix_interval: u64,
    /// The frame whose state the newest matrix was prepared at.
    matrix_frame: Option<u64>,
    metrics: Arc<Metrics>,
    retunes: Option<ImplicitRetunes>,
}

/// The BDF error a failed step reports, for tests.
pub type ImplicitError = BdfError;

/// The channels an implicit side works through.
pub struct ImplicitParts {
    /// The model instance of this thread.
    pub model: Box<dyn Model>,
    /// The model's discrete rates on the frame grid.
    pub rates: FrameRates,
    /// Frames from the fast thread.
    pub receiver: FrameReceiver,
    /// Where results go; none when the side only prepares matrices.
    pub publisher: Option<ResultPublisher>,
    /// The fast side's exports of the model's inner state, when the model
    /// makes them.
    pub inner: Option<InnerReader>,
    /// Where iteration matrices go, when the fast side needs them.
    pub matrices: Option<MatrixPublisher>,
    /// How each input is predicted beyond its newest sample.
    pub extrapolation: Vec<Extrapolation>,
    /// Where to count.
    pub metrics: Arc<Metrics>,
    /// Parameter changes the fast thread has applied, to follow.
    pub retunes: Option<ImplicitRetunes>,
}

impl ImplicitSide {
    /// Builds the implicit side from `parts`.
    pub fn new(settings: &TandemSettings, parts: ImplicitParts) -> Result<Self, BdfError> {
        let ImplicitParts {
            model,
            rates,
            receiver,
            publisher,
            inner,
            matrices,
            extrapolation,
            metrics,
            retunes,
        } = parts;
        let s = &settings.implicit;
        let layout = model.layout();
        let shape = RecordShape {
            inputs: layout.inputs.len(),
            states: layout.states.len(),
            discrete: layout.discrete,
        };
        let n = shape.states;
        let integrator = match (&publisher, s.solver) {
            (None, _) => None,
            (Some(_), ImplicitSolver::Bdf) => {
                // A plant's states at rest are 0, with amperes and volts
                // among them: CVODE's increments would lose their columns.
                let options = BdfOptions {
                    rtol: s.rtol,
                    atol: Tolerance::Scalar(s.atol),
                    increments: Increments::Unit,
                    linear_solver: s.linear_solver,
                    ..BdfOptions::default()
                };
                Some(Integrator::Bdf(Box::new(Bdf::new(n, options, model.sparsity())?)))
            }
            (Some(_), ImplicitSolver::Fixed(method)) => Some(Integrator::Fixed(Box::new(FixedImplicit::new(
                n,
                ImplicitSettings {
                    method,
                    max_iterations: s.max_newton,
                    rtol: s.rtol,
                    atol: s.atol,
                    increments: Increments::Unit,
                    linear_solver: s.linear_solver,
                },
                model.sparsity(),
            )))),
        };
        let (macro_frames, lead_frames, max_lag_frames) = (
            settings.in_frames(s.macro_step).max(1),
            settings.in_frames(s.lead),
            settings.in_frames(s.max_lag),
        );
        let history_frames = (max_lag_frames + lead_frames) as usize + 8;
        let stepwise = (extrapolation.iter().enumerate())
            .filter(|(_, e)| **e == Extrapolation::Hold)
            .map(|(i, _)| i)
            .collect();
        let events = settings.events;
        Ok(ImplicitSide {
            integrator,
            frame: settings.frame,
            frame_ns: nanos(settings.frame),
            macro_frames,
            lead_frames,
            max_lag_frames,
            receiver,
            history: InputHistory::new(history_frames, extrapolation),
            newest: FrameRecord::new(shape),
            incoming: FrameRecord::new(shape),
            have_frame: false,
            synced: false,
            started: false,
            past_major: false,
            failed_at: None,
            k: 0,
            x: vec![0.0; n],
            xd: vec![0.0; shape.discrete],
            u: vec![0.0; shape.inputs],
            y: vec![0.0; layout.outputs.len()],
            hits: vec![false; rates.len()],
            rates,
            u_integrated: vec![0.0; shape.inputs],
            stepwise,
            locator: EventLocator::new(layout, events.locator_settings(), events.max_per_frame),
            boundary: Boundary::new(n, shape.discrete),
            flow: FrameFlow::new(n),
            sent_modes: SentModes::new(layout.modes.len()),
            inner,
            inner_synced: true,
            publisher,
            result_pending: false,
            matrices,
            matrix_interval: u64::from(settings.fast.matrix_interval),
            matrix_frame: None,
            metrics,
            model,
            retunes,
        })
    }

    /// Spreads the difference Jacobians of its integrator and of the fast
    /// side's iteration matrices over one helper thread per core in
    /// `cores`, each pinned there at `priority` (see
    /// [`Jacobian::spread`]); returns how many helpers each has.
    pub fn spread_jacobians(&mut self, cores: &[usize], priority: u8) -> std::io::Result<usize> {
        if cores.is_empty() {
            return Ok(0);
        }
        let cores: Vec<Option<usize>> = cores.iter().map(|&c| Some(c)).collect();
        let setup: ThreadSetup = Arc::new(move |core| {
            // A refusal leaves the helper unpinned or at normal priority:
            // slower, not wrong; the preflight reports the cores.
            let _ = place_current_thread(Placement { core, priority });
        });
        let jacobians = self
            .integrator
            .as_mut()
            .map(Integrator::jacobian_mut)
            .into_iter()
            .chain(self.matrices.as_mut().map(MatrixPublisher::jacobian_mut));
        let mut helpers = 0;
        for jacobian in jacobians {
            helpers = helpers.max(jacobian.spread(self.model.as_ref(), &cores, &setup)?);
        }
        Ok(helpers)
    }

    /// The metrics it writes, for its driver to add compute times.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The frame whose record the next step waits for (the implicit thread
    /// sleeps until that frame should have been sent).
    pub fn awaited_frame(&self) -> u64 {
        if self.integrator.is_none() {
            return self.matrix_frame.map_or(0, |f| f + self.matrix_interval);
        }
        if let Some(failed) = self.failed_at {
            return failed + 1;
        }
        (self.k + self.macro_frames).saturating_sub(self.lead_frames)
    }

    /// The frame of the implicit state.
    pub fn frame(&self) -> u64 {
        self.k
    }

    /// Takes every frame the fast thread has sent.
    fn receive(&mut self) {
        while self.receiver.receive(&mut self.incoming) {
            self.history.push(self.incoming.u_time, &self.incoming.u);
            let incoming = &self.incoming;
            let modes = &self.model.layout().modes;
            self.sent_modes
                .push(incoming.frame, &incoming.xd, modes, incoming.inner_events);
            std::mem::swap(&mut self.newest, &mut self.incoming);
            self.have_frame = true;
        }
    }

    /// Restarts from the newest frame's state (taken after that frame's
    /// major step), the model's inner state with it; `disagreed`: this
    /// side's events were found not to be the fast side's.
    fn resync(&mut self, disagreed: bool) {
        // The export may be of a record sent since the frames were taken:
        // then the newest frames are taken, and the newest record tried.
        let synced = self.sync_inner(disagreed) || {
            self.receive();
            self.sync_inner(disagreed)
        };
        if !synced {
            self.metrics.inner_unsynced.increment();
            self.inner_synced = false;
        }
        self.k = self.newest.frame;
        self.x.copy_from_slice(&self.newest.x);
        self.xd.copy_from_slice(&self.newest.xd);
        self.past_major = true;
        if let Some(Integrator::Fixed(f)) = &mut self.integrator {
            f.reset();
        }
        self.started = false;
    }

    /// Brings the model's inner state to the newest frame's (see the
    /// module documentation); false when it could not.
    fn sync_inner(&mut self, disagreed: bool) -> bool {
        let wanted = self.newest.inner_events;
        let counts_agree = self.inner_synced && self.model.inner_events() == wanted;
        if counts_agree && !disagreed {
            return true;
        }
        let export = self.inner.as_mut().map(InnerReader::latest);
        if let Some(export) = export.filter(|e| e.events == wanted) {
            if self.model.import_inner(&export.bytes, wanted) {
                self.metrics.inner_imports.increment();
                self.inner_synced = true;
                return true;
            }
        }
        // Else nothing better than this side's own inner state, or its
        // checkpoint of that count, when its own path is the world's.
        counts_agree || (self.inner_synced && !disagreed && self.model.restore_inner(wanted))
    }

    /// Prepares the iteration matrix at the newest frame's state when one
    /// is due; returns whether it did.
    fn prepare_matrix(&mut self) -> bool {
        let Some(matrices) = self.matrices.as_mut().filter(|_| self.matrix_interval > 0) else {
            return false;
        };
        let frame = self.newest.frame;
        if self.matrix_frame.is_some_and(|m| frame < m + self.matrix_interval) {
            return false;
        }
        let r = &self.newest;
        let t = frame as f64 * self.frame;
        // A matrix that cannot be factored is not published: the fast side
        // keeps the one it has.
        if matrices
            .prepare(
                self.model.as_mut(),
                frame,
                StateRef {
                    t,
                    x: &r.x,
                    xd: &r.xd,
                    u: &r.u,
                },
            )
            .is_ok()
        {
            self.metrics.matrix_updates.increment();
        }
        self.matrix_frame = Some(frame);
        true
    }

    /// What to report when there is no step to take: a matrix prepared,
    /// or waiting.
    fn idle(&mut self) -> StepOutcome {
        if self.prepare_matrix() {
            StepOutcome::Stepped
        } else {
            StepOutcome::Waiting
        }
    }

    /// Takes the next macro step if the frames allow it (and prepares an
    /// iteration matrix when one is due).
    pub fn try_step(&mut self) -> StepOutcome {
        self.receive();
        if !self.have_frame {
            return StepOutcome::Waiting;
        }
        let newest = self.newest.frame;
        if let Some(r) = &mut self.retunes {
            let (integrator, matrices) = (&mut self.integrator, &mut self.matrices);
            let helpers_first = |definition: &Definition| {
                if let Some(i) = integrator.as_mut() {
                    i.jacobian_mut().swap_definition(definition);
                }
                if let Some(m) = matrices.as_mut() {
                    m.jacobian_mut().swap_definition(definition);
                }
            };
            if r.apply(newest, self.model.as_mut(), helpers_first) && self.synced {
                // The new definition starts from the frame it applies at.
                self.resync(false);
            }
        }
        if self.integrator.is_none() || self.failed_at.is_some_and(|f| newest <= f) {
            return self.idle();
        }
        self.failed_at = None;
        if self.synced {
            self.metrics.implicit_lag.record(newest.saturating_sub(self.k) as f64);
        }
        if !self.synced {
            self.resync(false);
            self.synced = true;
        } else if newest > self.k + self.max_lag_frames {
            self.metrics.resyncs.increment();
            self.resync(false);
        }
        let target = self.k + self.macro_frames;
        if target > newest + self.lead_frames {
            return self.idle();
        }
        match self.advance(target) {
            Ok(()) if self.x.iter().all(|v| v.is_finite()) => {
                self.metrics.implicit_steps.increment();
                self.prepare_matrix();
                StepOutcome::Stepped
            }
            Err(Interrupted::Disagreed) => {
                self.metrics.event_resyncs.increment();
                self.result_pending = false;
                self.resync(true);
                StepOutcome::Resynced
            }
            _ => {
                self.metrics.implicit_failures.increment();
                self.result_pending = false;
                // The same state would fail the same way: wait for a newer
                // one.
                self.failed_at = Some(newest);
                self.resync(false);
                StepOutcome::Failed
            }
        }
    }

    /// Integrates from frame `k` to frame `target`, frame by frame (each
    /// with its major step and its events), writing the result into the
    /// publisher's buffer.
    fn advance(&mut self, target: u64) -> Result<(), Interrupted> {
        if self.publisher.is_none() || self.integrator.is_none() {
            return Ok(());
        }
        let k0 = self.k;
        let t0 = k0 as f64 * self.frame;
        let mut extrapolated = self.history.value_at(k0 as Nanos * self.frame_ns, &mut self.u);
        self.write_start(k0, t0);
        let inner_before = self.model.inner_events();
        let mut smooth = true;
        let before = self.newton_iterations();
        for j in k0..target {
            let (tj, tj1) = (j as f64 * self.frame, (j + 1) as f64 * self.frame);
            if j > k0 {
                extrapolated |= self.history.value_at(j as Nanos * self.frame_ns, &mut self.u);
            }
            if !std::mem::take(&mut self.past_major) {
                self.rates.hits(j, &mut self.hits);
                let mut step = MajorStep {
                    t: tj,
                    x: &mut self.x,
                    xd: &mut self.xd,
                    u: &self.u,
                    hits: &self.hits,
                    y: &mut self.y,
                };
                let counts = &self.metrics.implicit_events;
                let changed = self
                    .boundary
                    .major_step(self.model.as_mut(), &mut self.locator, &mut step, counts);
                if changed {
                    // A discontinuity the integrator's history must not
                    // straddle.
                    self.restart();
                    smooth = false;
                }
            }
            if j == k0 && !self.agrees_with_fast(j) {
                return Err(Interrupted::Disagreed);
            }
            let events = self.integrate_frame(tj, tj1).map_err(|_| Interrupted::Failed)?;
            smooth &= events == 0;
        }
        // An event that changed only the model's inner state is a
        // discontinuity too.
        smooth &= self.model.inner_events() == inner_before;
        let newton = self.newton_iterations() - before;
        self.k = target;
        if extrapolated {
            self.metrics.extrapolated_inputs.increment();
        }
        self.metrics.newton.record(newton as f64);
        self.write_end(target, smooth);
        self.result_pending = true;
        Ok(())
    }

    /// Newton iterations of the integrator so far.
    fn newton_iterations(&self) -> u64 {
        match &self.integrator {
            Some(Integrator::Bdf(bdf)) => bdf.stats().newton_iterations,
            Some(Integrator::Fixed(fixed)) => fixed.stats().newton_iterations,
            None => 0,
        }
    }

    /// Whether this side's modes at frame `j` (after its major step) are
    /// those the fast thread sent for it, and so is its model's
    /// inner-event count when its inner state is the fast side's path
    /// (true when the fast thread's are no longer kept).
    fn agrees_with_fast(&self, j: u64) -> bool {
        let modes = &self.model.layout().modes;
        match self.sent_modes.get(j) {
            Some((sent, inner_events)) => {
                let own = modes.iter().map(|&i| self.xd[i]);
                own.zip(sent).all(|(a, &b)| a == b) && (!self.inner_synced || self.model.inner_events() == inner_events)
            }
            None => true,
        }
    }

    /// The integrator starts afresh at the next frame.
    fn restart(&mut self) {
        self.started = false;
        if let Some(Integrator::Fixed(f)) = &mut self.integrator {
            f.reset();
        }
    }

    /// The start of the result: frame `k0`'s state (before its major step)
    /// and derivative.
    fn write_start(&mut self, k0: u64, t0: f64) {
        let Some(publisher) = self.publisher.as_mut() else {
            return;
        };
        let out = publisher.buffer();
        out.k0 = k0;
        out.step.t0 = t0;
        out.step.x0.copy_from_slice(&self.x);
        let mut ode = ModelOde {
            model: self.model.as_mut(),
            xd: &self.xd,
            u: &self.u,
        };
        ode.rhs(t0, &self.x, &mut out.step.f0);
    }

    /// The end of the result: frame `k1`'s state, derivative and discrete
    /// state, and whether the polynomial holds inside.
    fn write_end(&mut self, k1: u64, smooth: bool) {
        let Some(publisher) = self.publisher.as_mut() else {
            return;
        };
        let t1 = k1 as f64 * self.frame;
        let out = publisher.buffer();
        out.k1 = k1;
        out.step.t1 = t1;
        out.smooth = smooth;
        out.step.x1.copy_from_slice(&self.x);
        out.xd1.copy_from_slice(&self.xd);
        out.inner1 = if self.inner_synced {
            self.model.inner_events()
        } else {
            UNSYNCED
        };
        let mut ode = ModelOde {
            model: self.model.as_mut(),
            xd: &self.xd,
            u: &self.u,
        };
        ode.rhs(t1, &self.x, &mut out.step.f1);
    }

    /// Integrates one frame from `tj` to `tj1` with the inputs held,
    /// locating and handling the events inside; returns how many there
    /// were.
    fn integrate_frame(&mut self, tj: f64, tj1: f64) -> Result<u32, BdfError> {
        // Inputs are held over a frame. Where a stepwise input (one
        // predicted by holding it) changes, `f` jumps, and the
        // integrator's history no longer describes the solution: it
        // restarts there rather than shrinking its steps (and failing its
        // Newton iterations) through the jump. The small per-frame steps
        // of smooth inputs stay within its error control.
        let jumped = self.stepwise.iter().any(|&i| self.u[i] != self.u_integrated[i]);
        if jumped {
            self.restart();
        }
        if !self.started {
            self.u_integrated.copy_from_slice(&self.u);
        }
        match self.integrator.as_mut() {
            Some(Integrator::Bdf(bdf)) => {
                let mut bdf_events = BdfFrame {
                    model: self.model.as_mut(),
                    locator: &mut self.locator,
                    x: &mut self.x,
                    xd: &mut self.xd,
                    u: &self.u,
                    metrics: &self.metrics,
                };
                let events = bdf_events.run(bdf, tj, tj1, !self.started)?;
                self.started = true;
                Ok(events)
            }
            Some(Integrator::Fixed(fixed)) => {
                let mut converged = true;
                let mut step = |model: &mut dyn Model, t: f64, h: f64, x: &mut [f64], xd: &[f64], u: &[f64]| {
                    let mut ode = ModelOde { model, xd, u };
                    converged &= fixed.step(&mut ode, t, h, x).converged;
                };
                let (_, flowed) = self.flow.run(
                    self.model.as_mut(),
                    &mut self.locator,
                    &mut step,
                    (tj, self.frame, tj1),
                    &mut self.x,
                    &mut self.xd,
                    &self.u,
                    Some(&self.metrics.implicit_events),
                );
                self.started = true;
                if !converged {
                    return Err(BdfError::Convergence {
                        t: tj,
                        h: tj1 - tj,
                        failures: 1,
                    });
                }
                if flowed.events > 0 {
                    fixed.reset();
                }
                Ok(flowed.events)
            }
            None => Ok(0),
        }
    }

    /// Publishes the result of the last step and the matrix prepared with
    /// it, stamped `now`.
    pub fn publish(&mut self, now: Nanos) {
        if let Some(publisher) = self.publisher.as_mut().filter(|_| self.result_pending) {
            publisher.publish(now);
            self.result_pending = false;
        }
        if let Some(matrices) = &mut self.matrices {
            matrices.publish();
        }
    }
}

/// One frame of the BDF with the model's events: what it borrows of the
/// side.
struct BdfFrame<'a> {
    model: &'a mut dyn Model,
    locator: &'a mut EventLocator,
    x: &'a mut [f64],
    xd: &'a mut [f64],
    u: &'a [f64],
    metrics: &'a Metrics,
}

impl BdfFrame<'_> {
    /// Steps the BDF from `tj` (starting it from `x` when `start`) until it
    /// lands on `tj1`; after each step, a crossing in it is located on the
    /// BDF's interpolating polynomial, handled (the event iteration) and
    /// the BDF restarted there, up to the locator's limit per frame (a
    /// crossing beyond it switches at the next frame boundary). Leaves the
    /// state at `tj1` in `x`; returns the events handled.
    fn run(&mut self, bdf: &mut Bdf, tj: f64, tj1: f64, start: bool) -> Result<u32, BdfError> {
        if start {
            self.init(bdf, tj, tj1);
        }
        self.locator.begin_step();
        let counts = &self.metrics.implicit_events;
        let mut checked = tj.max(bdf.t());
        let mut locating = self.locator.active();
        let mut events = 0;
        let mut steps = 0;
        // Steps since the BDF last started (before this frame: some).
        let mut since_start = u32::from(!start);
        loop {
            if locating && bdf.t() > checked {
                let end = bdf.t();
                self.x.copy_from_slice(bdf.y());
                let s = StateRef {
                    t: end,
                    x: self.x,
                    xd: self.xd,
                    u: self.u,
                };
                let at_end = self.locator.distance(self.model, s);
                if at_end < 0.0 {
                    let mut on_polynomial = |_: &mut dyn Model, t: f64, x: &mut [f64]| bdf.interpolate(t, x);
                    let te = self.locator.locate(
                        self.model,
                        &mut on_polynomial,
                        checked,
                        end,
                        at_end,
                        self.x,
                        self.xd,
                        self.u,
                    );
                    if self.locator.admit(te).is_ok() {
                        events += 1;
                        counts.located.increment();
                        if let Err(SettleError::Storm { .. }) =
                            self.locator.settle(self.model, te, self.x, self.xd, self.u)
                        {
                            counts.storms.increment();
                        }
                        self.init(bdf, te, tj1);
                        since_start = 0;
                        checked = te;
                        continue;
                    }
                    // Past the limit: the mode switches at the frame's end.
                    counts.deferred.increment();
                    locating = false;
                } else {
                    checked = end;
                }
            }
            if bdf.t() >= tj1 {
                break;
            }
            if steps == MAX_STEPS_PER_FRAME {
                return Err(BdfError::TooMuchWork {
                    t: tj,
                    target: tj1,
                    steps,
                });
            }
            let mut ode = ModelOde {
                model: &mut *self.model,
                xd: self.xd,
                u: self.u,
            };
            match bdf.step(&mut ode, tj1) {
                Ok(()) => since_start += 1,
                // A discontinuity the history straddles (inputs held per
                // frame jump at its boundary; at tight tolerances the error
                // test fails there): start again from the last state.
                Err(_) if since_start > 0 => {
                    self.x.copy_from_slice(bdf.y());
                    let t = bdf.t();
                    self.init(bdf, t, tj1);
                    since_start = 0;
                }
                Err(e) => return Err(e),
            }
            steps += 1;
        }
        self.x.copy_from_slice(bdf.y());
        Ok(events)
    }

    /// Starts the BDF from `x` at `t`, aiming at `t_out`.
    fn init(&mut self, bdf: &mut Bdf, t: f64, t_out: f64) {
        let mut ode = ModelOde {
            model: &mut *self.model,
            xd: self.xd,
            u: self.u,
        };
        bdf.init(&mut ode, t, self.x, t_out);
    }
}
