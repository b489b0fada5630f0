//! A compiled program with its workspace: the [`Model`] of a block
//! diagram, one instance per thread, whose program a parameter change can
//! replace while it runs.

use std::any::Any;
use std::sync::Arc;

use serde_json::Value;

use super::algebraic::{LoopWork, MAX_ITERATIONS};
use super::error::listed;
use super::plan::Buffers;
use super::program::Program;
use super::retune::{retuned, tunables};
use crate::model::{Definition, Layout, MajorStep, Model, NonFinite, RetuneError, StateRef};

/// A [`Program`] with a workspace: the [`Model`] of a block diagram.
pub struct DiagramModel {
    program: Arc<Program>,
    signals: Vec<f64>,
    /// Switching distances of the zero crossings, from the last pass.
    distance: Vec<f64>,
    x: Vec<f64>,
    xd: Vec<f64>,
    /// Scratch of the algebraic loops.
    loops: Vec<LoopWork>,
}

impl DiagramModel {
    /// A model evaluating `program` with a fresh workspace.
    pub fn new(program: Arc<Program>) -> Self {
        let mut signals = vec![0.0; program.n_signals];
        signals[0] = 1.0;
        let x = program.x0.clone();
        let xd = program.xd0.clone();
        let distance = vec![f64::INFINITY; program.layout.zero_crossings.len()];
        DiagramModel {
            loops: program.loop_work(),
            program,
            signals,
            distance,
            x,
            xd,
        }
    }

    /// The compiled program.
    pub fn program(&self) -> &Arc<Program> {
        &self.program
    }

    /// The program and the workspace.
    fn split(&mut self) -> (&Program, Buffers<'_>) {
        (
            &self.program,
            Buffers {
                signals: &mut self.signals,
                distance: &mut self.distance,
                x: &mut self.x,
                xd: &mut self.xd,
            },
        )
    }

    /// The workspace a minor pass evaluates in, for a compiled evaluation
    /// of the same program.
    pub fn workspace(&mut self) -> Buffers<'_> {
        self.split().1
    }

    /// Copies the state into the workspace and returns the workspace, for
    /// a compiled minor pass over it.
    pub fn load(&mut self, s: StateRef<'_>) -> Buffers<'_> {
        let w = self.workspace();
        w.x.copy_from_slice(s.x);
        w.xd.copy_from_slice(s.xd);
        w
    }

    /// Copies the state into the workspace and runs a minor pass.
    fn minor_pass(&mut self, s: StateRef<'_>) {
        self.x.copy_from_slice(s.x);
        self.xd.copy_from_slice(s.xd);
        self.program.pass(
            &mut self.signals,
            &mut self.distance,
            s.t,
            &mut self.x,
            &mut self.xd,
            s.u,
            None,
            &mut self.loops,
        );
    }

    /// The state of a major step loaded into the workspace for a compiled
    /// major pass (the interpreter's major pass does the same): the
    /// continuous states copied, the discrete states the step's own.
    pub fn load_major<'s>(&'s mut self, s: &'s mut MajorStep<'_>) -> Buffers<'s> {
        self.x.copy_from_slice(s.x);
        Buffers {
            signals: &mut self.signals,
            distance: &mut self.distance,
            x: &mut self.x,
            xd: s.xd,
        }
    }

    /// After a major pass over the workspace (interpreted, or compiled
    /// from [`DiagramModel::load_major`]): gathers the outputs into `s.y`
    /// and names what failed: an algebraic loop Newton did not solve, or
    /// the first block whose non-finite output reached a state or an
    /// output.
    pub fn finish_major(&self, s: &mut MajorStep<'_>) -> Result<(), NonFinite> {
        let t = s.t;
        self.gather_outputs(s.y);
        if let Some((k, residual)) = self
            .loops
            .iter()
            .enumerate()
            .find_map(|(k, w)| w.failed.map(|r| (k, r)))
        {
            let l = &self.program.loops()[k];
            return Err(NonFinite {
                time: t,
                place: format!(
                    "the algebraic loop through {} (Newton did not converge in {MAX_ITERATIONS} iterations, residual {residual:.1e})",
                    listed(&l.blocks)
                ),
                value: f64::NAN,
            });
        }
        // A non-finite value in a branch that nothing uses (the unselected
        // input of a Switch) is harmless; one reaching a state or an output
        // is not.
        if s.x.iter().chain(s.y.iter()).all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(self
                .program
                .locate_nonfinite(&self.signals, t)
                .expect("a non-finite signal belongs to a block output"))
        }
    }

    fn gather_outputs(&self, y: &mut [f64]) {
        for (y, &offset) in y.iter_mut().zip(&self.program.output_slots) {
            *y = self.signals[offset as usize];
        }
    }
}

impl Model for DiagramModel {
    fn layout(&self) -> &Layout {
        &self.program.layout
    }

    fn fork(&self) -> Box<dyn Model> {
        Box::new(DiagramModel::new(self.program.clone()))
    }

    fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
        self.program.sparsity.clone()
    }

    /// Latched zero-crossing modes and the iterates algebraic loops start
    /// from live in the workspace; a diagram with neither has none.
    fn pure_derivatives(&self) -> bool {
        self.program.layout.zero_crossings.is_empty() && self.loops.is_empty()
    }

    fn retune(&self, block: &str, param: &str, value: &Value) -> Result<Definition, RetuneError> {
        let program: Arc<dyn Any + Send + Sync> = Arc::new(retuned(&self.program, block, param, value)?);
        Ok(Definition(program))
    }

    fn swap_definition(&mut self, definition: &mut Definition) -> bool {
        // A reference count and pointer casts: nothing is allocated, and
        // the replaced program is dropped with `definition`, elsewhere.
        match Arc::clone(&definition.0).downcast::<Program>() {
            Ok(program) => {
                let replaced: Arc<Program> = std::mem::replace(&mut self.program, program);
                definition.0 = replaced;
                true
            }
            Err(_) => false,
        }
    }

    fn tunables(&self) -> Vec<(String, String, Value)> {
        tunables(&self.program)
    }

    fn initial_state(&mut self, x: &mut [f64], xd: &mut [f64]) {
        x.copy_from_slice(&self.program.x0);
        xd.copy_from_slice(&self.program.xd0);
    }

    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        self.minor_pass(s);
        let (p, mut b) = self.split();
        for &i in &p.stateful {
            p.minor_derivatives(i as usize, s.t, &mut b, dx);
        }
    }

    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        self.minor_pass(s);
        self.gather_outputs(y);
    }

    fn major_outputs(&mut self, s: &mut MajorStep<'_>) -> Result<(), NonFinite> {
        self.x.copy_from_slice(s.x);
        for w in &mut self.loops {
            w.failed = None;
        }
        self.program.pass(
            &mut self.signals,
            &mut self.distance,
            s.t,
            &mut self.x,
            s.xd,
            s.u,
            Some(s.hits),
            &mut self.loops,
        );
        self.finish_major(s)
    }

    fn zero_crossings(&mut self, s: StateRef<'_>, z: &mut [f64]) {
        self.minor_pass(s);
        z.copy_from_slice(&self.distance);
    }

    fn update(&mut self, s: &mut MajorStep<'_>) {
        let p = &*self.program;
        let mut b = Buffers {
            signals: &mut self.signals,
            distance: &mut self.distance,
            x: s.x,
            xd: s.xd,
        };
        for &i in &p.stateful {
            p.update_block(i as usize, s.t, &mut b, s.hits);
        }
    }
}
