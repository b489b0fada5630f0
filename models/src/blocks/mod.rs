//! The block library: the [`Block`] trait, the context blocks are built and
//! evaluated in, and the registry of block types.
//!
//! Each family of blocks lives in one file that ends with its tests and a
//! `TYPES` list; adding a block means adding it to that file (see
//! `models/FORMAT.md`, "Adding a block").

mod continuous;
mod discrete;
mod expression;
pub mod kernel;
mod logic;
mod lookup;
mod math;
mod nonlinear;
pub mod params;
mod routing;
mod sources;
#[cfg(test)]
pub(crate) mod testing;

use std::fmt;

pub use kernel::{Kernel, Update};
pub use lookup::{Curve, Surface};
pub use params::Params;

use crate::error_kind::ErrorKind;
use crate::model::{SampleTime, Variable};

/// A block type: its name and how to build a block of it from parameters.
pub struct BlockType {
    /// The `type` string in model files.
    pub name: &'static str,
    /// One line on what it computes.
    pub summary: &'static str,
    /// Declares the ports, states and rate, and returns the evaluator.
    pub build: fn(&mut Build) -> Result<Box<dyn Block>, BlockError>,
}

/// All block types of the library.
pub fn types() -> impl Iterator<Item = &'static BlockType> {
    [
        sources::TYPES,
        math::TYPES,
        nonlinear::TYPES,
        expression::TYPES,
        continuous::TYPES,
        discrete::TYPES,
        logic::TYPES,
        lookup::TYPES,
        routing::TYPES,
    ]
    .into_iter()
    .flatten()
}

/// The block type called `name`.
pub fn find(name: &str) -> Option<&'static BlockType> {
    types().find(|t| t.name == name)
}

/// The evaluation of one block. Implementations hold only parameters
/// (immutable after the build); all changing values live in the [`Ctx`].
/// None of these methods may allocate.
pub trait Block: Send + Sync {
    /// Writes the outputs from the inputs and states.
    fn outputs(&self, c: &mut Ctx);
    /// Writes the derivatives of the continuous states into `c.dx`.
    fn derivatives(&self, c: &mut Ctx) {
        let _ = c;
    }
    /// At a sample hit of a major step, after all outputs: advances discrete
    /// states in `c.xd` and may reset continuous states in `c.x`.
    fn update(&self, c: &mut Ctx) {
        let _ = c;
    }
    /// What [`Block::outputs`] and [`Block::derivatives`] compute in a
    /// minor evaluation, as data for code generators; the default:
    /// [`Kernel::Opaque`], evaluated by the interpreter only.
    fn kernel(&self) -> Kernel<'_> {
        Kernel::Opaque
    }
    /// What [`Block::update`] does, as data for code generators; the
    /// default: [`Update::Opaque`], done by the interpreter only.
    fn update_kernel(&self) -> Update {
        Update::Opaque
    }
}

/// Where a port's values sit in the signal buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Slot {
    /// Index of the first element.
    pub offset: u32,
    /// Number of elements (the port's width).
    pub width: u32,
}

/// What a block sees while it is evaluated: time, its ports and its states.
pub struct Ctx<'a> {
    /// Time in seconds.
    pub t: f64,
    /// Period of the block's rate in seconds (0 when continuous).
    pub period: f64,
    /// The block's continuous states.
    pub x: &'a mut [f64],
    /// Derivatives of `x` (written in [`Block::derivatives`] only).
    pub dx: &'a mut [f64],
    /// The block's discrete states.
    pub xd: &'a mut [f64],
    pub(crate) signals: &'a mut [f64],
    pub(crate) inputs: &'a [Slot],
    pub(crate) outputs: &'a [Slot],
    pub(crate) switching: Switching<'a>,
}

/// The zero-crossing part of a block's evaluation (see [`Ctx::side`]).
pub(crate) struct Switching<'a> {
    /// A major evaluation: modes may change.
    pub major: bool,
    /// Detection is on for this block (off with `no_event`).
    pub enabled: bool,
    /// Band the function must pass beyond zero to switch back to its
    /// positive side (0: none).
    pub hysteresis: f64,
    /// Latched side of each function: 1 positive, 0 negative.
    pub modes: &'a mut [f64],
    /// Switching distance of each function: positive while its side holds.
    pub distance: &'a mut [f64],
}

impl<'a> Ctx<'a> {
    /// Whether this is a major evaluation (outputs latch, modes may switch).
    pub fn is_major(&self) -> bool {
        self.switching.major
    }

    /// The side of zero-crossing function `i` of the block, whose value
    /// now is `z`: `true` for the positive side (z >= 0).
    ///
    /// At major evaluations the side switches: to negative when z < 0, back
    /// to positive when z >= 0, or with hysteresis h only when z > h. At
    /// minor evaluations (the stages of a step) it stays as latched, so the
    /// block's behaviour is smooth within a step and the integrator locates
    /// the switching time from the distance this records. With detection
    /// off (`no_event`) the side follows z at every evaluation.
    #[inline]
    pub fn side(&mut self, i: usize, z: f64) -> bool {
        let sw = &mut self.switching;
        if !sw.enabled {
            sw.distance[i] = f64::INFINITY;
            return z >= 0.0;
        }
        let latched = sw.modes[i] > 0.5;
        let side = if !sw.major {
            latched
        } else if latched {
            z >= 0.0 || z.is_nan()
        } else if sw.hysteresis > 0.0 {
            z > sw.hysteresis
        } else {
            z >= 0.0
        };
        if sw.major {
            sw.modes[i] = if side { 1.0 } else { 0.0 };
        }
        sw.distance[i] = if side { z } else { sw.hysteresis - z };
        side
    }

    /// Number of input ports.
    pub fn n_inputs(&self) -> usize {
        self.inputs.len()
    }
    /// Number of output ports.
    pub fn n_outputs(&self) -> usize {
        self.outputs.len()
    }
    /// Width of input `i`.
    pub fn in_width(&self, i: usize) -> usize {
        self.inputs[i].width as usize
    }
    /// Width of output `j`.
    pub fn out_width(&self, j: usize) -> usize {
        self.outputs[j].width as usize
    }
    /// First element of input `i`.
    #[inline]
    pub fn u(&self, i: usize) -> f64 {
        self.signals[self.inputs[i].offset as usize]
    }
    /// Element `k` of input `i`; a scalar input is broadcast to any `k`.
    #[inline]
    pub fn u_at(&self, i: usize, k: usize) -> f64 {
        let s = self.inputs[i];
        self.signals[s.offset as usize + if s.width == 1 { 0 } else { k }]
    }
    /// Sets the first element of output `j`.
    #[inline]
    pub fn set(&mut self, j: usize, v: f64) {
        self.signals[self.outputs[j].offset as usize] = v;
    }
    /// Sets element `k` of output `j`.
    #[inline]
    pub fn set_at(&mut self, j: usize, k: usize, v: f64) {
        self.signals[self.outputs[j].offset as usize + k] = v;
    }
    /// Copies input `i` to output `j` (same width, or a broadcast scalar).
    pub fn pass(&mut self, i: usize, j: usize) {
        for k in 0..self.out_width(j) {
            let v = self.u_at(i, k);
            self.set_at(j, k, v);
        }
    }
    /// Output `j` element-wise from input `i` through `f` (scalars broadcast).
    #[inline]
    pub fn map(&mut self, i: usize, j: usize, f: impl Fn(f64) -> f64) {
        let (from, to) = (self.inputs[i], self.outputs[j]);
        let (src, dst) = (from.offset as usize, to.offset as usize);
        if to.width == 1 {
            self.signals[dst] = f(self.signals[src]);
            return;
        }
        for k in 0..to.width as usize {
            self.signals[dst + k] = f(self.signals[src + if from.width == 1 { 0 } else { k }]);
        }
    }
}

/// The rate a block runs at, as declared by its type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Rate {
    /// Takes the rate of its inputs (or the `sample_time` set on it).
    Inherited,
    /// Evaluated at every step and stage.
    Continuous,
    /// Never changes.
    Constant,
    /// Discrete; needs a sample time (set on it, or inherited from a
    /// discrete input).
    Discrete,
}

/// An input port as declared by a block.
#[derive(Clone, Debug)]
pub struct InPort {
    /// Name used in links (besides the 1-based number).
    pub name: String,
    /// Whether the outputs read this input directly (within the same pass).
    pub feedthrough: bool,
    /// Width the block was built for.
    pub width: Option<usize>,
}

/// An output port as declared by a block.
#[derive(Clone, Debug)]
pub struct OutPort {
    /// Name used in links (besides the 1-based number).
    pub name: String,
    /// Width of the signal.
    pub width: usize,
}

/// How much a build may assume about input widths not yet known.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum WidthMode {
    /// Only known widths.
    Strict,
    /// Loop-breaking blocks may use their hints.
    Hinted,
    /// Unknown widths are 1.
    Fallback,
}

/// Everything a block type declares while it is built.
pub struct Build<'a> {
    /// The block's parameters.
    pub params: Params<'a>,
    /// Sample time set on the block in the file, if any.
    pub sample_time: Option<SampleTime>,
    pub(crate) known_widths: Vec<Option<usize>>,
    pub(crate) mode: WidthMode,
    pub(crate) inputs: Vec<InPort>,
    pub(crate) outputs: Vec<OutPort>,
    pub(crate) x0: Vec<f64>,
    pub(crate) xd0: Vec<f64>,
    pub(crate) rate: Rate,
    pub(crate) merge_guards: bool,
    pub(crate) zero_crossings: usize,
    pub(crate) external: Option<External>,
    /// Full path of the block being built (`sub/inner`).
    pub path: String,
}

/// A block that is an external port of the model.
#[derive(Clone, Debug)]
pub(crate) enum External {
    /// A root `Inport`: the program copies the model input into its output.
    Input(Variable),
    /// An `Output`: its input becomes a model output.
    Output(Variable),
}

impl<'a> Build<'a> {
    pub(crate) fn new(path: &str, params: Params<'a>, sample_time: Option<SampleTime>, mode: WidthMode) -> Self {
        Build {
            params,
            sample_time,
            known_widths: Vec::new(),
            mode,
            inputs: Vec::new(),
            outputs: Vec::new(),
            x0: Vec::new(),
            xd0: Vec::new(),
            rate: Rate::Inherited,
            merge_guards: false,
            zero_crossings: 0,
            external: None,
            path: path.to_string(),
        }
    }

    /// Declares `n` input ports named `1`..`n`, all with direct feedthrough.
    pub fn inputs(&mut self, n: usize) {
        let names: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
        self.declare_inputs(names.iter().map(String::as_str));
    }

    /// Declares named input ports, all with direct feedthrough.
    pub fn named_inputs(&mut self, names: &[&str]) {
        self.declare_inputs(names.iter().copied());
    }

    fn declare_inputs<'n>(&mut self, names: impl Iterator<Item = &'n str>) {
        self.inputs = names
            .map(|name| InPort {
                name: name.to_string(),
                feedthrough: true,
                width: None,
            })
            .collect();
    }

    /// Marks input `i` as read only by derivatives and updates, never by the
    /// outputs of the same pass (it does not create an ordering constraint).
    pub fn no_feedthrough(&mut self, i: usize) {
        self.inputs[i].feedthrough = false;
    }

    /// Width of input `i`, if it can be known now.
    pub fn width(&mut self, i: usize) -> Result<usize, BlockError> {
        match (self.known_widths.get(i).copied().flatten(), self.mode) {
            (Some(w), _) => self.assume(i, w),
            (None, WidthMode::Fallback) => self.assume(i, 1),
            (None, _) => Err(BlockError::Pending),
        }
    }

    /// Width of input `i`, or `hint` when unknown and the block breaks a loop
    /// (delays and integrators, whose initial value fixes the width).
    pub fn width_or(&mut self, i: usize, hint: usize) -> Result<usize, BlockError> {
        match (self.known_widths.get(i).copied().flatten(), self.mode) {
            (Some(w), _) => self.assume(i, w),
            (None, WidthMode::Strict) => Err(BlockError::Pending),
            (None, _) => self.assume(i, hint),
        }
    }

    fn assume(&mut self, i: usize, w: usize) -> Result<usize, BlockError> {
        let port = self
            .inputs
            .get_mut(i)
            .ok_or_else(|| BlockError::new(format!("internal error: input {} used before it was declared", i + 1)))?;
        port.width = Some(w);
        Ok(w)
    }

    /// Requires input `i` to be a scalar. When its width is not known yet
    /// and the compiler is stuck (a loop), it is taken as 1; the compiler
    /// checks it against the source later.
    pub fn scalar(&mut self, i: usize) -> Result<(), BlockError> {
        match self.width_or(i, 1)? {
            1 => Ok(()),
            w => Err(BlockError::dimension(format!(
                "dimension mismatch: input {} (\"{}\") must be a scalar, found width {w}",
                i + 1,
                self.inputs[i].name
            ))),
        }
    }

    /// The common width of all inputs: equal widths, or scalars mixed with
    /// one vector width (scalars are broadcast).
    pub fn common_width(&mut self) -> Result<usize, BlockError> {
        let mut common = 1;
        for i in 0..self.inputs.len() {
            let w = self.width(i)?;
            if w != 1 && common != 1 && w != common {
                return Err(BlockError::dimension(format!(
                    "dimension mismatch: input {} has width {w} but another input has width {common}",
                    self.inputs[i].name
                ))
                .help("connect signals of the same width, or scalars (which are broadcast)"));
            }
            common = common.max(w);
        }
        Ok(common)
    }

    /// Declares output ports `1`..`n` with the given widths.
    pub fn outputs(&mut self, widths: &[usize]) {
        self.outputs = widths
            .iter()
            .enumerate()
            .map(|(j, &width)| OutPort {
                name: (j + 1).to_string(),
                width,
            })
            .collect();
    }

    /// Declares named output ports with the given widths.
    pub fn named_outputs(&mut self, ports: &[(&str, usize)]) {
        self.outputs = ports
            .iter()
            .map(|&(name, width)| OutPort {
                name: name.to_string(),
                width,
            })
            .collect();
    }

    /// Declares continuous states with their initial values.
    pub fn states(&mut self, x0: Vec<f64>) {
        self.x0 = x0;
    }

    /// Declares discrete states with their initial values.
    pub fn discrete_states(&mut self, xd0: Vec<f64>) {
        self.xd0 = xd0;
    }

    /// Declares the block's rate (the default is [`Rate::Inherited`]).
    pub fn rate(&mut self, rate: Rate) {
        self.rate = rate;
    }

    /// Declares `n` zero-crossing functions, evaluated through
    /// [`Ctx::side`] with indices `0..n`.
    pub fn zero_crossings(&mut self, n: usize) {
        self.zero_crossings = n;
    }

    /// Makes the block a model input (root `Inport`).
    pub(crate) fn external_input(&mut self, v: Variable) {
        self.external = Some(External::Input(v));
    }

    /// Makes the block's input a model output (`Output`).
    pub(crate) fn external_output(&mut self, v: Variable) {
        self.external = Some(External::Output(v));
    }

    /// Declares that inputs `n+1..2n` are filled in by the compiler with the
    /// activity of the sources of inputs `1..n` (used by `Merge`).
    pub fn merge_guards(&mut self) {
        self.merge_guards = true;
    }
}

/// Why a block could not be built.
#[derive(Clone, Debug, PartialEq)]
pub enum BlockError {
    /// The width of an input is not known yet (the compiler retries).
    Pending,
    /// A real mistake.
    Invalid {
        /// Category (a parameter or a dimension mistake).
        kind: ErrorKind,
        /// The parameter at fault, when the mistake is one parameter's
        /// (its shape: [`params::Shape`]); messages then name it in place
        /// of the block's type.
        param: Option<&'static str>,
        /// What is wrong.
        message: String,
        /// How to fix it.
        help: Option<String>,
    },
}

impl BlockError {
    /// A parameter mistake described by `message`.
    pub fn new(message: impl Into<String>) -> Self {
        BlockError::Invalid {
            kind: ErrorKind::Parameter,
            param: None,
            message: message.into(),
            help: None,
        }
    }

    /// A dimension mistake described by `message`.
    pub fn dimension(message: impl Into<String>) -> Self {
        BlockError::Invalid {
            kind: ErrorKind::Dimension,
            param: None,
            message: message.into(),
            help: None,
        }
    }

    /// A mistake of parameter `param` alone, of `kind`, described by
    /// `message` (what was found, then the fix).
    pub fn of_param(kind: ErrorKind, param: &'static str, message: impl Into<String>) -> Self {
        BlockError::Invalid {
            kind,
            param: Some(param),
            message: message.into(),
            help: None,
        }
    }

    /// Adds advice on the fix.
    pub fn help(self, help: impl Into<String>) -> Self {
        match self {
            BlockError::Invalid {
                kind, param, message, ..
            } => BlockError::Invalid {
                kind,
                param,
                message,
                help: Some(help.into()),
            },
            pending => pending,
        }
    }

    /// The message as a diagram error gives it for a block of type
    /// `type_name`: `param: message` for a parameter's mistake, else
    /// `(Type) message`.
    pub fn located(&self, type_name: &str) -> String {
        match self {
            BlockError::Invalid {
                param: Some(param),
                message,
                ..
            } => format!("{param}: {message}"),
            BlockError::Invalid { message, .. } => format!("({type_name}) {message}"),
            BlockError::Pending => format!("({type_name}) {self}"),
        }
    }

    /// A required parameter is absent.
    pub fn missing(key: &str, what: &str) -> Self {
        BlockError::new(format!("missing parameter \"{key}\""))
            .help(format!("add \"{key}\": <{what}> to the block's \"params\""))
    }

    /// A parameter has the wrong JSON type.
    pub fn mistyped(key: &str, what: &str, found: &serde_json::Value) -> Self {
        BlockError::new(format!("parameter \"{key}\" must be {what}, found {found}"))
    }
}

impl fmt::Display for BlockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockError::Pending => write!(f, "input widths not known yet"),
            BlockError::Invalid {
                param, message, help, ..
            } => {
                if let Some(param) = param {
                    write!(f, "{param}: ")?;
                }
                write!(f, "{message}")?;
                if let Some(help) = help {
                    write!(f, "\n  help: {help}")?;
                }
                Ok(())
            }
        }
    }
}
