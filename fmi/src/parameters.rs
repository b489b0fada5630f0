//! Values given by name to parameters (and inputs) before initialisation:
//! checked against the model description once, then set on every new
//! instance.

use crate::description::{Causality, FmiVersion, ModelDescription, ScalarVariable, Variability, VariableType};
use crate::error::FmuError;
use crate::instance::Instance;

/// A value for a variable.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value {
    /// For a Real/Float64 variable (or an Integer one, when whole).
    Real(f64),
    /// For an Integer/Int32 or FMI 2 Enumeration variable (or a Real one).
    Integer(i32),
    /// For a Boolean variable.
    Boolean(bool),
}

impl Value {
    fn type_name(self) -> &'static str {
        match self {
            Value::Real(_) => "Real",
            Value::Integer(_) => "Integer",
            Value::Boolean(_) => "Boolean",
        }
    }
}

impl From<f64> for Value {
    fn from(v: f64) -> Self {
        Value::Real(v)
    }
}

impl From<i32> for Value {
    fn from(v: i32) -> Self {
        Value::Integer(v)
    }
}

impl From<bool> for Value {
    fn from(v: bool) -> Self {
        Value::Boolean(v)
    }
}

/// Values for parameters and inputs, by variable name, set after
/// instantiation and before initialisation (in the order given).
///
/// ```
/// use tandem_fmi::Parameters;
/// let p = Parameters::new().with("e", 0.8).with("g", 9.81);
/// assert_eq!(p.len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parameters {
    values: Vec<(String, Value)>,
}

impl Parameters {
    /// No values: every variable keeps its start value.
    pub fn new() -> Self {
        Parameters::default()
    }

    /// Adds a value (builder style).
    pub fn with(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.set(name, value);
        self
    }

    /// Adds a value.
    pub fn set(&mut self, name: impl Into<String>, value: impl Into<Value>) -> &mut Self {
        self.values.push((name.into(), value.into()));
        self
    }

    /// Number of values given.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no value is given.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// A value checked against the variable it is for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Assignment {
    vr: u32,
    value: Value,
}

/// Checks every value of `parameters` against `description`.
pub(crate) fn resolve(description: &ModelDescription, parameters: &Parameters) -> Result<Vec<Assignment>, FmuError> {
    let fmu = || description.model_name.clone();
    parameters
        .values
        .iter()
        .map(|(name, value)| {
            let variable = description.variable(name).ok_or_else(|| FmuError::UnknownVariable {
                fmu: fmu(),
                name: name.clone(),
                near: near_names(description, name),
            })?;
            settable(description.version, variable).map_err(|why| FmuError::NotSettable {
                fmu: fmu(),
                name: name.clone(),
                why,
            })?;
            let value = converted(description.version, variable, *value).ok_or_else(|| FmuError::WrongType {
                fmu: fmu(),
                name: name.clone(),
                expected: variable.kind.to_string(),
                given: value.type_name(),
            })?;
            Ok(Assignment {
                vr: variable.value_reference,
                value,
            })
        })
        .collect()
}

/// Sets the checked values on a new instance.
pub(crate) fn apply(instance: &mut dyn Instance, assignments: &[Assignment]) -> Result<(), FmuError> {
    for a in assignments {
        match a.value {
            Value::Real(v) => instance.set_real(&[a.vr], &[v])?,
            Value::Integer(v) => instance.set_integer(a.vr, v)?,
            Value::Boolean(v) => instance.set_boolean(a.vr, v)?,
        }
    }
    Ok(())
}

/// Whether a variable may be set before initialisation, and why not.
fn settable(version: FmiVersion, variable: &ScalarVariable) -> Result<(), String> {
    if variable.array {
        return Err("it is an array, which this importer does not set".to_string());
    }
    let typed = match variable.kind {
        VariableType::Float64 | VariableType::Int32 | VariableType::Boolean => true,
        VariableType::Enumeration => version == FmiVersion::V2,
        _ => false,
    };
    if !typed {
        return Err(format!(
            "its type {} is not one this importer sets (Real/Float64, Integer/Int32, Boolean, FMI 2 Enumeration)",
            variable.kind
        ));
    }
    if variable.variability == Variability::Constant {
        return Err("it is a constant".to_string());
    }
    match variable.causality {
        Causality::Parameter | Causality::Input => Ok(()),
        other => Err(format!("its causality is \"{}\"", other.name())),
    }
}

/// `value` in the type `variable` takes, if it fits.
fn converted(version: FmiVersion, variable: &ScalarVariable, value: Value) -> Option<Value> {
    let integer = |v: f64| (v.fract() == 0.0 && v >= i32::MIN as f64 && v <= i32::MAX as f64).then_some(v as i32);
    match (&variable.kind, value) {
        (VariableType::Float64, Value::Real(v)) => Some(Value::Real(v)),
        (VariableType::Float64, Value::Integer(v)) => Some(Value::Real(v.into())),
        (VariableType::Int32, Value::Integer(v)) => Some(Value::Integer(v)),
        (VariableType::Int32, Value::Real(v)) => integer(v).map(Value::Integer),
        // FMI 2 enumerations are set as Integers; FMI 3 ones are Int64.
        (VariableType::Enumeration, Value::Integer(v)) if version == FmiVersion::V2 => Some(Value::Integer(v)),
        (VariableType::Boolean, Value::Boolean(v)) => Some(Value::Boolean(v)),
        _ => None,
    }
}

/// Up to three variable names close to `name`: a few edits away (typing
/// slips) or sharing most of a prefix (Jaro-Winkler).
fn near_names(description: &ModelDescription, name: &str) -> Vec<String> {
    let wanted = name.to_lowercase();
    let edits_allowed = (wanted.chars().count() / 3).max(1);
    let mut scored: Vec<(usize, f64, &str)> = description
        .variables
        .iter()
        .map(|v| {
            let candidate = v.name.to_lowercase();
            let edits = strsim::damerau_levenshtein(&candidate, &wanted);
            (edits, strsim::jaro_winkler(&candidate, &wanted), v.name.as_str())
        })
        .filter(|&(edits, similarity, _)| edits <= edits_allowed || similarity > 0.85)
        .collect();
    scored.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.total_cmp(&a.1)));
    scored.into_iter().take(3).map(|(_, _, n)| n.to_string()).collect()
}
