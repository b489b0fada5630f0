//! Sparse and dense linear algebra give the same integrations: the BDF and
//! the fast side's Rosenbrock-W method on the thermal ladder (tridiagonal,
//! stiff) against its eigen-solution, dense and sparse to round-off of
//! each other, and a coloured difference Jacobian equal to the one taken
//! column by column. (The stiff test set, dense and sparse, against its
//! published solutions: `stiff_testset.rs`. There the two paths pivot
//! differently, an error test passes in one and fails in the other, and
//! the step sequences part: the results agree to the tolerance asked, not
//! to round-off.)

use std::sync::Arc;

use tandem_models::plants::ladder::Ladder;
use tandem_models::Model;
use tandem_runtime::bdf::jacobian::{Evaluation, Jacobian};
use tandem_runtime::linalg::{Factors, LinearSolver, Matrix, Pattern};
use tandem_runtime::{
    factor_iteration_matrix, Bdf, BdfOptions, FixedStepper, ModelOde, OdeSystem, Tolerance, WMethod, WStepper,
};

/// A difference Jacobian's increment of a state `y`.
const INCREMENT: fn(usize, f64) -> f64 = |_, y| 1e-7 * y.abs().max(1.0);

/// `ladder` as the ODE it is without heating.
fn unheated(ladder: &mut Ladder) -> ModelOde<'_> {
    ModelOde {
        model: ladder,
        xd: &[],
        u: &[0.0],
    }
}

/// A ladder of `n` nodes, its initial state and the derivatives there.
fn ladder_at_start(n: usize) -> (Ladder, Vec<f64>, Vec<f64>) {
    let mut ladder = Ladder::new(n);
    let mut x = vec![0.0; n];
    ladder.initial_state(&mut x, &mut []);
    let mut fx = vec![0.0; n];
    unheated(&mut ladder).rhs(0.0, &x, &mut fx);
    (ladder, x, fx)
}

/// The ladder's state at `t_end` by the BDF with `solver`, and its steps.
fn bdf_on_ladder(n: usize, solver: LinearSolver, t_end: f64) -> (Vec<f64>, u64) {
    let (mut ladder, mut x, _) = ladder_at_start(n);
    let options = BdfOptions {
        rtol: 1e-8,
        atol: Tolerance::Scalar(1e-10),
        linear_solver: solver,
        ..BdfOptions::default()
    };
    let mut bdf = Bdf::new(n, options, ladder.sparsity()).unwrap();
    let mut ode = unheated(&mut ladder);
    bdf.init(&mut ode, 0.0, &x, t_end);
    bdf.solve_to(&mut ode, t_end, t_end, &mut x).unwrap();
    (x, bdf.stats().steps)
}

#[test]
fn the_bdf_follows_the_ladders_eigen_solution_dense_and_sparse_alike() {
    let (n, t_end) = (300, 0.5);
    let exact = Ladder::new(n);
    let (dense, dense_steps) = bdf_on_ladder(n, LinearSolver::Dense, t_end);
    let (sparse, sparse_steps) = bdf_on_ladder(n, LinearSolver::Sparse, t_end);
    for (i, (d, s)) in dense.iter().zip(&sparse).enumerate() {
        let want = exact.exact(i, t_end);
        assert!((s - want).abs() < 1e-5, "node {i}: sparse {s}, exactly {want}");
        assert!((d - s).abs() < 1e-11, "node {i}: dense {d}, sparse {s}");
    }
    assert_eq!(dense_steps, sparse_steps, "the same steps either way");
}

#[test]
fn the_fast_sides_rosenbrock_step_is_the_same_with_sparse_factors() {
    // 1000 frames of 1 ms of ROS34PW2 with the matrix of the initial
    // state, as the fast side steps between matrix updates.
    let n = 500;
    let (h, frames) = (1e-3, 1000);
    let mut results = Vec::new();
    for solver in [LinearSolver::Dense, LinearSolver::Sparse] {
        let (mut ladder, mut x, fx) = ladder_at_start(n);
        let mut jacobian = Jacobian::new(n, ladder.sparsity(), solver);
        assert_eq!(jacobian.matrix.is_sparse(), solver == LinearSolver::Sparse);
        let mut ode = unheated(&mut ladder);
        jacobian.evaluate_with(&mut ode, 0.0, &x, &fx, INCREMENT);
        let mut factors = Factors::new(&jacobian.matrix);
        assert!(factor_iteration_matrix(
            &mut factors,
            &jacobian.matrix,
            h,
            WMethod::Ros34pw2
        ));
        let mut stepper = WStepper::new(WMethod::Ros34pw2, n).solving_with(&factors);
        for k in 0..frames {
            let mut system = ModelOde {
                model: &mut ladder,
                xd: &[],
                u: &[0.0],
            };
            stepper
                .with_factors(&factors)
                .step(&mut system, k as f64 * h, h, &mut x);
        }
        let exact = Ladder::new(n);
        for (i, v) in x.iter().enumerate() {
            let want = exact.exact(i, frames as f64 * h);
            assert!((v - want).abs() < 1e-3, "{solver}: node {i}: {v}, exactly {want}");
        }
        results.push(x);
    }
    for (i, (d, s)) in results[0].iter().zip(&results[1]).enumerate() {
        assert!((d - s).abs() < 1e-12, "node {i}: dense {d}, sparse {s}");
    }
}

#[test]
fn a_coloured_jacobian_is_the_one_taken_column_by_column() {
    // The ladder: 3 evaluations instead of n; the same values bit for bit
    // (a derivative never reads the other columns of its group).
    let n = 100;
    let (mut ladder, x, fx) = ladder_at_start(n);
    let mut ode = unheated(&mut ladder);
    let mut coloured = Jacobian::new(n, ode.sparsity(), LinearSolver::Sparse);
    let mut by_column = Jacobian::new(n, None, LinearSolver::Dense);
    assert_eq!(
        coloured.evaluate_with(&mut ode, 0.0, &x, &fx, INCREMENT),
        Evaluation::Differences(3)
    );
    assert_eq!(
        by_column.evaluate_with(&mut ode, 0.0, &x, &fx, INCREMENT),
        Evaluation::Differences(n as u32)
    );
    assert_eq!(coloured.matrix.to_dense(), by_column.matrix.to_dense());
}

#[test]
fn sparse_factors_refuse_a_singular_matrix_as_dense_ones_do() {
    // I − γJ with J = I/γ on a tridiagonal pattern is the zero matrix.
    let n: usize = 80;
    let columns: Vec<Vec<usize>> = (0..n)
        .map(|j| (j.saturating_sub(1)..(j + 2).min(n)).collect())
        .collect();
    let pattern = Arc::new(Pattern::new(n, Some(&columns)));
    for solver in [LinearSolver::Dense, LinearSolver::Sparse] {
        let mut jac = Matrix::zeros(Arc::clone(&pattern), solver);
        for j in 0..n {
            jac.set_column(j, |i| if i == j { 2.0 } else { 0.0 });
        }
        let mut factors = Factors::new(&jac);
        assert!(!factors.factor_shifted(&jac, 0.5), "{solver}");
        jac.set_column(3, |_| f64::NAN);
        assert!(!factors.factor_shifted(&jac, 0.1), "{solver}: a NaN entry");
    }
}
