//! An FMI 2.0 instance: the internal traits in terms of the FMI 2 calls.

use std::ffi::{c_char, c_int, c_void};
use std::path::Path;
use std::sync::Arc;

use crate::description::{InterfaceKind, Numeric};
use crate::error::{FmuError, Status};
use crate::ffi2::{self, Boolean, CallbackFunctions, EventInfo, FALSE, TRUE};
use crate::fmu::{Functions2, Loaded};
use crate::instance::{
    c_string, converted_into, fmi_call, slots, widen, CoSimulation, Core, DiscreteUpdate, Instance, LogSink,
    ModelExchange, Scratch, StepEnd, StepOutcome, Text,
};

extern "C" {
    fn calloc(count: usize, size: usize) -> *mut c_void;
    fn free(object: *mut c_void);
}

/// The FMI 2 logger: keeps the message in the instance's log.
unsafe extern "C" fn logger(
    environment: *mut c_void,
    _instance: *const c_char,
    _status: c_int,
    category: *const c_char,
    message: *const c_char,
) {
    // SAFETY: the environment is the instance's log sink, the strings
    // come from the FMU as the standard says.
    unsafe { LogSink::log(environment, category, message) }
}

/// An FMI 2 instance of the interface whose functions are `K`.
pub(crate) struct Instance2<K> {
    instance: ffi2::Component,
    api: Functions2<K>,
    core: Core,
    /// Whether the state may be set back (then steps are not final).
    rollback: bool,
    /// Buffers for typed values.
    scratch: Scratch,
    /// Kept alive as long as the instance: the FMU may keep the pointer.
    _callbacks: Box<CallbackFunctions>,
}

// SAFETY: the instance is used through `&mut self` only, one thread at a
// time, which the standard allows.
unsafe impl<K: Send> Send for Instance2<K> {}

impl Instance2<ffi2::ModelExchange> {
    pub(crate) fn model_exchange(loaded: &Arc<Loaded>, api: Functions2<ffi2::ModelExchange>) -> Result<Self, FmuError> {
        Instance2::new(loaded, api, InterfaceKind::ModelExchange)
    }
}

impl Instance2<ffi2::CoSimulation> {
    pub(crate) fn co_simulation(loaded: &Arc<Loaded>, api: Functions2<ffi2::CoSimulation>) -> Result<Self, FmuError> {
        Instance2::new(loaded, api, InterfaceKind::CoSimulation)
    }
}

impl<K> Instance2<K> {
    fn new(loaded: &Arc<Loaded>, api: Functions2<K>, kind: InterfaceKind) -> Result<Self, FmuError> {
        let description = &loaded.description;
        let once = description.interface(kind).is_some_and(|i| i.once_per_process);
        let core = Core::new(loaded, once)?;
        let callbacks = Box::new(CallbackFunctions {
            logger,
            allocate_memory: calloc,
            free_memory: free,
            step_finished: None,
            component_environment: core.log.as_environment(),
        });
        let name = c_string(&description.model_name);
        let guid = c_string(&description.token);
        let location = c_string(&file_uri(&loaded.resources()));
        let fmu_type = match kind {
            InterfaceKind::ModelExchange => ffi2::MODEL_EXCHANGE,
            InterfaceKind::CoSimulation => ffi2::CO_SIMULATION,
        };
        crate::isolate::calling("fmi2Instantiate\0");
        // SAFETY: the strings and the callbacks outlive the call (the
        // callbacks the instance).
        let instance = unsafe {
            (api.common.fmi2Instantiate)(
                name.as_ptr(),
                fmu_type,
                guid.as_ptr(),
                location.as_ptr(),
                &*callbacks,
                FALSE,
                FALSE,
            )
        };
        if instance.is_null() {
            return Err(FmuError::Instantiate {
                fmu: description.model_name.clone(),
                call: "fmi2Instantiate",
                log: core.log.last(),
            });
        }
        Ok(Instance2 {
            instance,
            rollback: api.states.is_some(),
            api,
            core,
            scratch: Scratch::default(),
            _callbacks: callbacks,
        })
    }

    fn states(&self) -> Result<ffi2::States, FmuError> {
        self.api.states.ok_or_else(|| self.core.cannot_roll_back())
    }

    fn serialization(&self) -> Result<ffi2::Serialization, FmuError> {
        self.api.serialization.ok_or_else(|| self.core.cannot_serialize())
    }
}

impl<K> Drop for Instance2<K> {
    fn drop(&mut self) {
        // SAFETY: the instance is live; after Error only freeing is
        // allowed, after Fatal nothing.
        unsafe {
            if self.core.healthy() && self.core.initialized {
                crate::isolate::calling("fmi2Terminate\0");
                (self.api.common.fmi2Terminate)(self.instance);
            }
            if self.core.freeable() {
                crate::isolate::calling("fmi2FreeInstance\0");
                (self.api.common.fmi2FreeInstance)(self.instance);
            }
        }
    }
}

fn boolean(value: bool) -> Boolean {
    if value {
        TRUE
    } else {
        FALSE
    }
}

/// `path` as a `file://` URI, as FMI 2 wants the resource location.
fn file_uri(path: &Path) -> String {
    let text = path.to_string_lossy().replace('\\', "/");
    let mut uri = String::from(if text.starts_with('/') { "file://" } else { "file:///" });
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~:".contains(&byte) {
            uri.push(byte as char);
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

impl<K: Send> Instance for Instance2<K> {
    fn core(&self) -> &Core {
        &self.core
    }

    fn enter_initialization(&mut self, start: f64, stop: Option<f64>, tolerance: Option<f64>) -> Result<(), FmuError> {
        fmi_call!(self, self.api.common => fmi2SetupExperiment(
            boolean(tolerance.is_some()),
            tolerance.unwrap_or(0.0),
            start,
            boolean(stop.is_some()),
            stop.unwrap_or(0.0),
        ))?;
        fmi_call!(self, self.api.common => fmi2EnterInitializationMode())
    }

    fn exit_initialization(&mut self) -> Result<(), FmuError> {
        fmi_call!(self, self.api.common => fmi2ExitInitializationMode())?;
        self.core.initialized = true;
        Ok(())
    }

    fn get_real(&mut self, vrs: &[u32], values: &mut [f64]) -> Result<(), FmuError> {
        let n = vrs.len().min(values.len());
        fmi_call!(self, self.api.common => fmi2GetReal(vrs.as_ptr(), n, values.as_mut_ptr()), &vrs[..n])
    }

    fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), FmuError> {
        let n = vrs.len().min(values.len());
        fmi_call!(self, self.api.common => fmi2SetReal(vrs.as_ptr(), n, values.as_ptr()), &vrs[..n])
    }

    fn set_integer(&mut self, vr: u32, value: i32) -> Result<(), FmuError> {
        fmi_call!(self, self.api.common => fmi2SetInteger(&vr, 1, &value), &[vr])
    }

    fn set_boolean(&mut self, vr: u32, value: bool) -> Result<(), FmuError> {
        fmi_call!(self, self.api.common => fmi2SetBoolean(&vr, 1, &boolean(value)), &[vr])
    }

    fn get_numbers(&mut self, ty: Numeric, vrs: &[u32], values: &mut [f64]) -> Result<(), FmuError> {
        let n = vrs.len().min(values.len());
        let (vrs, values) = (&vrs[..n], &mut values[..n]);
        match ty {
            Numeric::Float64 => self.get_real(vrs, values),
            Numeric::Int32 => {
                let buffer = slots(&mut self.scratch.i32, n);
                fmi_call!(self, self.api.common => fmi2GetInteger(vrs.as_ptr(), n, buffer.as_mut_ptr()), vrs)?;
                widen(buffer, values);
                Ok(())
            }
            Numeric::Boolean => {
                let buffer = slots(&mut self.scratch.i32, n);
                fmi_call!(self, self.api.common => fmi2GetBoolean(vrs.as_ptr(), n, buffer.as_mut_ptr()), vrs)?;
                for (v, &b) in values.iter_mut().zip(buffer.iter()) {
                    *v = if b != FALSE { 1.0 } else { 0.0 };
                }
                Ok(())
            }
            other => Err(self
                .core
                .no_function(format!("reading {other:?} variables, which FMI 2 has none of"))),
        }
    }

    fn set_numbers(&mut self, ty: Numeric, vrs: &[u32], values: &[f64]) -> Result<(), FmuError> {
        let n = vrs.len().min(values.len());
        let (vrs, values) = (&vrs[..n], &values[..n]);
        match ty {
            Numeric::Float64 => self.set_real(vrs, values),
            Numeric::Int32 => {
                let buffer = converted_into(&mut self.scratch.i32, values);
                fmi_call!(self, self.api.common => fmi2SetInteger(vrs.as_ptr(), n, buffer.as_ptr()), vrs)
            }
            Numeric::Boolean => {
                let buffer = slots(&mut self.scratch.i32, n);
                for (b, &v) in buffer.iter_mut().zip(values) {
                    *b = boolean(v != 0.0);
                }
                fmi_call!(self, self.api.common => fmi2SetBoolean(vrs.as_ptr(), n, buffer.as_ptr()), vrs)
            }
            other => Err(self
                .core
                .no_function(format!("writing {other:?} variables, which FMI 2 has none of"))),
        }
    }

    fn get_text(&mut self, ty: Text, vr: u32) -> Result<Vec<u8>, FmuError> {
        if ty == Text::Binary {
            return Err(self
                .core
                .no_function("reading a Binary variable, which FMI 2 has none of".to_string()));
        }
        let mut text: *const c_char = std::ptr::null();
        fmi_call!(self, self.api.common => fmi2GetString(&vr, 1, &mut text), &[vr])?;
        // SAFETY: the FMU returns a NUL-terminated string valid until its
        // next call, copied here at once.
        Ok(if text.is_null() {
            Vec::new()
        } else {
            unsafe { std::ffi::CStr::from_ptr(text) }.to_bytes().to_vec()
        })
    }

    fn set_text(&mut self, ty: Text, vr: u32, value: &[u8]) -> Result<(), FmuError> {
        if ty == Text::Binary {
            return Err(self
                .core
                .no_function("writing a Binary variable, which FMI 2 has none of".to_string()));
        }
        let text = c_string(&String::from_utf8_lossy(value));
        fmi_call!(self, self.api.common => fmi2SetString(&vr, 1, &text.as_ptr()), &[vr])
    }

    fn get_state(&mut self, state: *mut c_void) -> Result<*mut c_void, FmuError> {
        let states = self.states()?;
        let mut state = state;
        fmi_call!(self, states => fmi2GetFMUstate(&mut state))?;
        Ok(state)
    }

    fn set_state(&mut self, state: *mut c_void) -> Result<(), FmuError> {
        let states = self.states()?;
        fmi_call!(self, states => fmi2SetFMUstate(state))
    }

    fn free_state(&mut self, state: *mut c_void) -> Result<(), FmuError> {
        let states = self.states()?;
        let mut state = state;
        fmi_call!(self, states => fmi2FreeFMUstate(&mut state))
    }

    fn serialized_size(&mut self, state: *mut c_void) -> Result<usize, FmuError> {
        let functions = self.serialization()?;
        let mut size = 0;
        fmi_call!(self, functions => fmi2SerializedFMUstateSize(state, &mut size))?;
        Ok(size)
    }

    fn serialize_state(&mut self, state: *mut c_void, bytes: &mut [u8]) -> Result<(), FmuError> {
        let functions = self.serialization()?;
        fmi_call!(self, functions => fmi2SerializeFMUstate(state, bytes.as_mut_ptr().cast::<c_char>(), bytes.len()))
    }

    fn deserialize_state(&mut self, bytes: &[u8]) -> Result<*mut c_void, FmuError> {
        let functions = self.serialization()?;
        let mut state = std::ptr::null_mut();
        fmi_call!(self, functions => fmi2DeSerializeFMUstate(bytes.as_ptr().cast::<c_char>(), bytes.len(), &mut state))?;
        Ok(state)
    }
}

impl ModelExchange for Instance2<ffi2::ModelExchange> {
    fn set_time(&mut self, t: f64) -> Result<(), FmuError> {
        fmi_call!(self, self.api.kind => fmi2SetTime(t))
    }

    fn set_continuous_states(&mut self, x: &[f64]) -> Result<(), FmuError> {
        if x.is_empty() {
            return Ok(());
        }
        fmi_call!(self, self.api.kind => fmi2SetContinuousStates(x.as_ptr(), x.len()))
    }

    fn get_continuous_states(&mut self, x: &mut [f64]) -> Result<(), FmuError> {
        if x.is_empty() {
            return Ok(());
        }
        fmi_call!(self, self.api.kind => fmi2GetContinuousStates(x.as_mut_ptr(), x.len()))
    }

    fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), FmuError> {
        if dx.is_empty() {
            return Ok(());
        }
        fmi_call!(self, self.api.kind => fmi2GetDerivatives(dx.as_mut_ptr(), dx.len()))
    }

    fn get_event_indicators(&mut self, z: &mut [f64]) -> Result<(), FmuError> {
        if z.is_empty() {
            return Ok(());
        }
        fmi_call!(self, self.api.kind => fmi2GetEventIndicators(z.as_mut_ptr(), z.len()))
    }

    fn enter_event_mode(&mut self) -> Result<(), FmuError> {
        fmi_call!(self, self.api.kind => fmi2EnterEventMode())
    }

    fn update_discrete_states(&mut self) -> Result<DiscreteUpdate, FmuError> {
        let mut info = EventInfo::default();
        fmi_call!(self, self.api.kind => fmi2NewDiscreteStates(&mut info))?;
        Ok(DiscreteUpdate {
            again: info.new_discrete_states_needed != FALSE,
            terminate: info.terminate_simulation != FALSE,
            states_changed: info.values_of_continuous_states_changed != FALSE,
            next_event: (info.next_event_time_defined != FALSE).then_some(info.next_event_time),
        })
    }

    fn enter_continuous_time_mode(&mut self) -> Result<(), FmuError> {
        fmi_call!(self, self.api.kind => fmi2EnterContinuousTimeMode())
    }

    fn completed_integrator_step(&mut self) -> Result<StepEnd, FmuError> {
        let (mut enter, mut terminate) = (FALSE, FALSE);
        fmi_call!(self, self.api.kind => fmi2CompletedIntegratorStep(TRUE, &mut enter, &mut terminate))?;
        Ok(StepEnd {
            enter_event_mode: enter != FALSE,
            terminate: terminate != FALSE,
        })
    }
}

impl CoSimulation for Instance2<ffi2::CoSimulation> {
    /// On Discard, asks `fmi2Terminated` (the FMU wants the simulation
    /// ended) and `fmi2LastSuccessfulTime` (how far it got; the step's
    /// start when the FMU cannot say), as the standard's section 4.2.3 says.
    fn do_step(&mut self, t: f64, h: f64) -> Result<StepOutcome, FmuError> {
        self.core.usable("fmi2DoStep")?;
        crate::isolate::calling("fmi2DoStep\0");
        // SAFETY: the instance is live, the function has the declared
        // signature.
        let code = unsafe { (self.api.kind.fmi2DoStep)(self.instance, t, h, boolean(!self.rollback)) };
        if Status::from_code(code) != Status::Discard {
            self.core.check("fmi2DoStep", code, &[])?;
            return Ok(StepOutcome {
                terminate: false,
                discarded: false,
                last_time: t + h,
            });
        }
        let mut terminated = FALSE;
        fmi_call!(self, self.api.kind => fmi2GetBooleanStatus(ffi2::TERMINATED, &mut terminated))?;
        let mut last = t;
        crate::isolate::calling("fmi2GetRealStatus\0");
        // SAFETY: as above. Not every FMU answers this one (it may return
        // Discard): then the step's start is all that is known.
        let code = unsafe { (self.api.kind.fmi2GetRealStatus)(self.instance, ffi2::LAST_SUCCESSFUL_TIME, &mut last) };
        if !matches!(Status::from_code(code), Status::Ok | Status::Warning) || !last.is_finite() {
            last = t;
        }
        Ok(StepOutcome {
            terminate: terminated != FALSE,
            discarded: true,
            last_time: last,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::file_uri;
    use std::path::Path;

    #[test]
    fn resource_locations_are_percent_encoded_uris() {
        assert_eq!(
            file_uri(Path::new("/tmp/a b/résources")),
            "file:///tmp/a%20b/r%C3%A9sources"
        );
    }
}
