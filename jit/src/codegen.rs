//! Translates a program's passes into Cranelift IR: the minor pass, the
//! major pass (modes switch) and the updates, as straight-line code per
//! block, following each [`Kernel`]'s and [`Update`]'s documented
//! operations in order, and a call into the interpreter for each block it
//! does not translate.
//!
//! Compiled code indexes nothing at run time: every place it reads or
//! writes is a constant here. So nothing is emitted for a block before
//! [`prove`] has checked its kernel against its ports and states (a gain
//! per element of its output, a state per integrator element, ...) and
//! every place against the buffers; the emitter's own accessors check
//! again. A block that does not fit is a [`Refusal`], which the compiler
//! reports naming the block: never a panic, never an access out of bounds.

use std::collections::HashMap;
use std::mem::offset_of;

use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlags, SigRef, Signature, Type, Value};
use cranelift_frontend::FunctionBuilder;
use tandem_models::blocks::kernel::{Criterion, FoldOp, Kernel, Relation, Unary, Update};
use tandem_models::blocks::Slot;
use tandem_models::diagram::{Minor, Program, Step};

use crate::shims::{self, Env};

mod outputs;
mod passes;

/// The buffers compiled code reads and writes, in the order of their
/// pointers in [`Env`].
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Buf {
    Signals,
    Distance,
    X,
    Xd,
    Dx,
}

impl Buf {
    fn name(self) -> &'static str {
        match self {
            Buf::Signals => "signals",
            Buf::Distance => "switching distances",
            Buf::X => "states",
            Buf::Xd => "discrete states",
            Buf::Dx => "derivatives",
        }
    }
}

/// Why the code generator refuses a block, in words (the compiler adds
/// the block's path and type).
pub(crate) type Refusal = String;

/// The lengths of the buffers compiled code works in, from the program.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    signals: usize,
    distance: usize,
    x: usize,
    xd: usize,
    inputs: usize,
    rates: usize,
}

impl Bounds {
    /// The buffers of `program`'s workspace.
    pub(crate) fn of(program: &Program) -> Self {
        let layout = program.layout();
        Bounds {
            signals: program.n_signals(),
            distance: layout.zero_crossings.len(),
            x: layout.states.len(),
            xd: layout.discrete,
            inputs: layout.inputs.len(),
            rates: layout.rates.len(),
        }
    }

    fn len(&self, buf: Buf) -> usize {
        match buf {
            Buf::Signals => self.signals,
            Buf::Distance => self.distance,
            Buf::X | Buf::Dx => self.x,
            Buf::Xd => self.xd,
        }
    }
}

/// Whether `slot` lies inside a signal buffer of `n` values.
fn inside(slot: &Slot, n: usize) -> bool {
    slot.offset as usize + slot.width as usize <= n
}

/// Checks `cond`, else refuses with `why`.
fn require(cond: bool, why: impl FnOnce() -> String) -> Result<(), Refusal> {
    if cond {
        Ok(())
    } else {
        Err(why())
    }
}

/// Checks that block `s` fits the buffers of `bounds`, and, where the code
/// generator translates it, that its kernel's parameters fit its ports and
/// states: what the emitter then takes as given. The model compiler has
/// checked every parameter's shape (`params::Shape`); this is the code
/// generator's own proof, so that a kernel it was never shown cannot make
/// it index out of bounds.
pub(crate) fn prove(s: &Step<'_>, bounds: &Bounds) -> Result<(), Refusal> {
    for (what, slots) in [("input", s.inputs), ("output", s.outputs)] {
        for (i, slot) in slots.iter().enumerate() {
            require(inside(slot, bounds.signals), || {
                format!(
                    "{what} {} (values {} to {}) lies beyond the {} signals",
                    i + 1,
                    slot.offset,
                    slot.offset as usize + slot.width as usize,
                    bounds.signals
                )
            })?;
        }
    }
    require(s.x.start <= s.x.end && s.x.end <= bounds.x, || {
        format!("its states {:?} lie beyond the model's {}", s.x, bounds.x)
    })?;
    require(s.zc.start <= s.zc.end && s.zc.end <= bounds.distance, || {
        format!(
            "its zero crossings {:?} lie beyond the model's {}",
            s.zc, bounds.distance
        )
    })?;
    require(s.xd.start <= s.xd.end && s.xd.end + s.zc.len() <= bounds.xd, || {
        format!(
            "its discrete states {:?} and {} modes lie beyond the model's {}",
            s.xd,
            s.zc.len(),
            bounds.xd
        )
    })?;
    let holds = matches!(s.minor, Minor::Held(_) | Minor::Guarded(_));
    require(!holds || s.hold.is_some(), || {
        "it does not always run, yet holds no outputs".to_string()
    })?;
    if let Some(hold) = s.hold {
        let held: usize = s.outputs.iter().map(|o| o.width as usize).sum();
        require(hold + held <= bounds.xd, || {
            format!(
                "its {held} held outputs from {hold} lie beyond the model's {} discrete states",
                bounds.xd
            )
        })?;
    }
    if let Some(g) = s.guard {
        require(g < bounds.signals, || {
            format!("its enabling signal {g} lies beyond the {} signals", bounds.signals)
        })?;
    }
    if let Some(r) = s.rate {
        require(r < bounds.rates, || {
            format!("its rate {r} is beyond the model's {}", bounds.rates)
        })?;
    }
    if translates_kernel(s) {
        prove_outputs(s)?;
    }
    if translates_derivatives(s) {
        prove_derivatives(s)?;
    }
    if translates_update(s) {
        prove_update(s)?;
    }
    Ok(())
}

/// What [`Emitter::update`] takes as given of a translated update.
fn prove_update(s: &Step<'_>) -> Result<(), Refusal> {
    match s.update {
        Update::Opaque | Update::Nothing | Update::Clamp { .. } => Ok(()),
        Update::Delay | Update::Accumulate { .. } => ports(s).broadcast(0, s.xd.len()),
        Update::SumAndLast => {
            let p = ports(s);
            p.inputs(1)?;
            p.discrete(2)
        }
        Update::Transfer => match s.kernel {
            Kernel::DiscreteTransfer { .. } => prove_outputs(s),
            _ => Err("its update follows a discrete transfer function's kernel, which it does not have".into()),
        },
        Update::Count { .. } => require(s.xd.len() == 1, || {
            format!("it has {} discrete states, a count is one", s.xd.len())
        }),
    }
}

/// The widths of a step's ports.
struct Ports<'s> {
    ins: Vec<usize>,
    outs: Vec<usize>,
    s: &'s Step<'s>,
}

impl Ports<'_> {
    /// Exactly `n` inputs.
    fn inputs(&self, n: usize) -> Result<(), Refusal> {
        require(self.ins.len() == n, || {
            format!("it has {} inputs, its kernel reads {n}", self.ins.len())
        })
    }

    /// At least one output, whose first has `w >= 1` elements.
    fn width(&self) -> Result<usize, Refusal> {
        match self.outs.first() {
            Some(&w) if w >= 1 => Ok(w),
            _ => Err(format!(
                "its kernel writes output 1, which it does not have ({:?})",
                self.outs
            )),
        }
    }

    /// Input `i` is a scalar (broadcast) or of width `w`.
    fn broadcast(&self, i: usize, w: usize) -> Result<(), Refusal> {
        match self.ins.get(i) {
            Some(&wi) if wi == 1 || wi == w => Ok(()),
            Some(&wi) => Err(format!(
                "input {} has width {wi}, neither 1 nor the output's {w}",
                i + 1
            )),
            None => Err(format!("its kernel reads input {}, which it does not have", i + 1)),
        }
    }

    /// Every input is a scalar or of width `w`.
    fn all_broadcast(&self, w: usize) -> Result<(), Refusal> {
        (0..self.ins.len()).try_for_each(|i| self.broadcast(i, w))
    }

    /// The block has `n` zero crossings.
    fn crossings(&self, n: usize) -> Result<(), Refusal> {
        let have = self.s.zc.len();
        require(have == n, || {
            format!("it has {have} zero crossings, its kernel switches through {n}")
        })
    }

    /// The block has at least `n` discrete states.
    fn discrete(&self, n: usize) -> Result<(), Refusal> {
        let have = self.s.xd.len();
        require(have >= n, || {
            format!("it has {have} discrete states, its kernel reads {n}")
        })
    }

    /// The block has `n` continuous states.
    fn states(&self, n: usize) -> Result<(), Refusal> {
        let have = self.s.x.len();
        require(have == n, || format!("it has {have} states, its kernel has {n}"))
    }
}

fn ports<'s>(s: &'s Step<'s>) -> Ports<'s> {
    Ports {
        ins: s.inputs.iter().map(|p| p.width as usize).collect(),
        outs: s.outputs.iter().map(|p| p.width as usize).collect(),
        s,
    }
}

/// A parameter list of `have` values where the kernel takes `want`.
fn count(what: &str, have: usize, want: usize) -> Result<(), Refusal> {
    require(have == want, || {
        format!("{what} has {have} values where its ports need {want}")
    })
}

/// What [`Emitter::outputs`] takes as given of a translated block's kernel.
/// The match has no catch-all: a kernel the compiler learns does not
/// compile until its proof is written here.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per kernel, each a few shape checks; no catch-all, so that a new kernel must state its proof here"
)]
fn prove_outputs(s: &Step<'_>) -> Result<(), Refusal> {
    let p = ports(s);
    match s.kernel {
        Kernel::Opaque => Ok(()),
        Kernel::Nothing => Ok(()),
        Kernel::Merge { n } => {
            let w = p.width()?;
            p.inputs(2 * n)?;
            (0..n).try_for_each(|i| {
                require(p.ins[i] == w, || {
                    format!("input {} has width {}, not the output's {w}", i + 1, p.ins[i])
                })
            })
        }
        Kernel::Lookup2D(_) => {
            let w = p.width()?;
            p.inputs(2)?;
            p.all_broadcast(w)
        }
        Kernel::Pass | Kernel::Unary(_) | Kernel::Lookup(_) => {
            let w = p.width()?;
            p.inputs(1)?;
            p.broadcast(0, w)
        }
        Kernel::Mux => {
            let w = p.width()?;
            require(p.outs.len() == 1, || {
                format!("it has {} outputs, Mux writes one", p.outs.len())
            })?;
            let total: usize = p.ins.iter().sum();
            require(total == w, || {
                format!("its inputs have {total} elements, its output {w}")
            })
        }
        Kernel::Demux => {
            p.inputs(1)?;
            let total: usize = p.outs.iter().sum();
            require(p.ins[0] == total, || {
                format!("its input has {} elements, its outputs {total}", p.ins[0])
            })
        }
        Kernel::Switch(criterion) => {
            let w = p.width()?;
            p.inputs(3)?;
            p.broadcast(0, w)?;
            p.broadcast(2, w)?;
            p.crossings(usize::from(!matches!(criterion, Criterion::NonZero)))
        }
        Kernel::Gain(g) => {
            let w = p.width()?;
            p.inputs(1)?;
            p.broadcast(0, w)?;
            if g.len() != 1 {
                count("gain", g.len(), w)?;
            }
            Ok(())
        }
        Kernel::Fold { inverse, .. } => {
            let w = p.width()?;
            count("the list of signs", inverse.len(), p.ins.len())?;
            require(!inverse.is_empty(), || "it has no inputs to fold".to_string())?;
            if inverse.len() == 1 {
                require(w == 1, || {
                    format!("folding one input gives a scalar, its output has width {w}")
                })
            } else {
                p.all_broadcast(w)
            }
        }
        Kernel::Binary(_) => {
            let w = p.width()?;
            p.inputs(2)?;
            p.all_broadcast(w)
        }
        Kernel::Abs | Kernel::Sign => {
            let w = p.width()?;
            p.inputs(1)?;
            p.broadcast(0, w)?;
            p.crossings(w)
        }
        Kernel::MinMax { .. } => {
            let w = p.width()?;
            p.inputs(2)?;
            p.all_broadcast(w)?;
            p.crossings(w)
        }
        Kernel::Saturation { .. } | Kernel::DeadZone { .. } => {
            let w = p.width()?;
            p.inputs(1)?;
            p.broadcast(0, w)?;
            p.crossings(2 * w)
        }
        Kernel::Constant(values) => count("value", values.len(), p.width()?),
        Kernel::Sine(_) | Kernel::Clock => p.width().map(drop),
        Kernel::Step { .. } | Kernel::Ramp { .. } => {
            p.width()?;
            p.crossings(1)
        }
        Kernel::Pulse => {
            p.width()?;
            p.crossings(1)?;
            p.discrete(2)
        }
        Kernel::TimeTable(curves) => count("the table's columns", curves.len(), p.width()?),
        Kernel::Integrator { lower, upper } => {
            let w = p.width()?;
            p.states(w)?;
            p.crossings(w * (usize::from(upper.is_finite()) + usize::from(lower.is_finite())))
        }
        Kernel::Linear {
            n,
            m,
            p: outs,
            a,
            b,
            c,
            d,
        } => {
            let w = p.width()?;
            require(w == outs, || {
                format!("the system has {outs} outputs, its output port {w} elements")
            })?;
            p.states(n)?;
            p.inputs(1)?;
            p.broadcast(0, m)?;
            count("A", a.len(), n * n)?;
            count("B", b.len(), n * m)?;
            count("C", c.len(), outs * n)?;
            count("D", d.len(), outs * m)
        }
        Kernel::Pid { .. } => {
            p.width()?;
            p.inputs(1)?;
            p.states(2)
        }
        Kernel::DiscretePid { .. } => {
            p.width()?;
            p.inputs(1)?;
            p.discrete(2)
        }
        Kernel::DiscreteTransfer { num, den } => {
            require(p.width()? == 1, || "its output is not a scalar".to_string())?;
            p.inputs(1)?;
            count("numerator", num.len(), s.xd.len() + 1)?;
            count("denominator", den.len(), s.xd.len() + 1)
        }
        Kernel::Delay => {
            let w = p.width()?;
            require(s.xd.len() == w, || {
                format!("it has {} discrete states for an output of width {w}", s.xd.len())
            })
        }
        Kernel::Derivative => {
            let w = p.width()?;
            p.inputs(1)?;
            p.broadcast(0, w)?;
            p.discrete(w + 2)
        }
        Kernel::Compare { relation, constant } => {
            let w = p.width()?;
            p.inputs(if constant.is_some() { 1 } else { 2 })?;
            p.all_broadcast(w)?;
            let ordered = !matches!(relation, Relation::Eq | Relation::Ne);
            p.crossings(if ordered { w } else { 0 })
        }
        Kernel::Logical(_) => {
            let w = p.width()?;
            require(!p.ins.is_empty(), || "it has no inputs".to_string())?;
            p.all_broadcast(w)
        }
        Kernel::Edge => {
            p.width()?;
            p.discrete(2)
        }
        Kernel::HitCrossing { .. } => {
            p.width()?;
            p.inputs(1)?;
            p.crossings(1)?;
            p.discrete(2)
        }
    }
}

/// What [`Emitter::derivatives`] takes as given of a translated block's
/// kernel (its outputs' proof covers the rest).
fn prove_derivatives(s: &Step<'_>) -> Result<(), Refusal> {
    let p = ports(s);
    match s.kernel {
        // Its other inputs (reset, x0) are read by updates only.
        Kernel::Integrator { .. } => p.broadcast(0, s.x.len()),
        Kernel::Linear { .. } | Kernel::Pid { .. } => prove_outputs(s),
        _ => Err("its kernel has no derivatives to translate".into()),
    }
}

const BUFS: [(Buf, usize); 5] = [
    (Buf::Signals, offset_of!(Env, signals)),
    (Buf::Distance, offset_of!(Env, distance)),
    (Buf::X, offset_of!(Env, x)),
    (Buf::Xd, offset_of!(Env, xd)),
    (Buf::Dx, offset_of!(Env, dx)),
];

/// The most values (port elements, states and zero crossings, [`size`])
/// of a block the code generator translates. Its code is unrolled, and
/// Cranelift's time grows faster than linearly with a function's length
/// (a Gain 4096 wide took a second, 65536 wide minutes): a wider block is
/// interpreted in its place, in one call.
pub(crate) const MAX_BLOCK_VALUES: usize = 1024;

/// A block's port elements, states and zero crossings: what its code's
/// length grows with.
pub(crate) fn size(step: &Step<'_>) -> usize {
    let ports: usize = step.inputs.iter().chain(step.outputs).map(|p| p.width as usize).sum();
    ports + step.x.len() + step.zc.len()
}

/// Whether the code generator translates a block's kernel.
fn translates_kernel(step: &Step<'_>) -> bool {
    size(step) <= MAX_BLOCK_VALUES && !matches!(step.kernel, Kernel::Opaque)
}

/// Whether the code generator translates a block's minor evaluation: its
/// kernel, or only the copy of its held outputs when it does not run in
/// minor passes.
pub(crate) fn translates_outputs(step: &Step<'_>) -> bool {
    match step.minor {
        Minor::Held(_) => size(step) <= MAX_BLOCK_VALUES,
        Minor::Guarded(_) | Minor::Runs => translates_kernel(step),
    }
}

/// Whether a block's kernel keeps a value of the major step in its
/// discrete states (Pulse, Edge and HitCrossing do), which only the
/// interpreter's major evaluation writes.
fn keeps_major_step(step: &Step<'_>) -> bool {
    matches!(step.kernel, Kernel::Pulse | Kernel::Edge | Kernel::HitCrossing { .. })
}

/// Whether the code generator translates a block's major evaluation: its
/// kernel, unless it [keeps a value of the major step](keeps_major_step).
pub(crate) fn translates_major(step: &Step<'_>) -> bool {
    translates_kernel(step) && !keeps_major_step(step)
}

/// Whether a block's major evaluation is its minor one, in the machine code
/// and in the interpreter: it runs at every evaluation, has no zero
/// crossings to switch and keeps nothing of the major step.
pub(crate) fn same_in_both_passes(step: &Step<'_>) -> bool {
    step.minor == Minor::Runs && step.zc.is_empty() && !keeps_major_step(step)
}

/// Whether the code generator translates a block's update.
pub(crate) fn translates_update(step: &Step<'_>) -> bool {
    match step.update {
        Update::Nothing => true,
        Update::Clamp { .. }
        | Update::Delay
        | Update::Accumulate { .. }
        | Update::SumAndLast
        | Update::Transfer
        | Update::Count { .. } => size(step) <= MAX_BLOCK_VALUES,
        Update::Opaque => false,
    }
}

/// Which of the interpreter's evaluations of one block a call makes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Evaluation {
    /// Its outputs in a minor pass.
    Minor,
    /// Its derivatives, after a minor pass.
    Derivatives,
    /// Its outputs in a major pass.
    Major,
    /// Its update, after a major pass.
    Update,
}

impl Evaluation {
    fn shim(self) -> *const () {
        match self {
            Evaluation::Minor => shims::block_outputs as *const (),
            Evaluation::Derivatives => shims::block_derivatives as *const (),
            Evaluation::Major => shims::block_major as *const (),
            Evaluation::Update => shims::block_update as *const (),
        }
    }
}

/// Whether the code generator translates a block's derivatives.
pub(crate) fn translates_derivatives(step: &Step<'_>) -> bool {
    matches!(step.minor, Minor::Runs | Minor::Guarded(_))
        && size(step) <= MAX_BLOCK_VALUES
        && matches!(
            step.kernel,
            Kernel::Integrator { .. } | Kernel::Linear { .. } | Kernel::Pid { .. }
        )
}

/// The signatures of the shims, imported into one function.
struct Sigs {
    block: SigRef,
    unary: SigRef,
    binary: SigRef,
    pair: SigRef,
    curve: SigRef,
}

/// The signatures of the shims (pointer-sized integers and f64).
pub(crate) struct ShimSignatures {
    block: Signature,
    unary: Signature,
    binary: Signature,
    pair: Signature,
    curve: Signature,
}

impl ShimSignatures {
    /// The shims' signatures in the calling convention of `template`.
    pub(crate) fn new(template: &Signature) -> Self {
        let sig = |params: &[Type], returns: &[Type]| {
            let mut s = template.clone();
            s.params = params.iter().map(|&t| AbiParam::new(t)).collect();
            s.returns = returns.iter().map(|&t| AbiParam::new(t)).collect();
            s
        };
        let (i, f) = (types::I64, types::F64);
        ShimSignatures {
            block: sig(&[i, i], &[]),
            unary: sig(&[i, f], &[f]),
            binary: sig(&[i, f, f], &[f]),
            pair: sig(&[f, f], &[f]),
            curve: sig(&[i, f], &[f]),
        }
    }
}

/// Emits one function `fn(env: *const Env)` of straight-line code.
pub(crate) struct Emitter<'f> {
    b: FunctionBuilder<'f>,
    env: Value,
    base: HashMap<Buf, Value>,
    /// The rate hits of a major pass (null in a minor one).
    hits: Value,
    t: Value,
    /// The last value loaded from or stored to each place, while no
    /// interpreted block has run since.
    cache: HashMap<(Buf, usize), Value>,
    sigs: Sigs,
    bounds: Bounds,
    /// A major pass: zero crossings switch modes.
    major: bool,
}

/// The position of `f` in `all` (every function is listed there).
fn code_of<F: PartialEq>(all: &[(F, &str)], f: F) -> Result<i64, Refusal> {
    all.iter()
        .position(|(g, _)| *g == f)
        .map(|i| i as i64)
        .ok_or_else(|| "its function has no code for compiled calls".to_string())
}

impl<'f> Emitter<'f> {
    /// Starts a function in `b`, whose signature is `fn(*const Env)`, over
    /// buffers of `bounds`, for a `major` pass or a minor one.
    pub(crate) fn new(mut b: FunctionBuilder<'f>, shims: &ShimSignatures, bounds: Bounds, major: bool) -> Self {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let env = b.block_params(entry)[0];
        let flags = MemFlags::trusted().with_readonly();
        let base = BUFS
            .iter()
            .map(|&(buf, offset)| (buf, b.ins().load(types::I64, flags, env, offset as i32)))
            .collect();
        let t = b.ins().load(types::F64, flags, env, offset_of!(Env, t) as i32);
        let hits = b.ins().load(types::I64, flags, env, offset_of!(Env, hits) as i32);
        let sigs = Sigs {
            block: b.import_signature(shims.block.clone()),
            unary: b.import_signature(shims.unary.clone()),
            binary: b.import_signature(shims.binary.clone()),
            pair: b.import_signature(shims.pair.clone()),
            curve: b.import_signature(shims.curve.clone()),
        };
        Emitter {
            b,
            env,
            base,
            hits,
            t,
            cache: HashMap::new(),
            sigs,
            bounds,
            major,
        }
    }

    /// Ends the function.
    pub(crate) fn finish(mut self) {
        self.b.ins().return_(&[]);
        self.b.finalize();
    }

    /// The byte offset of value `i` of `buf`, refused beyond its end.
    fn place(&self, buf: Buf, i: usize) -> Result<i32, Refusal> {
        let len = self.bounds.len(buf);
        if i >= len {
            return Err(format!("value {i} of the {} is beyond their {len}", buf.name()));
        }
        i32::try_from(i * 8).map_err(|_| format!("value {i} of the {} is beyond 2^28", buf.name()))
    }

    fn base(&self, buf: Buf) -> Result<Value, Refusal> {
        self.base
            .get(&buf)
            .copied()
            .ok_or_else(|| format!("no pointer to the {}", buf.name()))
    }

    fn load(&mut self, buf: Buf, i: usize) -> Result<Value, Refusal> {
        if let Some(&v) = self.cache.get(&(buf, i)) {
            return Ok(v);
        }
        let (offset, base) = (self.place(buf, i)?, self.base(buf)?);
        let v = self.b.ins().load(types::F64, MemFlags::trusted(), base, offset);
        self.cache.insert((buf, i), v);
        Ok(v)
    }

    fn store(&mut self, buf: Buf, i: usize, v: Value) -> Result<(), Refusal> {
        let (offset, base) = (self.place(buf, i)?, self.base(buf)?);
        self.b.ins().store(MemFlags::trusted(), v, base, offset);
        self.cache.insert((buf, i), v);
        Ok(())
    }

    fn konst(&mut self, v: f64) -> Value {
        self.b.ins().f64const(v)
    }

    /// A call of `f` with signature `sig`; its result, when it has one.
    fn call(&mut self, sig: SigRef, f: *const (), args: &[Value]) -> Option<Value> {
        let callee = self.b.ins().iconst(types::I64, f as i64);
        let inst = self.b.ins().call_indirect(sig, callee, args);
        self.b.inst_results(inst).first().copied()
    }

    /// A call of `f` that returns a value.
    fn call_value(&mut self, sig: SigRef, f: *const (), args: &[Value]) -> Result<Value, Refusal> {
        self.call(sig, f, args)
            .ok_or_else(|| "a function it calls returned nothing".to_string())
    }

    /// Model input `i` into the signal buffer.
    pub(crate) fn input(&mut self, i: usize, offset: usize) -> Result<(), Refusal> {
        if i >= self.bounds.inputs {
            return Err(format!("model input {i} is beyond the model's {}", self.bounds.inputs));
        }
        let from = i32::try_from(i * 8).map_err(|_| format!("model input {i} is beyond 2^28"))?;
        let u = self
            .b
            .ins()
            .load(types::I64, MemFlags::trusted(), self.env, offset_of!(Env, u) as i32);
        let v = self.b.ins().load(types::F64, MemFlags::trusted(), u, from);
        self.store(Buf::Signals, offset, v)
    }

    /// A call of the shim that copies all the model's inputs into the
    /// signal buffer (for models with many: see [`MAX_BLOCK_VALUES`]).
    pub(crate) fn inputs_copied(&mut self) {
        let (env, none) = (self.env, self.b.ins().iconst(types::I64, 0));
        self.call(self.sigs.block, shims::copy_inputs as *const (), &[env, none]);
        self.cache.clear();
    }

    /// A call of the interpreter's `evaluation` of block `i`; it may write
    /// any buffer.
    pub(crate) fn interpreted(&mut self, evaluation: Evaluation, i: usize) {
        let shim = evaluation.shim();
        let index = self.b.ins().iconst(types::I64, i as i64);
        let env = self.env;
        self.call(self.sigs.block, shim, &[env, index]);
        self.cache.clear();
    }

    /// Element `k` of input `i` (a scalar broadcast).
    fn u(&mut self, s: &Step<'_>, i: usize, k: usize) -> Result<Value, Refusal> {
        let slot = *s
            .inputs
            .get(i)
            .ok_or_else(|| format!("it reads input {}, which it does not have", i + 1))?;
        let k = if slot.width == 1 { 0 } else { k };
        if k >= slot.width as usize {
            return Err(format!(
                "it reads element {k} of input {}, of width {}",
                i + 1,
                slot.width
            ));
        }
        self.load(Buf::Signals, slot.offset as usize + k)
    }

    /// Sets element `k` of output `j`.
    fn set(&mut self, s: &Step<'_>, j: usize, k: usize, v: Value) -> Result<(), Refusal> {
        let at = Self::output_slot(s, j, k)?;
        self.store(Buf::Signals, at, v)
    }

    /// Element `k` of output `j` as it is now (before the block writes it).
    fn y(&mut self, s: &Step<'_>, j: usize, k: usize) -> Result<Value, Refusal> {
        let at = Self::output_slot(s, j, k)?;
        self.load(Buf::Signals, at)
    }

    /// Where element `k` of output `j` is in the signal buffer.
    fn output_slot(s: &Step<'_>, j: usize, k: usize) -> Result<usize, Refusal> {
        let slot = *s
            .outputs
            .get(j)
            .ok_or_else(|| format!("it writes output {}, which it does not have", j + 1))?;
        if k >= slot.width as usize {
            return Err(format!(
                "it writes element {k} of output {}, of width {}",
                j + 1,
                slot.width
            ));
        }
        Ok(slot.offset as usize + k)
    }

    /// State `k` of the block.
    fn x(&mut self, s: &Step<'_>, k: usize) -> Result<Value, Refusal> {
        if k >= s.x.len() {
            return Err(format!("it reads state {k} of its {}", s.x.len()));
        }
        self.load(Buf::X, s.x.start + k)
    }

    /// Sets the derivative of state `k` of the block.
    fn set_dx(&mut self, s: &Step<'_>, k: usize, v: Value) -> Result<(), Refusal> {
        if k >= s.x.len() {
            return Err(format!("it writes the derivative of state {k} of its {}", s.x.len()));
        }
        self.store(Buf::Dx, s.x.start + k, v)
    }

    /// Discrete state `k` of the block.
    fn xd(&mut self, s: &Step<'_>, k: usize) -> Result<Value, Refusal> {
        if k >= s.xd.len() {
            return Err(format!("it reads discrete state {k} of its {}", s.xd.len()));
        }
        self.load(Buf::Xd, s.xd.start + k)
    }

    /// Value `k` of the parameter list `what`.
    fn param(&mut self, what: &str, values: &[f64], k: usize) -> Result<Value, Refusal> {
        let v = *values
            .get(k)
            .ok_or_else(|| format!("it uses value {k} of {what}, which has {}", values.len()))?;
        Ok(self.konst(v))
    }

    fn out_width(s: &Step<'_>, j: usize) -> usize {
        s.outputs.get(j).map_or(0, |o| o.width as usize)
    }

    /// The side of zero crossing `i` at value `z`, recording the switching
    /// distance, as `Ctx::side`: the latched one in a minor pass; in a
    /// major pass the one `z` is on (with the hysteresis band to leave the
    /// negative side), latched as the new mode.
    fn side(&mut self, s: &Step<'_>, i: usize, z: Value) -> Result<Value, Refusal> {
        if i >= s.zc.len() {
            return Err(format!("it switches through zero crossing {i} of its {}", s.zc.len()));
        }
        let d = s.zc.start + i;
        if !s.events {
            let inf = self.konst(f64::INFINITY);
            self.store(Buf::Distance, d, inf)?;
            let zero = self.konst(0.0);
            return Ok(self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, z, zero));
        }
        let mode = self.load(Buf::Xd, s.xd.end + i)?;
        let half = self.konst(0.5);
        let latched = self.b.ins().fcmp(FloatCC::GreaterThan, mode, half);
        let h = self.konst(s.hysteresis);
        let side = if self.major {
            // Stays positive while z >= 0 (or NaN); leaves negative when
            // z >= 0, or z > h with hysteresis.
            let zero = self.konst(0.0);
            let stays = self.b.ins().fcmp(FloatCC::UnorderedOrGreaterThanOrEqual, z, zero);
            let leaves = if s.hysteresis > 0.0 {
                self.b.ins().fcmp(FloatCC::GreaterThan, z, h)
            } else {
                self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, z, zero)
            };
            let side = self.b.ins().select(latched, stays, leaves);
            let (one, zero) = (self.konst(1.0), self.konst(0.0));
            let mode = self.b.ins().select(side, one, zero);
            self.store(Buf::Xd, s.xd.end + i, mode)?;
            side
        } else {
            latched
        };
        let other = self.b.ins().fsub(h, z);
        let distance = self.b.ins().select(side, z, other);
        self.store(Buf::Distance, d, distance)?;
        Ok(side)
    }

    fn unary(&mut self, f: Unary, u: Value) -> Result<Value, Refusal> {
        Ok(match f {
            Unary::Sqrt => self.b.ins().sqrt(u),
            Unary::Square => self.b.ins().fmul(u, u),
            Unary::Reciprocal => {
                let one = self.konst(1.0);
                self.b.ins().fdiv(one, u)
            }
            _ => {
                let code = code_of(&Unary::ALL, f)?;
                let code = self.b.ins().iconst(types::I64, code);
                self.call_value(self.sigs.unary, shims::unary as *const (), &[code, u])?
            }
        })
    }

    fn fold(&mut self, op: FoldOp, acc: Value, u: Value, inverse: bool) -> Result<Value, Refusal> {
        Ok(match (op, inverse) {
            (FoldOp::Sum, false) => self.b.ins().fadd(acc, u),
            (FoldOp::Sum, true) => self.b.ins().fsub(acc, u),
            (FoldOp::Product, false) => self.b.ins().fmul(acc, u),
            (FoldOp::Product, true) => self.b.ins().fdiv(acc, u),
            (FoldOp::Min, _) => self.call_value(self.sigs.pair, shims::min as *const (), &[acc, u])?,
            (FoldOp::Max, _) => self.call_value(self.sigs.pair, shims::max as *const (), &[acc, u])?,
        })
    }

    fn curve(&mut self, curve: *const tandem_models::blocks::Curve, x: Value) -> Result<Value, Refusal> {
        let p = self.b.ins().iconst(types::I64, curve as i64);
        self.call_value(self.sigs.curve, shims::curve as *const (), &[p, x])
    }

    /// The surface at `(row, column)` (the signature of [`shims::binary`]).
    fn surface(
        &mut self,
        surface: *const tandem_models::blocks::Surface,
        row: Value,
        column: Value,
    ) -> Result<Value, Refusal> {
        let p = self.b.ins().iconst(types::I64, surface as i64);
        self.call_value(self.sigs.binary, shims::surface as *const (), &[p, row, column])
    }

    /// Block `i`'s evaluation in this pass: translated when
    /// [`translates_outputs`] (minor) or [`translates_major`], else
    /// interpreted. `s` has passed [`prove`].
    pub(crate) fn outputs(&mut self, i: usize, s: &Step<'_>) -> Result<(), Refusal> {
        if self.major {
            if !translates_major(s) {
                self.interpreted(Evaluation::Major, i);
                return Ok(());
            }
            return self.major_outputs(s);
        }
        if !translates_outputs(s) {
            self.interpreted(Evaluation::Minor, i);
            return Ok(());
        }
        self.minor_outputs(s)
    }

    /// The code of block `s`'s kernel: its outputs as it runs.
    fn kernel_outputs(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        let w = Self::out_width(s, 0);
        match s.kernel {
            Kernel::Opaque => Err("its kernel is not translated".into()),
            Kernel::Merge { n } => self.merge_outputs(s, w, n),
            Kernel::Pulse => self.pulse_outputs(s),
            Kernel::Edge => self.edge_outputs(s),
            Kernel::HitCrossing { offset } => self.hit_crossing_outputs(s, offset),
            Kernel::Derivative => self.derivative_outputs(s, w),
            Kernel::Compare { relation, constant } => self.compare_outputs(s, w, relation, constant),
            Kernel::Logical(logic) => self.logical_outputs(s, w, logic),
            Kernel::Nothing => Ok(()),
            Kernel::Pass => self.pass_outputs(s, w),
            Kernel::Mux => self.mux_outputs(s),
            Kernel::Demux => self.demux_outputs(s),
            Kernel::Switch(criterion) => self.switch_outputs(s, w, criterion),
            Kernel::Gain(g) => self.gain_outputs(s, w, g),
            Kernel::Fold { op, inverse } => self.fold_outputs(s, w, op, inverse),
            Kernel::Unary(f) => self.unary_outputs(s, w, f),
            Kernel::Binary(f) => self.binary_outputs(s, w, f),
            Kernel::Abs => self.abs_outputs(s, w),
            Kernel::Sign => self.sign_outputs(s, w),
            Kernel::MinMax { max } => self.min_max_outputs(s, w, max),
            Kernel::Saturation { lower, upper } => self.saturation_outputs(s, w, lower, upper),
            Kernel::DeadZone { start, end } => self.dead_zone_outputs(s, w, start, end),
            Kernel::Constant(values) => self.constant_outputs(s, values),
            Kernel::Sine(wave) => self.sine_outputs(s, wave),
            Kernel::Clock => {
                let t = self.t;
                self.set(s, 0, 0, t)
            }
            Kernel::Step { time, before, after } => self.step_outputs(s, time, before, after),
            Kernel::Ramp { slope, start, initial } => self.ramp_outputs(s, slope, start, initial),
            Kernel::TimeTable(curves) => self.time_table_outputs(s, curves),
            Kernel::Lookup(c) => self.lookup_outputs(s, w, c),
            Kernel::Lookup2D(surface) => self.lookup2d_outputs(s, w, surface),
            Kernel::Integrator { lower, upper } => self.integrator_outputs(s, lower, upper),
            Kernel::Linear { n, m, p, c, d, .. } => self.linear_outputs(s, (n, m, p), c, d),
            Kernel::Pid { kp, ki, kd, n } => self.pid_outputs(s, kp, ki, kd, n),
            Kernel::Delay => self.delay_outputs(s),
            Kernel::DiscretePid { kp, ki, kd, per_sample } => self.discrete_pid_outputs(s, [kp, ki, kd], per_sample),
            Kernel::DiscreteTransfer { num, .. } => {
                let y = self.discrete_transfer_output(s, num)?;
                self.set(s, 0, 0, y)
            }
        }
    }

    /// The side of zero crossing `k` at `a - b`.
    fn side_of_difference(&mut self, s: &Step<'_>, k: usize, a: Value, b: Value) -> Result<Value, Refusal> {
        let z = self.b.ins().fsub(a, b);
        self.side(s, k, z)
    }

    /// 1 when `holds` (or, `negated`, when it does not), else 0.
    fn truth(&mut self, holds: Value, negated: bool) -> Value {
        let (one, zero) = (self.konst(1.0), self.konst(0.0));
        if negated {
            self.b.ins().select(holds, zero, one)
        } else {
            self.b.ins().select(holds, one, zero)
        }
    }

    /// The sides of `u - lo` (crossing `2k`) and `hi - u` (`2k + 1`).
    fn region(&mut self, s: &Step<'_>, k: usize, u: Value, lo: Value, hi: Value) -> Result<(Value, Value), Refusal> {
        let z = self.b.ins().fsub(u, lo);
        let above = self.side(s, 2 * k, z)?;
        let z = self.b.ins().fsub(hi, u);
        let below = self.side(s, 2 * k + 1, z)?;
        Ok((above, below))
    }

    /// `0 + a[0] x[0] + ... + b[0] u(0, 0) + ...`, left to right, over the
    /// rows `(name, matrix, first, length)` of a state matrix `a` and an
    /// input matrix `b`.
    fn affine(
        &mut self,
        s: &Step<'_>,
        (a_name, a, a_from, n): (&str, &[f64], usize, usize),
        (b_name, b, b_from, m): (&str, &[f64], usize, usize),
    ) -> Result<Value, Refusal> {
        let mut acc = self.konst(0.0);
        for j in 0..n {
            let (c, x) = (self.param(a_name, a, a_from + j)?, self.x(s, j)?);
            let term = self.b.ins().fmul(c, x);
            acc = self.b.ins().fadd(acc, term);
        }
        for j in 0..m {
            let (c, u) = (self.param(b_name, b, b_from + j)?, self.u(s, 0, j)?);
            let term = self.b.ins().fmul(c, u);
            acc = self.b.ins().fadd(acc, term);
        }
        Ok(acc)
    }

    /// `x.clamp(lower, upper)` as `f64::clamp` computes it: raised to
    /// `lower` when below it, then lowered to `upper` when above it (an
    /// infinite limit changes nothing and gets no code).
    fn clamp(&mut self, x: Value, lower: f64, upper: f64) -> Value {
        let mut y = x;
        if lower != f64::NEG_INFINITY {
            let lo = self.konst(lower);
            let under = self.b.ins().fcmp(FloatCC::LessThan, y, lo);
            y = self.b.ins().select(under, lo, y);
        }
        if upper != f64::INFINITY {
            let hi = self.konst(upper);
            let over = self.b.ins().fcmp(FloatCC::GreaterThan, y, hi);
            y = self.b.ins().select(over, hi, y);
        }
        y
    }

    /// The rate of an integrator's state `k` with input `d`: 0 while it
    /// rests on a finite limit that `d` pushes against, else `d`.
    fn integrator_rate(&mut self, s: &Step<'_>, k: usize, d: Value, lower: f64, upper: f64) -> Result<Value, Refusal> {
        let mut rests = None;
        for (limit, pushes) in [(upper, FloatCC::GreaterThan), (lower, FloatCC::LessThan)] {
            if !limit.is_finite() {
                continue;
            }
            let (x, limit, zero) = (self.x(s, k)?, self.konst(limit), self.konst(0.0));
            let at = self.b.ins().fcmp(FloatCC::Equal, x, limit);
            let against = self.b.ins().fcmp(pushes, d, zero);
            let here = self.b.ins().band(at, against);
            rests = Some(match rests {
                Some(other) => self.b.ins().bor(other, here),
                None => here,
            });
        }
        Ok(match rests {
            Some(rests) => {
                let zero = self.konst(0.0);
                self.b.ins().select(rests, zero, d)
            }
            None => d,
        })
    }

    /// Block `i`'s derivatives: translated when
    /// [`translates_derivatives`], else interpreted. `s` has passed
    /// [`prove`].
    pub(crate) fn derivatives(&mut self, i: usize, s: &Step<'_>) -> Result<(), Refusal> {
        if !translates_derivatives(s) {
            self.interpreted(Evaluation::Derivatives, i);
            return Ok(());
        }
        match s.guard {
            None => self.kernel_derivatives(s),
            Some(g) => {
                let enabled = self.enabled(g)?;
                self.branch(enabled, |e| e.kernel_derivatives(s), |e| e.rest(s))
            }
        }
    }

    /// The code of block `s`'s derivatives as it runs.
    fn kernel_derivatives(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        match s.kernel {
            Kernel::Integrator { lower, upper } => {
                for k in 0..s.x.len() {
                    let d = self.u(s, 0, k)?;
                    let v = self.integrator_rate(s, k, d, lower, upper)?;
                    self.set_dx(s, k, v)?;
                }
            }
            Kernel::Linear { n, m, a, b, .. } => {
                for i in 0..n {
                    let v = self.affine(s, ("A", a, i * n, n), ("B", b, i * m, m))?;
                    self.set_dx(s, i, v)?;
                }
            }
            Kernel::Pid { n, .. } => {
                let e = self.u(s, 0, 0)?;
                let x1 = self.x(s, 1)?;
                self.set_dx(s, 0, e)?;
                let n = self.konst(n);
                let de = self.b.ins().fsub(e, x1);
                let v = self.b.ins().fmul(n, de);
                self.set_dx(s, 1, v)?;
            }
            _ => return Err("its kernel has no derivatives to translate".into()),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_models::blocks::kernel::Kernel;

    const BOUNDS: Bounds = Bounds {
        signals: 8,
        distance: 4,
        x: 2,
        xd: 6,
        inputs: 1,
        rates: 1,
    };

    /// A running block reading input (offset 1, `w_in`) into output
    /// (offset 4, `w_out`).
    fn step(kernel: Kernel<'_>, w_in: u32, w_out: u32) -> Step<'_> {
        let slots: &'static [Slot] = Box::leak(Box::new([
            Slot { offset: 1, width: w_in },
            Slot {
                offset: 4,
                width: w_out,
            },
        ]));
        Step {
            kernel,
            inputs: &slots[..1],
            outputs: &slots[1..],
            x: 0..0,
            xd: 0..0,
            zc: 0..0,
            events: true,
            hysteresis: 0.0,
            minor: Minor::Runs,
            update: Update::Opaque,
            hold: None,
            guard: None,
            rate: None,
            period: 0.0,
        }
    }

    #[test]
    fn kernels_that_do_not_fit_their_ports_are_refused_by_reason() {
        assert_eq!(
            prove(&step(Kernel::Gain(&[]), 1, 1), &BOUNDS).unwrap_err(),
            "gain has 0 values where its ports need 1"
        );
        assert_eq!(
            prove(&step(Kernel::Gain(&[1.0, 2.0]), 3, 3), &BOUNDS).unwrap_err(),
            "gain has 2 values where its ports need 3"
        );
        assert!(prove(&step(Kernel::Gain(&[2.0]), 1, 3), &BOUNDS).is_ok());
        assert!(prove(&step(Kernel::Gain(&[1.0, 2.0, 3.0]), 3, 3), &BOUNDS).is_ok());
        assert_eq!(
            prove(&step(Kernel::Constant(&[1.0, 2.0, 3.0]), 1, 2), &BOUNDS).unwrap_err(),
            "value has 3 values where its ports need 2"
        );
        assert_eq!(
            prove(&step(Kernel::Pass, 2, 3), &BOUNDS).unwrap_err(),
            "input 1 has width 2, neither 1 nor the output's 3"
        );
        assert_eq!(
            prove(&step(Kernel::Abs, 1, 1), &BOUNDS).unwrap_err(),
            "it has 0 zero crossings, its kernel switches through 1"
        );
        let linear = Kernel::Linear {
            n: 1,
            m: 1,
            p: 1,
            a: &[1.0],
            b: &[],
            c: &[1.0],
            d: &[0.0],
        };
        let mut s = step(linear, 1, 1);
        s.x = 0..1;
        assert_eq!(prove(&s, &BOUNDS).unwrap_err(), "B has 0 values where its ports need 1");
    }

    #[test]
    fn places_beyond_the_buffers_are_refused() {
        assert_eq!(
            prove(&step(Kernel::Pass, 1, 5), &BOUNDS).unwrap_err(),
            "output 1 (values 4 to 9) lies beyond the 8 signals"
        );
        let mut s = step(Kernel::Delay, 1, 1);
        s.xd = 5..7;
        assert_eq!(
            prove(&s, &BOUNDS).unwrap_err(),
            "its discrete states 5..7 and 0 modes lie beyond the model's 6"
        );
        let mut s = step(Kernel::Nothing, 1, 1);
        s.minor = Minor::Held(6);
        s.hold = Some(6);
        assert_eq!(
            prove(&s, &BOUNDS).unwrap_err(),
            "its 1 held outputs from 6 lie beyond the model's 6 discrete states"
        );
    }
}
