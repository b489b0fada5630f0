//! Flattening: nested subsystems become one list of blocks with paths
//! (`outer/inner`), and links are rewritten to name blocks of that list.
//!
//! Subsystem ports stay as pass-through `Identity` blocks (`sub/port`), so a
//! link into `sub.port` feeds block `sub/port`; their cost is one copy.
//! Blocks of an action subsystem (`"action": true` in its params) are guarded
//! by the identity block behind its extra `action` input port.

use std::collections::HashMap;

use serde_json::Value;

use super::error::{listed, DiagramError, ErrorKind};
use super::format::{BlockDef, LinkDef};
use crate::blocks::{self, BlockType};
use crate::model::SampleTime;

/// A block of the flat diagram.
pub(crate) struct FlatBlock<'a> {
    /// Full path, e.g. `wheel/slip`.
    pub path: String,
    /// Its type.
    pub kind: &'static BlockType,
    /// Parameters from the file (empty for generated blocks).
    pub params: &'a serde_json::Map<String, Value>,
    /// Sample time set in the file.
    pub sample_time: Option<SampleTime>,
    /// Index of the block whose output enables this one.
    pub guard: Option<usize>,
    /// Zero-crossing detection turned off (`no_event`).
    pub no_event: bool,
    /// Hysteresis of its zero crossings (0: none).
    pub hysteresis: f64,
    /// Inside a triggered subsystem: runs only at major steps (when its
    /// trigger fired).
    pub triggered: bool,
    /// It stands for an input port of its subsystem (an inner `Inport`, or
    /// the `action`/`enable` port): the last part of its path names it.
    pub subsystem_input: bool,
}

/// One end of a link: a flat block and a port as written.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PortRef {
    /// No port given (`block`): the block's only port.
    Only,
    /// 0-based index (written 1-based).
    Index(usize),
    /// A port name.
    Name(String),
}

/// A link between flat blocks.
pub(crate) struct FlatLink {
    /// Source block and port.
    pub from: (usize, PortRef),
    /// Destination block and port.
    pub to: (usize, PortRef),
    /// The link as written, for messages.
    pub text: String,
}

/// The flat diagram.
pub(crate) struct Flat<'a> {
    pub blocks: Vec<FlatBlock<'a>>,
    pub links: Vec<FlatLink>,
}

static EMPTY: std::sync::LazyLock<serde_json::Map<String, Value>> = std::sync::LazyLock::new(serde_json::Map::new);

/// The pass-through type that stands for subsystem ports.
const BOUNDARY: &str = "Identity";

/// The longest block id (bytes).
const MAX_ID: usize = 128;

/// The longest path of a block in nested subsystems (bytes).
const MAX_PATH: usize = 1024;
const SUBSYSTEM: &str = "Subsystem";

/// Flattens a diagram given by its top-level blocks and links.
pub(crate) fn flatten<'a>(blocks: &'a [BlockDef], links: &'a [LinkDef]) -> Result<Flat<'a>, DiagramError> {
    let mut flat = Flat {
        blocks: Vec::new(),
        links: Vec::new(),
    };
    add_scope(&mut flat, &Scope::default(), blocks, links)?;
    Ok(flat)
}

/// What the blocks of one (sub)system inherit from their enclosing ones.
#[derive(Clone, Default)]
struct Scope {
    /// Path prefix of the blocks, `outer/inner/` (empty at the top).
    prefix: String,
    /// Block whose output enables them (the innermost action port).
    guard: Option<usize>,
    /// Sample time set on an enclosing subsystem.
    sample_time: Option<SampleTime>,
    /// Inside a triggered subsystem.
    triggered: bool,
}

/// What a link end names inside one scope.
enum Endpoint {
    /// An ordinary block.
    Block(usize),
    /// A subsystem: its ports map to identity blocks by name.
    Subsystem(HashMap<String, usize>, Vec<usize>, Vec<usize>),
}

fn add_scope<'a>(
    flat: &mut Flat<'a>,
    scope_of: &Scope,
    blocks: &'a [BlockDef],
    links: &'a [LinkDef],
) -> Result<(), DiagramError> {
    let (prefix, guard) = (scope_of.prefix.as_str(), scope_of.guard);
    let mut scope: HashMap<&str, Endpoint> = HashMap::new();
    for def in blocks {
        if def.id.len() > MAX_ID || prefix.len() + def.id.len() > MAX_PATH {
            return Err(DiagramError::at_block(
                ErrorKind::DuplicateId,
                &format!("{prefix}{}", def.id),
                format!(
                    "a block id is at most {MAX_ID} bytes and a block's path (its subsystems' ids and its own) at \
                     most {MAX_PATH}; this one is {} and {}",
                    def.id.len(),
                    prefix.len() + def.id.len()
                ),
            )
            .help("give the block (or its subsystems) a shorter id"));
        }
        let path = format!("{prefix}{}", def.id);
        if def.id.is_empty() || def.id.contains(['.', '/']) {
            return Err(DiagramError::at_block(
                ErrorKind::DuplicateId,
                &path,
                "a block id must be non-empty and contain no '.' or '/'",
            )
            .help("rename the block, e.g. with '_' instead"));
        }
        if scope.contains_key(def.id.as_str()) {
            return Err(DiagramError::at_block(
                ErrorKind::DuplicateId,
                &path,
                format!("duplicate block id \"{}\"", def.id),
            )
            .help("give every block in the same (sub)system a different id"));
        }
        let sample_time = def
            .sample_time
            .as_ref()
            .map(|v| parse_sample_time(v, &path))
            .transpose()?
            .flatten()
            .or(scope_of.sample_time);
        let endpoint = if def.kind == SUBSYSTEM {
            let inner = Scope {
                prefix: format!("{path}/"),
                guard,
                sample_time,
                triggered: scope_of.triggered,
            };
            add_subsystem(flat, &path, def, inner)?
        } else {
            if def.blocks.is_some() || def.links.is_some() {
                return Err(DiagramError::at_block(
                    ErrorKind::Syntax,
                    &path,
                    "only blocks of type Subsystem may contain \"blocks\" and \"links\"",
                )
                .help("set \"type\": \"Subsystem\" or move the inner blocks out"));
            }
            let kind = library_type(&def.kind, &path, !prefix.is_empty())?;
            let hysteresis = match def.hysteresis {
                None => 0.0,
                Some(h) if h >= 0.0 && h.is_finite() => h,
                Some(h) => {
                    return Err(DiagramError::at_block(
                        ErrorKind::Parameter,
                        &path,
                        format!("hysteresis must be a finite number >= 0, found {h}"),
                    )
                    .help("give the band, in the units of the switching signal, e.g. \"hysteresis\": 0.001"));
                }
            };
            flat.blocks.push(FlatBlock {
                path,
                kind,
                params: &def.params,
                sample_time,
                guard,
                no_event: def.no_event,
                hysteresis,
                triggered: scope_of.triggered,
                subsystem_input: def.kind == "Inport" && !prefix.is_empty(),
            });
            Endpoint::Block(flat.blocks.len() - 1)
        };
        scope.insert(&def.id, endpoint);
    }
    for link in links {
        let text = format!("{} -> {}", link.from, link.to.as_slice().join(", "));
        let from = resolve(&scope, &link.from, prefix, &text, Direction::Out)?;
        for to in link.to.as_slice() {
            let to = resolve(&scope, to, prefix, &text, Direction::In)?;
            flat.links.push(FlatLink {
                from: from.clone(),
                to,
                text: text.clone(),
            });
        }
    }
    Ok(())
}

/// The library type for a `type` string. Inside subsystems, `Inport` and
/// `Outport` are boundaries, handled before this is called.
fn library_type(name: &str, path: &str, nested: bool) -> Result<&'static BlockType, DiagramError> {
    let lookup = match (name, nested) {
        ("Inport" | "Outport", true) => BOUNDARY,
        ("Outport", false) => "Output",
        (other, _) => other,
    };
    blocks::find(lookup).ok_or_else(|| unknown_type(name, path))
}

fn unknown_type(name: &str, path: &str) -> DiagramError {
    let mut names: Vec<&str> = blocks::types().map(|t| t.name).chain([SUBSYSTEM, "Outport"]).collect();
    names.sort_by(|a, b| {
        let da = strsim::jaro_winkler(&a.to_lowercase(), &name.to_lowercase());
        let db = strsim::jaro_winkler(&b.to_lowercase(), &name.to_lowercase());
        db.total_cmp(&da)
    });
    DiagramError::at_block(
        ErrorKind::UnknownBlockType,
        path,
        format!("unknown block type \"{name}\""),
    )
    .help(format!(
        "did you mean {}? (`tandem blocks` lists all types)",
        names[..3].join(", ")
    ))
}

/// A subsystem's input and output port names: its inner `Inport` and
/// `Outport` ids in order, then its control port.
pub(crate) fn subsystem_ports(def: &BlockDef) -> Result<(Vec<String>, Vec<String>), DiagramError> {
    let inner = def.blocks.as_deref().unwrap_or_default();
    let named = |kind: &str| {
        inner
            .iter()
            .filter(|b| b.kind == kind)
            .map(|b| b.id.clone())
            .collect::<Vec<_>>()
    };
    let mut inputs = named("Inport");
    inputs.extend(Control::read(def, &def.id)?.port_name().map(String::from));
    Ok((inputs, named("Outport")))
}

/// How a subsystem's contents are enabled.
#[derive(Clone, Copy)]
enum Control {
    /// Always.
    None,
    /// While the extra input port of this name is > 0 (`action`, `enable`).
    Port(&'static str),
    /// Once at each edge of the extra input `trigger` in this direction.
    Trigger(&'static str),
}

/// The directions a trigger can take.
const DIRECTIONS: [&str; 3] = ["rising", "falling", "either"];

impl Control {
    /// Reads the subsystem's params: `action: true`, `enable: true` or
    /// `trigger: rising|falling|either`, at most one of them.
    fn read(def: &BlockDef, path: &str) -> Result<Control, DiagramError> {
        let bad = |message: String| DiagramError::at_block(ErrorKind::Parameter, path, message);
        let mut control = Control::None;
        for (key, value) in &def.params {
            let this = match (key.as_str(), value) {
                ("action", Value::Bool(on)) => on.then_some(Control::Port("action")),
                ("enable", Value::Bool(on)) => on.then_some(Control::Port("enable")),
                ("trigger", Value::String(d)) if DIRECTIONS.contains(&d.as_str()) => {
                    DIRECTIONS.into_iter().find(|x| x == d).map(Control::Trigger)
                }
                ("action" | "enable", other) => {
                    return Err(bad(format!("parameter \"{key}\" must be true or false, found {other}")))
                }
                ("trigger", other) => {
                    return Err(bad(format!(
                        "parameter \"trigger\" must be \"rising\", \"falling\" or \"either\", found {other}"
                    )));
                }
                _ => {
                    return Err(bad(format!("unknown parameter \"{key}\" of a Subsystem")).help(
                        "a Subsystem takes \"action\": true (If action), \"enable\": true (enabled) or \"trigger\": \"rising\" (triggered)",
                    ));
                }
            };
            if let Some(this) = this {
                if !matches!(control, Control::None) {
                    return Err(bad(
                        "a Subsystem can be an action, an enabled or a triggered subsystem, not several".into(),
                    )
                    .help("keep one of \"action\", \"enable\" and \"trigger\""));
                }
                control = this;
            }
        }
        Ok(control)
    }

    /// The extra input port the subsystem gets.
    fn port_name(self) -> Option<&'static str> {
        match self {
            Control::None => None,
            Control::Port(name) => Some(name),
            Control::Trigger(_) => Some("trigger"),
        }
    }
}

/// Adds the block behind a control port `sub/port`. It is never disabled
/// itself: nested in a guarded subsystem, it multiplies its input by the
/// enclosing guard, so the contents run only when both are on.
fn add_control_port(
    flat: &mut Flat,
    path: &str,
    port: &str,
    identity: &'static BlockType,
    outer_guard: Option<usize>,
) -> usize {
    let kind = if outer_guard.is_some() {
        blocks::find("Product").expect("Product is registered")
    } else {
        identity
    };
    flat.blocks.push(FlatBlock {
        path: format!("{path}/{port}"),
        kind,
        params: &EMPTY,
        sample_time: None,
        guard: None,
        no_event: false,
        hysteresis: 0.0,
        triggered: false,
        subsystem_input: true,
    });
    let block = flat.blocks.len() - 1;
    if let Some(g) = outer_guard {
        flat.links.push(FlatLink {
            from: (g, PortRef::Only),
            to: (block, PortRef::Index(1)),
            text: format!("(the subsystem enclosing {path})"),
        });
    }
    block
}

/// The params of the Edge behind a triggered subsystem.
fn direction_params(direction: &str) -> &'static serde_json::Map<String, Value> {
    static MAPS: std::sync::LazyLock<Vec<serde_json::Map<String, Value>>> = std::sync::LazyLock::new(|| {
        DIRECTIONS
            .iter()
            .map(|d| {
                [("direction".to_string(), Value::String(d.to_string()))]
                    .into_iter()
                    .collect()
            })
            .collect()
    });
    &MAPS[DIRECTIONS.iter().position(|d| *d == direction).unwrap_or(0)]
}

/// Adds the contents of a subsystem; `scope` carries the enclosing guard
/// and the subsystem's own sample time.
fn add_subsystem<'a>(
    flat: &mut Flat<'a>,
    path: &str,
    def: &'a BlockDef,
    mut scope: Scope,
) -> Result<Endpoint, DiagramError> {
    let outer_guard = scope.guard;
    let inner = def.blocks.as_deref().unwrap_or_default();
    let links = def.links.as_deref().unwrap_or_default();
    let identity = blocks::find(BOUNDARY).expect("the Identity block is registered");
    let control = Control::read(def, path)?;
    // The block behind the control port (where links into `sub.<port>` go)
    // and the one whose output enables the contents.
    let (port_block, guard) = match control {
        Control::None => (None, outer_guard),
        Control::Port(port) => {
            let block = add_control_port(flat, path, port, identity, outer_guard);
            (Some(block), Some(block))
        }
        Control::Trigger(direction) => {
            flat.blocks.push(FlatBlock {
                path: format!("{path}/trigger"),
                kind: blocks::find("Edge").expect("Edge is registered"),
                params: direction_params(direction),
                sample_time: None,
                guard: None,
                no_event: false,
                hysteresis: 0.0,
                triggered: false,
                subsystem_input: false,
            });
            let trigger = flat.blocks.len() - 1;
            scope.triggered = true;
            let guard = match outer_guard {
                None => trigger,
                Some(_) => {
                    let gate = add_control_port(flat, path, "triggered", identity, outer_guard);
                    flat.links.push(FlatLink {
                        from: (trigger, PortRef::Only),
                        to: (gate, PortRef::Index(0)),
                        text: format!("(trigger of {path})"),
                    });
                    gate
                }
            };
            (Some(trigger), Some(guard))
        }
    };
    let first = flat.blocks.len();
    scope.guard = guard;
    add_scope(flat, &scope, inner, links)?;
    let mut ports = HashMap::new();
    let (mut ins, mut outs) = (Vec::new(), Vec::new());
    if let (Some(port), Some(block)) = (control.port_name(), port_block) {
        ports.insert(port.to_string(), block);
    }
    for (i, b) in flat.blocks.iter().enumerate().skip(first) {
        let Some(local) = b.path.strip_prefix(&format!("{path}/")) else {
            continue;
        };
        if local.contains('/') {
            continue;
        }
        let written = inner.iter().find(|d| d.id == local).map(|d| d.kind.as_str());
        match written {
            Some("Inport") => ins.push(i),
            Some("Outport") => outs.push(i),
            _ => continue,
        }
        ports.insert(local.to_string(), i);
    }
    Ok(Endpoint::Subsystem(ports, ins, outs))
}

#[derive(Clone, Copy, PartialEq)]
enum Direction {
    In,
    Out,
}

fn resolve(
    scope: &HashMap<&str, Endpoint>,
    end: &str,
    prefix: &str,
    text: &str,
    dir: Direction,
) -> Result<(usize, PortRef), DiagramError> {
    let (id, port) = match end.split_once('.') {
        Some((id, port)) => (id, Some(port)),
        None => (end, None),
    };
    let scope_name = if prefix.is_empty() {
        "the model".to_string()
    } else {
        format!("subsystem \"{}\"", prefix.trim_end_matches('/'))
    };
    let link_error = |message: String, help: String| DiagramError {
        port: None,
        kind: ErrorKind::Link,
        block: None,
        position: None,
        message: format!("link \"{text}\": {message}"),
        help: Some(help),
    };
    let Some(endpoint) = scope.get(id) else {
        let mut ids: Vec<&str> = scope.keys().copied().collect();
        ids.sort_by(|a, b| strsim::jaro_winkler(b, id).total_cmp(&strsim::jaro_winkler(a, id)));
        return Err(link_error(
            format!("no block \"{id}\" in {scope_name}"),
            format!(
                "link to an existing block id; the closest are: {}",
                ids.iter().take(3).copied().collect::<Vec<_>>().join(", ")
            ),
        ));
    };
    match endpoint {
        Endpoint::Block(i) => {
            let port = match port {
                None => PortRef::Only,
                Some(p) => match p.parse::<usize>() {
                    Ok(0) => {
                        return Err(link_error(
                            format!("port numbers start at 1, found \"{end}\""),
                            format!("write \"{id}.1\" for the first port"),
                        ))
                    }
                    Ok(n) => PortRef::Index(n - 1),
                    Err(_) => PortRef::Name(p.to_string()),
                },
            };
            Ok((*i, port))
        }
        Endpoint::Subsystem(ports, ins, outs) => {
            let list = if dir == Direction::In { ins } else { outs };
            let target = match port {
                Some(p) => match p.parse::<usize>() {
                    Ok(n) if n >= 1 && n <= list.len() => Some(list[n - 1]),
                    _ => ports
                        .get(p)
                        .copied()
                        .filter(|i| dir == Direction::In || outs.contains(i)),
                },
                None if list.len() == 1 => Some(list[0]),
                None => None,
            };
            let mut names: Vec<&str> = ports
                .iter()
                .filter(|(_, i)| list.contains(i) || (dir == Direction::In && !outs.contains(i)))
                .map(|(n, _)| n.as_str())
                .collect();
            names.sort();
            let kind = if dir == Direction::In { "input" } else { "output" };
            target.map(|i| (i, PortRef::Index(0))).ok_or_else(|| {
                link_error(
                    format!("subsystem \"{id}\" has no {kind} port \"{}\"", port.unwrap_or("")),
                    format!(
                        "name one of its {kind} ports: {}",
                        if names.is_empty() {
                            "(none)".to_string()
                        } else {
                            listed(&names)
                        }
                    ),
                )
            })
        }
    }
}

/// Reads a `sample_time`: absent, -1 → inherited (`None`); 0 → continuous
/// (`Some(None)` is not needed: continuous is `period` 0); `T` or
/// `[T, offset]` → discrete.
fn parse_sample_time(v: &Value, path: &str) -> Result<Option<SampleTime>, DiagramError> {
    let bad = || {
        DiagramError::at_block(ErrorKind::SampleTime, path, format!("malformed sample_time {v}")).help(
            "write -1 (inherited), 0 (continuous), a period in seconds, or [period, offset] with 0 <= offset < period",
        )
    };
    let (period, offset) = match v {
        Value::Number(n) => (n.as_f64().ok_or_else(bad)?, 0.0),
        Value::Array(a) if a.len() == 2 => (a[0].as_f64().ok_or_else(bad)?, a[1].as_f64().ok_or_else(bad)?),
        _ => return Err(bad()),
    };
    if period == -1.0 && offset == 0.0 {
        return Ok(None);
    }
    if period == 0.0 && offset == 0.0 {
        return Ok(Some(SampleTime {
            period: 0.0,
            offset: 0.0,
        }));
    }
    if !(period > 0.0 && period.is_finite() && (0.0..period).contains(&offset)) {
        return Err(bad());
    }
    Ok(Some(SampleTime { period, offset }))
}
