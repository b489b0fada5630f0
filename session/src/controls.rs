//! Changing a running session from a normal thread (a dashboard, a test):
//! a model input set to a value, a block parameter changed, a stop asked
//! for. Inputs are set through atomics the fast thread reads at the start
//! of each frame; parameters through the two-phase change of
//! [`tandem_runtime::tandem::retune`]. Nothing here blocks a real-time
//! thread.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde_json::Value;

use crate::fault::{FaultRequestError, FaultTrigger, Injected};
use tandem_models::{Model, RetuneError};
use tandem_runtime::tandem::inputs::InputSource;
use tandem_runtime::tandem::metrics::Metrics;
use tandem_runtime::tandem::retune::{Busy, Retuner};

/// Values set on model inputs, over whatever drives them otherwise.
pub struct InputOverrides {
    /// Each input's value, as bits, when `set`.
    values: Vec<AtomicU64>,
    set: Vec<AtomicBool>,
    /// Any input set at all (most runs have none: one load per frame).
    any: AtomicBool,
}

impl InputOverrides {
    /// None set, for `n` inputs.
    pub fn new(n: usize) -> Self {
        InputOverrides {
            values: (0..n).map(|_| AtomicU64::new(0)).collect(),
            set: (0..n).map(|_| AtomicBool::new(false)).collect(),
            any: AtomicBool::new(false),
        }
    }

    fn put(&self, input: usize, value: f64) {
        self.values[input].store(value.to_bits(), Ordering::Relaxed);
        self.set[input].store(true, Ordering::Release);
        self.any.store(true, Ordering::Release);
    }
}

/// An input source with some inputs set from outside.
pub struct Overridden {
    inner: Box<dyn InputSource>,
    overrides: Arc<InputOverrides>,
}

impl Overridden {
    /// `inner`, its inputs replaced where `overrides` sets them.
    pub fn new(inner: Box<dyn InputSource>, overrides: Arc<InputOverrides>) -> Self {
        Overridden { inner, overrides }
    }
}

impl Overridden {
    /// Replaces the inputs `u` at `t`, read from the inner source at
    /// `sampled`, where an override is set; returns when they were sampled.
    fn apply(&self, t: f64, sampled: f64, u: &mut [f64]) -> f64 {
        let o = &*self.overrides;
        if !o.any.load(Ordering::Acquire) {
            return sampled;
        }
        for (i, u) in u.iter_mut().enumerate() {
            if o.set[i].load(Ordering::Acquire) {
                *u = f64::from_bits(o.values[i].load(Ordering::Relaxed));
            }
        }
        // A value set now was sampled now.
        t.max(sampled)
    }
}

impl InputSource for Overridden {
    fn read(&mut self, t: f64, u: &mut [f64]) -> f64 {
        let sampled = self.inner.read(t, u);
        self.apply(t, sampled, u)
    }

    fn read_late(&mut self, t: f64, u: &mut [f64]) -> f64 {
        let sampled = self.inner.read_late(t, u);
        self.apply(t, sampled, u)
    }
}

/// A change that cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// No input of that name.
    #[error("no input \"{name}\" in the model; its inputs: {inputs}")]
    UnknownInput {
        /// The name asked for.
        name: String,
        /// The model's inputs.
        inputs: String,
    },
    /// A value that is not a finite number.
    #[error("input \"{name}\": {value} is not a finite number; give one such as 0.5")]
    NotFinite {
        /// The input.
        name: String,
        /// The value given.
        value: f64,
    },
    /// The model refused the parameter.
    #[error(transparent)]
    Retune(RetuneError),
    /// Too many changes wait already.
    #[error(transparent)]
    Busy(#[from] Busy),
}

/// A block parameter change the integrator threads have applied.
#[derive(Clone, Debug, PartialEq)]
pub struct Applied {
    /// The number [`Controls::set_parameter`] gave it.
    pub seq: u64,
    /// The frame it took effect at.
    pub frame: u64,
}

/// What every handle on one session's parameters shares: the model whose
/// definitions the changes are made from, the queue to the integrator
/// threads and the changes applied so far.
struct Tuning {
    model: Box<dyn Model>,
    retuner: Retuner,
    next_seq: u64,
    applied: Vec<Applied>,
}

/// The shared tuning state. Its lock is only taken on normal threads, and
/// a panic while it was held leaves nothing half-changed that a later
/// change could not replace.
fn lock(tuning: &Mutex<Tuning>) -> MutexGuard<'_, Tuning> {
    tuning.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The handle on a session's inputs, parameters and run, for a normal
/// thread. Made by [`crate::Session::controls`]; clones share the session
/// (a dashboard and a calibration tool change one run's parameters, in
/// the order they ask, numbered in one sequence).
pub struct Controls {
    tuning: Arc<Mutex<Tuning>>,
    /// How many of the applied changes this handle has returned.
    seen: usize,
    implicit_model: bool,
    overrides: Arc<InputOverrides>,
    metrics: Arc<Metrics>,
    stop: Arc<AtomicBool>,
    inputs: Vec<String>,
    faults: FaultTrigger,
}

impl Clone for Controls {
    /// Another handle on the same session, which has returned no applied
    /// change yet.
    fn clone(&self) -> Self {
        Controls {
            tuning: Arc::clone(&self.tuning),
            seen: 0,
            implicit_model: self.implicit_model,
            overrides: Arc::clone(&self.overrides),
            metrics: Arc::clone(&self.metrics),
            stop: Arc::clone(&self.stop),
            inputs: self.inputs.clone(),
            faults: self.faults.clone(),
        }
    }
}

impl Controls {
    #[expect(
        clippy::too_many_arguments,
        reason = "the model and the channels of each control path, made together by the session"
    )]
    pub(crate) fn new(
        model: Box<dyn Model>,
        retuner: Retuner,
        implicit_model: bool,
        overrides: Arc<InputOverrides>,
        metrics: Arc<Metrics>,
        stop: Arc<AtomicBool>,
        faults: FaultTrigger,
    ) -> Self {
        let inputs = model.layout().inputs.iter().map(|v| v.name.clone()).collect();
        Controls {
            tuning: Arc::new(Mutex::new(Tuning {
                model,
                retuner,
                next_seq: 1,
                applied: Vec::new(),
            })),
            seen: 0,
            implicit_model,
            overrides,
            metrics,
            stop,
            inputs,
            faults,
        }
    }

    /// Each bus faults can be injected into, with the messages it sends.
    pub fn fault_targets(&self) -> Vec<(String, Vec<String>)> {
        self.faults.targets()
    }

    /// Injects a fault into bus `bus`'s sending, as `request` describes
    /// it (see [`FaultTrigger::inject`]).
    pub fn inject_fault(&self, bus: &str, request: &Value) -> Result<Injected, FaultRequestError> {
        self.faults.inject(bus, request)
    }

    /// The model's inputs, by name.
    pub fn inputs(&self) -> Vec<String> {
        self.inputs.clone()
    }

    /// The frames run so far.
    pub fn frames(&self) -> u64 {
        self.metrics.frames.get()
    }

    /// Sets model input `name` to `value` from the next frame on; returns
    /// that frame.
    pub fn set_input(&mut self, name: &str, value: f64) -> Result<u64, ControlError> {
        let index = self
            .inputs
            .iter()
            .position(|v| v == name)
            .ok_or_else(|| ControlError::UnknownInput {
                name: name.to_string(),
                inputs: self.inputs.join(", "),
            })?;
        if !value.is_finite() {
            return Err(ControlError::NotFinite {
                name: name.to_string(),
                value,
            });
        }
        self.overrides.put(index, value);
        Ok(self.frames() + 1)
    }

    /// Prepares parameter `param` of block `block` set to `value` (the
    /// model compiled again and checked here) and sends it to both
    /// integrator threads, which swap it in at the start of the same frame
    /// (the next one, or later); returns its number and the frame it was
    /// asked for. [`Controls::applied`] tells when it took effect.
    pub fn set_parameter(&mut self, block: &str, param: &str, value: &Value) -> Result<(u64, u64), ControlError> {
        let frame = self.frames() + 1;
        let implicit_model = self.implicit_model;
        let mut tuning = lock(&self.tuning);
        let definition = tuning.model.retune(block, param, value).map_err(ControlError::Retune)?;
        let seq = tuning.next_seq;
        tuning.retuner.submit(seq, frame, definition.clone(), implicit_model)?;
        // Later changes build on this one.
        tuning.model.swap_definition(&mut definition.clone());
        tuning.next_seq += 1;
        Ok((seq, frame))
    }

    /// The parameter changes applied since this handle's last call (any
    /// handle's changes).
    pub fn applied(&mut self) -> Vec<Applied> {
        let mut tuning = lock(&self.tuning);
        let done = tuning.retuner.applied();
        tuning.applied.extend(done.into_iter().filter_map(|c| {
            Some(Applied {
                seq: c.seq,
                frame: c.applied_at?,
            })
        }));
        let new = tuning.applied[self.seen..].to_vec();
        self.seen = tuning.applied.len();
        new
    }

    /// The block parameters that can be changed, with their values now.
    pub fn tunables(&self) -> Vec<(String, String, Value)> {
        lock(&self.tuning).model.tunables()
    }

    /// Asks the run to stop at its next frame.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }
}
