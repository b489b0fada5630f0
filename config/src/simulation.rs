//! Settings of an offline fixed-step run: the model's `simulation` section
//! overridden by the command line.

use tandem_models::diagram::SimulationDef;
use tandem_runtime::{FixedStep, Method, Solver};

use crate::bounds::{shown_number, MAX_STOP, MIN_STEP};

/// Solver used when neither the model nor the command line names one.
pub const DEFAULT_SOLVER: Method = Method::Rk4;
/// Tolerances of the BDF when neither the model nor the command line
/// gives them.
pub const DEFAULT_RTOL: f64 = 1e-6;
/// See [`DEFAULT_RTOL`].
pub const DEFAULT_ATOL: f64 = 1e-8;
/// Step used when neither the model nor the command line gives one (s).
pub const DEFAULT_STEP: f64 = 1e-3;
/// Stop time used when neither the model nor the command line gives one (s).
pub const DEFAULT_STOP: f64 = 10.0;

/// Values given on the command line; each wins over the model's.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--solver`.
    pub solver: Option<String>,
    /// `--step`.
    pub step: Option<f64>,
    /// `--stop`.
    pub stop: Option<f64>,
    /// `--rtol`.
    pub rtol: Option<f64>,
    /// `--atol`.
    pub atol: Option<f64>,
}

/// A setting that cannot be used, and where it was given.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{origin}: {message}")]
pub struct SettingsError {
    /// `--step` or `simulation.step` and the like.
    pub origin: String,
    /// What is wrong and what to do.
    pub message: String,
}

/// Picks each value from the command line, else the model, else the
/// default, and remembers where it came from for messages.
fn pick<T: Clone>(name: &str, cli: &Option<T>, model: &Option<T>, default: T) -> (T, String) {
    match (cli, model) {
        (Some(v), _) => (v.clone(), format!("--{name}")),
        (None, Some(v)) => (v.clone(), format!("the model's simulation.{name}")),
        (None, None) => (default, format!("the default {name}")),
    }
}

/// A number of seconds in `min..=max`, or an error naming where the value
/// came from and the bounds.
fn seconds_within(value: f64, origin: String, what: &str, min: f64, max: f64) -> Result<f64, SettingsError> {
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(SettingsError {
            origin,
            message: format!(
                "the {what} must be from {min:e} to {max:e} seconds, found {}",
                shown_number(value)
            ),
        })
    }
}

/// Merges and validates the settings of a fixed-step run.
pub fn fixed_step(model: &SimulationDef, cli: &Overrides) -> Result<FixedStep, SettingsError> {
    let (solver, origin) = pick("solver", &cli.solver, &model.solver, DEFAULT_SOLVER.name().to_string());
    let mut solver = solver.parse::<Solver>().map_err(|e| SettingsError {
        origin,
        message: e.to_string(),
    })?;
    if let Solver::Bdf { rtol, atol } = &mut solver {
        let (value, origin) = pick("rtol", &cli.rtol, &model.rtol, DEFAULT_RTOL);
        *rtol = tolerance(value, origin)?;
        let (value, origin) = pick("atol", &cli.atol, &model.atol, DEFAULT_ATOL);
        *atol = tolerance(value, origin)?;
    }
    let (step, origin) = pick("step", &cli.step, &model.step, DEFAULT_STEP);
    let step = seconds_within(step, origin, "step", MIN_STEP, MAX_STOP)?;
    let (stop, origin) = pick("stop", &cli.stop, &model.stop, DEFAULT_STOP);
    let stop = seconds_within(stop, origin, "stop time", MIN_STEP, MAX_STOP)?;
    Ok(FixedStep { solver, step, stop })
}

/// A tolerance in (0, 1), or an error naming where it came from.
fn tolerance(value: f64, origin: String) -> Result<f64, SettingsError> {
    if value > 0.0 && value < 1.0 {
        Ok(value)
    } else {
        Err(SettingsError {
            origin,
            message: format!("a tolerance must be between 0 and 1 (exclusive), found {value}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_line_wins_over_model_over_defaults() {
        let model = SimulationDef {
            solver: Some("euler".into()),
            step: Some(0.1),
            stop: None,
            ..SimulationDef::default()
        };
        let s = fixed_step(
            &model,
            &Overrides {
                step: Some(0.05),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            s,
            FixedStep {
                solver: Method::Euler.into(),
                step: 0.05,
                stop: DEFAULT_STOP
            }
        );
    }

    #[test]
    fn errors_name_the_origin_of_the_bad_value() {
        let model = SimulationDef {
            solver: None,
            step: Some(-0.1),
            stop: None,
            ..SimulationDef::default()
        };
        let e = fixed_step(&model, &Overrides::default()).unwrap_err();
        assert_eq!(e.origin, "the model's simulation.step");
        let e = fixed_step(
            &SimulationDef::default(),
            &Overrides {
                stop: Some(0.0),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("--stop: the stop time must be from 1e-9 to 1e9 seconds, found 0"),
            "{e}"
        );
        let e = fixed_step(
            &SimulationDef::default(),
            &Overrides {
                step: Some(1e-300),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().starts_with("--step: the step must be from 1e-9"), "{e}");
        let e = fixed_step(
            &SimulationDef::default(),
            &Overrides {
                solver: Some("rk45".into()),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("euler, heun, rk4"), "{e}");
    }
}
