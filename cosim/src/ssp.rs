//! SSP import (System Structure and Parameterization, SSP 1.0 and 2.0): a
//! `.ssp` package's `SystemStructure.ssd` read into a co-simulation
//! system: each FMU component a sub-model, each connection a coupling with
//! the scale and offset of its unit conversion and `LinearTransformation`,
//! parameter sets (`.ssv`, in a file or inline) with their parameter
//! mappings (`.ssm`) as the FMUs' start values, the default experiment as
//! the run's start and stop.
//!
//! The system is written as a `tandem cosim` system file (`cosim/SYSTEM.md`)
//! beside the unpacked package and read as one, so that every check of a
//! system file holds; errors name the `.ssd` element (and its line) where
//! the SSP says something this import does not take.
//!
//! Not taken, each refused with its element: nested systems, signal
//! dictionaries, components other than FMUs, connections to the system's
//! own connectors, Boolean/Integer/Enumeration mapping transformations,
//! String and Binary parameter values.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs::{self, File};
use std::io;
use std::path::{Component, Path, PathBuf};

use roxmltree::{Document, Node};

use crate::system::{load_with, Loading, System, SystemError};

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
        /// Line and column.
        line: u32,
        /// See `line`.
        column: u32,
        /// What is wrong or not taken.
        message: String,
        /// What to do.
        help: String,
    },
    /// The system it describes, as a system file, is refused.
    #[error("{}: as a co-simulation system ({}): {error}", file.display(), system.display())]
    System {
        /// The `.ssp` file.
        file: PathBuf,
        /// The system file written from it.
        system: PathBuf,
        /// Why.
        error: Box<SystemError>,
    },
}

/// The most bytes a package unpacks to: 4 GiB.
const MAX_UNPACKED: u64 = 4 << 30;

/// An SSP package read: the system file written from it and what it ran
/// into, kept while the system is loaded.
pub struct Package {
    /// The unpacked package (removed with it).
    dir: tempfile::TempDir,
    /// The system file written from the SSD.
    pub system_file: PathBuf,
    /// The system file's text.
    pub system_text: String,
    /// One line per component and connection, for `tandem check`.
    pub summary: Vec<String>,
}

impl Package {
    /// The folder the package is unpacked in.
    pub fn directory(&self) -> &Path {
        self.dir.path()
    }
}

/// Reads the SSP package `file` and loads the system it describes, its
/// FMUs loaded as `loading` says. `step` is the macro step (default: the
/// smallest default experiment step of its FMUs, else a 500th of the run).
pub fn load(file: &Path, loading: Loading, step: Option<f64>) -> Result<(System, Package), SspError> {
    let package = read(file, step)?;
    let system = load_with(&package.system_file, loading).map_err(|error| SspError::System {
        file: file.to_path_buf(),
        system: package.system_file.clone(),
        error: Box::new(error),
    })?;
    Ok((system, package))
}

/// Reads the SSP package `file` into a system file, without loading it.
pub fn read(file: &Path, step: Option<f64>) -> Result<Package, SspError> {
    let dir = unpack(file)?;
    let ssd_path = dir.path().join("SystemStructure.ssd");
    let text = read_utf8(file, &ssd_path, "SystemStructure.ssd")?;
    let reader = Reader {
        file,
        part: "SystemStructure.ssd".to_string(),
    };
    let doc = Document::parse(&text).map_err(|e| reader.xml_error(&e))?;
    let translated = translate(&reader, &doc, dir.path(), step)?;
    let system_file = dir.path().join("system.toml");
    fs::write(&system_file, &translated.text).map_err(|e| package_error(file, format!("cannot write {}: {e}", system_file.display()), "check the temporary folder's space"))?;
    Ok(Package {
        dir,
        system_file,
        system_text: translated.text,
        summary: translated.summary,
    })
}

/// The system file's text and the summary lines.
struct Translated {
    text: String,
    summary: Vec<String>,
}

/// A connector of a component: its kind and unit.
#[derive(Clone, Debug)]
struct Connector {
    kind: String,
    unit: Option<String>,
}

/// A unit of `ssd:Units`: its base units' exponents, factor and offset.
#[derive(Clone, Debug, PartialEq)]
struct Unit {
    exponents: [i32; 8],
    factor: f64,
    offset: f64,
}

/// Reads one XML file of the package, for positions in messages.
struct Reader<'a> {
    file: &'a Path,
    part: String,
}

impl Reader<'_> {
    fn error(&self, node: Node, message: String, help: &str) -> SspError {
        let pos = node.document().text_pos_at(node.range().start);
        SspError::Content {
            file: self.file.to_path_buf(),
            part: self.part.clone(),
            line: pos.row,
            column: pos.col,
            message,
            help: help.to_string(),
        }
    }

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

    fn required<'n>(&self, node: Node<'n, '_>, name: &str) -> Result<&'n str, SspError> {
        node.attribute(name).ok_or_else(|| {
            self.error(
                node,
                format!("<{}> has no {name} attribute", node.tag_name().name()),
                "the SSP standard requires it",
            )
        })
    }

    fn number(&self, node: Node, name: &str, default: f64) -> Result<f64, SspError> {
        match node.attribute(name) {
            None => Ok(default),
            Some(text) => text.trim().parse().map_err(|_| {
                self.error(
                    node,
                    format!("{name}=\"{text}\" is not a number"),
                    "write the value as a decimal number",
                )
            }),
        }
    }
}

/// The element children of `node` called `name` (any namespace).
fn children<'a, 'i>(node: Node<'a, 'i>, name: &'static str) -> impl Iterator<Item = Node<'a, 'i>> {
    node.children().filter(move |c| c.is_element() && c.tag_name().name() == name)
}

fn child<'a, 'i>(node: Node<'a, 'i>, name: &'static str) -> Option<Node<'a, 'i>> {
    children(node, name).next()
}

/// The SSD as a system file.
fn translate(reader: &Reader, doc: &Document, dir: &Path, step: Option<f64>) -> Result<Translated, SspError> {
    let root = doc.root_element();
    if root.tag_name().name() != "SystemStructureDescription" {
        return Err(reader.error(
            root,
            format!("the root element is <{}>, not <ssd:SystemStructureDescription>", root.tag_name().name()),
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
    let units = read_units(reader, root)?;
    let system = child(root, "System")
        .ok_or_else(|| reader.error(root, "no <ssd:System>".to_string(), "the SSP standard requires one"))?;
    if let Some(dictionary) = child(system, "SignalDictionaries") {
        return Err(reader.error(
            dictionary,
            "signal dictionaries are not taken by this import".to_string(),
            "connect the components' connectors directly",
        ));
    }
    let experiment = child(root, "DefaultExperiment");
    let start = experiment.map(|e| reader.number(e, "startTime", 0.0)).transpose()?.unwrap_or(0.0);
    let stop = experiment.map(|e| reader.number(e, "stopTime", 1.0)).transpose()?.unwrap_or(1.0);
    if start != 0.0 {
        return Err(reader.error(
            experiment.unwrap_or(root),
            format!("startTime=\"{start}\": a co-simulation starts at t = 0"),
            "give the default experiment startTime 0",
        ));
    }
    let mut text = String::new();
    let mut summary = Vec::new();
    let mut models = String::new();
    let mut connectors: HashMap<(String, String), Connector> = HashMap::new();
    let mut steps: Vec<f64> = Vec::new();
    // System-level parameter bindings: names are `<element>.<connector>`.
    let mut system_values: HashMap<String, Vec<(String, f64)>> = HashMap::new();
    if let Some(bindings) = child(system, "ParameterBindings") {
        for (name, value) in read_bindings(reader, bindings, dir, "")? {
            match name.split_once('.') {
                Some((element, parameter)) => system_values
                    .entry(element.to_string())
                    .or_default()
                    .push((parameter.to_string(), value)),
                None => {
                    return Err(reader.error(
                        bindings,
                        format!("the system's parameter \"{name}\" names no component (write <component>.<parameter>)"),
                        "bind parameters of the components, by their dotted names",
                    ))
                }
            }
        }
    }
    let elements = child(system, "Elements");
    for element in elements.iter().flat_map(|e| e.children().filter(Node::is_element)) {
        let tag = element.tag_name().name();
        let name = reader.required(element, "name")?.to_string();
        if tag != "Component" {
            return Err(reader.error(
                element,
                format!("<ssd:{tag}> \"{name}\": only FMU components are taken (no nested systems or signal dictionaries)"),
                "flatten the system so that it holds only FMU components",
            ));
        }
        let kind = element.attribute("type").unwrap_or("application/x-fmu-sharedlibrary");
        if kind != "application/x-fmu-sharedlibrary" {
            return Err(reader.error(
                element,
                format!("component \"{name}\" is of type \"{kind}\": only FMUs (application/x-fmu-sharedlibrary) are taken"),
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
        if let Ok(fmu) = tandem_fmi::Fmu::open(&path) {
            if let Some(s) = fmu.description().default_experiment.step {
                steps.push(s);
            }
        }
        for connector in child(element, "Connectors").iter().flat_map(|c| children(*c, "Connector")) {
            let cname = reader.required(connector, "name")?.to_string();
            let ckind = reader.required(connector, "kind")?.to_string();
            let unit = connector
                .children()
                .filter(Node::is_element)
                .find_map(|t| t.attribute("unit"))
                .map(str::to_string);
            connectors.insert((name.clone(), cname), Connector { kind: ckind, unit });
        }
        let mut values = Vec::new();
        if let Some(bindings) = child(element, "ParameterBindings") {
            values = read_bindings(reader, bindings, dir, &format!("{name}."))?;
        }
        values.extend(system_values.remove(&name).unwrap_or_default());
        let _ = writeln!(models, "[[model]]\nname = {}\nsource = {}", quoted(&name), quoted(&path.to_string_lossy()));
        if !values.is_empty() {
            let list: Vec<String> = values.iter().map(|(p, v)| format!("{} = {}", quoted(p), number(*v))).collect();
            let _ = writeln!(models, "parameters = {{ {} }}", list.join(", "));
        }
        models.push('\n');
        summary.push(format!("component {name}: {source}{}", if values.is_empty() { String::new() } else { format!(", {} parameter values", values.len()) }));
    }
    if let Some(element) = system_values.keys().next() {
        return Err(reader.error(
            system,
            format!("the system's parameter bindings name \"{element}\", which is no component"),
            "bind parameters of the components, by their dotted names",
        ));
    }
    let step = match step {
        Some(step) => step,
        None => steps.iter().copied().fold(stop / 500.0, f64::min),
    };
    // A whole number of macro steps to the stop time.
    let count = (stop / step - 1e-9).ceil().max(1.0);
    let step = stop / count;
    let _ = writeln!(text, "# Written by tandem from an SSP package's SystemStructure.ssd.\n[master]\nstep = {}\nstop = {}\n", number(step), number(stop));
    text.push_str(&models);
    for connection in child(system, "Connections").iter().flat_map(|c| children(*c, "Connection")) {
        let (from_element, to_element) = (connection.attribute("startElement"), connection.attribute("endElement"));
        let (Some(from_element), Some(to_element)) = (from_element, to_element) else {
            return Err(reader.error(
                connection,
                "a connection to the system's own connectors is not taken (only component to component)".to_string(),
                "connect the components directly",
            ));
        };
        let from_connector = reader.required(connection, "startConnector")?;
        let to_connector = reader.required(connection, "endConnector")?;
        let (mut scale, mut offset) = (1.0, 0.0);
        let suppress = matches!(connection.attribute("suppressUnitConversion"), Some("true") | Some("1"));
        if !suppress {
            let unit_of = |e: &str, c: &str| connectors.get(&(e.to_string(), c.to_string())).and_then(|k| k.unit.clone());
            if let (Some(a), Some(b)) = (unit_of(from_element, from_connector), unit_of(to_element, to_connector)) {
                (scale, offset) = conversion(reader, connection, &units, &a, &b)?;
            }
        }
        for transformation in connection.children().filter(Node::is_element) {
            match transformation.tag_name().name() {
                "LinearTransformation" => {
                    let factor = reader.number(transformation, "factor", 1.0)?;
                    let add = reader.number(transformation, "offset", 0.0)?;
                    // The unit conversion comes first (SSP 2.0, 4.x
                    // LinearTransformation).
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
        for (element, connector, wanted) in [(from_element, from_connector, ["output", "parameter", "calculatedParameter"].as_slice()), (to_element, to_connector, ["input", "parameter"].as_slice())] {
            if let Some(c) = connectors.get(&(element.to_string(), connector.to_string())) {
                if !wanted.contains(&c.kind.as_str()) {
                    return Err(reader.error(
                        connection,
                        format!("connector \"{element}.{connector}\" is of kind \"{}\", which cannot be at this end of a connection", c.kind),
                        "connect outputs to inputs",
                    ));
                }
            }
        }
        let _ = writeln!(
            text,
            "[[connection]]\nfrom = {}\nto = {}{}{}\n",
            quoted(&format!("{from_element}.{from_connector}")),
            quoted(&format!("{to_element}.{to_connector}")),
            if scale != 1.0 { format!("\nscale = {}", number(scale)) } else { String::new() },
            if offset != 0.0 { format!("\noffset = {}", number(offset)) } else { String::new() },
        );
        summary.push(format!(
            "connection {from_element}.{from_connector} → {to_element}.{to_connector}{}",
            if scale != 1.0 || offset != 0.0 { format!(" (× {} + {})", number(scale), number(offset)) } else { String::new() }
        ));
    }
    Ok(Translated { text, summary })
}

/// The scale and offset converting a value in unit `from` into unit `to`
/// (their factors and offsets to the SI base units, as `ssc:BaseUnit`
/// gives them): equal names convert by nothing.
fn conversion(
    reader: &Reader,
    node: Node,
    units: &HashMap<String, Unit>,
    from: &str,
    to: &str,
) -> Result<(f64, f64), SspError> {
    if from == to {
        return Ok((1.0, 0.0));
    }
    let find = |name: &str| {
        units.get(name).ok_or_else(|| {
            reader.error(
                node,
                format!("unit \"{name}\" is not declared in <ssd:Units>, so \"{from}\" cannot be converted to \"{to}\""),
                "declare both units with their base units, or set suppressUnitConversion=\"true\"",
            )
        })
    };
    let (a, b) = (find(from)?, find(to)?);
    if a.exponents != b.exponents {
        return Err(reader.error(
            node,
            format!("unit \"{from}\" cannot be converted to \"{to}\": their base units differ"),
            "connect connectors of the same quantity, or set suppressUnitConversion=\"true\"",
        ));
    }
    // SI value = factor * value + offset, in each unit.
    Ok((a.factor / b.factor, (a.offset - b.offset) / b.factor))
}

/// `ssd:Units`: each unit's base units, factor and offset.
fn read_units(reader: &Reader, root: Node) -> Result<HashMap<String, Unit>, SspError> {
    let mut units = HashMap::new();
    for unit in child(root, "Units").iter().flat_map(|u| children(*u, "Unit")) {
        let name = reader.required(unit, "name")?.to_string();
        let base = child(unit, "BaseUnit");
        let mut exponents = [0i32; 8];
        let (mut factor, mut offset) = (1.0, 0.0);
        if let Some(base) = base {
            for (k, key) in ["kg", "m", "s", "A", "K", "mol", "cd", "rad"].iter().enumerate() {
                exponents[k] = reader.number(base, key, 0.0)? as i32;
            }
            factor = reader.number(base, "factor", 1.0)?;
            offset = reader.number(base, "offset", 0.0)?;
        }
        units.insert(name, Unit { exponents, factor, offset });
    }
    Ok(units)
}

/// The values a `ssd:ParameterBindings` gives: each binding's parameter set
/// (its `source` file or inline `ParameterValues`), names stripped of its
/// `prefix`, renamed and transformed by its `ParameterMapping`. Names
/// starting with `strip` (a component's `name.`) lose it.
fn read_bindings(reader: &Reader, bindings: Node, dir: &Path, strip: &str) -> Result<Vec<(String, f64)>, SspError> {
    let mut values = Vec::new();
    for binding in children(bindings, "ParameterBinding") {
        let prefix = binding.attribute("prefix").unwrap_or("");
        let set: Vec<(String, f64)> = match binding.attribute("source") {
            Some(source) => {
                let path = inside(dir, source).ok_or_else(|| {
                    reader.error(binding, format!("source \"{source}\" is not a file inside the package"), "give the .ssv's path inside the package")
                })?;
                let text = read_utf8(reader.file, &path, source)?;
                let ssv = Reader { file: reader.file, part: source.to_string() };
                let doc = Document::parse(&text).map_err(|e| ssv.xml_error(&e))?;
                parameter_set(&ssv, doc.root_element())?
            }
            None => match child(binding, "ParameterValues").and_then(|v| v.children().find(Node::is_element)) {
                Some(set) => parameter_set(reader, set)?,
                None => Vec::new(),
            },
        };
        let mapping = match child(binding, "ParameterMapping") {
            None => None,
            Some(m) => Some(match m.attribute("source") {
                Some(source) => {
                    let path = inside(dir, source).ok_or_else(|| {
                        reader.error(m, format!("source \"{source}\" is not a file inside the package"), "give the .ssm's path inside the package")
                    })?;
                    let text = read_utf8(reader.file, &path, source)?;
                    let ssm = Reader { file: reader.file, part: source.to_string() };
                    let doc = Document::parse(&text).map_err(|e| ssm.xml_error(&e))?;
                    parameter_mapping(&ssm, doc.root_element())?
                }
                None => match m.children().find(Node::is_element) {
                    Some(inline) => parameter_mapping(reader, inline)?,
                    None => HashMap::new(),
                },
            }),
        };
        for (name, value) in set {
            let (name, value) = match &mapping {
                Some(map) => match map.get(&name) {
                    Some((target, scale, offset)) => (target.clone(), scale * value + offset),
                    None => (name, value),
                },
                None => (name, value),
            };
            let name = name.strip_prefix(prefix).unwrap_or(&name);
            let name = name.strip_prefix(strip).unwrap_or(name);
            values.push((name.to_string(), value));
        }
    }
    Ok(values)
}

/// An `ssv:ParameterSet`'s numeric values by name.
fn parameter_set(reader: &Reader, set: Node) -> Result<Vec<(String, f64)>, SspError> {
    let mut values = Vec::new();
    for parameter in child(set, "Parameters").iter().flat_map(|p| children(*p, "Parameter")) {
        let name = reader.required(parameter, "name")?.to_string();
        let Some(typed) = parameter.children().find(Node::is_element) else {
            continue;
        };
        let value = match typed.tag_name().name() {
            "Boolean" => match typed.attribute("value") {
                Some("true") | Some("1") => 1.0,
                _ => 0.0,
            },
            "String" | "Binary" => {
                return Err(reader.error(
                    typed,
                    format!("parameter \"{name}\": a {} value is not taken by this import (only numbers and Booleans)", typed.tag_name().name()),
                    "set it in the FMU itself",
                ))
            }
            _ => reader.number(typed, "value", 0.0)?,
        };
        values.push((name, value));
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
        if let Some(t) = child(entry, "LinearTransformation") {
            scale = reader.number(t, "factor", 1.0)?;
            offset = reader.number(t, "offset", 0.0)?;
        }
        map.insert(source, (target, scale, offset));
    }
    Ok(map)
}

/// `value` as TOML writes a float.
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

/// `relative` inside `dir`, when it stays inside (no `..`, not absolute).
fn inside(dir: &Path, relative: &str) -> Option<PathBuf> {
    let path = Path::new(relative);
    path.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        .then(|| dir.join(path))
}

fn package_error(file: &Path, message: String, help: &str) -> SspError {
    SspError::Package {
        file: file.to_path_buf(),
        message,
        help: help.to_string(),
    }
}

fn read_utf8(file: &Path, path: &Path, part: &str) -> Result<String, SspError> {
    let bytes = fs::read(path).map_err(|e| package_error(file, format!("cannot read {part}: {e}"), "an SSP package holds SystemStructure.ssd at its root and the files it names"))?;
    String::from_utf8(bytes).map_err(|_| package_error(file, format!("{part} is not UTF-8"), "save it as UTF-8, as the SSP standard requires"))
}

/// Unpacks the package (a ZIP archive) into a temporary directory,
/// refusing entries that leave it.
fn unpack(file: &Path) -> Result<tempfile::TempDir, SspError> {
    let reader = File::open(file).map_err(|e| package_error(file, format!("cannot open the file: {e}"), "check the path"))?;
    let mut zip = zip::ZipArchive::new(reader).map_err(|e| package_error(file, format!("not a ZIP archive: {e}"), "an SSP package is a ZIP file holding SystemStructure.ssd"))?;
    let dir = tempfile::Builder::new()
        .prefix("tandem-ssp-")
        .tempdir()
        .map_err(|e| package_error(file, format!("cannot create a temporary folder: {e}"), "check the temporary folder"))?;
    let mut total = 0u64;
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index).map_err(|e| package_error(file, format!("entry {index} cannot be read: {e}"), "the archive is damaged"))?;
        let name = entry.name().map(|n| n.into_owned()).unwrap_or_default();
        let Some(target) = inside(dir.path(), &name.replace('\\', "/")).filter(|_| !name.starts_with(['/', '\\'])) else {
            return Err(package_error(file, format!("entry \"{name}\" is an absolute path or climbs out with \"..\""), "the archive is unsafe; do not use it"));
        };
        if entry.is_dir() || entry.is_symlink() {
            continue;
        }
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| package_error(file, format!("cannot unpack \"{name}\": {e}"), "check the temporary folder"))?;
        }
        let mut out = File::create(&target).map_err(|e| package_error(file, format!("cannot unpack \"{name}\": {e}"), "check the temporary folder"))?;
        let room = MAX_UNPACKED - total;
        total += io::copy(&mut io::Read::take(&mut entry, room + 1), &mut out).map_err(|e| package_error(file, format!("cannot unpack \"{name}\": {e}"), "the archive is damaged"))?;
        if total > MAX_UNPACKED {
            return Err(package_error(file, format!("unpacks to more than {MAX_UNPACKED} bytes (4 GiB)"), "this is not a plausible SSP package"));
        }
    }
    Ok(dir)
}
