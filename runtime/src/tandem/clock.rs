//! Time as the real-time loops see it: nanoseconds since the run started,
//! read and slept on. The monotonic clock sleeps on absolute deadlines;
//! the virtual clock ([`super::virtual_clock`]) advances deterministically.

use nix::sys::time::TimeSpec;
use nix::time::{clock_gettime, clock_nanosleep, ClockId, ClockNanosleepFlags};

/// Nanoseconds since the start of a run.
pub type Nanos = i64;

/// Seconds to whole nanoseconds (rounded).
pub fn nanos(seconds: f64) -> Nanos {
    (seconds * 1e9).round() as Nanos
}

/// What a real-time loop needs of time.
pub trait Clock {
    /// Time now.
    fn now(&mut self) -> Nanos;
    /// Returns at `deadline` or as soon after it as the system allows; never
    /// a relative sleep, so lateness does not accumulate.
    fn sleep_until(&mut self, deadline: Nanos);
    /// Tells the clock that `steps` explicit steps were just computed (the
    /// virtual clock charges their cost; the real clock has already spent it).
    fn computed(&mut self, steps: u32) {
        let _ = steps;
    }
}

/// `CLOCK_MONOTONIC`, slept on with `clock_nanosleep(TIMER_ABSTIME)`.
#[derive(Clone, Copy, Debug)]
pub struct MonotonicClock {
    origin: Nanos,
}

/// The monotonic clock's reading in nanoseconds.
fn monotonic_now() -> Nanos {
    let ts = clock_gettime(ClockId::CLOCK_MONOTONIC).expect("CLOCK_MONOTONIC is always available on Linux");
    ts.tv_sec() * 1_000_000_000 + ts.tv_nsec()
}

impl MonotonicClock {
    /// A clock whose zero is now.
    pub fn starting_now() -> Self {
        MonotonicClock {
            origin: monotonic_now(),
        }
    }

    /// A clock whose zero is `origin` nanoseconds of `CLOCK_MONOTONIC`, so
    /// that two threads share one zero.
    pub fn with_origin(origin: Nanos) -> Self {
        MonotonicClock { origin }
    }

    /// The raw monotonic time, to pick a shared origin.
    pub fn raw_now() -> Nanos {
        monotonic_now()
    }
}

impl Clock for MonotonicClock {
    fn now(&mut self) -> Nanos {
        monotonic_now() - self.origin
    }

    fn sleep_until(&mut self, deadline: Nanos) {
        let absolute = self.origin + deadline;
        let request = TimeSpec::new(absolute / 1_000_000_000, absolute % 1_000_000_000);
        // Interrupted by a signal: sleep again towards the same deadline.
        while let Err(nix::errno::Errno::EINTR) =
            clock_nanosleep(ClockId::CLOCK_MONOTONIC, ClockNanosleepFlags::TIMER_ABSTIME, &request)
        {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanos_round_to_the_nearest() {
        assert_eq!(nanos(1e-3), 1_000_000);
        assert_eq!(nanos(0.1), 100_000_000);
        assert_eq!(nanos(2.5e-9), 3);
    }

    #[test]
    fn the_monotonic_clock_never_wakes_before_its_deadline() {
        let mut clock = MonotonicClock::starting_now();
        let mut deadline = clock.now();
        for _ in 0..20 {
            deadline += 200_000;
            clock.sleep_until(deadline);
            assert!(clock.now() >= deadline);
        }
    }
}
