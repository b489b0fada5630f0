//! Sparse LU of `I − γJ` with faer: the COLAMD fill-reducing column order
//! and the symbolic analysis once per pattern (shared by every copy), a
//! numeric factorisation with partial pivoting per matrix, and triangular
//! solves into the caller's vector with work space made once.
//!
//! faer's (simplicial) numeric factorisation grows its storage to the fill
//! its pivots make and keeps it. The factors are made with one
//! factorisation of pseudo-random values on the pattern, which pivots
//! freely, so that a plant's own matrices find the storage made; a later
//! factorisation allocates only if its pivots need more fill than every one
//! before (not seen in the counting-allocator tests).

use std::fmt;
use std::sync::Arc;

use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::lu::partial_pivoting::factor::PartialPivLuParams;
use faer::sparse::linalg::lu::{factorize_symbolic_lu, LuRef, NumericLu, SymbolicLu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Spec};

use super::Pattern;

/// Sparse LU factors of `I − γJ` on one pattern.
pub struct SparseLu {
    pattern: Arc<Pattern>,
    symbolic: Arc<SymbolicLu<usize>>,
    numeric: NumericLu<usize, f64>,
    /// `I − γJ` on the pattern.
    values: Vec<f64>,
    factor_req: StackReq,
    factor_work: MemBuffer,
    /// A solve after each factorisation tells a zero pivot (faer
    /// factors a singular matrix without a word): its vector and work.
    probe: Vec<f64>,
    probe_work: MemBuffer,
}

impl fmt::Debug for SparseLu {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "SparseLu {{ n: {}, nonzeros: {} }}",
            self.pattern.len(),
            self.pattern.nonzeros()
        )
    }
}

impl Clone for SparseLu {
    fn clone(&self) -> Self {
        SparseLu {
            pattern: Arc::clone(&self.pattern),
            symbolic: Arc::clone(&self.symbolic),
            numeric: self.numeric.clone(),
            values: self.values.clone(),
            factor_req: self.factor_req,
            factor_work: MemBuffer::new(self.factor_req),
            probe: self.probe.clone(),
            probe_work: self.solve_work(),
        }
    }
}

impl SparseLu {
    /// The symbolic analysis of `pattern` and storage for its factors,
    /// sized by factoring pseudo-random values on it (allocates).
    pub fn new(pattern: Arc<Pattern>) -> Self {
        let structure = symbolic_matrix(&pattern);
        let symbolic = factorize_symbolic_lu(structure, Default::default())
            .expect("the symbolic analysis of a sparse pattern (out of memory)");
        let factor_req = symbolic.factorize_numeric_lu_scratch::<f64>(Par::Seq, params());
        let probe_req = symbolic.solve_in_place_scratch::<f64>(1, Par::Seq);
        let mut lu = SparseLu {
            probe: vec![0.0; pattern.len()],
            probe_work: MemBuffer::new(probe_req),
            values: vec![0.0; pattern.nonzeros()],
            symbolic: Arc::new(symbolic),
            numeric: NumericLu::new(),
            factor_req,
            factor_work: MemBuffer::new(factor_req),
            pattern,
        };
        // J of values in (−1, 1) and γ = −1: I + J, its diagonal no larger
        // than the rest, so partial pivoting moves rows.
        lu.factor_shifted_values(|k| (k as f64 * 0.618_033_988_749_895).fract() * 2.0 - 1.0, -1.0);
        lu
    }

    /// Factors `I − γJ` for `jac`, the values of `J` on the pattern;
    /// `false` when it is singular or not finite.
    pub fn factor_shifted(&mut self, jac: &[f64], gamma: f64) -> bool {
        self.factor_shifted_values(|k| jac[k], gamma)
    }

    fn factor_shifted_values(&mut self, jac: impl Fn(usize) -> f64, gamma: f64) -> bool {
        for (k, v) in self.values.iter_mut().enumerate() {
            *v = -gamma * jac(k);
        }
        for &d in &self.pattern.diagonal {
            self.values[d] += 1.0;
        }
        if self.values.iter().any(|v| !v.is_finite()) {
            return false;
        }
        let a = SparseColMatRef::new(symbolic_matrix(&self.pattern), &self.values);
        let stack = MemStack::new(&mut self.factor_work);
        if (self.symbolic)
            .factorize_numeric_lu(&mut self.numeric, a, Par::Seq, stack, params())
            .is_err()
        {
            return false;
        }
        // A zero pivot divides by zero in the solve.
        self.probe.fill(1.0);
        solve(&self.symbolic, &self.numeric, &mut self.probe, &mut self.probe_work);
        self.probe.iter().all(|v| v.is_finite())
    }

    /// Work space for [`SparseLu::solve`] (allocates).
    pub fn solve_work(&self) -> MemBuffer {
        MemBuffer::new(self.symbolic.solve_in_place_scratch::<f64>(1, Par::Seq))
    }

    /// Overwrites `b` with the solution of `(I − γJ) x = b`.
    pub fn solve(&self, b: &mut [f64], work: &mut MemBuffer) {
        solve(&self.symbolic, &self.numeric, b, work);
    }
}

/// Overwrites `b` with the solution of the system `symbolic` and `numeric`
/// factor.
fn solve(symbolic: &SymbolicLu<usize>, numeric: &NumericLu<usize, f64>, b: &mut [f64], work: &mut MemBuffer) {
    if b.is_empty() {
        return;
    }
    let n = b.len();
    let lu = LuRef::new_unchecked(symbolic, numeric);
    let rhs = MatMut::from_column_major_slice_mut(b, n, 1);
    lu.solve_in_place_with_conj(Conj::No, rhs, Par::Seq, MemStack::new(work));
}

/// The structure of `pattern` as faer reads it.
fn symbolic_matrix(pattern: &Pattern) -> SymbolicSparseColMatRef<'_, usize> {
    SymbolicSparseColMatRef::new_checked(pattern.n, pattern.n, &pattern.col_ptr, None, &pattern.rows)
}

/// The numeric factorisation's parameters: faer's defaults.
fn params() -> Spec<PartialPivLuParams, f64> {
    Default::default()
}
