//! The parent's side: an instance whose FMI calls are requests to a child
//! process ([`Remote`]), and the report of that child's death.

use std::ffi::c_void;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::wire::{numeric_code, read_error, Frame, Inbox, Op, Writer, CRASH, DEFERRED, FAILED, OK};
use super::Host;
use crate::description::{InterfaceKind, Numeric};
use crate::error::FmuError;
use crate::fmu::Loaded;
use crate::instance::{CoSimulation, Core, DiscreteUpdate, Instance, ModelExchange, StepEnd, StepOutcome, Text};

/// How long a child may take to terminate and free its instance before it
/// is killed.
const FREE_TIMEOUT: Duration = Duration::from_secs(2);

/// The most bytes of deferred requests held before they are sent without
/// waiting for a call that replies.
const DEFERRED_BYTES: usize = 64 << 10;

/// An instance running in a child process.
pub(crate) struct Remote {
    core: Core,
    child: Child,
    socket: UnixStream,
    out: Writer,
    inbox: Inbox,
    /// Set once the child died: every later call gets this error again.
    died: Option<(String, String)>,
}

impl Remote {
    /// Starts a child with `host`, which loads the FMU and instantiates its
    /// `kind` interface.
    pub(crate) fn start(loaded: &Arc<Loaded>, host: &Host, kind: InterfaceKind) -> Result<Remote, FmuError> {
        let once = loaded.interface(kind)?.once_per_process;
        let core = Core::new(loaded, once)?;
        let fmu = core.fmu().to_string();
        let cannot = |message: String| FmuError::Host {
            fmu: fmu.clone(),
            message,
            program: host.program.display().to_string(),
        };
        let (socket, theirs) = UnixStream::pair().map_err(|e| cannot(format!("no socket pair: {e}")))?;
        // What the FMU prints goes where this process's messages go (its
        // standard output may be a CSV file).
        let stdout = io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| cannot(format!("cannot share standard error: {e}")))?;
        let child = Command::new(&host.program)
            .args(&host.args)
            .stdin(Stdio::from(OwnedFd::from(theirs)))
            .stdout(Stdio::from(stdout))
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| cannot(format!("cannot start {}: {e}", host.program.display())))?;
        let mut remote = Remote {
            core,
            child,
            socket,
            out: Writer::default(),
            inbox: Inbox::default(),
            died: None,
        };
        let code = match kind {
            InterfaceKind::ModelExchange => 0,
            InterfaceKind::CoSimulation => 1,
        };
        remote
            .out
            .begin(Op::Hello as u8)
            .u8(code)
            .bytes(loaded.file.as_os_str().as_bytes())
            .bytes(loaded.directory().as_os_str().as_bytes());
        remote.call(Op::Hello, |_| Ok(()))?;
        Ok(remote)
    }

    /// Sends the request written in `self.out` and reads its reply,
    /// handing the results to `read`.
    fn call<T>(&mut self, op: Op, read: impl FnOnce(&mut Frame<'_>) -> io::Result<T>) -> Result<T, FmuError> {
        if let Some((call, how)) = &self.died {
            return Err(self.death(call.clone(), how.clone()));
        }
        let fmu = self.core.fmu().to_string();
        let sent = self.out.send(&mut self.socket);
        let mut crash = None;
        let outcome = sent.and_then(|()| loop {
            let Some(mut frame) = self.inbox.receive(&mut self.socket)? else {
                break Ok(None);
            };
            match frame.u8()? {
                CRASH => {
                    let signal = frame.i32()?;
                    crash = Some((signal, frame.text()?));
                }
                kind @ (OK | FAILED) => {
                    self.core.warnings = frame.u64()?;
                    let logged = frame.u32()?;
                    for _ in 0..logged {
                        self.core.log.push("", &frame.text()?);
                    }
                    break if kind == OK {
                        read(&mut frame).map(|value| Some(Ok(value)))
                    } else {
                        read_error(&mut frame, &fmu).map(|error| Some(Err(error)))
                    };
                }
                other => {
                    break Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!("reply kind {other}"),
                    ))
                }
            }
        });
        match outcome {
            Ok(Some(result)) => result,
            // The stream ended, broke, or carried nonsense: the child is
            // gone or going; what it died of tells.
            Ok(None) | Err(_) => {
                let status = self.reap(Duration::ZERO);
                let call = match &crash {
                    Some((_, name)) => name.clone(),
                    None => op.doing().to_string(),
                };
                let how = ended(status, crash.map(|(signal, _)| signal), outcome.err());
                self.died = Some((call.clone(), how.clone()));
                Err(self.death(call, how))
            }
        }
    }

    /// The error of the child's death.
    fn death(&self, call: String, how: String) -> FmuError {
        FmuError::Died {
            fmu: self.core.fmu().to_string(),
            call,
            how,
        }
    }

    /// Waits for the child to exit, killing it after `patience`.
    fn reap(&mut self, patience: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + patience;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
                Ok(None) => {
                    let _ = self.child.kill();
                    return self.child.wait().ok();
                }
                Err(_) => return None,
            }
        }
    }

    /// A request without results.
    fn command(&mut self, op: Op, args: impl FnOnce(&mut Writer)) -> Result<(), FmuError> {
        args(self.out.begin(op as u8));
        self.call(op, |_| Ok(()))
    }

    /// A setter: written now, sent with the next request that replies,
    /// which also carries its error (see [`super::wire`]).
    fn defer(&mut self, op: Op, args: impl FnOnce(&mut Writer)) -> Result<(), FmuError> {
        if let Some((call, how)) = &self.died {
            return Err(self.death(call.clone(), how.clone()));
        }
        args(self.out.begin(op as u8 | DEFERRED));
        if self.out.pending() > DEFERRED_BYTES {
            // A dead child shows at the next call.
            let _ = self.out.send(&mut self.socket);
        }
        Ok(())
    }
}

/// How the child ended, in words: its signal or exit status (`crashed` is
/// the signal its handler reported, 0 for an `exit`), or what went wrong
/// with its socket when it is still running.
fn ended(status: Option<ExitStatus>, crashed: Option<i32>, broken: Option<io::Error>) -> String {
    let signal = status
        .and_then(|s| s.signal())
        .or(crashed.filter(|&signal| signal != 0));
    match (signal, status.and_then(|s| s.code()), broken) {
        (Some(signal), _, _) => format!("killed by signal {signal} ({})", signal_name(signal)),
        (None, Some(code), _) => format!("it exited with status {code}"),
        (None, None, Some(e)) => format!("its replies broke off ({e}); it was killed"),
        (None, None, None) => "it ended without a word".to_string(),
    }
}

/// The name and description of signal `signal`: `SIGSEGV, segmentation
/// fault`.
fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGTERM => "SIGTERM",
        _ => "",
    };
    // SAFETY: strsignal returns a string that stays valid until its next
    // call; it is copied at once.
    let text = unsafe { std::ffi::CStr::from_ptr(libc::strsignal(signal)) }
        .to_string_lossy()
        .to_lowercase();
    if name.is_empty() {
        text
    } else {
        format!("{name}, {text}")
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        if self.died.is_none() {
            // After the deferred setters, if any.
            self.out.begin(Op::Free as u8);
            let _ = self.out.send(&mut self.socket);
        }
        let _ = self.socket.shutdown(std::net::Shutdown::Both);
        self.reap(FREE_TIMEOUT);
    }
}

impl Instance for Remote {
    fn core(&self) -> &Core {
        &self.core
    }

    fn enter_initialization(&mut self, start: f64, stop: Option<f64>, tolerance: Option<f64>) -> Result<(), FmuError> {
        self.command(Op::EnterInitialization, |w| {
            w.f64(start).opt_f64(stop).opt_f64(tolerance);
        })
    }

    fn exit_initialization(&mut self) -> Result<(), FmuError> {
        self.command(Op::ExitInitialization, |_| {})?;
        self.core.initialized = true;
        Ok(())
    }

    fn get_real(&mut self, vrs: &[u32], values: &mut [f64]) -> Result<(), FmuError> {
        let n = vrs.len().min(values.len());
        self.out.begin(Op::GetReal as u8).u32s(&vrs[..n]);
        self.call(Op::GetReal, |r| r.f64s_into(&mut values[..n]))
    }

    fn set_real(&mut self, vrs: &[u32], values: &[f64]) -> Result<(), FmuError> {
        let n = vrs.len().min(values.len());
        self.defer(Op::SetReal, |w| {
            w.u32s(&vrs[..n]).f64s(&values[..n]);
        })
    }

    fn set_integer(&mut self, vr: u32, value: i32) -> Result<(), FmuError> {
        self.defer(Op::SetInteger, |w| {
            w.u32(vr).i32(value);
        })
    }

    fn set_boolean(&mut self, vr: u32, value: bool) -> Result<(), FmuError> {
        self.defer(Op::SetBoolean, |w| {
            w.u32(vr).u8(value as u8);
        })
    }

    fn get_numbers(&mut self, ty: Numeric, vrs: &[u32], values: &mut [f64]) -> Result<(), FmuError> {
        self.out
            .begin(Op::GetNumbers as u8)
            .u8(numeric_code(ty))
            .u32s(vrs)
            .u32(values.len() as u32);
        self.call(Op::GetNumbers, |r| r.f64s_into(values))
    }

    fn set_numbers(&mut self, ty: Numeric, vrs: &[u32], values: &[f64]) -> Result<(), FmuError> {
        self.defer(Op::SetNumbers, |w| {
            w.u8(numeric_code(ty)).u32s(vrs).f64s(values);
        })
    }

    fn get_text(&mut self, ty: Text, vr: u32) -> Result<Vec<u8>, FmuError> {
        self.out.begin(Op::GetText as u8).u8((ty == Text::Binary) as u8).u32(vr);
        self.call(Op::GetText, |r| r.bytes().map(<[u8]>::to_vec))
    }

    fn set_text(&mut self, ty: Text, vr: u32, value: &[u8]) -> Result<(), FmuError> {
        self.defer(Op::SetText, |w| {
            w.u8((ty == Text::Binary) as u8).u32(vr).bytes(value);
        })
    }

    fn get_state(&mut self, state: *mut c_void) -> Result<*mut c_void, FmuError> {
        // A state is the child's pointer, a handle here.
        self.out.begin(Op::GetState as u8).u64(state as u64);
        self.call(Op::GetState, |r| r.u64().map(|handle| handle as *mut c_void))
    }

    fn set_state(&mut self, state: *mut c_void) -> Result<(), FmuError> {
        self.command(Op::SetState, |w| {
            w.u64(state as u64);
        })
    }

    fn free_state(&mut self, state: *mut c_void) -> Result<(), FmuError> {
        self.command(Op::FreeState, |w| {
            w.u64(state as u64);
        })
    }

    fn serialized_size(&mut self, state: *mut c_void) -> Result<usize, FmuError> {
        self.out.begin(Op::SerializedSize as u8).u64(state as u64);
        self.call(Op::SerializedSize, |r| r.u64().map(|size| size as usize))
    }

    fn serialize_state(&mut self, state: *mut c_void, bytes: &mut [u8]) -> Result<(), FmuError> {
        self.out
            .begin(Op::SerializeState as u8)
            .u64(state as u64)
            .u32(bytes.len() as u32);
        self.call(Op::SerializeState, |r| {
            let serialized = r.bytes()?;
            if serialized.len() != bytes.len() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} bytes of state, {} expected", serialized.len(), bytes.len()),
                ));
            }
            bytes.copy_from_slice(serialized);
            Ok(())
        })
    }

    fn deserialize_state(&mut self, bytes: &[u8]) -> Result<*mut c_void, FmuError> {
        // The new state is the child's pointer, a handle here.
        self.out.begin(Op::DeserializeState as u8).bytes(bytes);
        self.call(Op::DeserializeState, |r| r.u64().map(|handle| handle as *mut c_void))
    }
}

impl ModelExchange for Remote {
    fn set_time(&mut self, t: f64) -> Result<(), FmuError> {
        self.defer(Op::SetTime, |w| {
            w.f64(t);
        })
    }

    fn set_continuous_states(&mut self, x: &[f64]) -> Result<(), FmuError> {
        self.defer(Op::SetContinuousStates, |w| {
            w.f64s(x);
        })
    }

    fn get_continuous_states(&mut self, x: &mut [f64]) -> Result<(), FmuError> {
        self.out.begin(Op::GetContinuousStates as u8).u32(x.len() as u32);
        self.call(Op::GetContinuousStates, |r| r.f64s_into(x))
    }

    fn get_derivatives(&mut self, dx: &mut [f64]) -> Result<(), FmuError> {
        self.out.begin(Op::GetDerivatives as u8).u32(dx.len() as u32);
        self.call(Op::GetDerivatives, |r| r.f64s_into(dx))
    }

    fn get_event_indicators(&mut self, z: &mut [f64]) -> Result<(), FmuError> {
        self.out.begin(Op::GetEventIndicators as u8).u32(z.len() as u32);
        self.call(Op::GetEventIndicators, |r| r.f64s_into(z))
    }

    fn enter_event_mode(&mut self) -> Result<(), FmuError> {
        self.command(Op::EnterEventMode, |_| {})
    }

    fn update_discrete_states(&mut self) -> Result<DiscreteUpdate, FmuError> {
        self.out.begin(Op::UpdateDiscreteStates as u8);
        self.call(Op::UpdateDiscreteStates, |r| {
            Ok(DiscreteUpdate {
                again: r.u8()? != 0,
                terminate: r.u8()? != 0,
                states_changed: r.u8()? != 0,
                next_event: r.opt_f64()?,
            })
        })
    }

    fn enter_continuous_time_mode(&mut self) -> Result<(), FmuError> {
        self.command(Op::EnterContinuousTimeMode, |_| {})
    }

    fn completed_integrator_step(&mut self) -> Result<StepEnd, FmuError> {
        self.out.begin(Op::CompletedIntegratorStep as u8);
        self.call(Op::CompletedIntegratorStep, |r| {
            Ok(StepEnd {
                enter_event_mode: r.u8()? != 0,
                terminate: r.u8()? != 0,
            })
        })
    }
}

impl CoSimulation for Remote {
    fn do_step(&mut self, t: f64, h: f64) -> Result<StepOutcome, FmuError> {
        self.out.begin(Op::DoStep as u8).f64(t).f64(h);
        self.call(Op::DoStep, |r| {
            Ok(StepOutcome {
                terminate: r.u8()? != 0,
                discarded: r.u8()? != 0,
                last_time: r.f64()?,
            })
        })
    }
}
