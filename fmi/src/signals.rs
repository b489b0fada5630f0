//! The FMU's Real/Float64 inputs and outputs as Tandem variables, with
//! their value references.

use std::collections::HashMap;

use tandem_models::Variable;

use crate::description::{Causality, ModelDescription, ScalarVariable, Variability, VariableType};
use crate::error::FmuError;

/// Variables and their value references, in declaration order.
#[derive(Clone, Debug, Default)]
pub(crate) struct Signals {
    pub variables: Vec<Variable>,
    pub vrs: Vec<u32>,
}

/// Which inputs a run can drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inputs {
    /// Continuous ones only (Model Exchange sets inputs between events).
    Continuous,
    /// Any (Co-Simulation sets them between steps).
    All,
}

/// The Real/Float64 inputs (default: the start value).
pub(crate) fn inputs(description: &ModelDescription, which: Inputs) -> Result<Signals, FmuError> {
    collect(description, |v| {
        v.causality == Causality::Input && (which == Inputs::All || v.variability == Variability::Continuous)
    })
}

/// The Real/Float64 outputs, with unit and range.
pub(crate) fn outputs(description: &ModelDescription) -> Result<Signals, FmuError> {
    collect(description, |v| v.causality == Causality::Output)
}

fn collect(description: &ModelDescription, wanted: impl Fn(&ScalarVariable) -> bool) -> Result<Signals, FmuError> {
    let mut signals = Signals::default();
    for v in description
        .variables
        .iter()
        .filter(|v| v.kind == VariableType::Float64 && wanted(v))
    {
        if v.array {
            return Err(array_error(description, v, v.causality.name()));
        }
        let range = (v.min.is_some() || v.max.is_some())
            .then(|| (v.min.unwrap_or(f64::NEG_INFINITY), v.max.unwrap_or(f64::INFINITY)));
        signals.variables.push(Variable {
            name: v.name.clone(),
            unit: v.unit.clone(),
            default: if v.causality == Causality::Input {
                v.start.unwrap_or(0.0)
            } else {
                0.0
            },
            range: if v.causality == Causality::Output { range } else { None },
        });
        signals.vrs.push(v.value_reference);
    }
    Ok(signals)
}

/// The most (output, input) pairs a feedthrough table holds.
pub const MAX_FEEDTHROUGH: usize = 10_000_000;

/// For each output of `outputs`, the positions in `inputs` of the inputs it
/// depends on directly, from the model structure's output dependencies (all
/// inputs when an output's are not stated, or the output is not listed).
pub(crate) fn feedthrough(
    description: &ModelDescription,
    inputs: &Signals,
    outputs: &Signals,
) -> Result<Vec<Vec<usize>>, FmuError> {
    let (n_in, n_out) = (inputs.vrs.len(), outputs.vrs.len());
    if n_in.saturating_mul(n_out) > MAX_FEEDTHROUGH {
        return Err(FmuError::Unsupported {
            fmu: description.model_name.clone(),
            what: format!(
                "{n_in} inputs and {n_out} outputs: the table of which output depends on which input would hold more \
                 than {MAX_FEEDTHROUGH} pairs"
            ),
            help: "group the inputs and outputs into fewer variables",
        });
    }
    let positions = |of: &Signals| -> HashMap<u32, usize> { of.vrs.iter().enumerate().map(|(i, &r)| (r, i)).collect() };
    let (input_at, output_at) = (positions(inputs), positions(outputs));
    let all: Vec<usize> = (0..n_in).collect();
    let mut lists = vec![all; n_out];
    for unknown in &description.structure.outputs {
        let Some(&output) = output_at.get(&description.variables[unknown.variable].value_reference) else {
            continue;
        };
        if let Some(dependencies) = &unknown.dependencies {
            lists[output] = dependencies
                .iter()
                .filter(|&&d| description.variables[d].causality == Causality::Input)
                .filter_map(|&d| input_at.get(&description.variables[d].value_reference).copied())
                .collect();
        }
    }
    Ok(lists)
}

/// The error of an array where a scalar is needed.
pub(crate) fn array_error(description: &ModelDescription, v: &ScalarVariable, role: &str) -> FmuError {
    FmuError::Unsupported {
        fmu: description.model_name.clone(),
        what: format!(
            "the {role} \"{}\" (modelDescription.xml line {}) is an array, which this importer does not handle",
            v.name, v.line
        ),
        help: "export the FMU with scalar variables",
    }
}
