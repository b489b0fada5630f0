//! The system file as written: serde structures that mirror the TOML, each
//! value kept with its span for the line and column of messages.
//! Validation turns them into a [`crate::System`].

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// The whole file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSystem {
    pub(crate) master: RawMaster,
    #[serde(default)]
    pub(crate) model: Vec<RawModel>,
    #[serde(default)]
    pub(crate) connection: Vec<RawConnection>,
}

/// `[master]`: the macro step and how the sub-models are coupled.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawMaster {
    pub(crate) step: Spanned<f64>,
    pub(crate) stop: Spanned<f64>,
    #[serde(default)]
    pub(crate) ordering: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) order: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    pub(crate) extrapolation: Option<Spanned<i64>>,
    #[serde(default)]
    pub(crate) iterate: Option<Spanned<RawIterate>>,
    #[serde(default)]
    pub(crate) threads: Option<Spanned<i64>>,
    #[serde(default)]
    pub(crate) point_inputs: Option<Spanned<String>>,
}

/// `master.iterate`: the fixed-point iteration of each macro step.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawIterate {
    pub(crate) tolerance: Spanned<f64>,
    #[serde(default)]
    pub(crate) max_iterations: Option<Spanned<i64>>,
}

/// `[[model]]`: one sub-model and its solver.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawModel {
    pub(crate) name: Spanned<String>,
    pub(crate) source: Spanned<String>,
    #[serde(default)]
    pub(crate) solver: Option<Spanned<String>>,
    #[serde(default)]
    pub(crate) step: Option<Spanned<f64>>,
    #[serde(default)]
    pub(crate) rtol: Option<Spanned<f64>>,
    #[serde(default)]
    pub(crate) atol: Option<Spanned<f64>>,
    #[serde(default)]
    pub(crate) every: Option<Spanned<i64>>,
    #[serde(default)]
    pub(crate) parameters: BTreeMap<String, Spanned<RawValue>>,
    #[serde(default)]
    pub(crate) signals: Option<Spanned<Vec<Spanned<String>>>>,
    #[serde(default)]
    pub(crate) fmu: Option<RawFmu>,
}

/// A start value in `parameters`: a number, a Boolean, or text (an FMU's
/// String, or an FMI 3 Binary's hexadecimal digits).
#[derive(Clone, Deserialize)]
#[serde(untagged)]
pub(crate) enum RawValue {
    /// A TOML integer or float.
    Number(f64),
    /// `true` or `false`.
    Boolean(bool),
    /// A string.
    Text(String),
}

impl From<RawValue> for tandem_fmi::Value {
    fn from(value: RawValue) -> Self {
        match value {
            RawValue::Number(v) => tandem_fmi::Value::Real(v),
            RawValue::Boolean(v) => tandem_fmi::Value::Boolean(v),
            RawValue::Text(v) => tandem_fmi::Value::Text(v),
        }
    }
}

/// `model.fmu`: how an FMU source is loaded.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawFmu {
    /// Run its code in a process of its own.
    #[serde(default)]
    pub(crate) isolate: Option<Spanned<bool>>,
}

/// `[[connection]]`: an output driving an input, as written (also the
/// connections of a federation file).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawConnection {
    /// `<model>.<output>`.
    pub from: Spanned<String>,
    /// `<model>.<input>`.
    pub to: Spanned<String>,
    /// The input is `scale * output + offset`.
    #[serde(default)]
    pub scale: Option<Spanned<f64>>,
    /// See `scale`.
    #[serde(default)]
    pub offset: Option<Spanned<f64>>,
}
