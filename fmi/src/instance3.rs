//! An FMI 3.0 instance: the internal traits in terms of the FMI 3 calls.

use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

use crate::description::Numeric;
use crate::error::{FmuError, Status};
use crate::ffi3;
use crate::fmu::{Functions3, Loaded};
use crate::instance::{
    c_string, converted_into, fmi_call, slots, widen, CoSimulation, Core, DiscreteUpdate, Instance, LogSink,
    ModelExchange, Scratch, StepEnd, StepOutcome, Text,
};

/// Reads `$values.len()` values of the variables `$vrs` with the FMI 3
/// getter `$get` through the scratch buffer `$buffer`.
macro_rules! get_typed {
    ($this:ident, $buffer:ident, $get:ident, $vrs:expr, $values:expr) => {{
        let buffer = slots(&mut $this.scratch.$buffer, $values.len());
        fmi_call!($this, $this.api.common => $get($vrs.as_ptr(), $vrs.len(), buffer.as_mut_ptr(), $values.len()), $vrs)?;
        widen(buffer, $values);
        Ok(())
    }};
}

/// Writes the values `$values` of the variables `$vrs` with the FMI 3
/// setter `$set` through the scratch buffer `$buffer`.
macro_rules! set_typed {
    ($this:ident, $buffer:ident, $set:ident, $vrs:expr, $values:expr) => {{
        let buffer = converted_into(&mut $this.scratch.$buffer, $values);
        fmi_call!($this, $this.api.common => $set($vrs.as_ptr(), $vrs.len(), buffer.as_ptr(), $values.len()), $vrs)
    }};
}

/// The FMI 3 log callback: keeps the message in the instance's log.
unsafe extern "C" fn log_message(
    environment: *mut c_void,
    _status: c_int,
    category: *const c_char,
    message: *const c_char,
) {
    // SAFETY: the environment is the instance's log sink, the strings
    // come from the FMU as the standard says.
    unsafe { LogSink::log(environment, category, message) }
}

/// An FMI 3 instance of the interface whose functions are `K`.
pub(crate) struct Instance3<K> {
    instance: ffi3::Instance,
    api: Functions3<K>,
    core: Core,
    /// Whether the state may be set back (then steps are not final).
    rollback: bool,
    /// Buffers for typed values.
    scratch: Scratch,
}

// SAFETY: the instance is used through `&mut self` only, one thread at a
// time, which the standard allows.
unsafe impl<K: Send> Send for Instance3<K> {}

/// The strings instantiation passes: name, token, resource path.
fn instantiation_strings(loaded: &Loaded) -> [std::ffi::CString; 3] {
    let description = &loaded.description;
    let mut resources = loaded.resources().to_string_lossy().into_owned();
    resources.push(std::path::MAIN_SEPARATOR);
    [
        c_string(&description.model_name),
        c_string(&description.token),
        c_string(&resources),
    ]
}

impl Instance3<ffi3::ModelExchange> {
    pub(crate) fn model_exchange(loaded: &Arc<Loaded>, api: Functions3<ffi3::ModelExchange>) -> Result<Self, FmuError> {
        let once = loaded
            .description
            .model_exchange
            .as_ref()
            .is_some_and(|i| i.once_per_process);
        let core = Core::new(loaded, once)?;
        let [name, token, resources] = instantiation_strings(loaded);
        crate::isolate::calling("fmi3InstantiateModelExchange\0");
        // SAFETY: the strings outlive the call, the log sink the instance.
        let instance = unsafe {
            (api.kind.fmi3InstantiateModelExchange)(
                name.as_ptr(),
                token.as_ptr(),
                resources.as_ptr(),
                false,
                false,
                core.log.as_environment(),
                log_message,
            )
        };
        Instance3::checked(instance, api, core, "fmi3InstantiateModelExchange")
    }
}

impl Instance3<ffi3::CoSimulation> {
    pub(crate) fn co_simulation(loaded: &Arc<Loaded>, api: Functions3<ffi3::CoSimulation>) -> Result<Self, FmuError> {
        let once = loaded
            .description
            .co_simulation
            .as_ref()
            .is_some_and(|i| i.once_per_process);
        let core = Core::new(loaded, once)?;
        let [name, token, resources] = instantiation_strings(loaded);
        crate::isolate::calling("fmi3InstantiateCoSimulation\0");
        // SAFETY: the strings outlive the call, the log sink the instance.
        // No event mode, no early return, no intermediate variables.
        let instance = unsafe {
            (api.kind.fmi3InstantiateCoSimulation)(
                name.as_ptr(),
                token.as_ptr(),
                resources.as_ptr(),
                false,
                false,
                false,
                false,
                std::ptr::null(),
                0,
                core.log.as_environment(),
                log_message,
                None,
            )
        };
        Instance3::checked(instance, api, core, "fmi3InstantiateCoSimulation")
    }
}

impl<K> Instance3<K> {
    /// The instance, or the error of a null one.
    fn checked(instance: ffi3::Instance, api: Functions3<K>, core: Core, call: &'static str) -> Result<Self, FmuError> {
        if instance.is_null() {
            return Err(FmuError::Instantiate {
                fmu: core.fmu().to_string(),
                call,
                log: core.log.last(),
            });
        }
        Ok(Instance3 {
            instance,
            rollback: api.states.is_some(),
            api,
            core,
            scratch: Scratch::default(),
        })
    }

    fn states(&self) -> Result<ffi3::States, FmuError> {
        self.api.states.ok_or_else(|| self.core.cannot_roll_back())
    }

    fn serialization(&self) -> Result<ffi3::Serialization, FmuError> {
        self.api.serialization.ok_or_else(|| self.core.cannot_serialize())
    }
}

impl<K> Drop for Instance3<K> {
    fn drop(&mut self) {
        // SAFETY: the instance is live; after Error only freeing is
        // allowed, after Fatal nothing.
        unsafe {
            if self.core.healthy() && self.core.initialized {
                crate::isolate::calling("fmi3Terminate\0");
                (self.api.common.fmi3Terminate)(self.instance);
            }
            if self.core.freeable() {
                crate::isolate::calling("fmi3FreeInstance\0");
                (self.api.common.fmi3FreeInstance)(self.instance);
            }
        }
    }
}

impl<K: Send> Instance for Instance3<K> {
    fn core(&self) -> &Core {
        &self.core
    }

    fn enter_initialization(&mut self, start: f64, stop: Option<f64>, tolerance: Option<f64>) -> Result<(), FmuError> {
        fmi_call!(self, self.api.common => fmi3EnterInitializationMode(
            tolerance.is_some(),
            tolerance.unwrap_or(0.0),
            start,
            stop.is_some(),
            stop.unwrap_or(0.0),
        ))
    }

    fn exit_initialization(&mut self) -> Result<(), FmuError> {
        fmi_call!(self, self.api.common => fmi3ExitInitializationMode())?;
        self.core.initialized = true;
        Ok(())
    }

    fn get_real(&mut self, vrs: &[u32], values: &mut [f64]) -> Result<(), FmuError> {
        let n = vrs.len().min(values.len());
        fmi_call!(self, self.api.common => fmi3GetFloat64(vrs.as_ptr(), n, values.as_mut_ptr(), n), &vrs[..n])
    }

    fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), FmuError> {
        let n = vrs.len().min(values.len());
        fmi_call!(self, self.api.common => fmi3SetFloat64(vrs.as_ptr(), n, values.as_ptr(), n), &vrs[..n])
    }

    fn set_integer(&mut self, vr: u32, value: i32) -> Result<(), FmuError> {
        fmi_call!(self, self.api.common => fmi3SetInt32(&vr, 1, &value, 1), &[vr])
    }

    fn set_boolean(&mut self, vr: u32, value: bool) -> Result<(), FmuError> {
        fmi_call!(self, self.api.common => fmi3SetBoolean(&vr, 1, &value, 1), &[vr])
    }

    fn get_numbers(&mut self, ty: Numeric, vrs: &[u32], values: &mut [f64]) -> Result<(), FmuError> {
        match ty {
            Numeric::Float64 => {
                fmi_call!(self, self.api.common => fmi3GetFloat64(vrs.as_ptr(), vrs.len(), values.as_mut_ptr(), values.len()), vrs)
            }
            Numeric::Float32 => get_typed!(self, f32, fmi3GetFloat32, vrs, values),
            Numeric::Int8 => get_typed!(self, i8, fmi3GetInt8, vrs, values),
            Numeric::UInt8 => get_typed!(self, u8, fmi3GetUInt8, vrs, values),
            Numeric::Int16 => get_typed!(self, i16, fmi3GetInt16, vrs, values),
            Numeric::UInt16 => get_typed!(self, u16, fmi3GetUInt16, vrs, values),
            Numeric::Int32 => get_typed!(self, i32, fmi3GetInt32, vrs, values),
            Numeric::UInt32 => get_typed!(self, u32, fmi3GetUInt32, vrs, values),
            Numeric::Int64 => get_typed!(self, i64, fmi3GetInt64, vrs, values),
            Numeric::UInt64 => get_typed!(self, u64, fmi3GetUInt64, vrs, values),
            Numeric::Boolean => get_typed!(self, bool, fmi3GetBoolean, vrs, values),
        }
    }

    fn set_numbers(&mut self, ty: Numeric, vrs: &[u32], values: &[f64]) -> Result<(), FmuError> {
        match ty {
            Numeric::Float64 => {
                fmi_call!(self, self.api.common => fmi3SetFloat64(vrs.as_ptr(), vrs.len(), values.as_ptr(), values.len()), vrs)
            }
            Numeric::Float32 => set_typed!(self, f32, fmi3SetFloat32, vrs, values),
            Numeric::Int8 => set_typed!(self, i8, fmi3SetInt8, vrs, values),
            Numeric::UInt8 => set_typed!(self, u8, fmi3SetUInt8, vrs, values),
            Numeric::Int16 => set_typed!(self, i16, fmi3SetInt16, vrs, values),
            Numeric::UInt16 => set_typed!(self, u16, fmi3SetUInt16, vrs, values),
            Numeric::Int32 => set_typed!(self, i32, fmi3SetInt32, vrs, values),
            Numeric::UInt32 => set_typed!(self, u32, fmi3SetUInt32, vrs, values),
            Numeric::Int64 => set_typed!(self, i64, fmi3SetInt64, vrs, values),
            Numeric::UInt64 => set_typed!(self, u64, fmi3SetUInt64, vrs, values),
            Numeric::Boolean => set_typed!(self, bool, fmi3SetBoolean, vrs, values),
        }
    }

    fn get_text(&mut self, ty: Text, vr: u32) -> Result<Vec<u8>, FmuError> {
        match ty {
            Text::String => {
                let mut text: *const c_char = std::ptr::null();
                fmi_call!(self, self.api.common => fmi3GetString(&vr, 1, &mut text, 1), &[vr])?;
                // SAFETY: the FMU returns a NUL-terminated string valid
                // until its next call, copied here at once.
                Ok(if text.is_null() {
                    Vec::new()
                } else {
                    unsafe { std::ffi::CStr::from_ptr(text) }.to_bytes().to_vec()
                })
            }
            Text::Binary => {
                let (mut size, mut bytes): (usize, *const u8) = (0, std::ptr::null());
                fmi_call!(self, self.api.common => fmi3GetBinary(&vr, 1, &mut size, &mut bytes, 1), &[vr])?;
                // SAFETY: the FMU returns `size` bytes valid until its next
                // call, copied here at once.
                Ok(if bytes.is_null() {
                    Vec::new()
                } else {
                    unsafe { std::slice::from_raw_parts(bytes, size) }.to_vec()
                })
            }
        }
    }

    fn set_text(&mut self, ty: Text, vr: u32, value: &[u8]) -> Result<(), FmuError> {
        match ty {
            Text::String => {
                let text = c_string(&String::from_utf8_lossy(value));
                fmi_call!(self, self.api.common => fmi3SetString(&vr, 1, &text.as_ptr(), 1), &[vr])
            }
            Text::Binary => {
                fmi_call!(self, self.api.common => fmi3SetBinary(&vr, 1, &value.len(), &value.as_ptr(), 1), &[vr])
            }
        }
    }

    fn get_state(&mut self, state: *mut c_void) -> Result<*mut c_void, FmuError> {
        let states = self.states()?;
        let mut state = state;
        fmi_call!(self, states => fmi3GetFMUState(&mut state))?;
        Ok(state)
    }

    fn set_state(&mut self, state: *mut c_void) -> Result<(), FmuError> {
        let states = self.states()?;
        fmi_call!(self, states => fmi3SetFMUState(state))
    }

    fn free_state(&mut self, state: *mut c_void) -> Result<(), FmuError> {
        let states = self.states()?;
        let mut state = state;
        fmi_call!(self, states => fmi3FreeFMUState(&mut state))
    }

    fn serialized_size(&mut self, state: *mut c_void) -> Result<usize, FmuError> {
        let functions = self.serialization()?;
        let mut size = 0;
        fmi_call!(self, functions => fmi3SerializedFMUStateSize(state, &mut size))?;
        Ok(size)
    }

    fn serialize_state(&mut self, state: *mut c_void, bytes: &mut [u8]) -> Result<(), FmuError> {
        let functions = self.serialization()?;
        fmi_call!(self, functions => fmi3SerializeFMUState(state, bytes.as_mut_ptr(), bytes.len()))
    }

    fn deserialize_state(&mut self, bytes: &[u8]) -> Result<*mut c_void, FmuError> {
        let functions = self.serialization()?;
        let mut state = std::ptr::null_mut();
        fmi_call!(self, functions => fmi3DeserializeFMUState(bytes.as_ptr(), bytes.len(), &mut state))?;
        Ok(state)
    }
}

impl ModelExchange for Instance3<ffi3::ModelExchange> {
    fn set_time(&mut self, t: f64) -> Result<(), FmuError> {
        fmi_call!(self, self.api.kind => fmi3SetTime(t))
    }

    fn set_continuous_states(&mut self, x: &[f64]) -> Result<(), FmuError> {
        if x.is_empty() {
            return Ok(());
        }
        fmi_call!(self, self.api.kind => fmi3SetContinuousStates(x.as_ptr(), x.len()))
    }

    fn get_continuous_states(&mut self, x: &mut [f64]) -> Result<(), FmuError> {
        if x.is_empty() {
            return Ok(());
        }
        fmi_call!(self, self.api.kind => fmi3GetContinuousStates(x.as_mut_ptr(), x.len()))
    }

    fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), FmuError> {
        if dx.is_empty() {
            return Ok(());
        }
        fmi_call!(self, self.api.kind => fmi3GetContinuousStateDerivatives(dx.as_mut_ptr(), dx.len()))
    }

    fn get_event_indicators(&mut self, z: &mut [f64]) -> Result<(), FmuError> {
        if z.is_empty() {
            return Ok(());
        }
        fmi_call!(self, self.api.kind => fmi3GetEventIndicators(z.as_mut_ptr(), z.len()))
    }

    fn enter_event_mode(&mut self) -> Result<(), FmuError> {
        fmi_call!(self, self.api.kind => fmi3EnterEventMode())
    }

    fn update_discrete_states(&mut self) -> Result<DiscreteUpdate, FmuError> {
        let (mut again, mut terminate, mut nominals, mut changed, mut defined) = (false, false, false, false, false);
        let mut next = 0.0;
        fmi_call!(self, self.api.kind => fmi3UpdateDiscreteStates(
            &mut again,
            &mut terminate,
            &mut nominals,
            &mut changed,
            &mut defined,
            &mut next,
        ))?;
        Ok(DiscreteUpdate {
            again,
            terminate,
            states_changed: changed,
            next_event: defined.then_some(next),
        })
    }

    fn enter_continuous_time_mode(&mut self) -> Result<(), FmuError> {
        fmi_call!(self, self.api.kind => fmi3EnterContinuousTimeMode())
    }

    fn completed_integrator_step(&mut self) -> Result<StepEnd, FmuError> {
        let (mut enter, mut terminate) = (false, false);
        fmi_call!(self, self.api.kind => fmi3CompletedIntegratorStep(true, &mut enter, &mut terminate))?;
        Ok(StepEnd {
            enter_event_mode: enter,
            terminate,
        })
    }
}

impl CoSimulation for Instance3<ffi3::CoSimulation> {
    /// A Discard (or an early return, which this importer does not ask
    /// for) ends at `lastSuccessfulTime`, as the standard's section 4.2.3
    /// says; `terminateSimulation` is taken from OK, Warning and Discard.
    fn do_step(&mut self, t: f64, h: f64) -> Result<StepOutcome, FmuError> {
        let (mut event, mut terminate, mut early) = (false, false, false);
        let mut last = t + h;
        self.core.usable("fmi3DoStep")?;
        crate::isolate::calling("fmi3DoStep\0");
        // SAFETY: the instance is live, the function has the declared
        // signature, every pointer is to a live local.
        let code = unsafe {
            (self.api.kind.fmi3DoStep)(
                self.instance,
                t,
                h,
                !self.rollback,
                &mut event,
                &mut terminate,
                &mut early,
                &mut last,
            )
        };
        let discarded = Status::from_code(code) == Status::Discard;
        if !discarded {
            self.core.check("fmi3DoStep", code, &[])?;
        }
        if !last.is_finite() || !(discarded || early) {
            last = if discarded { t } else { t + h };
        }
        Ok(StepOutcome {
            terminate,
            discarded: discarded || (early && last < t + h),
            last_time: last,
        })
    }
}
