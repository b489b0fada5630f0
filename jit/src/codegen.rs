//! Translates a program's minor pass into Cranelift IR: straight-line code
//! per block, following each [`Kernel`]'s documented operations in order,
//! and a call into the interpreter for each block it does not translate.

use std::collections::HashMap;
use std::mem::offset_of;

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlags, SigRef, Signature, Type, Value};
use cranelift_frontend::FunctionBuilder;
use tandem_models::blocks::kernel::{Binary, Criterion, FoldOp, Kernel, Logic, Relation, Unary, Wave};
use tandem_models::diagram::{Minor, Step};

use crate::shims::{self, Env};

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

const BUFS: [(Buf, usize); 5] = [
    (Buf::Signals, offset_of!(Env, signals)),
    (Buf::Distance, offset_of!(Env, distance)),
    (Buf::X, offset_of!(Env, x)),
    (Buf::Xd, offset_of!(Env, xd)),
    (Buf::Dx, offset_of!(Env, dx)),
];

/// Whether the code generator translates a block's outputs.
pub(crate) fn translates_outputs(step: &Step<'_>) -> bool {
    match step.minor {
        Minor::Held(_) => true,
        Minor::Guarded(_) => false,
        Minor::Runs => !matches!(step.kernel, Kernel::Opaque | Kernel::Merge { .. }),
    }
}

/// Whether the code generator translates a block's derivatives.
pub(crate) fn translates_derivatives(step: &Step<'_>) -> bool {
    step.minor == Minor::Runs
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
    t: Value,
    /// The last value loaded from or stored to each place, while no
    /// interpreted block has run since.
    cache: HashMap<(Buf, usize), Value>,
    sigs: Sigs,
}

impl<'f> Emitter<'f> {
    /// Starts a function in `b`, whose signature is `fn(*const Env)`.
    pub(crate) fn new(mut b: FunctionBuilder<'f>, shims: &ShimSignatures) -> Self {
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
            t,
            cache: HashMap::new(),
            sigs,
        }
    }

    /// Ends the function.
    pub(crate) fn finish(mut self) {
        self.b.ins().return_(&[]);
        self.b.finalize();
    }

    fn load(&mut self, buf: Buf, i: usize) -> Value {
        if let Some(&v) = self.cache.get(&(buf, i)) {
            return v;
        }
        let v = self
            .b
            .ins()
            .load(types::F64, MemFlags::trusted(), self.base[&buf], (i * 8) as i32);
        self.cache.insert((buf, i), v);
        v
    }

    fn store(&mut self, buf: Buf, i: usize, v: Value) {
        self.b
            .ins()
            .store(MemFlags::trusted(), v, self.base[&buf], (i * 8) as i32);
        self.cache.insert((buf, i), v);
    }

    fn konst(&mut self, v: f64) -> Value {
        self.b.ins().f64const(v)
    }

    fn call(&mut self, sig: SigRef, f: *const (), args: &[Value]) -> Option<Value> {
        let callee = self.b.ins().iconst(types::I64, f as i64);
        let inst = self.b.ins().call_indirect(sig, callee, args);
        self.b.inst_results(inst).first().copied()
    }

    /// Model input `i` into the signal buffer.
    pub(crate) fn input(&mut self, i: usize, offset: usize) {
        let u = self
            .b
            .ins()
            .load(types::I64, MemFlags::trusted(), self.env, offset_of!(Env, u) as i32);
        let v = self.b.ins().load(types::F64, MemFlags::trusted(), u, (i * 8) as i32);
        self.store(Buf::Signals, offset, v);
    }

    /// A call of `shim` on block `i`; it may write any buffer.
    pub(crate) fn interpreted(&mut self, derivatives: bool, i: usize) {
        let shim = if derivatives {
            shims::block_derivatives as *const ()
        } else {
            shims::block_outputs as *const ()
        };
        let index = self.b.ins().iconst(types::I64, i as i64);
        let env = self.env;
        self.call(self.sigs.block, shim, &[env, index]);
        self.cache.clear();
    }

    /// Element `k` of input `i` (a scalar broadcast).
    fn u(&mut self, s: &Step<'_>, i: usize, k: usize) -> Value {
        let slot = s.inputs[i];
        let k = if slot.width == 1 { 0 } else { k };
        self.load(Buf::Signals, slot.offset as usize + k)
    }

    fn set(&mut self, s: &Step<'_>, j: usize, k: usize, v: Value) {
        self.store(Buf::Signals, s.outputs[j].offset as usize + k, v);
    }

    fn out_width(s: &Step<'_>, j: usize) -> usize {
        s.outputs[j].width as usize
    }

    /// The latched side of zero crossing `i` at value `z`, recording the
    /// switching distance (`Ctx::side` in a minor evaluation).
    fn side(&mut self, s: &Step<'_>, i: usize, z: Value) -> Value {
        let d = s.zc.start + i;
        if !s.events {
            let inf = self.konst(f64::INFINITY);
            self.store(Buf::Distance, d, inf);
            let zero = self.konst(0.0);
            return self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, z, zero);
        }
        let mode = self.load(Buf::Xd, s.xd.end + i);
        let half = self.konst(0.5);
        let latched = self.b.ins().fcmp(FloatCC::GreaterThan, mode, half);
        let h = self.konst(s.hysteresis);
        let other = self.b.ins().fsub(h, z);
        let distance = self.b.ins().select(latched, z, other);
        self.store(Buf::Distance, d, distance);
        latched
    }

    fn unary(&mut self, f: Unary, u: Value) -> Value {
        match f {
            Unary::Sqrt => self.b.ins().sqrt(u),
            Unary::Square => self.b.ins().fmul(u, u),
            Unary::Reciprocal => {
                let one = self.konst(1.0);
                self.b.ins().fdiv(one, u)
            }
            _ => {
                let code = Unary::ALL
                    .iter()
                    .position(|(g, _)| *g == f)
                    .expect("every function is listed");
                let code = self.b.ins().iconst(types::I64, code as i64);
                self.call(self.sigs.unary, shims::unary as *const (), &[code, u])
                    .expect("returns a value")
            }
        }
    }

    fn fold(&mut self, op: FoldOp, acc: Value, u: Value, inverse: bool) -> Value {
        match (op, inverse) {
            (FoldOp::Sum, false) => self.b.ins().fadd(acc, u),
            (FoldOp::Sum, true) => self.b.ins().fsub(acc, u),
            (FoldOp::Product, false) => self.b.ins().fmul(acc, u),
            (FoldOp::Product, true) => self.b.ins().fdiv(acc, u),
            (FoldOp::Min, _) => self
                .call(self.sigs.pair, shims::min as *const (), &[acc, u])
                .expect("returns a value"),
            (FoldOp::Max, _) => self
                .call(self.sigs.pair, shims::max as *const (), &[acc, u])
                .expect("returns a value"),
        }
    }

    fn curve(&mut self, curve: *const tandem_models::blocks::Curve, x: Value) -> Value {
        let p = self.b.ins().iconst(types::I64, curve as i64);
        self.call(self.sigs.curve, shims::curve as *const (), &[p, x])
            .expect("returns a value")
    }

    /// Block `i`'s minor evaluation: translated when
    /// [`translates_outputs`], else interpreted.
    pub(crate) fn outputs(&mut self, i: usize, s: &Step<'_>) {
        if !translates_outputs(s) {
            return self.interpreted(false, i);
        }
        if let Minor::Held(hold) = s.minor {
            for d in s.zc.clone() {
                let inf = self.konst(f64::INFINITY);
                self.store(Buf::Distance, d, inf);
            }
            let mut k = hold;
            for j in 0..s.outputs.len() {
                for e in 0..Self::out_width(s, j) {
                    let v = self.load(Buf::Xd, k);
                    self.set(s, j, e, v);
                    k += 1;
                }
            }
            return;
        }
        let w = if s.outputs.is_empty() { 0 } else { Self::out_width(s, 0) };
        match s.kernel {
            Kernel::Opaque | Kernel::Merge { .. } => unreachable!("not translated"),
            Kernel::Pulse => {
                let next = self.load(Buf::Xd, s.xd.start);
                let z = self.b.ins().fsub(next, self.t);
                self.side(s, 0, z);
                let v = self.load(Buf::Xd, s.xd.start + 1);
                self.set(s, 0, 0, v);
            }
            Kernel::Edge => {
                let v = self.load(Buf::Xd, s.xd.start + 1);
                self.set(s, 0, 0, v);
            }
            Kernel::HitCrossing { offset } => {
                let (u, offset) = (self.u(s, 0, 0), self.konst(offset));
                let z = self.b.ins().fsub(u, offset);
                self.side(s, 0, z);
                let v = self.load(Buf::Xd, s.xd.start + 1);
                self.set(s, 0, 0, v);
            }
            Kernel::Derivative => {
                let (t_prev, valid) = (
                    self.load(Buf::Xd, s.xd.start + w),
                    self.load(Buf::Xd, s.xd.start + w + 1),
                );
                let zero = self.konst(0.0);
                let sampled = self.b.ins().fcmp(FloatCC::GreaterThan, valid, zero);
                let later = self.b.ins().fcmp(FloatCC::GreaterThan, self.t, t_prev);
                let known = self.b.ins().band(sampled, later);
                let dt = self.b.ins().fsub(self.t, t_prev);
                for k in 0..w {
                    let (u, before) = (self.u(s, 0, k), self.load(Buf::Xd, s.xd.start + k));
                    let du = self.b.ins().fsub(u, before);
                    let slope = self.b.ins().fdiv(du, dt);
                    let v = self.b.ins().select(known, slope, zero);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Compare { relation, constant } => {
                for k in 0..w {
                    let a = self.u(s, 0, k);
                    let b = match constant {
                        Some(c) => self.konst(c),
                        None => self.u(s, 1, k),
                    };
                    let (holds, negated) = match relation {
                        Relation::Ge => (self.side_of_difference(s, k, a, b), false),
                        Relation::Lt => (self.side_of_difference(s, k, a, b), true),
                        Relation::Le => (self.side_of_difference(s, k, b, a), false),
                        Relation::Gt => (self.side_of_difference(s, k, b, a), true),
                        Relation::Eq => (self.b.ins().fcmp(FloatCC::Equal, a, b), false),
                        Relation::Ne => (self.b.ins().fcmp(FloatCC::NotEqual, a, b), false),
                    };
                    let v = self.truth(holds, negated);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Logical(logic) => {
                let n = s.inputs.len() as i64;
                for k in 0..w {
                    let mut trues = self.b.ins().iconst(types::I32, 0);
                    for i in 0..s.inputs.len() {
                        let (u, zero) = (self.u(s, i, k), self.konst(0.0));
                        let nonzero = self.b.ins().fcmp(FloatCC::NotEqual, u, zero);
                        let one = self.b.ins().uextend(types::I32, nonzero);
                        trues = self.b.ins().iadd(trues, one);
                    }
                    let holds = match logic {
                        Logic::And => self.b.ins().icmp_imm(IntCC::Equal, trues, n),
                        Logic::Or => self.b.ins().icmp_imm(IntCC::UnsignedGreaterThan, trues, 0),
                        Logic::Nand => self.b.ins().icmp_imm(IntCC::UnsignedLessThan, trues, n),
                        Logic::Nor | Logic::Not => self.b.ins().icmp_imm(IntCC::Equal, trues, 0),
                        Logic::Xor => {
                            let odd = self.b.ins().band_imm(trues, 1);
                            self.b.ins().icmp_imm(IntCC::Equal, odd, 1)
                        }
                    };
                    let v = self.truth(holds, false);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Nothing => {}
            Kernel::Pass => {
                for k in 0..w {
                    let v = self.u(s, 0, k);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Mux => {
                let mut k = 0;
                for i in 0..s.inputs.len() {
                    for e in 0..s.inputs[i].width as usize {
                        let v = self.u(s, i, e);
                        self.set(s, 0, k, v);
                        k += 1;
                    }
                }
            }
            Kernel::Demux => {
                let mut k = 0;
                for j in 0..s.outputs.len() {
                    for e in 0..Self::out_width(s, j) {
                        let v = self.u(s, 0, k);
                        self.set(s, j, e, v);
                        k += 1;
                    }
                }
            }
            Kernel::Switch(criterion) => {
                let control = self.u(s, 1, 0);
                let (pass, negated) = match criterion {
                    Criterion::AtLeast(th) => {
                        let th = self.konst(th);
                        let z = self.b.ins().fsub(control, th);
                        (self.side(s, 0, z), false)
                    }
                    Criterion::Above(th) => {
                        let th = self.konst(th);
                        let z = self.b.ins().fsub(th, control);
                        (self.side(s, 0, z), true)
                    }
                    Criterion::NonZero => {
                        let zero = self.konst(0.0);
                        (self.b.ins().fcmp(FloatCC::NotEqual, control, zero), false)
                    }
                };
                for k in 0..w {
                    let (a, b) = (self.u(s, 0, k), self.u(s, 2, k));
                    let v = if negated {
                        self.b.ins().select(pass, b, a)
                    } else {
                        self.b.ins().select(pass, a, b)
                    };
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Gain(g) => {
                for k in 0..w {
                    let gain = self.konst(if g.len() == 1 { g[0] } else { g[k] });
                    let u = self.u(s, 0, k);
                    let v = self.b.ins().fmul(gain, u);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Fold { op, inverse } => {
                if let [inverse] = inverse[..] {
                    let mut acc = self.konst(op.identity());
                    for k in 0..s.inputs[0].width as usize {
                        let u = self.u(s, 0, k);
                        acc = self.fold(op, acc, u, inverse);
                    }
                    self.set(s, 0, 0, acc);
                } else {
                    for k in 0..w {
                        let mut acc = self.konst(op.identity());
                        for (i, &inverse) in inverse.iter().enumerate() {
                            let u = self.u(s, i, k);
                            acc = self.fold(op, acc, u, inverse);
                        }
                        self.set(s, 0, k, acc);
                    }
                }
            }
            Kernel::Unary(f) => {
                for k in 0..w {
                    let u = self.u(s, 0, k);
                    let v = self.unary(f, u);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Binary(f) => {
                let code = Binary::ALL
                    .iter()
                    .position(|(g, _)| *g == f)
                    .expect("every function is listed");
                for k in 0..w {
                    let (a, b) = (self.u(s, 0, k), self.u(s, 1, k));
                    let code = self.b.ins().iconst(types::I64, code as i64);
                    let v = self
                        .call(self.sigs.binary, shims::binary as *const (), &[code, a, b])
                        .expect("returns a value");
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Abs => {
                for k in 0..w {
                    let u = self.u(s, 0, k);
                    let side = self.side(s, k, u);
                    let minus = self.b.ins().fneg(u);
                    let v = self.b.ins().select(side, u, minus);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Sign => {
                for k in 0..w {
                    let u = self.u(s, 0, k);
                    let side = self.side(s, k, u);
                    let (one, minus) = (self.konst(1.0), self.konst(-1.0));
                    let v = self.b.ins().select(side, one, minus);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::MinMax { max } => {
                for k in 0..w {
                    let (a, b) = (self.u(s, 0, k), self.u(s, 1, k));
                    let z = self.b.ins().fsub(a, b);
                    let first_larger = self.side(s, k, z);
                    let v = if max {
                        self.b.ins().select(first_larger, a, b)
                    } else {
                        self.b.ins().select(first_larger, b, a)
                    };
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Saturation { lower, upper } => {
                for k in 0..w {
                    let (u, lo, hi) = (self.u(s, 0, k), self.konst(lower), self.konst(upper));
                    let (above, below) = self.region(s, k, u, lo, hi);
                    let inner = self.b.ins().select(below, u, hi);
                    let v = self.b.ins().select(above, inner, lo);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::DeadZone { start, end } => {
                for k in 0..w {
                    let (u, lo, hi) = (self.u(s, 0, k), self.konst(start), self.konst(end));
                    let (above, below) = self.region(s, k, u, lo, hi);
                    let zero = self.konst(0.0);
                    let beyond = self.b.ins().fsub(u, hi);
                    let before = self.b.ins().fsub(u, lo);
                    let inner = self.b.ins().select(below, zero, beyond);
                    let v = self.b.ins().select(above, inner, before);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Constant(values) => {
                for (k, &v) in values.iter().enumerate() {
                    let v = self.konst(v);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Sine(Wave {
                amplitude,
                frequency,
                phase,
                bias,
            }) => {
                let (f, p, a, b) = (
                    self.konst(frequency),
                    self.konst(phase),
                    self.konst(amplitude),
                    self.konst(bias),
                );
                let ft = self.b.ins().fmul(f, self.t);
                let arg = self.b.ins().fadd(ft, p);
                let sin = self.unary(Unary::Sin, arg);
                let scaled = self.b.ins().fmul(a, sin);
                let v = self.b.ins().fadd(b, scaled);
                self.set(s, 0, 0, v);
            }
            Kernel::Clock => {
                let t = self.t;
                self.set(s, 0, 0, t);
            }
            Kernel::Step { time, before, after } => {
                let time = self.konst(time);
                let z = self.b.ins().fsub(self.t, time);
                let side = self.side(s, 0, z);
                let (a, b) = (self.konst(after), self.konst(before));
                let v = self.b.ins().select(side, a, b);
                self.set(s, 0, 0, v);
            }
            Kernel::Ramp { slope, start, initial } => {
                let start = self.konst(start);
                let z = self.b.ins().fsub(self.t, start);
                let side = self.side(s, 0, z);
                let (slope, initial) = (self.konst(slope), self.konst(initial));
                let dt = self.b.ins().fsub(self.t, start);
                let rise = self.b.ins().fmul(slope, dt);
                let on = self.b.ins().fadd(initial, rise);
                let v = self.b.ins().select(side, on, initial);
                self.set(s, 0, 0, v);
            }
            Kernel::TimeTable(curves) => {
                for (k, c) in curves.iter().enumerate() {
                    let t = self.t;
                    let v = self.curve(c, t);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Lookup(c) => {
                for k in 0..w {
                    let u = self.u(s, 0, k);
                    let v = self.curve(c, u);
                    self.set(s, 0, k, v);
                }
            }
            Kernel::Integrator { lower, upper } => {
                let mut i = 0;
                for k in 0..s.x.len() {
                    let x = self.load(Buf::X, s.x.start + k);
                    let (lo, hi) = (self.konst(lower), self.konst(upper));
                    if upper.is_finite() {
                        let z = self.b.ins().fsub(hi, x);
                        self.side(s, i, z);
                        i += 1;
                    }
                    if lower.is_finite() {
                        let z = self.b.ins().fsub(x, lo);
                        self.side(s, i, z);
                        i += 1;
                    }
                    // `f64::clamp`: below `lower` (never when -inf), then
                    // above `upper` (never when +inf).
                    let mut y = x;
                    if lower != f64::NEG_INFINITY {
                        let under = self.b.ins().fcmp(FloatCC::LessThan, y, lo);
                        y = self.b.ins().select(under, lo, y);
                    }
                    if upper != f64::INFINITY {
                        let over = self.b.ins().fcmp(FloatCC::GreaterThan, y, hi);
                        y = self.b.ins().select(over, hi, y);
                    }
                    self.set(s, 0, k, y);
                }
            }
            Kernel::Linear { n, m, p, c, d, .. } => {
                for i in 0..p {
                    let y = self.affine(s, &c[i * n..(i + 1) * n], &d[i * m..(i + 1) * m]);
                    self.set(s, 0, i, y);
                }
            }
            Kernel::Pid { kp, ki, kd, n } => {
                let e = self.u(s, 0, 0);
                let (x0, x1) = (self.load(Buf::X, s.x.start), self.load(Buf::X, s.x.start + 1));
                let (kp, ki, kdn) = (self.konst(kp), self.konst(ki), self.konst(kd * n));
                let p = self.b.ins().fmul(kp, e);
                let i = self.b.ins().fmul(ki, x0);
                let pi = self.b.ins().fadd(p, i);
                let de = self.b.ins().fsub(e, x1);
                let d = self.b.ins().fmul(kdn, de);
                let v = self.b.ins().fadd(pi, d);
                self.set(s, 0, 0, v);
            }
            Kernel::Delay => {
                for k in 0..s.xd.len() {
                    let v = self.load(Buf::Xd, s.xd.start + k);
                    self.set(s, 0, k, v);
                }
            }
        }
    }

    /// The side of zero crossing `k` at `a - b`.
    fn side_of_difference(&mut self, s: &Step<'_>, k: usize, a: Value, b: Value) -> Value {
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
    fn region(&mut self, s: &Step<'_>, k: usize, u: Value, lo: Value, hi: Value) -> (Value, Value) {
        let z = self.b.ins().fsub(u, lo);
        let above = self.side(s, 2 * k, z);
        let z = self.b.ins().fsub(hi, u);
        let below = self.side(s, 2 * k + 1, z);
        (above, below)
    }

    /// `0 + a[0] x[0] + ... + b[0] u(0, 0) + ...`, left to right.
    fn affine(&mut self, s: &Step<'_>, a: &[f64], b: &[f64]) -> Value {
        let mut acc = self.konst(0.0);
        for (j, &a) in a.iter().enumerate() {
            let (c, x) = (self.konst(a), self.load(Buf::X, s.x.start + j));
            let term = self.b.ins().fmul(c, x);
            acc = self.b.ins().fadd(acc, term);
        }
        for (j, &b) in b.iter().enumerate() {
            let (c, u) = (self.konst(b), self.u(s, 0, j));
            let term = self.b.ins().fmul(c, u);
            acc = self.b.ins().fadd(acc, term);
        }
        acc
    }

    /// Block `i`'s derivatives: translated when
    /// [`translates_derivatives`], else interpreted.
    pub(crate) fn derivatives(&mut self, i: usize, s: &Step<'_>) {
        if !translates_derivatives(s) {
            return self.interpreted(true, i);
        }
        match s.kernel {
            Kernel::Integrator { lower, upper } => {
                for k in 0..s.x.len() {
                    let d = self.u(s, 0, k);
                    let x = self.load(Buf::X, s.x.start + k);
                    let (lo, hi, zero) = (self.konst(lower), self.konst(upper), self.konst(0.0));
                    let at_upper = self.b.ins().fcmp(FloatCC::Equal, x, hi);
                    let pushes_up = self.b.ins().fcmp(FloatCC::GreaterThan, d, zero);
                    let at_lower = self.b.ins().fcmp(FloatCC::Equal, x, lo);
                    let pushes_down = self.b.ins().fcmp(FloatCC::LessThan, d, zero);
                    let up = self.b.ins().band(at_upper, pushes_up);
                    let down = self.b.ins().band(at_lower, pushes_down);
                    let rests = self.b.ins().bor(up, down);
                    let v = self.b.ins().select(rests, zero, d);
                    self.store(Buf::Dx, s.x.start + k, v);
                }
            }
            Kernel::Linear { n, m, a, b, .. } => {
                for i in 0..n {
                    let v = self.affine(s, &a[i * n..(i + 1) * n], &b[i * m..(i + 1) * m]);
                    self.store(Buf::Dx, s.x.start + i, v);
                }
            }
            Kernel::Pid { n, .. } => {
                let e = self.u(s, 0, 0);
                let x1 = self.load(Buf::X, s.x.start + 1);
                self.store(Buf::Dx, s.x.start, e);
                let n = self.konst(n);
                let de = self.b.ins().fsub(e, x1);
                let v = self.b.ins().fmul(n, de);
                self.store(Buf::Dx, s.x.start + 1, v);
            }
            _ => unreachable!("not translated"),
        }
    }
}
