//! Every mistake in a system file is refused before anything runs, with
//! the file, line and column, the key, what is wrong and the fix.

use std::path::Path;

/// A valid system (the split oscillator); each test spoils one line.
const GOOD: &str = include_str!("data/good.toml");

/// The message for `GOOD` with `old` replaced by `new`.
fn refused(old: &str, new: &str) -> String {
    assert!(GOOD.contains(old), "{old}");
    let text = GOOD.replacen(old, new, 1);
    match tandem_cosim::parse(&text, Path::new("examples/test.toml")) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

const GS: &str = "ordering = \"gauss-seidel\"";

#[test]
fn the_unspoilt_file_is_accepted() {
    let system = tandem_cosim::parse(GOOD, Path::new("examples/test.toml")).unwrap();
    assert_eq!(system.models(), ["mass1", "mass2"]);
    assert_eq!(
        system.output_names(),
        ["mass1.x1", "mass1.v1", "mass2.x2", "mass2.v2", "mass2.F"]
    );
    assert_eq!(system.master().steps, 100);
}

#[test]
fn a_connection_to_an_unknown_model_lists_the_models() {
    assert_eq!(
        refused("from = \"mass2.F\"", "from = \"mass3.F\""),
        "examples/test.toml:25:8: connection[2].from: no sub-model \"mass3\"; the sub-models: mass1, mass2"
    );
}

#[test]
fn a_connection_to_an_unknown_port_lists_the_ports_of_that_side() {
    assert_eq!(
        refused("to = \"mass2.x1\"", "to = \"mass2.x\""),
        "examples/test.toml:18:6: connection[0].to: sub-model \"mass2\" has no input \"x\"; its inputs: x1, v1"
    );
    assert_eq!(
        refused("from = \"mass1.x1\"", "from = \"mass2.x1\""),
        "examples/test.toml:17:8: connection[0].from: sub-model \"mass2\" has no output \"x1\" (\"x1\" is one of \
         its inputs: a connection goes from an output to an input); its outputs: x2, v2, F"
    );
}

#[test]
fn an_input_driven_twice_names_the_first_connection() {
    assert_eq!(
        refused("to = \"mass2.v1\"", "to = \"mass2.x1\""),
        "examples/test.toml:22:6: connection[1].to: input mass2.x1 is already driven by connection[0] (line 18); an \
         input takes one connection: remove one, or add the two inside a model"
    );
}

#[test]
fn a_stop_time_off_the_macro_step_grid_is_refused() {
    assert_eq!(
        refused("stop = 1.0", "stop = 1.005"),
        "examples/test.toml:3:8: master.stop: the stop time 1.005 s is not a whole number of macro steps of 0.01 s; \
         make it a multiple of master.step"
    );
    assert_eq!(
        refused("step = 0.01", "step = 0"),
        "examples/test.toml:2:8: master.step: must be from 1e-9 to 1e9 seconds, found 0"
    );
}

#[test]
fn a_communication_step_not_a_whole_number_of_communication_steps_of_a_model_is_refused() {
    assert_eq!(
        refused("name = \"mass1\"", "name = \"mass1\"\nevery = 3"),
        "examples/test.toml:8:9: model[0].every: the run's 100 macro steps are not a whole number of communication \
         steps of 3; choose an `every` that divides 100, or change master.stop"
    );
}

#[test]
fn a_micro_step_that_does_not_divide_the_communication_step_is_refused() {
    assert_eq!(
        refused("step = 0.001\n\n[[model]]", "step = 0.003\n\n[[model]]"),
        "examples/test.toml:9:8: model[0].step: the micro step 0.003 s does not divide the communication step 0.01 s \
         (every × master.step); give step = 0.01 / n s for a whole n"
    );
}

#[test]
fn more_micro_steps_in_a_communication_step_than_the_bound_are_refused() {
    assert_eq!(
        refused("step = 0.001\n\n[[model]]", "step = 1e-9\n\n[[model]]"),
        "examples/test.toml:9:8: model[0].step: 1e7 micro steps of 0.000000001 s in one communication step of 0.01 s, \
         more than the bound of 1e6; give a longer step or a shorter communication step"
    );
}

#[test]
fn an_order_that_is_not_a_permutation_is_refused() {
    let order = |list: &str| refused(GS, &format!("{GS}\norder = {list}"));
    assert_eq!(
        order("[\"mass1\", \"mass3\"]"),
        "examples/test.toml:5:19: master.order[1]: no sub-model \"mass3\"; the sub-models: mass1, mass2"
    );
    assert_eq!(
        order("[\"mass1\", \"mass1\"]"),
        "examples/test.toml:5:19: master.order[1]: \"mass1\" is listed twice; list each sub-model once"
    );
    assert_eq!(
        order("[\"mass1\"]"),
        "examples/test.toml:5:9: master.order: misses mass2; list every sub-model once"
    );
    assert_eq!(
        refused(GS, "ordering = \"jacobi\"\norder = [\"mass1\", \"mass2\"]"),
        "examples/test.toml:5:9: master.order: an order is used by ordering = \"gauss-seidel\" only (Jacobi steps \
         every sub-model from the same values); remove it or set the ordering"
    );
}

#[test]
fn an_extrapolation_order_other_than_0_1_or_2_is_refused() {
    assert_eq!(
        refused(GS, &format!("{GS}\nextrapolation = 3")),
        "examples/test.toml:5:17: master.extrapolation: must be from 0 to 2, found 3"
    );
}

#[test]
fn a_tolerance_that_is_not_positive_is_refused() {
    assert_eq!(
        refused(GS, &format!("{GS}\niterate = {{ tolerance = 0 }}")),
        "examples/test.toml:5:25: master.iterate.tolerance: must be a number above 0 (the largest change of a \
         coupling output between two iterations), found 0"
    );
    assert_eq!(
        refused(
            GS,
            &format!("{GS}\niterate = {{ tolerance = 1e-9, max_iterations = 0 }}")
        ),
        "examples/test.toml:5:48: master.iterate.max_iterations: must be from 1 to 1000, found 0"
    );
}

#[test]
fn toml_mistakes_are_refused_at_their_place() {
    assert_eq!(
        refused("stop = 1.0", "stop = 1.0.0"),
        "examples/test.toml:3:11: invalid float, expected nothing; see cosim/SYSTEM.md for the format"
    );
    assert_eq!(
        refused("stop = 1.0", "stop = \"1 s\""),
        "examples/test.toml:3:8: invalid type: string \"1 s\", expected f64; see cosim/SYSTEM.md for the format"
    );
    assert!(refused("stop = 1.0", "stopp = 1.0")
        .starts_with("examples/test.toml:3:1: unknown field `stopp`, expected one of `step`, `stop`,"));
}

#[test]
fn unknown_names_of_orderings_and_solvers_list_the_valid_ones() {
    assert_eq!(
        refused(GS, "ordering = \"seidel\""),
        "examples/test.toml:4:12: master.ordering: unknown ordering \"seidel\"; use one of: jacobi, gauss-seidel"
    );
    assert_eq!(
        refused("source = \"mass2.json\"", "source = \"mass2.json\"\nsolver = \"rk45\""),
        "examples/test.toml:14:10: model[1].solver: unknown solver \"rk45\"; use one of: euler, heun, rk4, bdf"
    );
    assert_eq!(
        refused(
            "source = \"mass2.json\"",
            "source = \"mass2.json\"\nsolver = \"bdf\"\nrtol = 2"
        ),
        "examples/test.toml:15:8: model[1].rtol: a tolerance must be between 0 and 1 (exclusive), found 2"
    );
}

#[test]
fn threads_are_refused_for_gauss_seidel() {
    assert_eq!(
        refused(GS, &format!("{GS}\nthreads = 2")),
        "examples/test.toml:5:11: master.threads: threads are used by ordering = \"jacobi\" only (Gauss-Seidel steps \
         one sub-model after the other); remove it or set the ordering"
    );
}

#[test]
fn model_names_are_unique_and_have_no_dot() {
    assert_eq!(
        refused("name = \"mass2\"", "name = \"mass1\""),
        "examples/test.toml:12:8: model[1].name: \"mass1\" already names model[0] (line 7); give each sub-model its \
         own name"
    );
    assert!(refused("name = \"mass2\"", "name = \"mass.2\"")
        .starts_with("examples/test.toml:12:8: model[1].name: \"mass.2\" cannot name a sub-model"));
}

#[test]
fn sources_that_cannot_be_loaded_are_refused_at_the_source() {
    assert!(
        refused("source = \"mass2.json\"", "source = \"nope.json\"").starts_with(
            "examples/test.toml:13:10: model[1].source: cannot use this model: examples/nope.json: cannot read"
        )
    );
    assert!(refused("source = \"mass2.json\"", "source = \"nope\"").starts_with(
        "examples/test.toml:13:10: model[1].source: cannot use this model: no built-in model \"nope\"; built-in \
         models: "
    ));
    let text = GOOD.replacen("mass2.json", "mass2.fmu", 1);
    let e = tandem_cosim::parse(&text, Path::new("examples/test.toml"))
        .err()
        .unwrap();
    let message = e.to_string();
    assert!(
        message.starts_with("examples/test.toml:13:10: model[1].source: cannot use this model: ")
            && message.contains("mass2.fmu"),
        "{message}"
    );
}

#[test]
fn non_finite_scales_and_empty_systems_are_refused() {
    assert_eq!(
        refused("to = \"mass2.x1\"", "to = \"mass2.x1\"\nscale = nan"),
        "examples/test.toml:19:9: connection[0].scale: must be a finite number, found NaN"
    );
    let e = tandem_cosim::parse("[master]\nstep = 0.1\nstop = 1\n", Path::new("examples/test.toml"));
    assert_eq!(
        e.err().unwrap().to_string(),
        "examples/test.toml:1:1: model: a system needs at least one [[model]] table (name and source); see \
         cosim/SYSTEM.md"
    );
}

#[test]
fn an_unreadable_system_file_names_the_file() {
    let e = tandem_cosim::load(Path::new("examples/no-such-system.toml"))
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .starts_with("examples/no-such-system.toml: cannot read the system file: "),
        "{e}"
    );
}
