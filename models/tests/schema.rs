//! `models/schema.json` against the block library and the compiler: its list
//! of block types is the library's, and it accepts the example models, the
//! models of `models/FORMAT.md` and other valid models while rejecting some
//! invalid ones (validated with Python's `jsonschema`, Draft 2020-12).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tandem_models::diagram::compile_str;

#[path = "../../tests/support/format_md.rs"]
mod format_md;
#[path = "../../tests/support/schema_check.rs"]
mod schema_check;

fn models_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn schema() -> Value {
    serde_json::from_str(&read(&models_dir().join("schema.json"))).expect("schema.json is valid JSON")
}

#[test]
fn block_type_enum_is_the_library() {
    let schema = schema();
    let listed: Vec<&str> = schema["$defs"]["blockType"]["enum"]
        .as_array()
        .expect("schema.json has $defs/blockType/enum")
        .iter()
        .map(|v| v.as_str().expect("block type names are strings"))
        .collect();
    let in_schema: BTreeSet<&str> = listed.iter().copied().collect();
    assert_eq!(in_schema.len(), listed.len(), "duplicate names in $defs/blockType/enum");
    let library: BTreeSet<&str> = tandem_models::blocks::types()
        .map(|t| t.name)
        .chain(["Subsystem", "Outport"])
        .collect();
    let missing: Vec<_> = library.difference(&in_schema).collect();
    let unknown: Vec<_> = in_schema.difference(&library).collect();
    assert!(
        missing.is_empty() && unknown.is_empty(),
        "models/schema.json $defs/blockType/enum differs from the block library: \
         missing {missing:?}, not in the library {unknown:?} (see FORMAT.md, \"Adding a block\")"
    );
    // The per-type clauses name types that exist.
    for clause in schema["$defs"]["block"]["allOf"].as_array().expect("$defs/block/allOf") {
        let name = clause["if"]["properties"]["type"]["const"]
            .as_str()
            .expect("each clause tests one type");
        assert!(
            in_schema.contains(name),
            "$defs/block/allOf has a clause for unknown type {name}"
        );
    }
}

/// The ```json blocks of FORMAT.md: each is a complete model.
fn format_md_models() -> Vec<Value> {
    format_md::format_md_models(&read(&models_dir().join("FORMAT.md")))
        .iter()
        .map(|block| {
            serde_json::from_str(block)
                .unwrap_or_else(|e| panic!("a ```json block of FORMAT.md is not JSON ({e}):\n{block}"))
        })
        .collect()
}

#[test]
fn format_md_models_compile() {
    for model in format_md_models() {
        if let Err(e) = compile_str(&model.to_string()) {
            panic!("a model of FORMAT.md does not compile: {e}\n{model:#}");
        }
    }
}

/// Valid models that use the less common forms of the format; the compiler
/// accepts each, so the schema must too.
fn valid_corner_cases() -> Vec<Value> {
    vec![
        json!({"blocks": []}),
        json!({
            "$schema": null, "name": null, "description": null, "simulation": {"solver": null, "step": 0.5},
            "blocks": [
                {"id": "c", "type": "Constant", "params": {"value": "inf"}, "sample_time": null, "blocks": null},
                {"id": "sat", "type": "Saturation", "params": {"lower": "-inf", "upper": null}, "sample_time": -1},
                {"id": "y-1", "type": "Output", "params": {"unit": "m"}, "sample_time": [-1, 0]}
            ],
            "links": [{"from": "c", "to": ["sat.1"]}, {"from": "sat", "to": "y-1"}, {"from": "c", "to": []}]
        }),
        json!({
            "blocks": [
                {"id": "u", "type": "Inport", "params": {"name": "pedal", "default": 0.5, "unit": "1", "width": 2}},
                {"id": "hold", "type": "ZeroOrderHold", "sample_time": [0.2, 0.1]},
                {"id": "d", "type": "UnitDelay", "sample_time": 0.1, "params": {"initial": 1}},
                {"id": "gain", "type": "Gain", "params": {"gain": 2}, "sample_time": 0},
                {"id": "ss", "type": "StateSpace", "params": {"A": -1, "B": [1], "C": [[1]], "D": 0, "initial": [0]}},
                {"id": "if", "type": "If", "params": {"conditions": "u > 0", "else": false, "constants": {}}},
                {"id": "empty", "type": "Subsystem", "params": {"action": false}},
                {"id": "out", "type": "Outport"}
            ],
            "links": [
                {"from": "u", "to": "hold"}, {"from": "hold", "to": "d"}, {"from": "d", "to": "out"},
                {"from": "gain", "to": "ss"}, {"from": "ss", "to": ["gain", "if"]}
            ]
        }),
    ]
}

/// Models the compiler rejects and the schema should reject too.
fn invalid_models() -> Vec<Value> {
    let gain = |block: Value| {
        json!({"blocks": [{"id": "c", "type": "Constant", "params": {"value": 1}}, block],
               "links": [{"from": "c", "to": "g"}]})
    };
    vec![
        json!({"links": []}),
        json!({"blocks": [], "solver": "rk4"}),
        json!({"blocks": [], "simulation": {"solver": "rk4", "tolerance": 1e-6}}),
        gain(json!({"id": "g", "type": "Gian", "params": {"gain": 1}})),
        gain(json!({"id": "g", "type": "Gain", "params": {"gain": 1, "bias": 2}})),
        gain(json!({"id": "g", "type": "Gain"})),
        gain(json!({"id": "g", "type": "Gain", "params": {"gain": "two"}})),
        gain(json!({"id": "g", "type": "Gain", "params": {"gain": 1}, "sample_time": -2})),
        gain(json!({"id": "g", "type": "Gain", "params": {"gain": 1}, "sample_time": [0.1]})),
        gain(json!({"id": "g", "type": "Gain", "params": {"gain": 1}, "blocks": []})),
        gain(json!({"id": "g", "type": "Gain", "params": {"gain": 1}, "label": "k"})),
        json!({"blocks": [{"id": "a.b", "type": "Clock"}]}),
        json!({"blocks": [{"id": "", "type": "Clock"}]}),
        json!({"blocks": [{"type": "Clock"}]}),
        json!({"blocks": [{"id": "s", "type": "Subsystem", "params": {"enabled": true}}]}),
        json!({"blocks": [{"id": "t", "type": "Clock"}, {"id": "y", "type": "Output"}],
               "links": [{"from": "t", "to": "y", "width": 1}]}),
        json!({"blocks": [{"id": "t", "type": "Clock"}, {"id": "y", "type": "Output"}],
               "links": [{"from": "t", "to": 1}]}),
    ]
}

/// Simulation settings that `tandem sim` rejects (the compiler does not look
/// at them) and the schema should reject too.
fn invalid_settings() -> Vec<Value> {
    vec![
        json!({"blocks": [], "simulation": {"solver": "rk45"}}),
        json!({"blocks": [], "simulation": {"step": 0}}),
        json!({"blocks": [], "simulation": {"stop": -1}}),
    ]
}

#[test]
fn corner_cases_are_what_the_compiler_says() {
    for model in valid_corner_cases() {
        if let Err(e) = compile_str(&model.to_string()) {
            panic!("this valid corner case does not compile: {e}\n{model:#}");
        }
    }
    for model in invalid_models() {
        assert!(
            compile_str(&model.to_string()).is_err(),
            "this invalid model compiles:\n{model:#}"
        );
    }
}

#[test]
fn schema_accepts_valid_models_and_rejects_invalid_ones() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("schema");
    std::fs::create_dir_all(&dir).expect("the temporary directory can be created");
    let mut files = Vec::new();
    let examples = models_dir().join("examples");
    if let Ok(entries) = std::fs::read_dir(&examples) {
        let mut found: Vec<PathBuf> = entries
            .map(|e| e.expect("the examples directory can be listed").path())
            .filter(|p| p.extension().is_some_and(|e| e == "json"))
            .collect();
        found.sort();
        files.extend(found.into_iter().map(|p| (p, true)));
    }
    let mut write = |name: String, model: &Value, valid: bool| {
        let path = dir.join(name);
        std::fs::write(&path, format!("{model:#}")).expect("the temporary file can be written");
        files.push((path, valid));
    };
    for (i, model) in format_md_models().iter().enumerate() {
        write(format!("format_md_{}.json", i + 1), model, true);
    }
    for (i, model) in valid_corner_cases().iter().enumerate() {
        write(format!("valid_{}.json", i + 1), model, true);
    }
    for (i, model) in invalid_models().iter().chain(&invalid_settings()).enumerate() {
        write(format!("invalid_{}.json", i + 1), model, false);
    }
    schema_check::validate(&models_dir().join("schema.json"), &files);
}
