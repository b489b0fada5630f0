//! The FMI 2.0 Co-Simulation entry points, over the same instance as FMI 3.
//! Every function of the FMI 2 interface is exported; those of Model
//! Exchange, other variable types, input and output derivatives,
//! asynchronous steps, status queries and serialized states return
//! `fmi2Error` and log that they are not supported.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::PathBuf;

use super::{c_text, free, free_state, get, get_state, instantiate, on, set, set_state, status, text, Logger, Status};
use crate::instance::CallError;

/// `fmi2CallbackLogger`: printf-like, so the message is passed as the
/// argument of a `%s`.
type CallbackLogger = unsafe extern "C" fn(
    env: *mut c_void,
    instance_name: *const c_char,
    status: Status,
    category: *const c_char,
    message: *const c_char,
    ...
);

/// `fmi2CallbackFunctions`, of which the logger and its environment are
/// used.
#[repr(C)]
pub struct CallbackFunctions {
    logger: Option<CallbackLogger>,
    _allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    _free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    _step_finished: Option<unsafe extern "C" fn(*mut c_void, Status)>,
    component_environment: *mut c_void,
}

/// `fmi2CoSimulation` of `fmi2Type`.
const CO_SIMULATION: c_int = 1;

/// The importer's logger of an FMI 2 instance.
pub struct Log {
    callback: Option<CallbackLogger>,
    env: *mut c_void,
    name: CString,
}

impl Logger for Log {
    fn error(&self, message: &str) {
        if let Some(callback) = self.callback {
            let message = c_text(message);
            // SAFETY: the importer gave the callback and its environment
            // for the life of the instance; "%s" takes one string.
            unsafe {
                callback(
                    self.env,
                    self.name.as_ptr(),
                    Status::Error,
                    c"logStatusError".as_ptr(),
                    c"%s".as_ptr(),
                    message.as_ptr(),
                )
            }
        }
    }
}

/// The platform of the types used: "default".
#[unsafe(no_mangle)]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

/// The FMI version of the interface: "2.0".
#[unsafe(no_mangle)]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

/// Accepted and ignored: Tandem's FMUs log errors only, always.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module);
/// `categories` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    instance: *mut c_void,
    _logging_on: c_int,
    _n_categories: usize,
    _categories: *const *const c_char,
) -> Status {
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe { on::<Log, _>("fmi2SetDebugLogging", instance, |_| Ok(())) })
}

/// A Co-Simulation instance of the model in the FMU's resources folder
/// (`fmuResourceLocation`, a `file:` URI), or NULL with a logged message.
///
/// # Safety
/// `instanceName`, `fmuGUID` and `fmuResourceLocation` are strings (see the
/// [`abi`](super) module); `functions` is NULL or points to an
/// `fmi2CallbackFunctions` valid for the call, whose `logger`, when not
/// NULL, is an `fmi2CallbackLogger` that may be called with its
/// `componentEnvironment` until the instance is freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Instantiate(
    instance_name: *const c_char,
    fmu_type: c_int,
    fmu_guid: *const c_char,
    fmu_resource_location: *const c_char,
    functions: *const CallbackFunctions,
    _visible: c_int,
    _logging_on: c_int,
) -> *mut c_void {
    // SAFETY: `functions` is NULL or valid for the call, by the caller's
    // guarantee.
    let Some(functions) = (unsafe { functions.as_ref() }) else {
        return std::ptr::null_mut();
    };
    // SAFETY: `instance_name` is a string, by the caller's guarantee.
    let name = unsafe { text(instance_name, "instanceName") }.unwrap_or("instance");
    // The caller lets the logger be called until the instance is freed.
    let log = Log {
        callback: functions.logger,
        env: functions.component_environment,
        name: c_text(name),
    };
    let resources = || {
        if fmu_type != CO_SIMULATION {
            return Err(CallError::NotCoSimulation("fmi2CoSimulation"));
        }
        // SAFETY: `fmu_resource_location` is a string, by the caller's
        // guarantee.
        resource_folder(unsafe { text(fmu_resource_location, "fmuResourceLocation") }?)
    };
    // SAFETY: `fmu_guid` is a string, by the caller's guarantee.
    unsafe { instantiate("fmi2Instantiate", log, fmu_guid, resources) }
}

/// The folder a `file:` URI names (`file:///a/b%20c`, `file:/a/b`,
/// `file://localhost/a/b`).
fn resource_folder(uri: &str) -> Result<PathBuf, CallError> {
    let wrong = || CallError::ResourceLocation {
        what: "fmuResourceLocation",
        given: uri.into(),
        expected: " given as a file: URI",
    };
    let rest = uri.strip_prefix("file:").ok_or_else(wrong)?;
    let path = match rest.strip_prefix("//") {
        Some(authority_and_path) => {
            let slash = authority_and_path.find('/').ok_or_else(wrong)?;
            match &authority_and_path[..slash] {
                "" | "localhost" => &authority_and_path[slash..],
                _ => return Err(wrong()),
            }
        }
        None => rest,
    };
    let decoded = percent_decode(path).ok_or_else(wrong)?;
    // `/C:/dir` names `C:/dir` on Windows.
    let windows_drive = decoded.len() > 2 && decoded.as_bytes()[2] == b':' && cfg!(windows);
    Ok(PathBuf::from(if windows_drive { &decoded[1..] } else { &decoded[..] }))
}

/// `text` with its `%XX` escapes decoded, when that is UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'%' {
            let hex = std::str::from_utf8(tail.get(..2)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            rest = &tail[2..];
        } else {
            bytes.push(b);
            rest = tail;
        }
    }
    String::from_utf8(bytes).ok()
}

/// Frees an instance.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module), not
/// used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeInstance(instance: *mut c_void) {
    // SAFETY: the caller passes a live instance it does not use again, as
    // `free` needs.
    unsafe { free::<Log>(instance) }
}

/// Records the experiment's start (0) and stop time; the tolerance is the
/// packed solver's own.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetupExperiment(
    instance: *mut c_void,
    _tolerance_defined: c_int,
    _tolerance: f64,
    start_time: f64,
    stop_time_defined: c_int,
    stop_time: f64,
) -> Status {
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe {
        on::<Log, _>("fmi2SetupExperiment", instance, |core| {
            core.setup_experiment(start_time, (stop_time_defined != 0).then_some(stop_time))
        })
    })
}

/// Enters Initialization Mode.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2EnterInitializationMode(instance: *mut c_void) -> Status {
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe {
        on::<Log, _>("fmi2EnterInitializationMode", instance, |core| {
            core.enter_initialization()
        })
    })
}

/// Leaves Initialization Mode for stepping.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2ExitInitializationMode(instance: *mut c_void) -> Status {
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe {
        on::<Log, _>("fmi2ExitInitializationMode", instance, |core| {
            core.exit_initialization()
        })
    })
}

/// Ends the simulation.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Terminate(instance: *mut c_void) -> Status {
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe { on::<Log, _>("fmi2Terminate", instance, |core| core.terminate()) })
}

/// Goes back to the state right after instantiation.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2Reset(instance: *mut c_void) -> Status {
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe { on::<Log, _>("fmi2Reset", instance, |core| core.reset()) })
}

/// Reads time, inputs and outputs by value reference.
///
/// # Safety
/// `instance` is a live instance, `vr` an array of `nvr` value references
/// and `value` an array of `nvr` values to write (see the [`abi`](super)
/// module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetReal(instance: *mut c_void, vr: *const u32, nvr: usize, value: *mut f64) -> Status {
    // SAFETY: the caller passes what `get` needs.
    unsafe { get::<Log>("fmi2GetReal", instance, (vr, nvr), (value, nvr)) }
}

/// Sets inputs by value reference.
///
/// # Safety
/// `instance` is a live instance, `vr` an array of `nvr` value references
/// and `value` an array of `nvr` values (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetReal(instance: *mut c_void, vr: *const u32, nvr: usize, value: *const f64) -> Status {
    // SAFETY: the caller passes what `set` needs.
    unsafe { set::<Log>("fmi2SetReal", instance, (vr, nvr), (value, nvr)) }
}

/// Advances by the communication step (see `Instance::step`), synchronously.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2DoStep(
    instance: *mut c_void,
    current_communication_point: f64,
    communication_step_size: f64,
    _no_set_fmu_state_prior_to_current_point: c_int,
) -> Status {
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe {
        on::<Log, _>("fmi2DoStep", instance, |core| {
            core.step(current_communication_point, communication_step_size)
        })
    })
}

/// Saves the instance's state.
///
/// # Safety
/// `instance` is a live instance; `state` is NULL or points to a saved
/// state (see the [`abi`](super) module) that nothing else refers to
/// during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2GetFMUstate(instance: *mut c_void, state: *mut *mut c_void) -> Status {
    // SAFETY: the caller passes what `get_state` needs.
    unsafe { get_state::<Log>("fmi2GetFMUstate", instance, state) }
}

/// Restores a saved state.
///
/// # Safety
/// `instance` is a live instance and `state` a saved state (see the
/// [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2SetFMUstate(instance: *mut c_void, state: *mut c_void) -> Status {
    // SAFETY: the caller passes what `set_state` needs.
    unsafe { set_state::<Log>("fmi2SetFMUstate", instance, state) }
}

/// Frees a saved state.
///
/// # Safety
/// `instance` is a live instance; `state` is NULL or points to a saved
/// state (see the [`abi`](super) module) that nothing else refers to
/// during the call, and which is not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi2FreeFMUstate(instance: *mut c_void, state: *mut *mut c_void) -> Status {
    // SAFETY: the caller passes what `free_state` needs.
    unsafe { free_state::<Log>("fmi2FreeFMUstate", instance, state) }
}

unsupported! {
    fn fmi2GetInteger(*const u32, usize, *mut c_int);
    fn fmi2GetBoolean(*const u32, usize, *mut c_int);
    fn fmi2GetString(*const u32, usize, *mut *const c_char);
    fn fmi2SetInteger(*const u32, usize, *const c_int);
    fn fmi2SetBoolean(*const u32, usize, *const c_int);
    fn fmi2SetString(*const u32, usize, *const *const c_char);
    fn fmi2SerializedFMUstateSize(*mut c_void, *mut usize);
    fn fmi2SerializeFMUstate(*mut c_void, *mut c_char, usize);
    fn fmi2DeSerializeFMUstate(*const c_char, usize, *mut *mut c_void);
    fn fmi2GetDirectionalDerivative(*const u32, usize, *const u32, usize, *const f64, *mut f64);
    fn fmi2EnterEventMode();
    fn fmi2NewDiscreteStates(*mut c_void);
    fn fmi2EnterContinuousTimeMode();
    fn fmi2CompletedIntegratorStep(c_int, *mut c_int, *mut c_int);
    fn fmi2SetTime(f64);
    fn fmi2SetContinuousStates(*const f64, usize);
    fn fmi2GetDerivatives(*mut f64, usize);
    fn fmi2GetEventIndicators(*mut f64, usize);
    fn fmi2GetContinuousStates(*mut f64, usize);
    fn fmi2GetNominalsOfContinuousStates(*mut f64, usize);
    fn fmi2SetRealInputDerivatives(*const u32, usize, *const c_int, *const f64);
    fn fmi2GetRealOutputDerivatives(*const u32, usize, *const c_int, *mut f64);
    fn fmi2CancelStep();
    fn fmi2GetStatus(c_int, *mut c_int);
    fn fmi2GetRealStatus(c_int, *mut f64);
    fn fmi2GetIntegerStatus(c_int, *mut c_int);
    fn fmi2GetBooleanStatus(c_int, *mut c_int);
    fn fmi2GetStringStatus(c_int, *mut *const c_char);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_name_folders() {
        let folder = |uri| resource_folder(uri).map(|p| p.display().to_string());
        assert_eq!(folder("file:///tmp/a%20b/resources").unwrap(), "/tmp/a b/resources");
        assert_eq!(folder("file:/tmp/x").unwrap(), "/tmp/x");
        assert_eq!(folder("file://localhost/tmp/x/").unwrap(), "/tmp/x/");
        let e = folder("/tmp/x").unwrap_err().to_string();
        assert!(e.contains("is not a folder path given as a file: URI"), "{e}");
        assert!(folder("file://server/share").is_err());
        assert!(folder("file:///tmp/%zz").is_err());
    }
}
