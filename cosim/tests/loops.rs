//! Algebraic loops between sub-models (a cycle of connections through
//! outputs that depend directly on inputs): named and refused without
//! iteration, solved by the fixed-point iteration with it.

use std::path::Path;

use tandem_runtime::record::Trace;

/// a: y = u / 2 + 1 and b: y = u / 2 in a loop; the fixed point is
/// a.y = 4/3, b.y = 2/3.
fn looped(master: &str) -> String {
    format!(
        r#"[master]
step = 0.1
stop = 1
{master}

[[model]]
name = "a"
source = "half_plus_one.json"

[[model]]
name = "b"
source = "half.json"

[[connection]]
from = "a.y"
to = "b.u"

[[connection]]
from = "b.y"
to = "a.u"
"#
    )
}

#[test]
fn an_algebraic_loop_is_named_with_the_fix() {
    for ordering in ["jacobi", "gauss-seidel"] {
        let e = tandem_cosim::parse(
            &looped(&format!("ordering = \"{ordering}\"")),
            Path::new("tests/data/loop.toml"),
        )
        .err()
        .unwrap();
        assert_eq!(
            e.to_string(),
            "tests/data/loop.toml:16:6: connection[0]: algebraic loop between sub-models: a.y → b.u → b.y → a.u → \
             a.y; each output on it depends directly on the input before it, so no order of the sub-models \
             computes them: add iterate = { tolerance = 1e-9 } to [master] to solve the loop by fixed-point \
             iteration, or connect an output that does not depend directly on its inputs"
        );
    }
}

#[test]
fn the_fixed_point_iteration_solves_an_algebraic_loop() {
    for ordering in ["jacobi", "gauss-seidel"] {
        let master = format!("ordering = \"{ordering}\"\niterate = {{ tolerance = 1e-12 }}");
        let system = tandem_cosim::parse(&looped(&master), Path::new("tests/data/loop.toml")).unwrap();
        let mut trace = Trace::default();
        let summary = system.run(&mut trace, &mut |_| {}).unwrap();
        assert_eq!(summary.unconverged, 0, "{ordering}");
        assert_eq!(trace.rows.len(), 11);
        for row in &trace.rows {
            assert!(
                (row[0] - 4.0 / 3.0).abs() < 1e-11 && (row[1] - 2.0 / 3.0).abs() < 1e-11,
                "{ordering}: {row:?}"
            );
        }
    }
}

#[test]
fn an_iteration_that_reaches_its_limit_is_counted_and_the_run_goes_on() {
    let master = "iterate = { tolerance = 1e-15, max_iterations = 2 }";
    let system = tandem_cosim::parse(&looped(master), Path::new("tests/data/loop.toml")).unwrap();
    let mut trace = Trace::default();
    let summary = system.run(&mut trace, &mut |_| {}).unwrap();
    assert_eq!(trace.rows.len(), 11);
    assert!(
        summary.unconverged >= 1 && summary.largest_change > 1e-15,
        "{summary:?}"
    );
}
