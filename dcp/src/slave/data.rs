//! A slave's data plane: input data taken (stale, lost and malformed data
//! counted), output data sent to every target, and, in lock-step, a step
//! refused until its input data has come.

use std::net::SocketAddr;

use super::machine::Slave;
use crate::pdu::{unwrap_seq, DataKind, Pdu};
use crate::types::{ErrorCode, OpMode, State};

impl Slave {
    /// In lock-step, refuses `STC_initialize` or a step whose input data
    /// from the master has not arrived, when the master sends data (the
    /// first time, as configured; then, when the previous one had some);
    /// then starts waiting for the next. (Data from other slaves, on data ports, is taken as it
    /// comes: their master cannot know when it arrives.)
    pub(super) fn take_fresh_data(&mut self) -> Result<(), ErrorCode> {
        let lock_step = self.op_mode() == OpMode::NonRealTime && !self.wiring.inputs.is_empty();
        if lock_step && self.expect_data && !self.fresh {
            return Err(ErrorCode::Generic);
        }
        self.expect_data = self.fresh;
        self.fresh = false;
        Ok(())
    }

    /// Whether the master sends this slave input data (a data id whose
    /// source is the control port).
    pub(super) fn master_sends_data(&self) -> bool {
        let control = self.net.local().port();
        (self.wiring.inputs.keys()).any(|id| self.wiring.sources.get(id).is_some_and(|a| a.port() == control))
    }

    /// The outputs at the current point with the current inputs.
    pub(super) fn evaluate(&mut self) {
        if let Err(e) = self.member.evaluate() {
            let t = self.seconds(self.ticks).unwrap_or(0.0);
            self.fail(&format!("the model failed at t = {t} s: {e}"));
        }
    }

    /// Sends every output data id in force now. Allocates nothing but the
    /// copies kept to answer a repeated request.
    pub(super) fn send_outputs(&mut self, initializing: bool) {
        let Slave {
            wiring,
            out_seq,
            out,
            member,
            counters,
            replies,
            outbox,
            answering,
            net,
            ..
        } = self;
        let mut failed = None;
        member.collect();
        for (&id, slots) in &wiring.outputs {
            if !wiring.active(id, initializing) {
                continue;
            }
            let seq = out_seq.entry(id).or_insert(0);
            Pdu::data_header(DataKind::InputOutput, *seq, id, out);
            *seq = seq.wrapping_add(1);
            if let Err(e) = member.give(slots, out) {
                failed = Some(e);
                break;
            }
            for to in wiring.targets.get(&id).into_iter().flatten() {
                outbox.queue(net.as_mut(), SocketAddr::V4(*to), out);
                counters.data_out += 1;
                if *answering {
                    replies.push(SocketAddr::V4(*to), out);
                }
            }
        }
        if let Some(e) = failed {
            self.fail(&e);
        }
    }

    /// A data PDU of data id `id`.
    pub(super) fn data_in(&mut self, seq: u16, id: u16, payload: &[u8]) {
        use State::*;
        let initializing = matches!(self.state, Configured | Initializing | Initialized | SendingI);
        let taking = (Configured.code()..=SendingD.code()).contains(&self.state.code());
        let Some(slots) = self.wiring.inputs.get(&id) else {
            self.counters.malformed += 1;
            return;
        };
        if !taking {
            // A sender still running after this slave stopped, or already
            // before it runs.
            self.counters.data_stale += 1;
            return;
        }
        if !self.wiring.active(id, initializing) {
            return;
        }
        let last = self.in_seq.get(&id).copied().flatten();
        let full = unwrap_seq(last, seq);
        if let Some(last) = last {
            if full <= last {
                self.counters.data_stale += 1;
                return;
            }
            self.counters.data_lost = self.counters.data_lost.saturating_add((full - last - 1) as u64);
        }
        if !self.member.take(slots, payload, full) {
            self.counters.malformed += 1;
            return;
        }
        // Every configured data id has its entry from STC_configure on.
        *self.in_seq.entry(id).or_default() = Some(full);
        let control = self.net.local().port();
        self.fresh |= self.wiring.sources.get(&id).is_some_and(|a| a.port() == control);
        self.counters.data_in += 1;
        if let Some(sent) = self.pacing.and_then(|p| p.due(full)) {
            let age = self.now.at.saturating_duration_since(sent);
            self.ages.record(age.as_secs_f64());
        }
    }
}
