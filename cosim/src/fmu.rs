//! A Co-Simulation FMU as a participant: stepped by its own `doStep`, its
//! inputs sampled at the start of each communication step and held over it,
//! its outputs known at communication points only.

use tandem_fmi::{FmuSlave, FmuState, StepEnd};
use tandem_models::Variable;

use crate::course::Course;
use crate::recording::Recording;
use crate::submodel::{Feedthrough, SubModel, SubModelError};

/// An [`FmuSlave`] a master steps.
pub struct CoSimulationFmu {
    slave: FmuSlave,
    feedthrough: Feedthrough,
    /// The inputs of the step being taken.
    u: Vec<f64>,
    /// The state of the last [`SubModel::save`].
    saved: Option<FmuState>,
}

impl CoSimulationFmu {
    /// Wraps an initialised slave.
    pub fn new(slave: FmuSlave) -> Result<CoSimulationFmu, SubModelError> {
        let inputs = slave.input_variables().len();
        let feedthrough = Feedthrough::from_lists(inputs, slave.feedthrough().to_vec())?;
        Ok(CoSimulationFmu {
            slave,
            feedthrough,
            u: vec![0.0; inputs],
            saved: None,
        })
    }
}

impl SubModel for CoSimulationFmu {
    fn inputs(&self) -> &[Variable] {
        self.slave.input_variables()
    }

    fn outputs(&self) -> &[Variable] {
        self.slave.output_variables()
    }

    fn feedthrough(&self) -> &Feedthrough {
        &self.feedthrough
    }

    fn evaluate(&mut self, u: &[f64], y: &mut [f64]) -> Result<(), SubModelError> {
        self.slave.set_inputs(u)?;
        Ok(self.slave.outputs(y)?)
    }

    fn step(&mut self, t: f64, h: f64, inputs: &[Course], _: Option<&mut Recording>) -> Result<(), SubModelError> {
        for (u, course) in self.u.iter_mut().zip(inputs) {
            *u = course.at(t);
        }
        self.slave.set_inputs(&self.u)?;
        match self.slave.do_step(t, h)? {
            StepEnd::Done => Ok(()),
            // The master has no early end of a co-simulation yet: the
            // FMU's end stops it with the FMU's words, which the slave
            // gives for any step asked after it.
            StepEnd::Terminated(at) => self.slave.do_step(at, h).map(|_| ()).map_err(Into::into),
        }
    }

    fn save(&mut self) -> Result<(), SubModelError> {
        if !self.slave.can_roll_back() {
            return Err(SubModelError::NoRollback(format!(
                "FMU \"{}\" does not declare canGetAndSetFMUstate",
                self.slave.description().model_name
            )));
        }
        match &mut self.saved {
            Some(state) => Ok(self.slave.save_state(state)?),
            None => {
                self.saved = Some(self.slave.get_state()?);
                Ok(())
            }
        }
    }

    fn restore(&mut self) -> Result<(), SubModelError> {
        let state = self.saved.as_ref().ok_or(SubModelError::NothingSaved)?;
        Ok(self.slave.set_state(state)?)
    }
}
