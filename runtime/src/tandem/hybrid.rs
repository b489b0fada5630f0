//! The discrete part of a frame, run the same way on both sides: the major
//! step at a frame boundary (outputs with the frame's rate hits, discrete
//! update and resets, then the event iteration), and the comparison of two
//! states' modes, which tells whether they have seen the same events.

use tandem_models::{MajorStep, Model};

use super::metrics::EventCounts;
use crate::events::locator::{EventLocator, SettleError};

/// Scratch for the major step, made once.
pub struct Boundary {
    x_before: Vec<f64>,
    xd_before: Vec<f64>,
}

impl Boundary {
    /// Room for `n` continuous and `nd` discrete states.
    pub fn new(n: usize, nd: usize) -> Self {
        Boundary {
            x_before: vec![0.0; n],
            xd_before: vec![0.0; nd],
        }
    }

    /// The major step `s`: outputs into `s.y` with the rates in `s.hits`
    /// (what the frame sends), the discrete update and resets, then, when
    /// events are located and that changed a state, the event iteration (a
    /// reset may switch a mode). Returns whether a state changed.
    /// Non-finite values are the guards' to handle; an iteration that runs
    /// out of rounds is counted in `counts` and its last state stands.
    /// Allocates nothing.
    pub fn major_step(
        &mut self,
        model: &mut dyn Model,
        locator: &mut EventLocator,
        s: &mut MajorStep<'_>,
        counts: &EventCounts,
    ) -> bool {
        self.x_before.copy_from_slice(s.x);
        self.xd_before.copy_from_slice(s.xd);
        // A non-finite output is the output guard's to replace.
        let _ = model.major_outputs(s);
        model.update(s);
        let changed = s.x != self.x_before.as_slice() || s.xd != self.xd_before.as_slice();
        // A round that changed nothing would repeat itself: the iteration
        // only runs after one that did.
        if changed && locator.active() {
            if let Err(SettleError::Storm { .. }) = locator.settle(model, s.t, s.x, s.xd, s.u) {
                counts.storms.increment();
            }
        }
        changed
    }
}

/// Whether the discrete states `a` and `b` hold the same modes (`modes`:
/// where they are): then they have seen the same events.
pub fn same_modes(modes: &[usize], a: &[f64], b: &[f64]) -> bool {
    modes.iter().all(|&i| a[i] == b[i])
}
