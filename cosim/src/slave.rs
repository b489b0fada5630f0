//! Any Tandem model (a JSON block diagram, a built-in plant, an FMU for
//! Model Exchange behind its model adapter) as a participant: its own
//! fixed-step simulation takes the micro steps of each communication step,
//! its inputs following the master's curves at every solver stage.

use std::io;

use tandem_models::diagram::DiagramModel;
use tandem_models::{Model, Variable};
use tandem_runtime::record::Recorder;
use tandem_runtime::sim::Snapshot;
use tandem_runtime::{FixedStep, Simulation};

use crate::curve::Curve;
use crate::driven::{encode, Driven, PER_CURVE};
use crate::submodel::{Feedthrough, SubModel, SubModelError};

/// A model stepped by its own fixed-step simulation (explicit micro steps,
/// or the BDF with the micro step as its output grid).
pub struct ModelSlave {
    sim: Simulation<'static>,
    inputs: Vec<Variable>,
    outputs: Vec<Variable>,
    feedthrough: Feedthrough,
    micro: f64,
    /// The simulation's inputs: the coefficients of the input curves.
    coefficients: Vec<f64>,
    /// The point of the last save, if any.
    saved: Option<Snapshot>,
}

/// Drops the rows of micro steps: the master records at macro steps.
struct Discard;

impl Recorder for Discard {
    fn record(&mut self, _: f64, _: &[f64]) -> io::Result<()> {
        Ok(())
    }
}

impl ModelSlave {
    /// `model` simulated with `settings` (its `step` is the micro step, its
    /// `stop` the end of the co-simulation), outputs depending on inputs
    /// as `feedthrough` says.
    pub fn new(model: Box<dyn Model>, settings: FixedStep, feedthrough: Feedthrough) -> Result<Self, SubModelError> {
        let layout = model.layout();
        let (inputs, outputs) = (layout.inputs.clone(), layout.outputs.clone());
        let found = (feedthrough.input_count(), feedthrough.output_count());
        let expected = (inputs.len(), outputs.len());
        if found != expected {
            return Err(SubModelError::FeedthroughShape { expected, found });
        }
        let driven = Driven::new(model);
        let coefficients = driven.layout().inputs.iter().map(|v| v.default).collect();
        Ok(ModelSlave {
            sim: Simulation::owning(Box::new(driven), settings)?,
            inputs,
            outputs,
            feedthrough,
            micro: settings.step,
            coefficients,
            saved: None,
        })
    }

    /// A block diagram, with the feedthrough its structure gives.
    pub fn diagram(model: DiagramModel, settings: FixedStep) -> Result<Self, SubModelError> {
        let lists = model.program().feedthrough();
        let inputs = model.program().layout().inputs.len();
        let feedthrough = Feedthrough::from_lists(inputs, lists).map_err(|e| SubModelError::Other(Box::new(e)))?;
        ModelSlave::new(Box::new(model), settings, feedthrough)
    }
}

impl SubModel for ModelSlave {
    fn inputs(&self) -> &[Variable] {
        &self.inputs
    }

    fn outputs(&self) -> &[Variable] {
        &self.outputs
    }

    fn feedthrough(&self) -> &Feedthrough {
        &self.feedthrough
    }

    fn evaluate(&mut self, u: &[f64], y: &mut [f64]) -> Result<(), SubModelError> {
        for (value, into) in u.iter().zip(self.coefficients.chunks_exact_mut(PER_CURVE)) {
            encode(&Curve::constant(*value), into);
        }
        self.sim.set_inputs(&self.coefficients);
        y.copy_from_slice(self.sim.outputs()?);
        Ok(())
    }

    fn step(&mut self, t: f64, h: f64, inputs: &[Curve]) -> Result<(), SubModelError> {
        let at = self.sim.time();
        if (at - t).abs() > 1e-9 * h.max(t.abs()) {
            return Err(SubModelError::OutOfStep { at, asked: t });
        }
        let steps = (h / self.micro).round();
        if steps < 1.0 || (steps * self.micro - h).abs() > 1e-9 * h {
            return Err(SubModelError::StepNotMultiple {
                step: h,
                micro: self.micro,
            });
        }
        for (curve, into) in inputs.iter().zip(self.coefficients.chunks_exact_mut(PER_CURVE)) {
            encode(curve, into);
        }
        self.sim.set_inputs(&self.coefficients);
        for _ in 0..steps as u64 {
            self.sim.step(&mut Discard)?;
        }
        Ok(())
    }

    fn save(&mut self) -> Result<(), SubModelError> {
        self.sim.save(self.saved.get_or_insert_with(Snapshot::default));
        Ok(())
    }

    fn restore(&mut self) -> Result<(), SubModelError> {
        let saved = self.saved.as_ref().ok_or(SubModelError::NothingSaved)?;
        self.sim.restore(saved);
        Ok(())
    }
}
