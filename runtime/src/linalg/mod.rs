//! The linear algebra of the implicit methods: the Jacobian `∂f/∂y` kept as
//! its structure allows, and the factors of the iteration matrix `I − γJ`
//! that the BDF's and the fixed-step methods' Newton iterations and the
//! Rosenbrock-W stages solve with.
//!
//! A model's Jacobian structure ([`tandem_models::Model::sparsity`]: the
//! compiled diagram's, a plant's declared one, an FMU's dependencies) is a
//! [`Pattern`]. A [`Matrix`] on it is dense (an `n × n` array, zero outside
//! the pattern) or sparse (its nonzeros only, in compressed columns), and
//! [`Factors`] of `I − γJ` are dense LU with partial pivoting or faer's
//! sparse LU (a fill-reducing ordering and symbolic analysis once per
//! pattern, a numeric factorisation per matrix, triangular solves into the
//! caller's buffer with work space made once). [`LinearSolver::Auto`] takes
//! the sparse path when the system is large and its pattern thin, where it
//! costs O(nonzeros) per solve instead of O(n²) and far less than O(n³) per
//! factorisation.
//!
//! Nothing here allocates after construction, but a sparse factorisation
//! whose pivots change the fill may grow faer's storage (see
//! [`sparse::SparseLu`]).

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use nalgebra::DMatrix;
use tandem_models::linalg::Lu;

use crate::named::{by_name, UnknownName};

pub mod sparse;

use sparse::SparseLu;

/// Which storage the implicit methods use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LinearSolver {
    /// Sparse for large systems with a thin known pattern
    /// ([`LinearSolver::sparse_pays`]), dense otherwise.
    #[default]
    Auto,
    /// Dense LU: best for small or dense systems.
    Dense,
    /// Sparse LU, whenever the pattern is known.
    Sparse,
}

impl LinearSolver {
    /// Every choice, for listing valid names.
    pub const ALL: [LinearSolver; 3] = [LinearSolver::Auto, LinearSolver::Dense, LinearSolver::Sparse];

    /// Below this many states dense is always faster.
    pub const SPARSE_FROM: usize = 64;

    /// The name used in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            LinearSolver::Auto => "auto",
            LinearSolver::Dense => "dense",
            LinearSolver::Sparse => "sparse",
        }
    }

    /// Whether a system of `n` states whose pattern holds `nonzeros`
    /// entries is better served sparse: at least
    /// [`LinearSolver::SPARSE_FROM`] states and at most a tenth of the
    /// matrix filled.
    pub fn sparse_pays(n: usize, nonzeros: usize) -> bool {
        n >= Self::SPARSE_FROM && nonzeros as f64 <= 0.1 * (n as f64) * (n as f64)
    }

    /// Whether `pattern` is stored sparse under this choice.
    pub fn stores_sparse(self, pattern: &Pattern) -> bool {
        pattern.known
            && match self {
                LinearSolver::Auto => Self::sparse_pays(pattern.n, pattern.nonzeros()),
                LinearSolver::Dense => false,
                LinearSolver::Sparse => true,
            }
    }
}

impl FromStr for LinearSolver {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        by_name(&LinearSolver::ALL, LinearSolver::name, s, "linear solver")
    }
}

impl fmt::Display for LinearSolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// What a [`LinearSolver`] chose for a system, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Chosen {
    /// The system's states.
    pub states: usize,
    /// Whether it is stored and factored sparse.
    pub sparse: bool,
    /// The entries of its pattern (the diagonal included; `states²` when
    /// not known).
    pub nonzeros: usize,
}

impl Chosen {
    /// What `solver` chooses for a system of `n` states whose Jacobian has
    /// the structure `columns` (for each column, its rows), when known.
    pub fn of(solver: LinearSolver, n: usize, columns: Option<&[Vec<usize>]>) -> Self {
        match columns {
            Some(columns) => {
                let pattern = Pattern::new(n, Some(columns));
                Chosen {
                    states: n,
                    sparse: solver.stores_sparse(&pattern),
                    nonzeros: pattern.nonzeros(),
                }
            }
            None => Chosen {
                states: n,
                sparse: false,
                nonzeros: n * n,
            },
        }
    }
}

impl fmt::Display for Chosen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.sparse {
            true => write!(f, "sparse LU, {} nonzeros in {} columns", self.nonzeros, self.states),
            false => f.write_str("dense LU"),
        }
    }
}

/// The structure of an `n × n` Jacobian in compressed columns (each
/// column's rows sorted), the diagonal always included (the iteration
/// matrix `I − γJ` has it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    n: usize,
    /// Where each column's rows start in `rows`; `n + 1` entries.
    col_ptr: Vec<usize>,
    rows: Vec<usize>,
    /// Where each column's diagonal entry sits in `rows`.
    diagonal: Vec<usize>,
    /// Whether it came from a known structure (else every entry).
    known: bool,
}

impl Pattern {
    /// The pattern of `columns` (for each column, the rows that may be
    /// nonzero), or the full one when not known.
    pub fn new(n: usize, columns: Option<&[Vec<usize>]>) -> Self {
        let mut col_ptr = Vec::with_capacity(n + 1);
        let mut rows = Vec::new();
        let mut diagonal = Vec::with_capacity(n);
        col_ptr.push(0);
        for j in 0..n {
            let start = rows.len();
            match columns {
                Some(columns) => {
                    let mut column: Vec<usize> = columns[j].iter().copied().filter(|&i| i < n).collect();
                    column.push(j);
                    column.sort_unstable();
                    column.dedup();
                    rows.extend(column);
                }
                None => rows.extend(0..n),
            }
            let d = rows[start..].binary_search(&j).map_or(start, |k| start + k);
            diagonal.push(d);
            col_ptr.push(rows.len());
        }
        Pattern {
            n,
            col_ptr,
            rows,
            diagonal,
            known: columns.is_some(),
        }
    }

    /// The number of states `n`.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether it is the pattern of no states.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// Whether it came from a known structure (else it holds every entry).
    pub fn is_known(&self) -> bool {
        self.known
    }

    /// The entries it holds.
    pub fn nonzeros(&self) -> usize {
        self.rows.len()
    }

    /// The rows of column `j`.
    pub fn column(&self, j: usize) -> &[usize] {
        &self.rows[self.col_ptr[j]..self.col_ptr[j + 1]]
    }
}

/// Values on a [`Pattern`].
#[derive(Clone, Debug)]
enum Storage {
    /// An `n × n` array, zero outside the pattern.
    Dense(DMatrix<f64>),
    /// The pattern's entries, in its order.
    Sparse(Vec<f64>),
}

/// An `n × n` matrix on a pattern, stored dense or sparse.
#[derive(Clone, Debug)]
pub struct Matrix {
    pattern: Arc<Pattern>,
    storage: Storage,
}

impl Matrix {
    /// A zero matrix on `pattern`, stored as `solver` says.
    pub fn zeros(pattern: Arc<Pattern>, solver: LinearSolver) -> Self {
        let storage = if solver.stores_sparse(&pattern) {
            Storage::Sparse(vec![0.0; pattern.nonzeros()])
        } else {
            Storage::Dense(DMatrix::zeros(pattern.n, pattern.n))
        };
        Matrix { pattern, storage }
    }

    /// A dense matrix holding `m` (its pattern full).
    pub fn from_dense(m: DMatrix<f64>) -> Self {
        Matrix {
            pattern: Arc::new(Pattern::new(m.nrows(), None)),
            storage: Storage::Dense(m),
        }
    }

    /// Whether it is stored sparse.
    pub fn is_sparse(&self) -> bool {
        matches!(self.storage, Storage::Sparse(_))
    }

    /// Entry `(i, j)` (zero outside the pattern).
    pub fn get(&self, i: usize, j: usize) -> f64 {
        match &self.storage {
            Storage::Dense(m) => m[(i, j)],
            Storage::Sparse(values) => {
                let start = self.pattern.col_ptr[j];
                self.pattern
                    .column(j)
                    .binary_search(&i)
                    .map_or(0.0, |k| values[start + k])
            }
        }
    }

    /// Sets every entry to zero.
    pub fn fill_zero(&mut self) {
        match &mut self.storage {
            Storage::Dense(m) => m.fill(0.0),
            Storage::Sparse(values) => values.fill(0.0),
        }
    }

    /// Calls `value(i)` for each row `i` of column `j`'s pattern and
    /// stores what it gives at `(i, j)`.
    pub fn set_column(&mut self, j: usize, mut value: impl FnMut(usize) -> f64) {
        let (start, end) = (self.pattern.col_ptr[j], self.pattern.col_ptr[j + 1]);
        let rows = &self.pattern.rows[start..end];
        match &mut self.storage {
            Storage::Dense(m) => {
                for &i in rows {
                    m[(i, j)] = value(i);
                }
            }
            Storage::Sparse(values) => {
                for (v, &i) in values[start..end].iter_mut().zip(rows) {
                    *v = value(i);
                }
            }
        }
    }

    /// The dense array, when stored dense (column-major, `n × n`).
    pub fn dense_mut(&mut self) -> Option<&mut DMatrix<f64>> {
        match &mut self.storage {
            Storage::Dense(m) => Some(m),
            Storage::Sparse(_) => None,
        }
    }

    /// A dense copy (for tests and reports; allocates).
    pub fn to_dense(&self) -> DMatrix<f64> {
        match &self.storage {
            Storage::Dense(m) => m.clone(),
            Storage::Sparse(_) => DMatrix::from_fn(self.pattern.n, self.pattern.n, |i, j| self.get(i, j)),
        }
    }
}

/// What an LU factorisation of `I − γJ` offers, dense or sparse: a
/// numeric factorisation per matrix into storage made once, and solves
/// into the caller's vector with work space made once.
pub trait Factorization {
    /// Factors `I − γ jac`; `false` when it is singular or not finite.
    /// `jac` must be stored as the matrix these factors were made for.
    fn factor_shifted(&mut self, jac: &Matrix, gamma: f64) -> bool;

    /// Work space for [`Factorization::solve`] (allocates).
    fn solve_work(&self) -> SolveWork;

    /// Overwrites `b` with the solution `x` of `(I − γJ) x = b`, using
    /// `work` (from [`Factorization::solve_work`] of factors of this
    /// pattern).
    fn solve(&self, b: &mut [f64], work: &mut SolveWork);
}

impl Factorization for Lu {
    fn factor_shifted(&mut self, jac: &Matrix, gamma: f64) -> bool {
        match &jac.storage {
            Storage::Dense(m) => Lu::factor_shifted(self, m, gamma),
            Storage::Sparse(_) => panic!("dense factors of a sparse matrix"),
        }
    }

    fn solve_work(&self) -> SolveWork {
        SolveWork(None)
    }

    fn solve(&self, b: &mut [f64], _: &mut SolveWork) {
        Lu::solve(self, b);
    }
}

impl Factorization for SparseLu {
    fn factor_shifted(&mut self, jac: &Matrix, gamma: f64) -> bool {
        match &jac.storage {
            Storage::Sparse(values) => SparseLu::factor_shifted(self, values, gamma),
            Storage::Dense(_) => panic!("sparse factors of a dense matrix"),
        }
    }

    fn solve_work(&self) -> SolveWork {
        SolveWork(Some(SparseLu::solve_work(self)))
    }

    fn solve(&self, b: &mut [f64], work: &mut SolveWork) {
        let buffer = work.0.as_mut().expect("solve work made for sparse factors");
        SparseLu::solve(self, b, buffer);
    }
}

/// LU factors of `I − γJ` for matrices of one pattern and storage: the
/// [`Factorization`] a [`Matrix`]'s storage calls for, held by value.
#[derive(Clone, Debug)]
pub enum Factors {
    /// Dense LU with partial pivoting.
    Dense(Lu),
    /// Sparse LU (boxed: faer's factors are a large value).
    Sparse(Box<SparseLu>),
}

/// Work space for solving with [`Factors`], made once per solver.
#[derive(Default)]
pub struct SolveWork(Option<faer::dyn_stack::MemBuffer>);

impl fmt::Debug for SolveWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() {
            "SolveWork(sparse)"
        } else {
            "SolveWork(dense)"
        })
    }
}

impl Factors {
    /// Storage for factors of matrices like `matrix` (the sparse symbolic
    /// analysis runs here; allocates).
    pub fn new(matrix: &Matrix) -> Self {
        match &matrix.storage {
            Storage::Dense(_) => Factors::Dense(Lu::new(matrix.pattern.n)),
            Storage::Sparse(_) => Factors::Sparse(Box::new(SparseLu::new(Arc::clone(&matrix.pattern)))),
        }
    }

    fn factorization(&self) -> &dyn Factorization {
        match self {
            Factors::Dense(lu) => lu,
            Factors::Sparse(lu) => &**lu,
        }
    }

    fn factorization_mut(&mut self) -> &mut dyn Factorization {
        match self {
            Factors::Dense(lu) => lu,
            Factors::Sparse(lu) => &mut **lu,
        }
    }

    /// See [`Factorization::factor_shifted`].
    pub fn factor_shifted(&mut self, jac: &Matrix, gamma: f64) -> bool {
        self.factorization_mut().factor_shifted(jac, gamma)
    }

    /// See [`Factorization::solve_work`].
    pub fn solve_work(&self) -> SolveWork {
        self.factorization().solve_work()
    }

    /// See [`Factorization::solve`].
    pub fn solve(&self, b: &mut [f64], work: &mut SolveWork) {
        self.factorization().solve(b, work);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tridiagonal pattern of `n` states.
    fn tridiagonal(n: usize) -> Vec<Vec<usize>> {
        (0..n)
            .map(|j| (j.saturating_sub(1)..(j + 2).min(n)).collect())
            .collect()
    }

    #[test]
    fn a_pattern_keeps_each_column_sorted_with_its_diagonal_once() {
        let p = Pattern::new(3, Some(&[vec![2, 0, 2], vec![], vec![1]]));
        assert_eq!(
            (p.column(0), p.column(1), p.column(2)),
            (&[0, 2][..], &[1][..], &[1, 2][..])
        );
        assert_eq!(p.nonzeros(), 5);
        assert_eq!(Pattern::new(2, None).nonzeros(), 4);
    }

    #[test]
    fn auto_goes_sparse_for_large_thin_patterns_only() {
        let thin = Pattern::new(200, Some(&tridiagonal(200)));
        assert!(LinearSolver::Auto.stores_sparse(&thin));
        assert!(!LinearSolver::Dense.stores_sparse(&thin));
        let small = Pattern::new(20, Some(&tridiagonal(20)));
        assert!(!LinearSolver::Auto.stores_sparse(&small) && LinearSolver::Sparse.stores_sparse(&small));
        let unknown = Pattern::new(200, None);
        assert!(
            !LinearSolver::Sparse.stores_sparse(&unknown),
            "no structure, no sparse storage"
        );
    }

    #[test]
    fn dense_and_sparse_factors_solve_alike() {
        // A nonsymmetric tridiagonal J with a few zero diagonal entries:
        // I − γJ needs its pivots.
        let n = 100;
        let pattern = Arc::new(Pattern::new(n, Some(&tridiagonal(n))));
        let entry = |i: usize, j: usize| match i as i64 - j as i64 {
            0 if i.is_multiple_of(7) => 0.0,
            0 => -2.0 - (i % 5) as f64,
            1 => 1.5,
            -1 => 0.5 + (j % 3) as f64,
            _ => 0.0,
        };
        let mut solutions = Vec::new();
        for solver in [LinearSolver::Dense, LinearSolver::Sparse] {
            let mut jac = Matrix::zeros(Arc::clone(&pattern), solver);
            assert_eq!(jac.is_sparse(), solver == LinearSolver::Sparse);
            for j in 0..n {
                jac.set_column(j, |i| entry(i, j));
            }
            let mut factors = Factors::new(&jac);
            assert!(factors.factor_shifted(&jac, 10.0));
            let mut work = factors.solve_work();
            let mut b: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let rhs = b.clone();
            factors.solve(&mut b, &mut work);
            // (I − γJ) x = rhs, checked entry by entry.
            for (i, r) in rhs.iter().enumerate() {
                let lhs: f64 = (0..n).map(|j| (f64::from(i == j) - 10.0 * entry(i, j)) * b[j]).sum();
                assert!((lhs - r).abs() < 1e-12, "{solver}: row {i}");
            }
            solutions.push(b);
        }
        for (d, s) in solutions[0].iter().zip(&solutions[1]) {
            assert!((d - s).abs() < 1e-13 * d.abs().max(1.0));
        }
    }
}
