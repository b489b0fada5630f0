//! The `modelDescription.xml` of an exported FMU, in FMI 3.0 or FMI 2.0:
//! a Co-Simulation interface, the default experiment, and Float64 (Real)
//! variables: time (independent), the inputs with their defaults as start
//! values, the outputs, and the block parameters with their values as
//! start values (tunable or fixed).

use std::borrow::Cow;
use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;

use tandem_models::Layout;
use tandem_runtime::{FixedStep, Solver};

use super::FmiVersion;
use crate::parameters::Parameter;
use crate::variables::{self, Counts};

/// A variable's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Causality {
    Independent,
    Input,
    Output,
    Parameter,
}

impl Causality {
    fn name(self) -> &'static str {
        match self {
            Causality::Independent => "independent",
            Causality::Input => "input",
            Causality::Output => "output",
            Causality::Parameter => "parameter",
        }
    }
}

/// One variable as described.
struct Described<'a> {
    name: Cow<'a, str>,
    vr: u32,
    causality: Causality,
    /// `continuous`, `tunable` or `fixed`.
    variability: &'static str,
    start: Option<f64>,
    unit: Option<&'a str>,
}

/// What the model description says.
pub struct Description<'a> {
    name: &'a str,
    identifier: &'a str,
    token: &'a str,
    settings: &'a FixedStep,
    /// Time, the inputs, the outputs and the parameters: in
    /// value-reference order.
    variables: Vec<Described<'a>>,
}

/// A name two variables of an exported FMU share.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("two variables are named \"{0}\"")]
pub struct SharedName(pub String);

impl<'a> Description<'a> {
    /// The description of a model of this layout exposing `parameters`;
    /// the error is a name two variables share.
    pub fn new(
        name: &'a str,
        identifier: &'a str,
        token: &'a str,
        layout: &'a Layout,
        parameters: &'a [Parameter],
        settings: &'a FixedStep,
    ) -> Result<Description<'a>, SharedName> {
        let parameter_names: Vec<String> = parameters.iter().map(Parameter::name).collect();
        let mut seen = HashSet::new();
        let names = layout.inputs.iter().chain(&layout.outputs).map(|v| &v.name);
        for name in names.chain(&parameter_names) {
            if !seen.insert(name.as_str()) {
                return Err(SharedName(name.clone()));
            }
        }
        let counts = Counts::of(layout, parameters.len());
        let time = Described {
            name: Cow::Owned(variables::time_name(layout)),
            vr: variables::TIME,
            causality: Causality::Independent,
            variability: "continuous",
            start: None,
            unit: Some("s"),
        };
        let inputs = layout.inputs.iter().enumerate().map(|(i, v)| Described {
            name: Cow::Borrowed(&v.name),
            vr: variables::input(i),
            causality: Causality::Input,
            variability: "continuous",
            start: Some(v.default),
            unit: v.unit.as_deref(),
        });
        let outputs = layout.outputs.iter().enumerate().map(|(i, v)| Described {
            name: Cow::Borrowed(&v.name),
            vr: variables::output(layout.inputs.len(), i),
            causality: Causality::Output,
            variability: "continuous",
            start: None,
            unit: v.unit.as_deref(),
        });
        let parameters = parameters
            .iter()
            .zip(parameter_names)
            .enumerate()
            .map(|(i, (p, name))| Described {
                name: Cow::Owned(name),
                vr: variables::parameter(counts, i),
                causality: Causality::Parameter,
                variability: if p.tunable { "tunable" } else { "fixed" },
                start: Some(p.start_value()),
                unit: None,
            });
        Ok(Description {
            name,
            identifier,
            token,
            settings,
            variables: std::iter::once(time)
                .chain(inputs)
                .chain(outputs)
                .chain(parameters)
                .collect(),
        })
    }

    /// The XML text for FMI `version`.
    pub fn xml(&self, version: FmiVersion) -> String {
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let tool = concat!("Tandem ", env!("CARGO_PKG_VERSION"));
        let (token, state, extra) = match version {
            FmiVersion::Fmi3 => (
                "instantiationToken",
                "canGetAndSetFMUState=\"true\" canSerializeFMUState=\"false\"",
                format!(
                    " fixedInternalStepSize=\"{:?}\" hasEventMode=\"false\"",
                    self.settings.step
                ),
            ),
            FmiVersion::Fmi2 => (
                "guid",
                "canGetAndSetFMUstate=\"true\" canSerializeFMUstate=\"false\"",
                " canNotUseMemoryManagementFunctions=\"true\"".to_string(),
            ),
        };
        let _ = writeln!(
            x,
            "<fmiModelDescription fmiVersion=\"{version}\" modelName=\"{}\" {token}=\"{}\" generationTool=\"{tool}\" variableNamingConvention=\"flat\">",
            escape(self.name),
            escape(self.token)
        );
        let _ = writeln!(
            x,
            "  <CoSimulation modelIdentifier=\"{}\" canHandleVariableCommunicationStepSize=\"true\" {state}{extra}/>",
            self.identifier
        );
        let units: BTreeSet<&str> = self.variables.iter().filter_map(|v| v.unit).collect();
        if !units.is_empty() {
            x.push_str("  <UnitDefinitions>\n");
            for unit in units {
                let _ = writeln!(x, "    <Unit name=\"{}\"/>", escape(unit));
            }
            x.push_str("  </UnitDefinitions>\n");
        }
        x.push_str("  <LogCategories>\n    <Category name=\"logStatusError\" description=\"A call refused or failed, and why\"/>\n  </LogCategories>\n");
        let tolerance = match self.settings.solver {
            Solver::Bdf { rtol, .. } => format!(" tolerance=\"{rtol:?}\""),
            Solver::Explicit(_) => String::new(),
        };
        let _ = writeln!(
            x,
            "  <DefaultExperiment startTime=\"0\" stopTime=\"{:?}\"{tolerance} stepSize=\"{:?}\"/>",
            self.settings.stop, self.settings.step
        );
        x.push_str("  <ModelVariables>\n");
        for v in &self.variables {
            let mut attributes = String::new();
            if let Some(start) = v.start {
                let _ = write!(attributes, " start=\"{start:?}\"");
            }
            if let Some(unit) = v.unit {
                let _ = write!(attributes, " unit=\"{}\"", escape(unit));
            }
            let head = format!(
                "name=\"{}\" valueReference=\"{}\" causality=\"{}\" variability=\"{}\"",
                escape(&v.name),
                v.vr,
                v.causality.name(),
                v.variability
            );
            let _ = match version {
                FmiVersion::Fmi3 => writeln!(x, "    <Float64 {head}{attributes}/>"),
                FmiVersion::Fmi2 => writeln!(x, "    <ScalarVariable {head}><Real{attributes}/></ScalarVariable>"),
            };
        }
        x.push_str("  </ModelVariables>\n  <ModelStructure>\n");
        let outputs: Vec<(usize, u32)> = self
            .variables
            .iter()
            .enumerate()
            .filter(|(_, v)| v.causality == Causality::Output)
            .map(|(index, v)| (index + 1, v.vr))
            .collect();
        match version {
            FmiVersion::Fmi3 => {
                for element in ["Output", "InitialUnknown"] {
                    for (_, vr) in &outputs {
                        let _ = writeln!(x, "    <{element} valueReference=\"{vr}\"/>");
                    }
                }
            }
            FmiVersion::Fmi2 if !outputs.is_empty() => {
                for element in ["Outputs", "InitialUnknowns"] {
                    let _ = writeln!(x, "    <{element}>");
                    for (index, _) in &outputs {
                        let _ = writeln!(x, "      <Unknown index=\"{index}\"/>");
                    }
                    let _ = writeln!(x, "    </{element}>");
                }
            }
            FmiVersion::Fmi2 => {}
        }
        x.push_str("  </ModelStructure>\n</fmiModelDescription>\n");
        x
    }
}

/// `text` as an XML attribute value.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\n' => escaped.push_str("&#10;"),
            '\t' => escaped.push_str("&#9;"),
            '\r' => escaped.push_str("&#13;"),
            // XML 1.0 has no other control characters, not even escaped.
            c if c.is_control() => escaped.push(' '),
            c => escaped.push(c),
        }
    }
    escaped
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_models::Variable;
    use tandem_runtime::Method;

    fn layout() -> Layout {
        let mut speed = Variable::new("v");
        speed.unit = Some("m/s".into());
        let mut pedal = Variable::new("pedal <0..1>");
        pedal.default = 0.5;
        Layout {
            inputs: vec![pedal],
            outputs: vec![speed, Variable::new("time")],
            ..Layout::default()
        }
    }

    fn parameters() -> Vec<Parameter> {
        vec![
            Parameter {
                block: "k".into(),
                param: "gain".into(),
                start: serde_json::json!(2.5),
                tunable: true,
            },
            Parameter {
                block: "sub/e".into(),
                param: "inputs".into(),
                start: serde_json::json!(2),
                tunable: false,
            },
        ]
    }

    const SETTINGS: FixedStep = FixedStep {
        solver: Solver::Explicit(Method::Rk4),
        step: 0.01,
        stop: 20.0,
    };

    #[test]
    fn fmi3_lists_time_inputs_and_outputs_by_value_reference() {
        let layout = layout();
        let parameters = parameters();
        let d = Description::new("Car & driver", "car", "{t}", &layout, &parameters, &SETTINGS).unwrap();
        let x = d.xml(FmiVersion::Fmi3);
        for expected in [
            "fmiVersion=\"3.0\" modelName=\"Car &amp; driver\" instantiationToken=\"{t}\"",
            "<CoSimulation modelIdentifier=\"car\" canHandleVariableCommunicationStepSize=\"true\" canGetAndSetFMUState=\"true\" canSerializeFMUState=\"false\" fixedInternalStepSize=\"0.01\" hasEventMode=\"false\"/>",
            "<DefaultExperiment startTime=\"0\" stopTime=\"20.0\" stepSize=\"0.01\"/>",
            "<Float64 name=\"time_\" valueReference=\"0\" causality=\"independent\" variability=\"continuous\" unit=\"s\"/>",
            "<Float64 name=\"pedal &lt;0..1&gt;\" valueReference=\"1\" causality=\"input\" variability=\"continuous\" start=\"0.5\"/>",
            "<Float64 name=\"v\" valueReference=\"2\" causality=\"output\" variability=\"continuous\" unit=\"m/s\"/>",
            "<Unit name=\"m/s\"/>",
            "<Output valueReference=\"3\"/>",
            "<InitialUnknown valueReference=\"2\"/>",
            "<Float64 name=\"k.gain\" valueReference=\"4\" causality=\"parameter\" variability=\"tunable\" start=\"2.5\"/>",
            "<Float64 name=\"sub/e.inputs\" valueReference=\"5\" causality=\"parameter\" variability=\"fixed\" start=\"2.0\"/>",
        ] {
            assert!(x.contains(expected), "{expected}\nin\n{x}");
        }
    }

    #[test]
    fn fmi2_indexes_outputs_by_position() {
        let layout = layout();
        let parameters = parameters();
        let x = Description::new("car", "car", "{t}", &layout, &parameters, &SETTINGS)
            .unwrap()
            .xml(FmiVersion::Fmi2);
        for expected in [
            "fmiVersion=\"2.0\" modelName=\"car\" guid=\"{t}\"",
            "canGetAndSetFMUstate=\"true\" canSerializeFMUstate=\"false\" canNotUseMemoryManagementFunctions=\"true\"/>",
            "<ScalarVariable name=\"v\" valueReference=\"2\" causality=\"output\" variability=\"continuous\"><Real unit=\"m/s\"/></ScalarVariable>",
            "<Outputs>\n      <Unknown index=\"3\"/>\n      <Unknown index=\"4\"/>\n    </Outputs>",
            "<ScalarVariable name=\"k.gain\" valueReference=\"4\" causality=\"parameter\" variability=\"tunable\"><Real start=\"2.5\"/></ScalarVariable>",
        ] {
            assert!(x.contains(expected), "{expected}\nin\n{x}");
        }
    }

    #[test]
    fn two_variables_of_one_name_are_refused() {
        let mut layout = layout();
        layout.outputs[1].name = "v".into();
        let e = Description::new("car", "car", "{t}", &layout, &parameters(), &SETTINGS).err();
        assert_eq!(e, Some(SharedName("v".into())));
        let mut layout = self::layout();
        layout.outputs[1].name = "k.gain".into();
        let e = Description::new("car", "car", "{t}", &layout, &parameters(), &SETTINGS).err();
        assert_eq!(e, Some(SharedName("k.gain".into())));
    }
}
