//! The simulation an instance steps, and the way its outputs are read:
//! between steps, as an importer does, with the stepped simulation running
//! exactly as `tandem sim` runs it (`Simulation::outputs` marks a discrete
//! change it latches as a discontinuity for the next step).

use std::io;

use tandem_models::Model;
use tandem_runtime::record::Recorder;
use tandem_runtime::{FixedStep, SimError, Simulation};

/// A stepped simulation.
pub struct Run {
    /// The simulation stepped.
    pub sim: Simulation<'static>,
}

/// Drops the rows a simulation records on its way: an importer reads the
/// outputs at communication points.
struct Discard;

impl Recorder for Discard {
    fn record(&mut self, _: f64, _: &[f64]) -> io::Result<()> {
        Ok(())
    }
}

impl Run {
    /// A simulation of a fork of `model` with `settings`.
    pub fn new(model: &dyn Model, settings: FixedStep) -> Result<Run, SimError> {
        Ok(Run {
            sim: Simulation::owning(model.fork(), settings)?,
        })
    }

    /// The outputs at the current point with the current inputs.
    pub fn outputs(&mut self) -> Result<&[f64], SimError> {
        self.sim.outputs()
    }

    /// Advances one grid step (from between two grid points: to the next).
    pub fn step(&mut self) -> Result<(), SimError> {
        self.sim.step(&mut Discard)
    }

    /// Advances to `to`, after the current time and before the next grid
    /// point.
    pub fn advance_to(&mut self, to: f64) -> Result<(), SimError> {
        self.sim.advance_to(to, &mut Discard)
    }
}
