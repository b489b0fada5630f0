//! The master loop: at each base macro step the due sub-models take one
//! communication step, their inputs following the Lagrange polynomials
//! through the newest communication points of the outputs that drive
//! them, and their outputs are computed at the new point in the order
//! feedthrough asks for. Optionally each macro step is repeated from a
//! saved point until the coupling values settle, the repetitions
//! exchanging the waveforms of the outputs.

mod plan;
mod run;
mod team;
mod waves;

use std::io;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tandem_runtime::record::Recorder;

use crate::submodel::SubModelError;
use crate::system::System;
use plan::Plan;
use run::Run;
use team::{with_team, Seat};

/// What a finished co-simulation reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Base macro steps taken.
    pub macro_steps: u64,
    /// Repetitions of macro steps: fixed-point iterations, and the one
    /// repetition of the first step that second-order extrapolation takes
    /// to start.
    pub iterations: u64,
    /// Macro steps (and the start, t = 0) whose iteration reached its
    /// limit before the tolerance.
    pub unconverged: u64,
    /// The largest change of a coupling output left at the last iteration
    /// of those steps (0 when all converged).
    pub largest_change: f64,
    /// Wall-clock time of the run.
    pub wall: Duration,
}

/// Why a co-simulation stopped early. The message names the cause, which
/// is therefore not also its `source` (a chain of sources printed would
/// say it twice).
#[derive(Debug, thiserror::Error)]
pub enum CosimError {
    /// A sub-model failed.
    #[error("sub-model \"{model}\" at t = {time} s: {error}")]
    SubModel {
        /// Its name.
        model: String,
        /// The communication point it failed at or stepped from (s).
        time: f64,
        /// What went wrong.
        error: SubModelError,
    },
    /// The recorder failed (disk full, closed pipe).
    #[error("cannot write the results: {0}")]
    Record(io::Error),
}

impl From<io::Error> for CosimError {
    fn from(error: io::Error) -> CosimError {
        CosimError::Record(error)
    }
}

impl System {
    /// Runs to the stop time. `recorder` gets, at every base macro step
    /// (t = 0 included), every sub-model's outputs (columns
    /// [`System::output_names`]); `progress` the fraction done, about a
    /// hundred times. The same system gives the same bits on every run and
    /// with any number of threads.
    pub fn run(self, recorder: &mut dyn Recorder, progress: &mut dyn FnMut(f64)) -> Result<Summary, CosimError> {
        let start = Instant::now();
        let plan = Plan::new(&self);
        let seats: Vec<Mutex<Seat>> = self
            .participants
            .into_iter()
            .map(|p| Mutex::new(Seat::new(p.model)))
            .collect();
        let counts = with_team(&seats, plan.master.threads, |team| {
            let mut run = Run::new(&plan, &seats, team);
            run.drive(recorder, progress).map(|()| run.counts())
        })?;
        Ok(Summary {
            macro_steps: plan.master.steps,
            iterations: counts.iterations,
            unconverged: counts.unconverged,
            largest_change: counts.largest_change,
            wall: start.elapsed(),
        })
    }
}
