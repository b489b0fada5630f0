//! What the tandem's virtual-clock tests share: the frame, and settings and
//! costs whose outcomes the tests can work out by hand.

use tandem_runtime::tandem::clock::Nanos;
use tandem_runtime::tandem::virtual_clock::VirtualCosts;
use tandem_runtime::tandem::{FastMethod, ImplicitSolver, Policy, TandemSettings};
use tandem_runtime::ImplicitMethod;

/// The frame (s).
pub const FRAME: f64 = 1e-3;
/// A millisecond in nanoseconds.
pub const MS: Nanos = 1_000_000;

/// `frames` frames of `policy` with the fast `method`, and on the implicit
/// side BDF1 converged to round-off (so that its results are known exactly).
pub fn settings(policy: Policy, method: FastMethod, frames: u64) -> TandemSettings {
    let mut s = TandemSettings::new(FRAME, frames as f64 * FRAME);
    s.policy = policy;
    s.fast.method = method;
    s.implicit.solver = ImplicitSolver::Fixed(ImplicitMethod::Bdf1);
    s.implicit.rtol = 1e-12;
    s.implicit.atol = 1e-14;
    s.implicit.max_newton = 8;
    s
}

/// 10 µs per fast step and 300 µs per implicit step: both fit a frame.
pub fn costs() -> VirtualCosts {
    VirtualCosts {
        fast_step: 10_000,
        implicit_step: 300_000,
        ..VirtualCosts::default()
    }
}
