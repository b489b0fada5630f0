//! The DCP slave description (`.dcpx`): written for a Tandem slave from
//! its model's ports, and read by the master for every member of a
//! federation (any DCP 1.0 slave's, for the parts a master needs: name,
//! UUID, operating modes, resolution, control address and variables).

use std::fmt::Write;
use std::net::{Ipv4Addr, SocketAddrV4};

use roxmltree::{Document, Node};

use crate::ports::{Causality, Ports, Variable};
use crate::types::{DataType, OpMode, MAX_PDU};

/// What a master needs of a slave description.
#[derive(Clone, Debug, PartialEq)]
pub struct Description {
    /// `dcpSlaveName`.
    pub name: String,
    /// `uuid`, as the 16 bytes of `STC_register`.
    pub uuid: [u8; 16],
    /// The operating modes it supports.
    pub op_modes: Vec<OpMode>,
    /// A fixed time resolution (numerator, denominator), if it has one.
    pub fixed_resolution: Option<(u32, u32)>,
    /// The resolution it recommends when it takes any (numerator,
    /// denominator).
    pub recommended_resolution: Option<(u32, u32)>,
    /// Where its control PDUs go, when the description says.
    pub control: Option<SocketAddrV4>,
    /// The longest silence of the master it tolerates, when it monitors
    /// heartbeats (s).
    pub heartbeat: Option<f64>,
    /// Its inputs and outputs.
    pub ports: Ports,
}

/// Why a description cannot be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct DescriptionError {
    /// Line, from 1.
    pub line: u32,
    /// Column, from 1.
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

/// The textual form of a UUID (`8-4-4-4-12` hex digits), its bytes in
/// the order the text gives them.
pub fn uuid_text(uuid: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in uuid.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        let _ = write!(s, "{b:02x}");
    }
    s
}

/// The bytes of a UUID in textual form, if it is one.
pub fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let groups: Vec<&str> = text.split('-').collect();
    if groups.iter().map(|g| g.len()).collect::<Vec<_>>() != [8, 4, 4, 4, 12] {
        return None;
    }
    let hex: String = groups.concat();
    let mut uuid = [0; 16];
    for (k, b) in uuid.iter_mut().enumerate() {
        *b = u8::from_str_radix(hex.get(2 * k..2 * k + 2)?, 16).ok()?;
    }
    Some(uuid)
}

/// Escapes text for an XML attribute.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('"', "&quot;")
        .replace('>', "&gt;")
}

/// A number as the description writes it (shortest text that reads back).
fn number(v: f64) -> String {
    format!("{v:?}")
}

impl Description {
    /// The description as XML.
    pub fn write(&self) -> String {
        let mut x = String::new();
        let _ = writeln!(x, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>");
        let _ = writeln!(
            x,
            "<dcpSlaveDescription dcpMajorVersion=\"1\" dcpMinorVersion=\"0\" dcpSlaveName=\"{}\" uuid=\"{}\" \
             generationTool=\"Tandem\" variableNamingConvention=\"flat\">",
            escape(&self.name),
            uuid_text(&self.uuid)
        );
        x.push_str("  <OpMode>\n");
        for mode in [OpMode::HardRealTime, OpMode::SoftRealTime, OpMode::NonRealTime] {
            if self.op_modes.contains(&mode) {
                x.push_str(match mode {
                    OpMode::HardRealTime => "    <HardRealTime/>\n",
                    OpMode::SoftRealTime => "    <SoftRealTime/>\n",
                    OpMode::NonRealTime => {
                        "    <NonRealTime defaultSteps=\"1\" fixedSteps=\"false\" minSteps=\"1\" maxSteps=\"4294967295\"/>\n"
                    }
                });
            }
        }
        x.push_str("  </OpMode>\n");
        let mut units: Vec<&str> = self.ports.all().filter_map(|v| v.unit.as_deref()).collect();
        units.sort_unstable();
        units.dedup();
        if !units.is_empty() {
            x.push_str("  <UnitDefinitions>\n");
            for u in units {
                let _ = writeln!(x, "    <Unit name=\"{}\"/>", escape(u));
            }
            x.push_str("  </UnitDefinitions>\n");
        }
        x.push_str("  <TimeRes>\n");
        match self.fixed_resolution {
            Some((n, d)) => {
                let _ = writeln!(
                    x,
                    "    <Resolution numerator=\"{n}\" denominator=\"{d}\" fixed=\"true\"/>"
                );
            }
            None => {
                let (n, d) = self.recommended_resolution.unwrap_or((1, 1_000_000));
                let _ = writeln!(
                    x,
                    "    <Resolution numerator=\"{n}\" denominator=\"{d}\" fixed=\"false\" recommended=\"true\"/>"
                );
                if (n, d) != (1, 1_000_000) {
                    x.push_str("    <Resolution numerator=\"1\" denominator=\"1000000\" fixed=\"false\"/>\n");
                }
            }
        }
        x.push_str("  </TimeRes>\n");
        if let Some(seconds) = self.heartbeat {
            let _ = writeln!(
                x,
                "  <Heartbeat>\n    <MaximumPeriodicInterval numerator=\"{}\" denominator=\"1000\"/>\n  </Heartbeat>",
                (seconds * 1000.0).round() as u64
            );
        }
        x.push_str("  <TransportProtocols>\n    <UDP_IPv4 maxPduSize=\"65507\">\n");
        if let Some(c) = self.control {
            let _ = writeln!(x, "      <Control host=\"{}\" port=\"{}\"/>", c.ip(), c.port());
            let _ = writeln!(
                x,
                "      <DAT_input_output host=\"{}\">\n        <AvailablePortRange from=\"1024\" to=\"65535\"/>\n      </DAT_input_output>",
                c.ip()
            );
        }
        x.push_str("    </UDP_IPv4>\n  </TransportProtocols>\n");
        let _ = writeln!(
            x,
            "  <CapabilityFlags canAcceptConfigPdus=\"true\" canHandleReset=\"true\" canHandleVariableSteps=\"true\" \
             canMonitorHeartbeat=\"{}\"/>",
            self.heartbeat.is_some()
        );
        x.push_str("  <Variables>\n");
        // Outputs first: DCPLib's example master takes the first variable
        // as the output and the second as the input.
        for v in self.ports.outputs.iter().chain(&self.ports.inputs) {
            write_variable(&mut x, v);
        }
        x.push_str("  </Variables>\n</dcpSlaveDescription>\n");
        x
    }

    /// Reads a description.
    pub fn read(text: &str) -> Result<Description, DescriptionError> {
        let doc = Document::parse(text).map_err(|e| {
            let p = e.pos();
            DescriptionError {
                line: p.row,
                column: p.col,
                message: e.to_string(),
            }
        })?;
        Reader { doc: &doc }.read()
    }
}

/// The first child element of `node` named `tag`.
fn child<'a, 'input>(node: Node<'a, 'input>, tag: &str) -> Option<Node<'a, 'input>> {
    node.children().find(|c| c.has_tag_name(tag))
}

/// Places and attributes of a parsed description, for its errors.
struct Reader<'a> {
    doc: &'a Document<'a>,
}

impl<'a> Reader<'a> {
    /// An error at `node`.
    fn at(&self, node: Node<'_, '_>, message: String) -> DescriptionError {
        let p = self.doc.text_pos_at(node.range().start);
        DescriptionError {
            line: p.row,
            column: p.col,
            message,
        }
    }

    /// Attribute `name` of `node`, which must have it.
    fn attr(&self, node: Node<'a, 'a>, name: &str) -> Result<&'a str, DescriptionError> {
        node.attribute(name)
            .ok_or_else(|| self.at(node, format!("<{}> has no {name} attribute", node.tag_name().name())))
    }

    /// Reads the description.
    fn read(&self) -> Result<Description, DescriptionError> {
        let root = self.doc.root_element();
        if root.tag_name().name() != "dcpSlaveDescription" {
            return Err(self.at(
                root,
                format!(
                    "the root element is <{}>, not <dcpSlaveDescription>",
                    root.tag_name().name()
                ),
            ));
        }
        if self.attr(root, "dcpMajorVersion")? != "1" {
            return Err(self.at(root, "dcpMajorVersion is not 1: Tandem speaks DCP 1.0".into()));
        }
        let name = self.attr(root, "dcpSlaveName")?.to_string();
        let uuid_attr = self.attr(root, "uuid")?;
        let uuid = parse_uuid(uuid_attr).ok_or_else(|| {
            self.at(
                root,
                format!("uuid \"{uuid_attr}\" is not 8-4-4-4-12 hexadecimal digits"),
            )
        })?;
        let variables =
            child(root, "Variables").ok_or_else(|| self.at(root, "there is no <Variables> element".into()))?;
        let ports = self.ports(variables)?;
        Ok(Description {
            name,
            uuid,
            op_modes: op_modes(root),
            fixed_resolution: resolution(root, &|r| r.attribute("fixed").unwrap_or("true") == "true"),
            recommended_resolution: resolution(root, &|r| r.attribute("recommended") == Some("true")),
            control: control(root),
            heartbeat: heartbeat(root),
            ports,
        })
    }

    /// The inputs and outputs among `<Variables>`, numbered in order.
    fn ports(&self, variables: Node<'a, 'a>) -> Result<Ports, DescriptionError> {
        let mut ports = Ports::default();
        let (mut inputs, mut outputs) = (0, 0);
        for v in variables.children().filter(|c| c.has_tag_name("Variable")) {
            let Some(variable) = self.variable(v, (inputs, outputs))? else {
                continue; // parameters: not connected by a federation
            };
            match variable.causality {
                Causality::Input => {
                    inputs = variable.elements.end;
                    ports.inputs.push(variable);
                }
                Causality::Output => {
                    outputs = variable.elements.end;
                    ports.outputs.push(variable);
                }
            }
        }
        Ok(ports)
    }

    /// The input or output `<Variable>` `v`, its elements counted from
    /// those of the inputs or outputs before it; `None` for other
    /// variables.
    fn variable(
        &self,
        v: Node<'a, 'a>,
        (inputs, outputs): (usize, usize),
    ) -> Result<Option<Variable>, DescriptionError> {
        let name = self.attr(v, "name")?.to_string();
        let vr_text = self.attr(v, "valueReference")?;
        let vr = vr_text
            .parse()
            .map_err(|_| self.at(v, format!("valueReference \"{vr_text}\" is not a whole number")))?;
        let Some(kind) = v.children().find(|c| matches!(c.tag_name().name(), "Input" | "Output")) else {
            return Ok(None);
        };
        let causality = if kind.has_tag_name("Input") {
            Causality::Input
        } else {
            Causality::Output
        };
        let Some((typed, data_type)) = kind.children().find_map(|c| {
            DataType::parse(c.tag_name().name())
                .filter(|_| c.is_element())
                .map(|t| (c, t))
        }) else {
            return Err(self.at(
                kind,
                format!("variable \"{name}\" has no type element (Float64, Int32, …)"),
            ));
        };
        let width = self.width(kind, &name)?;
        let start: Vec<f64> = typed
            .attribute("start")
            .map(|s| s.split_whitespace().filter_map(|x| x.parse().ok()).collect())
            .unwrap_or_default();
        let start = if start.len() == width { start } else { vec![0.0; width] };
        let range = match (typed.attribute("min"), typed.attribute("max")) {
            (Some(a), Some(b)) => a.parse().ok().zip(b.parse().ok()),
            _ => None,
        };
        let first = if causality == Causality::Input { inputs } else { outputs };
        Ok(Some(Variable {
            name,
            vr,
            causality,
            data_type,
            elements: first..first + width,
            unit: typed.attribute("unit").map(str::to_string),
            start,
            range,
            dependencies: dependencies(kind),
            mime_type: typed.attribute("mimeType").map(str::to_string),
        }))
    }

    /// The elements of variable `name` by the `<Dimensions>` of its
    /// `<Input>` or `<Output>` `kind`: as many as one datagram carries at
    /// most.
    fn width(&self, kind: Node<'a, 'a>, name: &str) -> Result<usize, DescriptionError> {
        let most = MAX_PDU - 5;
        child(kind, "Dimensions")
            .map(|d| {
                d.children()
                    .filter(|c| c.has_tag_name("Dimension"))
                    .map(|c| c.attribute("constant").and_then(|n| n.parse::<usize>().ok()).unwrap_or(1))
                    .try_fold(1usize, |w, n| w.checked_mul(n).filter(|&w| w <= most))
            })
            .unwrap_or(Some(1))
            .ok_or_else(|| {
                self.at(
                    kind,
                    format!("variable \"{name}\" has more elements than a datagram carries ({most}); make its Dimensions smaller"),
                )
            })
    }
}

/// The operating modes under `<OpMode>`.
fn op_modes(root: Node<'_, '_>) -> Vec<OpMode> {
    child(root, "OpMode")
        .map(|m| {
            m.children()
                .filter_map(|c| match c.tag_name().name() {
                    "HardRealTime" => Some(OpMode::HardRealTime),
                    "SoftRealTime" => Some(OpMode::SoftRealTime),
                    "NonRealTime" => Some(OpMode::NonRealTime),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The first `<TimeRes>` resolution `want` takes (numerator,
/// denominator).
fn resolution(root: Node<'_, '_>, want: &dyn Fn(Node<'_, '_>) -> bool) -> Option<(u32, u32)> {
    child(root, "TimeRes")?
        .children()
        .filter(|r| r.has_tag_name("Resolution"))
        .find(|r| want(*r))
        .and_then(|r| {
            Some((
                r.attribute("numerator")?.parse().ok()?,
                r.attribute("denominator")?.parse().ok()?,
            ))
        })
}

/// The UDP control address, when the description gives one.
fn control(root: Node<'_, '_>) -> Option<SocketAddrV4> {
    child(root, "TransportProtocols")
        .and_then(|t| child(t, "UDP_IPv4"))
        .and_then(|u| child(u, "Control"))
        .and_then(|c| {
            let ip: Ipv4Addr = c.attribute("host")?.parse().ok()?;
            Some(SocketAddrV4::new(ip, c.attribute("port")?.parse().ok()?))
        })
}

/// The longest silence of the master tolerated (s), when given.
fn heartbeat(root: Node<'_, '_>) -> Option<f64> {
    child(root, "Heartbeat")
        .and_then(|h| child(h, "MaximumPeriodicInterval"))
        .and_then(|m| {
            let n: f64 = m.attribute("numerator")?.parse().ok()?;
            let d: f64 = m.attribute("denominator")?.parse().ok()?;
            Some(n / d)
        })
}

/// The value references a variable's run-time outputs depend on, when
/// `<Dependencies>` says.
fn dependencies(kind: Node<'_, '_>) -> Option<Vec<u64>> {
    child(kind, "Dependencies").map(|d| {
        child(d, "Run")
            .map(|r| {
                r.children()
                    .filter(|c| c.has_tag_name("Dependency"))
                    .filter_map(|c| c.attribute("vr")?.parse().ok())
                    .collect()
            })
            .unwrap_or_default()
    })
}

/// One `<Variable>`.
fn write_variable(x: &mut String, v: &Variable) {
    let variability = if matches!(v.data_type, DataType::Float32 | DataType::Float64) {
        "continuous"
    } else {
        "discrete"
    };
    let _ = writeln!(
        x,
        "    <Variable name=\"{}\" valueReference=\"{}\" variability=\"{variability}\">",
        escape(&v.name),
        v.vr
    );
    let _ = write!(x, "      <{}", v.causality.element());
    if v.causality == Causality::Output {
        x.push_str(" defaultSteps=\"1\" fixedSteps=\"false\" minSteps=\"1\" maxSteps=\"4294967295\"");
    }
    x.push_str(">\n");
    let _ = write!(x, "        <{}", v.data_type.element());
    match v.data_type {
        DataType::Binary => {
            let hex: String = v.start.iter().map(|&b| format!("{:02x}", b as u8)).collect();
            let _ = write!(x, " start=\"{hex}\"");
            if let Some(mime) = &v.mime_type {
                let _ = write!(x, " mimeType=\"{}\"", escape(mime));
            }
        }
        _ => {
            let start: Vec<String> = v.start.iter().map(|&s| number(s)).collect();
            let _ = write!(x, " start=\"{}\"", start.join(" "));
        }
    }
    if let Some((lo, hi)) = v.range.filter(|_| v.data_type != DataType::Binary) {
        let _ = write!(x, " min=\"{}\" max=\"{}\"", number(lo), number(hi));
    }
    if let Some(u) = v
        .unit
        .as_deref()
        .filter(|_| matches!(v.data_type, DataType::Float32 | DataType::Float64))
    {
        let _ = write!(x, " unit=\"{}\"", escape(u));
    }
    x.push_str("/>\n");
    if v.width() > 1 && !matches!(v.data_type, DataType::Binary | DataType::String) {
        let _ = writeln!(
            x,
            "        <Dimensions>\n          <Dimension constant=\"{}\"/>\n        </Dimensions>",
            v.width()
        );
    }
    if let Some(deps) = &v.dependencies {
        x.push_str("        <Dependencies>\n          <Run>\n");
        for d in deps {
            let _ = writeln!(x, "            <Dependency vr=\"{d}\" dependencyKind=\"dependent\"/>");
        }
        x.push_str("          </Run>\n        </Dependencies>\n");
    }
    let _ = writeln!(x, "      </{}>\n    </Variable>", v.causality.element());
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use tandem_models::Variable as Port;

    #[test]
    fn a_written_description_reads_back() {
        let mut u = Port::new("torque");
        u.unit = Some("N m".into());
        u.default = 5.0;
        let inputs = [u, Port::new("pos[0]"), Port::new("pos[1]")];
        let mut y = Port::new("speed");
        y.range = Some((-100.0, 100.0));
        let types = BTreeMap::from([("pos".to_string(), DataType::Int16)]);
        let ports = Ports::of(&inputs, &[y], &types, Some(&[vec![0]])).unwrap();
        let d = Description {
            name: "plant & co".into(),
            uuid: parse_uuid("01234567-89ab-cdef-0123-456789abcdef").unwrap(),
            op_modes: vec![OpMode::NonRealTime, OpMode::SoftRealTime],
            fixed_resolution: None,
            recommended_resolution: Some((1, 100)),
            control: Some(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 2), 8000)),
            heartbeat: Some(5.0),
            ports,
        };
        let text = d.write();
        let mut back = Description::read(&text).unwrap();
        back.op_modes.sort_by_key(|m| m.code());
        let mut expected = d.clone();
        expected.op_modes.sort_by_key(|m| m.code());
        assert_eq!(back, expected, "{text}");
        assert_eq!(uuid_text(&d.uuid), "01234567-89ab-cdef-0123-456789abcdef");
    }

    #[test]
    fn a_broken_description_names_its_place() {
        let e = Description::read("<dcpSlaveDescription dcpMajorVersion=\"1\">\n<x></y>").unwrap_err();
        assert_eq!(e.line, 2);
        let e = Description::read("<dcpSlaveDescription dcpMajorVersion=\"1\" dcpSlaveName=\"a\" uuid=\"nope\"/>")
            .unwrap_err();
        assert!(e.message.contains("uuid \"nope\""), "{e}");
        assert_eq!(parse_uuid("0123456789ab-cdef-0123-456789abcdef"), None);
    }

    #[test]
    fn a_vector_wider_than_a_datagram_is_refused_not_allocated() {
        let variable = |dims: &str| {
            format!(
                "<dcpSlaveDescription dcpMajorVersion=\"1\" dcpMinorVersion=\"0\" dcpSlaveName=\"a\" \
                 uuid=\"01234567-89ab-cdef-0123-456789abcdef\">\n<OpMode><SoftRealTime/></OpMode>\n<Variables>\n\
                 <Variable name=\"x\" valueReference=\"1\"><Input><Float64/>\n<Dimensions>{dims}</Dimensions>\
                 </Input></Variable>\n</Variables>\n</dcpSlaveDescription>"
            )
        };
        let d = Description::read(&variable("<Dimension constant=\"3\"/><Dimension constant=\"4\"/>")).unwrap();
        assert_eq!(d.ports.inputs[0].width(), 12);
        for dims in [
            "<Dimension constant=\"4294967296\"/><Dimension constant=\"4294967296\"/>",
            "<Dimension constant=\"1000000000000\"/>",
            "<Dimension constant=\"65503\"/>",
        ] {
            let e = Description::read(&variable(dims)).unwrap_err();
            assert_eq!(e.line, 4, "{e}");
            assert!(
                e.message
                    .contains("variable \"x\" has more elements than a datagram carries (65502)"),
                "{e}"
            );
        }
    }
}
