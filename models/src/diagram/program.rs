//! The compiled program: immutable, shared between threads; each thread
//! evaluates it with a workspace of its own (`instance.rs`).

use super::algebraic::{self, AlgebraicLoop, LoopWork};
use super::entry::{Entry, Exec, Resolved};
use super::format::Diagram;
use crate::blocks::{Block, Ctx, Slot, Switching};
use crate::model::{Layout, NonFinite};

/// A block's identity, for reports and messages.
#[derive(Clone, Debug)]
pub struct BlockInfo {
    /// Full path (`sub/inner`).
    pub path: String,
    /// Type name.
    pub kind: &'static str,
    pub(crate) rate: Resolved,
}

impl BlockInfo {
    /// The rate the block runs at, in words (`continuous`, `0.02 s`, ...).
    pub fn rate(&self) -> String {
        match self.rate {
            Resolved::Constant => "constant".into(),
            Resolved::Continuous => "continuous".into(),
            Resolved::Major => "every major step".into(),
            Resolved::Discrete(st) => st.to_string(),
        }
    }
}

/// A compiled block diagram: blocks in execution order and the layout of
/// their signals and states.
pub struct Program {
    pub(super) blocks: Vec<Box<dyn Block>>,
    pub(super) entries: Vec<Entry>,
    slots: Vec<Slot>,
    pub(super) n_signals: usize,
    pub(super) x0: Vec<f64>,
    pub(super) xd0: Vec<f64>,
    /// (model input index, signal offset) copied before each evaluation.
    pub(super) input_copies: Vec<(usize, u32)>,
    /// Signal offsets of the model outputs.
    pub(super) output_slots: Vec<u32>,
    /// Entries with continuous or discrete states.
    pub(super) stateful: Vec<u32>,
    /// For each state, the derivatives that may depend on it.
    pub(super) sparsity: Option<Vec<Vec<usize>>>,
    pub(super) layout: Layout,
    info: Vec<BlockInfo>,
    /// Torn algebraic loops, in execution order.
    loops: Vec<AlgebraicLoop>,
    /// The diagram it was compiled from, to compile it again with a
    /// parameter changed.
    pub(super) source: Option<Box<Diagram>>,
}

impl Program {
    #[expect(
        clippy::too_many_arguments,
        reason = "the parts of a compiled diagram, each made by its own compiler pass"
    )]
    pub(crate) fn new(
        blocks: Vec<Box<dyn Block>>,
        entries: Vec<Entry>,
        slots: Vec<Slot>,
        n_signals: usize,
        x0: Vec<f64>,
        xd0: Vec<f64>,
        input_copies: Vec<(usize, u32)>,
        output_slots: Vec<u32>,
        layout: Layout,
        info: Vec<BlockInfo>,
        loops: Vec<AlgebraicLoop>,
    ) -> Self {
        let stateful = entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.x.1 > e.x.0 || e.xd.1 > e.xd.0)
            .map(|(i, _)| i as u32)
            .collect();
        let sparsity = super::sparsity::structural(&entries, &slots, n_signals, layout.states.len());
        let mut program = Program {
            blocks,
            entries,
            slots,
            n_signals,
            x0,
            xd0,
            input_copies,
            output_slots,
            stateful,
            sparsity,
            layout,
            info,
            loops,
            source: None,
        };
        program.latch_initial_outputs();
        program
    }

    /// Fills the hold slots with the outputs every block gives at t = 0
    /// from its initial state and the default inputs, so that a discrete
    /// block with an offset outputs its initial value before its first hit.
    /// The same major pass settles the zero-crossing modes and what blocks
    /// keep of the last major step (Edge, HitCrossing, Pulse); it never
    /// touches continuous states or the states updates advance.
    fn latch_initial_outputs(&mut self) {
        let mut signals = vec![0.0; self.n_signals];
        signals[0] = 1.0;
        let mut x = self.x0.clone();
        let mut xd = self.xd0.clone();
        let u: Vec<f64> = self.layout.inputs.iter().map(|v| v.default).collect();
        let hits = vec![true; self.layout.rates.len()];
        let mut distance = vec![0.0; self.layout.zero_crossings.len()];
        let mut work = self.loop_work();
        self.pass(
            &mut signals,
            &mut distance,
            0.0,
            &mut x,
            &mut xd,
            &u,
            Some(&hits),
            &mut work,
        );
        self.xd0 = xd;
    }

    /// Whether a model's workspace and states fit `other` as they fit this
    /// program: the same signals, states, ports, rates, zero crossings and
    /// algebraic loops.
    pub(super) fn same_shape(&self, other: &Program) -> bool {
        self.n_signals == other.n_signals
            && self.slots == other.slots
            && self.layout == other.layout
            && self.x0.len() == other.x0.len()
            && self.xd0.len() == other.xd0.len()
            && self
                .loops
                .iter()
                .map(|l| l.pairs.len())
                .eq(other.loops.iter().map(|l| l.pairs.len()))
    }

    /// The blocks in execution order.
    pub fn blocks(&self) -> &[BlockInfo] {
        &self.info
    }

    /// Sizes and names of the model's variables.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// For each output, the inputs it depends on directly (through
    /// direct-feedthrough ports, with no state in between), sorted: what a
    /// co-simulation master needs to order sub-models and find algebraic
    /// loops between them.
    pub fn feedthrough(&self) -> Vec<Vec<usize>> {
        super::sparsity::feedthrough(
            &self.entries,
            &self.slots,
            self.n_signals,
            &self.input_copies,
            &self.output_slots,
        )
    }

    /// The torn algebraic loops.
    pub(crate) fn loops(&self) -> &[AlgebraicLoop] {
        &self.loops
    }

    /// The algebraic loops solved by Newton: for each, its blocks and its
    /// torn input ports.
    pub fn solved_loops(&self) -> impl Iterator<Item = (&[String], &[String])> {
        self.loops.iter().map(|l| (l.blocks.as_slice(), l.torn.as_slice()))
    }

    /// Scratch memory for solving the loops, one per loop.
    pub(super) fn loop_work(&self) -> Vec<LoopWork> {
        self.loops.iter().map(|l| LoopWork::new(l.pairs.len())).collect()
    }

    /// Whether block `e` runs in this pass (`hits` is `None` for minor ones).
    #[inline]
    pub(super) fn runs(&self, e: &Entry, signals: &[f64], hits: Option<&[bool]>) -> bool {
        let enabled = e.guard.is_none_or(|g| signals[g as usize] > 0.0);
        enabled
            && match (e.exec, hits) {
                (Exec::Always, _) => true,
                (Exec::Major, Some(_)) => true,
                (Exec::Discrete(r), Some(h)) => h[r as usize],
                (_, None) => false,
            }
    }

    /// The evaluation context of block `e`, over whole buffers: `x`, `xd`
    /// and `distance` are the model's, `dx` is the block's own slice.
    #[expect(
        clippy::too_many_arguments,
        reason = "a block's view of the workspace: each slice is cut at the block's own offsets"
    )]
    #[inline(always)]
    pub(super) fn context<'c>(
        &'c self,
        e: &Entry,
        t: f64,
        major: bool,
        signals: &'c mut [f64],
        x: &'c mut [f64],
        dx: &'c mut [f64],
        xd: &'c mut [f64],
        distance: &'c mut [f64],
    ) -> Ctx<'c> {
        let n_zc = (e.zc.1 - e.zc.0) as usize;
        // Most blocks have no zero crossings: no split, no distance slice.
        let (states, modes, distance): (&mut [f64], &mut [f64], &mut [f64]) = if n_zc == 0 && e.xd.0 == e.xd.1 {
            (&mut [], &mut [], &mut [])
        } else if n_zc == 0 {
            (&mut xd[e.xd.0 as usize..e.xd.1 as usize], &mut [], &mut [])
        } else {
            let (states, modes) = xd[e.xd.0 as usize..e.xd.1 as usize + n_zc].split_at_mut((e.xd.1 - e.xd.0) as usize);
            (states, modes, &mut distance[e.zc.0 as usize..e.zc.1 as usize])
        };
        Ctx {
            t,
            period: e.period,
            x: if e.x.0 == e.x.1 {
                &mut []
            } else {
                &mut x[e.x.0 as usize..e.x.1 as usize]
            },
            dx,
            xd: states,
            signals,
            inputs: self.inputs_of(e),
            outputs: self.outputs_of(e),
            switching: Switching {
                major,
                enabled: e.events,
                hysteresis: e.hysteresis,
                modes,
                distance,
            },
        }
    }

    /// Computes all block outputs and switching distances. In a major pass
    /// (`hits` given), blocks that run latch their outputs into their hold
    /// slots of `xd` and may switch modes; blocks that do not run read their
    /// held outputs and cannot switch.
    #[expect(
        clippy::too_many_arguments,
        reason = "a whole pass: the workspace slices it writes, the state it reads, and the hits and loop scratch of a major pass"
    )]
    pub(super) fn pass(
        &self,
        signals: &mut [f64],
        distance: &mut [f64],
        t: f64,
        x: &mut [f64],
        xd: &mut [f64],
        u: &[f64],
        hits: Option<&[bool]>,
        work: &mut [LoopWork],
    ) {
        for &(i, offset) in &self.input_copies {
            signals[offset as usize] = u[i];
        }
        // Plain runs of blocks, each loop solved just before its first block.
        let mut from = 0;
        for (k, l) in self.loops.iter().enumerate() {
            self.run_entries(from..l.entries.start, signals, distance, t, x, xd, hits, hits.is_some());
            let entries = l.entries.clone();
            let mut evaluate =
                |signals: &mut [f64]| self.run_entries(entries.clone(), signals, distance, t, x, xd, hits, false);
            algebraic::solve(l, &mut work[k], signals, &mut evaluate);
            from = l.entries.start;
        }
        self.run_entries(
            from..self.entries.len(),
            signals,
            distance,
            t,
            x,
            xd,
            hits,
            hits.is_some(),
        );
    }

    /// Evaluates the blocks of `range` in a pass (see [`Program::pass`]).
    /// With `latch` (a major pass) running blocks may switch modes and
    /// latch their held outputs; without it (a minor pass, or an algebraic
    /// loop's iterations) nothing is latched.
    #[expect(
        clippy::too_many_arguments,
        reason = "a pass over a range of blocks: the workspace slices it writes and the time, hits and latch that select what runs"
    )]
    pub(super) fn run_entries(
        &self,
        range: std::ops::Range<usize>,
        signals: &mut [f64],
        distance: &mut [f64],
        t: f64,
        x: &mut [f64],
        xd: &mut [f64],
        hits: Option<&[bool]>,
        latch: bool,
    ) {
        for (e, block) in self.entries[range.clone()].iter().zip(&self.blocks[range]) {
            if self.runs(e, signals, hits) {
                let mut c = self.context(e, t, latch, signals, x, &mut [], xd, distance);
                block.outputs(&mut c);
                if latch && e.hold != u32::MAX {
                    copy_outputs(self.outputs_of(e), signals, &mut xd[e.hold as usize..], true);
                }
            } else {
                distance[e.zc.0 as usize..e.zc.1 as usize].fill(f64::INFINITY);
                if e.hold != u32::MAX {
                    copy_outputs(self.outputs_of(e), signals, &mut xd[e.hold as usize..], false);
                }
            }
        }
    }

    /// The input slots of block `e`.
    pub(super) fn inputs_of(&self, e: &Entry) -> &[Slot] {
        &self.slots[e.ins as usize..e.ins as usize + e.n_in as usize]
    }

    /// The output slots of block `e`.
    pub(super) fn outputs_of(&self, e: &Entry) -> &[Slot] {
        &self.slots[e.outs as usize..e.outs as usize + e.n_out as usize]
    }

    /// The first block output (in execution order) that is not finite.
    pub(super) fn locate_nonfinite(&self, signals: &[f64], t: f64) -> Option<NonFinite> {
        for (e, info) in self.entries.iter().zip(&self.info) {
            for (j, s) in self.outputs_of(e).iter().enumerate() {
                let values = &signals[s.offset as usize..(s.offset + s.width) as usize];
                if let Some(&value) = values.iter().find(|v| !v.is_finite()) {
                    let stateful = e.x.1 > e.x.0;
                    let place = format!(
                        "block \"{}\" ({}) output {}{}",
                        info.path,
                        info.kind,
                        j + 1,
                        if stateful {
                            " (its state; look at what drives its input)"
                        } else {
                            ""
                        }
                    );
                    return Some(NonFinite { time: t, place, value });
                }
            }
        }
        None
    }
}

/// Copies a block's output slots to (`latch`) or from its hold slots.
#[inline]
fn copy_outputs(outs: &[Slot], signals: &mut [f64], hold: &mut [f64], latch: bool) {
    let mut k = 0;
    for s in outs {
        let sig = &mut signals[s.offset as usize..(s.offset + s.width) as usize];
        let held = &mut hold[k..k + s.width as usize];
        if latch {
            held.copy_from_slice(sig);
        } else {
            sig.copy_from_slice(held);
        }
        k += s.width as usize;
    }
}
