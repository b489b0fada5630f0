//! A slave serving in real time: how long its loop may wait, the step
//! due at each point of its [`Pacing`](super::pacing::Pacing) (outputs
//! first, then the member advances with its inputs held or extrapolated),
//! and the watch on a master that fell silent.

use std::time::{Duration, Instant};

use super::machine::Slave;
use crate::types::OpMode;

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
