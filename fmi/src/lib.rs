//! Imports FMUs (Functional Mock-up Units, FMI 2.0 and 3.0) into Tandem.
//!
//! It depends on the model crate alone (an FMU is one more `Model`);
//! never on the runtime's drivers, the session or any I/O.
//!
//! [`Fmu::open`] unpacks what a run needs of an FMU into a cache folder,
//! once per content ([`cache_folder`], [`Unpack`]), reads its
//! `modelDescription.xml`, loads the
//! binary of each interface it declares for this platform and resolves
//! every function those interfaces need. Then:
//!
//! - a Model Exchange FMU becomes a [`tandem_models::Model`]
//!   ([`FmuModel`]): Tandem's integrators advance its continuous states,
//!   and Tandem's event location finds its state events (event
//!   indicators) and time events;
//! - a Co-Simulation FMU becomes an [`FmuSlave`] a master steps, with its
//!   state saved and restored when the FMU can.
//!
//! An FMU whose code is not trusted to keep the process alive is opened
//! with [`Fmu::open_isolated`]: each instance then runs in a process of its
//! own, and a crash in the FMU's code is an error naming the FMU, the FMI
//! call and the signal ([`isolate`]).
//!
//! Parameters are set by name before initialisation ([`Parameters`]).
//! Every failed FMI call is an [`FmuError`] naming the FMU, the call, the
//! variables it was about and the FMU's last log message.
//!
//! The binary is looked for in `binaries/<platform>/<modelIdentifier>.<ext>`
//! with the standard's platform folders: FMI 2 `linux64`, `linux32`,
//! `win64`, `win32`, `darwin64`; FMI 3 `x86_64-linux`, `x86-linux`,
//! `aarch64-linux`, `x86_64-windows`, `x86-windows`, `x86_64-darwin`,
//! `aarch64-darwin` ([`platform_folder`] gives this machine's).
//!
//! An FMU that declares `canBeInstantiatedOnlyOncePerProcess` gets one
//! instance per opened FMU: a second one (e.g. [`FmuModel::try_fork`] for a
//! second integrator thread) is refused with [`FmuError::OncePerProcess`],
//! and [`tandem_models::Model::fork`] then returns a model that reports
//! that error at its first major step. [`FmuModel::instances_allowed`]
//! tells beforehand.
//!
//! ```no_run
//! use tandem_fmi::{Fmu, FmuModel, Parameters};
//! use tandem_models::Model;
//! let fmu = Fmu::open("bouncing_ball.fmu")?;
//! let model = FmuModel::new(&fmu, &Parameters::new().with("e", 0.8))?;
//! assert_eq!(model.layout().states, ["h", "v"]);
//! # Ok::<(), tandem_fmi::FmuError>(())
//! ```

mod archive;
mod description;
mod error;
mod ffi2;
mod ffi3;
mod fmu;
mod instance;
mod instance2;
mod instance3;
mod instantiate;
pub mod isolate;
mod library;
mod load;
mod model;
mod parameters;
mod parse;
mod signals;
mod slave;

pub use archive::{cache_folder, Unpack, MAX_DESCRIPTION, MAX_ENTRIES, MAX_UNPACKED};
pub use description::{
    Alias, Causality, DefaultExperiment, Dimension, FmiVersion, Initial, Interface, InterfaceKind, ModelDescription,
    ModelStructure, Numeric, ScalarVariable, Unknown, Variability, VariableType, MAX_ELEMENTS,
};
pub use error::{FmuError, Status};
pub use fmu::Fmu;
pub use instance::{LOG_MESSAGES, LOG_MESSAGE_BYTES};
pub use isolate::Host;
pub use library::platform_folder;
pub use load::{is_fmu, load, load_with, simulation_def, FmuSetup, ModelLoadError, Use};
pub use model::{FmuModel, InstanceLimit, INNER_CHECKPOINTS, MAX_EVENT_ROUNDS, TIME_EVENT_TOLERANCE};
pub use parameters::{Parameters, Value};
pub use parse::MAX_VARIABLES;
pub use signals::{not_taken, Recorded, MAX_FEEDTHROUGH};
pub use slave::{FmuSlave, FmuState, StepEnd};
