//! The two-mass oscillator split into two sub-models, against its exact
//! solution: the global error at t = 1 s falls with the macro step H as
//! H^(k+1) for extrapolation of order k (the reference measured ratios of
//! 1.97, 4.00 and 8.1 per halving for Jacobi), for Jacobi and for
//! Gauss–Seidel; iterating each macro step, its repetitions exchanging
//! the waveforms recorded at the micro steps, leaves only the solvers' own
//! error. Both sub-models take RK4 micro steps of H / 8, whose error (that
//! of the oscillator whole in one diagram: 7.7e-9 at the largest H,
//! 2.4e-12 at the smallest) is at least 10^3 times below the coupling's
//! without iteration.

mod common;

use common::*;

/// Macro steps 2^-10 .. 2^-13 s: exact in binary, where the error is in
/// its asymptotic regime for every order (larger steps give ratios of 5
/// to 29 for order 2, from terms of higher order).
const STEPS: [f64; 4] = [1.0 / 1024.0, 1.0 / 2048.0, 1.0 / 4096.0, 1.0 / 8192.0];

/// `(step, error)` pairs, for messages.
fn shown(points: &[(f64, f64)]) -> String {
    let pairs: Vec<String> = points.iter().map(|(h, e)| format!("H = {h:.3e}: {e:.3e}")).collect();
    pairs.join(", ")
}

/// The errors at t = 1 s over [`STEPS`] with `master` lines added.
fn errors(master: &str) -> Vec<(f64, f64)> {
    let exact = exact("t=1");
    STEPS
        .iter()
        .map(|&h| {
            let (trace, _) = run(&split(h, 1.0, h / 8.0, master));
            (h, error(&trace, exact))
        })
        .collect()
}

fn assert_slope(ordering: &str, order: usize) {
    let master = format!("ordering = \"{ordering}\"\nextrapolation = {order}");
    let points = errors(&master);
    let s = slope(&points);
    let expected = order as f64 + 1.0;
    println!("{ordering}, extrapolation {order}: {}, slope {s:.3}", shown(&points));
    assert!(
        (s - expected).abs() <= 0.25,
        "{ordering}, order {order}: slope {s} from {points:?}"
    );
}

#[test]
fn jacobi_constant_extrapolation_converges_at_first_order() {
    assert_slope("jacobi", 0);
}

#[test]
fn jacobi_linear_extrapolation_converges_at_second_order() {
    assert_slope("jacobi", 1);
}

#[test]
fn jacobi_quadratic_extrapolation_converges_at_third_order() {
    assert_slope("jacobi", 2);
}

#[test]
fn gauss_seidel_constant_extrapolation_converges_at_first_order() {
    assert_slope("gauss-seidel", 0);
}

#[test]
fn gauss_seidel_linear_extrapolation_converges_at_second_order() {
    assert_slope("gauss-seidel", 1);
}

#[test]
fn gauss_seidel_quadratic_extrapolation_converges_at_third_order() {
    assert_slope("gauss-seidel", 2);
}

#[test]
fn iteration_to_convergence_leaves_only_the_solver_error_for_either_ordering() {
    let iterate = "extrapolation = 2\niterate = { tolerance = 1e-12, max_iterations = 50 }";
    let exact = exact("t=1");
    for &h in &STEPS {
        // RK4 on the whole oscillator at the same micro step.
        let (monolithic, _) = run(&whole(h, 1.0, h / 8.0));
        let e_solver = error(&monolithic, exact);
        let mut ends = Vec::new();
        for ordering in ["jacobi", "gauss-seidel"] {
            let master = format!("ordering = \"{ordering}\"\n{iterate}");
            let (iterated, summary) = run(&split(h, 1.0, h / 8.0, &master));
            let e_iterated = error(&iterated, exact);
            println!("H = {h:.3e}, {ordering}: iterated {e_iterated:.3e}, solver {e_solver:.3e} ({summary:?})");
            assert_eq!(summary.unconverged, 0);
            assert!(summary.iterations >= summary.macro_steps, "{summary:?}");
            // Without waveforms the polynomials through the communication
            // points left 2.7e-8 at the smallest H, 10^4 times the solver's.
            assert!(
                e_iterated < 10.0 * e_solver,
                "H = {h}, {ordering}: {e_iterated} vs {e_solver}"
            );
            ends.push(last_state(&iterated));
        }
        // Both orderings iterate to the same fixed point.
        for (j, g) in ends[0].iter().zip(&ends[1]) {
            assert!((j - g).abs() < 1e-10, "{:?}", ends);
        }
    }
}

#[test]
fn a_sub_model_communicating_every_second_macro_step_converges() {
    let exact = exact("t=1");
    let mut points = Vec::new();
    for &h in &STEPS[..3] {
        let text = split(h, 1.0, h / 8.0, "ordering = \"gauss-seidel\"\nextrapolation = 1").replacen(
            "name = \"mass1\"",
            "name = \"mass1\"\nevery = 2",
            1,
        );
        let (trace, summary) = run(&text);
        assert_eq!(trace.time.len() as u64, summary.macro_steps + 1);
        points.push((h, error(&trace, exact)));
    }
    let s = slope(&points);
    println!("every = 2: {}, slope {s:.3}", shown(&points));
    assert!(points[2].1 < 2e-3, "{points:?}");
    assert!((s - 2.0).abs() <= 0.25, "{s} from {points:?}");
}
