//! The block library, a block's ports, and model checks.

use std::sync::OnceLock;

use axum::Json;
use serde_json::{json, Value};
use tandem_models::diagram::format::BlockDef;
use tandem_models::diagram::{self, compile_str};
use tandem_models::{blocks, Model};

use crate::body::{Compiled, JsonBody};
use crate::error::{blocking, parse_body, ApiError};

/// The model format's JSON Schema, as `models/schema.json` has it.
fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        serde_json::from_str(include_str!("../../models/schema.json")).expect("models/schema.json is JSON (tested)")
    })
}

/// The `params` clause the schema gives block type `name`.
fn params_of(name: &str) -> Value {
    let clauses = schema()["$defs"]["block"]["allOf"].as_array();
    clauses
        .into_iter()
        .flatten()
        .find(|c| c["if"]["properties"]["type"]["const"] == name)
        .map(|c| c["then"]["properties"]["params"].clone())
        .unwrap_or(Value::Null)
}

/// `GET /api/blocks`: every block type with its summary and parameters.
pub async fn blocks() -> Json<Value> {
    let structural = [
        (
            "Subsystem",
            "Nested blocks and links; \"action\": true makes it an If action subsystem",
        ),
        ("Outport", "A subsystem output port (at the top level: same as Output)"),
    ];
    let types = blocks::types().map(|t| (t.name, t.summary)).chain(structural);
    let list: Vec<Value> = types
        .map(|(name, summary)| {
            let params = params_of(name);
            json!({
                "type": name,
                "summary": summary,
                "params": params.get("properties").cloned().unwrap_or(json!({})),
                "required": params.get("required").cloned().unwrap_or(json!([])),
            })
        })
        .collect();
    Json(json!({"blocks": list, "schema": schema()}))
}

/// `POST /api/ports`: the ports of one block with its parameters (a
/// subsystem's are read from its blocks, not compiled: no slot needed).
pub async fn ports(JsonBody(body): JsonBody) -> Result<Json<Value>, ApiError> {
    blocking(move || {
        let def: BlockDef = parse_body(&body)?;
        let ports = diagram::ports(&def).map_err(|e| ApiError::model(&e))?;
        Ok(Json(json!({"inputs": ports.inputs, "outputs": ports.outputs})))
    })
    .await
}

/// `POST /api/check`: compiles a model's text; its summary, or the error
/// at its block, port, line and column.
pub async fn check(Compiled { slot, body }: Compiled) -> Result<Json<Value>, ApiError> {
    blocking(move || {
        let _slot = slot;
        check_text(&body)
    })
    .await
    .map(Json)
}

/// The summary of a model's text, or its error.
fn check_text(body: &[u8]) -> Result<Value, ApiError> {
    let text = std::str::from_utf8(body).map_err(|e| {
        let (line, column) = diagram::invalid_utf8_at(body, e.valid_up_to());
        ApiError::unprocessable(format!("{line}:{column}: the model is not UTF-8; save it as UTF-8"))
            .at("line", line)
            .at("column", column)
    })?;
    let compiled = compile_str(text).map_err(|e| ApiError::model(&e))?;
    let program = compiled.model.program();
    let layout = compiled.model.layout();
    let names = |v: &[tandem_models::Variable]| v.iter().map(|v| v.name.clone()).collect::<Vec<_>>();
    Ok(json!({
        "ok": true,
        "name": compiled.name,
        "blocks": program.blocks().len(),
        "order": program.blocks().iter().map(|b| b.path.as_str()).collect::<Vec<_>>(),
        "states": layout.states,
        "inputs": names(&layout.inputs),
        "outputs": names(&layout.outputs),
        "simulation": {
            "solver": compiled.simulation.solver,
            "step": compiled.simulation.step,
            "stop": compiled.simulation.stop,
            "rtol": compiled.simulation.rtol,
            "atol": compiled.simulation.atol,
        },
    }))
}
