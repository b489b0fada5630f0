//! The implicit thread's work: integrate the same model with the BDF (or a
//! fixed-step implicit method) a macro step at a time, at most `lead` ahead
//! of the fast thread's newest frame, with inputs from the frames' history
//! (extrapolated beyond it), and publish each result with its Hermite
//! polynomial. Nothing is allocated after [`ImplicitSide::new`].

use std::sync::Arc;

use tandem_models::Model;

use super::clock::Nanos;
use super::exchange::{FrameReceiver, FrameRecord, RecordShape, ResultPublisher};
use super::extrapolate::InputHistory;
use super::metrics::Metrics;
use super::settings::{ImplicitSolver, TandemSettings};
use crate::bdf::{Bdf, BdfError, BdfOptions, Tolerance};
use crate::implicit::{FixedImplicit, ImplicitSettings};
use crate::ode::{ModelOde, OdeSystem};

/// What one call of [`ImplicitSide::try_step`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepOutcome {
    /// A step was taken; its result waits in the publisher's buffer.
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
    integrator: Integrator,
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
    publisher: ResultPublisher,
    metrics: Arc<Metrics>,
}

/// The BDF error a failed step reports, for tests.
pub type ImplicitError = BdfError;

impl ImplicitSide {
    /// Builds the implicit side for `model` (an instance of its own).
    pub fn new(
        settings: &TandemSettings,
        model: Box<dyn Model>,
        receiver: FrameReceiver,
        publisher: ResultPublisher,
        metrics: Arc<Metrics>,
    ) -> Result<Self, BdfError> {
        let s = &settings.implicit;
        let layout = model.layout();
        let shape = RecordShape {
            inputs: layout.inputs.len(),
            states: layout.states.len(),
            discrete: layout.discrete,
        };
        let n = shape.states;
        let integrator = match s.solver {
            ImplicitSolver::Bdf => {
                let options = BdfOptions {
                    rtol: s.rtol,
                    atol: Tolerance::Scalar(s.atol),
                    ..BdfOptions::default()
                };
                Integrator::Bdf(Box::new(Bdf::new(n, options, model.sparsity())?))
            }
            ImplicitSolver::Fixed(method) => Integrator::Fixed(Box::new(FixedImplicit::new(
                n,
                ImplicitSettings {
                    method,
                    max_iterations: s.max_newton,
                    rtol: s.rtol,
                    atol: s.atol,
                },
                model.sparsity(),
            ))),
        };
        let history_frames = ((s.max_lag + s.lead) / settings.frame).ceil() as usize + 8;
        Ok(ImplicitSide {
            integrator,
            frame: settings.frame,
            macro_step: s.macro_step,
            lead: s.lead,
            max_lag: s.max_lag,
            receiver,
            history: InputHistory::new(shape.inputs, history_frames, s.extrapolation),
            newest: FrameRecord::new(shape),
            incoming: FrameRecord::new(shape),
            have_frame: false,
            synced: false,
            started: false,
            t: 0.0,
            x: vec![0.0; n],
            xd: vec![0.0; shape.discrete],
            u: vec![0.0; shape.inputs],
            publisher,
            metrics,
            model,
        })
    }

    /// The metrics it writes, for its driver to add compute times.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Time of the frame whose record the next step waits for (the
    /// implicit thread sleeps until then).
    pub fn awaited_frame(&self) -> f64 {
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
        if let Integrator::Fixed(f) = &mut self.integrator {
            f.reset();
        }
        self.started = false;
    }

    /// Takes the next macro step if the frames allow it.
    pub fn try_step(&mut self) -> StepOutcome {
        self.receive();
        if !self.have_frame {
            return StepOutcome::Waiting;
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
            return StepOutcome::Waiting;
        }
        match self.advance(target) {
            Ok(()) if self.x.iter().all(|v| v.is_finite()) => {
                self.metrics.implicit_steps.increment();
                StepOutcome::Stepped
            }
            _ => {
                self.metrics.implicit_failures.increment();
                self.resync();
                StepOutcome::Failed
            }
        }
    }

    /// Integrates from `t` to `target`, writing the result's polynomial
    /// into the publisher's buffer.
    fn advance(&mut self, target: f64) -> Result<(), BdfError> {
        let t0 = self.t;
        let mut extrapolated = self.history.value_at(t0, &mut self.u);
        {
            let out = self.publisher.buffer();
            out.t0 = t0;
            out.x0.copy_from_slice(&self.x);
            let mut ode = ModelOde {
                model: self.model.as_mut(),
                xd: &self.xd,
                u: &self.u,
            };
            ode.rhs(t0, &self.x, &mut out.f0);
        }
        let newton = match &mut self.integrator {
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
                    let mut ode = ModelOde {
                        model: self.model.as_mut(),
                        xd: &self.xd,
                        u: &self.u,
                    };
                    if !self.started {
                        bdf.init(&mut ode, a, &self.x, b);
                        self.started = true;
                    }
                    while bdf.t() < b {
                        bdf.step(&mut ode, b)?;
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
        let out = self.publisher.buffer();
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

    /// Publishes the result of the last step, stamped `now`.
    pub fn publish(&mut self, now: Nanos) {
        self.publisher.publish(now);
    }
}
