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

use std::sync::{Arc, Mutex};

use tandem_models::Model;
use tandem_runtime::record::Trace;
use tandem_runtime::tandem::assemble::{assemble, RecordPlan, Tandem, Wiring};
use tandem_runtime::tandem::clock::Clock;
use tandem_runtime::tandem::inputs::InputSource;
use tandem_runtime::tandem::metrics::FrameSource;
use tandem_runtime::tandem::outputs::OutputSink;
use tandem_runtime::tandem::virtual_clock::VirtualClock;

/// What a virtual-clock run gave.
pub struct Run {
    /// Each frame's source, as recorded.
    pub sources: Vec<FrameSource>,
    /// Each recorded frame's time.
    pub times: Vec<f64>,
    /// Each frame's computed outputs, every output recorded.
    pub rows: Vec<Vec<f64>>,
    /// What each slot sent: `(slot, outputs)`, in the order written.
    pub sent: Vec<(u64, Vec<f64>)>,
    /// The slots the fast side reported skipped, `(from, to)`.
    pub skipped: Vec<(u64, u64)>,
    /// The parts, for their metrics.
    pub tandem: Tandem,
    /// Why it stopped early, if it did.
    pub failure: Option<String>,
}

/// What the slots sent and which were skipped.
#[derive(Default)]
struct Slots {
    sent: Vec<(u64, Vec<f64>)>,
    skipped: Vec<(u64, u64)>,
}

/// The slots, shared with the test.
#[derive(Clone, Default)]
struct Sent(Arc<Mutex<Slots>>);

impl OutputSink for Sent {
    fn write(&mut self, k: u64, _t: f64, y: &[f64]) {
        self.0.lock().unwrap().sent.push((k, y.to_vec()));
    }
    fn skipped(&mut self, from: u64, to: u64) {
        self.0.lock().unwrap().skipped.push((from, to));
    }
}

/// The source called `name`.
pub fn source_named(name: &str) -> FrameSource {
    *FrameSource::ALL.iter().find(|s| s.name() == name).unwrap()
}

/// Runs `model` with `settings` on the virtual clock with `costs`, its
/// inputs from `inputs`, frames `first..first + settings.frames()`,
/// recording every output of every frame and what every slot sent.
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
    let sent = Sent::default();
    let wiring = Wiring {
        record: Some(plan),
        outputs: Some(Box::new(sent.clone())),
        ..Wiring::inputs(model, inputs)
    };
    let mut tandem = assemble(settings, model, wiring).unwrap();
    tandem.fast.start_at(first);
    let frame = (settings.frame * 1e9).round() as Nanos;
    let mut failure = None;
    let mut trace = Trace::default();
    {
        let mut clock = VirtualClock::new(costs, tandem.implicit.as_mut());
        let end = first + settings.frames();
        let mut slot = first;
        while slot < end {
            clock.sleep_until(slot as Nanos * frame);
            match tandem.fast.frame(slot, &mut clock) {
                Ok(next) => slot = next,
                Err(e) => {
                    failure = Some(e.to_string());
                    break;
                }
            }
            // Drained as it goes, so that long runs keep every row.
            tandem.recording.as_mut().unwrap().drain(&mut trace).unwrap();
        }
        if failure.is_none() {
            if let Err(e) = tandem.fast.close(end, &mut clock) {
                failure = Some(e.to_string());
            }
            tandem.recording.as_mut().unwrap().drain(&mut trace).unwrap();
        }
    }
    let Slots { sent, skipped } = std::mem::take(&mut *sent.0.lock().unwrap());
    Run {
        sources: trace.labels.iter().map(|name| source_named(name)).collect(),
        times: trace.time,
        rows: trace.rows,
        sent,
        skipped,
        tandem,
        failure,
    }
}

/// [`run_from`] frame 0.
pub fn run(model: &dyn Model, settings: &TandemSettings, costs: &VirtualCosts, inputs: Box<dyn InputSource>) -> Run {
    run_from(model, settings, costs, inputs, 0)
}
