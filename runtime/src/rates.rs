//! Discrete rates counted in whole steps of a fixed grid, so that sample
//! hits land exactly whatever the step.

use tandem_models::{Model, SampleTime};

/// A discrete rate in ticks: hits at `offset + k * period`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TickRate {
    period: u64,
    offset: u64,
}

/// A discrete rate that does not land on the step grid.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("sample time {sample} of {user} is not an integer multiple of the step {step} s")]
pub struct RateError {
    /// The rate.
    pub sample: SampleTime,
    /// A block that runs at it.
    pub user: String,
    /// The step (s).
    pub step: f64,
}

/// How many steps make `value` seconds, if it is an integer multiple.
fn ticks(value: f64, step: f64) -> Option<u64> {
    let n = (value / step).round();
    ((n * step - value).abs() <= 1e-9 * value.abs().max(step)).then_some(n as u64)
}

/// Checks that every rate of the model lands on the step grid.
pub(crate) fn tick_rates(model: &dyn Model, step: f64) -> Result<Vec<TickRate>, RateError> {
    let layout = model.layout();
    layout
        .rates
        .iter()
        .zip(&layout.rate_users)
        .map(
            |(&sample, user)| match (ticks(sample.period, step), ticks(sample.offset, step)) {
                (Some(period), Some(offset)) if period > 0 => Ok(TickRate { period, offset }),
                _ => Err(RateError {
                    sample,
                    user: user.clone(),
                    step,
                }),
            },
        )
        .collect()
}

/// Marks in `hits` the rates that hit at step `n`.
pub(crate) fn set_hits(rates: &[TickRate], n: u64, hits: &mut [bool]) {
    for (hit, r) in hits.iter_mut().zip(rates) {
        *hit = n >= r.offset && (n - r.offset).is_multiple_of(r.period);
    }
}

/// A model's discrete rates counted in frames: which of them hit at each
/// frame.
#[derive(Clone, Debug)]
pub struct FrameRates {
    rates: Vec<TickRate>,
}

impl FrameRates {
    /// The rates of `model` on a grid of `frame` seconds; each must land on
    /// it.
    pub fn new(model: &dyn Model, frame: f64) -> Result<Self, RateError> {
        Ok(FrameRates {
            rates: tick_rates(model, frame)?,
        })
    }

    /// How many rates there are.
    pub fn len(&self) -> usize {
        self.rates.len()
    }

    /// Whether the model has no discrete rate.
    pub fn is_empty(&self) -> bool {
        self.rates.is_empty()
    }

    /// Marks in `hits` the rates that hit at frame `k`.
    pub fn hits(&self, k: u64, hits: &mut [bool]) {
        set_hits(&self.rates, k, hits);
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
