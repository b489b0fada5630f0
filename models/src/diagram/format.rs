//! The JSON block-diagram format, as read from disk (see `models/FORMAT.md`).
//!
//! These types only mirror the file; [`crate::diagram::compile`] checks them.

use serde::Deserialize;
use serde_json::{Map, Value};

/// A whole model file, or the inside of a subsystem.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Diagram {
    /// Schema reference, ignored (lets editors validate the file).
    #[serde(default, rename = "$schema")]
    pub schema: Option<String>,
    /// Human-readable name.
    #[serde(default)]
    pub name: Option<String>,
    /// Free text.
    #[serde(default)]
    pub description: Option<String>,
    /// The blocks.
    pub blocks: Vec<BlockDef>,
    /// Connections between block ports.
    #[serde(default)]
    pub links: Vec<LinkDef>,
    /// Default solver settings.
    #[serde(default)]
    pub simulation: Option<SimulationDef>,
    /// What the compiler does with algebraic loops (top level only).
    #[serde(default)]
    pub algebraic_loops: Option<LoopPolicy>,
}

/// What the compiler does with algebraic loops.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LoopPolicy {
    /// Refuse the model, naming each loop (the default).
    Error,
    /// Tear each loop and solve it by Newton's method at every evaluation.
    Solve,
}

/// One block as written in the file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockDef {
    /// Identifier, unique among its siblings; no `.` or `/`.
    pub id: String,
    /// Block type name, e.g. `Gain`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Type-specific parameters.
    #[serde(default)]
    pub params: Map<String, Value>,
    /// Sample time: absent or -1 inherited, 0 continuous, `T` or `[T, offset]`
    /// discrete.
    #[serde(default)]
    pub sample_time: Option<Value>,
    /// Turns zero-crossing detection off for this block: its switching
    /// follows its inputs at every evaluation (Modelica's `noEvent`).
    #[serde(default)]
    pub no_event: bool,
    /// Hysteresis of the block's zero crossings: after switching to the
    /// negative side, a function switches back only beyond this value.
    #[serde(default)]
    pub hysteresis: Option<f64>,
    /// Subsystem contents (type `Subsystem` only).
    #[serde(default)]
    pub blocks: Option<Vec<BlockDef>>,
    /// Subsystem links (type `Subsystem` only).
    #[serde(default)]
    pub links: Option<Vec<LinkDef>>,
    /// Where an editor draws the block; the compiler ignores it.
    #[serde(default)]
    pub layout: Option<BlockLayout>,
}

/// A block's place on an editor's page (pixels, y downwards).
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockLayout {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Quarter turns clockwise an editor draws the block with: 0, 90, 180
    /// or 270 (degrees).
    #[serde(default)]
    pub rotation: Option<u16>,
    /// Whether an editor draws the block mirrored (inputs on the right).
    #[serde(default)]
    pub flip: Option<bool>,
}

/// Where an editor draws a link: the points its line passes through, from
/// the source on (a fan-out branches after the last one).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkLayout {
    /// Bends of the line, in page pixels.
    #[serde(default)]
    pub waypoints: Vec<Point>,
}

/// A point on the page.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Point {
    /// Rightwards.
    pub x: f64,
    /// Downwards.
    pub y: f64,
}

/// A link from one output port to one or more input ports.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkDef {
    /// Source, `block` or `block.port` (port by name or 1-based number).
    pub from: String,
    /// Destination(s), same syntax.
    pub to: Targets,
    /// Where an editor draws it; the compiler ignores it.
    #[serde(default)]
    pub layout: Option<LinkLayout>,
}

/// One destination or several.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Targets {
    /// A single destination.
    One(String),
    /// Fan-out to several destinations.
    Many(Vec<String>),
}

impl Targets {
    /// The destinations as a slice.
    pub fn as_slice(&self) -> &[String] {
        match self {
            Targets::One(s) => std::slice::from_ref(s),
            Targets::Many(v) => v,
        }
    }
}

/// Default simulation settings stored with the model.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimulationDef {
    /// Integrator name (`euler`, `heun`, `rk4`, `bdf`).
    #[serde(default)]
    pub solver: Option<String>,
    /// Relative tolerance of `bdf`.
    #[serde(default)]
    pub rtol: Option<f64>,
    /// Absolute tolerance of `bdf`.
    #[serde(default)]
    pub atol: Option<f64>,
    /// Fixed step in seconds.
    #[serde(default)]
    pub step: Option<f64>,
    /// Stop time in seconds.
    #[serde(default)]
    pub stop: Option<f64>,
}
