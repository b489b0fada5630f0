//! When a block runs, and what it does when it does not: the minor and
//! major evaluations of blocks that are enabled by a signal or run at the
//! hits of a rate (a branch on the condition, outputs latched into their
//! hold slots or read back from them), and the updates after a major pass,
//! as the interpreter's `Program::run_entries` and `update_block` do them.

use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{types, InstBuilder, MemFlags, Value};
use tandem_models::blocks::kernel::{Kernel, Update};
use tandem_models::diagram::{Minor, Step};

use super::{translates_update, Buf, Emitter, Evaluation, Refusal};

impl Emitter<'_> {
    /// Block `s`'s minor evaluation: its kernel when it runs (enabled, if
    /// guarded), else its held outputs.
    pub(super) fn minor_outputs(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        match s.minor {
            Minor::Runs => self.kernel_outputs(s),
            Minor::Held(_) => self.held(s),
            Minor::Guarded(g) => {
                let enabled = self.enabled(g)?;
                self.branch(enabled, |e| e.kernel_outputs(s), |e| e.held(s))
            }
        }
    }

    /// Block `s`'s major evaluation: when it runs now, its kernel, its
    /// outputs then latched into its hold slots; else its held outputs.
    pub(super) fn major_outputs(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        let runs = |e: &mut Self| {
            e.kernel_outputs(s)?;
            e.latch(s)
        };
        match self.runs_now(s)? {
            None => runs(self),
            Some(now) => self.branch(now, runs, |e| e.held(s)),
        }
    }

    /// Block `i`'s update, after a major pass, when it runs now: translated
    /// when [`translates_update`], else interpreted. `s` has passed
    /// [`super::prove`].
    pub(crate) fn update(&mut self, i: usize, s: &Step<'_>) -> Result<(), Refusal> {
        if !translates_update(s) {
            self.interpreted(Evaluation::Update, i);
            return Ok(());
        }
        if s.update == Update::Nothing {
            return Ok(());
        }
        match self.runs_now(s)? {
            None => self.update_kernel(s),
            Some(now) => self.branch(now, |e| e.update_kernel(s), |_| Ok(())),
        }
    }

    /// The code of block `s`'s update.
    fn update_kernel(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        match s.update {
            Update::Opaque => Err("its update is not translated".into()),
            Update::Nothing => Ok(()),
            Update::Clamp { lower, upper } => {
                for k in 0..s.x.len() {
                    let x = self.x(s, k)?;
                    let x = self.clamp(x, lower, upper);
                    self.store(Buf::X, s.x.start + k, x)?;
                }
                Ok(())
            }
            Update::Delay => {
                for k in 0..s.xd.len() {
                    let u = self.u(s, 0, k)?;
                    self.store(Buf::Xd, s.xd.start + k, u)?;
                }
                Ok(())
            }
            Update::SumAndLast => {
                let (sum, e) = (self.xd(s, 0)?, self.u(s, 0, 0)?);
                let sum = self.b.ins().fadd(sum, e);
                self.store(Buf::Xd, s.xd.start, sum)?;
                self.store(Buf::Xd, s.xd.start + 1, e)
            }
            Update::Transfer => {
                let Kernel::DiscreteTransfer { num, den } = s.kernel else {
                    return Err("its update follows a discrete transfer function's kernel".into());
                };
                let (u, y) = (self.u(s, 0, 0)?, self.discrete_transfer_output(s, num)?);
                let old: Vec<Value> = (0..s.xd.len()).map(|i| self.xd(s, i)).collect::<Result<_, _>>()?;
                for i in 0..old.len() {
                    let (b, a) = (self.konst(num[i + 1]), self.konst(den[i + 1]));
                    let bu = self.b.ins().fmul(b, u);
                    let ay = self.b.ins().fmul(a, y);
                    let difference = self.b.ins().fsub(bu, ay);
                    let next = match old.get(i + 1) {
                        Some(&next) => next,
                        None => self.konst(0.0),
                    };
                    let v = self.b.ins().fadd(difference, next);
                    self.store(Buf::Xd, s.xd.start + i, v)?;
                }
                Ok(())
            }
            Update::Count { initial, upper } => {
                let (one, initial, upper) = (self.konst(1.0), self.konst(initial), self.konst(upper));
                let count = self.xd(s, 0)?;
                let next = self.b.ins().fadd(count, one);
                let past = self.b.ins().fcmp(FloatCC::GreaterThan, next, upper);
                let v = self.b.ins().select(past, initial, next);
                self.store(Buf::Xd, s.xd.start, v)
            }
            Update::Accumulate { gain } => {
                let (gain, period) = (self.konst(gain), self.konst(s.period));
                let scale = self.b.ins().fmul(gain, period);
                for k in 0..s.xd.len() {
                    let (xd, u) = (self.xd(s, k)?, self.u(s, 0, k)?);
                    let step = self.b.ins().fmul(scale, u);
                    let v = self.b.ins().fadd(xd, step);
                    self.store(Buf::Xd, s.xd.start + k, v)?;
                }
                Ok(())
            }
        }
    }

    /// Zero derivatives for block `s`'s states (while it is disabled).
    pub(super) fn rest(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        for k in s.x.clone() {
            let zero = self.konst(0.0);
            self.store(Buf::Dx, k, zero)?;
        }
        Ok(())
    }

    /// Block `s` not running: its switching distances +inf, its outputs
    /// read back from its hold slots.
    fn held(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        for d in s.zc.clone() {
            let inf = self.konst(f64::INFINITY);
            self.store(Buf::Distance, d, inf)?;
        }
        let Some(mut k) = s.hold else {
            return Ok(());
        };
        for j in 0..s.outputs.len() {
            for e in 0..Self::out_width(s, j) {
                let v = self.load(Buf::Xd, k)?;
                self.set(s, j, e, v)?;
                k += 1;
            }
        }
        Ok(())
    }

    /// Block `s`'s outputs copied into its hold slots, when it has them.
    fn latch(&mut self, s: &Step<'_>) -> Result<(), Refusal> {
        let Some(mut k) = s.hold else {
            return Ok(());
        };
        for slot in s.outputs {
            for e in 0..slot.width as usize {
                let v = self.load(Buf::Signals, slot.offset as usize + e)?;
                self.store(Buf::Xd, k, v)?;
                k += 1;
            }
        }
        Ok(())
    }

    /// Whether the enabling signal at offset `g` is > 0.
    pub(super) fn enabled(&mut self, g: usize) -> Result<Value, Refusal> {
        let v = self.load(Buf::Signals, g)?;
        let zero = self.konst(0.0);
        Ok(self.b.ins().fcmp(FloatCC::GreaterThan, v, zero))
    }

    /// Whether block `s` runs in this major pass (enabled, and its rate
    /// hits when it has one); `None` when it always does.
    fn runs_now(&mut self, s: &Step<'_>) -> Result<Option<Value>, Refusal> {
        let hit = match s.rate {
            Some(r) => {
                if r >= self.bounds.rates {
                    return Err(format!("its rate {r} is beyond the model's {}", self.bounds.rates));
                }
                let offset = i32::try_from(r).map_err(|_| format!("its rate {r} is beyond 2^31"))?;
                Some(self.b.ins().load(types::I8, MemFlags::trusted(), self.hits, offset))
            }
            None => None,
        };
        let enabled = s.guard.map(|g| self.enabled(g)).transpose()?;
        Ok(match (enabled, hit) {
            (Some(a), Some(b)) => Some(self.b.ins().band(a, b)),
            (a, b) => a.or(b),
        })
    }

    /// `then` where `cond` is non-zero, else `otherwise`. Values loaded
    /// before are not reused inside or after (the cache is emptied), so
    /// that no value is used where it is not defined.
    pub(super) fn branch(
        &mut self,
        cond: Value,
        then: impl FnOnce(&mut Self) -> Result<(), Refusal>,
        otherwise: impl FnOnce(&mut Self) -> Result<(), Refusal>,
    ) -> Result<(), Refusal> {
        let (yes, no, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.ins().brif(cond, yes, &[], no, &[]);
        self.cache.clear();
        self.b.switch_to_block(yes);
        self.b.seal_block(yes);
        then(self)?;
        self.b.ins().jump(join, &[]);
        self.cache.clear();
        self.b.switch_to_block(no);
        self.b.seal_block(no);
        otherwise(self)?;
        self.b.ins().jump(join, &[]);
        self.cache.clear();
        self.b.switch_to_block(join);
        self.b.seal_block(join);
        Ok(())
    }
}
