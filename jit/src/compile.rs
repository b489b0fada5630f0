//! Compiles a program's passes (minor, derivatives, major, updates) to
//! machine code, in functions of a bounded number of blocks.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cranelift_codegen::ir::{types, AbiParam, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Module};
use tandem_models::diagram::{Program, Step};

use crate::codegen::{
    prove, same_in_both_passes, size, translates_derivatives, translates_major, translates_outputs, translates_update,
    Bounds, Emitter, Refusal, ShimSignatures,
};
use crate::shims::Env;

/// Blocks per generated function: bounds the code generator's work on one
/// function (its cost grows faster than linearly with the size).
const CHUNK: usize = 1000;

/// Values (the [`size`] of its translated blocks, or 1 for a call into the
/// interpreter) per generated function, the other bound of its length.
const BUDGET: usize = 4096;

/// The most model inputs compiled code copies itself; a model with more
/// has them copied by one call.
const INLINE_INPUTS: usize = 256;

/// `indices` cut into runs of at most [`CHUNK`] blocks and [`BUDGET`]
/// values, `first` values already taken in the first; `translated` tells
/// which blocks have code of their size (the others: one call).
fn chunks(steps: &[Step<'_>], indices: &[usize], first: usize, translated: fn(&Step<'_>) -> bool) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new()];
    let mut cost = first;
    for &i in indices {
        let c = if translated(&steps[i]) {
            size(&steps[i]).max(1)
        } else {
            1
        };
        let current = out.last().map_or(0, Vec::len);
        if current > 0 && (current == CHUNK || cost + c > BUDGET) {
            out.push(Vec::new());
            cost = 0;
        }
        cost += c;
        if let Some(last) = out.last_mut() {
            last.push(i);
        }
    }
    out
}

/// Why a program could not be compiled.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// This machine's instruction set is not supported by Cranelift.
    #[error("no code generator for this machine: {0}")]
    Host(String),
    /// The code generator failed.
    #[error("code generation failed: {0}")]
    Codegen(String),
    /// A block whose kernel, ports or states the code generator could not
    /// prove it translates within bounds (a defect of the model compiler's
    /// checks, which should have refused the model: report it).
    #[error("block \"{block}\" ({kind}) is not compiled: {why}")]
    Block {
        /// The block's path.
        block: String,
        /// Its type.
        kind: String,
        /// What does not fit.
        why: String,
    },
}

/// Why a program is not compiled and is interpreted instead.
#[derive(Debug, thiserror::Error)]
pub enum NotCompiled {
    /// It has algebraic loops, solved by Newton in the interpreter.
    #[error("interpreted: algebraic loops (solved by Newton) are not compiled")]
    AlgebraicLoops,
    /// The compiler failed.
    #[error("interpreted: {0}")]
    Failed(#[from] CompileError),
}

/// What [`compile`] translates of a program, proved block by block without
/// generating code (what `tandem check` reports).
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// Blocks in the program.
    pub blocks: usize,
    /// Blocks whose minor evaluation (outputs and derivatives) compiles.
    pub compiled: usize,
    /// Block types left to the interpreter, with their number of blocks.
    pub interpreted: BTreeMap<String, usize>,
    /// Of the compiled blocks, the types whose major evaluation or update
    /// the interpreter does (discrete blocks at their hits, blocks keeping
    /// a value of the last major step), with their number of blocks.
    pub at_major_steps: BTreeMap<String, usize>,
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} of {} blocks compile", self.compiled, self.blocks)?;
        self.write_interpreted(f)
    }
}

impl Plan {
    /// `; interpreted: Kind (n), ...` when some blocks are interpreted,
    /// then `; interpreted at major steps: Kind (n), ...`.
    fn write_interpreted(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (what, kinds) in [
            ("interpreted", &self.interpreted),
            ("interpreted at major steps", &self.at_major_steps),
        ] {
            if !kinds.is_empty() {
                let kinds: Vec<String> = kinds.iter().map(|(k, n)| format!("{k} ({n})")).collect();
                write!(f, "; {what}: {}", kinds.join(", "))?;
            }
        }
        Ok(())
    }
}

/// Proves every block of `program` (see [`prove`]) and counts what
/// compiles: what code generation may then take as given.
fn prove_all(program: &Program, steps: &[Step<'_>]) -> Result<Plan, CompileError> {
    let bounds = Bounds::of(program);
    let (mut interpreted, mut at_major_steps) = (BTreeMap::new(), BTreeMap::new());
    let mut compiled = 0;
    for (i, (step, info)) in steps.iter().zip(program.blocks()).enumerate() {
        prove(step, &bounds).map_err(|why| refused(program, Some(i), why))?;
        let derivatives_compiled = step.x.is_empty() || translates_derivatives(step);
        let stateless = step.x.is_empty() && step.xd.is_empty();
        let kind = info.kind.to_string();
        if !(translates_outputs(step) && derivatives_compiled) {
            *interpreted.entry(kind).or_insert(0) += 1;
            continue;
        }
        compiled += 1;
        if !translates_major(step) || !(stateless || translates_update(step)) {
            *at_major_steps.entry(kind).or_insert(0) += 1;
        }
    }
    Ok(Plan {
        blocks: steps.len(),
        compiled,
        interpreted,
        at_major_steps,
    })
}

/// Block `i`'s refusal as a compile error naming the block (`None`: the
/// copies of the model's inputs).
fn refused(program: &Program, i: Option<usize>, why: Refusal) -> CompileError {
    match i.and_then(|i| program.blocks().get(i)) {
        Some(b) => CompileError::Block {
            block: b.path.clone(),
            kind: b.kind.to_string(),
            why,
        },
        None => CompileError::Codegen(format!("the model's inputs: {why}")),
    }
}

/// What [`compile`] would translate of `program`, proved without
/// generating code; or why it is interpreted.
pub fn plan(program: &Program) -> Result<Plan, NotCompiled> {
    if program.has_loops() {
        return Err(NotCompiled::AlgebraicLoops);
    }
    let steps: Vec<Step<'_>> = program.steps().collect();
    Ok(prove_all(program, &steps)?)
}

/// The passes compiled, each into its own functions.
#[derive(Clone, Copy, PartialEq)]
enum Pass {
    Minor,
    Derivatives,
    Major,
    Update,
}

/// A generated function.
pub(crate) type Function = unsafe extern "C" fn(*const Env);

/// A program's compiled passes.
pub struct Code {
    /// The program compiled (its parameters are in the code).
    pub(crate) program: Arc<Program>,
    /// The minor pass: inputs, then every block's outputs, in order.
    pub(crate) pass: Vec<Function>,
    /// The derivatives of the blocks with continuous states, after a pass.
    pub(crate) derivatives: Vec<Function>,
    /// The major pass: inputs, then every block's outputs, modes switching
    /// and discrete blocks running at their hits.
    pub(crate) major: Vec<Function>,
    /// The updates of the blocks with states, after a major pass.
    pub(crate) update: Vec<Function>,
    /// What was compiled.
    pub report: Report,
    /// Owns the machine code, freed on drop.
    module: Option<JITModule>,
}

// SAFETY: after `finalize_definitions` the module's code is immutable and
// only called; the module itself is touched again only when dropped.
unsafe impl Send for Code {}
// SAFETY: as for `Send`.
unsafe impl Sync for Code {}

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: the functions are only called through `self`, which
            // is being dropped; models hold `Code` in an `Arc`.
            unsafe { module.free_memory() };
        }
    }
}

/// What the compiler translated and what it left to the interpreter.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// What was translated, as planned.
    pub plan: Plan,
    /// Time spent compiling.
    pub time: Duration,
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "compiled {} of {} blocks in {:.1} ms",
            self.plan.compiled,
            self.plan.blocks,
            self.time.as_secs_f64() * 1e3
        )?;
        self.plan.write_interpreted(f)
    }
}

/// Compiles `program`'s minor pass, or `None` when it has algebraic loops
/// (solved by Newton, left to the interpreter as a whole).
pub fn compile(program: &Arc<Program>) -> Result<Option<Code>, CompileError> {
    if program.has_loops() {
        return Ok(None);
    }
    let start = Instant::now();
    let mut flags = settings::builder();
    let codegen = |e: &dyn fmt::Display| CompileError::Codegen(e.to_string());
    for (key, value) in [
        ("opt_level", "speed"),
        ("use_colocated_libcalls", "false"),
        ("is_pic", "false"),
    ] {
        flags.set(key, value).map_err(|e| codegen(&e))?;
    }
    let isa = cranelift_native::builder()
        .map_err(|e| CompileError::Host(e.to_string()))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| codegen(&e))?;
    let mut module = JITModule::new(JITBuilder::with_isa(isa, default_libcall_names()));
    let mut signature = module.make_signature();
    signature.params.push(AbiParam::new(types::I64));
    let shims = ShimSignatures::new(&signature);

    let steps: Vec<Step<'_>> = program.steps().collect();
    // Code generation takes as given only what this has proved.
    let plan = prove_all(program, &steps)?;
    let bounds = Bounds::of(program);
    let mut ids: Vec<(Pass, FuncId)> = Vec::new();
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();
    type Emit<'e> = &'e dyn Fn(&mut Emitter<'_>) -> Result<(), (Option<usize>, Refusal)>;
    let mut define = |module: &mut JITModule, major: bool, emit: Emit<'_>| -> Result<FuncId, CompileError> {
        let id = module.declare_anonymous_function(&signature).map_err(|e| codegen(&e))?;
        ctx.func.signature = signature.clone();
        ctx.func.name = UserFuncName::user(0, id.as_u32());
        let mut e = Emitter::new(FunctionBuilder::new(&mut ctx.func, &mut fctx), &shims, bounds, major);
        emit(&mut e).map_err(|(i, why)| refused(program, i, why))?;
        e.finish();
        module.define_function(id, &mut ctx).map_err(|e| codegen(&e))?;
        module.clear_context(&mut ctx);
        Ok(id)
    };
    let inputs = program.input_copies();
    let inline = inputs.len() <= INLINE_INPUTS;
    let all: Vec<usize> = (0..steps.len()).collect();
    // A program whose blocks all evaluate alike in both passes (continuous
    // blocks without zero crossings) runs its minor pass's code for the
    // major pass: a third less to compile, and one copy of it in the cache.
    let major_as_minor = steps.iter().all(same_in_both_passes);
    let passes = if major_as_minor {
        &[Pass::Minor][..]
    } else {
        &[Pass::Minor, Pass::Major][..]
    };
    for &pass in passes {
        let major = pass == Pass::Major;
        let translated = if major { translates_major } else { translates_outputs };
        for (c, chunk) in chunks(&steps, &all, if inline { inputs.len() } else { 1 }, translated)
            .iter()
            .enumerate()
        {
            let id = define(&mut module, major, &|e| {
                if c == 0 && inline {
                    for &(i, offset) in inputs {
                        e.input(i, offset as usize).map_err(|why| (None, why))?;
                    }
                } else if c == 0 {
                    e.inputs_copied();
                }
                for &i in chunk {
                    e.outputs(i, &steps[i]).map_err(|why| (Some(i), why))?;
                }
                Ok(())
            })?;
            ids.push((pass, id));
        }
    }
    let with_states: Vec<usize> = (0..steps.len()).filter(|&i| !steps[i].x.is_empty()).collect();
    let with_any_state: Vec<usize> = (0..steps.len())
        .filter(|&i| !steps[i].x.is_empty() || !steps[i].xd.is_empty())
        .collect();
    for (pass, blocks, translated) in [
        (
            Pass::Derivatives,
            &with_states,
            translates_derivatives as fn(&Step<'_>) -> bool,
        ),
        (Pass::Update, &with_any_state, translates_update),
    ] {
        for chunk in chunks(&steps, blocks, 0, translated).iter().filter(|c| !c.is_empty()) {
            let id = define(&mut module, false, &|e| {
                for &i in chunk {
                    match pass {
                        Pass::Update => e.update(i, &steps[i]),
                        _ => e.derivatives(i, &steps[i]),
                    }
                    .map_err(|why| (Some(i), why))?;
                }
                Ok(())
            })?;
            ids.push((pass, id));
        }
    }
    module.finalize_definitions().map_err(|e| codegen(&e))?;

    let mut functions: [Vec<Function>; 4] = Default::default();
    for (pass, id) in ids {
        // SAFETY: defined above with the signature `fn(*const Env)`.
        let f: Function = unsafe { std::mem::transmute(module.get_finalized_function(id)) };
        functions[pass as usize].push(f);
    }
    let [pass, derivatives, major, update] = functions;
    let major = if major_as_minor { pass.clone() } else { major };
    let report = Report {
        plan,
        time: start.elapsed(),
    };
    drop(steps);
    Ok(Some(Code {
        program: Arc::clone(program),
        pass,
        derivatives,
        major,
        update,
        report,
        module: Some(module),
    }))
}
