//! Tandem's run sessions: a model bound to its run configuration, with its
//! CAN buses and serial devices, run by the explicit/implicit tandem on the
//! real clock or on the virtual one, observed while it runs, and reported.
//!
//! It is the floor where the I/O crates (transports, DBC, E2E, UDS, logs),
//! the XCP slave, the FMU importer, the compiler and the runtime meet; it
//! depends on no server and no front end (the binary, `serve`, `dcp` and
//! the Python module depend on it).
//!
//! Every command that runs a model in real time (`tandem run`, `ecu`,
//! `replay`), the benchmarks and the tests go through this crate:
//!
//! 1. [`tandem_config::load_run_config`] reads and validates the file;
//! 2. [`bind()`] checks every name against the model and the DBC files
//!    (errors at their line and column) and gives a [`Plan`];
//! 3. [`Session::new`] builds the run: files, devices, both sides;
//! 4. [`Session::run`] runs it and returns a [`Report`].
//!
//! ```
//! use std::path::Path;
//! use tandem_config::parse_run_config;
//! use tandem_session::{bind, ClockMode, Options, Session};
//!
//! let text = "model = \"ev\"\nframe = \"1ms\"\nduration = \"50ms\"\n[inputs]\nprofile = \"ev-drive-cycle\"\n";
//! let config = parse_run_config(text, Path::new("ev.toml"), tandem_models::plants::PROFILES).unwrap();
//! let plan = bind(config).unwrap();
//! let results = std::env::temp_dir().join("tandem-session-doc");
//! let session = Session::new(plan, Options::new(ClockMode::Virtual, results)).unwrap();
//! let report = session.run(&mut ()).unwrap();
//! assert_eq!(report.metrics.frames.get(), 50);
//! assert!(report.failure.is_none());
//! ```
//!
//! The layers: the I/O crates know frames (`tandem-can`), transports and
//! serial protocols (`tandem-bus`), DBC coding (`tandem-dbc`), E2E
//! protection (`tandem-e2e`), diagnostics (`tandem-uds`) and logs
//! (`tandem-log`); this crate binds them to a model ([`mapping`],
//! [`bus`], [`serial`]), gives each device a lifecycle ([`device`]), and
//! meets the real-time threads of `tandem-runtime` only through lock-free
//! queues ([`inputs`], [`transmit`], [`log`]).

pub mod bind;
pub mod bus;
pub mod controls;
pub mod device;
pub mod diag;
pub mod fault;
pub mod inputs;
pub mod log;
mod lookup;
pub mod mapping;
pub mod metrics;
pub mod offline;
pub mod peer;
mod protection;
pub mod replay;
pub mod report;
pub mod serial;
mod session;
pub mod transmit;
pub mod watch;
pub mod xcp;

pub use bind::{bind, BindError, Plan};
pub use controls::{Applied, ControlError, Controls};
pub use report::Report;
pub use session::{ClockMode, Observer, Options, Session, SessionError};
