//! What a slave runs behind its ports: a model the slave steps itself
//! ([`super::model`]), or a Tandem run on threads of its own
//! ([`super::session`]). The slave keeps the protocol (states, requests,
//! sequence ids, clocks); a member keeps the values.

use std::time::Instant;

use crate::ports::Ports;
use crate::types::OpMode;

use super::wiring::Slot;

/// Why a member cannot run in hard real time (`why`), and the fix.
pub(crate) fn hard_real_time_refused(why: &str) -> String {
    format!("hard real time refused: {why}; run as root on a real-time kernel, or use soft real time")
}

/// What a slave runs.
pub trait Member: Send {
    /// Its DCP variables.
    fn ports(&self) -> &Ports;
    /// The operating modes it can run in.
    fn op_modes(&self) -> &[OpMode];
    /// Its micro step (s): a step must be a whole number of them.
    fn micro_step(&self) -> f64;
    /// Whether it can run in `mode` on this machine (`STC_register`); if
    /// not, why, and the fix.
    fn admits(&self, mode: OpMode) -> Result<(), String> {
        let _ = mode;
        Ok(())
    }
    /// Fresh at t = 0 with its first outputs (`STC_configure`).
    fn configure(&mut self) -> Result<(), String>;
    /// Its outputs at the current point from the current inputs.
    fn evaluate(&mut self) -> Result<(), String>;
    /// Non-real-time: one step from `t` over `h`, the inputs held.
    fn step(&mut self, t: f64, h: f64) -> Result<(), String>;
    /// Real time starts: point 0 is at `origin`, points `h` apart; `hard`
    /// asks for hard real time (refused when it cannot be had).
    fn start(&mut self, origin: Instant, h: f64, hard: bool) -> Result<(), String>;
    /// Real time: the outputs of point `k` have left; on to point `k + 1`.
    fn advance(&mut self, k: i64, h: f64) -> Result<(), String>;
    /// A real-time run ends (stopped, failed, or its master lost).
    fn stop(&mut self);
    /// The values of input `slots` in `payload`, sent for point `point`;
    /// nothing is taken unless all of them read. Whether they did.
    fn take(&mut self, slots: &[Slot], payload: &[u8], point: i64) -> bool;
    /// The outputs of the current point are about to be sent (the same
    /// values in every data id that carries them).
    fn collect(&mut self) {}
    /// Appends the values of output `slots` to `out`.
    fn give(&mut self, slots: &[Slot], out: &mut Vec<u8>) -> Result<(), String>;
    /// What its last real-time run reported, once, if it reports.
    fn report(&mut self) -> Option<String> {
        None
    }
}
