//! One block of the flat program as the evaluator sees it: where its ports,
//! states and zero crossings sit, when it runs, and the rate it resolved to.

use crate::model::SampleTime;

/// The rate a block ends up running at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Resolved {
    Constant,
    Discrete(SampleTime),
    /// Fed by several discrete rates: evaluated at every major step.
    Major,
    Continuous,
}

/// When a block computes its outputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Exec {
    /// At every evaluation (continuous and constant blocks).
    Always,
    /// At every major step, held in between.
    Major,
    /// At the hits of a rate, held in between.
    Discrete(u16),
}

/// Where one block's ports and states sit.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub ins: u32,
    pub n_in: u16,
    pub outs: u32,
    pub n_out: u16,
    pub x: (u32, u32),
    /// The block's discrete states in `xd`; the modes of its zero crossings
    /// follow them.
    pub xd: (u32, u32),
    /// The block's zero crossings (indices into the distance buffer).
    pub zc: (u32, u32),
    /// Zero-crossing detection on (not `no_event`).
    pub events: bool,
    /// Hysteresis of its zero crossings.
    pub hysteresis: f64,
    /// Offset in `xd` of the held outputs, or `u32::MAX` when never held.
    pub hold: u32,
    pub exec: Exec,
    /// Signal that enables the block (> 0), if guarded.
    pub guard: Option<u32>,
    pub period: f64,
    /// Bit `i` set: input `i` feeds its outputs directly (inputs beyond
    /// 64 are taken to).
    pub feedthrough: u64,
}

impl Entry {
    /// Whether input `i` feeds the block's outputs directly.
    pub fn feeds_through(&self, i: usize) -> bool {
        i >= 64 || self.feedthrough & (1 << i) != 0
    }
}
