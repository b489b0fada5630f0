//! Tandem's models: the [`Model`] trait every integrator drives, the JSON
//! block-diagram compiler with its block library, and built-in plants.
//!
//! It depends on no other Tandem crate.
//!
//! This crate knows nothing of threads, clocks or I/O: a model is a pure
//! function of time, state and inputs, evaluated into caller-owned buffers.
//!
//! ```
//! use tandem_models::{diagram, Model, StateRef};
//! let mut c = diagram::compile_str(r#"{"blocks": [
//!     {"id": "k", "type": "Gain", "params": {"gain": 3}},
//!     {"id": "u", "type": "Inport"},
//!     {"id": "y", "type": "Output"}],
//!   "links": [{"from": "u", "to": "k"}, {"from": "k", "to": "y"}]}"#).unwrap();
//! let mut y = [0.0];
//! c.model.outputs(StateRef { t: 0.0, x: &[], xd: &[], u: &[2.0] }, &mut y);
//! assert_eq!(y, [6.0]);
//! ```

pub mod blocks;
pub mod diagram;
mod error_kind;
pub mod linalg;
pub mod model;
pub mod plants;
pub mod reference;

pub use model::{Definition, Layout, MajorStep, Model, NonFinite, RetuneError, SampleTime, StateRef, Variable};
pub use reference::{interpreted, LoadError, LoadedModel, ModelRef, PrepareDiagram};
