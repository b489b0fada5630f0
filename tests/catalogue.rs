//! The bad-input catalogue: for each of the four input formats (model
//! JSON, run TOML, DBC, candump log), mistakes a user makes, each run
//! through the `tandem` binary as a user would. Every case must fail with
//! exit status 1 (never a panic), name the place (file, and line where the
//! format has lines) and say how to fix it.

mod common;

use std::path::Path;

/// Which file of a case is bad.
#[derive(Clone, Copy, Debug)]
enum Format {
    /// `m.json`, run with `tandem sim m.json`.
    Model,
    /// `t.toml`, run with `tandem run t.toml --virtual-clock`.
    Toml,
    /// `t.dbc`, mapped by the bus of `t.toml` (the EV example's).
    Dbc,
    /// `x.log`, replayed with `tandem replay x.log --config t.toml`.
    Log,
}

/// One bad input.
struct Case {
    name: &'static str,
    format: Format,
    /// Replacements in the format's base file (`from` → `to`); a lone
    /// `to` with an empty `from` is appended.
    edits: &'static [(&'static str, &'static str)],
    /// Extra command-line arguments.
    args: &'static [&'static str],
    /// Text naming the place: file and line (and column) or key.
    place: &'static str,
    /// Text of the fix (or of the bound) the message must give.
    fix: &'static str,
}

const MODEL: &str = r#"{
  "blocks": [
    {"id": "c", "type": "Constant", "params": {"value": 1}},
    {"id": "g", "type": "Gain", "params": {"gain": 2}},
    {"id": "y", "type": "Output"}
  ],
  "links": [{"from": "c", "to": "g"}, {"from": "g", "to": "y"}],
  "simulation": {"step": 0.01, "stop": 0.1}
}
"#;

const TOML: &str = "model = \"ev\"\nframe = \"1ms\"\n";

const LOG: &str = "(0.000000) can0 100#0000000000000000\n(0.010000) can0 100#E803000000000000\n";

use Format::{Dbc, Log, Model, Toml};

#[rustfmt::skip]
const CASES: &[Case] = &[
    // --- model JSON ---
    Case { name: "json_syntax", format: Model, edits: &[(r#""type": "Gain""#, r#""type" "Gain""#)], args: &[], place: "m.json:4:", fix: "help: see models/FORMAT.md" },
    Case { name: "unknown_block_type", format: Model, edits: &[("\"Gain\"", "\"Gian\"")], args: &[], place: "m.json:4:", fix: "did you mean Gain" },
    Case { name: "unknown_parameter", format: Model, edits: &[("\"gain\": 2", "\"gain\": 2, \"gian\": 3")], args: &[], place: "m.json:4:", fix: "Gain takes: gain" },
    Case { name: "empty_gain_list", format: Model, edits: &[("\"gain\": 2", "\"gain\": []")], args: &[], place: "m.json:4:6: block \"g\": gain:", fix: "an empty list; give a number or one value per element of the input (width 1)" },
    Case { name: "gain_list_of_the_wrong_length", format: Model, edits: &[("\"value\": 1", "\"value\": [1, 2, 3]"), ("\"gain\": 2", "\"gain\": [1, 2]")], args: &[], place: "m.json:4:6: block \"g\": gain:", fix: "a list of 2 values; give a number or one value per element of the input (width 3)" },
    Case { name: "empty_initial_list", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "Integrator", "params": {"initial": []}"#)], args: &[], place: "m.json:4:6: block \"g\": initial:", fix: "an empty list; give a number or one value per element of the input (width 1)" },
    Case { name: "empty_lookup_table", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "Lookup1D", "params": {"breakpoints": [0, 1], "table": []}"#)], args: &[], place: "m.json:4:6: block \"g\": table:", fix: "an empty list; give one value per breakpoint (2)" },
    Case { name: "empty_numerator", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "TransferFunction", "params": {"numerator": [], "denominator": [1, 1]}"#)], args: &[], place: "m.json:4:6: block \"g\": numerator:", fix: "an empty list; give a list of at least one value" },
    Case { name: "mistyped_parameter", format: Model, edits: &[("\"gain\": 2", "\"gain\": \"two\"")], args: &[], place: "m.json:4:", fix: "must be" },
    Case { name: "mux_inputs_above_bound", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "Mux", "params": {"inputs": 1e9}"#)], args: &[], place: "m.json:4:", fix: "from 1 to 1024" },
    Case { name: "mux_inputs_near_u32_max", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "Mux", "params": {"inputs": 4294967295}"#)], args: &[], place: "m.json:4:", fix: "from 1 to 1024" },
    Case { name: "merge_inputs_above_bound", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "Merge", "params": {"inputs": 4294967295}"#)], args: &[], place: "m.json:4:", fix: "from 1 to 1024" },
    Case { name: "logical_inputs_above_bound", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "LogicalOperator", "params": {"operator": "AND", "inputs": 4294967295}"#)], args: &[], place: "m.json:4:", fix: "from 1 to 1024" },
    Case { name: "minmax_inputs_above_bound", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "MinMax", "params": {"inputs": 4294967295}"#)], args: &[], place: "m.json:4:", fix: "from 1 to 1024" },
    Case { name: "expression_inputs_above_bound", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "Expression", "params": {"expression": "u", "inputs": 4294967295}"#)], args: &[], place: "m.json:4:", fix: "from 0 to 1024" },
    Case { name: "inport_width_above_bound", format: Model, edits: &[(r#""type": "Constant", "params": {"value": 1}"#, r#""type": "Inport", "params": {"width": 3e8}"#)], args: &[], place: "m.json:3:", fix: "from 1 to 1048576" },
    Case { name: "demux_widths_above_bound", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "Demux", "params": {"widths": [1e300, 1]}"#)], args: &[], place: "m.json:4:", fix: "at most 1024 whole numbers from 1 to 1048576" },
    Case { name: "duplicate_parameter_key", format: Model, edits: &[("\"gain\": 2", "\"gain\": 2, \"gain\": 3")], args: &[], place: "m.json:4:", fix: "remove one of the two" },
    Case { name: "duplicate_block_id", format: Model, edits: &[("\"id\": \"g\"", "\"id\": \"c\"")], args: &[], place: "m.json:3:", fix: "give every block in the same (sub)system a different id" },
    Case { name: "id_with_slash", format: Model, edits: &[("\"id\": \"y\"", "\"id\": \"a/b\"")], args: &[], place: "m.json", fix: "rename the block" },
    Case { name: "link_to_unknown_block", format: Model, edits: &[("\"to\": \"y\"", "\"to\": \"z\"")], args: &[], place: "m.json:", fix: "\"z\"" },
    Case { name: "link_to_unknown_port", format: Model, edits: &[("\"to\": \"y\"", "\"to\": \"y.7\"")], args: &[], place: "m.json:", fix: "its input ports are" },
    Case { name: "unconnected_input", format: Model, edits: &[(r#"{"from": "c", "to": "g"}, "#, "")], args: &[], place: "m.json:4:", fix: "add a link" },
    Case { name: "twice_connected_input", format: Model, edits: &[(r#"{"from": "g", "to": "y"}"#, r#"{"from": "g", "to": "y"}, {"from": "c", "to": "y"}"#)], args: &[], place: "m.json:5:", fix: "remove one of the links" },
    Case { name: "algebraic_loop", format: Model, edits: &[(r#"{"from": "c", "to": "g"}"#, r#"{"from": "g", "to": "g"}"#)], args: &[], place: "m.json:4:", fix: "break each loop" },
    Case { name: "zero_step", format: Model, edits: &[("\"step\": 0.01", "\"step\": 0")], args: &[], place: "simulation.step", fix: "from 1e-9 to 1e9 seconds" },
    Case { name: "tiny_step_on_command_line", format: Model, edits: &[], args: &["--step", "1e-300"], place: "--step", fix: "from 1e-9 to 1e9 seconds, found 1e-300" },
    Case { name: "huge_stop", format: Model, edits: &[("\"stop\": 0.1", "\"stop\": 1e300")], args: &[], place: "simulation.stop", fix: "from 1e-9 to 1e9 seconds, found 1e300" },
    Case { name: "output_above_bound", format: Model, edits: &[], args: &["--step", "1e-9", "--stop", "100"], place: "m.json", fix: "pass --large-output" },
    Case { name: "unknown_solver", format: Model, edits: &[], args: &["--solver", "rk45"], place: "--solver", fix: "use one of: euler, heun, rk4, bdf" },
    Case { name: "tolerance_out_of_range", format: Model, edits: &[], args: &["--solver", "bdf", "--rtol", "2"], place: "--rtol", fix: "between 0 and 1" },
    Case { name: "unlinked_action_port", format: Model, edits: &[(r#"{"id": "g", "type": "Gain", "params": {"gain": 2}}"#, r#"{"id": "g", "type": "Subsystem", "params": {"action": true}, "blocks": [{"id": "u", "type": "Inport"}, {"id": "o", "type": "Outport"}], "links": [{"from": "u", "to": "o"}]}"#), (r#"{"from": "c", "to": "g"}"#, r#"{"from": "c", "to": "g.u"}"#), (r#"{"from": "g", "to": "y"}"#, r#"{"from": "g.o", "to": "y"}"#)], args: &[], place: "block \"g\": (Subsystem) input \"action\"", fix: "\"to\": \"g.action\"" },
    Case { name: "unknown_top_level_key", format: Model, edits: &[("\"links\"", "\"linkz\"")], args: &[], place: "m.json:", fix: "expected one of" },
    Case { name: "expression_syntax", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "Expression", "params": {"expression": "1 +"}"#)], args: &[], place: "m.json:4:", fix: "expression" },
    Case { name: "negative_hysteresis", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "Gain", "params": {"gain": 2}, "hysteresis": -1"#)], args: &[], place: "m.json:4:", fix: "give the band" },
    Case { name: "bad_sample_time", format: Model, edits: &[(r#""type": "Gain", "params": {"gain": 2}"#, r#""type": "Gain", "params": {"gain": 2}, "sample_time": 0.003"#)], args: &[], place: "m.json:4:", fix: "sample" },
    Case { name: "missing_model_file", format: Model, edits: &[], args: &["--", "absent.json"], place: "absent.json", fix: "check the path" },
    // --- run TOML ---
    Case { name: "toml_syntax", format: Toml, edits: &[("", "frame =\n")], args: &[], place: "t.toml:3:8", fix: "must be quoted" },
    Case { name: "unknown_key", format: Toml, edits: &[("", "frames = \"1ms\"\n")], args: &[], place: "t.toml:3:1", fix: "expected one of" },
    Case { name: "zero_frame", format: Toml, edits: &[("\"1ms\"", "\"0ms\"")], args: &[], place: "t.toml:2:9: frame", fix: "must be from 1us to 10s" },
    Case { name: "tiny_frame", format: Toml, edits: &[("\"1ms\"", "\"1e-300s\"")], args: &[], place: "t.toml:2:9: frame", fix: "must be from 1us to 10s" },
    Case { name: "subnanosecond_frame", format: Toml, edits: &[("\"1ms\"", "\"0.0000001ns\"")], args: &[], place: "t.toml:2:9: frame", fix: "must be from 1us to 10s" },
    Case { name: "huge_duration", format: Toml, edits: &[("", "duration = \"1e300s\"\n")], args: &[], place: "t.toml:3:12: duration", fix: "more than 0s and at most 604800s" },
    Case { name: "zero_duration", format: Toml, edits: &[("", "duration = \"0s\"\n")], args: &[], place: "t.toml:3:12: duration", fix: "more than 0s and at most 604800s, found \"0s\"" },
    Case { name: "duration_shorter_than_frame", format: Toml, edits: &[("", "duration = \"0.5ms\"\n")], args: &[], place: "t.toml:3:12: duration", fix: "make duration at least the frame" },
    Case { name: "bare_number_frame", format: Toml, edits: &[("\"1ms\"", "1")], args: &[], place: "t.toml:2:", fix: "\"1s\"" },
    Case { name: "unknown_unit", format: Toml, edits: &[("\"1ms\"", "\"1sec\"")], args: &[], place: "t.toml:2:", fix: "use one of: min, s, ms" },
    Case { name: "unknown_policy", format: Toml, edits: &[("", "policy = \"corect\"\n")], args: &[], place: "t.toml:3:10: policy", fix: "correct" },
    Case { name: "unknown_fast_method", format: Toml, edits: &[("", "[fast]\nmethod = \"rk5\"\n")], args: &[], place: "t.toml:4:10: fast.method", fix: "rk4" },
    Case { name: "unknown_implicit_method", format: Toml, edits: &[("", "[implicit]\nmethod = \"bdf7\"\n")], args: &[], place: "t.toml:4:10: implicit.method", fix: "use one of: bdf, bdf1, bdf2, trapezoidal" },
    Case { name: "priority_out_of_range", format: Toml, edits: &[("", "[fast]\npriority = 100\n")], args: &[], place: "t.toml:4:12: fast.priority", fix: "1 to 99" },
    Case { name: "implicit_priority_not_below_fast", format: Toml, edits: &[("", "[implicit]\npriority = 90\n")], args: &[], place: "t.toml:4:12: implicit.priority", fix: "set implicit.priority to at most 79" },
    Case { name: "zero_rtol", format: Toml, edits: &[("", "[implicit]\nrtol = 0\n")], args: &[], place: "t.toml:4:8: implicit.rtol", fix: "write e.g. 1e-6" },
    Case { name: "huge_lead", format: Toml, edits: &[("", "[implicit]\nlead = \"1e300s\"\n")], args: &[], place: "t.toml:4:8: implicit.lead", fix: "at most 10000 frames (10s)" },
    Case { name: "lead_of_u32_max_ms", format: Toml, edits: &[("", "[implicit]\nlead = \"4294967295ms\"\n")], args: &[], place: "t.toml:4:8: implicit.lead", fix: "at most 10000 frames" },
    Case { name: "huge_max_lag", format: Toml, edits: &[("", "[implicit]\nmax_lag = \"9223372036854775807ms\"\n")], args: &[], place: "t.toml:4:11: implicit.max_lag", fix: "more than 0s and at most 10s" },
    Case { name: "lead_below_macro_step", format: Toml, edits: &[("", "[implicit]\nmacro_step = \"2ms\"\nlead = \"1ms\"\n")], args: &[], place: "t.toml:5:8: implicit.lead", fix: "must be at least implicit.macro_step" },
    Case { name: "macro_step_not_whole_frames", format: Toml, edits: &[("", "[implicit]\nmacro_step = \"1.5ms\"\n")], args: &[], place: "t.toml:4:14: implicit.macro_step", fix: "write e.g. \"1ms\" or \"2ms\"" },
    Case { name: "missing_model_file_in_config", format: Toml, edits: &[("\"ev\"", "\"absent.json\"")], args: &[], place: "t.toml:1:9: model", fix: "check the path" },
    Case { name: "unknown_builtin_model", format: Toml, edits: &[("\"ev\"", "\"evv\"")], args: &[], place: "t.toml:1:9", fix: "ev" },
    Case { name: "zero_decimation", format: Toml, edits: &[("", "[record]\nfile = \"a.csv\"\ndecimation = 0\n")], args: &[], place: "t.toml:5:14: record.decimation", fix: "write 1 to record every frame" },
    Case { name: "record_unknown_output", format: Toml, edits: &[("", "[record]\nfile = \"a.csv\"\nsignals = [\"speed\"]\n")], args: &[], place: "t.toml:5:", fix: "vehicle_speed" },
    Case { name: "points_for_unknown_input", format: Toml, edits: &[("", "[inputs.points]\nthrottle = [[0, 0], [1, 1]]\n")], args: &[], place: "t.toml:4:", fix: "torque_request" },
    Case { name: "missing_model_key", format: Toml, edits: &[("model = \"ev\"\n", "")], args: &[], place: "t.toml", fix: "model" },
    Case { name: "output_deadline_beyond_frame", format: Toml, edits: &[("", "output_deadline = \"2ms\"\n")], args: &[], place: "t.toml:3:19: output_deadline", fix: "at most the frame" },
    Case { name: "core_out_of_range", format: Toml, edits: &[("", "[fast]\ncore = 5000\n")], args: &[], place: "t.toml:4:8: fast.core", fix: "0 to 4095" },
    Case { name: "catchup_out_of_range", format: Toml, edits: &[("", "max_catchup = 5000\n")], args: &[], place: "t.toml:3:15: max_catchup", fix: "0 to 1000" },
    Case { name: "recording_above_bound", format: Toml, edits: &[("\"1ms\"", "\"1us\""), ("", "duration = \"604800s\"\n[record]\nfile = \"a.csv\"\n")], args: &[], place: "t.toml: record:", fix: "pass --large-output" },
    Case { name: "negative_duration_on_command_line", format: Toml, edits: &[], args: &["--duration", "-1"], place: "--duration", fix: "at most 604800 s (7 days), found -1" },
    // --- DBC ---
    Case { name: "dbc_syntax", format: Dbc, edits: &[(" SG_ RoadGrade : 32|16", " SG_ RoadGrade 32|16")], args: &[], place: "t.dbc:18:", fix: "a signal is written" },
    Case { name: "negative_cycle_time", format: Dbc, edits: &[("BO_ 512 10;", "BO_ 512 -5;")], args: &[], place: "t.dbc:22:1", fix: "give it a number of milliseconds" },
    Case { name: "minimum_above_maximum", format: Dbc, edits: &[("[0|200]", "[300|200]")], args: &[], place: "t.dbc:17:2", fix: "with the minimum first" },
    Case { name: "multiplexed_value_beyond_selector", format: Dbc, edits: &[(" SG_ Distance m1 ", " SG_ Distance m300 ")], args: &[], place: "t.dbc:45:2", fix: "widen the multiplexor" },
    Case { name: "classic_frame_of_64_bytes", format: Dbc, edits: &[("BO_ 528 VCU_Diagnostics: 8 PLANT", "BO_ 528 VCU_Diagnostics: 64 PLANT"), ("BA_DEF_ BO_ \"GenMsgCycleTime\" INT 0 10000;", "BA_DEF_ BO_ \"GenMsgCycleTime\" INT 0 10000;\nBA_DEF_ BO_ \"VFrameFormat\" ENUM \"StandardCAN\",\"ExtendedCAN\",\"StandardCAN_FD\",\"ExtendedCAN_FD\";\nBA_DEF_DEF_ \"VFrameFormat\" \"StandardCAN\";")], args: &[], place: "t.dbc:42:1", fix: "give it a CAN FD format" },
    Case { name: "length_not_a_can_length", format: Dbc, edits: &[("BO_ 528 VCU_Diagnostics: 8 PLANT", "BO_ 528 VCU_Diagnostics: 9 PLANT")], args: &[], place: "t.dbc:42:1", fix: "give it 0 to 8 bytes" },
    Case { name: "signal_beyond_message", format: Dbc, edits: &[(" SG_ RoadGrade : 32|16@1-", " SG_ RoadGrade : 56|16@1-")], args: &[], place: "t.dbc:18:2", fix: "lengthen the message" },
    Case { name: "duplicate_message_name", format: Dbc, edits: &[("BO_ 513 VCU_Powertrain", "BO_ 513 VCU_Speeds")], args: &[], place: "t.dbc:28:1", fix: "rename one of them" },
    Case { name: "duplicate_identifier", format: Dbc, edits: &[("BO_ 513 VCU_Powertrain", "BO_ 512 VCU_Powertrain")], args: &[], place: "t.dbc:28:1", fix: "give each message its own identifier" },
    Case { name: "signal_of_zero_bits", format: Dbc, edits: &[(" SG_ RoadGrade : 32|16@1-", " SG_ RoadGrade : 32|0@1-")], args: &[], place: "t.dbc:18:2", fix: "give it 1 to 64 bits" },
    Case { name: "zero_factor", format: Dbc, edits: &[("RoadGrade : 32|16@1- (0.01,0)", "RoadGrade : 32|16@1- (0,0)")], args: &[], place: "t.dbc:18:2", fix: "nonzero factor" },
    Case { name: "two_multiplexors", format: Dbc, edits: &[(" SG_ SlipFront m0 ", " SG_ SlipFront M ")], args: &[], place: "t.dbc:44:2", fix: "keep one" },
    Case { name: "overlapping_signals", format: Dbc, edits: &[(" SG_ RoadGrade : 32|16@1-", " SG_ RoadGrade : 24|16@1-")], args: &[], place: "t.dbc:18:2", fix: "move one of them" },
    Case { name: "standard_identifier_too_large", format: Dbc, edits: &[("BO_ 513 VCU_Powertrain", "BO_ 4000 VCU_Powertrain"), ("BO_ 513 10;", "BO_ 4000 10;")], args: &[], place: "t.dbc:28:1", fix: "add 2147483648" },
    Case { name: "mapped_message_not_in_dbc", format: Dbc, edits: &[("BO_ 513 VCU_Powertrain", "BO_ 513 VCU_Power")], args: &[], place: "t.toml:71:11", fix: "its messages:" },
    Case { name: "mapped_signal_not_in_dbc", format: Dbc, edits: &[(" SG_ Soc :", " SG_ StateOfCharge :")], args: &[], place: "t.toml:76:", fix: "its signals:" },
    Case { name: "transmitted_message_not_periodic", format: Dbc, edits: &[("BA_ \"GenMsgCycleTime\" BO_ 512 10;\n", "")], args: &[], place: "t.toml:67:11", fix: "give its period here" },
    Case { name: "fd_message_on_classic_socketcan", format: Dbc, edits: &[("BO_ 528 VCU_Diagnostics: 8 PLANT", "BO_ 528 VCU_Diagnostics: 64 PLANT")], args: &["--socketcan-classic"], place: "t.toml:92:11", fix: "set fd = true" },
    // --- candump log ---
    Case { name: "log_time_going_backwards", format: Log, edits: &[("(0.000000)", "(5.000000)")], args: &[], place: "x.log:2", fix: "sort it by time" },
    Case { name: "log_gap_beyond_a_run", format: Log, edits: &[("(0.010000)", "(9000000000.000000)")], args: &[], place: "x.log:2", fix: "cut the log there" },
    Case { name: "log_line_without_time", format: Log, edits: &[("(0.000000) can0", "can0")], args: &[], place: "x.log:1", fix: "expected `(seconds) interface id#data`" },
    Case { name: "log_bad_hex", format: Log, edits: &[("100#0000000000000000\n(0.01", "100#00XY\n(0.01")], args: &[], place: "x.log:1", fix: "two hex digits per byte" },
    Case { name: "log_identifier_too_large", format: Log, edits: &[("can0 100#", "can0 FFFFFFFFF#")], args: &[], place: "x.log:1", fix: "has 9 digits; use 3 (standard) or 8 (extended)" },
    Case { name: "log_classic_data_too_long", format: Log, edits: &[("100#0000000000000000\n(0.01", "100#000000000000000000\n(0.01")], args: &[], place: "x.log:1", fix: "(valid: 0 to 8)" },
    Case { name: "log_without_frames", format: Log, edits: &[(LOG, "# nothing here\n")], args: &[], place: "x.log", fix: "the log has no frames" },
    Case { name: "log_missing", format: Log, edits: &[], args: &["--missing-log"], place: "absent.log", fix: "cannot open the log" },
    Case { name: "log_out_is_the_log", format: Log, edits: &[], args: &["--out", "x.log"], place: "--out", fix: "choose another file" },
];

/// The cruise control example with `speed_map`'s gain an empty list:
/// `tandem check`, `tandem sim` and `tandem sim --interpret` refuse it
/// with one message, naming the block, the parameter, what it holds and
/// what it needs (never a panic in the code generator, never a run with
/// `v_ref` 0 throughout).
#[test]
fn an_empty_gain_list_is_refused_by_check_and_sim_alike() {
    let dir = common::scratch("catalogue");
    let example = std::fs::read_to_string(common::root().join("models/examples/cruise_control.json")).unwrap();
    let from = r#"{"id": "speed_map", "type": "Gain", "params": {"gain": 50.0}}"#;
    assert!(example.contains(from), "the example has changed");
    let mutated = example.replacen(
        from,
        r#"{"id": "speed_map", "type": "Gain", "params": {"gain": []}}"#,
        1,
    );
    std::fs::write(dir.join("cc.json"), mutated).unwrap();
    let message = "error: cc.json:7:6: block \"speed_map\": gain: an empty list; give a number or one value per \
                   element of the input (width 1)\n";
    for args in [
        &["check", "cc.json"][..],
        &["sim", "cc.json"],
        &["sim", "cc.json", "--interpret"],
    ] {
        let out = common::tandem(&dir, args);
        assert_eq!(out.status.code(), Some(1), "tandem {args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), message, "tandem {args:?}");
        assert!(
            out.stdout.is_empty(),
            "tandem {args:?} printed {:?}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// Writes the case's files into `dir` and returns the command's arguments.
fn prepare(case: &Case, dir: &Path) -> Vec<String> {
    let examples = common::root().join("config/examples");
    let edited = |base: &str| {
        let mut text = base.to_string();
        for (from, to) in case.edits {
            if from.is_empty() {
                text.push_str(to);
            } else {
                assert!(text.contains(from), "{}: {from:?} is not in the base file", case.name);
                text = text.replacen(from, to, 1);
            }
        }
        text
    };
    let bus_config = |dbc: &str| {
        let text = std::fs::read_to_string(examples.join("ev-can.toml")).unwrap();
        let text = text.replace("dbc = \"ev.dbc\"", &format!("dbc = \"{dbc}\""));
        if case.args.contains(&"--socketcan-classic") {
            text.replace(
                "transport = \"udp\"             # udp | socketcan | slcan | virtual | dcp (dcp/FEDERATION.md)\ngroup = \"239.74.163.2\"        # udp: python-can's default group\nport = 43113                  # udp: python-can's default port",
                "transport = \"socketcan\"\ninterface = \"vcan0\"\n\n",
            )
        } else {
            text
        }
    };
    let extra = case
        .args
        .iter()
        .filter(|a| !a.starts_with("--socketcan") && !a.starts_with("--missing"));
    let mut args: Vec<String> = match case.format {
        Format::Model => {
            std::fs::write(dir.join("m.json"), edited(MODEL)).unwrap();
            if case.args.first() == Some(&"--") {
                return ["sim", case.args[1]].map(String::from).to_vec();
            }
            vec!["sim".into(), "m.json".into()]
        }
        Format::Toml => {
            std::fs::write(dir.join("t.toml"), edited(TOML)).unwrap();
            vec!["run".into(), "t.toml".into(), "--virtual-clock".into()]
        }
        Format::Dbc => {
            let dbc = std::fs::read_to_string(examples.join("ev.dbc")).unwrap();
            std::fs::write(dir.join("t.dbc"), edited(&dbc)).unwrap();
            std::fs::write(dir.join("t.toml"), bus_config("t.dbc")).unwrap();
            ["run", "t.toml", "--virtual-clock", "--duration", "0.01"]
                .map(String::from)
                .to_vec()
        }
        Format::Log => {
            std::fs::write(dir.join("x.log"), edited(LOG)).unwrap();
            std::fs::copy(examples.join("ev.dbc"), dir.join("ev.dbc")).unwrap();
            std::fs::write(dir.join("t.toml"), bus_config("ev.dbc")).unwrap();
            let log = if case.args.contains(&"--missing-log") {
                "absent.log"
            } else {
                "x.log"
            };
            ["replay", log, "--config", "t.toml"].map(String::from).to_vec()
        }
    };
    args.extend(extra.map(|a| a.to_string()));
    args
}

#[test]
fn every_bad_input_fails_naming_its_place_and_its_fix() {
    assert!(CASES.len() >= 60, "the catalogue has {} cases", CASES.len());
    let mut failures = Vec::new();
    for case in CASES {
        let dir = common::scratch(&format!("catalogue_{}", case.name));
        let args = prepare(case, &dir);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = common::tandem(&dir, &args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let problems: Vec<&str> = [
            (out.status.code() != Some(1), "exit status is not 1"),
            (stderr.contains("panicked"), "it panicked"),
            (!stderr.contains(case.place), "the place is not named"),
            (!stderr.contains(case.fix), "the fix is not given"),
            (stderr.lines().count() > 40, "the message is longer than 40 lines"),
        ]
        .into_iter()
        .filter_map(|(bad, what)| bad.then_some(what))
        .collect();
        if !problems.is_empty() {
            failures.push(format!(
                "{} ({:?}): {}; expected {:?} and {:?}; status {:?}, stderr:\n{stderr}",
                case.name,
                case.format,
                problems.join(", "),
                case.place,
                case.fix,
                out.status.code()
            ));
        }
    }
    let per_format = |f: fn(&Format) -> bool| CASES.iter().filter(|c| f(&c.format)).count();
    println!(
        "{} cases: {} model, {} run configuration, {} DBC, {} log",
        CASES.len(),
        per_format(|f| matches!(f, Format::Model)),
        per_format(|f| matches!(f, Format::Toml)),
        per_format(|f| matches!(f, Format::Dbc)),
        per_format(|f| matches!(f, Format::Log)),
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}
