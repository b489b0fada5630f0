//! A block parameter changed in a compiled model: the diagram compiled
//! again with the new value, accepted only when the new program fits the
//! running model's workspace and states (see [`Program::same_shape`]).

use serde_json::Value;

use super::format::BlockDef;
use super::program::Program;
use crate::model::RetuneError;

/// `program` compiled again with parameter `param` of block `path` set to
/// `value`.
pub(super) fn retuned(program: &Program, path: &str, param: &str, value: &Value) -> Result<Program, RetuneError> {
    let fail = |message: String| RetuneError {
        block: Some(path.to_string()),
        message,
    };
    let mut source = program
        .source
        .as_deref()
        .cloned()
        .ok_or_else(|| fail("this program was not compiled from a diagram".into()))?;
    let block = find(&mut source.blocks, path).ok_or_else(|| {
        fail(format!(
            "no block \"{path}\" in the model; give a block's path (`sub/inner` inside subsystems), as \
             `tandem check` lists them"
        ))
    })?;
    if block.kind == "Subsystem" {
        return Err(fail(format!(
            "block \"{path}\" is a Subsystem; change a parameter of a block inside it"
        )));
    }
    block.params.insert(param.to_string(), value.clone());
    let mut new = super::compile::compile(&source).map_err(|e| fail(e.to_string()))?;
    if !new.same_shape(program) {
        return Err(fail(format!(
            "setting \"{param}\" to {value} changes the model's signals, states or rates, which a running model \
             cannot take; stop the run, change the model file and start again"
        )));
    }
    new.source = Some(Box::new(source));
    Ok(new)
}

/// Every parameter of every block but subsystems, with its value:
/// `(block path, parameter, value)`.
pub(super) fn tunables(program: &Program) -> Vec<(String, String, Value)> {
    let mut found = Vec::new();
    if let Some(source) = &program.source {
        collect(&source.blocks, "", &mut found);
    }
    found
}

fn collect(blocks: &[BlockDef], prefix: &str, found: &mut Vec<(String, String, Value)>) {
    for b in blocks {
        let path = format!("{prefix}{}", b.id);
        match &b.blocks {
            Some(inner) => collect(inner, &format!("{path}/"), found),
            None => found.extend(b.params.iter().map(|(k, v)| (path.clone(), k.clone(), v.clone()))),
        }
    }
}

/// The block at `path` (`sub/inner`) among `blocks`.
fn find<'a>(blocks: &'a mut [BlockDef], path: &str) -> Option<&'a mut BlockDef> {
    let (first, rest) = match path.split_once('/') {
        Some((first, rest)) => (first, Some(rest)),
        None => (path, None),
    };
    let block = blocks.iter_mut().find(|b| b.id == first)?;
    match rest {
        None => Some(block),
        Some(rest) => find(block.blocks.as_deref_mut()?, rest),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::diagram::compile_str;
    use crate::model::Model;

    #[test]
    fn a_change_at_run_time_gets_the_checks_of_a_file() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/cruise_control.json");
        let text = std::fs::read_to_string(path).expect("the example is readable");
        let model = compile_str(&text).expect("the example compiles").model;
        let e = model.retune("speed_map", "gain", &json!([])).unwrap_err();
        assert_eq!(e.block.as_deref(), Some("speed_map"));
        assert_eq!(
            e.message,
            "block \"speed_map\": gain: an empty list; give a number or one value per element of the input (width 1)"
        );
        let e = model.retune("vehicle", "initial", &json!([])).unwrap_err();
        assert_eq!(
            e.message,
            "block \"vehicle\": initial: an empty list; give a number or one value per element of the input (width 1)"
        );
        assert!(model.retune("speed_map", "gain", &json!(40.0)).is_ok());
    }
}
