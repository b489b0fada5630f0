//! Tandem's runtime: integrators and the drivers that step models through
//! time, and recording of their outputs.
//!
//! It depends on the model crate alone; never on the configuration, the
//! I/O or the session: a driver is handed a model, settings and a
//! recorder, and knows no files or devices.
//!
//! ```
//! use tandem_models::diagram;
//! use tandem_runtime::{record::Trace, FixedStep, Method, Simulation};
//! let mut c = diagram::compile_str(r#"{"blocks": [
//!     {"id": "one", "type": "Constant", "params": {"value": 1}},
//!     {"id": "x", "type": "Integrator"}, {"id": "y", "type": "Output"}],
//!   "links": [{"from": "one", "to": "x"}, {"from": "x", "to": "y"}]}"#).unwrap();
//! let settings = FixedStep { solver: Method::Rk4.into(), step: 0.1, stop: 1.0 };
//! let mut trace = Trace::default();
//! Simulation::new(&mut c.model, settings).unwrap().run(&mut trace, &mut |_| {}).unwrap();
//! assert!((trace.rows.last().unwrap()[0] - 1.0).abs() < 1e-12);
//! ```

pub mod bdf;
pub mod events;
pub mod explicit;
pub mod hermite;
pub mod implicit;
pub mod linalg;
mod named;
pub mod ode;
pub mod rates;
pub mod record;
pub mod rosenbrock;
pub mod sim;
pub mod step;
pub mod tandem;

pub use bdf::{Bdf, BdfError, BdfOptions, BdfStats, Tolerance};
pub use events::{ChatterPolicy, EventOptionError, EventSettings};
pub use explicit::{ExplicitRk, Method};
pub use implicit::{FixedImplicit, ImplicitMethod, ImplicitSettings, ImplicitStats};
pub use named::UnknownName;
pub use ode::{ModelOde, OdeSystem};
pub use rosenbrock::{factor_iteration_matrix, TimeDerivative, WMethod, WStep, WStepper};
pub use sim::{FixedStep, SimError, Simulation, Solver, Summary};
pub use step::{FixedStepper, StepReport};
