//! Dense LU factors for Newton iterations (the implicit integrators'
//! `I - γJ`, algebraic loops' residual Jacobians), factored in place into
//! storage allocated once.

use nalgebra::{DMatrix, DVectorViewMut};

/// LU factors with partial (row) pivoting of an `n × n` matrix.
#[derive(Clone, Debug)]
pub struct Lu {
    /// `L` (unit diagonal, below) and `U` (on and above the diagonal).
    factors: DMatrix<f64>,
    /// Row swapped with row `i` at elimination step `i`.
    swaps: Vec<usize>,
}

impl Lu {
    /// Storage for an `n × n` matrix.
    pub fn new(n: usize) -> Self {
        Lu {
            factors: DMatrix::zeros(n, n),
            swaps: vec![0; n],
        }
    }

    /// The matrix to factor with [`Lu::factor`] (overwritten by it).
    pub fn matrix_mut(&mut self) -> &mut DMatrix<f64> {
        &mut self.factors
    }

    /// Factors `I - gamma * jac`; returns `false` when it is singular.
    pub fn factor_shifted(&mut self, jac: &DMatrix<f64>, gamma: f64) -> bool {
        let a = &mut self.factors;
        a.copy_from(jac);
        *a *= -gamma;
        for i in 0..a.nrows() {
            a[(i, i)] += 1.0;
        }
        self.factor()
    }

    /// Gaussian elimination with partial pivoting on the stored matrix;
    /// returns `false` when it is singular.
    pub fn factor(&mut self) -> bool {
        let a = &mut self.factors;
        let n = a.nrows();
        for i in 0..n {
            let pivot = i + a.view_range(i.., i).icamax();
            let diag = a[(pivot, i)];
            if diag == 0.0 || !diag.is_finite() {
                return false;
            }
            a.swap_rows(i, pivot);
            self.swaps[i] = pivot;
            let inv = 1.0 / diag;
            for r in i + 1..n {
                a[(r, i)] *= inv;
            }
            for k in i + 1..n {
                let p = a[(i, k)];
                if p != 0.0 {
                    for r in i + 1..n {
                        let l = a[(r, i)];
                        a[(r, k)] -= p * l;
                    }
                }
            }
        }
        true
    }

    /// The size `n` of the matrix.
    pub fn size(&self) -> usize {
        self.swaps.len()
    }

    /// Overwrites `b` with the solution `x` of `A x = b` (nothing to do
    /// for a model without continuous states, `n = 0`).
    pub fn solve(&self, b: &mut [f64]) {
        if b.is_empty() {
            return;
        }
        for (i, &p) in self.swaps.iter().enumerate() {
            b.swap(i, p);
        }
        let n = b.len();
        let mut x = DVectorViewMut::from_slice(b, n);
        self.factors.solve_lower_triangular_with_diag_mut(&mut x, 1.0);
        self.factors.solve_upper_triangular_mut(&mut x);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_system_that_needs_pivoting() {
        // I - 1 * J with J chosen so that I - J = [[0, 2, 1], [1, 1, 0], [3, 0, 1]].
        let m = DMatrix::from_row_slice(3, 3, &[0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0]);
        let jac = DMatrix::identity(3, 3) - &m;
        let mut lu = Lu::new(3);
        assert!(lu.factor_shifted(&jac, 1.0));
        let x_true = [1.0, -2.0, 3.0];
        let mut b: Vec<f64> = (0..3).map(|i| (0..3).map(|j| m[(i, j)] * x_true[j]).sum()).collect();
        lu.solve(&mut b);
        for (x, t) in b.iter().zip(x_true) {
            assert!((x - t).abs() < 1e-14, "{b:?}");
        }
    }

    #[test]
    fn an_empty_system_solves_to_nothing() {
        let mut lu = Lu::new(0);
        assert!(lu.factor_shifted(&DMatrix::zeros(0, 0), 0.5));
        let mut b: [f64; 0] = [];
        lu.solve(&mut b);
    }

    #[test]
    fn reports_a_singular_matrix() {
        let jac = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, 1.0]);
        assert!(!Lu::new(2).factor_shifted(&jac, 1.0));
    }
}
