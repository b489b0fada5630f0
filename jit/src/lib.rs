//! Compiles Tandem's block diagrams to machine code with Cranelift.
//!
//! It depends on the model crate alone (it compiles a `Program` and runs
//! it through the same `Model` trait); never on the runtime or any I/O.
//!
//! The passes of a diagram's flat program (the minor pass: every block's
//! outputs and switching distances, then the derivatives, what integrators
//! call at every stage; the major pass, where modes switch and discrete
//! blocks run at their hits, and the updates after it) become
//! straight-line machine code that performs each block's floating-point
//! operations in the interpreter's order, as its
//! [`Kernel`](tandem_models::blocks::Kernel) and
//! [`Update`](tandem_models::blocks::Update) document them: no fused
//! multiply-add, no reassociation, transcendental functions through the
//! same Rust functions. Results are the interpreter's bit for bit. Blocks
//! the compiler does not translate are evaluated by the interpreter in
//! their place in the order (a call from the machine code); a program with
//! algebraic loops is interpreted as a whole.
//!
//! ```
//! use std::sync::Arc;
//! use tandem_models::{diagram, Model, StateRef};
//! let text = r#"{"blocks": [
//!     {"id": "k", "type": "Gain", "params": {"gain": -2.0}},
//!     {"id": "x", "type": "Integrator", "params": {"initial": 1.0}}],
//!   "links": [{"from": "x", "to": "k"}, {"from": "k", "to": "x"}]}"#;
//! let model = diagram::compile_str(text).unwrap().model;
//! let code = tandem_jit::compile(model.program()).unwrap().expect("no algebraic loops");
//! assert_eq!(code.report.plan.compiled, 2);
//! let mut model = tandem_jit::CompiledModel::new(model, Arc::new(code));
//! let mut dx = [0.0];
//! model.derivatives(StateRef { t: 0.0, x: &[1.5], xd: &[], u: &[] }, &mut dx);
//! assert_eq!(dx, [-3.0]);
//! ```

mod codegen;
mod compile;
mod model;
mod shims;

pub use compile::{compile, plan, Code, CompileError, NotCompiled, Plan, Report};
pub use model::CompiledModel;

use std::sync::Arc;

use tandem_models::diagram::{DiagramModel, Program};
use tandem_models::Model;

/// `program` compiled, or why it is interpreted (its message is the line
/// reports print).
pub fn compile_or_why(program: &Arc<Program>) -> Result<Code, NotCompiled> {
    match compile(program) {
        Ok(Some(code)) => Ok(code),
        Ok(None) => Err(NotCompiled::AlgebraicLoops),
        Err(e) => Err(NotCompiled::Failed(e)),
    }
}

/// A loaded block diagram compiled (the loaders' `PrepareDiagram`): the
/// compiled model, or the interpreted one, with the report line.
pub fn prepare(model: DiagramModel) -> (Box<dyn Model>, Option<String>) {
    match compile_or_why(model.program()) {
        Ok(code) => {
            let report = code.report.to_string();
            (Box::new(CompiledModel::new(model, Arc::new(code))), Some(report))
        }
        Err(why) => (Box::new(model), Some(why.to_string())),
    }
}
