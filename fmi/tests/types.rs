//! The whole FMI type system, chosen recordings, start values
//! the standard lets a user set, and an FMU's own end of the simulation,
//! on the hand-written FMU `types3` (FMI 3, Model Exchange and
//! Co-Simulation), against its closed forms: x(t) = x0 e^(-k t), the
//! counter of whole seconds ending the run at t = end, and every input
//! echoed by its output.

#[path = "support/fmus.rs"]
mod fmus;

use tandem_fmi::{
    not_taken, Causality, Dimension, Fmu, FmuError, FmuModel, FmuSlave, Numeric, Parameters, Recorded, StepEnd, Value,
    VariableType,
};
use tandem_models::Model;
use tandem_runtime::record::Trace;
use tandem_runtime::{FixedStep, Method, Simulation};

fn open(dir: &tempfile::TempDir) -> Fmu {
    Fmu::open(fmus::build("types3", dir.path())).unwrap()
}

fn column(names: &[String], name: &str) -> usize {
    names
        .iter()
        .position(|n| n == name)
        .unwrap_or_else(|| panic!("no {name} in {names:?}"))
}

#[test]
fn every_fmi3_type_is_read_with_arrays_by_element_and_aliases() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = open(&dir);
    let d = fmu.description();
    let kinds: Vec<VariableType> = [
        "f32_in", "i8_in", "u8_in", "i16_in", "u16_in", "i32_in", "u32_in", "i64_in", "u64_in", "b_in", "label", "key",
        "mode",
    ]
    .iter()
    .map(|n| d.variable(n).unwrap().kind.clone())
    .collect();
    use Numeric::*;
    let numbers = [
        Float32, Int8, UInt8, Int16, UInt16, Int32, UInt32, Int64, UInt64, Boolean,
    ];
    let others = [VariableType::String, VariableType::Binary, VariableType::Enumeration];
    assert_eq!(
        kinds,
        numbers
            .map(VariableType::Number)
            .into_iter()
            .chain(others)
            .collect::<Vec<_>>()
    );
    assert_eq!(d.variable("label").unwrap().start_text.as_deref(), Some("hello"));
    assert_eq!(d.variable("key").unwrap().start_text.as_deref(), Some("cafe"));
    // The alias names the same variable; the declared type gives units.
    let x = d.variable("position").unwrap();
    assert_eq!(
        (x.name.as_str(), x.unit.as_deref(), x.display_unit.as_deref()),
        ("x", Some("m"), Some("mm"))
    );
    let n = d.index_of("n").unwrap();
    assert_eq!(d.variables[n].causality, Causality::StructuralParameter);
    let scaled = d.index_of("scaled").unwrap();
    assert_eq!(d.variables[scaled].dimensions, [Dimension::Parameter(n)]);
    assert_eq!(
        d.element_names(scaled).unwrap(),
        ["scaled[1]", "scaled[2]", "scaled[3]"]
    );
    // What a run does not take is named, with its element and line.
    let lines = not_taken(d);
    assert!(
        lines.iter().any(|l| l.starts_with("\"label\" (<String>, line ")
            && l.contains("a String is not recorded or connected (runs carry numbers)")),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("\"key_out\" (<Binary>, line ")),
        "{lines:#?}"
    );
    // Discrete inputs are driven in Model Exchange too: not listed.
    assert!(!lines.iter().any(|l| l.starts_with("\"i8_in\"")), "{lines:#?}");
}

#[test]
fn model_exchange_records_a_local_state_and_ends_where_the_fmu_asks() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = open(&dir);
    let recorded = Recorded::patterns(["states", "counter", "even", "mode", "scaled", "f32_out"]);
    let mut model = FmuModel::with(&fmu, &Parameters::new().with("x", 2.0), &recorded, 0.0).unwrap();
    let names: Vec<String> = model.layout().outputs.iter().map(|v| v.name.clone()).collect();
    assert_eq!(
        names,
        [
            "x",
            "counter",
            "even",
            "mode",
            "f32_out",
            "scaled[1]",
            "scaled[2]",
            "scaled[3]"
        ]
    );
    // The default of the Float32 input is its start value.
    assert_eq!(model.layout().inputs[0].default, 0.5);
    let settings = FixedStep {
        solver: Method::Rk4.into(),
        step: 0.01,
        stop: 10.0,
    };
    let mut trace = Trace::default();
    let mut sim = Simulation::new(&mut model, settings).unwrap();
    let summary = sim.run(&mut trace, &mut |_| {}).unwrap();
    // The counter asks to end at t = 3: a normal end, there.
    assert_eq!(summary.finished, Some(3.0));
    let last = *trace.time.last().unwrap();
    assert!((last - 3.0).abs() < 1e-9, "the run went on to {last}");
    for (&t, row) in trace.time.iter().zip(&trace.rows) {
        let exact = 2.0 * (-t).exp();
        assert!((row[0] - exact).abs() < 1e-9, "x({t}) = {} against {exact}", row[0]);
        let whole = (t + 1e-9).floor();
        // A grid row at a whole second is recorded before that event.
        if (t - t.round()).abs() > 1e-6 {
            assert_eq!(row[1], whole, "counter at {t}");
            assert_eq!(row[2], if whole % 2.0 == 0.0 { 1.0 } else { 0.0 }, "even at {t}");
            assert_eq!(row[3], whole % 4.0 + 1.0, "mode at {t}");
        }
        assert_eq!(row[4], 1.0, "f32_out at {t}");
        for (j, gain) in [1.0, 2.0, 3.0].into_iter().enumerate() {
            assert!((row[5 + j] - gain * row[0]).abs() < 1e-15, "scaled[{}] at {t}", j + 1);
        }
    }
    assert!(
        model.log().iter().any(|l| l.contains("end reached")),
        "{:?}",
        model.log()
    );
}

/// An array's elements are recorded one by one, by name or glob, as
/// `tandem check` lists them, with the whole variable read and the others
/// left out; a name matching nothing is refused.
#[test]
fn an_arrays_elements_are_recorded_by_name_or_glob() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = open(&dir);
    let settings = FixedStep {
        solver: Method::Rk4.into(),
        step: 0.01,
        stop: 1.0,
    };
    for (patterns, names, gains) in [
        (vec!["scaled[2]"], vec!["scaled[2]"], vec![2.0]),
        (
            vec!["x", "scaled[3]", "scaled[1]"],
            vec!["x", "scaled[1]", "scaled[3]"],
            vec![1.0, 3.0],
        ),
        (
            vec!["x", "scaled[?]"],
            vec!["x", "scaled[1]", "scaled[2]", "scaled[3]"],
            vec![1.0, 2.0, 3.0],
        ),
    ] {
        let recorded = Recorded::patterns(patterns.clone());
        let mut model = FmuModel::with(&fmu, &Parameters::new().with("x", 2.0), &recorded, 0.0).unwrap();
        let got: Vec<String> = model.layout().outputs.iter().map(|v| v.name.clone()).collect();
        assert_eq!(got, names, "{patterns:?}");
        let mut trace = Trace::default();
        Simulation::new(&mut model, settings)
            .unwrap()
            .run(&mut trace, &mut |_| {})
            .unwrap();
        for (&t, row) in trace.time.iter().zip(&trace.rows) {
            let x = 2.0 * (-t).exp();
            let elements = &row[row.len() - gains.len()..];
            for (value, gain) in elements.iter().zip(&gains) {
                assert!((value - gain * x).abs() < 1e-9, "{patterns:?} at {t}: {row:?}");
            }
        }
    }
    let error = FmuModel::with(&fmu, &Parameters::new(), &Recorded::patterns(["scaled[4]"]), 0.0)
        .err()
        .unwrap()
        .to_string();
    assert!(
        error.contains("no numeric variable is called or matches \"scaled[4]\""),
        "{error}"
    );
}

#[test]
fn co_simulation_carries_every_numeric_type_and_ends_where_the_fmu_asks() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = open(&dir);
    let parameters = Parameters::new()
        .with("label", "bonjour")
        .with("key", Value::Text("00ff10".into()))
        .with("end", 2);
    let mut slave = FmuSlave::with(&fmu, &parameters, &Recorded::outputs(), 0.0, Some(10.0)).unwrap();
    let inputs: Vec<String> = slave.input_variables().iter().map(|v| v.name.clone()).collect();
    let outputs: Vec<String> = slave.output_variables().iter().map(|v| v.name.clone()).collect();
    // Every numeric input, and every numeric output (the arrays by element);
    // String and Binary outputs are not signals.
    assert_eq!(inputs.len(), 10, "{inputs:?}");
    assert_eq!(outputs.len(), 3 + 10 + 3, "{outputs:?}");
    // The extremes of each type, as the cross-check's Feedthrough input.
    let extremes = [
        ("f32_in", 0.25, 0.5),
        ("i8_in", -128.0, -128.0),
        ("u8_in", 255.0, 255.0),
        ("i16_in", -32768.0, -32768.0),
        ("u16_in", 65535.0, 65535.0),
        ("i32_in", -2147483648.0, -2147483648.0),
        ("u32_in", 4294967295.0, 4294967295.0),
        ("i64_in", -9223372036854775808.0, -9223372036854775808.0),
        ("u64_in", 18446744073709551615.0, 18446744073709551615.0),
        ("b_in", 1.0, 1.0),
    ];
    let mut u = vec![0.0; inputs.len()];
    for (name, value, _) in extremes {
        u[column(&inputs, name)] = value;
    }
    slave.set_inputs(&u).unwrap();
    let mut y = vec![0.0; outputs.len()];
    let mut t = 0.0;
    let mut end = None;
    for _ in 0..1000 {
        match slave.do_step(t, 0.3).unwrap() {
            StepEnd::Done => t += 0.3,
            StepEnd::Terminated(at) => {
                end = Some(at);
                break;
            }
        }
    }
    // From 1.8 over 0.3 the FMU stops at its end, 2, and says so.
    assert_eq!(end, Some(2.0));
    assert_eq!(slave.terminated(), Some(2.0));
    slave.outputs(&mut y).unwrap();
    for (name, _, echoed) in extremes {
        let out = name.replace("_in", "_out");
        assert_eq!(y[column(&outputs, &out)], echoed, "{out}");
    }
    assert_eq!(y[column(&outputs, "counter")], 2.0);
    assert_eq!(y[column(&outputs, "even")], 1.0);
    assert_eq!(y[column(&outputs, "mode")], 3.0);
    let x = (-2.0f64).exp();
    assert!((y[column(&outputs, "scaled[3]")] - 3.0 * x).abs() < 1e-15);
    // The String and Binary parameters were set before initialisation.
    assert_eq!(slave.text("label_out").unwrap(), b"bonjour");
    assert_eq!(slave.text("key_out").unwrap(), [0x00, 0xff, 0x10]);
    // A step after the end is refused, naming it.
    let text = slave.do_step(2.0, 0.3).unwrap_err().to_string();
    assert!(text.contains("asked to terminate the simulation at t = 2 s"), "{text}");
}

#[test]
fn start_values_are_refused_where_the_standard_refuses_them() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = open(&dir);
    let refused = |name: &str, value: Value| -> String {
        let parameters = Parameters::new().with(name, value);
        FmuSlave::new(&fmu, &parameters, 0.0)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    assert_eq!(
        refused("der(x)", Value::Real(1.0)),
        "FMU \"types3\": variable \"der(x)\" cannot be set: its causality is \"local\" and its initial value is \
         calculated by the FMU (only parameters, inputs and variables with initial=\"exact\" or \"approx\" take a \
         start value)\n  help: set only parameters (causality \"parameter\", variability \"fixed\" or \"tunable\"), \
         inputs, and states or outputs with initial=\"exact\" or \"approx\""
    );
    assert!(refused("n", Value::Integer(4)).contains(
        "variable \"n\" cannot be set: it is a structural parameter, set only in Configuration Mode, which this \
             importer does not enter"
    ));
    assert_eq!(
        refused("i8_in", Value::Integer(300)),
        "FMU \"types3\": variable \"i8_in\" is of type Int8, not Integer\n  help: give it a value of type Int8"
    );
    assert!(refused("end", Value::Real(2.5)).contains("variable \"end\" is of type UInt16, not Real"));
    assert!(refused("key", Value::Text("xyz".into())).contains("variable \"key\" is of type Binary, not text"));
    // Recording a String, or a name no variable has, is refused too.
    let text = FmuSlave::with(&fmu, &Parameters::new(), &Recorded::patterns(["label"]), 0.0, None)
        .err()
        .unwrap()
        .to_string();
    assert!(
        text.starts_with("FMU \"types3\": variable \"label\" (modelDescription.xml line ")
            && text.contains("is a String, which cannot be recorded or connected: runs carry numbers"),
        "{text}"
    );
    let error = FmuSlave::with(&fmu, &Parameters::new(), &Recorded::patterns(["countr"]), 0.0, None)
        .err()
        .unwrap();
    assert!(matches!(error, FmuError::NoSuchSignals { .. }));
    assert!(
        error.to_string().starts_with(
            "FMU \"types3\": no numeric variable is called or matches \"countr\"; did you mean \"counter\"?"
        ),
        "{error}"
    );
}
