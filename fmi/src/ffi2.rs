//! The FMI 2.0 C API, declared from the standard (chapter 2.1 and the
//! Model Exchange and Co-Simulation chapters): the types and the functions
//! this importer calls, grouped by what needs them.

use std::ffi::{c_char, c_int, c_void};

use crate::library::functions;

/// `fmi2Component`: an instance.
pub(crate) type Component = *mut c_void;
/// `fmi2Status`, a C enum.
pub(crate) type Status = c_int;
/// `fmi2Boolean`.
pub(crate) type Boolean = c_int;
/// `fmi2True`.
pub(crate) const TRUE: Boolean = 1;
/// `fmi2False`.
pub(crate) const FALSE: Boolean = 0;
/// `fmi2Type`: `fmi2ModelExchange`.
pub(crate) const MODEL_EXCHANGE: c_int = 0;
/// `fmi2Type`: `fmi2CoSimulation`.
pub(crate) const CO_SIMULATION: c_int = 1;

/// `fmi2StatusKind`: `fmi2LastSuccessfulTime`.
pub(crate) const LAST_SUCCESSFUL_TIME: c_int = 2;
/// `fmi2StatusKind`: `fmi2Terminated`.
pub(crate) const TERMINATED: c_int = 3;

/// `fmi2CallbackLogger`. In C it is variadic (`message` is a printf
/// format); Rust cannot define variadic functions, so the message is kept
/// as passed. The fixed arguments are passed alike to variadic and
/// non-variadic functions on every platform with an FMI 2 folder.
pub(crate) type Logger = unsafe extern "C" fn(
    env: *mut c_void,
    instance: *const c_char,
    status: Status,
    category: *const c_char,
    message: *const c_char,
);

/// `fmi2CallbackFunctions`.
#[repr(C)]
pub(crate) struct CallbackFunctions {
    pub logger: Logger,
    pub allocate_memory: unsafe extern "C" fn(count: usize, size: usize) -> *mut c_void,
    pub free_memory: unsafe extern "C" fn(object: *mut c_void),
    pub step_finished: Option<unsafe extern "C" fn(env: *mut c_void, status: Status)>,
    pub component_environment: *mut c_void,
}

/// `fmi2EventInfo`.
#[repr(C)]
#[derive(Default)]
pub(crate) struct EventInfo {
    pub new_discrete_states_needed: Boolean,
    pub terminate_simulation: Boolean,
    pub nominals_of_continuous_states_changed: Boolean,
    pub values_of_continuous_states_changed: Boolean,
    pub next_event_time_defined: Boolean,
    pub next_event_time: f64,
}

functions! {
    /// Functions of both interfaces.
    Common {
        fmi2Instantiate: fn(*const c_char, c_int, *const c_char, *const c_char, *const CallbackFunctions, Boolean, Boolean) -> Component;
        fmi2FreeInstance: fn(Component);
        fmi2SetupExperiment: fn(Component, Boolean, f64, f64, Boolean, f64) -> Status;
        fmi2EnterInitializationMode: fn(Component) -> Status;
        fmi2ExitInitializationMode: fn(Component) -> Status;
        fmi2Terminate: fn(Component) -> Status;
        fmi2GetReal: fn(Component, *const u32, usize, *mut f64) -> Status;
        fmi2SetReal: fn(Component, *const u32, usize, *const f64) -> Status;
        fmi2SetInteger: fn(Component, *const u32, usize, *const c_int) -> Status;
        fmi2SetBoolean: fn(Component, *const u32, usize, *const Boolean) -> Status;
        fmi2GetInteger: fn(Component, *const u32, usize, *mut c_int) -> Status;
        fmi2GetBoolean: fn(Component, *const u32, usize, *mut Boolean) -> Status;
        fmi2GetString: fn(Component, *const u32, usize, *mut *const c_char) -> Status;
        fmi2SetString: fn(Component, *const u32, usize, *const *const c_char) -> Status;
    }
}

functions! {
    /// Functions of the Model Exchange interface.
    ModelExchange {
        fmi2EnterEventMode: fn(Component) -> Status;
        fmi2NewDiscreteStates: fn(Component, *mut EventInfo) -> Status;
        fmi2EnterContinuousTimeMode: fn(Component) -> Status;
        fmi2CompletedIntegratorStep: fn(Component, Boolean, *mut Boolean, *mut Boolean) -> Status;
        fmi2SetTime: fn(Component, f64) -> Status;
        fmi2SetContinuousStates: fn(Component, *const f64, usize) -> Status;
        fmi2GetDerivatives: fn(Component, *mut f64, usize) -> Status;
        fmi2GetEventIndicators: fn(Component, *mut f64, usize) -> Status;
        fmi2GetContinuousStates: fn(Component, *mut f64, usize) -> Status;
    }
}

functions! {
    /// Functions of the Co-Simulation interface.
    CoSimulation {
        fmi2DoStep: fn(Component, f64, f64, Boolean) -> Status;
        fmi2GetBooleanStatus: fn(Component, c_int, *mut Boolean) -> Status;
        fmi2GetRealStatus: fn(Component, c_int, *mut f64) -> Status;
    }
}

functions! {
    /// Saving and restoring the state (`canGetAndSetFMUstate`).
    States {
        fmi2GetFMUstate: fn(Component, *mut *mut c_void) -> Status;
        fmi2SetFMUstate: fn(Component, *mut c_void) -> Status;
        fmi2FreeFMUstate: fn(Component, *mut *mut c_void) -> Status;
    }
}

functions! {
    /// Writing a saved state as bytes and reading it back
    /// (`canSerializeFMUstate`). `fmi2Byte` is C's `char`.
    Serialization {
        fmi2SerializedFMUstateSize: fn(Component, *mut c_void, *mut usize) -> Status;
        fmi2SerializeFMUstate: fn(Component, *mut c_void, *mut c_char, usize) -> Status;
        fmi2DeSerializeFMUstate: fn(Component, *const c_char, usize, *mut *mut c_void) -> Status;
    }
}
