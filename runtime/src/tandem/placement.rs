//! Where a real-time thread runs and what it holds: pinned to a core,
//! raised to SCHED_FIFO, other threads kept off the fast thread's core,
//! memory locked and deep idle states held off; each refusal named, so
//! that the run goes on without it and reports it.

use thread_priority::{
    set_thread_priority_and_policy, thread_native_id, RealtimeThreadSchedulePolicy, ThreadPriority,
    ThreadSchedulePolicy,
};

use super::settings::Placement;

/// A real-time setting the system refused; the run goes on without it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The thread could not be pinned.
    #[error("could not pin to core {core} (does it exist? see `nproc`)")]
    Pin {
        /// The core asked for.
        core: usize,
    },
    /// SCHED_FIFO was refused.
    #[error("SCHED_FIFO {priority} refused ({reason}): run as root or grant CAP_SYS_NICE / an rtprio limit")]
    Fifo {
        /// The priority asked for.
        priority: u8,
        /// What the system said.
        reason: String,
    },
    /// Memory could not be locked.
    #[error("mlockall refused ({reason}): run as root or raise `ulimit -l`")]
    LockMemory {
        /// What the system said.
        reason: String,
    },
    /// Deep idle states could not be held off.
    #[error("/dev/cpu_dma_latency: {reason} (run as root to keep the CPUs out of deep idle states)")]
    LowLatency {
        /// What the system said.
        reason: String,
    },
}

/// What a thread obtained of what it asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadSetup {
    /// Pinned to its core (or why not; `None` when no core was asked).
    pub pinned: Option<Result<usize, Refused>>,
    /// Running under SCHED_FIFO at its priority (or why not).
    pub fifo: Option<Result<u8, Refused>>,
}

impl ThreadSetup {
    /// What was refused.
    pub fn refusals(&self) -> impl Iterator<Item = &Refused> {
        let pinned = self.pinned.as_ref().and_then(|r| r.as_ref().err());
        let fifo = self.fifo.as_ref().and_then(|r| r.as_ref().err());
        pinned.into_iter().chain(fifo)
    }
}

/// Lets the calling thread run on every core it may use but `core` (the
/// fast thread's), so that it never takes time from the fast thread; false
/// where the system refuses, or `core` is the only one it may use.
pub fn keep_off_core(core: usize) -> bool {
    use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
    use nix::unistd::Pid;
    let this = Pid::from_raw(0);
    let Ok(mut cores) = sched_getaffinity(this) else {
        return false;
    };
    let allowed = |cores: &CpuSet, c: usize| cores.is_set(c).unwrap_or(false);
    if !allowed(&cores, core) {
        return true;
    }
    if !(0..CpuSet::count()).any(|c| c != core && allowed(&cores, c)) {
        return false;
    }
    cores.unset(core).is_ok() && sched_setaffinity(this, &cores).is_ok()
}

/// Pins the calling thread and raises it to SCHED_FIFO as `placement` says.
pub fn place_current_thread(placement: Placement) -> ThreadSetup {
    let pinned = placement.core.map(|core| {
        if core_affinity::set_for_current(core_affinity::CoreId { id: core }) {
            Ok(core)
        } else {
            Err(Refused::Pin { core })
        }
    });
    let refused = |reason: String| Refused::Fifo {
        priority: placement.priority,
        reason,
    };
    let fifo = placement
        .priority
        .try_into()
        .map(ThreadPriority::Crossplatform)
        .map_err(|e| refused(format!("{e:?}")));
    let fifo = fifo.and_then(|priority| {
        set_thread_priority_and_policy(
            thread_native_id(),
            priority,
            ThreadSchedulePolicy::Realtime(RealtimeThreadSchedulePolicy::Fifo),
        )
        .map(|()| placement.priority)
        .map_err(|e| refused(format!("{e:?}")))
    });
    ThreadSetup {
        pinned,
        fifo: Some(fifo),
    }
}

/// Locks current and future memory so that the real-time threads never
/// take a page fault (`mlockall`); returns why not when refused.
pub fn lock_memory() -> Result<(), Refused> {
    use nix::sys::mman::{mlockall, MlockAllFlags};
    mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE)
        .map_err(|e| Refused::LockMemory { reason: e.to_string() })
}

/// Keeps the CPUs out of deep idle states while it lives, as cyclictest
/// does: `/dev/cpu_dma_latency` held open with a 0 µs request (waking a
/// core from a deep C-state, or a halted virtual CPU, costs tens of µs).
pub struct LowLatency {
    _request: std::fs::File,
}

impl LowLatency {
    /// Requests 0 µs wake-up latency for as long as the value lives.
    pub fn request() -> Result<Self, Refused> {
        use std::io::Write;
        let refused = |e: std::io::Error| Refused::LowLatency { reason: e.to_string() };
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/cpu_dma_latency")
            .map_err(refused)?;
        file.write_all(&0i32.to_ne_bytes()).map_err(refused)?;
        Ok(LowLatency { _request: file })
    }
}
