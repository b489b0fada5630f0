//! The FMI 3.0 C API, declared from the standard (section 2.2 and the
//! Model Exchange and Co-Simulation chapters): the types and the functions
//! this importer calls, grouped by what needs them. `fmi3Boolean` is C's
//! `bool`, which Rust's `bool` matches.

use std::ffi::{c_char, c_int, c_void};

use crate::library::functions;

/// `fmi3Instance`.
pub(crate) type Instance = *mut c_void;
/// `fmi3Status`, a C enum.
pub(crate) type Status = c_int;

/// `fmi3LogMessageCallback`.
pub(crate) type LogMessage =
    unsafe extern "C" fn(env: *mut c_void, status: Status, category: *const c_char, message: *const c_char);

/// `fmi3IntermediateUpdateCallback` (never given: no early return, no
/// intermediate variables).
pub(crate) type IntermediateUpdate =
    unsafe extern "C" fn(*mut c_void, f64, bool, bool, bool, bool, *mut bool, *mut f64);

functions! {
    /// Functions of both interfaces.
    Common {
        fmi3FreeInstance: fn(Instance);
        fmi3EnterInitializationMode: fn(Instance, bool, f64, f64, bool, f64) -> Status;
        fmi3ExitInitializationMode: fn(Instance) -> Status;
        fmi3Terminate: fn(Instance) -> Status;
        fmi3GetFloat64: fn(Instance, *const u32, usize, *mut f64, usize) -> Status;
        fmi3SetFloat64: fn(Instance, *const u32, usize, *const f64, usize) -> Status;
        fmi3SetInt32: fn(Instance, *const u32, usize, *const i32, usize) -> Status;
        fmi3SetBoolean: fn(Instance, *const u32, usize, *const bool, usize) -> Status;
        fmi3GetBoolean: fn(Instance, *const u32, usize, *mut bool, usize) -> Status;
        fmi3GetFloat32: fn(Instance, *const u32, usize, *mut f32, usize) -> Status;
        fmi3SetFloat32: fn(Instance, *const u32, usize, *const f32, usize) -> Status;
        fmi3GetInt8: fn(Instance, *const u32, usize, *mut i8, usize) -> Status;
        fmi3SetInt8: fn(Instance, *const u32, usize, *const i8, usize) -> Status;
        fmi3GetUInt8: fn(Instance, *const u32, usize, *mut u8, usize) -> Status;
        fmi3SetUInt8: fn(Instance, *const u32, usize, *const u8, usize) -> Status;
        fmi3GetInt16: fn(Instance, *const u32, usize, *mut i16, usize) -> Status;
        fmi3SetInt16: fn(Instance, *const u32, usize, *const i16, usize) -> Status;
        fmi3GetUInt16: fn(Instance, *const u32, usize, *mut u16, usize) -> Status;
        fmi3SetUInt16: fn(Instance, *const u32, usize, *const u16, usize) -> Status;
        fmi3GetInt32: fn(Instance, *const u32, usize, *mut i32, usize) -> Status;
        fmi3GetUInt32: fn(Instance, *const u32, usize, *mut u32, usize) -> Status;
        fmi3SetUInt32: fn(Instance, *const u32, usize, *const u32, usize) -> Status;
        fmi3GetInt64: fn(Instance, *const u32, usize, *mut i64, usize) -> Status;
        fmi3SetInt64: fn(Instance, *const u32, usize, *const i64, usize) -> Status;
        fmi3GetUInt64: fn(Instance, *const u32, usize, *mut u64, usize) -> Status;
        fmi3SetUInt64: fn(Instance, *const u32, usize, *const u64, usize) -> Status;
        fmi3GetString: fn(Instance, *const u32, usize, *mut *const c_char, usize) -> Status;
        fmi3SetString: fn(Instance, *const u32, usize, *const *const c_char, usize) -> Status;
        fmi3GetBinary: fn(Instance, *const u32, usize, *mut usize, *mut *const u8, usize) -> Status;
        fmi3SetBinary: fn(Instance, *const u32, usize, *const usize, *const *const u8, usize) -> Status;
    }
}

functions! {
    /// Functions of the Model Exchange interface.
    ModelExchange {
        fmi3InstantiateModelExchange: fn(*const c_char, *const c_char, *const c_char, bool, bool, *mut c_void, LogMessage) -> Instance;
        fmi3EnterEventMode: fn(Instance) -> Status;
        fmi3UpdateDiscreteStates: fn(Instance, *mut bool, *mut bool, *mut bool, *mut bool, *mut bool, *mut f64) -> Status;
        fmi3EnterContinuousTimeMode: fn(Instance) -> Status;
        fmi3CompletedIntegratorStep: fn(Instance, bool, *mut bool, *mut bool) -> Status;
        fmi3SetTime: fn(Instance, f64) -> Status;
        fmi3SetContinuousStates: fn(Instance, *const f64, usize) -> Status;
        fmi3GetContinuousStateDerivatives: fn(Instance, *mut f64, usize) -> Status;
        fmi3GetEventIndicators: fn(Instance, *mut f64, usize) -> Status;
        fmi3GetContinuousStates: fn(Instance, *mut f64, usize) -> Status;
    }
}

functions! {
    /// Functions of the Co-Simulation interface.
    CoSimulation {
        fmi3InstantiateCoSimulation: fn(*const c_char, *const c_char, *const c_char, bool, bool, bool, bool, *const u32, usize, *mut c_void, LogMessage, Option<IntermediateUpdate>) -> Instance;
        fmi3DoStep: fn(Instance, f64, f64, bool, *mut bool, *mut bool, *mut bool, *mut f64) -> Status;
    }
}

functions! {
    /// Saving and restoring the state (`canGetAndSetFMUState`).
    States {
        fmi3GetFMUState: fn(Instance, *mut *mut c_void) -> Status;
        fmi3SetFMUState: fn(Instance, *mut c_void) -> Status;
        fmi3FreeFMUState: fn(Instance, *mut *mut c_void) -> Status;
    }
}

functions! {
    /// Writing a saved state as bytes and reading it back
    /// (`canSerializeFMUState`). `fmi3Byte` is `uint8_t`.
    Serialization {
        fmi3SerializedFMUStateSize: fn(Instance, *mut c_void, *mut usize) -> Status;
        fmi3SerializeFMUState: fn(Instance, *mut c_void, *mut u8, usize) -> Status;
        fmi3DeserializeFMUState: fn(Instance, *const u8, usize, *mut *mut c_void) -> Status;
    }
}
