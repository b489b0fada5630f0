//! Stepping the due sub-models of a Jacobi macro step side by side: worker
//! threads started once per run, each stepping a fixed share of the
//! sub-models between two barriers, the caller's thread taking the first
//! share. Each sub-model is stepped from its own seat alone, so the
//! results are the same bits as stepping them one after the other.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering as Memory};
use std::sync::{Barrier, Mutex, MutexGuard, PoisonError};
use std::thread;

use tandem_models::Variable;

use crate::course::Course;
use crate::recording::Recording;
use crate::submodel::{SubModel, SubModelError};

/// A sub-model and what its next step needs, shared between the master
/// and the thread that steps it.
pub(crate) struct Seat {
    pub(crate) model: Box<dyn SubModel>,
    /// The courses of its inputs over the step.
    pub(crate) inputs: Vec<Course>,
    /// What its step records its coupling outputs into, when the macro
    /// steps are iterated and it has a grid of its own.
    pub(crate) record: Option<Recording>,
    /// Its inputs at a communication point.
    pub(crate) u: Vec<f64>,
    /// The step: from `t`, of `h` (s), taken when `due`.
    pub(crate) t: f64,
    pub(crate) h: f64,
    pub(crate) due: bool,
    /// Why the last step failed.
    pub(crate) failed: Option<SubModelError>,
}

impl Seat {
    /// A seat for `model`, each input constant at its default.
    pub(crate) fn new(model: Box<dyn SubModel>) -> Seat {
        let defaults: Vec<f64> = model.inputs().iter().map(|v: &Variable| v.default).collect();
        Seat {
            inputs: defaults.iter().map(|&d| Course::constant(d)).collect(),
            record: None,
            u: defaults,
            model,
            t: 0.0,
            h: 0.0,
            due: false,
            failed: None,
        }
    }

    /// Takes the step when due, keeping its error (a panic of the
    /// sub-model included) for the master.
    pub(crate) fn take_step(&mut self) {
        if !self.due {
            return;
        }
        let (model, inputs, record) = (&mut self.model, &self.inputs, &mut self.record);
        let (t, h) = (self.t, self.h);
        let result =
            catch_unwind(AssertUnwindSafe(|| model.step(t, h, inputs, record.as_mut()))).unwrap_or_else(|panic| {
                let message = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(SubModelError::Panicked(message))
            });
        self.failed = result.err();
    }
}

/// Locks a seat; a seat whose holder panicked is still usable (panics of
/// sub-models are caught in [`Seat::take_step`]).
pub(crate) fn lock(seat: &Mutex<Seat>) -> MutexGuard<'_, Seat> {
    seat.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The barriers the caller and the workers meet at.
pub(crate) struct Gate {
    start: Barrier,
    done: Barrier,
    quit: AtomicBool,
}

/// Who steps the due seats.
pub(crate) enum Team<'a> {
    /// The caller's thread, one seat after the other.
    Alone(&'a [Mutex<Seat>]),
    /// The caller and `threads - 1` workers.
    Workers {
        seats: &'a [Mutex<Seat>],
        gate: &'a Gate,
        threads: usize,
    },
}

impl Team<'_> {
    /// Steps every due seat, leaving each error in its seat. Does not
    /// allocate.
    pub(crate) fn step(&self) {
        match *self {
            Team::Alone(seats) => share(seats, 0, 1),
            Team::Workers { seats, gate, threads } => {
                gate.start.wait();
                share(seats, 0, threads);
                gate.done.wait();
            }
        }
    }
}

/// Steps seats `w`, `w + threads`, ...
fn share(seats: &[Mutex<Seat>], w: usize, threads: usize) {
    for seat in seats.iter().skip(w).step_by(threads) {
        lock(seat).take_step();
    }
}

/// Runs `body` with a team of `threads` (workers started here and stopped
/// when `body` returns, or unwinds).
pub(crate) fn with_team<R>(seats: &[Mutex<Seat>], threads: usize, body: impl FnOnce(&Team<'_>) -> R) -> R {
    if threads <= 1 {
        return body(&Team::Alone(seats));
    }
    let gate = Gate {
        start: Barrier::new(threads),
        done: Barrier::new(threads),
        quit: AtomicBool::new(false),
    };
    thread::scope(|scope| {
        for w in 1..threads {
            let gate = &gate;
            scope.spawn(move || loop {
                gate.start.wait();
                if gate.quit.load(Memory::Acquire) {
                    break;
                }
                share(seats, w, threads);
                gate.done.wait();
            });
        }
        let _stop = Stop(&gate);
        body(&Team::Workers {
            seats,
            gate: &gate,
            threads,
        })
    })
}

/// Sends the workers home when the run ends, however it ends.
struct Stop<'a>(&'a Gate);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        self.0.quit.store(true, Memory::Release);
        self.0.start.wait();
    }
}
