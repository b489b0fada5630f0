//! The minor evaluation's code of each translated kernel, one function a
//! kernel: [`Emitter::outputs`] picks the function, each writes its
//! block's outputs (and the switching distances of its zero crossings)
//! with the same floating-point operations, in the same order, as the
//! interpreter's kernel.

use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, InstBuilder, Value};
use tandem_models::blocks::kernel::{Binary, Criterion, FoldOp, Logic, Relation, Unary, Wave};
use tandem_models::blocks::{Curve, Surface};
use tandem_models::diagram::Step;

use super::{code_of, Emitter, Refusal};
use crate::shims;

impl Emitter<'_> {
    pub(super) fn pulse_outputs(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        let next = self.xd(s, 0)?;
        let z = self.b.ins().fsub(next, self.t);
        self.side(s, 0, z)?;
        let v = self.xd(s, 1)?;
        self.set(s, 0, 0, v)?;
        Ok(())
    }

    pub(super) fn edge_outputs(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        let v = self.xd(s, 1)?;
        self.set(s, 0, 0, v)?;
        Ok(())
    }

    pub(super) fn hit_crossing_outputs(&mut self, s: &Step<'_>, offset: f64) -> Result<(), Refusal> {
        let (u, offset) = (self.u(s, 0, 0)?, self.konst(offset));
        let z = self.b.ins().fsub(u, offset);
        self.side(s, 0, z)?;
        let v = self.xd(s, 1)?;
        self.set(s, 0, 0, v)?;
        Ok(())
    }

    pub(super) fn derivative_outputs(&mut self, s: &Step<'_>, w: usize) -> Result<(), Refusal> {
        let (t_prev, valid) = (self.xd(s, w)?, self.xd(s, w + 1)?);
        let zero = self.konst(0.0);
        let sampled = self.b.ins().fcmp(FloatCC::GreaterThan, valid, zero);
        let later = self.b.ins().fcmp(FloatCC::GreaterThan, self.t, t_prev);
        let known = self.b.ins().band(sampled, later);
        let dt = self.b.ins().fsub(self.t, t_prev);
        for k in 0..w {
            let (u, before) = (self.u(s, 0, k)?, self.xd(s, k)?);
            let du = self.b.ins().fsub(u, before);
            let slope = self.b.ins().fdiv(du, dt);
            let v = self.b.ins().select(known, slope, zero);
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn compare_outputs(
        &mut self,
        s: &Step<'_>,
        w: usize,
        relation: Relation,
        constant: Option<f64>,
    ) -> Result<(), Refusal> {
        for k in 0..w {
            let a = self.u(s, 0, k)?;
            let b = match constant {
                Some(c) => self.konst(c),
                None => self.u(s, 1, k)?,
            };
            let (holds, negated) = match relation {
                Relation::Ge => (self.side_of_difference(s, k, a, b)?, false),
                Relation::Lt => (self.side_of_difference(s, k, a, b)?, true),
                Relation::Le => (self.side_of_difference(s, k, b, a)?, false),
                Relation::Gt => (self.side_of_difference(s, k, b, a)?, true),
                Relation::Eq => (self.b.ins().fcmp(FloatCC::Equal, a, b), false),
                Relation::Ne => (self.b.ins().fcmp(FloatCC::NotEqual, a, b), false),
            };
            let v = self.truth(holds, negated);
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn logical_outputs(&mut self, s: &Step<'_>, w: usize, logic: Logic) -> Result<(), Refusal> {
        let n = s.inputs.len() as i64;
        for k in 0..w {
            let mut trues = self.b.ins().iconst(types::I32, 0);
            for i in 0..s.inputs.len() {
                let (u, zero) = (self.u(s, i, k)?, self.konst(0.0));
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
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn pass_outputs(&mut self, s: &Step<'_>, w: usize) -> Result<(), Refusal> {
        for k in 0..w {
            let v = self.u(s, 0, k)?;
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn mux_outputs(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        let mut k = 0;
        for i in 0..s.inputs.len() {
            for e in 0..s.inputs[i].width as usize {
                let v = self.u(s, i, e)?;
                self.set(s, 0, k, v)?;
                k += 1;
            }
        }
        Ok(())
    }

    pub(super) fn demux_outputs(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        let mut k = 0;
        for j in 0..s.outputs.len() {
            for e in 0..Self::out_width(s, j) {
                let v = self.u(s, 0, k)?;
                self.set(s, j, e, v)?;
                k += 1;
            }
        }
        Ok(())
    }

    pub(super) fn switch_outputs(&mut self, s: &Step<'_>, w: usize, criterion: Criterion) -> Result<(), Refusal> {
        let control = self.u(s, 1, 0)?;
        let (pass, negated) = match criterion {
            Criterion::AtLeast(th) => {
                let th = self.konst(th);
                let z = self.b.ins().fsub(control, th);
                (self.side(s, 0, z)?, false)
            }
            Criterion::Above(th) => {
                let th = self.konst(th);
                let z = self.b.ins().fsub(th, control);
                (self.side(s, 0, z)?, true)
            }
            Criterion::NonZero => {
                let zero = self.konst(0.0);
                (self.b.ins().fcmp(FloatCC::NotEqual, control, zero), false)
            }
        };
        for k in 0..w {
            let (a, b) = (self.u(s, 0, k)?, self.u(s, 2, k)?);
            let v = if negated {
                self.b.ins().select(pass, b, a)
            } else {
                self.b.ins().select(pass, a, b)
            };
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    /// Merge of `n` inputs: the first whose activity (input `n + k`) is
    /// above 0, element by element; the output as it was when none is.
    pub(super) fn merge_outputs(&mut self, s: &Step<'_>, w: usize, n: usize) -> Result<(), Refusal> {
        let zero = self.konst(0.0);
        let mut active = Vec::with_capacity(n);
        for k in 0..n {
            let activity = self.u(s, n + k, 0)?;
            active.push(self.b.ins().fcmp(FloatCC::GreaterThan, activity, zero));
        }
        for e in 0..w {
            let mut v = self.y(s, 0, e)?;
            for k in (0..n).rev() {
                let u = self.u(s, k, e)?;
                v = self.b.ins().select(active[k], u, v);
            }
            self.set(s, 0, e, v)?;
        }
        Ok(())
    }

    pub(super) fn gain_outputs(&mut self, s: &Step<'_>, w: usize, g: &[f64]) -> Result<(), Refusal> {
        for k in 0..w {
            let gain = self.param("gain", g, if g.len() == 1 { 0 } else { k })?;
            let u = self.u(s, 0, k)?;
            let v = self.b.ins().fmul(gain, u);
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn fold_outputs(&mut self, s: &Step<'_>, w: usize, op: FoldOp, inverse: &[bool]) -> Result<(), Refusal> {
        if let [inverse] = inverse[..] {
            let mut acc = self.konst(op.identity());
            for k in 0..s.inputs.first().map_or(0, |i| i.width as usize) {
                let u = self.u(s, 0, k)?;
                acc = self.fold(op, acc, u, inverse)?;
            }
            self.set(s, 0, 0, acc)?;
        } else {
            for k in 0..w {
                let mut acc = self.konst(op.identity());
                for (i, &inverse) in inverse.iter().enumerate() {
                    let u = self.u(s, i, k)?;
                    acc = self.fold(op, acc, u, inverse)?;
                }
                self.set(s, 0, k, acc)?;
            }
        }
        Ok(())
    }

    pub(super) fn unary_outputs(&mut self, s: &Step<'_>, w: usize, f: Unary) -> Result<(), Refusal> {
        for k in 0..w {
            let u = self.u(s, 0, k)?;
            let v = self.unary(f, u)?;
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn binary_outputs(&mut self, s: &Step<'_>, w: usize, f: Binary) -> Result<(), Refusal> {
        let code = code_of(&Binary::ALL, f)?;
        for k in 0..w {
            let (a, b) = (self.u(s, 0, k)?, self.u(s, 1, k)?);
            let code = self.b.ins().iconst(types::I64, code);
            let v = self.call_value(self.sigs.binary, shims::binary as *const (), &[code, a, b])?;
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn abs_outputs(&mut self, s: &Step<'_>, w: usize) -> Result<(), Refusal> {
        for k in 0..w {
            let u = self.u(s, 0, k)?;
            let side = self.side(s, k, u)?;
            let minus = self.b.ins().fneg(u);
            let v = self.b.ins().select(side, u, minus);
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn sign_outputs(&mut self, s: &Step<'_>, w: usize) -> Result<(), Refusal> {
        for k in 0..w {
            let u = self.u(s, 0, k)?;
            let side = self.side(s, k, u)?;
            let (one, minus) = (self.konst(1.0), self.konst(-1.0));
            let mut v = self.b.ins().select(side, one, minus);
            if self.major {
                let zero = self.konst(0.0);
                let at_zero = self.b.ins().fcmp(FloatCC::Equal, u, zero);
                v = self.b.ins().select(at_zero, zero, v);
            }
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn min_max_outputs(&mut self, s: &Step<'_>, w: usize, max: bool) -> Result<(), Refusal> {
        for k in 0..w {
            let (a, b) = (self.u(s, 0, k)?, self.u(s, 1, k)?);
            let z = self.b.ins().fsub(a, b);
            let first_larger = self.side(s, k, z)?;
            let v = if max {
                self.b.ins().select(first_larger, a, b)
            } else {
                self.b.ins().select(first_larger, b, a)
            };
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn saturation_outputs(&mut self, s: &Step<'_>, w: usize, lower: f64, upper: f64) -> Result<(), Refusal> {
        for k in 0..w {
            let (u, lo, hi) = (self.u(s, 0, k)?, self.konst(lower), self.konst(upper));
            let (above, below) = self.region(s, k, u, lo, hi)?;
            let inner = self.b.ins().select(below, u, hi);
            let v = self.b.ins().select(above, inner, lo);
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn dead_zone_outputs(&mut self, s: &Step<'_>, w: usize, start: f64, end: f64) -> Result<(), Refusal> {
        for k in 0..w {
            let (u, lo, hi) = (self.u(s, 0, k)?, self.konst(start), self.konst(end));
            let (above, below) = self.region(s, k, u, lo, hi)?;
            let zero = self.konst(0.0);
            let beyond = self.b.ins().fsub(u, hi);
            let before = self.b.ins().fsub(u, lo);
            let inner = self.b.ins().select(below, zero, beyond);
            let v = self.b.ins().select(above, inner, before);
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn constant_outputs(&mut self, s: &Step<'_>, values: &[f64]) -> Result<(), Refusal> {
        for k in 0..values.len() {
            let v = self.param("value", values, k)?;
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn sine_outputs(&mut self, s: &Step<'_>, wave: Wave) -> Result<(), Refusal> {
        let Wave {
            amplitude,
            frequency,
            phase,
            bias,
        } = wave;
        let (f, p, a, b) = (
            self.konst(frequency),
            self.konst(phase),
            self.konst(amplitude),
            self.konst(bias),
        );
        let ft = self.b.ins().fmul(f, self.t);
        let arg = self.b.ins().fadd(ft, p);
        let sin = self.unary(Unary::Sin, arg)?;
        let scaled = self.b.ins().fmul(a, sin);
        let v = self.b.ins().fadd(b, scaled);
        self.set(s, 0, 0, v)?;
        Ok(())
    }

    pub(super) fn step_outputs(&mut self, s: &Step<'_>, time: f64, before: f64, after: f64) -> Result<(), Refusal> {
        let time = self.konst(time);
        let z = self.b.ins().fsub(self.t, time);
        let side = self.side(s, 0, z)?;
        let (a, b) = (self.konst(after), self.konst(before));
        let v = self.b.ins().select(side, a, b);
        self.set(s, 0, 0, v)?;
        Ok(())
    }

    pub(super) fn ramp_outputs(&mut self, s: &Step<'_>, slope: f64, start: f64, initial: f64) -> Result<(), Refusal> {
        let start = self.konst(start);
        let z = self.b.ins().fsub(self.t, start);
        let side = self.side(s, 0, z)?;
        let (slope, initial) = (self.konst(slope), self.konst(initial));
        let dt = self.b.ins().fsub(self.t, start);
        let rise = self.b.ins().fmul(slope, dt);
        let on = self.b.ins().fadd(initial, rise);
        let v = self.b.ins().select(side, on, initial);
        self.set(s, 0, 0, v)?;
        Ok(())
    }

    pub(super) fn time_table_outputs(&mut self, s: &Step<'_>, curves: &[Curve]) -> Result<(), Refusal> {
        for (k, c) in curves.iter().enumerate() {
            let t = self.t;
            let v = self.curve(c, t)?;
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn lookup_outputs(&mut self, s: &Step<'_>, w: usize, c: &Curve) -> Result<(), Refusal> {
        for k in 0..w {
            let u = self.u(s, 0, k)?;
            let v = self.curve(c, u)?;
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn lookup2d_outputs(&mut self, s: &Step<'_>, w: usize, surface: &Surface) -> Result<(), Refusal> {
        for k in 0..w {
            let (row, column) = (self.u(s, 0, k)?, self.u(s, 1, k)?);
            let v = self.surface(surface, row, column)?;
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn integrator_outputs(&mut self, s: &Step<'_>, lower: f64, upper: f64) -> Result<(), Refusal> {
        let mut i = 0;
        for k in 0..s.x.len() {
            let x = self.x(s, k)?;
            let (lo, hi) = (self.konst(lower), self.konst(upper));
            if upper.is_finite() {
                let z = self.b.ins().fsub(hi, x);
                self.side(s, i, z)?;
                i += 1;
            }
            if lower.is_finite() {
                let z = self.b.ins().fsub(x, lo);
                self.side(s, i, z)?;
                i += 1;
            }
            let y = self.clamp(x, lower, upper);
            self.set(s, 0, k, y)?;
        }
        Ok(())
    }

    pub(super) fn pid_outputs(&mut self, s: &Step<'_>, kp: f64, ki: f64, kd: f64, n: f64) -> Result<(), Refusal> {
        let e = self.u(s, 0, 0)?;
        let (x0, x1) = (self.x(s, 0)?, self.x(s, 1)?);
        let (kp, ki, kdn) = (self.konst(kp), self.konst(ki), self.konst(kd * n));
        let p = self.b.ins().fmul(kp, e);
        let i = self.b.ins().fmul(ki, x0);
        let pi = self.b.ins().fadd(p, i);
        let de = self.b.ins().fsub(e, x1);
        let d = self.b.ins().fmul(kdn, de);
        let v = self.b.ins().fadd(pi, d);
        self.set(s, 0, 0, v)?;
        Ok(())
    }

    /// The discrete PID with gains `[kp, ki, kd]`: `kp e + ki t (xd[0] + e)
    /// + kd (e - xd[1]) / t`, `t` 1 or the period, as the interpreter
    /// orders it (`ki t` a constant: the same product).
    pub(super) fn discrete_pid_outputs(
        &mut self,
        s: &Step<'_>,
        [kp, ki, kd]: [f64; 3],
        per_sample: bool,
    ) -> Result<(), Refusal> {
        let t = if per_sample { 1.0 } else { s.period };
        let e = self.u(s, 0, 0)?;
        let (sum, last) = (self.xd(s, 0)?, self.xd(s, 1)?);
        let (kp, kit, kd, t) = (self.konst(kp), self.konst(ki * t), self.konst(kd), self.konst(t));
        let p = self.b.ins().fmul(kp, e);
        let sum = self.b.ins().fadd(sum, e);
        let i = self.b.ins().fmul(kit, sum);
        let difference = self.b.ins().fsub(e, last);
        let d = self.b.ins().fmul(kd, difference);
        let d = self.b.ins().fdiv(d, t);
        let pi = self.b.ins().fadd(p, i);
        let v = self.b.ins().fadd(pi, d);
        self.set(s, 0, 0, v)
    }

    /// The discrete transfer function's output from its states now:
    /// `num[0] u + xd[0]` (`+ 0` without states), as the interpreter adds.
    pub(super) fn discrete_transfer_output(&mut self, s: &Step<'_>, num: &[f64]) -> Result<Value, Refusal> {
        let u = self.u(s, 0, 0)?;
        let first = match s.xd.is_empty() {
            true => self.konst(0.0),
            false => self.xd(s, 0)?,
        };
        let n0 = self.konst(num[0]);
        let direct = self.b.ins().fmul(n0, u);
        Ok(self.b.ins().fadd(direct, first))
    }

    pub(super) fn delay_outputs(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        for k in 0..s.xd.len() {
            let v = self.xd(s, k)?;
            self.set(s, 0, k, v)?;
        }
        Ok(())
    }

    pub(super) fn linear_outputs(
        &mut self,
        s: &Step<'_>,
        (n, m, p): (usize, usize, usize),
        c: &[f64],
        d: &[f64],
    ) -> Result<(), Refusal> {
        for i in 0..p {
            let y = self.affine(s, ("C", c, i * n, n), ("D", d, i * m, m))?;
            self.set(s, 0, i, y)?;
        }
        Ok(())
    }
}
