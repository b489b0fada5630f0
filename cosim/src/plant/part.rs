//! A sub-model loaded to be part of a real-time plant: its model, its
//! ports and feedthrough for checking the system's connections, and no
//! solver of its own.

use tandem_models::{Model, Variable};

use crate::course::Course;
use crate::recording::Recording;
use crate::submodel::{Feedthrough, SubModel, SubModelError};

/// A model waiting to be composed into a plant
/// ([`crate::plant::Composite`]). A co-simulation master cannot step it.
pub struct PlantPart {
    model: Box<dyn Model>,
    inputs: Vec<Variable>,
    outputs: Vec<Variable>,
    feedthrough: Feedthrough,
}

impl PlantPart {
    /// `model`, its outputs depending on its inputs as `lists` says (for
    /// each output, the inputs it depends on directly), or on all of them
    /// when it does not say.
    pub fn new(model: Box<dyn Model>, lists: Option<Vec<Vec<usize>>>) -> Result<PlantPart, SubModelError> {
        let layout = model.layout();
        let (inputs, outputs) = (layout.inputs.clone(), layout.outputs.clone());
        let feedthrough = match lists {
            Some(lists) => Feedthrough::from_lists(inputs.len(), lists)?,
            None => Feedthrough::all(inputs.len(), outputs.len()),
        };
        feedthrough.fits(inputs.len(), outputs.len())?;
        Ok(PlantPart {
            model,
            inputs,
            outputs,
            feedthrough,
        })
    }
}

impl SubModel for PlantPart {
    fn inputs(&self) -> &[Variable] {
        &self.inputs
    }

    fn outputs(&self) -> &[Variable] {
        &self.outputs
    }

    fn feedthrough(&self) -> &Feedthrough {
        &self.feedthrough
    }

    fn evaluate(&mut self, _: &[f64], _: &mut [f64]) -> Result<(), SubModelError> {
        Err(SubModelError::PlantPart)
    }

    fn step(&mut self, _: f64, _: f64, _: &[Course], _: Option<&mut Recording>) -> Result<(), SubModelError> {
        Err(SubModelError::PlantPart)
    }

    fn save(&mut self) -> Result<(), SubModelError> {
        Err(SubModelError::PlantPart)
    }

    fn restore(&mut self) -> Result<(), SubModelError> {
        Err(SubModelError::PlantPart)
    }

    fn into_model(self: Box<Self>) -> Option<Box<dyn Model>> {
        Some(self.model)
    }
}
