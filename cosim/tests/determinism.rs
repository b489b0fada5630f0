//! The same system gives the same bits: run twice, and with Jacobi on
//! worker threads or on the caller's thread alone.

mod common;

use common::*;

fn bits(trace: &tandem_runtime::record::Trace) -> Vec<u64> {
    trace.rows.iter().flatten().map(|v| v.to_bits()).collect()
}

#[test]
fn threaded_jacobi_equals_sequential_jacobi_bit_for_bit() {
    for extra in ["", "iterate = { tolerance = 1e-10 }"] {
        let master = |threads: usize| format!("ordering = \"jacobi\"\nextrapolation = 2\nthreads = {threads}\n{extra}");
        let (alone, _) = run(&split(0.01, 1.0, 0.001, &master(1)));
        let (threaded, _) = run(&split(0.01, 1.0, 0.001, &master(2)));
        assert_eq!(alone.time, threaded.time);
        assert_eq!(bits(&alone), bits(&threaded), "{extra}");
    }
}

#[test]
fn the_same_run_twice_gives_the_same_bits() {
    for ordering in ["jacobi", "gauss-seidel"] {
        let text = split(
            0.01,
            1.0,
            0.001,
            &format!("ordering = \"{ordering}\"\nextrapolation = 1"),
        );
        let (first, _) = run(&text);
        let (second, _) = run(&text);
        assert_eq!(first.time.len(), 101);
        assert_eq!(bits(&first), bits(&second), "{ordering}");
    }
}
