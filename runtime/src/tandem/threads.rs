//! The tandem on two real threads: the fast side pinned to its core under
//! SCHED_FIFO, waking on absolute deadlines of the monotonic clock; the
//! implicit side pinned to another core at a lower priority; memory locked,
//! stacks pre-faulted and deep idle states held off before the first frame. The calling thread is a
//! normal one that watches the metrics (live statistics, draining the
//! recording) until the run ends.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::clock::{nanos, Clock, MonotonicClock, Nanos};
use super::control::RunControl;
use super::fast::{FastError, FastSide};
use super::implicit_side::{ImplicitSide, StepOutcome};
use super::placement::{lock_memory, place_current_thread, LowLatency, Refused, ThreadSetup};
use super::settings::TandemSettings;

/// Touches `bytes` of stack so that no page fault happens there later.
fn prefault_stack() {
    const BYTES: usize = 256 * 1024;
    let mut stack = [0u8; BYTES];
    for i in (0..BYTES).step_by(4096) {
        // SAFETY: i < BYTES, a plain write to a local array.
        unsafe { std::ptr::write_volatile(stack.as_mut_ptr().add(i), 1) };
    }
    black_box(&stack);
}

/// How long the threads have to return once the run is over (the last
/// frame's deadline passed, or a stop was asked); a thread that takes
/// longer is reported and left behind.
pub const STOP_GRACE: Duration = Duration::from_secs(1);

/// How a real-time run ended.
pub struct RealtimeOutcome {
    /// The fast side after its last frame (none when its thread did not
    /// return in time).
    pub fast: Option<FastSide>,
    /// The implicit side, when there was one and its thread returned.
    pub implicit: Option<ImplicitSide>,
    /// The threads that did not return within [`STOP_GRACE`] of the end.
    pub stuck: Vec<&'static str>,
    /// The first failure, if the run stopped early.
    pub failure: Option<FastError>,
    /// What the fast thread obtained.
    pub fast_setup: ThreadSetup,
    /// What the implicit thread obtained.
    pub implicit_setup: Option<ThreadSetup>,
    /// Whether memory was locked (or why not).
    pub memory_locked: Result<(), Refused>,
    /// Whether deep idle states were held off (or why not).
    pub low_latency: Result<(), Refused>,
    /// How much later than the agreed start the frames began (ns), when
    /// the threads were not ready in time for it.
    pub late_start: Option<Nanos>,
}

/// The result of `handle`'s thread if it returns within `grace`; else the
/// thread is left running (detached) and `None` is returned. A thread that
/// panicked gives `None` as well.
fn join_within<T>(handle: thread::JoinHandle<T>, grace: Duration) -> Option<T> {
    let give_up = std::time::Instant::now() + grace;
    while !handle.is_finished() {
        if std::time::Instant::now() >= give_up {
            return None;
        }
        thread::sleep(Duration::from_millis(1));
    }
    handle.join().ok()
}

/// State shared by the three threads.
struct Shared {
    ready: AtomicUsize,
    control: Arc<RunControl>,
    done: AtomicBool,
}

/// Runs the tandem on real threads for `settings.frames()` frames, or until
/// `control` asks it to stop. It sets `control`'s origin when the frames
/// start: at `start_at` (`CLOCK_MONOTONIC` ns) if that is given and not too
/// soon for the threads, otherwise as soon as they are ready. The calling
/// thread calls `watch(false)` about every `poll` until the end, then
/// `watch(true)` once after both threads have stopped.
#[expect(
    clippy::too_many_arguments,
    reason = "the two sides, their settings, the start and the watcher: what a run puts on its threads"
)]
pub fn run_realtime(
    settings: &TandemSettings,
    mut fast: FastSide,
    implicit: Option<ImplicitSide>,
    control: Arc<RunControl>,
    start_at: Option<Nanos>,
    poll: Duration,
    watch: &mut dyn FnMut(bool),
) -> RealtimeOutcome {
    let shared = Arc::new(Shared {
        ready: AtomicUsize::new(0),
        control,
        done: AtomicBool::new(false),
    });
    let memory_locked = lock_memory();
    let low_latency = LowLatency::request();
    let frames = settings.frames();
    let frame = nanos(settings.frame);
    let threads = 1 + implicit.is_some() as usize;

    let fast_placement = settings.fast.placement;
    let s = Arc::clone(&shared);
    let fast_thread = thread::Builder::new()
        .name("tandem-fast".into())
        .stack_size(4 << 20)
        .spawn(move || {
            let setup = place_current_thread(fast_placement);
            prefault_stack();
            s.ready.fetch_add(1, Ordering::AcqRel);
            let failure = s.control.wait_for_origin().and_then(|origin| {
                let mut clock = MonotonicClock::with_origin(origin);
                run_fast_frames(&mut fast, &s.control, &mut clock, frames, frame)
            });
            s.done.store(true, Ordering::Release);
            (fast, failure, setup)
        })
        .expect("spawning the fast thread");

    let implicit_placement = settings.implicit.placement;
    let s = Arc::clone(&shared);
    let implicit_thread = implicit.map(|mut side| {
        thread::Builder::new()
            .name("tandem-implicit".into())
            .stack_size(4 << 20)
            .spawn(move || {
                let setup = place_current_thread(implicit_placement);
                prefault_stack();
                s.ready.fetch_add(1, Ordering::AcqRel);
                let origin = s.control.wait_for_origin().unwrap_or_else(MonotonicClock::raw_now);
                let mut clock = MonotonicClock::with_origin(origin);
                run_implicit_steps(&mut side, &s.done, &mut clock, frame);
                (side, setup)
            })
            .expect("spawning the implicit thread")
    });

    while shared.ready.load(Ordering::Acquire) < threads {
        thread::sleep(Duration::from_millis(1));
    }
    // Start a little later so that both threads are asleep on the first
    // deadline (at the agreed start, unless it is sooner than that).
    let soonest = MonotonicClock::raw_now() + 10_000_000;
    let origin = start_at.map_or(soonest, |at| at.max(soonest));
    let late_start = start_at.map(|at| origin - at).filter(|&late| late > 0);
    shared.control.set_origin(origin);
    let last_deadline = origin + frames as Nanos * frame;
    let mut over = None;
    while !shared.done.load(Ordering::Acquire) {
        thread::sleep(poll);
        watch(false);
        // Past the last frame (or asked to stop), the fast thread has the
        // grace period to return.
        let now = MonotonicClock::raw_now();
        if shared.control.stop_requested() || now > last_deadline {
            let since = *over.get_or_insert(now);
            if now - since > STOP_GRACE.as_nanos() as Nanos {
                break;
            }
        }
    }
    // The fast thread has returned (or overstayed); the implicit thread
    // stops at its next look at the flag.
    shared.done.store(true, Ordering::Release);
    shared.control.request_stop();
    let mut stuck = Vec::new();
    let fast_result = join_within(fast_thread, STOP_GRACE);
    let (fast, failure, fast_setup) = match fast_result {
        Some((fast, failure, setup)) => (Some(fast), failure, setup),
        None => {
            stuck.push("fast");
            (None, None, ThreadSetup::default())
        }
    };
    let (implicit, implicit_setup) = match implicit_thread.map(|h| join_within(h, STOP_GRACE)) {
        Some(Some((side, setup))) => (Some(side), Some(setup)),
        Some(None) => {
            stuck.push("implicit");
            (None, None)
        }
        None => (None, None),
    };
    watch(true);
    RealtimeOutcome {
        fast,
        implicit,
        stuck,
        failure,
        fast_setup,
        implicit_setup,
        memory_locked,
        low_latency: low_latency.map(drop),
        late_start,
    }
}

/// The fast side's frames on `clock` from slot 0 until `frames` (then its
/// close) or until `control` asks it to stop; the fault that ended them
/// early, if one did.
fn run_fast_frames(
    fast: &mut FastSide,
    control: &RunControl,
    clock: &mut MonotonicClock,
    frames: u64,
    frame: Nanos,
) -> Option<FastError> {
    let mut slot = 0;
    while slot < frames && !control.stop_requested() {
        clock.sleep_until(slot as Nanos * frame);
        match fast.frame(slot, clock) {
            Ok(next) => slot = next,
            Err(e) => return Some(e),
        }
    }
    if slot == frames {
        clock.sleep_until(frames as Nanos * frame);
        return fast.close(frames, clock).err();
    }
    None
}

/// The implicit side's steps on `clock` until `done`: each step's compute
/// time recorded and its result published; while it waits for a frame, it
/// sleeps until that frame should have been sent, then polls at a
/// twentieth of a frame.
fn run_implicit_steps(side: &mut ImplicitSide, done: &AtomicBool, clock: &mut MonotonicClock, frame: Nanos) {
    let poll = (frame / 20).max(5_000);
    while !done.load(Ordering::Acquire) {
        let began = clock.now();
        match side.try_step() {
            StepOutcome::Stepped => {
                let now = clock.now();
                side.metrics().implicit_compute.record((now - began) as f64);
                side.publish(now);
            }
            StepOutcome::Failed | StepOutcome::Resynced => {}
            StepOutcome::Waiting => {
                let now = clock.now();
                let due = side.awaited_frame() as Nanos * frame + poll;
                clock.sleep_until(due.max(now + poll));
            }
        }
    }
}
