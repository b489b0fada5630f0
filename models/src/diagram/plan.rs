//! The flat program as data for code generators (`tandem-jit`): for each
//! block in execution order, what it computes in a minor pass
//! ([`Kernel`]) and an update ([`Update`]), and where its values sit; and
//! the interpreter's evaluations of a single block (minor, major, update),
//! for the blocks a generator leaves to it.

use std::ops::Range;

use super::entry::{Entry, Exec};
use super::program::Program;
use crate::blocks::{Kernel, Slot, Update};

/// Whether a block runs in a minor pass.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Minor {
    /// It computes its outputs.
    Runs,
    /// It computes its outputs when its enabling signal (at this offset of
    /// the signal buffer) is > 0; else as [`Minor::Held`].
    Guarded(usize),
    /// It does not run: its outputs are copied from its hold slots in the
    /// discrete states (from this offset, output after output) and its
    /// switching distances are +inf.
    Held(usize),
}

/// One block of the flat program in a minor pass.
#[derive(Clone, Debug)]
pub struct Step<'a> {
    /// What it computes.
    pub kernel: Kernel<'a>,
    /// Its input ports in the signal buffer.
    pub inputs: &'a [Slot],
    /// Its output ports in the signal buffer.
    pub outputs: &'a [Slot],
    /// Its continuous states (and derivatives).
    pub x: Range<usize>,
    /// Its discrete states; the latched modes of its zero crossings follow
    /// them (1 positive side, 0 negative).
    pub xd: Range<usize>,
    /// Its switching distances.
    pub zc: Range<usize>,
    /// Zero-crossing detection on (not `no_event`): off, every distance is
    /// +inf and every side follows the sign of its function.
    pub events: bool,
    /// Hysteresis of its zero crossings.
    pub hysteresis: f64,
    /// Whether it runs in a minor pass.
    pub minor: Minor,
    /// What it does in an update.
    pub update: Update,
    /// Where its outputs are held in the discrete states (output after
    /// output), when they are (blocks that do not run at every evaluation).
    pub hold: Option<usize>,
    /// The signal (its offset) that enables it when > 0, when guarded.
    pub guard: Option<usize>,
    /// When it runs in a major pass, enabled: at the hits of this rate, or
    /// (`None`) at every major step.
    pub rate: Option<usize>,
    /// The period of its rate in seconds (0 when continuous).
    pub period: f64,
}

/// The buffers a minor pass works in: a
/// [`DiagramModel`](super::DiagramModel)'s workspace.
pub struct Buffers<'a> {
    /// Block outputs (offset 0 holds 1.0).
    pub signals: &'a mut [f64],
    /// Switching distances of the zero crossings.
    pub distance: &'a mut [f64],
    /// Continuous states.
    pub x: &'a mut [f64],
    /// Discrete states, hold slots and modes.
    pub xd: &'a mut [f64],
}

fn range(r: (u32, u32)) -> Range<usize> {
    r.0 as usize..r.1 as usize
}

impl Program {
    /// The blocks in execution order as they run in a minor pass.
    pub fn steps(&self) -> impl Iterator<Item = Step<'_>> {
        self.entries.iter().zip(&self.blocks).map(|(e, b)| Step {
            kernel: b.kernel(),
            inputs: self.inputs_of(e),
            outputs: self.outputs_of(e),
            x: range(e.x),
            xd: range(e.xd),
            zc: range(e.zc),
            events: e.events,
            hysteresis: e.hysteresis,
            minor: minor(e),
            update: b.update_kernel(),
            hold: (e.hold != u32::MAX).then_some(e.hold as usize),
            guard: e.guard.map(|g| g as usize),
            rate: match e.exec {
                Exec::Discrete(r) => Some(usize::from(r)),
                Exec::Always | Exec::Major => None,
            },
            period: e.period,
        })
    }

    /// Number of values in the signal buffer.
    pub fn n_signals(&self) -> usize {
        self.n_signals
    }

    /// `(model input, signal offset)`: inputs copied into the signal buffer
    /// before each pass.
    pub fn input_copies(&self) -> &[(usize, u32)] {
        &self.input_copies
    }

    /// Signal offsets of the model outputs.
    pub fn output_slots(&self) -> &[u32] {
        &self.output_slots
    }

    /// Whether the program has algebraic loops (solved by Newton in each
    /// pass).
    pub fn has_loops(&self) -> bool {
        !self.loops().is_empty()
    }

    /// Evaluates block `i` of a program without algebraic loops as a minor
    /// pass does.
    pub fn minor_outputs(&self, i: usize, t: f64, b: &mut Buffers<'_>) {
        self.run_entries(i..i + 1, b.signals, b.distance, t, b.x, b.xd, None, false);
    }

    /// Evaluates block `i` of a program without algebraic loops as a major
    /// pass does at the rate hits `hits`: when it runs, its outputs may
    /// switch modes and are latched into its hold slots; else its held
    /// outputs are read back.
    pub fn major_outputs(&self, i: usize, t: f64, b: &mut Buffers<'_>, hits: &[bool]) {
        self.run_entries(i..i + 1, b.signals, b.distance, t, b.x, b.xd, Some(hits), true);
    }

    /// Block `i`'s update at a major step with the rate hits `hits`, after
    /// the major pass, when it runs then (`b.x` and `b.xd` are the step's
    /// states, which it may change).
    pub fn update_block(&self, i: usize, t: f64, b: &mut Buffers<'_>, hits: &[bool]) {
        let e = &self.entries[i];
        if self.runs(e, b.signals, Some(hits)) {
            let mut c = self.context(e, t, true, b.signals, b.x, &mut [], b.xd, b.distance);
            self.blocks[i].update(&mut c);
        }
    }

    /// Writes the derivatives of block `i`'s continuous states into their
    /// place in `dx` (all the model's derivatives), after a minor pass:
    /// zero while the block is disabled.
    pub fn minor_derivatives(&self, i: usize, t: f64, b: &mut Buffers<'_>, dx: &mut [f64]) {
        let e = &self.entries[i];
        let dx = &mut dx[range(e.x)];
        if dx.is_empty() {
            return;
        }
        // Disabled unless the enabling signal is > 0 (NaN too), as in a pass.
        let enabled = e.guard.is_none_or(|g| b.signals[g as usize] > 0.0);
        if !enabled {
            dx.fill(0.0);
            return;
        }
        let mut c = self.context(e, t, false, b.signals, b.x, dx, b.xd, b.distance);
        self.blocks[i].derivatives(&mut c);
    }
}

fn minor(e: &Entry) -> Minor {
    match (e.exec, e.guard) {
        (Exec::Always, None) => Minor::Runs,
        (Exec::Always, Some(g)) => Minor::Guarded(g as usize),
        _ => Minor::Held(e.hold as usize),
    }
}
