//! What the tandem's virtual-clock tests share: the frame, and settings and
//! costs whose outcomes the tests can work out by hand.

// Each test binary uses part of it.
#![allow(dead_code)]

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

use tandem_models::Model;
use tandem_runtime::record::Trace;
use tandem_runtime::tandem::assemble::{assemble, RecordPlan, Tandem, Wiring};
use tandem_runtime::tandem::clock::Clock;
use tandem_runtime::tandem::inputs::InputSource;
use tandem_runtime::tandem::metrics::FrameSource;
use tandem_runtime::tandem::virtual_clock::VirtualClock;

/// What a virtual-clock run gave.
pub struct Run {
    /// Each frame's source.
    pub sources: Vec<FrameSource>,
    /// Each frame's outputs, every output recorded.
    pub rows: Vec<Vec<f64>>,
    /// The parts, for their metrics.
    pub tandem: Tandem,
    /// Why it stopped early, if it did.
    pub failure: Option<String>,
}

/// Runs `model` with `settings` on the virtual clock with `costs`, its
/// inputs from `inputs`, frames `first..first + settings.frames()`,
/// recording every output of every frame.
pub fn run_from(
    model: &dyn Model,
    settings: &TandemSettings,
    costs: &VirtualCosts,
    inputs: Box<dyn InputSource>,
    first: u64,
) -> Run {
    let plan = RecordPlan {
        signals: (0..model.layout().outputs.len()).collect(),
        decimation: 1,
    };
    let wiring = Wiring {
        record: Some(plan),
        ..Wiring::inputs(model, inputs)
    };
    let mut tandem = assemble(settings, model, wiring).unwrap();
    let frame = (settings.frame * 1e9).round() as Nanos;
    let mut sources = Vec::new();
    let mut failure = None;
    let mut trace = Trace::default();
    {
        let mut clock = VirtualClock::new(costs, tandem.implicit.as_mut());
        for k in first..first + settings.frames() {
            clock.sleep_until(k as Nanos * frame);
            if let Err(e) = tandem.fast.frame(k, &mut clock) {
                failure = Some(e.to_string());
                break;
            }
            sources.push(tandem.fast.last_source());
            // Drained as it goes, so that long runs keep every row.
            tandem.recording.as_mut().unwrap().drain(&mut trace).unwrap();
        }
    }
    Run {
        sources,
        rows: trace.rows,
        tandem,
        failure,
    }
}

/// [`run_from`] frame 0.
pub fn run(model: &dyn Model, settings: &TandemSettings, costs: &VirtualCosts, inputs: Box<dyn InputSource>) -> Run {
    run_from(model, settings, costs, inputs, 0)
}
