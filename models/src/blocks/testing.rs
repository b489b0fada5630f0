//! Test helper: evaluates one block fed by constants.

use serde_json::{json, Value};

use crate::diagram::{compile_str, DiagramError};
use crate::model::{MajorStep, Model};

/// Builds a model around `block` (a block object without `id`), feeds input
/// `i` with the constant `inputs[i]`, connects `n_out` outputs, runs one
/// major evaluation at time `t` with every rate hitting and returns the
/// outputs per port.
pub(crate) fn eval(block: Value, inputs: &[&[f64]], n_out: usize, t: f64) -> Result<Vec<Vec<f64>>, DiagramError> {
    let mut blocks = vec![];
    let mut links = vec![];
    let mut b = block;
    b["id"] = json!("b");
    blocks.push(b);
    for (i, v) in inputs.iter().enumerate() {
        blocks.push(json!({"id": format!("c{i}"), "type": "Constant", "params": {"value": v}}));
        links.push(json!({"from": format!("c{i}"), "to": format!("b.{}", i + 1)}));
    }
    for j in 0..n_out {
        blocks.push(json!({"id": format!("o{j}"), "type": "Output"}));
        links.push(json!({"from": format!("b.{}", j + 1), "to": format!("o{j}")}));
    }
    let text = json!({"blocks": blocks, "links": links}).to_string();
    let mut c = compile_str(&text)?;
    let layout = c.model.layout().clone();
    let mut x = vec![0.0; layout.states.len()];
    let mut xd = vec![0.0; layout.discrete];
    c.model.initial_state(&mut x, &mut xd);
    let hits = vec![true; layout.rates.len()];
    let mut y = vec![0.0; layout.outputs.len()];
    c.model
        .major_outputs(&mut MajorStep {
            t,
            x: &mut x,
            xd: &mut xd,
            u: &[],
            hits: &hits,
            y: &mut y,
        })
        .map_err(|e| DiagramError::at_block(crate::diagram::ErrorKind::Parameter, "b", e.to_string()))?;
    // Split the flat outputs back into ports by name (`o0`, `o1[2]`, ...).
    let mut ports = vec![Vec::new(); n_out];
    for (var, v) in layout.outputs.iter().zip(y) {
        let j: usize = var.name[1..].split('[').next().unwrap().parse().unwrap();
        ports[j].push(v);
    }
    Ok(ports)
}

/// The scalar output of a one-output block.
pub(crate) fn eval1(block: Value, inputs: &[f64]) -> f64 {
    let ins: Vec<[f64; 1]> = inputs.iter().map(|&v| [v]).collect();
    let refs: Vec<&[f64]> = ins.iter().map(|a| a.as_slice()).collect();
    eval(block, &refs, 1, 0.0).unwrap()[0][0]
}

/// The error message building `block` with scalar constant inputs gives.
pub(crate) fn build_error(block: Value, n_inputs: usize) -> String {
    let ins = vec![[0.0]; n_inputs];
    let refs: Vec<&[f64]> = ins.iter().map(|a| a.as_slice()).collect();
    match eval(block, &refs, 1, 0.0) {
        Ok(_) => panic!("expected a build error"),
        Err(e) => e.to_string(),
    }
}
