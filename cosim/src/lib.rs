//! Tandem's co-simulation master: a system split into sub-models, each
//! advanced by its own solver with its own step, exchanging coupling
//! values at macro steps.
//!
//! It depends on the models, the runtime, the compiler, the FMU importer
//! and the configuration; never on the session, devices or the servers:
//! a co-simulation runs offline.
//!
//! A system file (`cosim/SYSTEM.md`) names the sub-models (JSON block
//! diagrams, built-in plants), their solvers, and the connections from
//! outputs to inputs. Between communication points each input follows a
//! Lagrange polynomial (order 0, 1 or 2) through the newest values of the
//! output driving it: extrapolated (Jacobi: every sub-model steps from the
//! same values, in parallel), or interpolated through the new values of
//! the sub-models already stepped (Gauss–Seidel, in an order that
//! feedthrough dictates). A macro step can be iterated from saved points
//! until the coupling values settle, which also solves algebraic loops
//! between sub-models: its repetitions exchange the waveforms of the
//! outputs, recorded at the micro steps of the sub-models' own solvers.
//! An SSP package of FMUs is read into such a system by [`ssp::load`].
//!
//! ```
//! use std::path::Path;
//! use tandem_runtime::record::Trace;
//! let text = r#"
//!     [master]
//!     step = 0.005
//!     stop = 1.0
//!     ordering = "gauss-seidel"
//!     extrapolation = 2
//!     [[model]]
//!     name = "mass1"
//!     source = "mass1.json"
//!     step = 0.001
//!     [[model]]
//!     name = "mass2"
//!     source = "mass2.json"
//!     step = 0.001
//!     [[connection]]
//!     from = "mass1.x1"
//!     to = "mass2.x1"
//!     [[connection]]
//!     from = "mass1.v1"
//!     to = "mass2.v1"
//!     [[connection]]
//!     from = "mass2.F"
//!     to = "mass1.F"
//! "#;
//! let system = tandem_cosim::parse(text, Path::new("examples/split.toml")).unwrap();
//! assert_eq!(system.order(), ["mass1", "mass2"]);
//! let mut trace = Trace::default();
//! let summary = system.run(&mut trace, &mut |_| {}).unwrap();
//! assert_eq!(summary.macro_steps, 200);
//! // x1 at t = 1 s; the exact value is -4.4977.
//! assert!((trace.rows[200][0] + 4.4977).abs() < 0.005);
//! ```

pub mod bounds;
mod course;
mod curve;
mod driven;
mod fmu;
mod graph;
mod history;
mod master;
pub mod plant;
mod recording;
mod slave;
pub mod ssp;
mod submodel;
mod system;
mod waveform;

pub use course::Course;
pub use curve::Curve;
pub use fmu::CoSimulationFmu;
pub use master::{CosimError, Summary};
pub use recording::Recording;
pub use slave::ModelSlave;
pub use submodel::{Feedthrough, NoSuchInput, SubModel, SubModelError};
pub use system::{
    assemble, fixed_step_for, load, load_source, load_source_with, load_with, parse, parse_with, Iterate, Loading,
    Master, ModelSpec, Ordering, Participant, PointInputs, RawConnection, System, SystemError, DEFAULT_EXTRAPOLATION,
    DEFAULT_MAX_ITERATIONS,
};
pub use waveform::Waveform;
