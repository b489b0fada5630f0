//! The real-time tandem: a fast thread steps an explicit or linearly
//! implicit integrator every frame on absolute deadlines while an implicit
//! thread integrates the same model with the BDF alongside it; results and
//! frames cross between them without locks, and a policy decides which
//! state each frame uses.
//!
//! The work of each thread ([`fast::FastSide`], [`implicit_side::ImplicitSide`])
//! is independent of how time passes: [`threads`] runs them on two pinned
//! SCHED_FIFO threads on the monotonic clock, [`virtual_clock`] runs them
//! interleaved on one thread in virtual time with injected delays, so every
//! policy is tested deterministically.

pub mod assemble;
pub mod backlog;
pub mod clock;
pub mod control;
pub mod exchange;
pub mod extrapolate;
pub mod fast;
pub mod flow;
pub mod guard;
pub mod hybrid;
pub mod implicit_side;
pub mod inputs;
pub mod matrix;
pub mod metrics;
pub mod outputs;
pub mod placement;
pub mod preflight;
pub mod recording;
pub mod retune;
pub mod settings;
pub mod stepper;
pub mod threads;
pub mod virtual_clock;

pub use settings::{
    Extrapolation, FastMethod, FastSettings, FrameEvents, HelperCores, ImplicitSolver, ImplicitThreadSettings,
    ImplicitWork, Placement, Policy, TandemSettings,
};
