//! Changing a running session from a normal thread (a dashboard, a test):
//! a model input set to a value, a block parameter changed, a stop asked
//! for. Inputs are set through atomics the fast thread reads at the start
//! of each frame; parameters through the two-phase change of
//! [`tandem_runtime::tandem::retune`]. Nothing here blocks a real-time
//! thread.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use serde_json::Value;
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

impl InputSource for Overridden {
    fn read(&mut self, t: f64, u: &mut [f64]) -> f64 {
        let sampled = self.inner.read(t, u);
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

/// The handle on a session's inputs, parameters and run, for a normal
/// thread. Made by [`crate::Session::controls`].
pub struct Controls {
    model: Box<dyn Model>,
    retuner: Retuner,
    implicit_model: bool,
    overrides: Arc<InputOverrides>,
    metrics: Arc<Metrics>,
    stop: Arc<AtomicBool>,
    next_seq: u64,
}

impl Controls {
    pub(crate) fn new(
        model: Box<dyn Model>,
        retuner: Retuner,
        implicit_model: bool,
        overrides: Arc<InputOverrides>,
        metrics: Arc<Metrics>,
        stop: Arc<AtomicBool>,
    ) -> Self {
        Controls {
            model,
            retuner,
            implicit_model,
            overrides,
            metrics,
            stop,
            next_seq: 1,
        }
    }

    /// The model's inputs, by name.
    pub fn inputs(&self) -> Vec<String> {
        self.model.layout().inputs.iter().map(|v| v.name.clone()).collect()
    }

    /// The frames run so far.
    pub fn frames(&self) -> u64 {
        self.metrics.frames.get()
    }

    /// Sets model input `name` to `value` from the next frame on; returns
    /// that frame.
    pub fn set_input(&mut self, name: &str, value: f64) -> Result<u64, ControlError> {
        let inputs = &self.model.layout().inputs;
        let index = inputs
            .iter()
            .position(|v| v.name == name)
            .ok_or_else(|| ControlError::UnknownInput {
                name: name.to_string(),
                inputs: inputs.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(", "),
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
        let definition = self.model.retune(block, param, value).map_err(ControlError::Retune)?;
        let seq = self.next_seq;
        let frame = self.frames() + 1;
        self.retuner
            .submit(seq, frame, definition.clone(), self.implicit_model)?;
        // Later changes build on this one.
        self.model.swap_definition(&mut definition.clone());
        self.next_seq += 1;
        Ok((seq, frame))
    }

    /// The parameter changes applied since the last call.
    pub fn applied(&mut self) -> Vec<Applied> {
        self.retuner
            .applied()
            .into_iter()
            .filter_map(|c| {
                Some(Applied {
                    seq: c.seq,
                    frame: c.applied_at?,
                })
            })
            .collect()
    }

    /// The block parameters that can be changed, with their values now.
    pub fn tunables(&self) -> Vec<(String, String, Value)> {
        self.model.tunables()
    }

    /// Asks the run to stop at its next frame.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
    }
}
