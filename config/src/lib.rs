//! Tandem's configuration: raw settings from files and the command line
//! become validated settings before any worker is built.
//!
//! ```
//! use tandem_config::{fixed_step, Overrides};
//! use tandem_models::diagram::SimulationDef;
//! let model = SimulationDef { solver: Some("bdf".into()), step: Some(0.01), stop: Some(2.0), ..Default::default() };
//! let cli = Overrides { stop: Some(5.0), rtol: Some(1e-9), ..Overrides::default() };
//! let s = fixed_step(&model, &cli).unwrap();
//! assert_eq!(s.solver.to_string(), "bdf (rtol 1e-9, atol 1e-8)");
//! assert_eq!((s.step, s.stop), (0.01, 5.0));
//! ```

mod simulation;

pub use simulation::{
    fixed_step, Overrides, SettingsError, DEFAULT_ATOL, DEFAULT_RTOL, DEFAULT_SOLVER, DEFAULT_STEP, DEFAULT_STOP,
};
