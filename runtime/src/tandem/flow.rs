//! A frame's continuous part with a fixed-step method (the fast side's
//! explicit or linearly implicit step, the implicit side's BDF1, BDF2 or
//! trapezoidal step), its events located inside the frame.
//!
//! One step spans the frame. When a zero crossing's distance is negative
//! at its end, the crossing is located on the step's continuous extension
//! (the cubic Hermite polynomial through its ends: two more evaluations),
//! the state there is taken from it, the event iteration runs at that
//! instant (modes switch, resets apply), and one more step covers the rest
//! of the frame. At most the locator's limit of events per frame are
//! handled so; a crossing beyond it is handled at the next frame boundary
//! and counted. The cost is bounded and nothing is allocated.

use tandem_models::{Model, StateRef};

use super::metrics::EventCounts;
use crate::events::locator::{EventLocator, SettleError};
use crate::hermite::Hermite;

/// One step of a method from `t` by `h`, on the model lent to it, with the
/// discrete states and inputs held; returns what the method reports (the
/// fast side: the frame of its iteration matrix).
pub type Step<'a, R> = dyn FnMut(&mut dyn Model, f64, f64, &mut [f64], &[f64], &[f64]) -> R + 'a;

/// The scratch of a frame's flow, made once.
pub struct FrameFlow {
    hermite: Hermite,
    x_start: Vec<f64>,
}

/// What a frame's flow did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flowed {
    /// Events located and handled inside the frame.
    pub events: u32,
    /// Crossings left to the next frame boundary (past the limit).
    pub deferred: bool,
}

impl FrameFlow {
    /// Room for `n` continuous states.
    pub fn new(n: usize) -> Self {
        FrameFlow {
            hermite: Hermite::new(n),
            x_start: vec![0.0; n],
        }
    }

    /// Integrates `x` over the frame from `t0` to `t1`, `h` long (the frame
    /// itself, exactly: the first step is the method's plain step), with
    /// `step`, handling the events inside (see the module documentation);
    /// counts them in `counts` when given. Returns what the first step
    /// reported and what the flow did.
    #[expect(
        clippy::too_many_arguments,
        reason = "a step between frames: the model, its locator and stepper, the span, the state it advances and the counts"
    )]
    pub fn run<R>(
        &mut self,
        model: &mut dyn Model,
        locator: &mut EventLocator,
        step: &mut Step<'_, R>,
        (t0, h, t1): (f64, f64, f64),
        x: &mut [f64],
        xd: &mut [f64],
        u: &[f64],
        counts: Option<&EventCounts>,
    ) -> (R, Flowed) {
        locator.begin_step();
        let mut flowed = Flowed::default();
        self.x_start.copy_from_slice(x);
        let first = step(model, t0, h, x, xd, u);
        if !locator.active() {
            return (first, flowed);
        }
        let tolerance = locator.settings().tolerance_at(t1);
        let mut t = t0;
        loop {
            let at_end = locator.distance(model, StateRef { t: t1, x, xd, u });
            // A non-finite end is the guards' to handle.
            if at_end >= 0.0 || at_end.is_nan() || x.iter().any(|v| !v.is_finite()) {
                break;
            }
            let start = StateRef {
                t,
                x: &self.x_start,
                xd,
                u,
            };
            self.hermite.span(model, start, t1, x);
            let hermite = &self.hermite;
            let mut on_hermite = |_: &mut dyn Model, s: f64, out: &mut [f64]| hermite.state_at(s, out);
            let te = locator.locate(model, &mut on_hermite, t, t1, at_end, x, xd, u);
            if locator.admit(te).is_err() {
                // Past the limit: the step's end stands, and the mode
                // switches at the next frame boundary.
                self.hermite.state_at(t1, x);
                flowed.deferred = true;
                if let Some(c) = counts {
                    c.deferred.increment();
                }
                break;
            }
            flowed.events += 1;
            if let Some(c) = counts {
                c.located.increment();
            }
            if let Err(SettleError::Storm { .. }) = locator.settle(model, te, x, xd, u) {
                if let Some(c) = counts {
                    c.storms.increment();
                }
            }
            t = te;
            if t1 - t <= tolerance {
                break;
            }
            self.x_start.copy_from_slice(x);
            step(model, t, t1 - t, x, xd, u);
        }
        (first, flowed)
    }
}
