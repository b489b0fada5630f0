//! SSP import (System Structure and Parameterization, SSP 1.0 and 2.0): a
//! `.ssp` package's `SystemStructure.ssd` read into a co-simulation
//! system: each FMU component a sub-model, each connection a coupling with
//! the scale and offset of its unit conversion and `LinearTransformation`,
//! parameter sets (`.ssv`, in a file or inline) with their parameter
//! mappings (`.ssm`) as the FMUs' start values, the default experiment's
//! stop time as the run's.
//!
//! The system is written as a `tandem cosim` system file (`cosim/SYSTEM.md`)
//! beside the unpacked package and read as one, so that every check of a
//! system file holds; errors name the package's file, the element's line
//! and column, and what to do, where the SSP says something this import
//! does not take.
//!
//! The package is untrusted input: entries that are absolute, climb out
//! with `..` or are symbolic links are refused, as are more than
//! [`MAX_ENTRIES`] entries, more than [`MAX_UNPACKED`] bytes unpacked and
//! XML files larger than [`MAX_XML`]; every source an element names must
//! stay inside the package.
//!
//! A connector's unit is the one the SSD gives it, else its FMU
//! variable's; where both ends of a connection have one and they differ,
//! the value is converted by the two units' `BaseUnit`s as the SSD's (or a
//! parameter set's) `Units` declare them, unless the connection suppresses
//! unit conversion; a `LinearTransformation` applies after the unit
//! conversion, as the standard says. A parameter value with a unit other
//! than its FMU variable's is converted the same way.
//!
//! Not taken, each refused with its element, every element and
//! connection refused named in one [`SspError::Refused`]: nested systems, signal
//! dictionaries, components other than FMUs, connections to the system's
//! own connectors, Boolean/Integer/Enumeration mapping transformations,
//! String and Binary parameter values, a default experiment that does not
//! start at 0.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io::{self, Read as _};
use std::path::{Component, Path, PathBuf};

use roxmltree::{Document, Node};
use tandem_fmi::{Fmu, InterfaceKind, ModelDescription};

use crate::system::{load_as, Loading, Parts, System, SystemError};

/// Why an SSP package cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SspError {
    /// The package cannot be read or unpacked.
    #[error("{}: {message}\n  help: {help}", file.display())]
    Package {
        /// The `.ssp` file.
        file: PathBuf,
        /// What is wrong.
        message: String,
        /// What to do.
        help: String,
    },
    /// A file of the package says something wrong or not taken.
    #[error("{}: {part}:{line}:{column}: {message}\n  help: {help}", file.display())]
    Content {
        /// The `.ssp` file.
        file: PathBuf,
        /// The file inside it (`SystemStructure.ssd`, a `.ssv`, a `.ssm`).
        part: String,
        /// Line, from 1.
        line: u32,
        /// Column, from 1.
        column: u32,
        /// What is wrong or not taken.
        message: String,
        /// What to do.
        help: String,
    },
    /// Several elements of the package are not taken: each refusal (a
    /// [`SspError::Content`] or [`SspError::Package`]), one after the other.
    #[error("{}: {} parts of the package are not taken:\n{}", file.display(), refusals.len(), listed(refusals))]
    Refused {
        /// The `.ssp` file.
        file: PathBuf,
        /// Each part's refusal.
        refusals: Vec<SspError>,
    },
    /// The system it describes, as a system file, is refused.
    #[error("{}: as a co-simulation system: {error}", file.display())]
    System {
        /// The `.ssp` file.
        file: PathBuf,
        /// Why.
        error: Box<SystemError>,
    },
}

/// `refusals`, one after the other.
fn listed(refusals: &[SspError]) -> String {
    refusals.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n")
}

/// The most bytes a package unpacks to: 2 GiB.
pub const MAX_UNPACKED: u64 = 2 << 30;
/// The most entries a package holds.
pub const MAX_ENTRIES: usize = 65_536;
/// The largest XML file read (`.ssd`, `.ssv`, `.ssm`): 64 MiB.
pub const MAX_XML: u64 = 64 << 20;

/// The smallest macro step taken from an FMU's default experiment is no
/// longer than the run's stop time over this.
const STEPS_AT_LEAST: f64 = 500.0;
/// The micro step of a Model Exchange FMU without a default step (s).
const MICRO_STEP: f64 = 0.001;

/// An SSP package read: what it holds, its unpacked files kept while its
/// system runs.
pub struct Package {
    /// The unpacked package, removed when this is dropped.
    _dir: tempfile::TempDir,
    /// One line per component and connection, for `tandem check`.
    pub summary: Vec<String>,
    /// Each component's name and its FMU, unpacked.
    pub components: Vec<(String, PathBuf)>,
}

/// Whether `path` names an SSP package (by its extension, `.ssp`).
pub fn is_ssp(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("ssp"))
}

/// Reads the SSP package `file` and loads the system it describes, its
/// FMUs loaded as `loading` says. The macro step is the smallest default
/// step of its FMUs, at most a 500th of the run, shortened to a whole
/// number of steps to the stop time (the default experiment's, else 1 s).
pub fn load(file: &Path, loading: Loading) -> Result<(System, Package), SspError> {
    load_parts(file, loading, Parts::Participants)
}

/// [`load`], its components loaded as `parts`.
pub(crate) fn load_parts(file: &Path, loading: Loading, parts: Parts) -> Result<(System, Package), SspError> {
    let dir = unpack(file)?;
    let text = read_xml(file, &dir.path().join("SystemStructure.ssd"), "SystemStructure.ssd")?;
    let reader = Reader {
        file,
        part: "SystemStructure.ssd".to_string(),
    };
    let doc = Document::parse(&text).map_err(|e| reader.xml_error(&e))?;
    let translated = translate(&reader, &doc, dir.path())?;
    let system_file = dir.path().join("system.toml");
    fs::write(&system_file, &translated.text).map_err(|e| {
        package_error(
            file,
            format!("cannot write {}: {e}", system_file.display()),
            "check the temporary folder's space",
        )
    })?;
    let system = load_as(&system_file, loading, parts).map_err(|error| SspError::System {
        file: file.to_path_buf(),
        error: Box::new(error),
    })?;
    let package = Package {
        _dir: dir,
        summary: translated.summary,
        components: translated.components,
    };
    Ok((system, package))
}

/// The system file's text, the summary lines and the components.
struct Translated {
    text: String,
    summary: Vec<String>,
    components: Vec<(String, PathBuf)>,
}

/// A connector of a component: its kind and the unit the SSD gives it.
#[derive(Clone, Debug)]
struct Connector {
    kind: String,
    unit: Option<String>,
}

/// A unit of `Units`: its base units' exponents, factor and offset.
#[derive(Clone, Debug, PartialEq)]
struct Unit {
    exponents: [i32; 8],
    factor: f64,
    offset: f64,
}

/// A parameter value read from a parameter set: the name it sets, its
/// value, the unit it is given in, and where.
struct Value {
    name: String,
    value: f64,
    unit: Option<String>,
    place: Place,
}

/// A place in one of the package's XML files.
#[derive(Clone)]
struct Place {
    part: String,
    line: u32,
    column: u32,
}

/// Reads one XML file of the package, for positions in messages.
struct Reader<'a> {
    file: &'a Path,
    part: String,
}

impl Reader<'_> {
    /// Where `node` is.
    fn place(&self, node: Node) -> Place {
        let pos = node.document().text_pos_at(node.range().start);
        Place {
            part: self.part.clone(),
            line: pos.row,
            column: pos.col,
        }
    }

    /// An error at `node`.
    fn error(&self, node: Node, message: String, help: &str) -> SspError {
        at(self.file, &self.place(node), message, help)
    }

    /// The XML parser's error, at its position.
    fn xml_error(&self, e: &roxmltree::Error) -> SspError {
        let pos = e.pos();
        SspError::Content {
            file: self.file.to_path_buf(),
            part: self.part.clone(),
            line: pos.row,
            column: pos.col,
            message: format!("malformed XML: {e}"),
            help: "fix the XML (xmllint shows where it breaks)".to_string(),
        }
    }

    /// The attribute `name` of `node`, which the standard requires.
    fn required<'n>(&self, node: Node<'n, '_>, name: &str) -> Result<&'n str, SspError> {
        node.attribute(name).ok_or_else(|| {
            self.error(
                node,
                format!("<{}> has no {name} attribute", node.tag_name().name()),
                "the SSP standard requires it",
            )
        })
    }

    /// The number in attribute `name` of `node`, `default` when absent.
    fn number(&self, node: Node, name: &str, default: f64) -> Result<f64, SspError> {
        match node.attribute(name) {
            None => Ok(default),
            Some(text) => text
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| {
                    self.error(
                        node,
                        format!("{name}=\"{text}\" is not a finite number"),
                        "write the value as a decimal number",
                    )
                }),
        }
    }
}

/// An error at `place` of the package `file`.
fn at(file: &Path, place: &Place, message: String, help: &str) -> SspError {
    SspError::Content {
        file: file.to_path_buf(),
        part: place.part.clone(),
        line: place.line,
        column: place.column,
        message,
        help: help.to_string(),
    }
}

/// The element children of `node` called `name` (any namespace).
fn children<'a, 'i>(node: Node<'a, 'i>, name: &'static str) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children()
        .filter(move |c| c.is_element() && c.tag_name().name() == name)
}

/// The first element child of `node` called `name` (any namespace).
fn child<'a, 'i>(node: Node<'a, 'i>, name: &'static str) -> Option<Node<'a, 'i>> {
    children(node, name).next()
}

/// A component read from `ssd:Elements`.
struct Element {
    name: String,
    /// Its FMU, unpacked.
    fmu: PathBuf,
    /// Its `source` as written.
    source: String,
    /// The FMU, opened.
    opened: Fmu,
    /// Its parameter values, from its own bindings and the system's.
    values: Vec<Value>,
}

/// The SSD as a system file.
fn translate(reader: &Reader, doc: &Document, dir: &Path) -> Result<Translated, SspError> {
    let root = doc.root_element();
    check_root(reader, root)?;
    let mut units = read_units(reader, root)?;
    let system = child(root, "System")
        .ok_or_else(|| reader.error(root, "no <ssd:System>".to_string(), "the SSP standard requires one"))?;
    // What is not taken of the elements and connections is gathered, so
    // that one refusal names every one.
    let mut refused = Vec::new();
    if let Some(dictionary) = child(system, "SignalDictionaries") {
        refused.push(reader.error(
            dictionary,
            "signal dictionaries are not taken by this import".to_string(),
            "connect the components' connectors directly",
        ));
    }
    let stop = experiment_stop(reader, root)?;
    let mut system_values = system_bindings(reader, system, dir, &mut units)?;
    let mut elements = Vec::new();
    // The elements refused, whose connections and bindings are not named
    // again.
    let mut left_out = Vec::new();
    let mut connectors: HashMap<(String, String), Connector> = HashMap::new();
    for element in child(system, "Elements")
        .iter()
        .flat_map(|e| e.children().filter(Node::is_element))
    {
        match read_element(reader, element, dir, &mut units, &mut connectors) {
            Ok(element) => elements.push(element),
            Err(error) => {
                left_out.extend(element.attribute("name"));
                refused.push(error);
            }
        }
    }
    for element in &mut elements {
        element
            .values
            .extend(system_values.remove(&element.name).unwrap_or_default());
    }
    system_values.retain(|name, _| !left_out.contains(&name.as_str()));
    if let Some(name) = system_values.keys().next() {
        return Err(reader.error(
            child(system, "ParameterBindings").unwrap_or(system),
            format!("the system's parameter bindings name \"{name}\", which is no component"),
            "bind parameters of the components, by their dotted names",
        ));
    }
    let step = macro_step(&elements, stop);
    let mut text = String::new();
    let mut summary = Vec::new();
    let _ = writeln!(
        text,
        "# Written by tandem from an SSP package's SystemStructure.ssd.\n[master]\nstep = {}\nstop = {}\n",
        number(step),
        number(stop)
    );
    for element in &elements {
        if let Err(error) = write_model(reader.file, &mut text, element, &units, step) {
            refused.push(error);
            continue;
        }
        summary.push(format!(
            "component {}: {}{}",
            element.name,
            element.source,
            match element.values.len() {
                0 => String::new(),
                1 => ", 1 parameter value".to_string(),
                n => format!(", {n} parameter values"),
            }
        ));
    }
    let descriptions: HashMap<&str, &ModelDescription> = elements
        .iter()
        .map(|e| (e.name.as_str(), e.opened.description()))
        .collect();
    for connection in child(system, "Connections")
        .iter()
        .flat_map(|c| children(*c, "Connection"))
    {
        let ends = [connection.attribute("startElement"), connection.attribute("endElement")];
        if ends.iter().flatten().any(|e| left_out.contains(e)) {
            continue;
        }
        let line = match read_connection(reader, connection, &connectors, &descriptions, &units) {
            Ok(line) => line,
            Err(error) => {
                refused.push(error);
                continue;
            }
        };
        let _ = writeln!(
            text,
            "[[connection]]\nfrom = {}\nto = {}\nscale = {}\noffset = {}\n",
            quoted(&line.from),
            quoted(&line.to),
            number(line.scale),
            number(line.offset)
        );
        summary.push(line.summary());
    }
    match refused.len() {
        0 => {}
        1 => return Err(refused.remove(0)),
        _ => {
            return Err(SspError::Refused {
                file: reader.file.to_path_buf(),
                refusals: refused,
            })
        }
    }
    let components = elements.into_iter().map(|e| (e.name, e.fmu)).collect();
    Ok(Translated {
        text,
        summary,
        components,
    })
}

/// Refuses a document that is not an SSD of SSP 1.x or 2.x.
fn check_root(reader: &Reader, root: Node) -> Result<(), SspError> {
    if root.tag_name().name() != "SystemStructureDescription" {
        return Err(reader.error(
            root,
            format!(
                "the root element is <{}>, not <ssd:SystemStructureDescription>",
                root.tag_name().name()
            ),
            "this is not an SSP system structure description",
        ));
    }
    let version = reader.required(root, "version")?;
    if !(version.starts_with("1.") || version.starts_with("2.")) {
        return Err(reader.error(
            root,
            format!("SSP version \"{version}\" is not one this import takes (1.0, 2.0)"),
            "export the package as SSP 1.0 or 2.0",
        ));
    }
    Ok(())
}

/// The default experiment's stop time (1 s without one); a start other
/// than 0 and a stop not after it are refused.
fn experiment_stop(reader: &Reader, root: Node) -> Result<f64, SspError> {
    let experiment = child(root, "DefaultExperiment");
    let start = experiment.map(|e| reader.number(e, "startTime", 0.0)).transpose()?;
    let stop = experiment
        .map(|e| reader.number(e, "stopTime", 1.0))
        .transpose()?
        .unwrap_or(1.0);
    if let (Some(start), Some(experiment)) = (start, experiment) {
        if start != 0.0 {
            return Err(reader.error(
                experiment,
                format!("startTime=\"{start}\": a co-simulation starts at t = 0"),
                "give the default experiment startTime 0",
            ));
        }
    }
    if stop <= 0.0 {
        return Err(reader.error(
            experiment.unwrap_or(root),
            format!("stopTime=\"{stop}\" is not after the start at t = 0"),
            "give the default experiment a positive stopTime",
        ));
    }
    Ok(stop)
}

/// The system-level parameter bindings by component: their names are
/// `<element>.<variable>`.
fn system_bindings(
    reader: &Reader,
    system: Node,
    dir: &Path,
    units: &mut HashMap<String, Unit>,
) -> Result<HashMap<String, Vec<Value>>, SspError> {
    let mut system_values: HashMap<String, Vec<Value>> = HashMap::new();
    if let Some(bindings) = child(system, "ParameterBindings") {
        for value in read_bindings(reader, bindings, dir, "", units)? {
            match value.name.split_once('.') {
                Some((element, variable)) => system_values.entry(element.to_string()).or_default().push(Value {
                    name: variable.to_string(),
                    ..value
                }),
                None => {
                    return Err(reader.error(
                        bindings,
                        format!(
                            "the system's parameter \"{}\" names no component (write <component>.<variable>)",
                            value.name
                        ),
                        "bind parameters of the components, by their dotted names",
                    ))
                }
            }
        }
    }
    Ok(system_values)
}

/// The macro step: the FMUs' default steps, at most a 500th of the run,
/// then a whole number of them to the stop time.
fn macro_step(elements: &[Element], stop: f64) -> f64 {
    let step = elements
        .iter()
        .filter_map(|e| e.opened.description().default_experiment.step)
        .filter(|s| *s > 0.0)
        .fold(stop / STEPS_AT_LEAST, f64::min);
    stop / (stop / step - 1e-9).ceil().max(1.0)
}

/// One `ssd:Component`: its FMU opened, its connectors recorded in
/// `connectors`, its own parameter bindings read.
fn read_element(
    reader: &Reader,
    element: Node,
    dir: &Path,
    units: &mut HashMap<String, Unit>,
    connectors: &mut HashMap<(String, String), Connector>,
) -> Result<Element, SspError> {
    let tag = element.tag_name().name();
    let name = reader.required(element, "name")?.to_string();
    if tag != "Component" {
        return Err(reader.error(
            element,
            format!("<ssd:{tag}> \"{name}\": only FMU components are taken (no nested systems or signal dictionaries)"),
            "flatten the system so that it holds only FMU components",
        ));
    }
    if name.is_empty() || name.contains('.') {
        return Err(reader.error(
            element,
            format!("component name \"{name}\" is empty or holds a '.'"),
            "name the component without dots",
        ));
    }
    let kind = element.attribute("type").unwrap_or("application/x-fmu-sharedlibrary");
    if kind != "application/x-fmu-sharedlibrary" {
        return Err(reader.error(
            element,
            format!(
                "component \"{name}\" is of type \"{kind}\": only FMUs (application/x-fmu-sharedlibrary) are taken"
            ),
            "export the component as an FMU",
        ));
    }
    let source = reader.required(element, "source")?;
    let path = inside(dir, source).ok_or_else(|| {
        reader.error(
            element,
            format!("component \"{name}\": source \"{source}\" is not a file inside the package"),
            "give the FMU's path inside the package, e.g. resources/model.fmu",
        )
    })?;
    if !path.is_file() {
        return Err(reader.error(
            element,
            format!("component \"{name}\": the package has no file \"{source}\""),
            "put the FMU into the package at that path",
        ));
    }
    let opened = Fmu::open(&path).map_err(|e| {
        reader.error(
            element,
            format!("component \"{name}\": {e}"),
            "check the FMU with tandem check",
        )
    })?;
    for connector in child(element, "Connectors")
        .iter()
        .flat_map(|c| children(*c, "Connector"))
    {
        let cname = reader.required(connector, "name")?.to_string();
        let ckind = reader.required(connector, "kind")?.to_string();
        let unit = connector
            .children()
            .filter(Node::is_element)
            .find_map(|t| t.attribute("unit"))
            .map(str::to_string);
        connectors.insert((name.clone(), cname), Connector { kind: ckind, unit });
    }
    let values = match child(element, "ParameterBindings") {
        Some(bindings) => read_bindings(reader, bindings, dir, &format!("{name}."), units)?,
        None => Vec::new(),
    };
    Ok(Element {
        name,
        fmu: path,
        source: source.to_string(),
        opened,
        values,
    })
}

/// `element` as a `[[model]]` of the system file: its FMU, its micro step
/// when it is integrated by Tandem (Model Exchange only), its parameter
/// values checked against its variables and converted to their units.
fn write_model(
    file: &Path,
    text: &mut String,
    element: &Element,
    units: &HashMap<String, Unit>,
    step: f64,
) -> Result<(), SspError> {
    let _ = writeln!(
        text,
        "[[model]]\nname = {}\nsource = {}",
        quoted(&element.name),
        quoted(&element.fmu.to_string_lossy())
    );
    let description = element.opened.description();
    if description.interface(InterfaceKind::CoSimulation).is_none() {
        // A whole number of micro steps to the macro step.
        let micro = description
            .default_experiment
            .step
            .filter(|s| *s > 0.0)
            .unwrap_or(MICRO_STEP);
        let micro = step / (step / micro.min(step) - 1e-9).ceil().max(1.0);
        let _ = writeln!(text, "step = {}", number(micro));
    }
    // A later binding of the same variable overrides an earlier one.
    let mut list: Vec<(&str, f64)> = Vec::new();
    for value in &element.values {
        let Some(variable) = description.variable(&value.name) else {
            return Err(at(
                file,
                &value.place,
                format!("component \"{}\" has no variable \"{}\"", element.name, value.name),
                "name a variable of the FMU's modelDescription.xml (tandem check lists them)",
            ));
        };
        let mut v = value.value;
        if let (Some(given), Some(wanted)) = (&value.unit, &variable.unit) {
            let (scale, offset) = conversion(units, given, wanted).map_err(|why| {
                at(
                    file,
                    &value.place,
                    format!("parameter \"{}\": {why}", value.name),
                    UNIT_HELP,
                )
            })?;
            v = scale * v + offset;
        }
        match list.iter_mut().find(|(name, _)| *name == value.name) {
            Some(kept) => kept.1 = v,
            None => list.push((&value.name, v)),
        }
    }
    if !list.is_empty() {
        let list: Vec<String> = list
            .iter()
            .map(|(name, v)| format!("{} = {}", quoted(name), number(*v)))
            .collect();
        let _ = writeln!(text, "parameters = {{ {} }}", list.join(", "));
    }
    text.push('\n');
    Ok(())
}

/// A connection as the system file takes it.
struct Line {
    from: String,
    to: String,
    scale: f64,
    offset: f64,
}

impl Line {
    /// The connection as the summary lists it, with its conversion when
    /// it has one.
    fn summary(&self) -> String {
        let conversion = if self.scale != 1.0 || self.offset != 0.0 {
            format!(" (× {} + {})", self.scale, self.offset)
        } else {
            String::new()
        };
        format!("connection {} → {}{conversion}", self.from, self.to)
    }
}

/// One `ssd:Connection`: its ends checked against the components, its
/// unit conversion and `LinearTransformation` as a scale and offset.
fn read_connection(
    reader: &Reader,
    connection: Node,
    connectors: &HashMap<(String, String), Connector>,
    descriptions: &HashMap<&str, &ModelDescription>,
    units: &HashMap<String, Unit>,
) -> Result<Line, SspError> {
    let (Some(from_element), Some(to_element)) =
        (connection.attribute("startElement"), connection.attribute("endElement"))
    else {
        return Err(reader.error(
            connection,
            "a connection to the system's own connectors is not taken (only component to component)".to_string(),
            "connect the components directly",
        ));
    };
    let from_connector = reader.required(connection, "startConnector")?;
    let to_connector = reader.required(connection, "endConnector")?;
    let ends = [
        (
            from_element,
            from_connector,
            ["output", "calculatedParameter"].as_slice(),
        ),
        (to_element, to_connector, ["input"].as_slice()),
    ];
    for (element, connector, wanted) in ends {
        let Some(description) = descriptions.get(element) else {
            return Err(reader.error(
                connection,
                format!("the connection names component \"{element}\", which the system does not have"),
                "connect components of <ssd:Elements>",
            ));
        };
        if description.variable(connector).is_none() {
            return Err(reader.error(
                connection,
                format!("component \"{element}\" has no variable \"{connector}\""),
                "name a variable of the FMU's modelDescription.xml (tandem check lists them)",
            ));
        }
        if let Some(c) = connectors.get(&(element.to_string(), connector.to_string())) {
            if !wanted.contains(&c.kind.as_str()) {
                return Err(reader.error(
                    connection,
                    format!(
                        "connector \"{element}.{connector}\" is of kind \"{}\", which cannot be at this end of a connection",
                        c.kind
                    ),
                    "connect outputs to inputs",
                ));
            }
        }
    }
    let (mut scale, mut offset) = (1.0, 0.0);
    let suppress = matches!(connection.attribute("suppressUnitConversion"), Some("true" | "1"));
    // A connector's unit is the SSD's, else its FMU variable's (SSP 1.0
    // and 2.0, section 4.5.1, the type's unit attribute).
    let unit_of = |e: &str, c: &str| {
        connectors
            .get(&(e.to_string(), c.to_string()))
            .and_then(|k| k.unit.as_deref())
            .or_else(|| descriptions.get(e)?.variable(c)?.unit.as_deref())
    };
    if let (false, Some(a), Some(b)) = (
        suppress,
        unit_of(from_element, from_connector),
        unit_of(to_element, to_connector),
    ) {
        (scale, offset) =
            conversion(units, a, b).map_err(|why| reader.error(connection, why.to_string(), UNIT_HELP))?;
    }
    for transformation in connection.children().filter(Node::is_element) {
        match transformation.tag_name().name() {
            "LinearTransformation" => {
                let factor = reader.number(transformation, "factor", 1.0)?;
                let add = reader.number(transformation, "offset", 0.0)?;
                (scale, offset) = (factor * scale, factor * offset + add);
            }
            "Annotations" | "ConnectionGeometry" => {}
            other => {
                return Err(reader.error(
                    transformation,
                    format!("<ssc:{other}> on a connection is not taken (only LinearTransformation)"),
                    "map the values inside the FMUs, or drop the transformation",
                ))
            }
        }
    }
    Ok(Line {
        from: format!("{from_element}.{from_connector}"),
        to: format!("{to_element}.{to_connector}"),
        scale,
        offset,
    })
}

/// What to do about a unit that cannot be converted.
const UNIT_HELP: &str =
    "declare both units with their base units in <ssd:Units>, or set suppressUnitConversion=\"true\"";

/// Why a value in one unit cannot be converted into another.
#[derive(Debug, thiserror::Error)]
enum Unconvertible {
    /// One of the units is not declared.
    #[error("unit \"{name}\" is not declared in <ssd:Units>, so \"{from}\" cannot be converted to \"{to}\"")]
    Undeclared {
        /// The unit not declared.
        name: String,
        /// The unit converted from.
        from: String,
        /// The unit converted to.
        to: String,
    },
    /// Their base units differ.
    #[error("unit \"{from}\" cannot be converted to \"{to}\": their base units differ")]
    BaseUnits {
        /// The unit converted from.
        from: String,
        /// The unit converted to.
        to: String,
    },
}

/// The scale and offset converting a value in unit `from` into unit `to`
/// (their factors and offsets to the SI base units, as `BaseUnit` gives
/// them): equal names convert by nothing.
fn conversion(units: &HashMap<String, Unit>, from: &str, to: &str) -> Result<(f64, f64), Unconvertible> {
    if from == to {
        return Ok((1.0, 0.0));
    }
    let find = |name: &str| {
        units.get(name).ok_or_else(|| Unconvertible::Undeclared {
            name: name.to_string(),
            from: from.to_string(),
            to: to.to_string(),
        })
    };
    let (a, b) = (find(from)?, find(to)?);
    if a.exponents != b.exponents {
        return Err(Unconvertible::BaseUnits {
            from: from.to_string(),
            to: to.to_string(),
        });
    }
    // SI value = factor * value + offset, in each unit.
    Ok((a.factor / b.factor, (a.offset - b.offset) / b.factor))
}

/// The `Unit`s of `node`'s `Units` child, added to `units`.
fn add_units(reader: &Reader, node: Node, units: &mut HashMap<String, Unit>) -> Result<(), SspError> {
    for unit in child(node, "Units").iter().flat_map(|u| children(*u, "Unit")) {
        let name = reader.required(unit, "name")?.to_string();
        let mut exponents = [0i32; 8];
        let (mut factor, mut offset) = (1.0, 0.0);
        if let Some(base) = child(unit, "BaseUnit") {
            for (k, key) in ["kg", "m", "s", "A", "K", "mol", "cd", "rad"].iter().enumerate() {
                let exponent = reader.number(base, key, 0.0)?;
                if exponent.fract() != 0.0 || exponent.abs() > 1000.0 {
                    return Err(reader.error(
                        base,
                        format!("{key}=\"{exponent}\" is not a whole exponent"),
                        "give base-unit exponents as integers",
                    ));
                }
                exponents[k] = exponent as i32;
            }
            factor = reader.number(base, "factor", 1.0)?;
            offset = reader.number(base, "offset", 0.0)?;
            if factor == 0.0 {
                return Err(reader.error(base, format!("unit \"{name}\" has factor 0"), "give a non-zero factor"));
            }
        }
        units.insert(
            name,
            Unit {
                exponents,
                factor,
                offset,
            },
        );
    }
    Ok(())
}

/// The SSD's `Units`.
fn read_units(reader: &Reader, root: Node) -> Result<HashMap<String, Unit>, SspError> {
    let mut units = HashMap::new();
    add_units(reader, root, &mut units)?;
    Ok(units)
}

/// The values a `ParameterBindings` gives: each binding's parameter set
/// (its `source` file or inline `ParameterValues`), renamed and
/// transformed by its `ParameterMapping`, names stripped of the binding's
/// `prefix` and of `strip` (a component's `name.`). The sets' own units
/// are added to `units`.
fn read_bindings(
    reader: &Reader,
    bindings: Node,
    dir: &Path,
    strip: &str,
    units: &mut HashMap<String, Unit>,
) -> Result<Vec<Value>, SspError> {
    let mut values = Vec::new();
    for binding in children(bindings, "ParameterBinding") {
        let prefix = binding.attribute("prefix").unwrap_or("");
        let set = match binding.attribute("source") {
            Some(source) => {
                let (text, ssv) = read_part(reader, binding, dir, source, ".ssv")?;
                let doc = Document::parse(&text).map_err(|e| ssv.xml_error(&e))?;
                add_units(&ssv, doc.root_element(), units)?;
                parameter_set(&ssv, doc.root_element())?
            }
            None => match child(binding, "ParameterValues").and_then(|v| v.children().find(Node::is_element)) {
                Some(set) => {
                    add_units(reader, set, units)?;
                    parameter_set(reader, set)?
                }
                None => Vec::new(),
            },
        };
        let mapping = match child(binding, "ParameterMapping") {
            None => HashMap::new(),
            Some(m) => match m.attribute("source") {
                Some(source) => {
                    let (text, ssm) = read_part(reader, m, dir, source, ".ssm")?;
                    let doc = Document::parse(&text).map_err(|e| ssm.xml_error(&e))?;
                    parameter_mapping(&ssm, doc.root_element())?
                }
                None => match m.children().find(Node::is_element) {
                    Some(inline) => parameter_mapping(reader, inline)?,
                    None => HashMap::new(),
                },
            },
        };
        for mut value in set {
            if let Some((target, scale, offset)) = mapping.get(&value.name) {
                value.name = target.clone();
                value.value = scale * value.value + offset;
            }
            let name = value.name.strip_prefix(prefix).unwrap_or(&value.name);
            let name = name.strip_prefix(strip).unwrap_or(name);
            value.name = name.to_string();
            values.push(value);
        }
    }
    Ok(values)
}

/// The text of the package file `source` that `node` names, and a reader
/// for it.
fn read_part<'a>(
    reader: &Reader<'a>,
    node: Node,
    dir: &Path,
    source: &str,
    kind: &str,
) -> Result<(String, Reader<'a>), SspError> {
    let path = inside(dir, source).ok_or_else(|| {
        reader.error(
            node,
            format!("source \"{source}\" is not a file inside the package"),
            &format!("give the {kind}'s path inside the package"),
        )
    })?;
    let text = read_xml(reader.file, &path, source)?;
    Ok((
        text,
        Reader {
            file: reader.file,
            part: source.to_string(),
        },
    ))
}

/// An `ssv:ParameterSet`'s numeric values by name.
fn parameter_set(reader: &Reader, set: Node) -> Result<Vec<Value>, SspError> {
    let mut values = Vec::new();
    for parameter in child(set, "Parameters").iter().flat_map(|p| children(*p, "Parameter")) {
        let name = reader.required(parameter, "name")?.to_string();
        let Some(typed) = parameter
            .children()
            .find(|c| c.is_element() && !matches!(c.tag_name().name(), "Annotations" | "Description"))
        else {
            return Err(reader.error(
                parameter,
                format!("parameter \"{name}\" has no value"),
                "give it a typed value, e.g. <ssv:Real value=\"1\"/>",
            ));
        };
        let kind = typed.tag_name().name();
        let value = match kind {
            "Boolean" => match reader.required(typed, "value")? {
                "true" | "1" => 1.0,
                "false" | "0" => 0.0,
                other => {
                    return Err(reader.error(
                        typed,
                        format!("parameter \"{name}\": \"{other}\" is not a Boolean"),
                        "write true or false",
                    ))
                }
            },
            "String" | "Binary" => {
                return Err(reader.error(
                    typed,
                    format!(
                        "parameter \"{name}\": a {kind} value is not taken by this import (only numbers and Booleans)"
                    ),
                    "set it in the FMU itself",
                ))
            }
            _ => {
                reader.required(typed, "value")?;
                reader.number(typed, "value", 0.0)?
            }
        };
        values.push(Value {
            name,
            value,
            unit: typed.attribute("unit").map(str::to_string),
            place: reader.place(parameter),
        });
    }
    Ok(values)
}

/// An `ssm:ParameterMapping`: source name → (target name, scale, offset).
fn parameter_mapping(reader: &Reader, mapping: Node) -> Result<HashMap<String, (String, f64, f64)>, SspError> {
    let mut map = HashMap::new();
    for entry in children(mapping, "MappingEntry") {
        let source = reader.required(entry, "source")?.to_string();
        let target = reader.required(entry, "target")?.to_string();
        let (mut scale, mut offset) = (1.0, 0.0);
        for transformation in entry.children().filter(Node::is_element) {
            match transformation.tag_name().name() {
                "LinearTransformation" => {
                    scale = reader.number(transformation, "factor", 1.0)?;
                    offset = reader.number(transformation, "offset", 0.0)?;
                }
                "Annotations" => {}
                other => {
                    return Err(reader.error(
                        transformation,
                        format!("<ssc:{other}> in a parameter mapping is not taken (only LinearTransformation)"),
                        "give the mapped value in the parameter set itself",
                    ))
                }
            }
        }
        map.insert(source, (target, scale, offset));
    }
    Ok(map)
}

/// `value` as TOML writes a float (shortest round trip).
fn number(value: f64) -> String {
    let text = format!("{value:?}");
    if text.contains(['.', 'e', 'E']) || !value.is_finite() {
        text
    } else {
        format!("{text}.0")
    }
}

/// `text` as a TOML basic string.
fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `relative` (a path inside the package, `/`-separated) inside `dir`,
/// when it stays inside: no `..`, not absolute, no drive or URI scheme.
fn inside(dir: &Path, relative: &str) -> Option<PathBuf> {
    if relative.is_empty() || relative.starts_with(['/', '\\']) || relative.contains(':') || relative.contains('\\') {
        return None;
    }
    let path = Path::new(relative);
    path.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        .then(|| dir.join(path))
}

/// A [`SspError::Package`].
fn package_error(file: &Path, message: String, help: &str) -> SspError {
    SspError::Package {
        file: file.to_path_buf(),
        message,
        help: help.to_string(),
    }
}

/// The UTF-8 text of the unpacked XML file `path` (`part` inside the
/// package), at most [`MAX_XML`] bytes.
fn read_xml(file: &Path, path: &Path, part: &str) -> Result<String, SspError> {
    let open = File::open(path).map_err(|e| {
        package_error(
            file,
            format!("cannot read {part}: {e}"),
            "an SSP package holds SystemStructure.ssd at its root and the files it names",
        )
    })?;
    let mut bytes = Vec::new();
    open.take(MAX_XML + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| package_error(file, format!("cannot read {part}: {e}"), "the package is damaged"))?;
    if bytes.len() as u64 > MAX_XML {
        return Err(package_error(
            file,
            format!("{part} is larger than {MAX_XML} bytes (64 MiB)"),
            "this is not a plausible SSP file",
        ));
    }
    String::from_utf8(bytes).map_err(|_| {
        package_error(
            file,
            format!("{part} is not UTF-8"),
            "save it as UTF-8, as the SSP standard requires",
        )
    })
}

/// Unpacks the package (a ZIP archive) into a temporary directory,
/// refusing entries that would leave it or link out of it and archives
/// beyond the bounds.
fn unpack(file: &Path) -> Result<tempfile::TempDir, SspError> {
    let reader =
        File::open(file).map_err(|e| package_error(file, format!("cannot open the file: {e}"), "check the path"))?;
    let mut zip = zip::ZipArchive::new(reader).map_err(|e| {
        package_error(
            file,
            format!("not a ZIP archive: {e}"),
            "an SSP package is a ZIP file holding SystemStructure.ssd",
        )
    })?;
    if zip.len() > MAX_ENTRIES {
        return Err(package_error(
            file,
            format!("holds {} entries, more than {MAX_ENTRIES}", zip.len()),
            "this is not a plausible SSP package",
        ));
    }
    let dir = tempfile::Builder::new().prefix("tandem-ssp-").tempdir().map_err(|e| {
        package_error(
            file,
            format!("cannot create a temporary folder: {e}"),
            "check the temporary folder",
        )
    })?;
    let mut total = 0u64;
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index).map_err(|e| {
            package_error(
                file,
                format!("entry {index} cannot be read: {e}"),
                "the archive is damaged",
            )
        })?;
        let name = entry.name().map(|n| n.into_owned()).unwrap_or_default();
        let Some(target) = inside(dir.path(), name.trim_end_matches('/')) else {
            return Err(package_error(
                file,
                format!("entry \"{name}\" is an absolute path or climbs out with \"..\""),
                "the archive is unsafe; do not use it",
            ));
        };
        if entry.is_symlink() {
            return Err(package_error(
                file,
                format!("entry \"{name}\" is a symbolic link"),
                "an SSP package holds plain files only; the archive is unsafe",
            ));
        }
        if entry.is_dir() {
            continue;
        }
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| {
                package_error(
                    file,
                    format!("cannot unpack \"{name}\": {e}"),
                    "check the temporary folder",
                )
            })?;
        }
        let mut out = File::create(&target).map_err(|e| {
            package_error(
                file,
                format!("cannot unpack \"{name}\": {e}"),
                "check the temporary folder",
            )
        })?;
        let room = MAX_UNPACKED - total;
        total += io::copy(&mut (&mut entry).take(room + 1), &mut out)
            .map_err(|e| package_error(file, format!("cannot unpack \"{name}\": {e}"), "the archive is damaged"))?;
        if total > MAX_UNPACKED {
            return Err(package_error(
                file,
                format!("unpacks to more than {MAX_UNPACKED} bytes (2 GiB)"),
                "this is not a plausible SSP package",
            ));
        }
    }
    Ok(dir)
}
