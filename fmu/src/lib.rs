//! A Tandem model packed as an FMI Co-Simulation FMU, and the binary inside
//! it.
//!
//! It depends on the models, the runtime, the configuration and the FMU
//! importer (its FMI versions and platform folders); never on the session,
//! devices or the servers: an exported FMU runs inside another tool.
//!
//! [`export`] writes the FMU: a `modelDescription.xml` (FMI 3.0, or FMI 2.0
//! on request), this crate's cdylib as its binary, and a `resources` folder
//! holding the model (a block diagram's JSON, or the name of a built-in
//! model) and the solver settings. The cdylib serves every model: each
//! instance reads its model from the resources folder and runs it with
//! Tandem's own fixed-step simulation ([`tandem_runtime::Simulation`]), so
//! an FMU stepped at the model's step, or a whole multiple of it, gives at
//! each communication point, bit for bit, what `tandem sim` records there
//! with its default event settings (for the BDF, whose last steps land on
//! the stop time, given the same stop time).
//!
//! Value reference 0 is time, then come the inputs, then the outputs, all
//! Float64 (FMI 2: Real) scalars with continuous variability, then a block
//! diagram's parameters: each number among its blocks' parameters (not
//! those of `Inport`s), named `block.param`, tunable where the model takes
//! a change while running (the stepping simulation takes the retuned
//! definition at once), fixed otherwise (set before initialization, the
//! model is compiled anew with it).
//!
//! Supported FMI functions (FMI 3.0; the FMI 2.0 ones of the same name
//! likewise):
//! - `fmi3GetVersion`, `fmi3SetDebugLogging` (accepted; errors are always
//!   logged, warnings never occur), `fmi3InstantiateCoSimulation`,
//!   `fmi3FreeInstance`;
//! - `fmi3EnterInitializationMode` (start time 0; a stop time is honored),
//!   `fmi3ExitInitializationMode`, `fmi3Terminate`, `fmi3Reset`;
//! - `fmi3GetFloat64` (time, inputs, outputs, parameters),
//!   `fmi3SetFloat64` (inputs, parameters); FMU states keep the parameters'
//!   values;
//! - `fmi3DoStep` with any positive communication step: the model's steps
//!   to the last grid point before the step's end, then a shorter one to
//!   the end when it lies between two grid points (discrete blocks still
//!   sample on the grid, which stays where it is); events inside are
//!   located by the simulation itself, so it never returns early nor asks
//!   for Event Mode;
//! - `fmi3GetFMUState`, `fmi3SetFMUState`, `fmi3FreeFMUState`.
//!
//! FMI 2.0 adds `fmi2GetTypesPlatform` and `fmi2SetupExperiment`. Every
//! other function of both interfaces is exported and returns an error with
//! a logged "not supported" message: Model Exchange and Scheduled
//! Execution, Event Mode, clocks, configuration mode, variables of other
//! types, directional and adjoint derivatives, input and output
//! derivatives, serialized FMU states, asynchronous steps and status
//! queries.
//!
//! Every entry point runs inside a guard: a failure returns `fmi3Error`
//! (`fmi2Error`) and logs, through the importer's logger, a message naming
//! the call, the variable or value concerned, and the fix; a panic is
//! caught and reported likewise, never unwinding into the importer.

// The C entry points are unsafe functions; every unsafe operation in them
// still sits in its own `unsafe` block, saying why it holds.
#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]

mod abi;
mod export;
mod instance;
mod library;
mod parameters;
mod resources;
mod run;
mod variables;
mod version;

pub use export::{export, ExportError, ExportReport};
pub use library::{library_beside, library_file_name, LibraryError, BUILD_COMMAND};
pub use version::{FmiVersion, UnknownVersion};
