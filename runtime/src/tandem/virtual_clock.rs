//! Virtual time: the fast side and the implicit side run interleaved on one
//! thread, in the order their work would happen on two cores, with compute
//! costs charged and delays injected. The same inputs and injections give
//! the same frames, bit for bit.

use super::clock::{Clock, Nanos};
use super::fast::{FastError, FastSide};
use super::implicit_side::{ImplicitSide, StepOutcome};
use std::ops::ControlFlow;

/// Compute costs and injected faults, all in nanoseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VirtualCosts {
    /// Charged per fast step (re-integrated frames included).
    pub fast_step: Nanos,
    /// Charged per implicit macro step.
    pub implicit_step: Nanos,
    /// Every wake-up comes this late.
    pub wake_latency: Nanos,
    /// `(at, delay)`: the first implicit step starting at or after `at`
    /// takes `delay` longer. Sorted by `at`.
    pub implicit_delays: Vec<(Nanos, Nanos)>,
    /// `(at, extra)`: the first frame waking at or after `at` computes
    /// `extra` longer. Sorted by `at`.
    pub fast_overruns: Vec<(Nanos, Nanos)>,
    /// `(at, duration)`: the whole process stops at `at` for `duration`
    /// (a host stall: SIGSTOP, a descheduled VM): neither thread wakes or
    /// computes in it, and work under way when it begins ends that much
    /// later. Sorted by `at`, not overlapping.
    pub stalls: Vec<(Nanos, Nanos)>,
}

impl VirtualCosts {
    /// When a thread that may run from `t` runs: after the stall `t` falls
    /// in, if any.
    fn runnable(&self, t: Nanos) -> Nanos {
        self.stalls
            .iter()
            .find(|&&(at, duration)| at <= t && t < at + duration)
            .map_or(t, |&(at, duration)| at + duration)
    }

    /// When `work` ns of computing that may start at `start` ends, the
    /// stalls it meets included.
    fn finished(&self, start: Nanos, work: Nanos) -> Nanos {
        let mut end = self.runnable(start) + work;
        for &(at, duration) in &self.stalls {
            if at >= start && at < end {
                end += duration;
            }
        }
        end
    }
}

/// The virtual clock, which also runs the implicit side whenever virtual
/// time passes.
pub struct VirtualClock<'a> {
    now: Nanos,
    costs: &'a VirtualCosts,
    implicit: Option<&'a mut ImplicitSide>,
    /// When the implicit worker is next free.
    free: Nanos,
    /// Completion time of a computed result not yet published.
    pending: Option<Nanos>,
    next_delay: usize,
    next_overrun: usize,
}

impl<'a> VirtualClock<'a> {
    /// A clock at 0 with `costs`, running `implicit` alongside.
    pub fn new(costs: &'a VirtualCosts, implicit: Option<&'a mut ImplicitSide>) -> Self {
        VirtualClock {
            now: 0,
            costs,
            implicit,
            free: 0,
            pending: None,
            next_delay: 0,
            next_overrun: 0,
        }
    }

    /// Runs the implicit worker up to `until`: publishes results whose
    /// computation has ended, and starts the next step when the worker is
    /// free and the frames allow it.
    fn run_implicit(&mut self, until: Nanos) {
        let Some(side) = self.implicit.as_deref_mut() else {
            return;
        };
        loop {
            if let Some(done) = self.pending {
                if done > until {
                    return;
                }
                side.publish(done);
                self.free = done;
                self.pending = None;
            }
            let start = self.costs.runnable(self.free.max(self.now));
            if start > until {
                return;
            }
            let mut cost = self.costs.implicit_step;
            if let Some(&(at, delay)) = self.costs.implicit_delays.get(self.next_delay) {
                if start >= at {
                    cost += delay;
                    self.next_delay += 1;
                }
            }
            match side.try_step() {
                StepOutcome::Stepped => {
                    side.metrics().implicit_compute.record(cost as f64);
                    self.pending = Some(self.costs.finished(start, cost));
                }
                StepOutcome::Failed | StepOutcome::Resynced => self.free = self.costs.finished(start, cost),
                StepOutcome::Waiting => return,
            }
        }
    }
}

impl Clock for VirtualClock<'_> {
    fn now(&mut self) -> Nanos {
        self.now
    }

    fn sleep_until(&mut self, deadline: Nanos) {
        let wake = self.costs.runnable(deadline.max(self.now) + self.costs.wake_latency);
        self.run_implicit(wake);
        self.now = wake;
    }

    fn computed(&mut self, steps: u32) {
        let mut cost = self.costs.fast_step * steps as Nanos;
        if let Some(&(at, extra)) = self.costs.fast_overruns.get(self.next_overrun) {
            if self.now >= at {
                cost += extra;
                self.next_overrun += 1;
            }
        }
        let done = self.costs.finished(self.now, cost);
        self.run_implicit(done);
        self.now = done;
    }
}

/// Runs `frames` frames of `fast` (with `implicit` alongside, unless the
/// policy is `explicit`) in virtual time, calling `between(k)` at each
/// boundary after slot `k` the run reaches (to drain recordings and feed
/// what arrived by the next slot): after each slot served, and, when the
/// fast side wakes after later slots began (a stall), at the start of the
/// slot in progress before serving it, so that the frames it catches up
/// find the inputs of their own time. `between` breaks to stop early.
/// Stops at the first frame that fails.
pub fn run_virtual(
    fast: &mut FastSide,
    implicit: Option<&mut ImplicitSide>,
    frames: u64,
    frame: Nanos,
    costs: &VirtualCosts,
    between: &mut dyn FnMut(u64) -> ControlFlow<()>,
) -> Result<(), FastError> {
    let mut clock = VirtualClock::new(costs, implicit);
    let mut slot = 0;
    while slot < frames {
        clock.sleep_until(slot as Nanos * frame);
        let current = ((clock.now() / frame) as u64).min(frames - 1);
        if current > slot && between(current - 1).is_break() {
            return Ok(());
        }
        let served = fast.frame(slot, &mut clock)?;
        if between(served - 1).is_break() {
            return Ok(());
        }
        slot = served;
    }
    clock.sleep_until(frames as Nanos * frame);
    fast.close(frames, &mut clock)
}
