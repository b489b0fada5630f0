//! Why a session cannot be built or run: [`SessionError`], whose messages
//! users and tests read word for word.

use std::io;
use std::path::PathBuf;

use tandem_config::bounds::OutputTooLarge;
use tandem_runtime::tandem::assemble::SetupError;
use tandem_runtime::tandem::preflight::Preflight;

use crate::device::DeviceError;
use crate::replay::ReplayError;
use crate::xcp::XcpError;

/// A session that cannot be built or run.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// `require_rt` was asked and a real-time check failed.
    #[error("--require-rt: missing {missing}; fix them or run without --require-rt (soft real time)")]
    NotRealTime {
        /// The checks that failed.
        missing: String,
        /// The whole preflight.
        preflight: Box<Preflight>,
    },
    /// A device could not be configured or activated.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The tandem cannot run this model with these settings.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The recording would be larger than the bound, and was not allowed.
    #[error(transparent)]
    OutputTooLarge(#[from] OutputTooLarge),
    /// An output file cannot be created or written.
    #[error("{what} {}: {cause}", path.display())]
    File {
        /// What the file is for.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What the system said.
        cause: io::Error,
    },
    /// The replayed log cannot be read.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The XCP slave cannot start.
    #[error(transparent)]
    Xcp(#[from] XcpError),
    /// A session that shares the process's virtual clock with others
    /// (advanced frame by frame in lock-step) was given stalls of its own.
    #[error("virtual_clock.stalls stop one session's own clock, which sessions sharing the process's virtual clock in lock-step cannot follow; run this configuration with `tandem run --virtual-clock`, or without its stalls")]
    StallsOnSharedClock,
    /// A thread could not be started.
    #[error("cannot start the {what} thread: {cause}")]
    Thread {
        /// Which thread.
        what: &'static str,
        /// What the system said.
        cause: io::Error,
    },
}
