//! Reading `modelDescription.xml` (FMI 2.0 or 3.0) into a
//! [`ModelDescription`], with the line and column of every mistake.
//!
//! The two versions differ in a few attribute names, in how a variable's
//! type is written (a child of `ScalarVariable` in FMI 2, the element's own
//! name in FMI 3) and in how variables are referred to (1-based index in
//! FMI 2, value reference in FMI 3); [`Dialect`] holds those differences
//! and everything else is read once.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

use roxmltree::{Document, Node};

use crate::description::{
    Alias, Causality, DefaultExperiment, Dimension, FmiVersion, Initial, Interface, ModelDescription, ModelStructure,
    Numeric, ScalarVariable, Unknown, Variability, VariableType,
};
use crate::error::FmuError;

/// The most variables a model description may declare.
pub const MAX_VARIABLES: usize = 1_000_000;

/// The differences between the FMI 2 and FMI 3 schemas that matter here.
struct Dialect {
    version: FmiVersion,
    token: &'static str,
    can_get_and_set_state: &'static str,
    can_serialize_state: &'static str,
    directional_derivatives: &'static str,
}

const FMI2: Dialect = Dialect {
    version: FmiVersion::V2,
    token: "guid",
    can_get_and_set_state: "canGetAndSetFMUstate",
    can_serialize_state: "canSerializeFMUstate",
    directional_derivatives: "providesDirectionalDerivative",
};

const FMI3: Dialect = Dialect {
    version: FmiVersion::V3,
    token: "instantiationToken",
    can_get_and_set_state: "canGetAndSetFMUState",
    can_serialize_state: "canSerializeFMUState",
    directional_derivatives: "providesDirectionalDerivatives",
};

/// Unit and range a declared type gives the variables of that type.
#[derive(Clone, Default)]
struct TypeDefaults {
    unit: Option<String>,
    display_unit: Option<String>,
    min: Option<f64>,
    max: Option<f64>,
}

/// The references of the variables read that are resolved once all are
/// read, by the index of the variable holding them.
#[derive(Default)]
struct Pending {
    /// Each derivative's reference to its state.
    derivatives: Vec<(usize, RawReference)>,
    /// Each array dimension given by a structural parameter: the variable,
    /// the dimension's position and the parameter's value reference.
    dimensions: Vec<(usize, usize, RawReference)>,
    /// Each variable's clocks.
    clocks: Vec<(usize, RawReference)>,
}

/// The variables read, and the references to resolve.
type Variables = (Vec<ScalarVariable>, Pending);

/// A reference to a variable as written, resolved once all are read.
struct RawReference {
    value: u32,
    line: u32,
    column: u32,
}

/// The parser's context: the document, for positions, and the FMU, for
/// messages.
struct Reader<'a, 'input> {
    file: &'a Path,
    doc: &'a Document<'input>,
    dialect: &'static Dialect,
}

impl ModelDescription {
    /// Parses the text of `modelDescription.xml`; `file` (the FMU) is named
    /// in errors.
    pub fn parse(xml: &str, file: &Path) -> Result<ModelDescription, FmuError> {
        let doc = Document::parse(xml).map_err(|e| {
            let pos = e.pos();
            FmuError::Description {
                file: file.to_path_buf(),
                line: pos.row,
                column: pos.col,
                message: format!("malformed XML: {e}"),
                help: "fix the XML (an editor or xmllint shows where it breaks)".to_string(),
            }
        })?;
        let root = doc.root_element();
        let mut reader = Reader {
            file,
            doc: &doc,
            dialect: &FMI2,
        };
        if !root.has_tag_name("fmiModelDescription") {
            return Err(reader.error(
                root,
                format!(
                    "the root element is <{}>, not <fmiModelDescription>",
                    root.tag_name().name()
                ),
                "this is not an FMI model description",
            ));
        }
        reader.dialect = match root.attribute("fmiVersion") {
            Some("2.0") => &FMI2,
            Some(v) if v == "3.0" || v.strip_prefix("3.0.").is_some_and(|p| p.parse::<u32>().is_ok()) => &FMI3,
            found => {
                return Err(reader.error(
                    root,
                    format!(
                        "unsupported FMI version {}; supported: \"2.0\" and \"3.0\"",
                        found.map_or("(no fmiVersion attribute)".to_string(), |v| format!("\"{v}\""))
                    ),
                    "export the FMU as FMI 2.0 or 3.0",
                ))
            }
        };
        reader.description(root)
    }
}

impl<'a, 'input> Reader<'a, 'input> {
    fn description(&self, root: Node<'a, 'input>) -> Result<ModelDescription, FmuError> {
        let model_name = self.required(root, "modelName")?.to_string();
        let token = self.required(root, self.dialect.token)?.to_string();
        let mut model_exchange = None;
        let mut co_simulation = None;
        let mut scheduled_execution = false;
        let mut default_experiment = DefaultExperiment::default();
        let mut types = HashMap::new();
        for child in root.children().filter(Node::is_element) {
            match child.tag_name().name() {
                "ModelExchange" => model_exchange = Some(self.interface(child)?),
                "CoSimulation" => co_simulation = Some(self.interface(child)?),
                "ScheduledExecution" => scheduled_execution = true,
                "DefaultExperiment" => default_experiment = self.default_experiment(child)?,
                "TypeDefinitions" => types = self.type_definitions(child)?,
                _ => {}
            }
        }
        if model_exchange.is_none() && co_simulation.is_none() && scheduled_execution {
            return Err(self.error(
                root,
                "only <ScheduledExecution> (FMI 3 Scheduled Execution) is declared, which Tandem does not run: it \
                 runs Model Exchange and Co-Simulation"
                    .to_string(),
                "export the FMU with Model Exchange or Co-Simulation (its clocks then tick in event mode), or run \
                 it with an importer that schedules model partitions",
            ));
        }
        if model_exchange.is_none() && co_simulation.is_none() {
            return Err(self.error(
                root,
                "neither <ModelExchange> nor <CoSimulation> is declared".to_string(),
                "declare the interface the binary implements",
            ));
        }
        let variables_node = self.child(root, "ModelVariables")?;
        let (mut variables, pending) = self.variables(variables_node, &types)?;
        let index = self.index(&variables);
        for (i, raw) in pending.derivatives {
            variables[i].derivative_of = Some(self.resolve(&index, &variables, &raw, "derivative")?);
        }
        // Dimensions and clocks are FMI 3's, which refers by value reference.
        let by_vr: HashMap<u32, usize> = variables
            .iter()
            .enumerate()
            .map(|(i, v)| (v.value_reference, i))
            .collect();
        for (i, position, raw) in pending.dimensions {
            let p = self.resolve(&by_vr, &variables, &raw, "<Dimension valueReference>")?;
            let parameter = &variables[p];
            if !matches!(
                parameter.causality,
                Causality::StructuralParameter | Causality::Parameter | Causality::CalculatedParameter
            ) || parameter.kind.numeric(FmiVersion::V3).is_none_or(|n| !n.is_integer())
            {
                return Err(FmuError::Description {
                    file: self.file.to_path_buf(),
                    line: raw.line,
                    column: raw.column,
                    message: format!(
                        "a dimension of \"{}\" refers to \"{}\", which is not an integer structural parameter \
                         (it is a {} {})",
                        variables[i].name,
                        parameter.name,
                        parameter.kind,
                        parameter.causality.name()
                    ),
                    help: "refer to a structural parameter of an integer type (UInt64 as a rule)".to_string(),
                });
            }
            variables[i].dimensions[position] = Dimension::Parameter(p);
        }
        for (i, raw) in pending.clocks {
            let c = self.resolve(&by_vr, &variables, &raw, "clocks")?;
            variables[i].clocks.push(c);
        }
        let structure = self.structure(self.child(root, "ModelStructure")?, root, &index, &variables)?;
        Ok(ModelDescription {
            version: self.dialect.version,
            model_name,
            token,
            model_exchange,
            co_simulation,
            scheduled_execution,
            default_experiment,
            variables,
            structure,
        })
    }

    fn interface(&self, node: Node) -> Result<Interface, FmuError> {
        let completed_step = match self.dialect.version {
            FmiVersion::V2 => !self.flag(node, "completedIntegratorStepNotNeeded")?,
            FmiVersion::V3 => self.flag(node, "needsCompletedIntegratorStep")?,
        };
        Ok(Interface {
            model_identifier: self.required(node, "modelIdentifier")?.to_string(),
            can_get_and_set_state: self.flag(node, self.dialect.can_get_and_set_state)?,
            can_serialize_state: self.flag(node, self.dialect.can_serialize_state)?,
            can_handle_variable_step: self.flag(node, "canHandleVariableCommunicationStepSize")?,
            once_per_process: self.flag(node, "canBeInstantiatedOnlyOncePerProcess")?,
            needs_completed_integrator_step: completed_step,
            provides_directional_derivatives: self.flag(node, self.dialect.directional_derivatives)?,
        })
    }

    fn default_experiment(&self, node: Node) -> Result<DefaultExperiment, FmuError> {
        Ok(DefaultExperiment {
            start: self.number(node, "startTime")?,
            stop: self.number(node, "stopTime")?,
            tolerance: self.number(node, "tolerance")?,
            step: self.number(node, "stepSize")?,
        })
    }

    /// Unit and range of each declared type, by name.
    fn type_definitions(&self, node: Node) -> Result<HashMap<String, TypeDefaults>, FmuError> {
        let mut types = HashMap::new();
        for ty in node.children().filter(Node::is_element) {
            // FMI 2 nests the type in <SimpleType>; FMI 3 names it <Float64Type>.
            let (name, body) = match self.dialect.version {
                FmiVersion::V2 => match ty.children().find(Node::is_element) {
                    Some(body) => (self.required(ty, "name")?, body),
                    None => continue,
                },
                FmiVersion::V3 => (self.required(ty, "name")?, ty),
            };
            let defaults = TypeDefaults {
                unit: body.attribute("unit").map(str::to_string),
                display_unit: body.attribute("displayUnit").map(str::to_string),
                min: self.number(body, "min")?,
                max: self.number(body, "max")?,
            };
            types.insert(name.to_string(), defaults);
        }
        Ok(types)
    }

    /// The variables, and the references to resolve once all are read.
    fn variables(&self, node: Node<'a, 'input>, types: &HashMap<String, TypeDefaults>) -> Result<Variables, FmuError> {
        let mut variables = Vec::new();
        let mut pending = Pending::default();
        for element in node.children().filter(Node::is_element) {
            if variables.len() == MAX_VARIABLES {
                return Err(self.error(
                    element,
                    format!("more than {MAX_VARIABLES} variables, the bound on a model description"),
                    "this is not a plausible FMU; check where it came from",
                ));
            }
            // FMI 2: <ScalarVariable ...><Real .../></ScalarVariable>;
            // FMI 3: <Float64 .../> carries everything.
            let body = match self.dialect.version {
                FmiVersion::V2 => element.children().find(Node::is_element).ok_or_else(|| {
                    self.error(
                        element,
                        "a ScalarVariable without a type element (<Real>, <Integer>, ...)".to_string(),
                        "give the variable its type element",
                    )
                })?,
                FmiVersion::V3 => element,
            };
            let name = self.required(element, "name")?.to_string();
            let kind = VariableType::from_element(body.tag_name().name());
            let declared = body
                .attribute("declaredType")
                .and_then(|t| types.get(t))
                .cloned()
                .unwrap_or_default();
            let causality = self.causality(element)?;
            let variability = match element.attribute("variability") {
                Some(text) => self.variability(element, text)?,
                None if matches!(kind, VariableType::Number(Numeric::Float64 | Numeric::Float32)) => {
                    Variability::Continuous
                }
                None => Variability::Discrete,
            };
            let initial = self.initial(element, &name)?;
            let start_text = self.start_text(body);
            let start = self.start(body, start_text.as_deref(), &name, &kind)?;
            let index = variables.len();
            if let Some(attr) = body.attribute_node("derivative") {
                pending.derivatives.push((index, self.raw_reference(body, attr)?));
            }
            let dimensions = self.dimensions(body, index, &name, &mut pending)?;
            self.clocks(body, index, &name, &mut pending)?;
            let aliases = body
                .children()
                .filter(|c| c.has_tag_name("Alias"))
                .map(|a| {
                    Ok(Alias {
                        name: self.required(a, "name")?.to_string(),
                        display_unit: a.attribute("displayUnit").map(str::to_string),
                    })
                })
                .collect::<Result<Vec<_>, FmuError>>()?;
            variables.push(ScalarVariable {
                value_reference: self.parsed(element, "valueReference")?.ok_or_else(|| {
                    self.error(
                        element,
                        format!("variable \"{name}\" has no valueReference"),
                        "give every variable a valueReference",
                    )
                })?,
                name,
                causality,
                variability,
                initial,
                start,
                start_text,
                unit: body.attribute("unit").map(str::to_string).or(declared.unit),
                display_unit: body
                    .attribute("displayUnit")
                    .map(str::to_string)
                    .or(declared.display_unit),
                min: self.number(body, "min")?.or(declared.min),
                max: self.number(body, "max")?.or(declared.max),
                kind,
                derivative_of: None,
                array: !dimensions.is_empty(),
                dimensions,
                aliases,
                clocks: Vec::new(),
                line: self.position(element).0,
            });
        }
        Ok((variables, pending))
    }

    /// The `initial` attribute of the variable `name`, if it has one.
    fn initial(&self, element: Node, name: &str) -> Result<Option<Initial>, FmuError> {
        Ok(match element.attribute("initial") {
            None => None,
            Some("exact") => Some(Initial::Exact),
            Some("approx") => Some(Initial::Approx),
            Some("calculated") => Some(Initial::Calculated),
            Some(other) => {
                return Err(self.error(
                    element,
                    format!("variable \"{name}\": unknown initial=\"{other}\""),
                    "use exact, approx or calculated",
                ))
            }
        })
    }

    /// The `<Dimension>`s of the array variable `index` (none for a
    /// scalar); sizes held by structural parameters are left to resolve.
    fn dimensions(
        &self,
        body: Node,
        index: usize,
        name: &str,
        pending: &mut Pending,
    ) -> Result<Vec<Dimension>, FmuError> {
        let mut dimensions = Vec::new();
        for (position, d) in body.children().filter(|c| c.has_tag_name("Dimension")).enumerate() {
            match (d.attribute("start"), d.attribute_node("valueReference")) {
                (Some(_), _) => dimensions.push(Dimension::Fixed(self.parsed(d, "start")?.unwrap_or(0))),
                (None, Some(attr)) => {
                    dimensions.push(Dimension::Fixed(0));
                    pending.dimensions.push((index, position, self.raw_reference(d, attr)?));
                }
                (None, None) => {
                    return Err(self.error(
                        d,
                        format!("a <Dimension> of \"{name}\" has neither start nor valueReference"),
                        "give the dimension its size (start) or the structural parameter holding it",
                    ))
                }
            }
        }
        Ok(dimensions)
    }

    /// The clocks the variable `index` is attached to, left to resolve.
    fn clocks(&self, body: Node, index: usize, name: &str, pending: &mut Pending) -> Result<(), FmuError> {
        if let Some(list) = body.attribute("clocks") {
            let (line, column) = self.position(body);
            for item in list.split_whitespace() {
                let value = item.parse().map_err(|_| {
                    self.error(
                        body,
                        format!("clocks=\"{list}\" of \"{name}\" is not a list of value references"),
                        "list the clocks' value references separated by spaces",
                    )
                })?;
                pending.clocks.push((index, RawReference { value, line, column }));
            }
        }
        Ok(())
    }

    fn causality(&self, node: Node) -> Result<Causality, FmuError> {
        Ok(match node.attribute("causality").unwrap_or("local") {
            "parameter" => Causality::Parameter,
            "calculatedParameter" => Causality::CalculatedParameter,
            "input" => Causality::Input,
            "output" => Causality::Output,
            "local" => Causality::Local,
            "independent" => Causality::Independent,
            "structuralParameter" if self.dialect.version == FmiVersion::V3 => Causality::StructuralParameter,
            other => {
                return Err(self.error(
                    node,
                    format!("unknown causality \"{other}\""),
                    "use parameter, calculatedParameter, input, output, local or independent",
                ))
            }
        })
    }

    fn variability(&self, node: Node, text: &str) -> Result<Variability, FmuError> {
        Ok(match text {
            "constant" => Variability::Constant,
            "fixed" => Variability::Fixed,
            "tunable" => Variability::Tunable,
            "discrete" => Variability::Discrete,
            "continuous" => Variability::Continuous,
            other => {
                return Err(self.error(
                    node,
                    format!("unknown variability \"{other}\""),
                    "use constant, fixed, tunable, discrete or continuous",
                ))
            }
        })
    }

    /// The start value as written: the `start` attribute, or FMI 3's
    /// `<Start value="..."/>` elements of a String or Binary (one per array
    /// element, joined by spaces).
    fn start_text(&self, node: Node) -> Option<String> {
        if let Some(text) = node.attribute("start") {
            return Some(text.to_string());
        }
        let values: Vec<&str> = node
            .children()
            .filter(|c| c.has_tag_name("Start"))
            .filter_map(|c| c.attribute("value"))
            .collect();
        (!values.is_empty()).then(|| values.join(" "))
    }

    /// The start value as a number; of an array, its first element.
    fn start(&self, node: Node, text: Option<&str>, name: &str, kind: &VariableType) -> Result<Option<f64>, FmuError> {
        let Some(text) = text else {
            return Ok(None);
        };
        let first = text.split_whitespace().next().unwrap_or("");
        let value = match kind {
            VariableType::Number(Numeric::Boolean) => match first {
                "true" | "1" => Some(1.0),
                "false" | "0" => Some(0.0),
                _ => None,
            },
            VariableType::String | VariableType::Binary | VariableType::Clock | VariableType::Other(_) => {
                return Ok(None)
            }
            _ => first.parse::<f64>().ok(),
        };
        match value {
            Some(v) => Ok(Some(v)),
            None => Err(self.error(
                node,
                format!("variable \"{name}\": start value \"{text}\" is not a {kind}"),
                "write the start value as the variable's type",
            )),
        }
    }

    fn raw_reference(&self, node: Node, attr: roxmltree::Attribute) -> Result<RawReference, FmuError> {
        let (line, column) = self.position(node);
        let value = attr.value().trim().parse().map_err(|_| {
            self.error(
                node,
                format!(
                    "{}=\"{}\" is not a {}",
                    attr.name(),
                    attr.value(),
                    self.reference_kind()
                ),
                "refer to a variable as the standard says",
            )
        })?;
        Ok(RawReference { value, line, column })
    }

    /// How references are written in this version.
    fn reference_kind(&self) -> &'static str {
        match self.dialect.version {
            FmiVersion::V2 => "1-based variable index",
            FmiVersion::V3 => "value reference",
        }
    }

    /// The index of each variable by the number references use: its 1-based
    /// position (FMI 2) or its value reference (FMI 3).
    fn index(&self, variables: &[ScalarVariable]) -> HashMap<u32, usize> {
        match self.dialect.version {
            FmiVersion::V2 => (0..variables.len()).map(|i| (i as u32 + 1, i)).collect(),
            FmiVersion::V3 => variables
                .iter()
                .enumerate()
                .map(|(i, v)| (v.value_reference, i))
                .collect(),
        }
    }

    fn resolve(
        &self,
        index: &HashMap<u32, usize>,
        variables: &[ScalarVariable],
        raw: &RawReference,
        what: &str,
    ) -> Result<usize, FmuError> {
        index.get(&raw.value).copied().ok_or_else(|| FmuError::Description {
            file: self.file.to_path_buf(),
            line: raw.line,
            column: raw.column,
            message: format!(
                "{what} refers to {} {}, which is not a variable ({} variables are declared)",
                self.reference_kind(),
                raw.value,
                variables.len()
            ),
            help: "refer only to variables declared in <ModelVariables>".to_string(),
        })
    }

    fn structure(
        &self,
        node: Node,
        root: Node,
        index: &HashMap<u32, usize>,
        variables: &[ScalarVariable],
    ) -> Result<ModelStructure, FmuError> {
        let mut structure = ModelStructure::default();
        let unknowns = |list: &mut Vec<Unknown>, element: Node| -> Result<(), FmuError> {
            list.push(self.unknown(element, index, variables)?);
            Ok(())
        };
        match self.dialect.version {
            FmiVersion::V2 => {
                for group in node.children().filter(Node::is_element) {
                    let list = match group.tag_name().name() {
                        "Outputs" => &mut structure.outputs,
                        "Derivatives" => &mut structure.derivatives,
                        "InitialUnknowns" => &mut structure.initial_unknowns,
                        _ => continue,
                    };
                    for element in group.children().filter(|c| c.has_tag_name("Unknown")) {
                        unknowns(list, element)?;
                    }
                }
                structure.event_indicators = self.parsed(root, "numberOfEventIndicators")?.unwrap_or(0);
                if structure.event_indicators > MAX_VARIABLES {
                    return Err(self.error(
                        root,
                        format!(
                            "numberOfEventIndicators=\"{}\" is more than {MAX_VARIABLES}, the bound on a model description",
                            structure.event_indicators
                        ),
                        "this is not a plausible FMU; check where it came from",
                    ));
                }
            }
            FmiVersion::V3 => {
                for element in node.children().filter(Node::is_element) {
                    match element.tag_name().name() {
                        "Output" => unknowns(&mut structure.outputs, element)?,
                        "ContinuousStateDerivative" => unknowns(&mut structure.derivatives, element)?,
                        "InitialUnknown" => unknowns(&mut structure.initial_unknowns, element)?,
                        "EventIndicator" => {
                            let indicator = self.unknown(element, index, variables)?;
                            if variables[indicator.variable].array {
                                return Err(self.error(
                                    element,
                                    format!(
                                        "the event indicator \"{}\" is an array, which this importer does not handle",
                                        variables[indicator.variable].name
                                    ),
                                    "export the FMU with scalar event indicators",
                                ));
                            }
                            structure.event_indicators += 1;
                        }
                        _ => {}
                    }
                }
            }
        }
        for d in &structure.derivatives {
            if variables[d.variable].derivative_of.is_none() {
                let (line, column) = self.position(node);
                return Err(FmuError::Description {
                    file: self.file.to_path_buf(),
                    line,
                    column,
                    message: format!(
                        "variable \"{}\" is listed as a state derivative but has no derivative attribute",
                        variables[d.variable].name
                    ),
                    help: "give the derivative variable derivative=\"<its state>\"".to_string(),
                });
            }
        }
        Ok(structure)
    }

    /// An `Unknown` (FMI 2) or `Output`/`ContinuousStateDerivative`/...
    /// (FMI 3) element.
    fn unknown(
        &self,
        node: Node,
        index: &HashMap<u32, usize>,
        variables: &[ScalarVariable],
    ) -> Result<Unknown, FmuError> {
        let attribute = match self.dialect.version {
            FmiVersion::V2 => "index",
            FmiVersion::V3 => "valueReference",
        };
        let attr = node.attribute_node(attribute).ok_or_else(|| {
            self.error(
                node,
                format!("<{}> has no {attribute} attribute", node.tag_name().name()),
                "name the variable it is about",
            )
        })?;
        let what = format!("<{}>", node.tag_name().name());
        let variable = self.resolve(index, variables, &self.raw_reference(node, attr)?, &what)?;
        let dependencies = match node.attribute("dependencies") {
            None => None,
            Some(list) => Some(
                list.split_whitespace()
                    .map(|item| {
                        let (line, column) = self.position(node);
                        let value = item.parse().map_err(|_| {
                            self.error(
                                node,
                                format!("dependency \"{item}\" is not a {}", self.reference_kind()),
                                "list the dependencies as numbers separated by spaces",
                            )
                        })?;
                        self.resolve(index, variables, &RawReference { value, line, column }, "a dependency")
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
        };
        Ok(Unknown { variable, dependencies })
    }

    fn child(&self, node: Node<'a, 'input>, name: &str) -> Result<Node<'a, 'input>, FmuError> {
        node.children().find(|c| c.has_tag_name(name)).ok_or_else(|| {
            self.error(
                node,
                format!("<{}> has no <{name}> element", node.tag_name().name()),
                "the FMI standard requires it; export the FMU again",
            )
        })
    }

    fn required<'n>(&self, node: Node<'n, 'input>, name: &str) -> Result<&'n str, FmuError> {
        node.attribute(name).ok_or_else(|| {
            self.error(
                node,
                format!("<{}> has no {name} attribute", node.tag_name().name()),
                "the FMI standard requires it; export the FMU again",
            )
        })
    }

    fn flag(&self, node: Node, name: &str) -> Result<bool, FmuError> {
        match node.attribute(name) {
            None | Some("false") | Some("0") => Ok(false),
            Some("true") | Some("1") => Ok(true),
            Some(other) => Err(self.error(
                node,
                format!("{name}=\"{other}\" is not a Boolean"),
                "write true or false",
            )),
        }
    }

    fn number(&self, node: Node, name: &str) -> Result<Option<f64>, FmuError> {
        self.parsed(node, name)
    }

    fn parsed<T: FromStr>(&self, node: Node, name: &str) -> Result<Option<T>, FmuError> {
        match node.attribute(name) {
            None => Ok(None),
            Some(text) => text.trim().parse().map(Some).map_err(|_| {
                self.error(
                    node,
                    format!("{name}=\"{text}\" is not a valid number here"),
                    "write the value as the FMI standard's schema says",
                )
            }),
        }
    }

    fn position(&self, node: Node) -> (u32, u32) {
        let pos = self.doc.text_pos_at(node.range().start);
        (pos.row, pos.col)
    }

    fn error(&self, node: Node, message: String, help: &str) -> FmuError {
        let (line, column) = self.position(node);
        FmuError::Description {
            file: self.file.to_path_buf(),
            line,
            column,
            message,
            help: help.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::description::{FmiVersion, ModelDescription, Numeric, VariableType};
    use crate::error::FmuError;

    fn parse(xml: &str) -> Result<ModelDescription, FmuError> {
        ModelDescription::parse(xml, Path::new("test.fmu"))
    }

    const FMI2: &str = r#"<fmiModelDescription fmiVersion="2.0" modelName="m" guid="g" numberOfEventIndicators="2">
  <ModelExchange modelIdentifier="m" completedIntegratorStepNotNeeded="true" canGetAndSetFMUstate="true" canSerializeFMUstate="true"/>
  <TypeDefinitions><SimpleType name="Angle"><Real unit="rad" min="-4"/></SimpleType></TypeDefinitions>
  <ModelVariables>
    <ScalarVariable name="phi" valueReference="7" causality="output"><Real declaredType="Angle" max="4" start="0.5"/></ScalarVariable>
    <ScalarVariable name="der(phi)" valueReference="8"><Real derivative="1"/></ScalarVariable>
    <ScalarVariable name="n" valueReference="1" causality="parameter" variability="fixed"><Integer start="3"/></ScalarVariable>
    <ScalarVariable name="on" valueReference="1" causality="parameter" variability="fixed"><Boolean start="true"/></ScalarVariable>
  </ModelVariables>
  <ModelStructure>
    <Outputs><Unknown index="1"/></Outputs>
    <Derivatives><Unknown index="2" dependencies=""/></Derivatives>
  </ModelStructure>
</fmiModelDescription>"#;

    #[test]
    fn fmi2_references_are_indices_and_types_give_units_and_ranges() {
        let d = parse(FMI2).unwrap();
        assert_eq!(d.version, FmiVersion::V2);
        let me = d.model_exchange.as_ref().unwrap();
        assert!(!me.needs_completed_integrator_step && me.can_get_and_set_state && !me.once_per_process);
        assert!(me.can_serialize_state);
        assert_eq!(d.states(), [0]);
        let phi = &d.variables[0];
        assert_eq!(
            (phi.unit.as_deref(), phi.min, phi.max, phi.start),
            (Some("rad"), Some(-4.0), Some(4.0), Some(0.5))
        );
        assert_eq!(d.variables[1].derivative_of, Some(0));
        assert_eq!(d.variables[2].kind, VariableType::Number(Numeric::Int32));
        assert_eq!(d.variables[3].start, Some(1.0));
        // No dependencies attribute: unknown; an empty one: none.
        assert_eq!(d.structure.outputs[0].dependencies, None);
        assert_eq!(d.structure.derivatives[0].dependencies, Some(vec![]));
        assert_eq!(d.structure.event_indicators, 2);
        assert_eq!(d.names_of(1).collect::<Vec<_>>(), ["n", "on"]);
    }

    #[test]
    fn fmi3_references_are_value_references_and_arrays_are_marked() {
        let xml = r#"<fmiModelDescription fmiVersion="3.0" modelName="m" instantiationToken="t">
  <CoSimulation modelIdentifier="c" canGetAndSetFMUState="true" canBeInstantiatedOnlyOncePerProcess="true"/>
  <ModelVariables>
    <Float64 name="time" valueReference="0" causality="independent" variability="continuous"/>
    <Float64 name="x" valueReference="10" start="1 2"><Dimension start="2"/></Float64>
    <Float64 name="der(x)" valueReference="11" derivative="10"><Dimension start="2"/></Float64>
    <UInt16 name="k" valueReference="12" causality="parameter" variability="fixed" start="5"/>
    <Float64 name="z" valueReference="13"/>
  </ModelVariables>
  <ModelStructure>
    <ContinuousStateDerivative valueReference="11" dependencies="10"/>
    <EventIndicator valueReference="13"/>
    <EventIndicator valueReference="13"/>
  </ModelStructure>
</fmiModelDescription>"#;
        let d = parse(xml).unwrap();
        let cs = d.co_simulation.as_ref().unwrap();
        assert!(cs.can_get_and_set_state && cs.once_per_process && !cs.can_serialize_state);
        assert_eq!(d.states(), [1]);
        assert!(d.variables[1].array);
        assert_eq!(d.variables[1].start, Some(1.0));
        assert_eq!(d.variables[3].kind, VariableType::Number(Numeric::UInt16));
        assert_eq!(d.structure.derivatives[0].dependencies, Some(vec![1]));
        assert_eq!(d.structure.event_indicators, 2);
        // An array of indicators would hide how many there are.
        let arrays = xml.replace(
            "<EventIndicator valueReference=\"13\"/>",
            "<EventIndicator valueReference=\"10\"/>",
        );
        let text = parse(&arrays).unwrap_err().to_string();
        assert!(text.contains("the event indicator \"x\" is an array"), "{text}");
    }

    #[test]
    fn counts_past_their_bounds_are_refused() {
        let xml = FMI2.replace(
            "numberOfEventIndicators=\"2\"",
            "numberOfEventIndicators=\"1000000000000\"",
        );
        let text = parse(&xml).unwrap_err().to_string();
        assert!(
            text.contains("numberOfEventIndicators=\"1000000000000\" is more than 1000000"),
            "{text}"
        );
    }

    #[test]
    fn a_derivative_without_its_state_is_refused() {
        let xml = FMI2.replace(" derivative=\"1\"", "");
        let text = parse(&xml).unwrap_err().to_string();
        assert!(
            text.contains("variable \"der(phi)\" is listed as a state derivative but has no derivative attribute"),
            "{text}"
        );
    }

    #[test]
    fn an_fmu_without_interface_is_refused() {
        let xml = FMI2.replace(
            "<ModelExchange modelIdentifier=\"m\" completedIntegratorStepNotNeeded=\"true\" canGetAndSetFMUstate=\"true\" canSerializeFMUstate=\"true\"/>",
            "",
        );
        let text = parse(&xml).unwrap_err().to_string();
        assert!(
            text.contains(
                "test.fmu\": modelDescription.xml:1:1: neither <ModelExchange> nor <CoSimulation> is declared"
            ),
            "{text}"
        );
    }
}
