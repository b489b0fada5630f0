//! Out-of-process loading, for FMUs whose code is not trusted to keep this
//! process alive: each instance of an FMU opened with
//! [`Fmu::open_isolated`](crate::Fmu::open_isolated) runs in a child
//! process of its own, which loads the FMU's binary, and every FMI call
//! of the instance is a request to it. When the child dies (a segfault in
//! the FMU's code, an `abort`, an `exit`), the call gets an
//! [`FmuError::Died`](crate::FmuError::Died) naming the FMU, the FMI function that
//! was running and the signal, and this process goes on: a model reports
//! it at its next major step as any failed call, a slave as the error of
//! its step.
//!
//! The child is a program started by [`Host`]: by default this program
//! itself, run with the argument [`HOST_ARGUMENT`], whose `main` must then
//! call [`serve`] (the `tandem` binary does). It talks with its parent over
//! a Unix socket pair that is its standard input (length-prefixed frames,
//! [`wire`]), its standard output goes to the parent's standard error. A
//! child whose parent goes away reads the end of its input and exits.
//!
//! Each request and its reply are one write and one read on each side,
//! through buffers allocated once per instance. Setters (time, states,
//! inputs, parameters) get no reply of their own: they go with the next
//! call that returns something, and a setter's error is that call's (the
//! calls after it not made, as in process), so a Model Exchange FMU's
//! evaluation (set time, set states, set inputs, get derivatives) is one
//! round trip. The `fmi` benchmark prints what that costs against calls in
//! this process (see the README).

mod child;
mod remote;
pub(crate) mod wire;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::atomic::{AtomicPtr, Ordering};

pub use child::serve;
pub(crate) use remote::Remote;

/// The argument a program that serves out-of-process instances is run
/// with (`tandem fmu-host`): its `main` then calls [`serve`].
pub const HOST_ARGUMENT: &str = "fmu-host";

/// How to start the process an out-of-process instance runs in: a program
/// and its arguments.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Host {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
}

impl Host {
    /// This program, run with [`HOST_ARGUMENT`]: for programs whose `main`
    /// calls [`serve`] when given it (the `tandem` binary).
    pub fn this_program() -> std::io::Result<Host> {
        Ok(Host {
            program: std::env::current_exe()?,
            args: vec![HOST_ARGUMENT.into()],
        })
    }
}

/// The FMI function running, or last run: a NUL-terminated name in static
/// memory, which a crash handler can read and write out.
static CALLING: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());

/// Marks `name` (NUL-terminated) as the FMI function about to run: one
/// store, so that a crash inside it can be reported by name.
pub(crate) fn calling(name: &'static str) {
    debug_assert!(name.ends_with('\0'), "{name} is not NUL-terminated");
    CALLING.store(name.as_ptr().cast_mut(), Ordering::Relaxed);
}

/// The name [`calling`] marked last, if any.
fn called() -> *const u8 {
    CALLING.load(Ordering::Relaxed)
}
