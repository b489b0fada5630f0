//! Tandem's configuration: raw settings from files and the command line
//! become validated settings before any worker is built.
//!
//! It depends on the model crate (model references and a model's own
//! settings), the runtime (the settings' types) and the E2E definitions
//! of the I/O; never on the session, the servers or a device: it reads
//! and validates, it opens nothing.
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
//!
//! A real-time run is configured by a TOML file (see `config/examples/ev.toml`
//! and `config/schema.json`):
//!
//! ```
//! use std::path::Path;
//! use tandem_config::parse_run_config;
//! use tandem_models::ModelRef;
//! let text = "model = \"ev\"\nframe = \"1ms\"\n[implicit]\nmethod = \"bdf7\"\n";
//! let e = parse_run_config(text, Path::new("ev.toml"), &["ev-drive-cycle"]).unwrap_err();
//! assert_eq!(
//!     e.to_string(),
//!     "ev.toml:4:10: implicit.method: unknown implicit method \"bdf7\"; use one of: bdf, bdf1, bdf2, trapezoidal"
//! );
//! let run = parse_run_config("model = \"ev\"", Path::new("ev.toml"), &[]).unwrap();
//! assert_eq!(run.model.value, ModelRef::Builtin("ev".into()));
//! assert_eq!(run.settings.frame, 1e-3);
//! ```

pub mod bounds;
mod bus;
mod dcp;
mod diag;
mod duration;
mod e2e;
mod error;
mod fault;
mod load;
mod locate;
mod paths;
mod place;
mod raw;
mod run;
mod simulation;
mod text;
mod validate;

pub use bus::{
    BusConfig, NamePairs, ReceiveConfig, SerialConfig, Timeout, TimeoutPolicy, TransmitConfig, TransportConfig,
};
pub use dcp::{check_endpoint, check_slave_name, DcpConfig, DcpEndpoint, ErrorAt, DEFAULT_MASTER_TIMEOUT};
pub use diag::{DiagnosticsConfig, DidConfig, DtcConfig};
pub use duration::{Duration, DurationError, DURATION_PATTERN};
pub use e2e::{E2eConfig, E2eScheme, FieldPlace};
pub use error::{ConfigError, Located, Location};
pub use fault::{FaultConfig, FaultEnd, FaultKind};
pub use load::{load_run_config, parse_fault, parse_fault_request, parse_run_config, read_text};
pub use paths::{NamedPath, PathUse};
pub use place::TomlPlace;
pub use raw::run_config_schema;
pub use run::{
    EcuConfig, InputPoints, InputsConfig, RecordConfig, RunConfig, RunLengthError, StartValue, XcpConfig,
    DEFAULT_DURATION, DEFAULT_FRAME, MAX_COUNT,
};

pub use simulation::{
    fixed_step, Overrides, SettingsError, DEFAULT_ATOL, DEFAULT_RTOL, DEFAULT_SOLVER, DEFAULT_STEP, DEFAULT_STOP,
};
