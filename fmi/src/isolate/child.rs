//! The child's side: [`serve`], the `main` of a process an out-of-process
//! instance runs in, and the handler that reports a crash before the
//! process dies of it.

use std::ffi::c_int;
use std::io;
use std::os::fd::FromRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use super::wire::{numeric_of, write_error, Frame, Inbox, Op, Writer, CRASH, DEFERRED, FAILED, MAX_FRAME, OK};
use crate::description::InterfaceKind;
use crate::error::FmuError;
use crate::fmu::Fmu;
use crate::instance::{CoSimulation, DiscreteUpdate, Instance, ModelExchange, StepEnd, StepOutcome, Text};
use crate::instantiate;

/// Serves one out-of-process instance to the parent that started this
/// process: its standard input is the socket to the parent. Returns the
/// process's exit code: 0 when the parent freed the instance or went away,
/// 1 when the socket failed, 2 when standard input is no socket (the
/// program was run by hand).
pub fn serve() -> i32 {
    // SAFETY: descriptor 0 is this process's standard input, taken once
    // here and used by nothing else.
    let mut socket = unsafe { UnixStream::from_raw_fd(0) };
    if socket.local_addr().is_err() {
        eprintln!(
            "fmu-host serves an FMU to the Tandem process that starts it (out-of-process loading); it is not run by hand"
        );
        return 2;
    }
    install_crash_handlers();
    let mut server = Server::default();
    match server.run(&mut socket) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("fmu-host: the link to the parent failed: {e}");
            1
        }
    }
}

/// The instance served, of either interface.
enum Served {
    Model(Box<dyn ModelExchange>),
    Slave(Box<dyn CoSimulation>),
}

impl Served {
    fn instance(&mut self) -> &mut dyn Instance {
        match self {
            Served::Model(model) => model.as_mut(),
            Served::Slave(slave) => slave.as_mut(),
        }
    }

    /// The Model Exchange instance, or the error of a request that wants
    /// one from a Co-Simulation instance.
    fn model(&mut self) -> io::Result<&mut dyn ModelExchange> {
        match self {
            Served::Model(model) => Ok(model.as_mut()),
            Served::Slave(_) => Err(invalid("a Model Exchange call to a Co-Simulation instance")),
        }
    }
}

/// What a call gives back besides its status.
enum Results {
    Nothing,
    /// In [`Server::values`].
    Values,
    Handle(u64),
    /// A size in bytes.
    Size(u64),
    /// In [`Server::bytes`].
    Bytes,
    Step(StepOutcome),
    Update(DiscreteUpdate),
    End(StepEnd),
}

/// The server's state, its buffers reused from call to call.
#[derive(Default)]
struct Server {
    /// Kept for the instance's life (the loaded binary).
    fmu: Option<Fmu>,
    served: Option<Served>,
    out: Writer,
    vrs: Vec<u32>,
    values: Vec<f64>,
    /// A serialized state being sent.
    bytes: Vec<u8>,
    /// The FMU's log messages when the last reply was sent.
    logged: usize,
    /// The error of a deferred request, for the next reply; the requests
    /// until then are not made.
    deferred: Option<FmuError>,
}

/// An error of a request this server cannot make sense of.
fn invalid(message: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message.to_string())
}

impl Server {
    /// Answers requests until the parent frees the instance or goes away.
    fn run(&mut self, socket: &mut UnixStream) -> io::Result<()> {
        let mut inbox = Inbox::default();
        loop {
            let Some(mut frame) = inbox.receive(socket)? else {
                return Ok(());
            };
            let byte = frame.u8()?;
            let op = Op::of(byte).ok_or_else(|| invalid("an unknown request"))?;
            if op == Op::Free {
                self.served = None;
                return Ok(());
            }
            let deferred = byte & DEFERRED != 0;
            if let Some(error) = self.deferred.take() {
                // A call before failed: this one is not made, and the next
                // that replies gives that error.
                if deferred {
                    self.deferred = Some(error);
                } else {
                    self.reply(Err(error));
                    self.out.send(socket)?;
                }
                continue;
            }
            IN_CALL.store(true, Ordering::Relaxed);
            let result = self.handle(op, &mut frame);
            IN_CALL.store(false, Ordering::Relaxed);
            let result = result?;
            if deferred {
                self.deferred = result.err();
                continue;
            }
            self.reply(result);
            self.out.send(socket)?;
        }
    }

    /// Writes the reply to a call: status, warnings, the messages logged
    /// since the last reply, the results or the error.
    fn reply(&mut self, result: Result<Results, FmuError>) {
        let (warnings, messages) = match self.served.as_mut() {
            Some(served) => {
                let core = served.instance().core();
                let messages = core.log.since(self.logged);
                self.logged = core.log.count();
                (core.warnings, messages)
            }
            None => (0, Vec::new()),
        };
        let w = self.out.begin(if result.is_ok() { OK } else { FAILED });
        w.u64(warnings).u32(messages.len() as u32);
        for message in &messages {
            w.bytes(message.as_bytes());
        }
        match result {
            Ok(Results::Nothing) => {}
            Ok(Results::Values) => {
                w.f64s(&self.values);
            }
            Ok(Results::Handle(handle)) => {
                w.u64(handle);
            }
            Ok(Results::Size(size)) => {
                w.u64(size);
            }
            Ok(Results::Bytes) => {
                w.bytes(&self.bytes);
            }
            Ok(Results::Step(step)) => {
                w.u8(step.terminate as u8).u8(step.discarded as u8).f64(step.last_time);
            }
            Ok(Results::Update(update)) => {
                w.u8(update.again as u8)
                    .u8(update.terminate as u8)
                    .u8(update.states_changed as u8)
                    .opt_f64(update.next_event);
            }
            Ok(Results::End(end)) => {
                w.u8(end.enter_event_mode as u8).u8(end.terminate as u8);
            }
            Err(error) => write_error(w, &error),
        }
    }

    /// Makes the call `op` asks for with the arguments in `frame`. The
    /// outer error is a request that does not read; the inner one the
    /// call's.
    fn handle(&mut self, op: Op, frame: &mut Frame<'_>) -> io::Result<Result<Results, FmuError>> {
        if op == Op::Hello {
            let kind = frame.u8()?;
            let file = Path::new(std::ffi::OsStr::from_bytes(frame.bytes()?)).to_path_buf();
            let dir = Path::new(std::ffi::OsStr::from_bytes(frame.bytes()?)).to_path_buf();
            return Ok(self.hello(kind, &file, &dir).map(|()| Results::Nothing));
        }
        let Some(served) = self.served.as_mut() else {
            return Err(invalid("a call before the FMU was instantiated"));
        };
        let values = &mut self.values;
        let vrs = &mut self.vrs;
        let bytes = &mut self.bytes;
        Ok(match op {
            Op::Hello | Op::Free => unreachable!("handled above"),
            Op::EnterInitialization => {
                let (start, stop, tolerance) = (frame.f64()?, frame.opt_f64()?, frame.opt_f64()?);
                served
                    .instance()
                    .enter_initialization(start, stop, tolerance)
                    .map(|()| Results::Nothing)
            }
            Op::ExitInitialization => served.instance().exit_initialization().map(|()| Results::Nothing),
            Op::GetReal => {
                frame.u32s_to(vrs)?;
                values.clear();
                values.resize(vrs.len(), 0.0);
                served.instance().get_real(vrs, values).map(|()| Results::Values)
            }
            Op::SetReal => {
                frame.u32s_to(vrs)?;
                frame.f64s_to(values)?;
                served.instance().set_real(vrs, values).map(|()| Results::Nothing)
            }
            Op::SetInteger => {
                let (vr, value) = (frame.u32()?, frame.i32()?);
                served.instance().set_integer(vr, value).map(|()| Results::Nothing)
            }
            Op::SetBoolean => {
                let (vr, value) = (frame.u32()?, frame.u8()? != 0);
                served.instance().set_boolean(vr, value).map(|()| Results::Nothing)
            }
            Op::GetNumbers => {
                let ty = numeric_of(frame.u8()?)?;
                frame.u32s_to(vrs)?;
                let n = count(frame)?;
                values.clear();
                values.resize(n, 0.0);
                served.instance().get_numbers(ty, vrs, values).map(|()| Results::Values)
            }
            Op::SetNumbers => {
                let ty = numeric_of(frame.u8()?)?;
                frame.u32s_to(vrs)?;
                frame.f64s_to(values)?;
                served
                    .instance()
                    .set_numbers(ty, vrs, values)
                    .map(|()| Results::Nothing)
            }
            Op::GetText => {
                let ty = if frame.u8()? == 0 { Text::String } else { Text::Binary };
                let vr = frame.u32()?;
                served.instance().get_text(ty, vr).map(|text| {
                    *bytes = text;
                    Results::Bytes
                })
            }
            Op::SetText => {
                let ty = if frame.u8()? == 0 { Text::String } else { Text::Binary };
                let vr = frame.u32()?;
                let bytes = frame.bytes()?.to_vec();
                served.instance().set_text(ty, vr, &bytes).map(|()| Results::Nothing)
            }
            Op::GetState
            | Op::SetState
            | Op::FreeState
            | Op::SerializedSize
            | Op::SerializeState
            | Op::DeserializeState => return state_call(op, served.instance(), frame, bytes),
            Op::SetTime
            | Op::SetContinuousStates
            | Op::GetContinuousStates
            | Op::GetDerivatives
            | Op::GetEventIndicators
            | Op::EnterEventMode
            | Op::UpdateDiscreteStates
            | Op::EnterContinuousTimeMode
            | Op::CompletedIntegratorStep => return model_call(op, served.model()?, frame, values),
            Op::DoStep => {
                let (t, h) = (frame.f64()?, frame.f64()?);
                match served {
                    Served::Slave(slave) => slave.do_step(t, h).map(Results::Step),
                    Served::Model(_) => return Err(invalid("a Co-Simulation call to a Model Exchange instance")),
                }
            }
        })
    }

    /// Loads the FMU `file` unpacked in `dir` and instantiates the
    /// interface of code `kind` (0 Model Exchange, 1 Co-Simulation).
    fn hello(&mut self, kind: u8, file: &Path, dir: &Path) -> Result<(), FmuError> {
        let fmu = Fmu::open_unpacked(file, dir)?;
        let kind = if kind == 0 {
            InterfaceKind::ModelExchange
        } else {
            InterfaceKind::CoSimulation
        };
        self.served = Some(match kind {
            InterfaceKind::ModelExchange => Served::Model(instantiate::model_exchange(&fmu.loaded)?),
            InterfaceKind::CoSimulation => Served::Slave(instantiate::co_simulation(&fmu.loaded)?),
        });
        self.fmu = Some(fmu);
        Ok(())
    }
}

/// The signals a crash in the FMU's code ends the process with.
const CRASHES: [c_int; 5] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE, libc::SIGABRT];

/// Whether a request is being handled: an `exit` then comes from the FMU's
/// code.
static IN_CALL: AtomicBool = AtomicBool::new(false);

/// Installs [`on_crash`] for [`CRASHES`], once each: the handler reports,
/// then the signal's default action ends the process as it would have;
/// and [`on_exit`], which reports an `exit` called by the FMU's code.
fn install_crash_handlers() {
    // SAFETY: registering a function that takes and returns nothing.
    unsafe {
        libc::atexit(on_exit);
    }
    for signal in CRASHES {
        // SAFETY: a zeroed sigaction is a valid one to fill in; the
        // handler is async-signal-safe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_crash as *const () as usize;
            action.sa_flags = libc::SA_RESETHAND | libc::SA_ONSTACK | libc::SA_NODEFER;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Reports an `exit` during a request as a [`CRASH`] of signal 0.
extern "C" fn on_exit() {
    if IN_CALL.load(Ordering::Relaxed) {
        on_crash(0);
    }
}

/// Writes a [`CRASH`] frame (the signal, 0 for an `exit`, and the FMI
/// function running) to the parent, then returns: the default action, back
/// in place, ends the process (a fault repeats, `abort` raises again).
/// Only async-signal-safe work: a frame on the stack, one `write`.
extern "C" fn on_crash(signal: c_int) {
    const ROOM: usize = 96;
    let name = super::called();
    let mut length = 0;
    if !name.is_null() {
        // SAFETY: `name` is a NUL-terminated string in static memory.
        while length < ROOM && unsafe { *name.add(length) } != 0 {
            length += 1;
        }
    }
    let mut frame = [0u8; 4 + 1 + 4 + 4 + ROOM];
    let body = (1 + 4 + 4 + length) as u32;
    frame[..4].copy_from_slice(&body.to_le_bytes());
    frame[4] = CRASH;
    frame[5..9].copy_from_slice(&signal.to_le_bytes());
    frame[9..13].copy_from_slice(&(length as u32).to_le_bytes());
    for i in 0..length {
        // SAFETY: within the string, as measured above.
        frame[13 + i] = unsafe { *name.add(i) };
    }
    // SAFETY: writing a buffer of the stated length to descriptor 0.
    unsafe {
        libc::write(0, frame.as_ptr().cast(), 13 + length);
    }
}

/// How many values a request asks for, bounded by what a frame can carry.
fn count(frame: &mut Frame<'_>) -> io::Result<usize> {
    let n = frame.u32()? as usize;
    if n > MAX_FRAME / 8 {
        return Err(invalid("too many values asked for"));
    }
    Ok(n)
}

/// The FMU state calls (get, set, free, serialize): a state travels as
/// the FMU's own pointer, a serialized one in `bytes`.
fn state_call(
    op: Op,
    instance: &mut dyn Instance,
    frame: &mut Frame<'_>,
    bytes: &mut Vec<u8>,
) -> io::Result<Result<Results, FmuError>> {
    Ok(match op {
        Op::GetState => {
            let state = frame.u64()? as *mut std::ffi::c_void;
            instance.get_state(state).map(|s| Results::Handle(s as u64))
        }
        Op::SetState => {
            let state = frame.u64()? as *mut std::ffi::c_void;
            instance.set_state(state).map(|()| Results::Nothing)
        }
        Op::FreeState => {
            let state = frame.u64()? as *mut std::ffi::c_void;
            instance.free_state(state).map(|()| Results::Nothing)
        }
        Op::SerializedSize => {
            let state = frame.u64()? as *mut std::ffi::c_void;
            instance.serialized_size(state).map(|size| Results::Size(size as u64))
        }
        Op::SerializeState => {
            let state = frame.u64()? as *mut std::ffi::c_void;
            let size = frame.u32()? as usize;
            if size > MAX_FRAME {
                return Err(invalid("a state larger than a frame asked for"));
            }
            bytes.clear();
            bytes.resize(size, 0);
            instance.serialize_state(state, bytes).map(|()| Results::Bytes)
        }
        Op::DeserializeState => {
            let serialized = frame.bytes()?;
            instance
                .deserialize_state(serialized)
                .map(|state| Results::Handle(state as u64))
        }
        _ => unreachable!("only state calls come here"),
    })
}

/// The Model Exchange calls: time, states, derivatives, event indicators
/// and the event mode's transitions; values travel in `values`.
fn model_call(
    op: Op,
    model: &mut dyn ModelExchange,
    frame: &mut Frame<'_>,
    values: &mut Vec<f64>,
) -> io::Result<Result<Results, FmuError>> {
    Ok(match op {
        Op::SetTime => {
            let t = frame.f64()?;
            model.set_time(t).map(|()| Results::Nothing)
        }
        Op::SetContinuousStates => {
            frame.f64s_to(values)?;
            model.set_continuous_states(values).map(|()| Results::Nothing)
        }
        Op::GetContinuousStates | Op::GetDerivatives | Op::GetEventIndicators => {
            let n = count(frame)?;
            values.clear();
            values.resize(n, 0.0);
            match op {
                Op::GetContinuousStates => model.get_continuous_states(values),
                Op::GetDerivatives => model.get_derivatives(values),
                _ => model.get_event_indicators(values),
            }
            .map(|()| Results::Values)
        }
        Op::EnterEventMode => model.enter_event_mode().map(|()| Results::Nothing),
        Op::UpdateDiscreteStates => model.update_discrete_states().map(Results::Update),
        Op::EnterContinuousTimeMode => model.enter_continuous_time_mode().map(|()| Results::Nothing),
        Op::CompletedIntegratorStep => model.completed_integrator_step().map(Results::End),
        _ => unreachable!("only Model Exchange calls come here"),
    })
}
