//! The implicit thread's work: integrate the same model with the BDF (or a
//! fixed-step implicit method) a macro step at a time, at most `lead` ahead
//! of the fast thread's newest frame, with inputs from the frames' history
//! (extrapolated beyond it, each input by its own order), and publish each
//! result with its Hermite polynomial. When the fast thread steps with a
//! linearly implicit method, it also prepares that method's iteration
//! matrix at the newest frame's state every `matrix_interval` frames (under
//! the `explicit` policy that is all it does). Nothing is allocated after
//! [`ImplicitSide::new`].

use std::sync::Arc;

use tandem_models::Model;

use super::clock::Nanos;
use super::exchange::{FrameReceiver, FrameRecord, RecordShape, ResultPublisher};
use super::extrapolate::InputHistory;
use super::matrix::MatrixPublisher;
use super::metrics::Metrics;
use super::retune::ImplicitRetunes;
use super::settings::{Extrapolation, ImplicitSolver, TandemSettings};
use crate::bdf::jacobian::Increments;
use crate::bdf::{Bdf, BdfError, BdfOptions, Tolerance};
use crate::implicit::{FixedImplicit, ImplicitSettings};
use crate::ode::{ModelOde, OdeSystem};

/// BDF steps allowed per frame of a macro step: a sound step needs a few;
/// more means the state is one the model cannot step from, and the side
/// restarts from the fast thread's state instead of stepping forever.
pub const MAX_STEPS_PER_FRAME: u32 = 500;

/// What one call of [`ImplicitSide::try_step`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepOutcome {
    /// A step was taken (or an iteration matrix prepared); it waits in the
    /// publishers' buffers.
    Stepped,
    /// The next step is beyond the lead: wait for newer frames.
    Waiting,
    /// The step failed; the integrator restarted from the fast state.
    Failed,
}

enum Integrator {
    Bdf(Box<Bdf>),
    Fixed(Box<FixedImplicit>),
}

/// The implicit side of a tandem run.
pub struct ImplicitSide {
    model: Box<dyn Model>,
    /// None: the side only prepares iteration matrices.
    integrator: Option<Integrator>,
    frame: f64,
    macro_step: f64,
    lead: f64,
    max_lag: f64,
    receiver: FrameReceiver,
    history: InputHistory,
    newest: FrameRecord,
    incoming: FrameRecord,
    have_frame: bool,
    /// The state has been taken from a frame at least once.
    synced: bool,
    /// The BDF's history is valid (false after a restart).
    started: bool,
    /// State time and state.
    t: f64,
    x: Vec<f64>,
    xd: Vec<f64>,
    u: Vec<f64>,
    /// The inputs the BDF's history was built with.
    u_integrated: Vec<f64>,
    /// The inputs predicted by holding them: their changes are steps.
    stepwise: Vec<usize>,
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
    /// Frames from the fast thread.
    pub receiver: FrameReceiver,
    /// Where results go; none when the side only prepares matrices.
    pub publisher: Option<ResultPublisher>,
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
            receiver,
            publisher,
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
                },
                model.sparsity(),
            )))),
        };
        let history_frames = ((s.max_lag + s.lead) / settings.frame).ceil() as usize + 8;
        let stepwise = (extrapolation.iter().enumerate())
            .filter(|(_, e)| **e == Extrapolation::Hold)
            .map(|(i, _)| i)
            .collect();
        Ok(ImplicitSide {
            integrator,
            frame: settings.frame,
            macro_step: s.macro_step,
            lead: s.lead,
            max_lag: s.max_lag,
            receiver,
            history: InputHistory::new(history_frames, extrapolation),
            newest: FrameRecord::new(shape),
            incoming: FrameRecord::new(shape),
            have_frame: false,
            synced: false,
            started: false,
            t: 0.0,
            x: vec![0.0; n],
            xd: vec![0.0; shape.discrete],
            u: vec![0.0; shape.inputs],
            u_integrated: vec![0.0; shape.inputs],
            stepwise,
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

    /// The metrics it writes, for its driver to add compute times.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Time of the frame whose record the next step waits for (the
    /// implicit thread sleeps until then).
    pub fn awaited_frame(&self) -> f64 {
        if self.integrator.is_none() {
            let next = self.matrix_frame.map_or(0, |f| f + self.matrix_interval);
            return next as f64 * self.frame;
        }
        self.t + self.macro_step - self.lead
    }

    /// Time of the implicit state.
    pub fn time(&self) -> f64 {
        self.t
    }

    /// Takes every frame the fast thread has sent.
    fn receive(&mut self) {
        while self.receiver.receive(&mut self.incoming) {
            self.history.push(self.incoming.u_time, &self.incoming.u);
            std::mem::swap(&mut self.newest, &mut self.incoming);
            self.have_frame = true;
        }
    }

    /// Restarts from the newest frame's state.
    fn resync(&mut self) {
        self.t = self.newest.t;
        self.x.copy_from_slice(&self.newest.x);
        self.xd.copy_from_slice(&self.newest.xd);
        if let Some(Integrator::Fixed(f)) = &mut self.integrator {
            f.reset();
        }
        self.started = false;
    }

    /// Prepares the iteration matrix at the newest frame's state when one
    /// is due; returns whether it did.
    fn prepare_matrix(&mut self) -> bool {
        let Some(matrices) = self.matrices.as_mut().filter(|_| self.matrix_interval > 0) else {
            return false;
        };
        let frame = (self.newest.t / self.frame).round() as u64;
        if self.matrix_frame.is_some_and(|m| frame < m + self.matrix_interval) {
            return false;
        }
        let r = &self.newest;
        // A matrix that cannot be factored is not published: the fast side
        // keeps the one it has.
        if matrices
            .prepare(self.model.as_mut(), frame, r.t, &r.x, &r.xd, &r.u)
            .is_ok()
        {
            self.metrics.matrix_updates.increment();
        }
        self.matrix_frame = Some(frame);
        true
    }

    /// Takes the next macro step if the frames allow it (and prepares an
    /// iteration matrix when one is due).
    pub fn try_step(&mut self) -> StepOutcome {
        self.receive();
        if !self.have_frame {
            return StepOutcome::Waiting;
        }
        if let Some(r) = &mut self.retunes {
            let newest = (self.newest.t / self.frame).round() as u64;
            if r.apply(newest, self.model.as_mut()) && self.synced {
                // The new definition starts from the frame it applies at.
                self.resync();
            }
        }
        if self.integrator.is_none() {
            return if self.prepare_matrix() {
                StepOutcome::Stepped
            } else {
                StepOutcome::Waiting
            };
        }
        if self.synced {
            let lag = (self.newest.t - self.t) / self.frame;
            self.metrics.implicit_lag.record(lag.max(0.0));
        }
        if !self.synced {
            self.resync();
            self.synced = true;
        } else if self.newest.t - self.t > self.max_lag + 1e-9 {
            self.metrics.resyncs.increment();
            self.resync();
        }
        // Discrete states are the fast thread's; the newest are held.
        self.xd.copy_from_slice(&self.newest.xd);
        let target = self.t + self.macro_step;
        if target - self.lead > self.newest.t + 1e-9 {
            return if self.prepare_matrix() {
                StepOutcome::Stepped
            } else {
                StepOutcome::Waiting
            };
        }
        match self.advance(target) {
            Ok(()) if self.x.iter().all(|v| v.is_finite()) => {
                self.metrics.implicit_steps.increment();
                self.prepare_matrix();
                StepOutcome::Stepped
            }
            _ => {
                self.metrics.implicit_failures.increment();
                self.result_pending = false;
                self.resync();
                StepOutcome::Failed
            }
        }
    }

    /// Integrates from `t` to `target`, writing the result's polynomial
    /// into the publisher's buffer.
    fn advance(&mut self, target: f64) -> Result<(), BdfError> {
        let (Some(integrator), Some(publisher)) = (&mut self.integrator, &mut self.publisher) else {
            return Ok(());
        };
        let t0 = self.t;
        let mut extrapolated = self.history.value_at(t0, &mut self.u);
        {
            let out = publisher.buffer();
            out.t0 = t0;
            out.x0.copy_from_slice(&self.x);
            let mut ode = ModelOde {
                model: self.model.as_mut(),
                xd: &self.xd,
                u: &self.u,
            };
            ode.rhs(t0, &self.x, &mut out.f0);
        }
        let newton = match integrator {
            Integrator::Fixed(fixed) => {
                let mut ode = ModelOde {
                    model: self.model.as_mut(),
                    xd: &self.xd,
                    u: &self.u,
                };
                let report = fixed.step(&mut ode, t0, target - t0, &mut self.x);
                if !report.converged {
                    return Err(BdfError::Convergence {
                        t: t0,
                        h: target - t0,
                        failures: 1,
                    });
                }
                report.iterations as u64
            }
            Integrator::Bdf(bdf) => {
                let before = bdf.stats().newton_iterations;
                let frames = ((target - t0) / self.frame).round().max(1.0) as u64;
                for i in 0..frames {
                    let (a, b) = (t0 + i as f64 * self.frame, t0 + (i + 1) as f64 * self.frame);
                    if i > 0 {
                        extrapolated |= self.history.value_at(a, &mut self.u);
                    }
                    // Inputs are held over a frame. Where a stepwise input
                    // (one predicted by holding it) changes, `f` jumps, and
                    // the BDF's history no longer describes the solution:
                    // it restarts there rather than shrinking its steps (and
                    // failing its Newton iterations) through the jump. The
                    // small per-frame steps of smooth inputs stay within its
                    // error control.
                    let jumped = self.stepwise.iter().any(|&i| self.u[i] != self.u_integrated[i]);
                    if self.started && jumped {
                        self.x.copy_from_slice(bdf.y());
                    }
                    let mut ode = ModelOde {
                        model: self.model.as_mut(),
                        xd: &self.xd,
                        u: &self.u,
                    };
                    if !self.started || jumped {
                        bdf.init(&mut ode, a, &self.x, b);
                        self.started = true;
                        self.u_integrated.copy_from_slice(&self.u);
                    }
                    let mut steps = 0;
                    while bdf.t() < b {
                        if steps == MAX_STEPS_PER_FRAME {
                            return Err(BdfError::TooMuchWork { t: a, target: b, steps });
                        }
                        bdf.step(&mut ode, b)?;
                        steps += 1;
                    }
                }
                self.x.copy_from_slice(bdf.y());
                bdf.stats().newton_iterations - before
            }
        };
        self.started = true;
        self.t = target;
        if extrapolated {
            self.metrics.extrapolated_inputs.increment();
        }
        self.metrics.newton.record(newton as f64);
        self.result_pending = true;
        let out = publisher.buffer();
        out.t1 = target;
        out.x1.copy_from_slice(&self.x);
        let mut ode = ModelOde {
            model: self.model.as_mut(),
            xd: &self.xd,
            u: &self.u,
        };
        ode.rhs(target, &self.x, &mut out.f1);
        Ok(())
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
