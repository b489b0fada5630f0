//! The [`Model`] of a compiled diagram: its passes run the machine code
//! over the workspace of the [`DiagramModel`] it holds, which does
//! everything else (initial states, parameter changes, naming what failed
//! in a major pass).

use std::any::Any;
use std::sync::Arc;

use serde_json::Value;
use tandem_models::diagram::{Buffers, DiagramModel, Program};
use tandem_models::{Definition, Layout, MajorStep, Model, NonFinite, RetuneError, StateRef};

use crate::compile::{compile, Code, Function};
use crate::shims::Env;

/// A block diagram whose passes run compiled.
pub struct CompiledModel {
    inner: DiagramModel,
    code: Arc<Code>,
}

impl CompiledModel {
    /// `model` with its minor evaluations run by `code`, compiled from the
    /// model's program.
    pub fn new(model: DiagramModel, code: Arc<Code>) -> Self {
        CompiledModel { inner: model, code }
    }

    /// What was compiled.
    pub fn code(&self) -> &Arc<Code> {
        &self.code
    }

    /// Whether the code is the program's: a parameter change replaces the
    /// program, whose blocks are then interpreted.
    fn current(&self) -> bool {
        Arc::ptr_eq(&self.code.program, self.inner.program())
    }

    /// Whether a state of these inputs `u`, states `x` and discrete
    /// states `xd` fits the layout the code was compiled for.
    fn fits(&self, u: &[f64], x: &[f64], xd: &[f64]) -> bool {
        let layout = self.inner.layout();
        u.len() >= layout.inputs.len() && x.len() == layout.states.len() && xd.len() == layout.discrete
    }

    /// Whether the major step `s` fits the layout the code was compiled for.
    fn fits_major(&self, s: &MajorStep<'_>) -> bool {
        let layout = self.inner.layout();
        s.hits.len() >= layout.rates.len() && s.y.len() == layout.outputs.len() && self.fits(s.u, s.x, s.xd)
    }

    /// A minor pass at `s`, then the derivatives into `dx` when given.
    /// Returns `false`, having done nothing, when the code is stale or the
    /// buffers do not fit the model (the interpreter then says why).
    fn run(&mut self, s: StateRef<'_>, dx: Option<&mut [f64]>) -> bool {
        let fits = dx
            .as_ref()
            .is_none_or(|dx| dx.len() == self.inner.layout().states.len());
        if !fits || !self.fits(s.u, s.x, s.xd) || !self.current() {
            return false;
        }
        let code = &*self.code;
        let derivatives = dx.is_some();
        let env = Env::new(&code.program, self.inner.load(s), s.u, s.t, dx, &[]);
        // SAFETY: the code was compiled from this program, whose workspace
        // `env` points into; the buffers are not otherwise used meanwhile.
        unsafe {
            run(&code.pass, &env);
            if derivatives {
                run(&code.derivatives, &env);
            }
        }
        true
    }
}

/// Calls `functions` in order on `env`.
///
/// # Safety
/// They were compiled from the program of `env`, which points into live
/// buffers that fit it.
unsafe fn run(functions: &[Function], env: &Env) {
    for f in functions {
        // SAFETY: as the caller's.
        unsafe { f(env) };
    }
}

impl Model for CompiledModel {
    fn layout(&self) -> &Layout {
        self.inner.layout()
    }

    fn fork(&self) -> Box<dyn Model> {
        Box::new(CompiledModel {
            inner: DiagramModel::new(Arc::clone(self.inner.program())),
            code: Arc::clone(&self.code),
        })
    }

    fn initial_state(&mut self, x: &mut [f64], xd: &mut [f64]) {
        self.inner.initial_state(x, xd);
    }

    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        if !self.run(s, Some(&mut *dx)) {
            self.inner.derivatives(s, dx);
        }
    }

    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        if !self.run(s, None) {
            return self.inner.outputs(s, y);
        }
        let slots = self.code.program.output_slots();
        let b = self.inner.workspace();
        for (y, &offset) in y.iter_mut().zip(slots) {
            *y = b.signals[offset as usize];
        }
    }

    fn zero_crossings(&mut self, s: StateRef<'_>, z: &mut [f64]) {
        if !self.run(s, None) {
            return self.inner.zero_crossings(s, z);
        }
        z.copy_from_slice(self.inner.workspace().distance);
    }

    fn major_outputs(&mut self, s: &mut MajorStep<'_>) -> Result<(), NonFinite> {
        if !self.fits_major(s) || !self.current() {
            return self.inner.major_outputs(s);
        }
        let (t, u, hits) = (s.t, s.u, s.hits);
        let code = &*self.code;
        let env = Env::new(&code.program, self.inner.load_major(s), u, t, None, hits);
        // SAFETY: as in a minor pass; `xd` is the step's own.
        unsafe { run(&code.major, &env) };
        self.inner.finish_major(s)
    }

    fn update(&mut self, s: &mut MajorStep<'_>) {
        if !self.fits_major(s) || !self.current() {
            return self.inner.update(s);
        }
        let code = &*self.code;
        let w = self.inner.workspace();
        let b = Buffers {
            signals: w.signals,
            distance: w.distance,
            x: s.x,
            xd: s.xd,
        };
        let env = Env::new(&code.program, b, s.u, s.t, None, s.hits);
        // SAFETY: as in a major pass; `x` and `xd` are the step's own.
        unsafe { run(&code.update, &env) };
    }

    fn jacobian(&mut self, s: StateRef<'_>, jac: &mut [f64]) -> bool {
        self.inner.jacobian(s, jac)
    }

    /// The retuned program compiled here, off the real-time threads, so
    /// that the model stays compiled; the program alone (interpreted from
    /// the swap on) when its code does not compile.
    fn retune(&self, block: &str, param: &str, value: &Value) -> Result<Definition, RetuneError> {
        let definition = self.inner.retune(block, param, value)?;
        let Some(program) = definition.get::<Program>() else {
            return Ok(definition);
        };
        match compile(&program) {
            Ok(Some(code)) => Ok(Definition::new(Arc::new(code))),
            _ => Ok(definition),
        }
    }

    /// Swaps the code and its program together (reference counts and
    /// pointer casts: nothing is allocated). The replaced code goes back in
    /// `definition` holding the replaced program, which is so freed off
    /// this thread, unless the code was already stale (after a retune that
    /// did not compile).
    fn swap_definition(&mut self, definition: &mut Definition) -> bool {
        let Some(code) = definition.get::<Code>() else {
            return self.inner.swap_definition(definition);
        };
        let program: Arc<dyn Any + Send + Sync> = code.program.clone();
        if !self.inner.swap_definition(&mut Definition::new(program)) {
            return false;
        }
        let replaced: Arc<Code> = std::mem::replace(&mut self.code, code);
        definition.set(replaced);
        true
    }

    fn evaluation(&self) -> Option<String> {
        Some(if self.current() {
            self.code.report.to_string()
        } else {
            "interpreted since a parameter change whose code did not compile".to_string()
        })
    }

    fn tunables(&self) -> Vec<(String, String, Value)> {
        self.inner.tunables()
    }

    fn direct_feedthrough(&self) -> Option<Vec<Vec<usize>>> {
        self.inner.direct_feedthrough()
    }

    fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
        self.inner.sparsity()
    }

    /// The compiled code keeps nothing between calls beyond the
    /// interpreter's workspace, which it shares.
    fn pure_derivatives(&self) -> bool {
        self.inner.pure_derivatives()
    }
}
