//! Values given by name to parameters (and inputs) before initialisation:
//! checked against the model description once, then set on every new
//! instance.

use crate::description::{
    Causality, FmiVersion, Initial, ModelDescription, Numeric, ScalarVariable, Variability, VariableType,
};
use crate::error::FmuError;
use crate::instance::{Instance, Text};
use crate::signals::Signals;

/// A value for a variable.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// For a variable of a numeric type: a float, an integer (whole and in
    /// the type's range) or a Boolean (0 or 1).
    Real(f64),
    /// For a variable of a numeric type (in its range).
    Integer(i32),
    /// For a Boolean variable.
    Boolean(bool),
    /// For a String variable (its text), a Binary one (hexadecimal digits,
    /// two per byte), or any other, in its type's notation in
    /// `modelDescription.xml` (`true`, `-3`, `2.5e-3`).
    Text(String),
}

impl Value {
    fn type_name(&self) -> &'static str {
        match self {
            Value::Real(_) => "Real",
            Value::Integer(_) => "Integer",
            Value::Boolean(_) => "Boolean",
            Value::Text(_) => "text",
        }
    }

    /// The value as a command line or a file writes it: `true`/`false`, a
    /// number, or else text.
    pub fn parse(text: &str) -> Value {
        match text {
            "true" => Value::Boolean(true),
            "false" => Value::Boolean(false),
            _ => text
                .parse::<f64>()
                .map_or_else(|_| Value::Text(text.to_string()), Value::Real),
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

impl From<&str> for Value {
    fn from(v: &str) -> Self {
        Value::Text(v.to_string())
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
#[derive(Clone, Debug)]
pub(crate) struct Assignment {
    vr: u32,
    value: Checked,
}

/// A value in the form its FMI call takes.
#[derive(Clone, Debug)]
enum Checked {
    Number(Numeric, f64),
    Text(Text, Vec<u8>),
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
            settable(description.version, variable).map_err(|reason| FmuError::NotSettable {
                fmu: fmu(),
                name: name.clone(),
                why: reason.to_string(),
            })?;
            let value = converted(description.version, variable, value).ok_or_else(|| FmuError::WrongType {
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

/// Makes the values `assignments` give inputs the defaults of those
/// inputs among `signals`: an input given a start value holds it until
/// something drives it.
pub(crate) fn input_defaults(description: &ModelDescription, assignments: &[Assignment], signals: &mut Signals) {
    for (variable, &source) in signals.variables.iter_mut().zip(&signals.sources) {
        let vr = description.variables[source].value_reference;
        let given = assignments.iter().rev().find_map(|a| match a.value {
            Checked::Number(_, value) if a.vr == vr => Some(value),
            _ => None,
        });
        if let Some(value) = given {
            variable.default = value;
        }
    }
}

/// Sets the checked values on a new instance.
pub(crate) fn apply(instance: &mut dyn Instance, assignments: &[Assignment]) -> Result<(), FmuError> {
    for a in assignments {
        match &a.value {
            Checked::Number(Numeric::Float64, v) => instance.set_real(&[a.vr], &[*v])?,
            Checked::Number(ty, v) => instance.set_numbers(*ty, &[a.vr], &[*v])?,
            Checked::Text(ty, bytes) => instance.set_text(*ty, a.vr, bytes)?,
        }
    }
    Ok(())
}

/// Whether a variable may be set before initialisation, and why not: as
/// the standard says (FMI 2 section 3.2.3, FMI 3 section 2.3.3), a
/// variable that is not a constant and is a parameter or input, or has
/// `initial="exact"` or `"approx"` (a state's or an output's start value).
fn settable(version: FmiVersion, variable: &ScalarVariable) -> Result<(), NotSettable> {
    if variable.array {
        return Err(NotSettable::Array);
    }
    if matches!(variable.kind, VariableType::Clock | VariableType::Other(_)) {
        return Err(NotSettable::NoValue(variable.kind.to_string()));
    }
    if variable.variability == Variability::Constant {
        return Err(NotSettable::Constant);
    }
    match variable.causality {
        Causality::Parameter | Causality::Input => Ok(()),
        Causality::StructuralParameter => Err(NotSettable::Structural),
        other => match effective_initial(version, variable) {
            Some(Initial::Exact) | Some(Initial::Approx) => Ok(()),
            _ => Err(NotSettable::Calculated(other.name())),
        },
    }
}

/// Why a variable takes no start value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
enum NotSettable {
    /// An array.
    #[error("it is an array, which this importer does not set")]
    Array,
    /// A type with no value (a Clock), by name.
    #[error("its type {0} has no value to set")]
    NoValue(String),
    /// A constant.
    #[error("it is a constant")]
    Constant,
    /// A structural parameter.
    #[error("it is a structural parameter, set only in Configuration Mode, which this importer does not enter")]
    Structural,
    /// Its initial value is the FMU's to calculate; its causality.
    #[error(
        "its causality is \"{0}\" and its initial value is calculated by the FMU (only parameters, inputs and \
         variables with initial=\"exact\" or \"approx\" take a start value)"
    )]
    Calculated(&'static str),
}

/// The `initial` a variable has, given or by the standard's default for its
/// causality and variability (FMI 2 table in section 2.2.7; FMI 3 alike):
/// calculated parameters, outputs and locals default to calculated, except
/// constants (exact); a variable with a start value and no `initial` of a
/// causality that allows exact is taken as exact.
fn effective_initial(version: FmiVersion, variable: &ScalarVariable) -> Option<Initial> {
    let _ = version;
    variable.initial.or(match variable.causality {
        Causality::Parameter | Causality::Input | Causality::StructuralParameter => Some(Initial::Exact),
        Causality::Independent => None,
        _ if variable.variability == Variability::Constant => Some(Initial::Exact),
        _ => Some(Initial::Calculated),
    })
}

/// `value` in the form the call for `variable` takes, if it fits its type.
fn converted(version: FmiVersion, variable: &ScalarVariable, value: &Value) -> Option<Checked> {
    match &variable.kind {
        VariableType::String => {
            let text = match value {
                Value::Text(t) => t.clone(),
                Value::Real(v) => v.to_string(),
                Value::Integer(v) => v.to_string(),
                Value::Boolean(v) => v.to_string(),
            };
            return Some(Checked::Text(Text::String, text.into_bytes()));
        }
        VariableType::Binary => {
            let Value::Text(t) = value else {
                return None;
            };
            return hex(t).map(|bytes| Checked::Text(Text::Binary, bytes));
        }
        _ => {}
    }
    let ty = variable.kind.numeric(version)?;
    let number = match value {
        Value::Real(v) => *v,
        Value::Integer(v) => f64::from(*v),
        Value::Boolean(v) if ty == Numeric::Boolean => f64::from(u8::from(*v)),
        Value::Boolean(_) => return None,
        Value::Text(t) => match Value::parse(t) {
            Value::Text(_) => return None,
            other => return converted(version, variable, &other),
        },
    };
    if ty == Numeric::Boolean && matches!(value, Value::Real(_) | Value::Integer(_)) && number != 0.0 && number != 1.0 {
        return None;
    }
    // A number the type does not hold exactly (a fraction for an integer,
    // a value out of its range) is refused, not rounded.
    (ty.coerce(number) == number || (ty == Numeric::Float32 && number.is_finite()))
        .then_some(Checked::Number(ty, number))
}

/// The bytes of a Binary value written as hexadecimal digits (two per
/// byte, an optional `0x` before them).
fn hex(text: &str) -> Option<Vec<u8>> {
    let digits = text.strip_prefix("0x").unwrap_or(text);
    if !digits.len().is_multiple_of(2) {
        return None;
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(digits.get(i..i + 2)?, 16).ok())
        .collect()
}

/// Up to three variable names close to `name`: a few edits away (typing
/// slips) or sharing most of a prefix (Jaro-Winkler).
pub(crate) fn near_names(description: &ModelDescription, name: &str) -> Vec<String> {
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
