//! A slave's time: the clocks it reads ([`Now`]), the points of a
//! real-time run from its common start ([`Pacing`]), every instant
//! computed with checked arithmetic (a step, a start or a point the clock
//! cannot hold is refused or ends the run, never overflows), and the
//! steps taken on its own clock.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::machine::Slave;
use crate::types::OpMode;

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

impl Slave {
    /// How long the serving loop may wait: until the next real-time point,
    /// 50 ms at most.
    pub(super) fn wait_for(&self) -> Duration {
        let most = Duration::from_millis(50);
        match self.pacing.and_then(|p| p.due(p.next)) {
            Some(due) if self.state.runs() => due.saturating_duration_since(Instant::now()).min(most),
            _ => most,
        }
    }

    /// The real-time step now due, if one is: at point k, the outputs of
    /// point k leave, then the member steps to k + 1 with its inputs held
    /// or extrapolated from their newest samples.
    pub(super) fn realtime_step(&mut self) {
        let Some(mut pacing) = self.pacing else {
            return;
        };
        if !self.state.runs() {
            return;
        }
        let k = pacing.next;
        let (Some(due), Some(deadline)) = (pacing.due(k), pacing.due(k.saturating_add(1))) else {
            self.fail(&format!(
                "the real-time clock cannot hold point {k} of {} s steps: the run ends",
                pacing.h
            ));
            return;
        };
        let now = self.now.at;
        if now < due {
            return;
        }
        if now > deadline {
            self.counters.missed_deadlines += 1;
            if self.op_mode() == OpMode::HardRealTime {
                self.fail(&format!("missed the deadline of point {k} in hard real time"));
                return;
            }
        }
        self.send_outputs(false);
        if !self.state.runs() {
            return;
        }
        let newest = self
            .wiring
            .inputs
            .keys()
            .map(|id| self.in_seq.get(id).copied().flatten())
            .min();
        if k > 1 && newest.is_some_and(|p| p.is_none_or(|p| p < k - 1)) {
            self.counters.late_inputs += 1;
        }
        match self.member.advance(k, pacing.h) {
            Ok(()) => {
                pacing.next = k + 1;
                self.pacing = Some(pacing);
            }
            Err(e) => self.fail(&e),
        }
    }

    /// Stops and returns to ALIVE when the master has been silent too
    /// long.
    pub(super) fn watch_master(&mut self) {
        let timeout = self.identity.endpoint.master_timeout;
        let silent = self.now.at.saturating_duration_since(self.last_heard).as_secs_f64();
        if self.registration.is_none() || silent < timeout {
            return;
        }
        self.counters.master_lost += 1;
        self.say(&format!(
            "no request from the master for {timeout} s: stopped, waiting for a master again"
        ));
        self.lost_master();
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
