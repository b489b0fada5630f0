//! The block parameters an exported FMU exposes: every parameter of a block
//! diagram's blocks that is a number, named `block.param` (`sub/inner.param`
//! inside subsystems), as a Float64 parameter of the FMU; but those of
//! `Inport` blocks (a model input's `default` is the FMU input's start
//! value). It is tunable
//! (settable while stepping) when the model's retune accepts a changed
//! value, fixed (settable before initialization only) otherwise, e.g. a
//! count of ports. The packing decides which, once, and writes the list
//! into the resources folder; every instance reads it back.

use serde_json::{json, Value};
use tandem_models::diagram::{compile_str, DiagramError, DiagramModel};
use tandem_models::{Definition, Layout, Model};

/// The most parameters whose variability is found by trying a change (a
/// compilation of the model each): a model with more exposes them all as
/// fixed.
pub const MAX_CLASSIFIED: usize = 1000;

/// A parameter of the packed model.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    /// The block's path.
    pub block: String,
    /// The parameter's name in the block.
    pub param: String,
    /// Its value in the model file.
    pub start: Value,
    /// Settable while stepping.
    pub tunable: bool,
}

impl Parameter {
    /// Its variable's name: `block.param`.
    pub fn name(&self) -> String {
        format!("{}.{}", self.block, self.param)
    }

    /// Its value in the model file, as a number.
    pub fn start_value(&self) -> f64 {
        self.start.as_f64().unwrap_or(f64::NAN)
    }

    /// `x` as a value of the model file's form: an integer where the file
    /// gives one and `x` is whole.
    pub fn json(&self, x: f64) -> Value {
        if self.start.is_i64() && x.fract() == 0.0 && x.abs() < 9.0e15 {
            json!(x as i64)
        } else {
            json!(x)
        }
    }
}

/// The parameters the block diagram `model` exposes, in the order of its
/// [`Model::tunables`]: its numbers but its `Inport`s', each tunable when
/// the model takes a changed value while running ([`MAX_CLASSIFIED`]
/// bounds the tries).
pub fn of(model: &DiagramModel) -> Vec<Parameter> {
    let program = model.program();
    let inport = |path: &str| (program.blocks().iter()).any(|b| b.path == path && b.kind == "Inport");
    let numbers: Vec<(String, String, Value)> = model
        .tunables()
        .into_iter()
        .filter(|(block, _, value)| value.is_number() && !inport(block))
        .collect();
    let classify = numbers.len() <= MAX_CLASSIFIED;
    numbers
        .into_iter()
        .map(|(block, param, start)| {
            let mut parameter = Parameter {
                block,
                param,
                start,
                tunable: false,
            };
            parameter.tunable = classify && retunable(model, &parameter);
            parameter
        })
        .collect()
}

/// Whether `model` takes a value of `parameter` near its own while running.
fn retunable(model: &DiagramModel, parameter: &Parameter) -> bool {
    let x = parameter.start_value();
    let near = if parameter.start.is_i64() {
        [x + 1.0, x - 1.0]
    } else if x == 0.0 {
        [1e-6, -1e-6]
    } else {
        [x * (1.0 + 1e-6), x * (1.0 - 1e-6)]
    };
    near.iter().any(|&y| {
        model
            .retune(&parameter.block, &parameter.param, &parameter.json(y))
            .is_ok()
    })
}

/// The list as the resources folder holds it: JSON, one object per
/// parameter.
pub fn to_json(parameters: &[Parameter]) -> Vec<u8> {
    let list: Vec<Value> = parameters
        .iter()
        .map(|p| json!({"block": p.block, "param": p.param, "start": p.start, "tunable": p.tunable}))
        .collect();
    serde_json::to_vec_pretty(&list).expect("a list of objects is JSON")
}

/// Why a packed parameter list or a packed diagram cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum PackedError {
    /// The text is not JSON.
    #[error("not JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// An entry of the parameter list is not a parameter.
    #[error("entry {0} is not {{\"block\", \"param\", \"start\" (a number), \"tunable\"}}")]
    Entry(usize),
    /// A parameter names a block the diagram does not have.
    #[error("no block \"{0}\" in the packed model")]
    NoBlock(String),
    /// The diagram with these values is refused.
    #[error(transparent)]
    Diagram(#[from] DiagramError),
    /// The values change the diagram's inputs or outputs.
    #[error("it changes the model's inputs or outputs, which are the FMU's variables")]
    Interface,
}

/// The list read back from [`to_json`]'s text.
pub fn from_json(bytes: &[u8]) -> Result<Vec<Parameter>, PackedError> {
    let list: Vec<Value> = serde_json::from_slice(bytes)?;
    list.into_iter()
        .enumerate()
        .map(|(i, item)| {
            let text = |key: &str| item[key].as_str().map(str::to_string);
            match (text("block"), text("param"), &item["start"], item["tunable"].as_bool()) {
                (Some(block), Some(param), start, Some(tunable)) if start.is_number() => Ok(Parameter {
                    block,
                    param,
                    start: start.clone(),
                    tunable,
                }),
                _ => Err(PackedError::Entry(i)),
            }
        })
        .collect()
}

/// The block diagram `text` compiled with `values` for `parameters` (one
/// each, in order), its shape free to change, but not its inputs and
/// outputs, which are the FMU's variables (`layout` has them): what fixed
/// parameters set before initialization need. The error names the
/// diagram's mistake.
pub fn compile_with(
    text: &str,
    parameters: &[Parameter],
    values: &[f64],
    layout: &Layout,
) -> Result<Box<dyn Model>, PackedError> {
    let mut diagram: Value = serde_json::from_str(text)?;
    for (parameter, &x) in parameters.iter().zip(values) {
        let block =
            find(&mut diagram, &parameter.block).ok_or_else(|| PackedError::NoBlock(parameter.block.clone()))?;
        block["params"][&parameter.param] = parameter.json(x);
    }
    let model = compile_str(&diagram.to_string())?.model;
    let names = |l: &Layout| {
        (l.inputs.iter().chain(&l.outputs))
            .map(|v| v.name.clone())
            .collect::<Vec<_>>()
    };
    if names(model.layout()) != names(layout) {
        return Err(PackedError::Interface);
    }
    Ok(Box::new(model))
}

/// The block at `path` (`sub/inner`) of a diagram's JSON.
fn find<'a>(diagram: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut blocks = diagram.get_mut("blocks")?;
    let mut parts = path.split('/').peekable();
    while let Some(id) = parts.next() {
        let block = blocks.as_array_mut()?.iter_mut().find(|b| b["id"] == id)?;
        if parts.peek().is_none() {
            return Some(block);
        }
        blocks = block.get_mut("blocks")?;
    }
    None
}

/// The definition of `model` with the parameters `changes` names (by
/// index into `parameters`) set to their values, to take while it runs;
/// or the first change it cannot take, and why.
pub fn retuned(
    model: &dyn Model,
    parameters: &[Parameter],
    changes: &[(usize, f64)],
) -> Result<Option<Definition>, (usize, String)> {
    // Each change compiles the model with those before it: tried on a
    // fork, so that a refused one leaves the model as it was.
    let mut trial = model.fork();
    let mut last = None;
    for &(i, x) in changes {
        let p = &parameters[i];
        let definition = trial
            .retune(&p.block, &p.param, &p.json(x))
            .map_err(|e| (i, e.message))?;
        trial.swap_definition(&mut definition.clone());
        last = Some(definition);
    }
    Ok(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODEL: &str = r#"{"blocks": [
        {"id": "u", "type": "Inport", "params": {"default": 1.0}},
        {"id": "k", "type": "Gain", "params": {"gain": 2.0}},
        {"id": "s", "type": "Subsystem", "blocks": [
            {"id": "in", "type": "Inport"}, {"id": "x", "type": "Integrator", "params": {"initial": 0.5}},
            {"id": "out", "type": "Outport"}],
          "links": [{"from": "in", "to": "x"}, {"from": "x", "to": "out"}]},
        {"id": "e", "type": "Expression", "params": {"expression": "u + 1", "inputs": 1}},
        {"id": "y", "type": "Output"}, {"id": "z", "type": "Output"}],
      "links": [{"from": "u", "to": "k"}, {"from": "k", "to": ["s", "e"]}, {"from": "e", "to": "y"},
        {"from": "s", "to": "z"}]}"#;

    #[test]
    fn numbers_are_parameters_tunable_unless_a_change_reshapes_the_model() {
        let model = compile_str(MODEL).unwrap().model;
        let found = of(&model);
        let named: Vec<(String, bool)> = found.iter().map(|p| (p.name(), p.tunable)).collect();
        assert_eq!(
            named,
            [
                ("k.gain".to_string(), true),
                ("s/x.initial".to_string(), true),
                ("e.inputs".to_string(), false),
            ]
        );
        assert_eq!(found[2].json(3.0), json!(3));
        assert_eq!(found[0].json(3.0), json!(3.0));
        let read = from_json(&to_json(&found)).unwrap();
        assert_eq!(read, found);
        assert!(from_json(br#"[{"block": "k"}]"#)
            .unwrap_err()
            .to_string()
            .contains("entry 0"));
    }

    #[test]
    fn fixed_parameters_compile_anew_and_tunable_ones_retune() {
        let model = compile_str(MODEL).unwrap().model;
        let found = of(&model);
        let layout = model.layout();
        let values = [3.0, 0.5, 2.0];
        let changed = compile_with(MODEL, &found, &values, layout).err().unwrap().to_string();
        assert!(changed.contains("block \"e\""), "{changed}");
        let values = [3.0, 0.25, 1.0];
        let compiled = compile_with(MODEL, &found, &values, layout).unwrap();
        let mut x = vec![0.0];
        compiled.fork().initial_state(&mut x, &mut []);
        assert_eq!(x, [0.25]);
        let mut both = retuned(&model, &found, &[(0, 4.0), (1, 0.75)]).unwrap().unwrap();
        let mut retuned_model = model.fork();
        assert!(retuned_model.swap_definition(&mut both));
        let tunables = retuned_model.tunables();
        assert!(
            tunables.contains(&("k".into(), "gain".into(), json!(4.0))),
            "{tunables:?}"
        );
        assert!(
            tunables.contains(&("s/x".into(), "initial".into(), json!(0.75))),
            "{tunables:?}"
        );
        let (refused, why) = retuned(&model, &found, &[(0, 4.0), (2, 2.0)]).unwrap_err();
        assert_eq!(refused, 2);
        assert!(why.contains("block \"e\""), "{why}");
        assert!(model.tunables().contains(&("k".into(), "gain".into(), json!(2.0))));
    }
}
