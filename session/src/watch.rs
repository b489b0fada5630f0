//! A session run on a thread of its own and watched from others (scripts,
//! test harnesses, language bindings): the newest recorded values and the
//! recording so far, the counters, the controls; on the virtual clock, a
//! gate through which the sessions of one process advance in lock-step.
//!
//! Nothing here touches the real-time threads: the recorded rows reach
//! the watcher through the session's lock-free recording ring, inputs and
//! parameters go through [`Controls`], and the counters are atomics.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::{json, Value};
use tandem_runtime::tandem::metrics::Metrics;

use crate::report::devices::DeviceView;
use crate::report::live::counters_json;
use crate::{ClockMode, Controls, Observer, Report, Session, SessionError};

/// How often a run on the real clock hands its recorded rows to the
/// watcher: the staleness of [`Watched::latest`].
pub const REAL_CLOCK_POLL: Duration = Duration::from_millis(5);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the watcher has seen of the recording.
#[derive(Default)]
struct Seen {
    /// Every recorded row so far: time, then the recorded outputs.
    rows: Vec<f64>,
    /// Whether the frames have stopped.
    ended: bool,
}

/// Where a session on the virtual clock is held between frames.
struct Gate {
    state: Mutex<GateState>,
    turn: Condvar,
    /// The session's frame (s).
    frame: f64,
    /// The process clock's time when the session started.
    start: f64,
    /// Its number of frames: after the last it is not held.
    frames: u64,
}

#[derive(Default)]
struct GateState {
    /// Frames completed (with their sends).
    done: u64,
    /// Boundaries received at (the frames after them may start).
    received: u64,
    /// Frames the session may complete.
    granted: u64,
    /// Boundaries the session may receive at.
    receive: u64,
    /// The frames have stopped.
    ended: bool,
    /// Stop holding: the session is being stopped.
    released: bool,
}

impl Gate {
    /// On the run's thread after each frame and its sends: waits until
    /// every session is past its sends.
    fn sent(&self) {
        let mut s = lock(&self.state);
        s.done += 1;
        self.turn.notify_all();
        while s.receive < s.done && s.done < self.frames && !s.released {
            s = self.turn.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// On the run's thread once its buses have received: waits until the
    /// next frame is granted.
    fn received(&self) {
        let mut s = lock(&self.state);
        s.received = s.done;
        self.turn.notify_all();
        while s.granted <= s.done && s.done < self.frames && !s.released {
            s = self.turn.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn end(&self) {
        lock(&self.state).ended = true;
        self.turn.notify_all();
    }

    fn release(&self) {
        lock(&self.state).released = true;
        self.turn.notify_all();
    }

    /// Grants the frames that end by process time `to`.
    fn grant(&self, to: f64) {
        let target = (((to - self.start) / self.frame) + 1e-9).floor().max(1.0) as u64;
        let mut s = lock(&self.state);
        if target > s.granted {
            s.granted = target;
            self.turn.notify_all();
        }
    }

    /// Waits until `done` holds, the run has ended, or it is being
    /// stopped.
    fn wait_for(&self, done: impl Fn(&GateState) -> bool) {
        let mut s = lock(&self.state);
        while !(s.ended || s.released || done(&s)) {
            s = self.turn.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Waits until the frames granted are done with their sends.
    fn wait_sent(&self) {
        self.wait_for(|s| s.done >= s.granted && s.done < self.frames);
    }

    /// Lets the session receive at the boundary after its last frame done,
    /// and waits until it has.
    fn receive_and_wait(&self) {
        {
            let mut s = lock(&self.state);
            s.receive = s.done;
            self.turn.notify_all();
        }
        self.wait_for(|s| s.received >= s.done);
    }

    fn done(&self) -> u64 {
        lock(&self.state).done
    }
}

/// The virtual clock of this process: every session on the virtual clock
/// started through [`Watched::start`] advances with it.
struct ProcessClock {
    now: f64,
    gates: Vec<Weak<Gate>>,
}

static CLOCK: Mutex<ProcessClock> = Mutex::new(ProcessClock {
    now: 0.0,
    gates: Vec::new(),
});

/// The process's virtual clock now (s).
pub fn virtual_clock_now() -> f64 {
    lock(&CLOCK).now
}

/// Advances the process's virtual clock to `to` (s, never back), in steps
/// of the shortest frame of the sessions on it. Each step has two phases:
/// every session completes the frames that end by then, with their sends;
/// then every session receives at its next boundary. So sessions sharing
/// in-process buses exchange frames at the same boundaries every time.
pub fn advance_virtual_clock(to: f64) {
    let mut clock = lock(&CLOCK);
    if to <= clock.now {
        return;
    }
    clock.gates.retain(|g| g.strong_count() > 0);
    let gates: Vec<Arc<Gate>> = clock.gates.iter().filter_map(Weak::upgrade).collect();
    let step = gates.iter().map(|g| g.frame).fold(f64::INFINITY, f64::min);
    let from = clock.now;
    let steps = if step.is_finite() {
        ((to - from) / step - 1e-9).ceil().max(1.0) as u64
    } else {
        1
    };
    for i in 1..=steps {
        let t = if i == steps { to } else { from + i as f64 * step };
        for gate in &gates {
            gate.grant(t);
        }
        for gate in &gates {
            gate.wait_sent();
        }
        for gate in &gates {
            gate.receive_and_wait();
        }
    }
    clock.now = to;
}

/// Watches the run: keeps its rows and, on the virtual clock, holds it at
/// its gate.
struct Watcher {
    shared: Arc<Mutex<Seen>>,
    gate: Option<Arc<Gate>>,
}

impl Observer for Watcher {
    fn record(&mut self, t: f64, y: &[f64]) {
        let mut seen = lock(&self.shared);
        seen.rows.push(t);
        seen.rows.extend_from_slice(y);
    }

    fn tick(&mut self, running: bool) {
        if running {
            if let Some(gate) = &self.gate {
                gate.sent();
            }
            return;
        }
        lock(&self.shared).ended = true;
        if let Some(gate) = &self.gate {
            gate.end();
        }
    }

    fn received(&mut self) {
        if let Some(gate) = &self.gate {
            gate.received();
        }
    }
}

/// A session running on a thread of its own, watched from others.
pub struct Watched {
    shared: Arc<Mutex<Seen>>,
    gate: Option<Arc<Gate>>,
    controls: Mutex<Controls>,
    metrics: Arc<Metrics>,
    devices: Vec<DeviceView>,
    recorded: Vec<String>,
    frame: f64,
    clock: ClockMode,
    runner: Option<JoinHandle<Result<Report, SessionError>>>,
}

impl Watched {
    /// The options of a watched session on `clock` writing into `results`:
    /// on the virtual clock the rows reach the watcher after every frame,
    /// on the real clock every [`REAL_CLOCK_POLL`].
    pub fn options(clock: ClockMode, results: impl Into<std::path::PathBuf>) -> crate::Options {
        crate::Options {
            live_interval: Some(REAL_CLOCK_POLL),
            virtual_drain: 1,
            ..crate::Options::new(clock, results)
        }
    }

    /// Starts `session` (made with [`Watched::options`]) on a thread of its
    /// own. On the virtual clock it joins the process's virtual clock at
    /// its current time and runs its first frame, then waits for
    /// [`advance_virtual_clock`]; on the real clock it runs freely.
    ///
    /// # Panics
    /// If the session's controls were taken.
    pub fn start(mut session: Session) -> Result<Watched, SessionError> {
        let clock = session.clock();
        if clock == ClockMode::Virtual && session.has_virtual_stalls() {
            return Err(SessionError::StallsOnSharedClock);
        }
        let frame = session.settings().frame;
        let controls = session.controls().expect("a new session has its controls");
        let gate = (clock == ClockMode::Virtual).then(|| {
            let mut process = lock(&CLOCK);
            let gate = Arc::new(Gate {
                state: Mutex::new(GateState {
                    granted: 1,
                    ..GateState::default()
                }),
                turn: Condvar::new(),
                frame,
                start: process.now,
                frames: session.settings().frames(),
            });
            process.gates.push(Arc::downgrade(&gate));
            gate
        });
        let shared = Arc::new(Mutex::new(Seen::default()));
        let mut watcher = Watcher {
            shared: Arc::clone(&shared),
            gate: gate.clone(),
        };
        let mut watched = Watched {
            shared,
            gate,
            controls: Mutex::new(controls),
            metrics: Arc::clone(session.metrics()),
            devices: session.devices(),
            recorded: session.recorded().map(<[String]>::to_vec).unwrap_or_default(),
            frame,
            clock,
            runner: None,
        };
        let runner = std::thread::Builder::new()
            .name("session watcher".into())
            .spawn(move || session.run(&mut watcher))
            .map_err(|cause| SessionError::Thread {
                what: "session watcher",
                cause,
            })?;
        watched.runner = Some(runner);
        if let Some(gate) = &watched.gate {
            // Its first frame, so that its first row is there to read.
            gate.wait_sent();
            gate.receive_and_wait();
        }
        Ok(watched)
    }

    /// The clock it runs on.
    pub fn clock(&self) -> ClockMode {
        self.clock
    }

    /// Its frame (s).
    pub fn frame(&self) -> f64 {
        self.frame
    }

    /// Run time (s): the frames completed times the frame.
    pub fn time(&self) -> f64 {
        let frames = match &self.gate {
            Some(gate) => gate.done(),
            None => self.metrics.frames.get(),
        };
        frames as f64 * self.frame
    }

    /// The process clock's time at which its next frame ends (virtual
    /// clock): advance to it to run one frame.
    pub fn next_frame_end(&self) -> Option<f64> {
        let gate = self.gate.as_ref()?;
        Some(gate.start + (gate.done() + 1) as f64 * self.frame)
    }

    /// Whether its frames have stopped.
    pub fn ended(&self) -> bool {
        lock(&self.shared).ended
    }

    /// The names of the recorded outputs.
    pub fn recorded(&self) -> &[String] {
        &self.recorded
    }

    /// The newest recorded row: its time and values (none before the
    /// first).
    pub fn latest(&self) -> Option<(f64, Vec<f64>)> {
        let seen = lock(&self.shared);
        let width = self.recorded.len() + 1;
        let row = seen.rows.len().checked_sub(width).map(|start| &seen.rows[start..])?;
        Some((row[0], row[1..].to_vec()))
    }

    /// Every recorded row so far (time, then the recorded outputs), from
    /// row `from` on.
    pub fn rows(&self, from: usize) -> Vec<f64> {
        let seen = lock(&self.shared);
        let width = self.recorded.len() + 1;
        seen.rows.get(from * width..).map(<[f64]>::to_vec).unwrap_or_default()
    }

    /// The controls: inputs, parameters, stop.
    pub fn controls(&self) -> MutexGuard<'_, Controls> {
        lock(&self.controls)
    }

    /// The counters since the start, with the run time `t`.
    pub fn counters(&self) -> Value {
        let mut counters = counters_json(&self.metrics, &self.devices);
        counters["t"] = json!(self.time());
        counters
    }

    /// Stops the run (if it still runs), waits for its thread and returns
    /// its report; `None` once taken.
    pub fn stop(&mut self) -> Option<Result<Report, SessionError>> {
        let runner = self.runner.take()?;
        self.controls().stop();
        if let Some(gate) = &self.gate {
            gate.release();
        }
        Some(runner.join().unwrap_or_else(|_| {
            Err(SessionError::Thread {
                what: "session watcher",
                cause: std::io::Error::other("the run's thread panicked"),
            })
        }))
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}
