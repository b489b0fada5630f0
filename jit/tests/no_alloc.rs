//! Evaluating a compiled diagram allocates nothing: a counting global
//! allocator watches minor and major evaluations of every example model
//! and of a diagram with blocks left to the interpreter.

#[path = "../../tests/support/counting_alloc.rs"]
mod counting_alloc;

use std::sync::Arc;

use counting_alloc::allocations_in;
use tandem_jit::{compile, CompiledModel};
use tandem_models::diagram::{self, DiagramModel};
use tandem_models::{MajorStep, Model, StateRef};

/// Evaluates `model` as an integrator would, `rounds` times; returns a sum
/// of everything it wrote, so that nothing is optimised away.
fn exercise(model: &mut dyn Model, rounds: usize) -> f64 {
    let layout = model.layout().clone();
    let (mut x, mut xd) = (vec![0.0; layout.states.len()], vec![0.0; layout.discrete]);
    model.initial_state(&mut x, &mut xd);
    let u: Vec<f64> = layout.inputs.iter().map(|v| v.default).collect();
    let mut dx = vec![0.0; x.len()];
    let mut y = vec![0.0; layout.outputs.len()];
    let mut z = vec![0.0; layout.zero_crossings.len()];
    let hits = vec![true; layout.rates.len()];
    let mut sum = 0.0;
    let n = allocations_in(|| {
        for k in 0..rounds {
            let t = k as f64 * 1e-3;
            let _ = model.major_outputs(&mut MajorStep {
                t,
                x: &mut x,
                xd: &mut xd,
                u: &u,
                hits: &hits,
                y: &mut y,
            });
            model.update(&mut MajorStep {
                t,
                x: &mut x,
                xd: &mut xd,
                u: &u,
                hits: &hits,
                y: &mut y,
            });
            let s = StateRef {
                t,
                x: &x,
                xd: &xd,
                u: &u,
            };
            model.derivatives(s, &mut dx);
            model.outputs(s, &mut y);
            model.zero_crossings(s, &mut z);
            for (x, dx) in x.iter_mut().zip(&dx) {
                *x += 1e-3 * dx;
            }
            sum += dx.iter().chain(&y).chain(&z).filter(|v| v.is_finite()).sum::<f64>();
        }
    });
    assert_eq!(n, 0, "{n} allocations in {rounds} rounds of evaluations");
    sum
}

fn compiled(text: &str) -> CompiledModel {
    let model = diagram::compile_str(text).expect("valid model").model;
    let code = compile(model.program()).expect("compiles").expect("no algebraic loops");
    CompiledModel::new(DiagramModel::new(Arc::clone(model.program())), Arc::new(code))
}

#[test]
fn compiled_examples_evaluate_without_allocating() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/examples");
    for entry in std::fs::read_dir(dir).expect("examples") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "json") {
            let mut model = compiled(&std::fs::read_to_string(&path).expect("readable"));
            assert!(exercise(&mut model, 500).is_finite(), "{}", path.display());
            let mut fork = model.fork();
            assert!(exercise(fork.as_mut(), 100).is_finite(), "{} forked", path.display());
        }
    }
}

#[test]
fn interpreted_blocks_inside_compiled_code_do_not_allocate() {
    let text = r#"{"blocks": [
        {"id": "c", "type": "Clock"},
        {"id": "t", "type": "Expression", "params": {"expression": "u1 + 2 * u2", "inputs": 2}},
        {"id": "p", "type": "Pulse", "params": {"period": 0.1, "width": 0.05}},
        {"id": "s", "type": "Sum", "params": {"signs": "+-"}},
        {"id": "x", "type": "Integrator", "params": {"upper": 2}},
        {"id": "out", "type": "Output"}],
      "links": [{"from": "c", "to": "t.1"}, {"from": "x", "to": "t.2"}, {"from": "t", "to": "s.1"},
                {"from": "p", "to": "s.2"}, {"from": "s", "to": "x"}, {"from": "x", "to": "out"}]}"#;
    let mut model = compiled(text);
    assert_eq!(model.code().report.plan.compiled, 5, "{}", model.code().report);
    assert!(exercise(&mut model, 1000).is_finite());
}

#[test]
fn a_retune_compiled_off_the_thread_swaps_in_without_allocating() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/examples/cruise_control.json");
    let mut model = compiled(&std::fs::read_to_string(path).expect("readable"));
    let mut fork = model.fork();
    for gain in [25.0, 30.0, 35.0] {
        let definition = model.retune("drag", "gain", &serde_json::json!(gain)).expect("tunable");
        let (mut mine, mut forks) = (definition.clone(), definition);
        let n = allocations_in(|| {
            assert!(model.swap_definition(&mut mine));
            assert!(fork.swap_definition(&mut forks));
        });
        assert_eq!(n, 0, "{n} allocations swapping in the code of drag.gain = {gain}");
        assert!(exercise(&mut model, 100).is_finite());
        assert!(exercise(fork.as_mut(), 100).is_finite());
    }
}
