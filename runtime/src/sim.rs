//! The offline fixed-step simulation driver.
//!
//! Time is kept as an integer tick count (`t = n * step`), never
//! accumulated, so sample hits land exactly. Each major step:
//! outputs (discrete blocks that hit recompute), record, update (discrete
//! states, resets), then one explicit step of the continuous states.

use std::time::{Duration, Instant};

use tandem_models::{Model, NonFinite, SampleTime};

use crate::explicit::{ExplicitRk, Method};
use crate::record::Recorder;

/// Settings of a fixed-step run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FixedStep {
    /// Integration method.
    pub method: Method,
    /// Step in seconds (> 0).
    pub step: f64,
    /// Stop time in seconds (> 0).
    pub stop: f64,
}

/// Why a run stopped early.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// A discrete rate does not land on the step grid.
    #[error("sample time {sample} of {user} is not an integer multiple of the step {step} s")]
    SampleTime {
        /// The rate.
        sample: SampleTime,
        /// A block that runs at it.
        user: String,
        /// The solver step.
        step: f64,
    },
    /// A value stopped being finite.
    #[error(transparent)]
    NonFinite(#[from] NonFinite),
    /// The recorder failed (disk full, closed pipe).
    #[error("cannot write the results: {0}")]
    Record(#[from] std::io::Error),
}

/// What a finished run reports.
#[derive(Clone, Copy, Debug)]
pub struct Summary {
    /// Major steps taken.
    pub steps: u64,
    /// Derivative evaluations.
    pub evaluations: u64,
    /// Wall-clock time of the run.
    pub wall: Duration,
}

/// A discrete rate in ticks: hits at `offset + k * period`.
#[derive(Clone, Copy, Debug)]
struct TickRate {
    period: u64,
    offset: u64,
}

/// How many steps make `value` seconds, if it is an integer multiple.
fn ticks(value: f64, step: f64) -> Option<u64> {
    let n = (value / step).round();
    ((n * step - value).abs() <= 1e-9 * value.abs().max(step)).then_some(n as u64)
}

/// Checks that every rate of the model lands on the step grid.
fn tick_rates(model: &dyn Model, step: f64) -> Result<Vec<TickRate>, SimError> {
    let layout = model.layout();
    layout
        .rates
        .iter()
        .zip(&layout.rate_users)
        .map(
            |(&sample, user)| match (ticks(sample.period, step), ticks(sample.offset, step)) {
                (Some(period), Some(offset)) if period > 0 => Ok(TickRate { period, offset }),
                _ => Err(SimError::SampleTime {
                    sample,
                    user: user.clone(),
                    step,
                }),
            },
        )
        .collect()
}

/// A fixed-step simulation of one model.
pub struct Simulation<'m> {
    model: &'m mut dyn Model,
    settings: FixedStep,
    rates: Vec<TickRate>,
    integrator: ExplicitRk,
    x: Vec<f64>,
    xd: Vec<f64>,
    u: Vec<f64>,
    y: Vec<f64>,
    hits: Vec<bool>,
}

impl<'m> Simulation<'m> {
    /// Prepares a run (allocates every buffer). Inputs start at their
    /// defaults.
    pub fn new(model: &'m mut dyn Model, settings: FixedStep) -> Result<Self, SimError> {
        let rates = tick_rates(model, settings.step)?;
        let layout = model.layout();
        let (n, nd) = (layout.states.len(), layout.discrete);
        let u = layout.inputs.iter().map(|v| v.default).collect();
        let y = vec![0.0; layout.outputs.len()];
        let hits = vec![false; rates.len()];
        let mut x = vec![0.0; n];
        let mut xd = vec![0.0; nd];
        model.initial_state(&mut x, &mut xd);
        Ok(Simulation {
            model,
            settings,
            rates,
            integrator: ExplicitRk::new(settings.method, n),
            x,
            xd,
            u,
            y,
            hits,
        })
    }

    /// Number of major steps the run takes (the last lands on the stop time,
    /// or just before it when the stop time is not on the grid).
    pub fn total_steps(&self) -> u64 {
        (self.settings.stop / self.settings.step * (1.0 + 1e-12)).floor() as u64
    }

    /// Runs to the stop time, recording the outputs at every major step
    /// (including t = 0), and calling `progress` with the fraction done
    /// about a hundred times.
    pub fn run(&mut self, recorder: &mut dyn Recorder, progress: &mut dyn FnMut(f64)) -> Result<Summary, SimError> {
        let start = Instant::now();
        let total = self.total_steps();
        let every = (total / 100).max(1);
        let h = self.settings.step;
        for n in 0..=total {
            let t = n as f64 * h;
            for (hit, r) in self.hits.iter_mut().zip(&self.rates) {
                *hit = n >= r.offset && (n - r.offset) % r.period == 0;
            }
            self.model
                .major_outputs(t, &self.x, &mut self.xd, &self.u, &self.hits, &mut self.y)?;
            self.check_finite(t)?;
            recorder.record(t, &self.y)?;
            if n == total {
                break;
            }
            self.model.update(t, &self.hits, &mut self.x, &mut self.xd, &self.u);
            if !self.x.is_empty() {
                self.integrator.step(self.model, t, h, &mut self.x, &self.xd, &self.u);
            }
            if n % every == 0 {
                progress(n as f64 / total as f64);
            }
        }
        recorder.finish()?;
        Ok(Summary {
            steps: total,
            evaluations: self.integrator.evaluations(),
            wall: start.elapsed(),
        })
    }

    /// Catches non-finite states and outputs of models that do not check
    /// their own signals (models written in Rust).
    fn check_finite(&self, t: f64) -> Result<(), NonFinite> {
        let layout = self.model.layout();
        let bad_state = self
            .x
            .iter()
            .position(|v| !v.is_finite())
            .map(|i| (format!("state \"{}\"", layout.states[i]), self.x[i]));
        let bad_output = || {
            self.y
                .iter()
                .position(|v| !v.is_finite())
                .map(|i| (format!("output \"{}\"", layout.outputs[i].name), self.y[i]))
        };
        match bad_state.or_else(bad_output) {
            Some((place, value)) => Err(NonFinite { time: t, place, value }),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_accept_exact_multiples_only() {
        assert_eq!(ticks(0.02, 0.01), Some(2));
        assert_eq!(ticks(0.05, 0.01), Some(5));
        assert_eq!(ticks(0.001, 0.001), Some(1));
        assert_eq!(ticks(0.0, 0.01), Some(0));
        assert_eq!(ticks(0.015, 0.01), None);
        assert_eq!(ticks(0.1, 0.03), None);
    }
}
