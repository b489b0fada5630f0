//! What a slave runs behind its ports: a model the slave steps itself
//! ([`super::model`]), or a Tandem run on threads of its own
//! ([`super::session`]). The slave keeps the protocol (states, requests,
//! sequence ids, clocks); a member keeps the values.

use std::time::Instant;

use tandem_config::ConfigError;
use tandem_cosim::SubModelError;
use tandem_session::{BindError, SessionError};

use crate::ports::Ports;
use crate::types::OpMode;
use crate::values::ValueError;

use super::wiring::Slot;

/// Why a member cannot do what its slave asks.
#[derive(Debug, thiserror::Error)]
pub enum MemberError {
    /// Hard real time cannot be had on this machine: why.
    #[error("hard real time refused: {0}; run as root on a real-time kernel, or use soft real time")]
    HardRealTimeRefused(String),
    /// The model cannot be loaded afresh.
    #[error(transparent)]
    Load(#[from] ConfigError),
    /// Stepped before it was configured.
    #[error("no model: the slave was not configured")]
    NotConfigured,
    /// The model failed computing its outputs.
    #[error(transparent)]
    Evaluate(SubModelError),
    /// The model failed stepping from `t`.
    #[error("the model failed stepping from t = {t} s: {error}")]
    Step {
        /// Where the step started (s).
        t: f64,
        /// Why (in the message, so not a source).
        error: SubModelError,
    },
    /// The model failed computing its outputs at `t`.
    #[error("the model failed at t = {t} s: {error}")]
    Model {
        /// When (s).
        t: f64,
        /// Why (in the message, so not a source).
        error: SubModelError,
    },
    /// An output value its type on the wire cannot carry.
    #[error("output {port}: {error}")]
    Output {
        /// The output.
        port: String,
        /// Why (in the message, so not a source).
        error: ValueError,
    },
    /// Non-real-time steps asked of a member that runs on its clock only.
    #[error("a run configuration runs on its clock only: use soft or hard real time")]
    ClockOnly,
    /// The run's configuration no longer binds.
    #[error(transparent)]
    Bind(#[from] BindError),
    /// The run could not be made.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The run's thread could not start.
    #[error("cannot start the run: {0}")]
    Spawn(std::io::Error),
    /// The run failed (its report's failure).
    #[error("the run failed: {0}")]
    RunFailed(String),
    /// The run ended before the master stopped it.
    #[error(
        "the run ended before the master stopped it: it lasts at most its duration, {duration} s; make the \
         duration at least the federation's"
    )]
    RunEnded {
        /// Its duration (s).
        duration: f64,
    },
}

/// The most micro steps one communication step takes (a step the master
/// asks for beyond it is refused: it would hold the slave for minutes).
pub const MAX_MICRO_STEPS: f64 = 1e7;

/// Whether `h` is a whole number of micro steps of `micro`, from 1 to
/// [`MAX_MICRO_STEPS`] of them.
pub fn whole_micro_steps(h: f64, micro: f64) -> bool {
    let n = (h / micro).round();
    h.is_finite() && (1.0..=MAX_MICRO_STEPS).contains(&n) && (n * micro - h).abs() <= 1e-9 * h
}

/// What a slave runs.
pub trait Member: Send {
    /// Its DCP variables.
    fn ports(&self) -> &Ports;
    /// The operating modes it can run in.
    fn op_modes(&self) -> &[OpMode];
    /// Its micro step (s): the resolution its description recommends.
    fn micro_step(&self) -> f64;
    /// Whether it takes communication steps of `h` s: by default a whole
    /// number of its micro steps ([`whole_micro_steps`]).
    fn takes_step(&self, h: f64) -> bool {
        whole_micro_steps(h, self.micro_step())
    }
    /// Whether it can run in `mode` on this machine (`STC_register`); if
    /// not, why, and the fix.
    fn admits(&self, mode: OpMode) -> Result<(), MemberError> {
        let _ = mode;
        Ok(())
    }
    /// Fresh at t = 0 with its first outputs (`STC_configure`).
    fn configure(&mut self) -> Result<(), MemberError>;
    /// Its outputs at the current point from the current inputs.
    fn evaluate(&mut self) -> Result<(), MemberError>;
    /// Non-real-time: one step from `t` over `h`, the inputs held.
    fn step(&mut self, t: f64, h: f64) -> Result<(), MemberError>;
    /// Real time starts: point 0 is at `origin`, points `h` apart; `hard`
    /// asks for hard real time (refused when it cannot be had).
    fn start(&mut self, origin: Instant, h: f64, hard: bool) -> Result<(), MemberError>;
    /// Real time: the outputs of point `k` have left; on to point `k + 1`.
    fn advance(&mut self, k: i64, h: f64) -> Result<(), MemberError>;
    /// A real-time run ends (stopped, failed, or its master lost).
    fn stop(&mut self);
    /// The values of input `slots` in `payload`, sent for point `point`;
    /// nothing is taken unless all of them read. Whether they did. Slots
    /// are as the master configured them: a variable may be in several.
    fn take(&mut self, slots: &[Slot], payload: &[u8], point: i64) -> bool;
    /// The outputs of the current point are about to be sent (the same
    /// values in every data id that carries them).
    fn collect(&mut self) {}
    /// Appends the values of output `slots` to `out`.
    fn give(&mut self, slots: &[Slot], out: &mut Vec<u8>) -> Result<(), MemberError>;
    /// What its last real-time run reported, once, if it reports.
    fn report(&mut self) -> Option<String> {
        None
    }
}
