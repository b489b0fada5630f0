//! Every kind of bad model input gets a non-zero exit and one clear message
//! naming the place (file, line and column, block, port) and the fix.

mod common;

use serde_json::json;

/// Writes `model` to a file, runs `tandem sim` on it with `extra`
/// arguments, expects failure and returns stderr.
fn sim_error(name: &str, model: &str, extra: &[&str]) -> String {
    sim_error_in(name, model, extra).0
}

/// As [`sim_error`], also returning the directory the run happened in.
fn sim_error_in(name: &str, model: &str, extra: &[&str]) -> (String, std::path::PathBuf) {
    let dir = common::scratch(name);
    std::fs::write(dir.join("model.json"), model).unwrap();
    let mut args = vec!["sim", "model.json"];
    args.extend_from_slice(extra);
    let out = common::tandem(&dir, &args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "expected failure for {name}, got success");
    assert!(!stderr.contains("panicked"), "{name} panicked:\n{stderr}");
    assert!(
        stderr.starts_with("error: model.json"),
        "{name}: the message should start with the file:\n{stderr}"
    );
    (stderr, dir)
}

fn assert_mentions(stderr: &str, fragments: &[&str]) {
    for f in fragments {
        assert!(stderr.contains(f), "expected {f:?} in:\n{stderr}");
    }
}

/// A model with a constant feeding a gain feeding an output, plus changes.
fn model(blocks: serde_json::Value, links: serde_json::Value) -> String {
    serde_json::to_string_pretty(&json!({"blocks": blocks, "links": links, "simulation": {"step": 0.01, "stop": 0.1}}))
        .unwrap()
}

fn chain(gain_params: serde_json::Value) -> String {
    model(
        json!([
            {"id": "c", "type": "Constant", "params": {"value": 1}},
            {"id": "g", "type": "Gain", "params": gain_params},
            {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "c", "to": "g"}, {"from": "g", "to": "y"}]),
    )
}

#[test]
fn malformed_json_names_line_and_column() {
    let e = sim_error(
        "malformed",
        "{\n  \"blocks\": [\n    {\"id\": \"a\" \"type\": \"Gain\"}\n  ]\n}",
        &[],
    );
    assert_mentions(&e, &["model.json:3:16", "invalid model JSON", "help:"]);
}

#[test]
fn misspelt_top_level_key_is_named() {
    let e = sim_error("top_level_key", "{\"blocks\": [], \"linkz\": []}", &[]);
    assert_mentions(&e, &["model.json:1:", "unknown field `linkz`", "expected one of"]);
}

#[test]
fn unknown_block_type_suggests_the_closest_names() {
    let m = model(json!([{"id": "g", "type": "Gian", "params": {"gain": 2}}]), json!([]));
    let e = sim_error("unknown_type", &m, &[]);
    assert_mentions(
        &e,
        &[
            "model.json:4:7",
            "block \"g\"",
            "unknown block type \"Gian\"",
            "did you mean Gain",
        ],
    );
}

#[test]
fn unknown_parameter_lists_the_valid_ones() {
    let e = sim_error("unknown_param", &chain(json!({"gain": 2, "gian": 3})), &[]);
    assert_mentions(&e, &["block \"g\"", "unknown parameter \"gian\"", "Gain takes: gain"]);
}

#[test]
fn missing_parameter_says_what_to_add() {
    let e = sim_error("missing_param", &chain(json!({})), &[]);
    assert_mentions(&e, &["block \"g\"", "missing parameter \"gain\"", "add \"gain\": <"]);
}

#[test]
fn mistyped_parameter_shows_what_was_found() {
    let e = sim_error("mistyped_param", &chain(json!({"gain": "two"})), &[]);
    assert_mentions(
        &e,
        &[
            "block \"g\"",
            "parameter \"gain\" must be a number or a list of numbers, found \"two\"",
        ],
    );
}

#[test]
fn link_to_a_missing_block_names_the_closest() {
    let m = model(
        json!([{"id": "c", "type": "Constant", "params": {"value": 1}}, {"id": "gain", "type": "Gain", "params": {"gain": 2}}]),
        json!([{"from": "c", "to": "gian"}]),
    );
    let e = sim_error("missing_block", &m, &[]);
    assert_mentions(
        &e,
        &[
            "link \"c -> gian\"",
            "no block \"gian\" in the model",
            "closest are: gain",
        ],
    );
}

#[test]
fn link_to_a_missing_port_lists_the_ports() {
    let m = model(
        json!([
            {"id": "c", "type": "Constant", "params": {"value": 1}},
            {"id": "s", "type": "Sum", "params": {"signs": "+-"}},
            {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "c", "to": ["s.1", "s.3"]}, {"from": "s", "to": "y"}]),
    );
    let e = sim_error("missing_port", &m, &[]);
    assert_mentions(&e, &["block \"s\"", "there is no port 3", "input ports are 1, 2"]);
}

#[test]
fn unconnected_input_names_block_and_port() {
    let m = model(
        json!([
            {"id": "c", "type": "Constant", "params": {"value": 1}},
            {"id": "s", "type": "Sum", "params": {"signs": "+-"}},
            {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "c", "to": "s.1"}, {"from": "s", "to": "y"}]),
    );
    let e = sim_error("unconnected", &m, &[]);
    assert_mentions(
        &e,
        &["block \"s\"", "input 2 (\"2\") is not connected", "\"to\": \"s.2\""],
    );
}

#[test]
fn input_connected_twice_names_both_links() {
    let m = model(
        json!([
            {"id": "a", "type": "Constant", "params": {"value": 1}},
            {"id": "b", "type": "Constant", "params": {"value": 2}},
            {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "a", "to": "y"}, {"from": "b", "to": "y"}]),
    );
    let e = sim_error("connected_twice", &m, &[]);
    assert_mentions(
        &e,
        &[
            "block \"y\"",
            "connected twice",
            "\"a -> y\"",
            "\"b -> y\"",
            "Sum block",
        ],
    );
}

#[test]
fn duplicate_ids_are_refused() {
    let m = model(
        json!([{"id": "c", "type": "Constant", "params": {"value": 1}}, {"id": "c", "type": "Constant", "params": {"value": 2}}]),
        json!([]),
    );
    let e = sim_error("duplicate", &m, &[]);
    assert_mentions(&e, &["block \"c\"", "duplicate block id \"c\""]);
}

#[test]
fn dimension_mismatch_names_both_ends() {
    let m = model(
        json!([
            {"id": "v", "type": "Constant", "params": {"value": [1, 2, 3]}},
            {"id": "d", "type": "UnitDelay", "sample_time": 0.01, "params": {"initial": [0, 0]}},
            {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "v", "to": "d"}, {"from": "d", "to": "y"}]),
    );
    let e = sim_error("dimension", &m, &[]);
    assert_mentions(
        &e,
        &[
            "block \"d\"",
            "initial: a list of 2 values; give a number or one value per element of the input (width 3)",
        ],
    );
}

#[test]
fn algebraic_loop_names_its_blocks_and_ports() {
    let m = model(
        json!([
            {"id": "c", "type": "Constant", "params": {"value": 1}},
            {"id": "s", "type": "Sum", "params": {"signs": "+-"}},
            {"id": "k", "type": "Gain", "params": {"gain": 0.5}},
            {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "c", "to": "s.1"}, {"from": "s", "to": ["k", "y"]}, {"from": "k", "to": "s.2"}]),
    );
    let e = sim_error("algebraic_loop", &m, &[]);
    assert_mentions(
        &e,
        &[
            "1 algebraic loop(s)",
            "loop through s, k",
            "s.2 <- k",
            "k.1 <- s",
            "UnitDelay",
        ],
    );
}

#[test]
fn sample_time_off_the_step_grid_is_refused() {
    let m = model(
        json!([
            {"id": "c", "type": "Constant", "params": {"value": 1}},
            {"id": "z", "type": "ZeroOrderHold", "sample_time": 0.015},
            {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "c", "to": "z"}, {"from": "z", "to": "y"}]),
    );
    let e = sim_error("off_grid", &m, &[]);
    assert_mentions(
        &e,
        &["sample time 0.015 s of z is not an integer multiple of the step 0.01 s"],
    );
}

#[test]
fn non_positive_step_and_stop_name_their_origin() {
    let e = sim_error("zero_step", &chain(json!({"gain": 1})), &["--step", "0"]);
    assert_mentions(&e, &["--step: the step must be from 1e-9 to 1e9 seconds, found 0"]);
    let e = sim_error("tiny_step", &chain(json!({"gain": 1})), &["--step", "1e-300"]);
    assert_mentions(&e, &["--step: the step must be from 1e-9 to 1e9 seconds, found 1e-300"]);
    let m = chain(json!({"gain": 1})).replace("\"stop\": 0.1", "\"stop\": -1.0");
    let e = sim_error("negative_stop", &m, &[]);
    assert_mentions(
        &e,
        &["the model's simulation.stop: the stop time must be from 1e-9 to 1e9 seconds, found -1"],
    );
}

#[test]
fn non_finite_value_names_time_and_block_and_keeps_the_rows_written() {
    // sqrt(1 - t) turns NaN after t = 1.
    let m = std::fs::read_to_string(common::root().join("tests/data/nan_after_one.json")).unwrap();
    let (e, dir) = sim_error_in("nan", &m, &["--out", "out.csv"]);
    assert_mentions(
        &e,
        &[
            "non-finite value NaN at t = 1.25 s",
            "block \"root\" (MathFunction) output 1",
            "out.csv",
        ],
    );
    let written = std::fs::read_to_string(dir.join("out.csv")).unwrap();
    assert_eq!(
        written.lines().count(),
        1 + 5,
        "header and the rows for t = 0 .. 1:\n{written}"
    );
}

#[test]
fn missing_model_file_is_named() {
    let e = sim_error("missing_file", "{}", &["--step", "1"]);
    assert_mentions(&e, &["missing field `blocks`"]);
    let dir = common::scratch("absent");
    let out = common::tandem(&dir, &["sim", "absent.json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains("absent.json: cannot read the model"),
        "{stderr}"
    );
}

#[test]
fn hysteresis_or_no_event_on_a_block_without_zero_crossings_is_refused() {
    let m = model(
        json!([{"id": "c", "type": "Constant", "params": {"value": 1}}, {"id": "g", "type": "Gain", "hysteresis": 0.1, "params": {"gain": 2}}, {"id": "y", "type": "Output"}]),
        json!([{"from": "c", "to": "g"}, {"from": "g", "to": "y"}]),
    );
    let e = sim_error("hysteresis_no_zc", &m, &[]);
    assert_mentions(
        &e,
        &[
            "block \"g\"",
            "(Gain) has no zero crossings, so \"hysteresis\" does nothing",
            "RelationalOperator",
        ],
    );
    let m = m.replace("\"hysteresis\": 0.1", "\"no_event\": true");
    assert_mentions(
        &sim_error("no_event_no_zc", &m, &[]),
        &["block \"g\"", "\"no_event\" does nothing"],
    );
    let m = model(
        json!([{"id": "c", "type": "Constant", "params": {"value": 1}}, {"id": "r", "type": "CompareToConstant", "hysteresis": -1, "params": {"constant": 0}}, {"id": "y", "type": "Output"}]),
        json!([{"from": "c", "to": "r"}, {"from": "r", "to": "y"}]),
    );
    assert_mentions(
        &sim_error("negative_hysteresis", &m, &[]),
        &["block \"r\"", "hysteresis must be a finite number >= 0, found -1"],
    );
}

#[test]
fn a_reset_on_a_block_that_is_no_integrator_is_refused() {
    let m = model(
        json!([
            {"id": "c", "type": "Constant", "params": {"value": 1}},
            {"id": "g", "type": "Gain", "params": {"gain": 2}},
            {"id": "y", "type": "Output"}
        ]),
        json!([{"from": "c", "to": ["g", "g.reset"]}, {"from": "g", "to": "y"}]),
    );
    assert_mentions(
        &sim_error("reset_port", &m, &[]),
        &["block \"g\"", "there is no port \"reset\"", "input ports are 1"],
    );
    let m = chain(json!({"gain": 2, "reset": "rising"}));
    assert_mentions(
        &sim_error("reset_param", &m, &[]),
        &["block \"g\"", "unknown parameter \"reset\"", "Gain takes: gain"],
    );
}

#[test]
fn an_event_storm_at_the_start_names_the_block() {
    // x starts at 1; every change of (x >= 0.5) resets x to 1 - x, which
    // changes the comparison again, forever, at t = 0.
    let m = serde_json::to_string(&json!({
        "blocks": [
            {"id": "zero", "type": "Constant", "params": {"value": 0}},
            {"id": "x", "type": "Integrator", "params": {"initial": 1, "reset": "either", "external_initial": true}},
            {"id": "half", "type": "CompareToConstant", "params": {"operator": ">=", "constant": 0.5}},
            {"id": "flip", "type": "Expression", "params": {"expression": "1 - u"}},
            {"id": "y", "type": "Output"}
        ],
        "links": [
            {"from": "zero", "to": "x.in"}, {"from": "x", "to": ["half", "flip", "y"]},
            {"from": "half", "to": "x.reset"}, {"from": "flip", "to": "x.x0"}
        ],
        "simulation": {"step": 0.01, "stop": 1}
    }))
    .unwrap();
    let e = sim_error("storm", &m, &[]);
    assert_mentions(&e, &["event storm at t = 0 s", "block \"half\"", "100 rounds"]);
}

#[test]
fn a_subsystem_with_two_kinds_of_control_is_refused() {
    let m = model(
        json!([{"id": "s", "type": "Subsystem", "params": {"action": true, "trigger": "rising"}, "blocks": [], "links": []}]),
        json!([]),
    );
    assert_mentions(&sim_error("two_controls", &m, &[]), &["block \"s\"", "not several"]);
}

#[test]
fn files_that_are_not_utf8_name_the_line_and_column_of_the_first_bad_byte() {
    let dir = common::scratch("not_utf8");
    std::fs::write(dir.join("m.json"), b"{\"blocks\": [\n  {\"id\": \"a\xff\"}]}").unwrap();
    std::fs::write(dir.join("t.toml"), b"model = \"ev\"\nframe = \"1\xffms\"\n").unwrap();
    for (args, expected) in [
        (
            &["sim", "m.json"][..],
            "error: m.json:2:12: the file is not UTF-8 text\n  help: save it as UTF-8",
        ),
        (
            &["run", "t.toml"][..],
            "error: t.toml:2:11: the file is not UTF-8 text; save it as UTF-8",
        ),
    ] {
        let out = common::tandem(&dir, args);
        assert_eq!(out.status.code(), Some(1));
        assert_eq!(String::from_utf8_lossy(&out.stderr).trim_end(), expected);
    }
}

#[test]
fn oversized_and_empty_parameters_are_refused_with_their_bound() {
    let gain = |params: serde_json::Value| {
        model(
            json!([
                {"id": "c", "type": "Constant", "params": {"value": 1}},
                params,
                {"id": "y", "type": "Output"}
            ]),
            json!([{"from": "c", "to": "g"}, {"from": "g", "to": "y"}]),
        )
    };
    let deep = "sin(".repeat(300) + "u" + &")".repeat(300);
    let cases = [
        (
            "transfer_function_order",
            gain(
                json!({"id": "g", "type": "TransferFunction", "params": {"numerator": [1], "denominator": vec![1.0; 300]}}),
            ),
            "order 299, more than the bound of 256",
        ),
        (
            "long_expression",
            gain(json!({"id": "g", "type": "Expression", "params": {"expression": deep}})),
            "more than the bound of 1024",
        ),
        (
            "sum_signs",
            gain(json!({"id": "g", "type": "Sum", "params": {"signs": "+".repeat(2000)}})),
            "more than the bound of 1024 inputs",
        ),
        (
            "if_conditions",
            gain(json!({"id": "g", "type": "If", "params": {"conditions": vec!["u1 > 0"; 2000]}})),
            "at most 1023",
        ),
        (
            "long_id",
            gain(json!({"id": "g".repeat(200), "type": "Gain", "params": {"gain": 1}})),
            "a block id is at most 128 bytes",
        ),
        (
            "empty_lookup_table",
            gain(json!({"id": "g", "type": "Lookup2D", "params": {"rows": [0, 1], "columns": [0, 1], "table": []}})),
            "the matrix is empty",
        ),
        (
            "empty_state_space_matrix",
            gain(json!({"id": "g", "type": "StateSpace", "params": {"A": [[-1]], "B": [], "C": [[1]]}})),
            "the matrix is empty",
        ),
        (
            "too_many_states",
            model(
                json!([
                    {"id": "in", "type": "Inport", "params": {"width": 5000}},
                    {"id": "i", "type": "Integrator"},
                    {"id": "y", "type": "Output"}
                ]),
                json!([{"from": "in", "to": "i"}, {"from": "i", "to": "y"}]),
            ),
            "continuous states would pass 4096",
        ),
        (
            "pulse_faster_than_the_step",
            model(
                json!([
                    {"id": "p", "type": "Pulse", "params": {"period": 1e-7}},
                    {"id": "i", "type": "Integrator"},
                    {"id": "y", "type": "Output"}
                ]),
                json!([{"from": "p", "to": "i"}, {"from": "i", "to": "y"}]),
            ),
            "more than 1000 events within one step of 0.01 s",
        ),
    ];
    for (name, text, bound) in cases {
        let e = sim_error(name, &text, &[]);
        assert_mentions(&e, &[bound, "help:"]);
        assert!(e.len() < 2000, "{name}: a long message:\n{e}");
    }
}
