//! Tandem's configuration: raw settings from files and the command line
//! become validated settings before any worker is built.
//!
//! ```
//! use tandem_config::{fixed_step, Overrides};
//! use tandem_models::diagram::SimulationDef;
//! let model = SimulationDef { solver: Some("heun".into()), step: Some(0.01), stop: Some(2.0) };
//! let cli = Overrides { stop: Some(5.0), ..Overrides::default() };
//! let s = fixed_step(&model, &cli).unwrap();
//! assert_eq!((s.method.name(), s.step, s.stop), ("heun", 0.01, 5.0));
//! ```

mod simulation;

pub use simulation::{fixed_step, Overrides, SettingsError, DEFAULT_SOLVER, DEFAULT_STEP, DEFAULT_STOP};
