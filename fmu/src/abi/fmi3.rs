//! The FMI 3.0 Co-Simulation entry points. Every function of the FMI 3
//! interface is exported (importers such as FMPy look them all up when
//! loading); those of Model Exchange, Scheduled Execution, Event Mode,
//! clocks, other variable types, derivatives and serialized states return
//! `fmi3Error` and log that they are not supported.

#![allow(non_snake_case)]

use std::ffi::{c_char, c_int, c_void};
use std::path::PathBuf;
use std::ptr::null_mut;

use super::{c_text, free, free_state, get, get_state, instantiate, on, set, set_state, status, text, Logger, Status};
use crate::instance::{CallError, Instance};

/// `fmi3LogMessageCallback`.
type LogMessage =
    unsafe extern "C" fn(env: *mut c_void, status: Status, category: *const c_char, message: *const c_char);

/// The importer's logger of an FMI 3 instance.
pub struct Log {
    callback: Option<LogMessage>,
    env: *mut c_void,
}

impl Logger for Log {
    fn error(&self, message: &str) {
        if let Some(callback) = self.callback {
            let message = c_text(message);
            // SAFETY: the importer gave the callback and its environment
            // for the life of the instance.
            unsafe { callback(self.env, Status::Error, c"logStatusError".as_ptr(), message.as_ptr()) }
        }
    }
}

/// The FMI version of the interface: "3.0".
#[unsafe(no_mangle)]
pub extern "C" fn fmi3GetVersion() -> *const c_char {
    c"3.0".as_ptr()
}

/// Accepted and ignored: Tandem's FMUs log errors only, always.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module);
/// `categories` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetDebugLogging(
    instance: *mut c_void,
    _logging_on: bool,
    _n_categories: usize,
    _categories: *const *const c_char,
) -> Status {
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe { on::<Log, _>("fmi3SetDebugLogging", instance, |_| Ok(())) })
}

/// A Co-Simulation instance of the model in `resourcePath` (the FMU's
/// unpacked `resources` folder), or NULL with a logged message.
///
/// # Safety
/// `instantiationToken` and `resourcePath` are strings (see the
/// [`abi`](super) module); `logMessage`, when not NULL, is an
/// `fmi3LogMessageCallback` that may be called with `instanceEnvironment`
/// until the instance is freed. The other pointers are not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3InstantiateCoSimulation(
    _instance_name: *const c_char,
    instantiation_token: *const c_char,
    resource_path: *const c_char,
    _visible: bool,
    _logging_on: bool,
    _event_mode_used: bool,
    _early_return_allowed: bool,
    _required_intermediate_variables: *const u32,
    _n_required_intermediate_variables: usize,
    instance_environment: *mut c_void,
    log_message: Option<LogMessage>,
    _intermediate_update: *mut c_void,
) -> *mut c_void {
    // The caller lets the logger be called until the instance is freed.
    let log = Log {
        callback: log_message,
        env: instance_environment,
    };
    let resources = || {
        // SAFETY: `resource_path` is a string, by the caller's guarantee.
        let path = unsafe { text(resource_path, "resourcePath") }?;
        if path.is_empty() {
            return Err(CallError::ResourceLocation {
                what: "resourcePath",
                given: path.into(),
                expected: "",
            });
        }
        Ok(PathBuf::from(path))
    };
    // SAFETY: `instantiation_token` is a string, by the caller's guarantee.
    unsafe { instantiate("fmi3InstantiateCoSimulation", log, instantiation_token, resources) }
}

/// Refused, with a logged message: Co-Simulation only.
///
/// # Safety
/// `logMessage`, when not NULL, is an `fmi3LogMessageCallback` that may be
/// called with `instanceEnvironment` during the call. The other pointers
/// are not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3InstantiateModelExchange(
    _instance_name: *const c_char,
    _instantiation_token: *const c_char,
    _resource_path: *const c_char,
    _visible: bool,
    _logging_on: bool,
    instance_environment: *mut c_void,
    log_message: Option<LogMessage>,
) -> *mut c_void {
    refuse("fmi3InstantiateModelExchange", log_message, instance_environment)
}

/// Refused, with a logged message: Co-Simulation only.
///
/// # Safety
/// `logMessage`, when not NULL, is an `fmi3LogMessageCallback` that may be
/// called with `instanceEnvironment` during the call. The other pointers
/// are not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3InstantiateScheduledExecution(
    _instance_name: *const c_char,
    _instantiation_token: *const c_char,
    _resource_path: *const c_char,
    _visible: bool,
    _logging_on: bool,
    instance_environment: *mut c_void,
    log_message: Option<LogMessage>,
    _clock_update: *mut c_void,
    _lock_preemption: *mut c_void,
    _unlock_preemption: *mut c_void,
) -> *mut c_void {
    refuse("fmi3InstantiateScheduledExecution", log_message, instance_environment)
}

/// Logs that `call` instantiates something other than Co-Simulation, and
/// returns NULL.
fn refuse(call: &str, callback: Option<LogMessage>, env: *mut c_void) -> *mut c_void {
    let error = CallError::NotCoSimulation("fmi3InstantiateCoSimulation");
    Log { callback, env }.error(&format!("{call}: {error}"));
    null_mut()
}

/// Frees an instance.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module), not
/// used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3FreeInstance(instance: *mut c_void) {
    // SAFETY: the caller passes a live instance it does not use again, as
    // `free` needs.
    unsafe { free::<Log>(instance) }
}

/// Enters Initialization Mode with the experiment's start (0) and stop
/// time; the tolerance is the packed solver's own.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3EnterInitializationMode(
    instance: *mut c_void,
    _tolerance_defined: bool,
    _tolerance: f64,
    start_time: f64,
    stop_time_defined: bool,
    stop_time: f64,
) -> Status {
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe {
        on::<Log, _>("fmi3EnterInitializationMode", instance, |core| {
            core.setup_experiment(start_time, stop_time_defined.then_some(stop_time))?;
            core.enter_initialization()
        })
    })
}

/// Leaves Initialization Mode for Step Mode.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3ExitInitializationMode(instance: *mut c_void) -> Status {
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe {
        on::<Log, _>("fmi3ExitInitializationMode", instance, |core| {
            core.exit_initialization()
        })
    })
}

/// Ends the simulation.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3Terminate(instance: *mut c_void) -> Status {
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe { on::<Log, _>("fmi3Terminate", instance, |core| core.terminate()) })
}

/// Goes back to the state right after instantiation.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3Reset(instance: *mut c_void) -> Status {
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe { on::<Log, _>("fmi3Reset", instance, |core| core.reset()) })
}

/// Reads time, inputs and outputs by value reference.
///
/// # Safety
/// `instance` is a live instance, `valueReferences` an array of
/// `nValueReferences` value references and `values` an array of `nValues`
/// values to write (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetFloat64(
    instance: *mut c_void,
    value_references: *const u32,
    n_value_references: usize,
    values: *mut f64,
    n_values: usize,
) -> Status {
    // SAFETY: the caller passes what `get` needs.
    unsafe {
        get::<Log>(
            "fmi3GetFloat64",
            instance,
            (value_references, n_value_references),
            (values, n_values),
        )
    }
}

/// Sets inputs by value reference.
///
/// # Safety
/// `instance` is a live instance, `valueReferences` an array of
/// `nValueReferences` value references and `values` an array of `nValues`
/// values (see the [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetFloat64(
    instance: *mut c_void,
    value_references: *const u32,
    n_value_references: usize,
    values: *const f64,
    n_values: usize,
) -> Status {
    // SAFETY: the caller passes what `set` needs.
    unsafe {
        set::<Log>(
            "fmi3SetFloat64",
            instance,
            (value_references, n_value_references),
            (values, n_values),
        )
    }
}

/// Advances by the communication step (see `Instance::step`). Never returns early
/// nor asks for event handling.
///
/// # Safety
/// `instance` is a live instance (see the [`abi`](super) module);
/// `eventHandlingNeeded`, `terminateSimulation`, `earlyReturn` and
/// `lastSuccessfulTime` are each NULL or point to a value to write
/// (initialised or not) that nothing else refers to during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3DoStep(
    instance: *mut c_void,
    current_communication_point: f64,
    communication_step_size: f64,
    _no_set_fmu_state_prior_to_current_point: bool,
    event_handling_needed: *mut bool,
    terminate_simulation: *mut bool,
    early_return: *mut bool,
    last_successful_time: *mut f64,
) -> Status {
    let body = |core: &mut Instance| {
        let result = core.step(current_communication_point, communication_step_size);
        // Written, not read: the importer's variables need not be
        // initialised.
        for flag in [event_handling_needed, terminate_simulation, early_return] {
            if !flag.is_null() {
                // SAFETY: a non-NULL flag is ours to write during the call,
                // by the caller's guarantee.
                unsafe { flag.write(false) };
            }
        }
        if !last_successful_time.is_null() {
            // SAFETY: a non-NULL `last_successful_time` is ours to write
            // during the call, by the caller's guarantee.
            unsafe { last_successful_time.write(core.time()) };
        }
        result
    };
    // SAFETY: the caller passes a live instance, as `on` needs.
    status(unsafe { on::<Log, _>("fmi3DoStep", instance, body) })
}

/// Saves the instance's state.
///
/// # Safety
/// `instance` is a live instance; `state` is NULL or points to a saved
/// state (see the [`abi`](super) module) that nothing else refers to
/// during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3GetFMUState(instance: *mut c_void, state: *mut *mut c_void) -> Status {
    // SAFETY: the caller passes what `get_state` needs.
    unsafe { get_state::<Log>("fmi3GetFMUState", instance, state) }
}

/// Restores a saved state.
///
/// # Safety
/// `instance` is a live instance and `state` a saved state (see the
/// [`abi`](super) module).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3SetFMUState(instance: *mut c_void, state: *mut c_void) -> Status {
    // SAFETY: the caller passes what `set_state` needs.
    unsafe { set_state::<Log>("fmi3SetFMUState", instance, state) }
}

/// Frees a saved state.
///
/// # Safety
/// `instance` is a live instance; `state` is NULL or points to a saved
/// state (see the [`abi`](super) module) that nothing else refers to
/// during the call, and which is not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn fmi3FreeFMUState(instance: *mut c_void, state: *mut *mut c_void) -> Status {
    // SAFETY: the caller passes what `free_state` needs.
    unsafe { free_state::<Log>("fmi3FreeFMUState", instance, state) }
}

unsupported! {
    fn fmi3EnterEventMode();
    fn fmi3EnterStepMode();
    fn fmi3EnterConfigurationMode();
    fn fmi3ExitConfigurationMode();
    fn fmi3EvaluateDiscreteStates();
    fn fmi3UpdateDiscreteStates(*mut bool, *mut bool, *mut bool, *mut bool, *mut bool, *mut f64);
    fn fmi3GetOutputDerivatives(*const u32, usize, *const i32, *mut f64, usize);
    fn fmi3GetFloat32(*const u32, usize, *mut f32, usize);
    fn fmi3GetInt8(*const u32, usize, *mut i8, usize);
    fn fmi3GetUInt8(*const u32, usize, *mut u8, usize);
    fn fmi3GetInt16(*const u32, usize, *mut i16, usize);
    fn fmi3GetUInt16(*const u32, usize, *mut u16, usize);
    fn fmi3GetInt32(*const u32, usize, *mut i32, usize);
    fn fmi3GetUInt32(*const u32, usize, *mut u32, usize);
    fn fmi3GetInt64(*const u32, usize, *mut i64, usize);
    fn fmi3GetUInt64(*const u32, usize, *mut u64, usize);
    fn fmi3GetBoolean(*const u32, usize, *mut bool, usize);
    fn fmi3GetString(*const u32, usize, *mut *const c_char, usize);
    fn fmi3GetBinary(*const u32, usize, *mut usize, *mut *const u8, usize);
    fn fmi3GetClock(*const u32, usize, *mut bool);
    fn fmi3SetFloat32(*const u32, usize, *const f32, usize);
    fn fmi3SetInt8(*const u32, usize, *const i8, usize);
    fn fmi3SetUInt8(*const u32, usize, *const u8, usize);
    fn fmi3SetInt16(*const u32, usize, *const i16, usize);
    fn fmi3SetUInt16(*const u32, usize, *const u16, usize);
    fn fmi3SetInt32(*const u32, usize, *const i32, usize);
    fn fmi3SetUInt32(*const u32, usize, *const u32, usize);
    fn fmi3SetInt64(*const u32, usize, *const i64, usize);
    fn fmi3SetUInt64(*const u32, usize, *const u64, usize);
    fn fmi3SetBoolean(*const u32, usize, *const bool, usize);
    fn fmi3SetString(*const u32, usize, *const *const c_char, usize);
    fn fmi3SetBinary(*const u32, usize, *const usize, *const *const u8, usize);
    fn fmi3SetClock(*const u32, usize, *const bool);
    fn fmi3GetNumberOfVariableDependencies(u32, *mut usize);
    fn fmi3GetVariableDependencies(u32, *mut usize, *mut u32, *mut usize, *mut c_int, usize);
    fn fmi3SerializedFMUStateSize(*mut c_void, *mut usize);
    fn fmi3SerializeFMUState(*mut c_void, *mut u8, usize);
    fn fmi3DeserializeFMUState(*const u8, usize, *mut *mut c_void);
    fn fmi3GetDirectionalDerivative(*const u32, usize, *const u32, usize, *const f64, usize, *mut f64, usize);
    fn fmi3GetAdjointDerivative(*const u32, usize, *const u32, usize, *const f64, usize, *mut f64, usize);
    fn fmi3GetIntervalDecimal(*const u32, usize, *mut f64, *mut c_int);
    fn fmi3GetIntervalFraction(*const u32, usize, *mut u64, *mut u64, *mut c_int);
    fn fmi3GetShiftDecimal(*const u32, usize, *mut f64);
    fn fmi3GetShiftFraction(*const u32, usize, *mut u64, *mut u64);
    fn fmi3SetIntervalDecimal(*const u32, usize, *const f64);
    fn fmi3SetIntervalFraction(*const u32, usize, *const u64, *const u64);
    fn fmi3SetShiftDecimal(*const u32, usize, *const f64);
    fn fmi3SetShiftFraction(*const u32, usize, *const u64, *const u64);
    fn fmi3EnterContinuousTimeMode();
    fn fmi3CompletedIntegratorStep(bool, *mut bool, *mut bool);
    fn fmi3SetTime(f64);
    fn fmi3SetContinuousStates(*const f64, usize);
    fn fmi3GetContinuousStateDerivatives(*mut f64, usize);
    fn fmi3GetEventIndicators(*mut f64, usize);
    fn fmi3GetContinuousStates(*mut f64, usize);
    fn fmi3GetNominalsOfContinuousStates(*mut f64, usize);
    fn fmi3GetNumberOfEventIndicators(*mut usize);
    fn fmi3GetNumberOfContinuousStates(*mut usize);
    fn fmi3ActivateModelPartition(u32, f64);
}
