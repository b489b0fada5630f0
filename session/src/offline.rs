//! What offline runs share beyond the runtime's [`Simulation`]: inputs
//! given as time series, and a run's error worded and placed as
//! `tandem sim` shows it.

use tandem_models::diagram::locate_block;
use tandem_runtime::{SimError, Simulation};

/// An input's values over time: a constant, or samples at increasing times
/// joined linearly (or each held until the next), the first and last held
/// outside them.
#[derive(Clone, Debug, PartialEq)]
pub struct InputSeries {
    times: Vec<f64>,
    values: Vec<f64>,
    hold: bool,
}

/// Samples that do not make an [`InputSeries`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SeriesError {
    /// Times and values differ in number, or there are none.
    #[error("{times} times and {values} values; give one value per time, at least one")]
    Lengths {
        /// Times given.
        times: usize,
        /// Values given.
        values: usize,
    },
    /// A time or value is NaN or infinite.
    #[error("{what}[{index}] is {value}; every time and value must be finite")]
    NonFinite {
        /// `times` or `values`.
        what: &'static str,
        /// Its index.
        index: usize,
        /// The value.
        value: f64,
    },
    /// The times do not increase.
    #[error("times[{index}] = {time} does not come after times[{}] = {previous}; sort the samples by time, each time once", index - 1)]
    NotIncreasing {
        /// The index of the time out of order.
        index: usize,
        /// That time.
        time: f64,
        /// The time before it.
        previous: f64,
    },
}

impl InputSeries {
    /// `values` at `times` (increasing), joined linearly, or each held
    /// until the next when `hold`.
    pub fn new(times: Vec<f64>, values: Vec<f64>, hold: bool) -> Result<Self, SeriesError> {
        if times.len() != values.len() || times.is_empty() {
            return Err(SeriesError::Lengths {
                times: times.len(),
                values: values.len(),
            });
        }
        for (what, list) in [("times", &times), ("values", &values)] {
            if let Some((index, &value)) = list.iter().enumerate().find(|(_, v)| !v.is_finite()) {
                return Err(SeriesError::NonFinite { what, index, value });
            }
        }
        if let Some(index) = (1..times.len()).find(|&i| times[i] <= times[i - 1]) {
            return Err(SeriesError::NotIncreasing {
                index,
                time: times[index],
                previous: times[index - 1],
            });
        }
        Ok(InputSeries { times, values, hold })
    }

    /// The value at time `t`.
    pub fn at(&self, t: f64) -> f64 {
        let after = self.times.partition_point(|&s| s <= t);
        if after == 0 {
            return self.values[0];
        }
        let i = after - 1;
        if self.hold || after == self.times.len() {
            return self.values[i];
        }
        let (t0, t1) = (self.times[i], self.times[i + 1]);
        let (v0, v1) = (self.values[i], self.values[i + 1]);
        v0 + (v1 - v0) * (t - t0) / (t1 - t0)
    }
}

/// The inputs of an offline run: each model input either held at its
/// default or driven by a series.
#[derive(Clone, Debug, Default)]
pub struct Inputs {
    series: Vec<Option<InputSeries>>,
}

impl Inputs {
    /// `n` inputs, all at their defaults.
    pub fn new(n: usize) -> Self {
        Inputs { series: vec![None; n] }
    }

    /// Drives input `index` by `series` (`None`: back to its default).
    pub fn set(&mut self, index: usize, series: Option<InputSeries>) {
        self.series[index] = series;
    }

    /// Whether any input is driven.
    pub fn any(&self) -> bool {
        self.series.iter().any(Option::is_some)
    }

    /// Fills the driven inputs' values at `t` into `u` (the others keep
    /// theirs).
    pub fn fill(&self, t: f64, u: &mut [f64]) {
        for (u, series) in u.iter_mut().zip(&self.series) {
            if let Some(s) = series {
                *u = s.at(t);
            }
        }
    }

    /// Runs `simulation` to its end with these inputs.
    pub fn run(
        &self,
        simulation: &mut Simulation<'_>,
        recorder: &mut dyn tandem_runtime::record::Recorder,
        progress: &mut dyn FnMut(f64),
    ) -> Result<tandem_runtime::Summary, SimError> {
        if self.any() {
            simulation.run_driven(recorder, progress, &mut |t, u| self.fill(t, u))
        } else {
            simulation.run(recorder, progress)
        }
    }
}

/// The block whose definition a run's error is about (a sample time off
/// the step grid), to place the error at.
pub fn sim_error_block(error: &SimError) -> Option<&str> {
    match error {
        SimError::SampleTime(e) => Some(e.user.as_str()),
        _ => None,
    }
}

/// `error` as `tandem sim` words it: headed by `source` (the model's file
/// or name), at the line and column of the block it names in `text` (the
/// model's JSON, when it is one), with the fix.
pub fn sim_error_message(source: &str, text: Option<&str>, error: &SimError) -> String {
    let at = sim_error_block(error)
        .and_then(|b| Some((b, locate_block(text?, b)?)))
        .map_or(String::new(), |(b, (line, column))| {
            format!(":{line}:{column}: block \"{b}\"")
        });
    let help = match error {
        SimError::SampleTime(_) => {
            "\n  help: make the sample time a multiple of the step, or give a step (--step or simulation.step) that divides it"
        }
        _ => "",
    };
    format!("{source}{at}: {error}{help}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_series_is_linear_between_samples_and_held_outside() {
        let s = InputSeries::new(vec![1.0, 2.0, 4.0], vec![10.0, 20.0, 0.0], false).unwrap();
        assert_eq!(
            [s.at(0.0), s.at(1.0), s.at(1.5), s.at(2.0), s.at(3.0), s.at(9.0)],
            [10.0, 10.0, 15.0, 20.0, 10.0, 0.0]
        );
        let held = InputSeries::new(vec![1.0, 2.0], vec![10.0, 20.0], true).unwrap();
        assert_eq!([held.at(1.9), held.at(2.0)], [10.0, 20.0]);
        assert_eq!(InputSeries::new(vec![0.0], vec![3.5], true).unwrap().at(-1.0), 3.5);
    }

    #[test]
    fn bad_samples_are_refused_with_the_place() {
        let e = InputSeries::new(vec![0.0, 2.0, 1.0], vec![0.0; 3], false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "times[2] = 1 does not come after times[1] = 2; sort the samples by time, each time once"
        );
        let e = InputSeries::new(vec![0.0, 1.0], vec![0.0, f64::NAN], false).unwrap_err();
        assert_eq!(e.to_string(), "values[1] is NaN; every time and value must be finite");
        let e = InputSeries::new(vec![0.0], vec![], false).unwrap_err();
        assert!(e.to_string().starts_with("1 times and 0 values"));
    }
}
