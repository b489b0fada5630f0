//! The C entry points of the FMU's binary: FMI 3.0 ([`fmi3`]) and FMI 2.0
//! ([`fmi2`]) Co-Simulation, thin shims over one [`Instance`]. This module
//! holds what both share: the instance behind the importer's pointer, the
//! guard every call runs in (no panic crosses the C ABI: each becomes an
//! error status and a logged message naming the call), pointer arguments
//! read as slices, FMU states, and the entry points Tandem does not
//! implement.
//!
//! The C types are declared from the standards' text: value references are
//! `unsigned int` (FMI 2) or `uint32_t` (FMI 3), both `u32` here; FMI 3's
//! `fmi3Boolean` is C's `bool`, FMI 2's `fmi2Boolean` an `int`; instances and
//! FMU states are opaque pointers.
//!
//! # Safety
//!
//! The entry points trust what the FMI standard has the importer
//! guarantee; their `# Safety` sections say which of these terms apply:
//! - a *live instance* is NULL, or a pointer its interface's instantiate
//!   function (`fmi2Instantiate`, `fmi3InstantiateCoSimulation`) of this
//!   binary returned and its free function has not yet been given; no other
//!   call uses it at the same time (the standard has an instance called from
//!   one thread at a time);
//! - an *array* of `n` elements is NULL when `n` is 0, else points to `n`
//!   elements that stay valid for the call, initialised unless the call
//!   only writes them; an array the call writes overlaps no other
//!   argument;
//! - a *string* is NULL or a NUL-terminated C string valid for the call;
//! - a *saved state* is NULL, or a pointer the same interface's get-state
//!   function of this binary stored and its free-state function has not
//!   yet freed.

use std::any::Any;
use std::ffi::{c_char, c_void, CStr, CString};
use std::mem::MaybeUninit;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::ptr::null_mut;

use crate::instance::{CallError, Instance, State};

/// Defines entry points this FMU does not implement, by name and the types
/// of their arguments after the instance: each logs, naming itself, that it
/// is not supported, and returns an error. Expands in an ABI module that
/// defines `Log`, its [`Logger`].
macro_rules! unsupported {
    ($(fn $name:ident($($arg:ty),* $(,)?);)*) => {$(
        /// Not supported by Tandem's FMUs: logs so and returns an error.
        ///
        /// # Safety
        /// `instance` is a live instance (see the [`abi`](super) module);
        /// the other arguments are not read.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(instance: *mut c_void, $(_: $arg),*) -> Status {
            // SAFETY: the caller passes a live instance, as `on` needs.
            status(unsafe { on::<Log, ()>(stringify!($name), instance, |_| Err(CallError::Unsupported)) })
        }
    )*};
}

pub mod fmi2;
pub mod fmi3;

/// The status an entry point returns: `fmi2Status` and `fmi3Status`
/// number OK 0 and Error 3 alike, and these are the two Tandem's FMUs
/// return.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// The call succeeded.
    Ok = 0,
    /// The call failed; a message says why.
    Error = 3,
}

/// How an instance reports errors to its importer.
pub trait Logger {
    /// Logs `message` as an error.
    fn error(&self, message: &str);
}

/// What an instance pointer handed to the importer points to.
struct Handle<L> {
    core: Instance,
    logger: L,
}

/// A failed call, whose message has been logged.
#[derive(Debug)]
pub struct Failed;

/// The status of a call's result.
pub fn status<T>(result: Result<T, Failed>) -> Status {
    match result {
        Ok(_) => Status::Ok,
        Err(Failed) => Status::Error,
    }
}

/// `message` as a C string (a NUL inside becomes a space).
pub fn c_text(message: &str) -> CString {
    CString::new(message.replace('\0', " ")).expect("the NULs were replaced")
}

/// The text of a panic's payload.
fn panic_text(panic: &(dyn Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic")
}

/// The message of a panic caught in `call`.
fn internal_error(call: &str, panic: &(dyn Any + Send)) -> String {
    format!(
        "{call}: internal error: {}; the instance cannot go on (free it), please report this",
        panic_text(panic)
    )
}

/// Runs `body` on the instance behind `instance` inside the guard: an
/// error is logged as `call: message`, a panic as an internal error that
/// leaves the instance unusable.
///
/// # Safety
/// `instance` is NULL or a pointer returned by [`instantiate`] with the
/// same `L`, not yet freed, and no other call uses it meanwhile.
pub unsafe fn on<L: Logger, T>(
    call: &str,
    instance: *mut c_void,
    body: impl FnOnce(&mut Instance) -> Result<T, CallError>,
) -> Result<T, Failed> {
    // SAFETY: by the caller's guarantee, a non-NULL `instance` points to a
    // live `Handle<L>` that nothing else refers to during this call.
    let Some(handle) = (unsafe { instance.cast::<Handle<L>>().as_mut() }) else {
        return Err(Failed);
    };
    match catch_unwind(AssertUnwindSafe(|| body(&mut handle.core))) {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => {
            handle.logger.error(&format!("{call}: {error}"));
            Err(Failed)
        }
        Err(panic) => {
            handle.core.poison();
            handle.logger.error(&internal_error(call, &*panic));
            Err(Failed)
        }
    }
}

/// A new instance of the model in the resources folder `resources` gives,
/// checked against `token`, as the pointer handed to the importer; NULL,
/// with a message through `logger`, when it cannot be made.
///
/// # Safety
/// `token` is NULL or a NUL-terminated string.
pub unsafe fn instantiate<L: Logger>(
    call: &str,
    logger: L,
    token: *const c_char,
    resources: impl FnOnce() -> Result<PathBuf, CallError>,
) -> *mut c_void {
    let made = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the caller passes NULL or a NUL-terminated `token`.
        let token = unsafe { text(token, "the instantiation token") }?;
        Instance::new(&resources()?, token)
    }));
    match made {
        Ok(Ok(core)) => Box::into_raw(Box::new(Handle { core, logger })).cast(),
        Ok(Err(error)) => {
            logger.error(&format!("{call}: {error}"));
            null_mut()
        }
        Err(panic) => {
            logger.error(&internal_error(call, &*panic));
            null_mut()
        }
    }
}

/// Frees an instance.
///
/// # Safety
/// As for [`on`]; the pointer is not used again.
pub unsafe fn free<L: Logger>(instance: *mut c_void) {
    if !instance.is_null() {
        // SAFETY: `instance` is the `Box<Handle<L>>` that `instantiate`
        // leaked, not yet freed, and the caller does not use it again.
        let handle = unsafe { Box::from_raw(instance.cast::<Handle<L>>()) };
        // A panic while dropping has nowhere to be reported: the instance
        // is gone either way.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(handle)));
    }
}

/// The UTF-8 text of a C string argument.
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string that outlives `'a`.
pub unsafe fn text<'a>(ptr: *const c_char, what: &'static str) -> Result<&'a str, CallError> {
    if ptr.is_null() {
        return Err(CallError::Null(what));
    }
    // SAFETY: `ptr` is not NULL, so by the caller's guarantee it is a
    // NUL-terminated string that outlives `'a`.
    let text = unsafe { CStr::from_ptr(ptr) };
    text.to_str().map_err(|_| CallError::NotUtf8(what))
}

/// An array argument of `n` elements (NULL allowed when `n` is 0).
///
/// # Safety
/// `ptr` is NULL or points to `n` elements that outlive `'a`.
pub unsafe fn slice<'a, T>(ptr: *const T, n: usize, what: &'static str) -> Result<&'a [T], CallError> {
    match n {
        0 => Ok(&[]),
        _ if ptr.is_null() => Err(CallError::Null(what)),
        // SAFETY: `ptr` is not NULL, so by the caller's guarantee it points
        // to `n` elements that outlive `'a`.
        _ => Ok(unsafe { std::slice::from_raw_parts(ptr, n) }),
    }
}

/// An array argument of `n` elements to write, which need not be
/// initialised (an importer may pass a fresh buffer).
///
/// # Safety
/// `ptr` is NULL or points to `n` elements, initialised or not, that
/// outlive `'a` and nothing else refers to.
pub unsafe fn slice_mut<'a, T>(
    ptr: *mut T,
    n: usize,
    what: &'static str,
) -> Result<&'a mut [MaybeUninit<T>], CallError> {
    match n {
        0 => Ok(&mut []),
        _ if ptr.is_null() => Err(CallError::Null(what)),
        // SAFETY: `ptr` is not NULL, so by the caller's guarantee it points
        // to `n` elements that outlive `'a` and nothing else refers to;
        // `MaybeUninit<T>` has the layout of `T`, and any content is a
        // valid `MaybeUninit<T>`.
        _ => Ok(unsafe { std::slice::from_raw_parts_mut(ptr.cast::<MaybeUninit<T>>(), n) }),
    }
}

/// Reads `nvr` variables by value reference into `nvalues` values.
///
/// # Safety
/// As for [`on`], [`slice`] and [`slice_mut`].
pub unsafe fn get<L: Logger>(
    call: &str,
    instance: *mut c_void,
    (vrs, nvr): (*const u32, usize),
    (values, nvalues): (*mut f64, usize),
) -> Status {
    let body = |core: &mut Instance| {
        // SAFETY: the caller passes what `slice` needs for `vrs` and what
        // `slice_mut` needs for `values`.
        let (vrs, values) = unsafe {
            (
                slice(vrs, nvr, "valueReferences")?,
                slice_mut(values, nvalues, "values")?,
            )
        };
        core.get(vrs, values)
    };
    // SAFETY: the caller passes what `on` needs.
    status(unsafe { on::<L, _>(call, instance, body) })
}

/// Sets `nvr` variables by value reference from `nvalues` values.
///
/// # Safety
/// As for [`on`] and [`slice`].
pub unsafe fn set<L: Logger>(
    call: &str,
    instance: *mut c_void,
    (vrs, nvr): (*const u32, usize),
    (values, nvalues): (*const f64, usize),
) -> Status {
    let body = |core: &mut Instance| {
        // SAFETY: the caller passes what `slice` needs for `vrs` and for
        // `values`.
        let (vrs, values) = unsafe { (slice(vrs, nvr, "valueReferences")?, slice(values, nvalues, "values")?) };
        core.set(vrs, values)
    };
    // SAFETY: the caller passes what `on` needs.
    status(unsafe { on::<L, _>(call, instance, body) })
}

/// Saves the instance into `*state`: the state it points to, reused, or a
/// new one when it is NULL.
///
/// # Safety
/// As for [`on`]; `state` is NULL or points to a pointer nothing else
/// refers to during the call, NULL or a state made by this module and not
/// yet freed.
pub unsafe fn get_state<L: Logger>(call: &str, instance: *mut c_void, state: *mut *mut c_void) -> Status {
    let body = |core: &mut Instance| -> Result<(), CallError> {
        // SAFETY: a non-NULL `state` points to a pointer that is ours
        // during the call, by the caller's guarantee.
        let state = unsafe { state.as_mut() }.ok_or(CallError::Null("the FMU state pointer"))?;
        // SAFETY: `*state` is NULL or a live `State` made by this module,
        // by the caller's guarantee.
        let reused = unsafe { state.cast::<State>().as_mut() };
        if let Some(fresh) = core.save(reused)? {
            *state = Box::into_raw(Box::new(fresh)).cast();
        }
        Ok(())
    };
    // SAFETY: the caller passes what `on` needs.
    status(unsafe { on::<L, _>(call, instance, body) })
}

/// Restores the instance to `state`.
///
/// # Safety
/// As for [`on`]; `state` is NULL or a state made by this module and not
/// yet freed.
pub unsafe fn set_state<L: Logger>(call: &str, instance: *mut c_void, state: *mut c_void) -> Status {
    let body = |core: &mut Instance| {
        // SAFETY: a non-NULL `state` is a live `State` made by this module,
        // by the caller's guarantee.
        let state = unsafe { state.cast::<State>().as_ref() }.ok_or(CallError::Null("the FMU state"))?;
        core.restore(state)
    };
    // SAFETY: the caller passes what `on` needs.
    status(unsafe { on::<L, _>(call, instance, body) })
}

/// Frees the state `*state` points to and sets it to NULL.
///
/// # Safety
/// As for [`on`]; `state` is NULL or points to a pointer nothing else
/// refers to during the call, NULL or a state made by this module, not
/// yet freed and not used again.
pub unsafe fn free_state<L: Logger>(call: &str, instance: *mut c_void, state: *mut *mut c_void) -> Status {
    let body = |_: &mut Instance| -> Result<(), CallError> {
        // SAFETY: a non-NULL `state` points to a pointer that is ours
        // during the call, by the caller's guarantee.
        let state = unsafe { state.as_mut() }.ok_or(CallError::Null("the FMU state pointer"))?;
        if !state.is_null() {
            // SAFETY: `*state` is the `Box<State>` `get_state` leaked, not
            // yet freed, and the caller does not use it again.
            drop(unsafe { Box::from_raw(state.cast::<State>()) });
            *state = null_mut();
        }
        Ok(())
    };
    // SAFETY: the caller passes what `on` needs.
    status(unsafe { on::<L, _>(call, instance, body) })
}
