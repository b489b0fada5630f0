//! A slave's time: the clocks it reads ([`Now`]), the points of a
//! real-time run from its common start ([`Pacing`]), every instant
//! computed with checked arithmetic (a step, a start or a point the clock
//! cannot hold is refused or ends the run, never overflows). The steps
//! taken on that clock are [`super::paced`]'s.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// The clocks at one moment: monotonic, and UNIX time (for `STC_run`'s
/// start time).
#[derive(Clone, Copy, Debug)]
pub struct Now {
    /// The monotonic clock.
    pub at: Instant,
    /// Since the UNIX epoch.
    pub unix: Duration,
}

impl Now {
    /// The system's clocks now.
    pub fn system() -> Now {
        Now {
            at: Instant::now(),
            unix: SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default(),
        }
    }
}

/// The instant of `STC_run`'s start time `start` (s of UNIX time; 0 for
/// now) seen from `now`; `None` for a start in the past (before the
/// current second) or beyond what the clock holds.
pub(super) fn start_instant(start: i64, now: Now) -> Option<Instant> {
    if start == 0 {
        return Some(now.at);
    }
    let start = u64::try_from(start).ok()?;
    if start < now.unix.as_secs() {
        return None;
    }
    now.at.checked_add(Duration::from_secs(start).saturating_sub(now.unix))
}

/// The clock of a real-time run: point `k` is due at `origin + k h`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pacing {
    /// When point 0 is due.
    pub(super) origin: Instant,
    /// The step (s).
    pub(super) h: f64,
    /// The next point to take.
    pub(super) next: i64,
}

impl Pacing {
    /// When point `k` is due; `None` before point 0 or beyond what the
    /// clock holds.
    pub(super) fn due(&self, k: i64) -> Option<Instant> {
        if k < 0 {
            return None;
        }
        let offset = Duration::try_from_secs_f64(self.h * k as f64).ok()?;
        self.origin.checked_add(offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_and_starts_beyond_the_clock_are_none_not_overflows() {
        let now = Now::system();
        let p = Pacing {
            origin: now.at,
            h: (u32::MAX as f64).powi(2),
            next: 0,
        };
        assert_eq!(p.due(0), Some(now.at));
        assert_eq!(p.due(-1), None);
        assert_eq!(p.due(1), None);
        assert_eq!(p.due(i64::MAX), None);
        assert_eq!(start_instant(0, now), Some(now.at));
        // The farthest start: held by the clock, or refused; never an
        // overflow.
        if let Some(far) = start_instant(i64::MAX, now) {
            assert!(far > now.at);
        }
        assert_eq!(start_instant(-5, now), None);
        assert_eq!(start_instant(1, now), None, "a start in the past");
        let ahead = start_instant(now.unix.as_secs() as i64 + 2, now).unwrap();
        let wait = ahead - now.at;
        assert!(
            wait > Duration::from_secs(1) && wait <= Duration::from_secs(2),
            "{wait:?}"
        );
    }
}
