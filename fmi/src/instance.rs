//! What the FMI 2 and FMI 3 instances have in common: the internal traits
//! the model and the slave drive, the log the FMU writes into, and the
//! turning of statuses into errors.
//!
//! An instance is a C object used through `&mut self`: one thread at a
//! time, as the standard allows, so it is `Send`.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use crate::description::Numeric;
use crate::error::{FmuError, Status};
use crate::fmu::Loaded;

/// What one round of the discrete-state update reported.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DiscreteUpdate {
    /// Another round is needed.
    pub again: bool,
    /// The FMU asks to end the simulation.
    pub terminate: bool,
    /// The continuous states were changed (re-read them).
    pub states_changed: bool,
    /// The next time event, if one is pending.
    pub next_event: Option<f64>,
}

/// What `CompletedIntegratorStep` reported.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct StepEnd {
    /// The FMU asks to enter event mode now.
    pub enter_event_mode: bool,
    /// The FMU asks to end the simulation.
    pub terminate: bool,
}

/// How a communication step ended.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct StepOutcome {
    /// The FMU asks to end the simulation (FMI 2: `fmi2Terminated` after a
    /// Discard; FMI 3: `terminateSimulation`).
    pub terminate: bool,
    /// The FMU discarded the step (or returned early): it reached only
    /// `last_time`.
    pub discarded: bool,
    /// The time the FMU reached: the step's end unless it discarded it.
    pub last_time: f64,
}

/// Whether a text value is a String (UTF-8) or an FMI 3 Binary.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Text {
    /// `fmi2String` / `fmi3String`.
    String,
    /// `fmi3Binary`.
    Binary,
}

/// Calls common to both interfaces.
pub(crate) trait Instance: Send {
    /// The state shared by every call: log, health, names.
    fn core(&self) -> &Core;
    /// FMI 2: `fmi2SetupExperiment` and `fmi2EnterInitializationMode`;
    /// FMI 3: `fmi3EnterInitializationMode`.
    fn enter_initialization(&mut self, start: f64, stop: Option<f64>, tolerance: Option<f64>) -> Result<(), FmuError>;
    /// Leaves initialisation mode.
    fn exit_initialization(&mut self) -> Result<(), FmuError>;
    /// Reads Float64 variables.
    fn get_real(&mut self, vrs: &[u32], values: &mut [f64]) -> Result<(), FmuError>;
    /// Writes Float64 variables.
    fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), FmuError>;
    /// Writes one Int32 variable.
    fn set_integer(&mut self, vr: u32, value: i32) -> Result<(), FmuError>;
    /// Writes one Boolean variable.
    fn set_boolean(&mut self, vr: u32, value: bool) -> Result<(), FmuError>;
    /// Reads variables of the numeric type `ty` as `f64`s, one value per
    /// element (an FMI 3 array gives all of its elements, in order).
    /// Allocates only the first time a buffer of that size is needed.
    fn get_numbers(&mut self, ty: Numeric, vrs: &[u32], values: &mut [f64]) -> Result<(), FmuError>;
    /// Writes variables of the numeric type `ty` from `f64`s (converted as
    /// [`Numeric::coerce`] says), one value per element.
    fn set_numbers(&mut self, ty: Numeric, vrs: &[u32], values: &[f64]) -> Result<(), FmuError>;
    /// Reads one String (its UTF-8 bytes) or Binary variable.
    fn get_text(&mut self, ty: Text, vr: u32) -> Result<Vec<u8>, FmuError>;
    /// Writes one String (UTF-8, without NUL) or Binary variable.
    fn set_text(&mut self, ty: Text, vr: u32, value: &[u8]) -> Result<(), FmuError>;
    /// Saves the FMU's state; `state` is a previous one to overwrite, or null.
    fn get_state(&mut self, state: *mut c_void) -> Result<*mut c_void, FmuError>;
    /// Restores a saved state.
    fn set_state(&mut self, state: *mut c_void) -> Result<(), FmuError>;
    /// Frees a saved state.
    fn free_state(&mut self, state: *mut c_void) -> Result<(), FmuError>;
    /// The size in bytes of the saved state `state` serialized.
    fn serialized_size(&mut self, state: *mut c_void) -> Result<usize, FmuError>;
    /// Serializes the saved state `state` into `bytes`, which is as long as
    /// [`Instance::serialized_size`] said.
    fn serialize_state(&mut self, state: *mut c_void, bytes: &mut [u8]) -> Result<(), FmuError>;
    /// A new saved state read from `bytes` (a serialized state of an
    /// instance of the same FMU): the FMU allocates it; free it with
    /// [`Instance::free_state`].
    fn deserialize_state(&mut self, bytes: &[u8]) -> Result<*mut c_void, FmuError>;
}

/// The Model Exchange calls.
pub(crate) trait ModelExchange: Instance {
    /// Sets the independent variable.
    fn set_time(&mut self, t: f64) -> Result<(), FmuError>;
    /// Sets the continuous state vector.
    fn set_continuous_states(&mut self, x: &[f64]) -> Result<(), FmuError>;
    /// Reads the continuous state vector.
    fn get_continuous_states(&mut self, x: &mut [f64]) -> Result<(), FmuError>;
    /// Reads the state derivatives.
    fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), FmuError>;
    /// Reads the event indicators.
    fn get_event_indicators(&mut self, z: &mut [f64]) -> Result<(), FmuError>;
    /// Enters event mode.
    fn enter_event_mode(&mut self) -> Result<(), FmuError>;
    /// One round of the discrete-state update (event iteration).
    fn update_discrete_states(&mut self) -> Result<DiscreteUpdate, FmuError>;
    /// Enters continuous-time mode.
    fn enter_continuous_time_mode(&mut self) -> Result<(), FmuError>;
    /// Tells the FMU an integrator step was accepted.
    fn completed_integrator_step(&mut self) -> Result<StepEnd, FmuError>;
}

/// The Co-Simulation calls.
pub(crate) trait CoSimulation: Instance {
    /// Integrates from `t` over `h`: a step the FMU discards (Discard) is
    /// an outcome, not an error, as the standard makes it one.
    fn do_step(&mut self, t: f64, h: f64) -> Result<StepOutcome, FmuError>;
}

/// A C value type the numeric FMI calls take, converted from and to `f64`.
pub(crate) trait Number: Copy + Default {
    /// As Tandem holds it.
    fn to_f64(self) -> f64;
    /// From Tandem's `f64` (see [`Numeric::coerce`]).
    fn from_f64(v: f64) -> Self;
}

macro_rules! number {
    ($($t:ty),*) => {$(
        impl Number for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn from_f64(v: f64) -> Self {
                v as $t
            }
        }
    )*};
}

number!(f32, i8, u8, i16, u16, i32, u32, i64, u64, f64);

impl Number for bool {
    fn to_f64(self) -> f64 {
        f64::from(u8::from(self))
    }
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
}

/// Buffers of each C type, kept between calls so that reading or writing
/// typed variables allocates only when a larger one is first needed.
#[derive(Default)]
pub(crate) struct Scratch {
    pub f32: Vec<f32>,
    pub i8: Vec<i8>,
    pub u8: Vec<u8>,
    pub i16: Vec<i16>,
    pub u16: Vec<u16>,
    pub i32: Vec<i32>,
    pub u32: Vec<u32>,
    pub i64: Vec<i64>,
    pub u64: Vec<u64>,
    pub bool: Vec<bool>,
}

/// The first `n` slots of `buffer`, grown to hold them.
pub(crate) fn slots<T: Copy + Default>(buffer: &mut Vec<T>, n: usize) -> &mut [T] {
    if buffer.len() < n {
        buffer.resize(n, T::default());
    }
    &mut buffer[..n]
}

/// `values` converted into the first slots of `buffer`.
pub(crate) fn converted_into<'b, T: Number>(buffer: &'b mut Vec<T>, values: &[f64]) -> &'b [T] {
    let slots = slots(buffer, values.len());
    for (slot, &v) in slots.iter_mut().zip(values) {
        *slot = T::from_f64(v);
    }
    slots
}

/// Copies `from` into `values` as `f64`s.
pub(crate) fn widen<T: Number>(from: &[T], values: &mut [f64]) {
    for (v, &x) in values.iter_mut().zip(from) {
        *v = x.to_f64();
    }
}

/// How many log messages are kept.
pub const LOG_MESSAGES: usize = 16;

/// The longest log message kept, in bytes (longer ones are cut).
pub const LOG_MESSAGE_BYTES: usize = 1024;

/// The last [`LOG_MESSAGES`] messages the FMU logged, in memory allocated
/// once: logging on a real-time thread allocates nothing.
pub(crate) struct LogSink {
    ring: Mutex<Ring>,
}

struct Ring {
    messages: Vec<String>,
    /// Messages logged so far (the newest is at `(count - 1) % len`).
    count: usize,
}

impl LogSink {
    pub(crate) fn new() -> Box<LogSink> {
        Box::new(LogSink {
            ring: Mutex::new(Ring {
                messages: (0..LOG_MESSAGES)
                    .map(|_| String::with_capacity(LOG_MESSAGE_BYTES))
                    .collect(),
                count: 0,
            }),
        })
    }

    /// Stores `category: message` (or the message alone), cut to the bound.
    pub(crate) fn push(&self, category: &str, message: &str) {
        let Ok(mut ring) = self.ring.lock() else {
            return;
        };
        let slot = ring.count % LOG_MESSAGES;
        ring.count += 1;
        let text = &mut ring.messages[slot];
        text.clear();
        let separator = if category.is_empty() { "" } else { ": " };
        for part in [category, separator, message] {
            let room = LOG_MESSAGE_BYTES - text.len();
            text.push_str(cut(part, room));
        }
    }

    /// The newest message, if any.
    pub(crate) fn last(&self) -> Option<String> {
        let ring = self.ring.lock().ok()?;
        (ring.count > 0).then(|| ring.messages[(ring.count - 1) % LOG_MESSAGES].clone())
    }

    /// How many messages were logged so far.
    pub(crate) fn count(&self) -> usize {
        self.ring.lock().map_or(0, |ring| ring.count)
    }

    /// The messages logged since `count` were (those still kept), oldest
    /// first: none allocates nothing.
    pub(crate) fn since(&self, count: usize) -> Vec<String> {
        let Ok(ring) = self.ring.lock() else {
            return Vec::new();
        };
        let first = count.max(ring.count.saturating_sub(LOG_MESSAGES));
        (first..ring.count)
            .map(|i| ring.messages[i % LOG_MESSAGES].clone())
            .collect()
    }

    /// The messages kept, oldest first.
    pub(crate) fn messages(&self) -> Vec<String> {
        let Ok(ring) = self.ring.lock() else {
            return Vec::new();
        };
        let kept = ring.count.min(LOG_MESSAGES);
        (ring.count - kept..ring.count)
            .map(|i| ring.messages[i % LOG_MESSAGES].clone())
            .collect()
    }

    /// The environment pointer handed to the FMU.
    pub(crate) fn as_environment(&self) -> *mut c_void {
        self as *const LogSink as *mut c_void
    }

    /// The logger callbacks' body. The message's status is not kept: a
    /// failed call reports its own.
    ///
    /// # Safety
    /// `environment` is a pointer from [`LogSink::as_environment`] of a
    /// live sink; the strings are null or NUL-terminated.
    pub(crate) unsafe fn log(environment: *mut c_void, category: *const c_char, message: *const c_char) {
        if environment.is_null() {
            return;
        }
        // SAFETY: as the caller promises.
        let sink = unsafe { &*(environment as *const LogSink) };
        let text = |p: *const c_char| {
            // SAFETY: as the caller promises.
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy())
        };
        let category = text(category);
        let message = text(message);
        sink.push(category.as_deref().unwrap_or(""), message.as_deref().unwrap_or(""));
    }
}

/// The longest prefix of `text` of at most `room` bytes ending on a
/// character boundary.
fn cut(text: &str, room: usize) -> &str {
    if text.len() <= room {
        return text;
    }
    let mut end = room;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The state every call of an instance shares: the FMU, its log, and
/// whether an earlier call left it unusable.
pub(crate) struct Core {
    pub loaded: Arc<Loaded>,
    pub log: Box<LogSink>,
    /// The call that returned Error or Fatal, and which.
    broken: Option<(&'static str, Status)>,
    /// Calls that returned Warning.
    pub warnings: u64,
    /// Initialisation was entered (so the instance must be terminated).
    pub initialized: bool,
}

impl Core {
    /// Counts a new instance of `loaded`, refusing a second one of an FMU
    /// instantiable once per process.
    pub(crate) fn new(loaded: &Arc<Loaded>, once_per_process: bool) -> Result<Core, FmuError> {
        let before = loaded.live.fetch_add(1, Ordering::SeqCst);
        if once_per_process && before > 0 {
            loaded.live.fetch_sub(1, Ordering::SeqCst);
            return Err(FmuError::OncePerProcess {
                fmu: loaded.description.model_name.clone(),
            });
        }
        Ok(Core {
            loaded: Arc::clone(loaded),
            log: LogSink::new(),
            broken: None,
            warnings: 0,
            initialized: false,
        })
    }

    /// The model's name, for messages.
    pub(crate) fn fmu(&self) -> &str {
        &self.loaded.description.model_name
    }

    /// Refuses `call` when an earlier one left the instance unusable.
    pub(crate) fn usable(&self, call: &'static str) -> Result<(), FmuError> {
        match self.broken {
            None => Ok(()),
            Some((after, status)) => Err(FmuError::Unusable {
                fmu: self.fmu().to_string(),
                call,
                after,
                status,
            }),
        }
    }

    /// Whether the instance may still be terminated (no Error or Fatal).
    pub(crate) fn healthy(&self) -> bool {
        self.broken.is_none()
    }

    /// Whether the FMU may still be called at all (no Fatal): Error
    /// allows freeing the instance.
    pub(crate) fn freeable(&self) -> bool {
        !matches!(self.broken, Some((_, Status::Fatal)))
    }

    /// The error of asking a state of an FMU that cannot save it.
    pub(crate) fn cannot_roll_back(&self) -> FmuError {
        FmuError::CannotRollBack {
            fmu: self.fmu().to_string(),
        }
    }

    /// The error of serializing a state of an FMU that cannot.
    pub(crate) fn cannot_serialize(&self) -> FmuError {
        FmuError::CannotSerialize {
            fmu: self.fmu().to_string(),
        }
    }

    /// Turns the status `code` that `call` returned into a result; `vrs`
    /// are the value references the call was about.
    pub(crate) fn check(&mut self, call: &'static str, code: c_int, vrs: &[u32]) -> Result<(), FmuError> {
        match Status::from_code(code) {
            Status::Ok => Ok(()),
            Status::Warning => {
                self.warnings += 1;
                Ok(())
            }
            status => {
                if status != Status::Discard {
                    self.broken = Some((call, status));
                }
                Err(FmuError::Call {
                    fmu: self.fmu().to_string(),
                    call,
                    status,
                    variables: self.names(vrs),
                    log: self.log.last(),
                })
            }
        }
    }

    /// The error of a typed call the FMI version has no function for.
    pub(crate) fn no_function(&self, what: String) -> FmuError {
        FmuError::Unsupported {
            fmu: self.fmu().to_string(),
            what,
            help: "this is a bug in Tandem's reading of the model description; report it with the FMU",
        }
    }

    /// The names of the variables with the value references `vrs`.
    fn names(&self, vrs: &[u32]) -> Vec<String> {
        let description = &self.loaded.description;
        let mut names: Vec<String> = Vec::new();
        for &vr in vrs {
            for name in description.names_of(vr) {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
        }
        names
    }
}

impl Drop for Core {
    fn drop(&mut self) {
        self.loaded.live.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Calls the FMI function `$function` of the group `$functions` on
/// `$this.instance` and checks its status (naming the variables `$vrs`,
/// when given). Refuses the call when the instance is unusable. The call is
/// marked as the one running, for the report of a crash inside it.
macro_rules! fmi_call {
    ($this:ident, $functions:expr => $function:ident ( $($arg:expr),* $(,)? ) $(, $vrs:expr)?) => {{
        $this.core.usable(stringify!($function))?;
        $crate::isolate::calling(concat!(stringify!($function), "\0"));
        // SAFETY: the instance is live, the function has the declared
        // signature, and every pointer argument points to as many values
        // as the count beside it.
        let code = unsafe { ($functions.$function)($this.instance, $($arg),*) };
        $this.core.check(stringify!($function), code, fmi_call!(@vrs $($vrs)?))
    }};
    (@vrs $vrs:expr) => { $vrs };
    (@vrs) => { &[] };
}

pub(crate) use fmi_call;

/// `text` as a C string (an XML attribute holds no NUL; one would be dropped).
pub(crate) fn c_string(text: &str) -> std::ffi::CString {
    std::ffi::CString::new(text.replace('\0', "")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::{LogSink, LOG_MESSAGES, LOG_MESSAGE_BYTES};

    #[test]
    fn the_log_keeps_the_newest_messages_cut_to_their_bound() {
        let sink = LogSink::new();
        assert_eq!(sink.last(), None);
        for i in 0..LOG_MESSAGES + 4 {
            sink.push("logEvents", &format!("message {i}"));
        }
        let kept = sink.messages();
        assert_eq!(kept.len(), LOG_MESSAGES);
        assert_eq!(kept[0], "logEvents: message 4");
        assert_eq!(sink.last().as_deref(), Some("logEvents: message 19"));
        sink.push("", &"é".repeat(LOG_MESSAGE_BYTES));
        let last = sink.last().unwrap_or_default();
        assert_eq!(last.len(), LOG_MESSAGE_BYTES);
        assert!(last.chars().all(|c| c == 'é'));
    }
}
