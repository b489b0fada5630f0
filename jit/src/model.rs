//! The [`Model`] of a compiled diagram: minor evaluations run the machine
//! code over the workspace of the [`DiagramModel`] it holds, which does
//! everything else (major passes, updates, parameter changes).

use std::sync::Arc;

use serde_json::Value;
use tandem_models::diagram::{Buffers, DiagramModel};
use tandem_models::{Definition, Layout, MajorStep, Model, NonFinite, RetuneError, StateRef};

use crate::compile::Code;
use crate::shims::Env;

/// A block diagram whose minor evaluations run compiled.
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

    /// A minor pass at `s`, then the derivatives into `dx` when given.
    /// Returns `false`, having done nothing, when the code is stale or the
    /// buffers do not fit the model (the interpreter then says why).
    fn run(&mut self, s: StateRef<'_>, dx: Option<&mut [f64]>) -> bool {
        let layout = self.inner.layout();
        let fits = s.u.len() >= layout.inputs.len() && dx.as_ref().is_none_or(|dx| dx.len() == layout.states.len());
        if !fits || !self.current() {
            return false;
        }
        let code = &*self.code;
        let b: Buffers<'_> = self.inner.load(s);
        let (dx_ptr, dx_len) = match dx {
            Some(dx) => (dx.as_mut_ptr(), dx.len()),
            None => (std::ptr::null_mut(), 0),
        };
        let env = Env {
            lens: [b.signals.len(), b.distance.len(), b.x.len(), b.xd.len(), dx_len],
            signals: b.signals.as_mut_ptr(),
            distance: b.distance.as_mut_ptr(),
            x: b.x.as_mut_ptr(),
            xd: b.xd.as_mut_ptr(),
            dx: dx_ptr,
            u: s.u.as_ptr(),
            t: s.t,
            program: Arc::as_ptr(&code.program),
        };
        // SAFETY: the code was compiled from this program, whose workspace
        // `env` points into; the buffers are not otherwise used meanwhile.
        unsafe {
            for f in &code.pass {
                f(&env);
            }
            if !dx_ptr.is_null() {
                for f in &code.derivatives {
                    f(&env);
                }
            }
        }
        true
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
        self.inner.major_outputs(s)
    }

    fn update(&mut self, s: &mut MajorStep<'_>) {
        self.inner.update(s);
    }

    fn jacobian(&mut self, s: StateRef<'_>, jac: &mut [f64]) -> bool {
        self.inner.jacobian(s, jac)
    }

    fn retune(&self, block: &str, param: &str, value: &Value) -> Result<Definition, RetuneError> {
        self.inner.retune(block, param, value)
    }

    fn swap_definition(&mut self, definition: &mut Definition) -> bool {
        self.inner.swap_definition(definition)
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
