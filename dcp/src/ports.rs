//! A model's ports as DCP variables: each scalar port, or each vector
//! port (elements `name[0]`, `name[1]`, … in a row), becomes one variable
//! with a value reference (inputs from 1, then outputs) and a data type
//! (float64 unless the slave's file says otherwise).

use std::collections::BTreeMap;
use std::ops::Range;

use tandem_models::Variable as Port;

use crate::types::DataType;
use crate::values::{self, ValueError};

/// Whether a variable is an input or an output of its slave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Causality {
    /// Written by others.
    Input,
    /// Written by the slave.
    Output,
}

impl Causality {
    /// The description's element name.
    pub fn element(self) -> &'static str {
        match self {
            Causality::Input => "Input",
            Causality::Output => "Output",
        }
    }
}

/// One DCP variable of a slave.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    /// Its name: the port's, without an element index.
    pub name: String,
    /// Its value reference.
    pub vr: u64,
    /// Input or output.
    pub causality: Causality,
    /// Its type on the wire.
    pub data_type: DataType,
    /// The model's port elements it holds (indices among the inputs or
    /// the outputs).
    pub elements: Range<usize>,
    /// Its unit, if the model states one.
    pub unit: Option<String>,
    /// Its start values (an input's defaults; 0 for outputs).
    pub start: Vec<f64>,
    /// Its range, when the model states one (outputs).
    pub range: Option<(f64, f64)>,
    /// For an output: the value references of the inputs it depends on
    /// directly, when known.
    pub dependencies: Option<Vec<u64>>,
    /// For a binary variable: what its bytes are (`mimeType`), when stated;
    /// [`crate::frames::MIME_TYPE`] for CAN frames.
    pub mime_type: Option<String>,
}

impl Variable {
    /// Whether its values are CAN frames.
    pub fn carries_frames(&self) -> bool {
        self.data_type == DataType::Binary && self.mime_type.as_deref() == Some(crate::frames::MIME_TYPE)
    }

    /// The number of elements.
    pub fn width(&self) -> usize {
        self.elements.len()
    }
}

/// Why a slave's ports cannot be described.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PortError {
    /// A type given for a port the model does not have.
    #[error("the model has no port \"{name}\"; its ports: {ports}")]
    NoSuchPort {
        /// The name given.
        name: String,
        /// The model's variables.
        ports: String,
    },
    /// A type that cannot carry the port.
    #[error("port \"{name}\" cannot be {data_type}: {source}")]
    Type {
        /// The port.
        name: String,
        /// The type given.
        data_type: DataType,
        /// Why.
        source: ValueError,
    },
}

/// A slave's variables: its inputs, then its outputs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ports {
    /// The input variables, value references from 1.
    pub inputs: Vec<Variable>,
    /// The output variables, numbered after the inputs.
    pub outputs: Vec<Variable>,
}

/// The base name and index of a vector element's name (`pos[2]` is
/// `("pos", 2)`).
fn element(name: &str) -> Option<(&str, usize)> {
    let (base, rest) = name.strip_suffix(']')?.rsplit_once('[')?;
    Some((base, rest.parse().ok()?))
}

/// Groups ports into variables: a run of `x[0]`, `x[1]`, … is one.
fn group(ports: &[Port]) -> Vec<(String, Range<usize>)> {
    let mut groups: Vec<(String, Range<usize>)> = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        match element(&port.name) {
            Some((base, k)) if k > 0 => {
                if let Some(last) = groups.last_mut().filter(|(name, r)| name == base && r.len() == k) {
                    last.1.end = i + 1;
                    continue;
                }
                groups.push((port.name.clone(), i..i + 1));
            }
            Some((base, _)) => groups.push((base.to_string(), i..i + 1)),
            None => groups.push((port.name.clone(), i..i + 1)),
        }
    }
    groups
}

impl Ports {
    /// The variables of a model with `inputs` and `outputs`; `types` gives
    /// a variable's type by name (float64 otherwise); `feedthrough` lists,
    /// for each output port, the input ports it depends on, when known.
    pub fn of(
        inputs: &[Port],
        outputs: &[Port],
        types: &BTreeMap<String, DataType>,
        feedthrough: Option<&[Vec<usize>]>,
    ) -> Result<Ports, PortError> {
        let mut vr = 0;
        let mut make = |ports: &[Port], causality| -> Result<Vec<Variable>, PortError> {
            group(ports)
                .into_iter()
                .map(|(name, elements)| {
                    vr += 1;
                    let data_type = types.get(&name).copied().unwrap_or(DataType::Float64);
                    let start: Vec<f64> = ports[elements.clone()].iter().map(|p| p.default).collect();
                    let type_error = |source| PortError::Type {
                        name: name.clone(),
                        data_type,
                        source,
                    };
                    if data_type == DataType::String && elements.len() != 1 {
                        return Err(type_error(ValueError::Width {
                            data_type,
                            expected: "one number",
                            width: elements.len(),
                        }));
                    }
                    for &v in &start {
                        values::check(data_type, v).map_err(type_error)?;
                    }
                    let first = &ports[elements.start];
                    Ok(Variable {
                        name,
                        vr,
                        causality,
                        data_type,
                        unit: first.unit.clone(),
                        range: first.range,
                        start,
                        elements,
                        dependencies: None,
                        mime_type: None,
                    })
                })
                .collect()
        };
        let mut ports = Ports {
            inputs: make(inputs, Causality::Input)?,
            outputs: make(outputs, Causality::Output)?,
        };
        if let Some(name) = types.keys().find(|n| ports.variable(n).is_none()) {
            let all: Vec<&str> = ports.all().map(|v| v.name.as_str()).collect();
            return Err(PortError::NoSuchPort {
                name: name.clone(),
                ports: all.join(", "),
            });
        }
        if let Some(lists) = feedthrough {
            let vr_of = |port: usize| ports.inputs.iter().find(|v| v.elements.contains(&port)).map(|v| v.vr);
            let deps: Vec<Option<Vec<u64>>> = ports
                .outputs
                .iter()
                .map(|out| {
                    let mut vrs: Vec<u64> = out
                        .elements
                        .clone()
                        .flat_map(|o| lists[o].iter().filter_map(|&i| vr_of(i)))
                        .collect();
                    vrs.sort_unstable();
                    vrs.dedup();
                    Some(vrs)
                })
                .collect();
            for (out, d) in ports.outputs.iter_mut().zip(deps) {
                out.dependencies = d;
            }
        }
        Ok(ports)
    }

    /// Every variable, inputs first.
    pub fn all(&self) -> impl Iterator<Item = &Variable> {
        self.inputs.iter().chain(&self.outputs)
    }

    /// The variable named `name`.
    pub fn variable(&self, name: &str) -> Option<&Variable> {
        self.all().find(|v| v.name == name)
    }

    /// The variable with value reference `vr`.
    pub fn by_vr(&self, vr: u64) -> Option<&Variable> {
        self.all().find(|v| v.vr == vr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports(names: &[&str]) -> Vec<Port> {
        names.iter().map(|n| Port::new(*n)).collect()
    }

    #[test]
    fn vector_elements_become_one_variable_and_numbers_follow_on() {
        let inputs = ports(&["u", "pos[0]", "pos[1]", "pos[2]", "w"]);
        let outputs = ports(&["y[0]", "y[1]", "z"]);
        let types = BTreeMap::from([("w".to_string(), DataType::Int8)]);
        let p = Ports::of(&inputs, &outputs, &types, Some(&[vec![4], vec![], vec![0, 1]])).unwrap();
        let names: Vec<(&str, u64, usize)> = p.all().map(|v| (v.name.as_str(), v.vr, v.width())).collect();
        assert_eq!(
            names,
            [("u", 1, 1), ("pos", 2, 3), ("w", 3, 1), ("y", 4, 2), ("z", 5, 1)]
        );
        assert_eq!(p.inputs[2].data_type, DataType::Int8);
        assert_eq!(p.outputs[0].dependencies, Some(vec![3]));
        assert_eq!(p.outputs[1].dependencies, Some(vec![1, 2]));
    }

    #[test]
    fn a_type_for_no_port_or_that_cannot_carry_it_is_refused() {
        let inputs = ports(&["u"]);
        let types = BTreeMap::from([("v".to_string(), DataType::Int8)]);
        let e = Ports::of(&inputs, &[], &types, None).unwrap_err();
        assert_eq!(e.to_string(), "the model has no port \"v\"; its ports: u");
        let mut inputs = ports(&["gear"]);
        inputs[0].default = 300.0;
        let types = BTreeMap::from([("gear".to_string(), DataType::Uint8)]);
        let e = Ports::of(&inputs, &[], &types, None).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("port \"gear\" cannot be uint8: 300 is outside"),
            "{e}"
        );
    }
}
