//! Any Tandem model (a JSON block diagram, a built-in plant, an FMU for
//! Model Exchange behind its model adapter) as a participant: its own
//! fixed-step simulation takes the micro steps of each communication step,
//! its inputs following the master's courses at every solver stage, its
//! outputs recorded at every micro step when the master asks.

use std::io;

use tandem_models::diagram::DiagramModel;
use tandem_models::{Model, Variable};
use tandem_runtime::record::Recorder;
use tandem_runtime::sim::Snapshot;
use tandem_runtime::{FixedStep, Simulation};

use crate::course::Course;
use crate::driven::{encode, lock, Driven, Waveforms, PER_INPUT};
use crate::recording::Recording;
use crate::submodel::{Feedthrough, SubModel, SubModelError};

/// A model stepped by its own fixed-step simulation (explicit micro steps,
/// or the BDF with the micro step as its output grid).
pub struct ModelSlave {
    sim: Simulation<'static>,
    inputs: Vec<Variable>,
    outputs: Vec<Variable>,
    feedthrough: Feedthrough,
    micro: f64,
    /// The simulation's inputs: the descriptions of the input courses.
    descriptions: Vec<f64>,
    /// The waveforms the simulation's inputs follow, shared with it.
    waveforms: Waveforms,
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
        feedthrough.fits(inputs.len(), outputs.len())?;
        let driven = Driven::new(model);
        let descriptions = driven.layout().inputs.iter().map(|v| v.default).collect();
        let waveforms = driven.waveforms();
        Ok(ModelSlave {
            sim: Simulation::owning(Box::new(driven), settings)?,
            inputs,
            outputs,
            feedthrough,
            micro: settings.step,
            descriptions,
            waveforms,
            saved: None,
        })
    }

    /// A block diagram, with the feedthrough its structure gives; when
    /// `compile`, compiled to machine code (`tandem_jit::prepare`:
    /// interpreted when it cannot be; the results are the same bit for
    /// bit).
    pub fn diagram(model: DiagramModel, settings: FixedStep, compile: bool) -> Result<Self, SubModelError> {
        let lists = model.program().feedthrough();
        let inputs = model.program().layout().inputs.len();
        let feedthrough = Feedthrough::from_lists(inputs, lists)?;
        let model = if compile {
            tandem_jit::prepare(model).0
        } else {
            Box::new(model)
        };
        ModelSlave::new(model, settings, feedthrough)
    }

    /// Has the simulation's inputs follow `inputs`, the waveforms they
    /// follow copied into the table the simulation reads.
    fn follow(&mut self, inputs: &[Course]) {
        let mut table = None;
        for (i, (course, into)) in inputs
            .iter()
            .zip(self.descriptions.chunks_exact_mut(PER_INPUT))
            .enumerate()
        {
            encode(course, into);
            if course.follows_waveform() {
                table.get_or_insert_with(|| lock(&self.waveforms))[i].clone_from(&course.waveform);
            }
        }
        drop(table);
        self.sim.set_inputs(&self.descriptions);
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
        for (value, into) in u.iter().zip(self.descriptions.chunks_exact_mut(PER_INPUT)) {
            encode(&Course::constant(*value), into);
        }
        self.sim.set_inputs(&self.descriptions);
        y.copy_from_slice(self.sim.outputs()?);
        Ok(())
    }

    fn grid(&self) -> Option<f64> {
        Some(self.micro)
    }

    fn step(
        &mut self,
        t: f64,
        h: f64,
        inputs: &[Course],
        mut record: Option<&mut Recording>,
    ) -> Result<(), SubModelError> {
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
        self.follow(inputs);
        if let Some(record) = record.as_deref_mut() {
            record.begin(t, self.micro);
            record.sample(self.sim.outputs()?);
        }
        for _ in 0..steps as u64 {
            self.sim.step(&mut Discard)?;
            if let Some(record) = record.as_deref_mut() {
                record.sample(self.sim.outputs()?);
            }
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
