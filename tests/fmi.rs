//! FMUs from the command line: a Model Exchange FMU simulated offline
//! (`tandem sim ball.fmu`) and run as the real-time plant of `tandem run`,
//! and a co-simulation system (`tandem cosim`), a system file or an SSP
//! package also as the plant of `tandem run`. The FMUs are the project's
//! own, built from `fmi/tests/fmus/`; SSP packages of them are built by the
//! tests (`tandem cosim system.ssp`).

#[path = "../fmi/tests/support/fmus.rs"]
mod fmus;

mod common;

use std::path::Path;

use common::Table;

/// A diagram whose output is twice its input: `u`, `y`.
const GAIN_DIAGRAM: &str = r#"{"name": "gain", "blocks": [
    {"id": "u", "type": "Inport"}, {"id": "k", "type": "Gain", "params": {"gain": 2}},
    {"id": "y", "type": "Output"}],
    "links": [{"from": "u", "to": "k"}, {"from": "k", "to": "y"}]}"#;

const G: f64 = 9.81;
const E: f64 = 0.7;

/// The height of the bouncing ball dropped from 1 m at rest, in closed form.
fn height(t: f64) -> f64 {
    let (mut t0, mut v0, mut h0) = (0.0, 0.0, 1.0);
    loop {
        // The next impact: h0 + v0 s - g s^2 / 2 = 0.
        let s = (v0 + (v0 * v0 + 2.0 * G * h0).sqrt()) / G;
        if t <= t0 + s {
            let s = t - t0;
            return h0 + v0 * s - G * s * s / 2.0;
        }
        (t0, v0, h0) = (t0 + s, E * G * s - E * v0, 0.0);
    }
}

#[test]
fn sim_integrates_a_model_exchange_fmu_to_the_closed_form() {
    let dir = common::scratch("fmi_sim");
    for name in ["bouncing_ball", "bouncing_ball3"] {
        let fmu = fmus::build(name, &dir);
        let out = common::tandem_ok(&dir, &["sim", fmu.to_str().unwrap(), "--out", "ball.csv"]);
        // The default experiment: 3 s; rk4 at Tandem's default 1 ms step.
        assert!(out.contains("3000 steps of rk4"), "{out}");
        let table = Table::read(&dir.join("ball.csv"));
        assert_eq!(table.header, ["time", "h", "v"]);
        // Up to the bounces' accumulation point at 2.559 s, where the FMU
        // lets the ball rest.
        for row in table.rows.iter().filter(|r| r[0] < 2.4) {
            let (t, h) = (row[0], row[1]);
            assert!(
                (h - height(t)).abs() < 1e-9,
                "{name}: h({t}) = {h}, exact {}",
                height(t)
            );
        }
    }
}

/// A run configuration of `plant` on 1 ms frames under `policy`, every
/// frame recorded; the implicit side's tolerances tight enough for its
/// result to be as exact as the fast side's.
fn run_config(plant: &Path, policy: &str) -> String {
    format!(
        r#"model = "{}"
frame = "1ms"
duration = "2.4s"
policy = "{policy}"
[fast]
method = "rk4"
[implicit]
method = "bdf"
rtol = 1e-12
atol = 1e-12
[record]
file = "ball.csv"
"#,
        plant.display()
    )
}

#[test]
fn an_fmu_with_events_is_the_plant_of_a_real_time_run_under_every_policy() {
    let dir = common::scratch("fmi_run");
    for name in ["bouncing_ball", "bouncing_ball3"] {
        let fmu = fmus::build(name, &dir);
        for policy in ["explicit", "correct", "select"] {
            std::fs::write(dir.join("ball.toml"), run_config(&fmu, policy)).unwrap();
            let out = common::tandem_ok(&dir, &["run", "ball.toml", "--virtual-clock", "--results", "."]);
            assert!(out.contains("2400 frames"), "{out}");
            let table = Table::read(&dir.join("ball.csv"));
            assert_eq!(table.header, ["time", "h", "v"]);
            // Impacts are located inside their frames on both sides, and
            // the fast side takes the implicit state of every frame: the
            // ball follows the closed form, bounce after bounce, up to
            // where the bounces crowd together before the ball rests.
            for row in table.rows.iter().filter(|r| r[0] < 2.3) {
                let (t, h) = (row[0], row[1]);
                assert!(
                    (h - height(t)).abs() < 1e-9,
                    "{name} under {policy}: h({t}) = {h}, exact {}",
                    height(t)
                );
            }
            if policy != "explicit" {
                assert!(out.contains("frames by source: fast 1, implicit 2399"), "{out}");
                assert!(out.contains("0 implicit results not taken"), "{out}");
            }
        }
    }
}

#[test]
fn a_once_per_process_fmu_is_refused_as_a_real_time_plant_and_simulated_offline() {
    let dir = common::scratch("fmi_once");
    let description = fmus::description("bouncing_ball").replace(
        "<ModelExchange ",
        "<ModelExchange canBeInstantiatedOnlyOncePerProcess=\"true\" ",
    );
    let fmu = fmus::build_variant(
        "bouncing_ball",
        &dir.join("once.fmu"),
        fmus::Variant {
            description: Some(&description),
            ..Default::default()
        },
    );
    std::fs::write(dir.join("once.toml"), run_config(&fmu, "correct")).unwrap();
    let out = common::tandem(&dir, &["run", "once.toml", "--virtual-clock", "--results", "."]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("once.toml:1:9: model: ")
            && stderr.contains("can be instantiated only once per process")
            && stderr.contains("help: simulate it offline"),
        "{stderr}"
    );
    common::tandem_ok(&dir, &["sim", "once.fmu", "--stop", "1", "--out", "once.csv"]);
}

#[test]
fn cosim_runs_the_example_system_and_writes_every_output() {
    let dir = common::scratch("cosim_cli");
    let system = common::root().join("cosim/examples/two_mass.toml");
    let out = common::tandem_ok(&dir, &["cosim", system.to_str().unwrap(), "--plot", "two_mass.svg"]);
    assert!(
        out.contains("10000 macro steps of 0.001 s to t = 10 s (mass1 → mass2)"),
        "{out}"
    );
    let table = Table::read(&dir.join("results/two_mass.csv"));
    assert_eq!(
        table.header,
        ["time", "mass1.x1", "mass1.v1", "mass2.x2", "mass2.v2", "mass2.F"]
    );
    // The exact solution at t = 10 (cosim/tests/data/two_mass_oscillator.json).
    let last = table.rows.last().unwrap();
    let exact = [
        10.0,
        -4.077531930421518,
        79.88069048993876,
        -0.872590552167461,
        -89.32620152542665,
    ];
    for (got, want) in last.iter().zip(exact) {
        assert!((got - want).abs() < 3e-3, "{last:?}");
    }
    assert!(std::fs::metadata(dir.join("two_mass.svg")).unwrap().len() > 1000);
}

#[test]
fn check_opens_an_fmu_and_lists_its_ports() {
    let dir = common::scratch("fmi_check");
    let fmu = fmus::build("bouncing_ball3", &dir);
    let out = common::tandem_ok(&dir, &["check", fmu.to_str().unwrap()]);
    assert!(out.contains("FMI 3.0 FMU \"bouncing_ball3\" (Model Exchange)"), "{out}");
    assert!(out.contains("states: h, v") && out.contains("outputs: h, v"), "{out}");
    assert!(
        out.contains("zero crossings: bouncing_ball3#indicator 0, bouncing_ball3#time event"),
        "{out}"
    );
    let cs = fmus::build("oscillator", &dir);
    let out = common::tandem_ok(&dir, &["check", cs.to_str().unwrap()]);
    assert!(
        out.contains("(Co-Simulation)") && out.contains("inputs: F") && out.contains("outputs: x, v"),
        "{out}"
    );
    std::fs::write(dir.join("broken.fmu"), "not a zip").unwrap();
    let out = common::tandem(&dir, &["check", "broken.fmu"]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("broken.fmu"), "{stderr}");
}

#[test]
fn an_exported_fmu_co_simulated_by_tandem_records_what_sim_records() {
    let dir = common::scratch("fmi_export");
    let model = common::root().join("models/examples/cruise_control.json");
    let model = model.to_str().unwrap();
    let out = common::tandem_ok(&dir, &["export", model, "--fmu", "cc.fmu", "--stop", "20"]);
    assert!(out.contains("FMI 3.0 Co-Simulation FMU of \"Cruise control\""), "{out}");
    let out = common::tandem_ok(&dir, &["check", "cc.fmu"]);
    assert!(
        out.contains("(Co-Simulation)") && out.contains("inputs: pedal"),
        "{out}"
    );
    let system = "[master]\nstep = 0.01\nstop = 20\n\n[[model]]\nname = \"cc\"\nsource = \"cc.fmu\"\n";
    std::fs::write(dir.join("alone.toml"), system).unwrap();
    common::tandem_ok(&dir, &["cosim", "alone.toml", "--out", "cosim.csv"]);
    common::tandem_ok(&dir, &["sim", model, "--stop", "20", "--out", "sim.csv"]);
    let (cosim, sim) = (Table::read(&dir.join("cosim.csv")), Table::read(&dir.join("sim.csv")));
    assert_eq!(cosim.rows.len(), 2001);
    // Bit for bit: both are Tandem's simulation of the model, one behind
    // the FMI.
    assert_eq!(cosim.rows, sim.rows);
}

#[test]
fn a_crashing_fmu_ends_tandem_in_process_and_is_reported_isolated() {
    let dir = common::scratch("fmi_isolate");
    let fmu = fmus::build("crash", &dir);
    let fmu = fmu.to_str().unwrap();
    // In process, the FMU's segfault at t = 0.5 s is tandem's: killed by
    // the signal, not a word said.
    let done = common::tandem(&dir, &["sim", fmu, "--out", "in.csv", "--step", "0.01"]);
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&done.status), Some(11));
    assert!(String::from_utf8_lossy(&done.stderr).is_empty());
    // Isolated, the run ends with an error naming the FMU, the call and the
    // signal, and the rows before it are in the file.
    let done = common::tandem(&dir, &["sim", fmu, "--out", "out.csv", "--step", "0.01", "--isolate"]);
    assert_eq!(done.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(
        stderr.contains(
            "FMU \"crash\": its process died during fmi2GetDerivatives: killed by signal 11 (SIGSEGV, segmentation fault)"
        ) && stderr.contains("out.csv"),
        "{stderr}"
    );
    let table = Table::read(&dir.join("out.csv"));
    assert_eq!(table.rows.len(), 50);
    for row in &table.rows {
        assert!((row[1] - (-row[0]).exp()).abs() < 1e-9, "{row:?}");
    }
    // Without the crash, isolated gives what in process gives, bit for bit.
    let ball = fmus::build("bouncing_ball", &dir);
    let ball = ball.to_str().unwrap();
    common::tandem_ok(&dir, &["sim", ball, "--out", "here.csv"]);
    common::tandem_ok(&dir, &["sim", ball, "--out", "there.csv", "--isolate"]);
    assert_eq!(
        std::fs::read(dir.join("here.csv")).unwrap(),
        std::fs::read(dir.join("there.csv")).unwrap()
    );
    // A diagram has nothing to isolate.
    let model = common::root().join("models/examples/cruise_control.json");
    let done = common::tandem(&dir, &["sim", model.to_str().unwrap(), "--isolate"]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(
        stderr.contains("only an FMU's code runs out of process (--isolate)"),
        "{stderr}"
    );
    // The helper is not for people.
    let done = common::tandem(&dir, &["fmu-host"]);
    assert_eq!(done.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&done.stderr).contains("it is not run by hand"));
}

#[test]
fn cosim_isolates_an_fmu_its_system_file_says_to() {
    let dir = common::scratch("cosim_isolate");
    fmus::build("crash", &dir);
    let system = |isolate: &str| {
        format!(
            "[master]\nstep = 0.01\nstop = 1.0\n\n[[model]]\nname = \"decay\"\nsource = \"crash.fmu\"\nsolver = \"rk4\"\nstep = 0.01\n{isolate}"
        )
    };
    std::fs::write(dir.join("isolated.toml"), system("fmu.isolate = true\n")).unwrap();
    let done = common::tandem(&dir, &["cosim", "isolated.toml", "--out", "isolated.csv"]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("FMU \"crash\": its process died during fmi2GetDerivatives: killed by signal 11 (SIGSEGV"),
        "{stderr}"
    );
    // --isolate does it for every FMU of a file that does not say so.
    std::fs::write(dir.join("plain.toml"), system("")).unwrap();
    let done = common::tandem(&dir, &["cosim", "plain.toml", "--isolate", "--out", "plain.csv"]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(
        stderr.contains("its process died during fmi2GetDerivatives"),
        "{stderr}"
    );
    // On a diagram, the key is a mistake named at its place.
    let diagram = common::root().join("models/examples/cruise_control.json");
    let text = format!(
        "[master]\nstep = 0.01\nstop = 1.0\n\n[[model]]\nname = \"car\"\nsource = \"{}\"\nfmu.isolate = true\n",
        diagram.display()
    );
    std::fs::write(dir.join("diagram.toml"), text).unwrap();
    let done = common::tandem(&dir, &["cosim", "diagram.toml"]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(
        stderr.contains("diagram.toml:8:") && stderr.contains("fmu.isolate applies to FMU sources (.fmu) only"),
        "{stderr}"
    );
}

#[test]
fn a_real_time_run_of_an_isolated_fmu_survives_its_crash() {
    let dir = common::scratch("run_isolate");
    fmus::build("crash", &dir);
    let config = |isolate: bool| {
        format!(
            "model = \"crash.fmu\"\nframe = \"10ms\"\nduration = \"2s\"\npolicy = \"explicit\"\nfmu.isolate = {isolate}\n[fast]\nmethod = \"rk4\"\n[record]\nfile = \"crash.csv\"\n"
        )
    };
    std::fs::write(dir.join("here.toml"), config(false)).unwrap();
    let done = common::tandem(&dir, &["run", "here.toml", "--virtual-clock", "--results", "."]);
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&done.status), Some(11));
    std::fs::write(dir.join("there.toml"), config(true)).unwrap();
    let done = common::tandem(&dir, &["run", "there.toml", "--virtual-clock", "--results", "."]);
    let stderr = String::from_utf8_lossy(&done.stderr);
    // The run fails by its policy, with its summary and the rows before the
    // crash at t = 0.5 s (the frames past it hold the last good state).
    assert_eq!(done.status.code(), Some(1), "{stderr}");
    // Named as tandem sim names it: the FMU, the call, the signal.
    assert!(
        stderr.contains("the run failed") && stderr.contains("FMU \"crash\"") && stderr.contains("SIGSEGV"),
        "{stderr}"
    );
    assert!(!stderr.contains("too stiff"), "{stderr}");
    let table = Table::read(&dir.join("crash.csv"));
    let before: Vec<&Vec<f64>> = table.rows.iter().filter(|r| r[0] < 0.5 - 1e-9).collect();
    assert_eq!(before.len(), 50);
    for row in before {
        assert!((row[1] - (-row[0]).exp()).abs() < 1e-7, "{row:?}");
    }
}

/// The FMI type system from the command line, on the FMU of every FMI 3 type
/// (`fmi/tests/fmus/types3`): a local state recorded against its closed
/// form, a start value set on it, the FMU's own end at t = 3 a normal end
/// by either interface, inputs of every integer type fed from a CSV file
/// and echoed, a stop time off the step grid reached by a shorter step.
#[test]
fn sim_records_sets_and_feeds_any_variable_and_ends_where_the_fmu_asks() {
    let dir = common::scratch("fmi_types");
    let fmu = fmus::build("types3", &dir);
    let fmu = fmu.to_str().unwrap();
    for interface in ["me", "cs"] {
        let out = common::tandem_ok(
            &dir,
            &[
                "sim",
                fmu,
                "--interface",
                interface,
                "--signals",
                "position,counter",
                "--set",
                "x=2",
                "--step",
                "0.01",
                "--out",
                "types.csv",
            ],
        );
        assert!(
            out.contains("the FMU ended the simulation at t = 3 s"),
            "{interface}: {out}"
        );
        let table = Table::read(&dir.join("types.csv"));
        assert_eq!(table.header, ["time", "x", "counter"]);
        let last = table.rows.last().unwrap();
        assert!((last[0] - 3.0).abs() < 0.0100001, "{interface}: ended at {}", last[0]);
        for row in &table.rows {
            let exact = 2.0 * (-row[0]).exp();
            assert!(
                (row[1] - exact).abs() < 1e-9,
                "{interface}: x({}) = {} against {exact}",
                row[0],
                row[1]
            );
        }
    }
    // Inputs from a file: each integer output echoes its input, at the
    // extremes of its type; the stop time 0.25 is off the 0.1 s grid.
    std::fs::write(
        dir.join("in.csv"),
        "time,i8_in,u16_in,i64_in,b_in\n0,-128,65535,-9223372036854775808,true\n0.15,127,0,5,false\n",
    )
    .unwrap();
    common::tandem_ok(
        &dir,
        &[
            "sim",
            fmu,
            "--interface",
            "cs",
            "--input",
            "in.csv",
            "--stop",
            "0.25",
            "--step",
            "0.1",
            "--signals",
            "i8_out,u16_out,i64_out,b_out",
            "--out",
            "echo.csv",
        ],
    );
    let table = Table::read(&dir.join("echo.csv"));
    assert_eq!(
        table.rows,
        [
            vec![0.0, -128.0, 65535.0, -9223372036854775808.0, 1.0],
            vec![0.1, -128.0, 65535.0, -9223372036854775808.0, 1.0],
            vec![0.2, 127.0, 0.0, 5.0, 0.0],
            vec![0.25, 127.0, 0.0, 5.0, 0.0],
        ]
    );
    // What a run does not take is named by check, one line each.
    let out = common::tandem_ok(&dir, &["check", fmu]);
    assert!(
        out.contains("FMI 3.0 FMU \"types3\" (Model Exchange, Co-Simulation)"),
        "{out}"
    );
    assert!(out.contains("outputs: counter, even, mode, f32_out, i8_out"), "{out}");
    assert!(
        out.contains("not taken: \"label_out\" (<String>, line ")
            && out.contains("): a String is not recorded or connected (runs carry numbers)"),
        "{out}"
    );
    // Refusals, each with its reason.
    for (args, expected) in [
        (
            vec!["--set", "der(x)=1"],
            "variable \"der(x)\" cannot be set: its causality is \"local\" and its initial value is calculated by the FMU",
        ),
        (vec!["--set", "k"], "--set k: write NAME=VALUE"),
        (
            vec!["--signals", "label"],
            "variable \"label\" (modelDescription.xml line 52) is a String, which cannot be recorded or connected",
        ),
        (vec!["--input", "missing.csv"], "cannot read missing.csv"),
    ] {
        let mut all = vec!["sim", fmu, "--out", "refused.csv"];
        all.extend(args);
        let out = common::tandem(&dir, &all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(expected), "{all:?}: {stderr}");
    }
}

/// `x` and `n` of the `counter` FMU at `t` in closed form: `n` counts the
/// time events every 0.1 s, `x' = n - x` from 0.
fn counter_closed_form(t: f64) -> (f64, f64) {
    let (mut x, mut n) = (0.0, 0.0);
    loop {
        let (start, next) = (n * 0.1, (n + 1.0) * 0.1);
        if t < next {
            return (n + (x - n) * (-(t - start)).exp(), n);
        }
        x = n + (x - n) * (-(next - start)).exp();
        n += 1.0;
    }
}

#[test]
fn an_fmus_internal_counter_counts_each_event_once_in_a_real_time_run_in_process_isolated_or_in_a_system() {
    let dir = common::scratch("fmi_inner_state");
    fmus::build("counter", &dir);
    // The counter beside a lag in an SSP plant: the composite sets back
    // the part that keeps an inner state.
    let counter = component("counter", "counter", "Float64", &[], "");
    let lag = component("lag", "first_order", "Float64", &[], "");
    let ssd = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <ssd:SystemStructureDescription NS version=\"2.0\" name=\"counted\">\n\
         <ssd:System name=\"plant\"><ssd:Elements>\n{counter}{lag}</ssd:Elements></ssd:System>\n\
         </ssd:SystemStructureDescription>\n"
    );
    ssp_package_of(&["counter", "first_order"], &dir, "counter.ssp", &ssd, &[]);
    // The implicit side, 0.9 ms a step, delayed before the time events at
    // 0.1, 0.3 and 0.5 s: corrections re-integrate across them.
    let config = |model: &str, isolate: bool| {
        format!(
            r#"model = "{model}"
frame = "1ms"
duration = "0.7s"
policy = "correct"
fmu.isolate = {isolate}
[fast]
method = "rk4"
[implicit]
method = "bdf"
rtol = 1e-10
atol = 1e-12
[record]
file = "counter.csv"
[virtual_clock]
fast_cost = "10us"
implicit_cost = "900us"
[[virtual_clock.implicit_delays]]
at = "97ms"
delay = "3ms"
[[virtual_clock.implicit_delays]]
at = "297ms"
delay = "4ms"
[[virtual_clock.implicit_delays]]
at = "498ms"
delay = "2ms"
"#
        )
    };
    let mut tables = Vec::new();
    for (model, isolate) in [("counter.fmu", false), ("counter.fmu", true), ("counter.ssp", false)] {
        std::fs::write(dir.join("counter.toml"), config(model, isolate)).unwrap();
        let out = common::tandem_ok(
            &dir,
            &[
                "run",
                "counter.toml",
                "--virtual-clock",
                "--results",
                ".",
                "--stats-json",
                "stats.json",
            ],
        );
        // Each correction that re-integrated across an event set the FMU
        // back to its checkpoint first.
        assert!(
            out.contains(
                "model's inner state (an FMU's internal variables): 8 corrections set it back to their start, 0 not \
                 taken"
            ),
            "{out}"
        );
        let stats: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).unwrap()).unwrap();
        assert_eq!(stats["inner_state"]["restores"], 8, "{stats}");
        assert_eq!(stats["events"]["disagreements"], 0, "{stats}");
        let table = Table::read(&dir.join("counter.csv"));
        let part = if model.ends_with(".ssp") { "counter." } else { "" };
        assert_eq!(
            table.header[..4],
            [
                "time".to_string(),
                format!("{part}x"),
                format!("{part}n"),
                format!("{part}allocations")
            ]
        );
        for row in &table.rows {
            let (x, n) = counter_closed_form(row[0]);
            assert!(
                (row[1] - x).abs() < 1e-8,
                "{model}, isolated {isolate}: x({}) = {}, exact {x}",
                row[0],
                row[1]
            );
            // At an event's instant the frame's outputs show n before it.
            let at_event = ((row[0] * 10.0).round() / 10.0 - row[0]).abs() < 1e-9 && row[0] > 0.0;
            if !at_event {
                assert_eq!(row[2], n, "{model}, isolated {isolate}: n({})", row[0]);
            }
            // The fast side's FMU allocated its checkpoints when it was
            // instantiated, and nothing after.
            assert_eq!(row[3], 2.0 + tandem_fmi::INNER_CHECKPOINTS as f64);
        }
        tables.push(table.rows);
    }
    assert_eq!(tables[0], tables[1], "in process and isolated alike");
}

/// The XML namespaces of SSP 1.0, which SSP 2.0 keeps.
const SSP_NAMESPACES: &str = r#"xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructureParameterMapping""#;

/// Writes the SSP package `name` in `dir`: `ssd` as its
/// SystemStructure.ssd (`NS` replaced by the namespaces), the test FMUs
/// `oscillator` and `first_order` as `resources/<name>.fmu`, and `files`.
fn ssp_package(dir: &Path, name: &str, ssd: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    ssp_package_of(&["oscillator", "first_order"], dir, name, ssd, files)
}

/// [`ssp_package`] holding the test FMUs `fmus`.
fn ssp_package_of(fmus: &[&str], dir: &Path, name: &str, ssd: &str, files: &[(&str, &str)]) -> std::path::PathBuf {
    let mut entries: Vec<(String, Vec<u8>)> = vec![(
        "SystemStructure.ssd".to_string(),
        ssd.replace("NS", SSP_NAMESPACES).into_bytes(),
    )];
    for &fmu in fmus {
        let path = dir.join(format!("{fmu}.fmu"));
        if !path.exists() {
            fmus::build(fmu, dir);
        }
        entries.push((format!("resources/{fmu}.fmu"), std::fs::read(&path).unwrap()));
    }
    for (file, text) in files {
        entries.push((file.to_string(), text.replace("NS", SSP_NAMESPACES).into_bytes()));
    }
    let borrowed: Vec<(&str, &[u8])> = entries.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
    let path = dir.join(name);
    fmus::zip_entries(&path, &borrowed);
    path
}

/// An SSP component `name` of the test FMU `fmu` with `connectors`
/// (name, kind, unit) of type `ty` and `bindings` (XML) inside.
fn component(name: &str, fmu: &str, ty: &str, connectors: &[(&str, &str, &str)], bindings: &str) -> String {
    let connectors: String = connectors
        .iter()
        .map(|(c, kind, unit)| {
            let unit = if unit.is_empty() {
                String::new()
            } else {
                format!(" unit=\"{unit}\"")
            };
            format!("<ssd:Connector name=\"{c}\" kind=\"{kind}\"><ssc:{ty}{unit}/></ssd:Connector>\n")
        })
        .collect();
    format!(
        "<ssd:Component name=\"{name}\" type=\"application/x-fmu-sharedlibrary\" source=\"resources/{fmu}.fmu\">\n\
         <ssd:Connectors>\n{connectors}</ssd:Connectors>\n{bindings}</ssd:Component>\n"
    )
}

/// A parameter binding with its values inline (SSP type `ty`).
fn inline_values(ty: &str, values: &[(&str, f64)]) -> String {
    format!(
        "<ssd:ParameterBindings><ssd:ParameterBinding><ssd:ParameterValues>\n{}</ssd:ParameterValues></ssd:ParameterBinding></ssd:ParameterBindings>\n",
        parameter_set(ty, values)
    )
}

/// An `ssv:ParameterSet` of `values` (SSP type `ty`).
fn parameter_set(ty: &str, values: &[(&str, f64)]) -> String {
    let version = if ty == "Real" { "1.0" } else { "2.0" };
    let parameters: String = values
        .iter()
        .map(|(n, v)| format!("<ssv:Parameter name=\"{n}\"><ssv:{ty} value=\"{v:?}\"/></ssv:Parameter>\n"))
        .collect();
    format!("<ssv:ParameterSet NS version=\"{version}\" name=\"set\"><ssv:Parameters>\n{parameters}</ssv:Parameters></ssv:ParameterSet>\n")
}

/// The damped oscillator `x'' = -k x - c x'` (unit mass) from `x0` at rest.
fn free_oscillation(k: f64, c: f64, x0: f64, t: f64) -> f64 {
    let (w0, zeta) = (k.sqrt(), c / (2.0 * k.sqrt()));
    let wd = w0 * (1.0 - zeta * zeta).sqrt();
    (-zeta * w0 * t).exp() * (x0 * (wd * t).cos() + zeta * w0 * x0 / wd * (wd * t).sin())
}

/// SSP import: three FMUs (one oscillator freely swinging, one
/// held at a level, two first-order lags fed from it) whose parameters
/// come from a parameter set file with a parameter mapping (a scaled
/// entry), from inline sets, and whose connections convert units by the
/// SSD's `Units` (m to cm: a factor; degC to K: an offset; a time constant
/// given in ms to the FMU's s). Every column
/// against its closed form; the default experiment's stop time is kept.
#[test]
fn an_ssp_of_fmus_with_a_parameter_set_and_unit_conversions_equals_the_closed_form() {
    let dir = common::scratch("ssp_units");
    let osc = component(
        "osc",
        "oscillator",
        "Real",
        &[("x", "output", "m"), ("F", "input", "N")],
        "<ssd:ParameterBindings><ssd:ParameterBinding source=\"resources/osc.ssv\">\
         <ssd:ParameterMapping source=\"resources/osc.ssm\"/></ssd:ParameterBinding></ssd:ParameterBindings>\n",
    );
    // The level's speed (0) is declared in degrees Celsius, so that the
    // lag reading it in kelvin sees 273.15.
    let level = component(
        "level",
        "oscillator",
        "Real",
        &[("x", "output", "m"), ("v", "output", "degC")],
        &inline_values("Real", &[("k", 0.0), ("c", 0.0), ("x0", 2.0)]),
    );
    // The lag's time constant is given in milliseconds, its FMU's in seconds.
    let lag = component(
        "lag",
        "first_order",
        "Real",
        &[("u", "input", "cm")],
        &inline_values("Real", &[("tau", 250.0)]).replace("value=\"250.0\"", "value=\"250.0\" unit=\"ms\""),
    );
    let lag_k = component(
        "lag_k",
        "first_order",
        "Real",
        &[("u", "input", "K")],
        &inline_values("Real", &[("tau", 0.5)]),
    );
    let ssd = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <ssd:SystemStructureDescription NS version=\"1.0\" name=\"units\">\n\
         <ssd:System name=\"plant\"><ssd:Elements>\n{osc}{level}{lag}{lag_k}</ssd:Elements>\n\
         <ssd:Connections>\n\
         <ssd:Connection startElement=\"level\" startConnector=\"x\" endElement=\"lag\" endConnector=\"u\"/>\n\
         <ssd:Connection startElement=\"level\" startConnector=\"v\" endElement=\"lag_k\" endConnector=\"u\"/>\n\
         </ssd:Connections></ssd:System>\n\
         <ssd:Units>\n\
         <ssc:Unit name=\"m\"><ssc:BaseUnit m=\"1\"/></ssc:Unit>\n\
         <ssc:Unit name=\"cm\"><ssc:BaseUnit m=\"1\" factor=\"0.01\"/></ssc:Unit>\n\
         <ssc:Unit name=\"N\"><ssc:BaseUnit kg=\"1\" m=\"1\" s=\"-2\"/></ssc:Unit>\n\
         <ssc:Unit name=\"K\"><ssc:BaseUnit K=\"1\"/></ssc:Unit>\n\
         <ssc:Unit name=\"degC\"><ssc:BaseUnit K=\"1\" offset=\"273.15\"/></ssc:Unit>\n\
         <ssc:Unit name=\"s\"><ssc:BaseUnit s=\"1\"/></ssc:Unit>\n\
         <ssc:Unit name=\"ms\"><ssc:BaseUnit s=\"1\" factor=\"0.001\"/></ssc:Unit>\n\
         </ssd:Units>\n\
         <ssd:DefaultExperiment startTime=\"0\" stopTime=\"2\"/>\n\
         </ssd:SystemStructureDescription>\n"
    );
    let ssv = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}",
        parameter_set(
            "Real",
            &[("stiffness", 25.0), ("damping", 0.6), ("initial_position", 500.0)]
        )
    );
    let ssm = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
               <ssm:ParameterMapping NS version=\"1.0\">\n\
               <ssm:MappingEntry source=\"stiffness\" target=\"k\"/>\n\
               <ssm:MappingEntry source=\"damping\" target=\"c\"/>\n\
               <ssm:MappingEntry source=\"initial_position\" target=\"x0\"><ssc:LinearTransformation factor=\"0.001\"/></ssm:MappingEntry>\n\
               </ssm:ParameterMapping>\n";
    let ssp = ssp_package(
        &dir,
        "units.ssp",
        &ssd,
        &[("resources/osc.ssv", &ssv), ("resources/osc.ssm", ssm)],
    );
    let out = common::tandem_ok(&dir, &["cosim", ssp.to_str().unwrap(), "--out", "units.csv"]);
    assert!(out.contains("500 macro steps of 0.004 s to t = 2 s"), "{out}");
    let table = Table::read(&dir.join("units.csv"));
    assert_eq!(
        table.header,
        ["time", "osc.x", "osc.v", "level.x", "level.v", "lag.x", "lag_k.x"]
    );
    assert_eq!(table.rows.len(), 501);
    for row in &table.rows {
        let t = row[0];
        let lag = 200.0 * (1.0 - (-t / 0.25).exp());
        let lag_k = 273.15 * (1.0 - (-t / 0.5).exp());
        assert!(
            (row[1] - free_oscillation(25.0, 0.6, 0.5, t)).abs() < 1e-8,
            "osc.x({t}) = {}",
            row[1]
        );
        assert_eq!((row[3], row[4]), (2.0, 0.0), "level at {t}");
        assert!((row[5] - lag).abs() < 1e-8, "lag.x({t}) = {} against {lag}", row[5]);
        assert!(
            (row[6] - lag_k).abs() < 1e-8,
            "lag_k.x({t}) = {} against {lag_k}",
            row[6]
        );
    }
    // check names the components, the conversions and the FMUs' leftovers.
    let out = common::tandem_ok(&dir, &["check", ssp.to_str().unwrap()]);
    for line in [
        "SSP package, 500 macro steps of 0.004 s to t = 2 s",
        "component osc: resources/oscillator.fmu, 3 parameter values",
        "connection level.x → lag.u (× 100 + 0)",
        "connection level.v → lag_k.u (× 1 + 273.15)",
    ] {
        assert!(out.contains(line), "{line}: {out}");
    }
}

/// SSP 2.0: a connection's `LinearTransformation` (factor 3,
/// offset 0.5) between a level and a lag, Float64 connectors and
/// parameters, against the closed form.
#[test]
fn an_ssp_2_connection_with_a_linear_transformation_equals_the_closed_form() {
    let dir = common::scratch("ssp_linear");
    let level = component(
        "level",
        "oscillator",
        "Float64",
        &[("x", "output", "")],
        &inline_values("Float64", &[("k", 0.0), ("c", 0.0), ("x0", 1.5)]),
    );
    let lag = component(
        "lag",
        "first_order",
        "Float64",
        &[("u", "input", "")],
        &inline_values("Float64", &[("tau", 0.2)]),
    );
    let ssd = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <ssd:SystemStructureDescription NS version=\"2.0\" name=\"linear\">\n\
         <ssd:System name=\"plant\"><ssd:Elements>\n{level}{lag}</ssd:Elements>\n\
         <ssd:Connections>\n\
         <ssd:Connection startElement=\"level\" startConnector=\"x\" endElement=\"lag\" endConnector=\"u\">\
         <ssc:LinearTransformation factor=\"3\" offset=\"0.5\"/></ssd:Connection>\n\
         </ssd:Connections></ssd:System>\n\
         <ssd:DefaultExperiment startTime=\"0\" stopTime=\"1.5\"/>\n\
         </ssd:SystemStructureDescription>\n"
    );
    let ssp = ssp_package(&dir, "linear.ssp", &ssd, &[]);
    common::tandem_ok(&dir, &["cosim", ssp.to_str().unwrap(), "--out", "linear.csv"]);
    let table = Table::read(&dir.join("linear.csv"));
    assert_eq!(table.header, ["time", "level.x", "level.v", "lag.x"]);
    assert!((table.rows.last().unwrap()[0] - 1.5).abs() < 1e-12);
    for row in &table.rows {
        let exact = 5.0 * (1.0 - (-row[0] / 0.2).exp());
        assert!(
            (row[3] - exact).abs() < 1e-8,
            "lag.x({}) = {} against {exact}",
            row[0],
            row[3]
        );
    }
}

/// SSP against FMPy: an SSP 1.0 package of two FMI 2
/// Co-Simulation oscillators coupled both ways (each one's speed the
/// other's force, unit conversion suppressed) with a system-level
/// parameter set, run by `tandem cosim` and by FMPy's `simulate_ssp`
/// (Jacobi, inputs held over each step, as Tandem steps Co-Simulation
/// FMUs), sample by sample. FMPy
/// labels each row with the time its step started: its row i is Tandem's
/// row i + 1. Skipped when FMPy is not installed.
#[test]
fn an_ssp_1_package_of_fmi_2_fmus_equals_fmpys_simulate_ssp() {
    let dir = common::scratch("ssp_fmpy");
    let osc = |name: &str| {
        component(
            name,
            "oscillator",
            "Real",
            &[("x", "output", ""), ("v", "output", ""), ("F", "input", "")],
            "",
        )
    };
    let ssd = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <ssd:SystemStructureDescription NS version=\"1.0\" name=\"coupled\">\n\
         <ssd:System name=\"plant\">\n\
         <ssd:ParameterBindings><ssd:ParameterBinding source=\"resources/params.ssv\"/></ssd:ParameterBindings>\n\
         <ssd:Elements>\n{}{}</ssd:Elements>\n\
         <ssd:Connections>\n\
         <ssd:Connection startElement=\"osc1\" startConnector=\"v\" endElement=\"osc2\" endConnector=\"F\" \
         suppressUnitConversion=\"true\"/>\n\
         <ssd:Connection startElement=\"osc2\" startConnector=\"v\" endElement=\"osc1\" endConnector=\"F\" \
         suppressUnitConversion=\"true\"/>\n\
         </ssd:Connections></ssd:System>\n\
         <ssd:DefaultExperiment startTime=\"0\" stopTime=\"1\"/>\n\
         </ssd:SystemStructureDescription>\n",
        osc("osc1"),
        osc("osc2")
    );
    let ssv = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}",
        parameter_set(
            "Real",
            &[("osc1.k", 25.0), ("osc2.m", 2.0), ("osc2.x0", 0.0), ("osc2.c", 1.0)]
        )
    );
    let ssp = ssp_package(&dir, "coupled.ssp", &ssd, &[("resources/params.ssv", &ssv)]);
    let script = "import sys\n\
                  from fmpy.ssp.simulation import simulate_ssp\n\
                  from fmpy.ssp.ssd import read_ssv\n\
                  ps = read_ssv(sys.argv[1], resource='resources/params.ssv')\n\
                  r = simulate_ssp(sys.argv[1], stop_time=1.0, step_size=0.002, parameter_set=ps)\n\
                  print(','.join(r.dtype.names))\n\
                  for row in r: print(','.join(repr(float(v)) for v in row))";
    let out = std::process::Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(&ssp)
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("No module named 'fmpy'") {
        eprintln!("skipped: FMPy is not installed (pip install fmpy)");
        return;
    }
    assert!(out.status.success(), "FMPy: {stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let fmpy: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|v| v.parse().unwrap()).collect())
        .collect();
    common::tandem_ok(&dir, &["cosim", ssp.to_str().unwrap(), "--out", "coupled.csv"]);
    let table = Table::read(&dir.join("coupled.csv"));
    assert_eq!(table.rows.len(), 501);
    assert!(fmpy.len() >= 500, "FMPy gave {} rows", fmpy.len());
    let mut compared = 0;
    for (i, theirs) in fmpy.iter().enumerate().take(500) {
        let ours = &table.rows[i + 1];
        assert!(
            (theirs[0] - i as f64 * 0.002).abs() < 1e-9,
            "FMPy's row {i} is labelled {}",
            theirs[0]
        );
        for (column, name) in table.header.iter().enumerate().skip(1) {
            let at = header
                .iter()
                .position(|h| h == name)
                .unwrap_or_else(|| panic!("FMPy has no {name}: {header:?}"));
            assert!(
                (ours[column] - theirs[at]).abs() <= 1e-12 * theirs[at].abs().max(1.0),
                "{name} at t = {}: Tandem {}, FMPy {}",
                ours[0],
                ours[column],
                theirs[at]
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 500 * 4);
    // The coupling carries something: osc2, at rest at first, moves.
    let moved = table.column("osc2.x").iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(moved > 1e-3, "osc2 stayed within {moved}");
}

/// A system file's FMU records variables beyond its outputs (`signals`:
/// its local derivative), which can also be connected; a signal it does
/// not have, or one given to a diagram, is refused at its place.
#[test]
fn a_system_files_fmu_records_the_signals_it_names() {
    let dir = common::scratch("cosim_signals");
    fmus::build("first_order", &dir);
    let system = |signals: &str, source: &str| {
        let parameters = if source.ends_with(".fmu") { "tau = 0.5" } else { "" };
        format!(
            "[master]\nstep = 0.01\nstop = 1.0\n[[model]]\nname = \"lag\"\nsource = \"{source}\"\nsolver = \"rk4\"\n\
             step = 0.001\nparameters = {{ {parameters} }}\nsignals = [{signals}]\n"
        )
    };
    std::fs::write(dir.join("lag.toml"), system("\"der(x)\"", "first_order.fmu")).unwrap();
    common::tandem_ok(&dir, &["cosim", "lag.toml", "--out", "lag.csv"]);
    let table = Table::read(&dir.join("lag.csv"));
    assert_eq!(table.header, ["time", "lag.x", "lag.der(x)"]);
    assert_eq!(table.rows.len(), 101);
    for row in &table.rows {
        let x = 1.0 - (-row[0] / 0.5).exp();
        assert!((row[1] - x).abs() < 1e-9, "x({}) = {} against {x}", row[0], row[1]);
        assert!(
            (row[2] - (1.0 - x) / 0.5).abs() < 1e-8,
            "der(x)({}) = {}",
            row[0],
            row[2]
        );
    }
    std::fs::write(dir.join("gain.json"), GAIN_DIAGRAM).unwrap();
    for (signals, source, wanted) in [
        (
            "\"x\", \"dx\"",
            "first_order.fmu",
            "lag.toml:10:17: model[0].signals[1]: FMU \"first_order\": no numeric variable is called or matches \
             \"dx\"",
        ),
        (
            "\"y\"",
            "gain.json",
            "lag.toml:10:12: model[0].signals[0]: signals choose an FMU source's variables only; a block diagram's \
             outputs are its Output blocks",
        ),
    ] {
        std::fs::write(dir.join("lag.toml"), system(signals, source)).unwrap();
        let out = common::tandem(&dir, &["cosim", "lag.toml", "--out", "lag.csv"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(wanted), "{wanted}\n{stderr}");
    }
}

/// A run file sets an FMU plant's start values (`fmu.parameters`) and
/// records any of its variables (`record.signals`: a local derivative
/// beside the output), against the closed form; a start value or signal
/// the FMU does not have is refused at its key.
#[test]
fn a_run_file_sets_an_fmu_plants_start_values_and_records_any_variable() {
    let dir = common::scratch("fmi_run_setup");
    fmus::build("first_order", &dir);
    let config = |parameters: &str, signals: &str| {
        format!(
            "model = \"first_order.fmu\"\nframe = \"1ms\"\nduration = \"1s\"\npolicy = \"explicit\"\n\
             [fast]\nmethod = \"rk4\"\n[fmu]\nparameters = {{ {parameters} }}\n\
             [record]\nfile = \"lag.csv\"\nsignals = [{signals}]\n"
        )
    };
    std::fs::write(dir.join("lag.toml"), config("tau = 0.25, x0 = 2", "\"der(x)\", \"x\"")).unwrap();
    common::tandem_ok(&dir, &["run", "lag.toml", "--virtual-clock", "--results", "."]);
    let table = Table::read(&dir.join("lag.csv"));
    assert_eq!(table.header, ["time", "der(x)", "x"]);
    assert_eq!(table.rows.len(), 1000);
    for row in &table.rows {
        let x = 1.0 + (-row[0] / 0.25).exp();
        assert!((row[2] - x).abs() < 1e-9, "x({}) = {} against {x}", row[0], row[2]);
        assert!(
            (row[1] - (1.0 - x) / 0.25).abs() < 1e-8,
            "der(x)({}) = {}",
            row[0],
            row[1]
        );
    }
    for (parameters, signals, wanted) in [
        (
            "tau_ = 0.25",
            "\"x\"",
            "lag.toml:8:23: fmu.parameters.tau_: first_order.fmu: FMU \"first_order\" has no variable \"tau_\"",
        ),
        (
            "tau = 0.25",
            "\"x\", \"y\"",
            "lag.toml:11:17: record.signals[1]: first_order.fmu: FMU \"first_order\": no numeric variable is called or \
             matches \"y\"",
        ),
    ] {
        std::fs::write(dir.join("lag.toml"), config(parameters, signals)).unwrap();
        let out = common::tandem(&dir, &["run", "lag.toml", "--virtual-clock"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && stderr.contains(wanted), "{wanted}\n{stderr}");
    }
}

/// An SSP package of Model Exchange FMUs as the plant of a real-time run:
/// a bouncing ball (its events located inside frames on both threads), a
/// lag driven by the run (its unconnected input), a second lag driven by
/// the first through a `LinearTransformation` (3 x + 0.5), its time
/// constant given in ms. Every column against its closed form, under
/// every policy; a Co-Simulation FMU and one that allows a single
/// instance refused.
#[test]
fn an_ssp_of_model_exchange_fmus_is_the_plant_of_a_real_time_run() {
    let dir = common::scratch("ssp_plant");
    let ball = component("ball", "bouncing_ball", "Float64", &[("h", "output", "")], "");
    let lag1 = component(
        "lag1",
        "first_order",
        "Float64",
        &[("x", "output", "")],
        &inline_values("Float64", &[("tau", 0.3)]),
    );
    let lag2 = component(
        "lag2",
        "first_order",
        "Float64",
        &[("u", "input", "")],
        &inline_values("Float64", &[("tau", 200.0)]).replace("value=\"200.0\"", "value=\"200.0\" unit=\"ms\""),
    );
    let ssd = |elements: &str, connections: &str| {
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
             <ssd:SystemStructureDescription NS version=\"2.0\" name=\"plant\">\n\
             <ssd:System name=\"plant\"><ssd:Elements>\n{elements}</ssd:Elements>\n\
             <ssd:Connections>\n{connections}</ssd:Connections></ssd:System>\n\
             <ssd:Units>\n\
             <ssc:Unit name=\"s\"><ssc:BaseUnit s=\"1\"/></ssc:Unit>\n\
             <ssc:Unit name=\"ms\"><ssc:BaseUnit s=\"1\" factor=\"0.001\"/></ssc:Unit>\n\
             </ssd:Units>\n\
             <ssd:DefaultExperiment startTime=\"0\" stopTime=\"3\"/>\n\
             </ssd:SystemStructureDescription>\n"
        )
    };
    let lag_to_lag = "<ssd:Connection startElement=\"lag1\" startConnector=\"x\" endElement=\"lag2\" \
                      endConnector=\"u\"><ssc:LinearTransformation factor=\"3\" offset=\"0.5\"/></ssd:Connection>\n";
    let fmus = ["bouncing_ball", "first_order", "oscillator"];
    ssp_package_of(
        &fmus,
        &dir,
        "plant.ssp",
        &ssd(&format!("{ball}{lag1}{lag2}"), lag_to_lag),
        &[],
    );
    let lag2_exact = |t: f64| {
        let (tau1, tau2) = (0.3, 0.2);
        3.5 * (1.0 - (-t / tau2).exp()) - 3.0 * tau1 / (tau1 - tau2) * ((-t / tau1).exp() - (-t / tau2).exp())
    };
    for policy in ["explicit", "correct", "select"] {
        let config = run_config(Path::new("plant.ssp"), policy).replace("ball.csv", "plant.csv");
        std::fs::write(dir.join("plant.toml"), config).unwrap();
        let out = common::tandem_ok(&dir, &["run", "plant.toml", "--virtual-clock", "--results", "."]);
        assert!(out.contains("2400 frames"), "{out}");
        let table = Table::read(&dir.join("plant.csv"));
        assert_eq!(
            table.header,
            ["time", "ball.h", "ball.v", "lag1.x", "lag2.x"],
            "{policy}"
        );
        assert_eq!(table.rows.len(), 2400, "{policy}");
        for row in table.rows.iter().filter(|r| r[0] < 2.3) {
            let t = row[0];
            let lag1 = 1.0 - (-t / 0.3).exp();
            for (column, value, exact) in [(1, row[1], height(t)), (3, row[3], lag1), (4, row[4], lag2_exact(t))] {
                assert!(
                    (value - exact).abs() < 1e-9,
                    "{policy}: {}({t}) = {value}, exact {exact}",
                    table.header[column]
                );
            }
        }
        if policy != "explicit" {
            assert!(out.contains("frames by source: fast 1, implicit 2399"), "{out}");
            assert!(out.contains("0 implicit results not taken"), "{out}");
        }
    }
    // A Co-Simulation FMU cannot be integrated by the run's integrators.
    let osc = component("osc", "oscillator", "Float64", &[("x", "output", "")], "");
    ssp_package_of(&fmus, &dir, "stepped.ssp", &ssd(&format!("{lag1}{osc}"), ""), &[]);
    std::fs::write(
        dir.join("stepped.toml"),
        run_config(Path::new("stepped.ssp"), "correct"),
    )
    .unwrap();
    let out = common::tandem(&dir, &["run", "stepped.toml", "--virtual-clock"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains(
                "stepped.toml:1:9: model: sub-model \"osc\" steps itself (an FMU with Co-Simulation only), but a \
                 real-time plant integrates the equations of each of its parts on both of the tandem's threads; \
                 export that FMU with Model Exchange, or co-simulate the system with `tandem cosim`"
            ),
        "{stderr}"
    );
    // Nor an FMU that allows one instance: each thread needs its own.
    let description = fmus::description("bouncing_ball").replace(
        "<ModelExchange ",
        "<ModelExchange canBeInstantiatedOnlyOncePerProcess=\"true\" ",
    );
    let variant = fmus::Variant {
        description: Some(&description),
        ..Default::default()
    };
    fmus::build_variant("bouncing_ball", &dir.join("once.fmu"), variant);
    let once = component("ball", "once", "Float64", &[("h", "output", "")], "");
    ssp_package_of(&["once"], &dir, "once.ssp", &ssd(&once, ""), &[]);
    std::fs::write(dir.join("once.toml"), run_config(Path::new("once.ssp"), "correct")).unwrap();
    let out = common::tandem(&dir, &["run", "once.toml", "--virtual-clock"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.starts_with("error: once.toml:1:9: model: once.ssp: ")
            && stderr.contains(
                "sub-model \"ball\": its FMU can be instantiated only once per process \
                 (canBeInstantiatedOnlyOncePerProcess), and a real-time plant needs one instance per integrator \
                 thread; co-simulate the system (tandem cosim), which uses one instance"
            ),
        "{stderr}"
    );
}

/// A system file as the plant of a real-time run: the two-mass oscillator
/// split in two diagrams (mass 2's coupling force depends directly on mass
/// 1's position and speed), integrated whole by the run's RK4, against the
/// exact solution at t = 1 (cosim/tests/data/two_mass_oscillator.json,
/// damped case); two gains in a loop refused, with the loop's ports.
#[test]
fn a_system_file_is_the_plant_of_a_real_time_run_and_an_algebraic_loop_is_refused() {
    let dir = common::scratch("system_plant");
    let system = common::root().join("cosim/examples/two_mass.toml");
    let config = format!(
        "model = \"{}\"\nframe = \"1ms\"\nduration = \"1.5s\"\npolicy = \"explicit\"\n[fast]\nmethod = \"rk4\"\n\
         [record]\nfile = \"two_mass.csv\"\n",
        system.display()
    );
    std::fs::write(dir.join("two_mass.toml"), config).unwrap();
    let out = common::tandem_ok(&dir, &["run", "two_mass.toml", "--virtual-clock", "--results", "."]);
    assert!(out.contains("1500 frames"), "{out}");
    let table = Table::read(&dir.join("two_mass.csv"));
    assert_eq!(
        table.header,
        ["time", "mass1.x1", "mass1.v1", "mass2.x2", "mass2.v2", "mass2.F"]
    );
    let at_one = table.rows.iter().find(|r| (r[0] - 1.0).abs() < 1e-9).unwrap();
    // x1, v1, x2, v2 at t = 1.
    let exact = [
        -4.497739712966331,
        -77.590150230019,
        -3.539649916383635,
        27.5554601176383,
    ];
    for (got, want) in at_one[1..5].iter().zip(exact) {
        assert!((got - want).abs() < 1e-5 * want.abs(), "{at_one:?} against {exact:?}");
    }
    // The coupling force is mass 2's, from mass 1's state of the same instant.
    let force = 100.0 * (at_one[1] - at_one[3]) + 0.01 * (at_one[2] - at_one[4]);
    assert!((at_one[5] - force).abs() < 1e-9, "F = {} against {force}", at_one[5]);
    // Two gains driving each other: no order computes them.
    std::fs::write(dir.join("gain.json"), GAIN_DIAGRAM).unwrap();
    let looped = "[master]\nstep = 0.001\nstop = 1.0\n\
                  [[model]]\nname = \"a\"\nsource = \"gain.json\"\n[[model]]\nname = \"b\"\nsource = \"gain.json\"\n\
                  [[connection]]\nfrom = \"a.y\"\nto = \"b.u\"\n[[connection]]\nfrom = \"b.y\"\nto = \"a.u\"\n";
    std::fs::write(dir.join("looped.toml"), looped).unwrap();
    std::fs::write(
        dir.join("run_looped.toml"),
        "model = \"looped.toml\"\nframe = \"1ms\"\nduration = \"1s\"\n",
    )
    .unwrap();
    let out = common::tandem(&dir, &["run", "run_looped.toml", "--virtual-clock"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && stderr.contains(
                "run_looped.toml:1:9: model: looped.toml:12:6: connection[0]: algebraic loop between sub-models: a.y → \
                 b.u → b.y → a.u → a.y; each output on it depends directly on the input before it, so no order of the \
                 sub-models computes them: a real-time plant computes its parts' outputs once per evaluation, without \
                 iterating: join the sub-models on the loop into one model, or connect an output that does not depend \
                 directly on its inputs"),
        "{stderr}"
    );
}

/// OMSimulator, where `TANDEM_OMSIMULATOR` names its binary (it is not
/// on the package registries CI reaches; the README's "FMI" section says
/// how to build it): an SSP 1.0 package of two FMI 2 Co-Simulation oscillators,
/// the first's parameters from a parameter set file, the second's force
/// input declared in centimetres by its FMU (`UnitDefinitions`), so that
/// the connection from the first's position in metres converts by a
/// factor of 100. OMSimulator reads units from the FMUs and needs its own
/// annotation to know the system's kind (a weakly coupled one, with its
/// step); Tandem takes the package with that annotation as it is. Every
/// column, sample by sample, within OMSimulator's 12 printed digits.
/// (OMSimulator's SSP import leaves out `LinearTransformation`, which the
/// closed-form tests above check.)
#[test]
fn an_ssp_with_a_parameter_set_and_a_unit_conversion_equals_omsimulators_result() {
    let Some(omsimulator) = std::env::var_os("TANDEM_OMSIMULATOR") else {
        println!("skipped: TANDEM_OMSIMULATOR does not name an OMSimulator binary");
        return;
    };
    let dir = common::scratch("ssp_omsimulator");
    let oscillator = fmus::build("oscillator", &dir);
    let in_cm = fmus::description("oscillator")
        .replace(
            "<Unit name=\"N\"><BaseUnit kg=\"1\" m=\"1\" s=\"-2\"/></Unit>",
            "<Unit name=\"N\"><BaseUnit kg=\"1\" m=\"1\" s=\"-2\"/></Unit>\n    \
             <Unit name=\"cm\"><BaseUnit m=\"1\" factor=\"0.01\"/></Unit>",
        )
        .replace("<Real unit=\"N\" start=\"0\"/>", "<Real unit=\"cm\" start=\"0\"/>");
    let variant = fmus::Variant {
        description: Some(&in_cm),
        ..fmus::Variant::default()
    };
    let oscillator_cm = fmus::build_variant("oscillator", &dir.join("oscillator_cm.fmu"), variant);
    let connectors = |force: &str| {
        format!(
            "<ssd:Connectors><ssd:Connector name=\"x\" kind=\"output\"><ssc:Real unit=\"m\"/></ssd:Connector>\
             <ssd:Connector name=\"F\" kind=\"input\"><ssc:Real unit=\"{force}\"/></ssd:Connector></ssd:Connectors>"
        )
    };
    let ssd = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <ssd:SystemStructureDescription NS xmlns:oms=\"https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd\" version=\"1.0\" name=\"coupled\">\n\
         <ssd:System name=\"plant\"><ssd:Elements>\n\
         <ssd:Component name=\"osc1\" type=\"application/x-fmu-sharedlibrary\" source=\"resources/oscillator.fmu\">{}\
         <ssd:ParameterBindings><ssd:ParameterBinding source=\"resources/osc1.ssv\"/></ssd:ParameterBindings></ssd:Component>\n\
         <ssd:Component name=\"osc2\" type=\"application/x-fmu-sharedlibrary\" source=\"resources/oscillator_cm.fmu\">{}</ssd:Component>\n\
         </ssd:Elements>\n\
         <ssd:Connections><ssd:Connection startElement=\"osc1\" startConnector=\"x\" endElement=\"osc2\" endConnector=\"F\"/></ssd:Connections>\n\
         <ssd:Annotations><ssc:Annotation type=\"org.openmodelica\"><oms:Annotations><oms:SimulationInformation>\
         <oms:FixedStepMaster description=\"oms-ma\" stepSize=\"0.004\" absoluteTolerance=\"1e-10\" relativeTolerance=\"1e-10\"/>\
         </oms:SimulationInformation></oms:Annotations></ssc:Annotation></ssd:Annotations>\n\
         </ssd:System>\n\
         <ssd:Units><ssc:Unit name=\"m\"><ssc:BaseUnit m=\"1\"/></ssc:Unit><ssc:Unit name=\"N\"><ssc:BaseUnit kg=\"1\" m=\"1\" s=\"-2\"/></ssc:Unit>\
         <ssc:Unit name=\"cm\"><ssc:BaseUnit m=\"1\" factor=\"0.01\"/></ssc:Unit></ssd:Units>\n\
         <ssd:DefaultExperiment startTime=\"0\" stopTime=\"2\"/>\n\
         </ssd:SystemStructureDescription>\n",
        connectors("N"),
        connectors("cm"),
    );
    let ssv = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}",
        parameter_set("Real", &[("k", 25.0), ("c", 0.6), ("x0", 0.5)])
    );
    let entries: Vec<(String, Vec<u8>)> = vec![
        (
            "SystemStructure.ssd".into(),
            ssd.replace("NS", SSP_NAMESPACES).into_bytes(),
        ),
        (
            "resources/osc1.ssv".into(),
            ssv.replace("NS", SSP_NAMESPACES).into_bytes(),
        ),
        ("resources/oscillator.fmu".into(), std::fs::read(&oscillator).unwrap()),
        (
            "resources/oscillator_cm.fmu".into(),
            std::fs::read(&oscillator_cm).unwrap(),
        ),
    ];
    let borrowed: Vec<(&str, &[u8])> = entries.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
    fmus::zip_entries(&dir.join("coupled.ssp"), &borrowed);
    common::tandem_ok(&dir, &["cosim", "coupled.ssp", "--out", "tandem.csv"]);
    let ours = Table::read(&dir.join("tandem.csv"));
    let done = std::process::Command::new(&omsimulator)
        .args(["coupled.ssp", "--resultFile=omsimulator.csv", "--stopTime=2"])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(done.status.success(), "{}", String::from_utf8_lossy(&done.stdout));
    // OMSimulator writes quoted names with the model and system before
    // them, and each macro step's time twice (before and after its inputs
    // are updated): the last row of each time is compared.
    let text = std::fs::read_to_string(dir.join("omsimulator.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = (lines.next().unwrap().split(','))
        .map(|h| {
            h.trim()
                .trim_matches('"')
                .trim_start_matches("coupled.plant.")
                .to_string()
        })
        .collect();
    let mut theirs: std::collections::BTreeMap<i64, Vec<f64>> = std::collections::BTreeMap::new();
    for line in lines {
        let row: Vec<f64> = line.split(',').map(|v| v.trim().parse().unwrap()).collect();
        theirs.insert((row[0] * 1e6).round() as i64, row);
    }
    assert_eq!(ours.header, ["time", "osc1.x", "osc1.v", "osc2.x", "osc2.v"]);
    assert_eq!((ours.rows.len(), theirs.len()), (501, 501));
    for row in &ours.rows {
        let other = &theirs[&((row[0] * 1e6).round() as i64)];
        for (column, name) in ours.header.iter().enumerate().skip(1) {
            let at = header.iter().position(|h| h == name).unwrap();
            assert!(
                (row[column] - other[at]).abs() <= 1e-10 * other[at].abs().max(1.0),
                "{name} at t = {}: Tandem {}, OMSimulator {}",
                row[0],
                row[column],
                other[at]
            );
        }
    }
    // The conversion carries something: osc2 is pushed by 100 x1.
    let pushed = ours.column("osc2.x").iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(pushed > 2.0, "osc2 stayed within {pushed}");
}

/// Writes a ZIP archive at `path` of `files` (name, content) and symbolic
/// `links` (name, target), the names as given, unchecked.
fn zip_raw(path: &Path, files: &[(&str, &[u8])], links: &[(&str, &str)]) {
    use std::io::Write as _;
    let mut zip = zip::ZipWriter::new(std::fs::File::create(path).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    for (name, bytes) in files {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    for (name, target) in links {
        zip.add_symlink(*name, *target, options).unwrap();
    }
    zip.finish().unwrap();
}

/// A refused SSD: its changes (text, replacement), the start of the
/// refused element, the message.
type Refusal<'a> = (&'a [(&'a str, &'a str)], &'a str, &'a str);

/// `tandem cosim` on `ssp` in `dir` fails; what it printed.
fn refused(dir: &Path, ssp: &str) -> String {
    let out = common::tandem(dir, &["cosim", ssp, "--out", "refused.csv"]);
    assert!(!out.status.success(), "{ssp} ran");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every package or SSD the SSP import does not take is refused, never a
/// panic, with the file inside the package, the refused element's line
/// and column, what is wrong and what to do.
#[test]
#[expect(
    clippy::too_many_lines,
    reason = "a table of refused packages, each a few lines beside the words it must be refused with"
)]
fn every_ssp_refusal_names_the_file_the_place_and_the_fix() {
    let dir = common::scratch("ssp_refusals");
    let level = component(
        "level",
        "oscillator",
        "Real",
        &[("x", "output", "m")],
        &inline_values("Real", &[("k", 0.0), ("c", 0.0), ("x0", 2.0)]),
    );
    let lag = component(
        "lag",
        "first_order",
        "Real",
        &[("u", "input", "m")],
        &inline_values("Real", &[("tau", 0.25)]),
    );
    let good = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <ssd:SystemStructureDescription NS version=\"1.0\" name=\"refused\">\n\
         <ssd:System name=\"plant\"><ssd:Elements>\n{level}{lag}</ssd:Elements>\n\
         <ssd:Connections>\n\
         <ssd:Connection startElement=\"level\" startConnector=\"x\" endElement=\"lag\" endConnector=\"u\"/>\n\
         </ssd:Connections></ssd:System>\n\
         <ssd:DefaultExperiment startTime=\"0\" stopTime=\"1\"/>\n\
         </ssd:SystemStructureDescription>\n"
    );
    ssp_package(&dir, "good.ssp", &good, &[]);
    common::tandem_ok(&dir, &["cosim", "good.ssp", "--out", "good.csv"]);
    let units = "<ssd:Units><ssc:Unit name=\"m\"><ssc:BaseUnit m=\"1\"/></ssc:Unit>\
                 <ssc:Unit name=\"s\"><ssc:BaseUnit s=\"1\"/></ssc:Unit></ssd:Units>\n<ssd:DefaultExperiment";
    // Each: the SSD's changes, the start of the refused element, the message.
    let cases: &[Refusal] = &[
        (
            &[("NS version=\"1.0\"", "NS version=\"3.0\"")],
            "<ssd:SystemStructureDescription",
            "SSP version \"3.0\" is not one this import takes (1.0, 2.0)\n  help: export the package as SSP 1.0 or 2.0",
        ),
        (
            &[("<ssd:Elements>", "<ssd:SignalDictionaries/><ssd:Elements>")],
            "<ssd:SignalDictionaries",
            "signal dictionaries are not taken by this import\n  help: connect the components' connectors directly",
        ),
        (
            &[("</ssd:Elements>", "<ssd:System name=\"sub\"/></ssd:Elements>")],
            "<ssd:System name=\"sub\"",
            "<ssd:System> \"sub\": only FMU components are taken (no nested systems or signal dictionaries)\n  \
             help: flatten the system so that it holds only FMU components",
        ),
        (
            &[("type=\"application/x-fmu-sharedlibrary\"", "type=\"application/x-ssp-definition\"")],
            "<ssd:Component name=\"level\"",
            "component \"level\" is of type \"application/x-ssp-definition\": only FMUs (application/x-fmu-sharedlibrary) \
             are taken\n  help: export the component as an FMU",
        ),
        (
            &[("source=\"resources/oscillator.fmu\"", "source=\"../oscillator.fmu\"")],
            "<ssd:Component name=\"level\"",
            "component \"level\": source \"../oscillator.fmu\" is not a file inside the package\n  \
             help: give the FMU's path inside the package, e.g. resources/model.fmu",
        ),
        (
            &[("source=\"resources/oscillator.fmu\"", "source=\"/tmp/oscillator.fmu\"")],
            "<ssd:Component name=\"level\"",
            "component \"level\": source \"/tmp/oscillator.fmu\" is not a file inside the package",
        ),
        (
            &[("source=\"resources/oscillator.fmu\"", "source=\"file:///tmp/oscillator.fmu\"")],
            "<ssd:Component name=\"level\"",
            "component \"level\": source \"file:///tmp/oscillator.fmu\" is not a file inside the package",
        ),
        (
            &[("source=\"resources/oscillator.fmu\"", "source=\"resources/none.fmu\"")],
            "<ssd:Component name=\"level\"",
            "component \"level\": the package has no file \"resources/none.fmu\"\n  help: put the FMU into the package at that path",
        ),
        (
            &[("name=\"u\" kind=\"input\"><ssc:Real unit=\"m\"", "name=\"u\" kind=\"input\"><ssc:Real unit=\"cm\"")],
            "<ssd:Connection ",
            "unit \"m\" is not declared in <ssd:Units>, so \"m\" cannot be converted to \"cm\"\n  \
             help: declare both units with their base units in <ssd:Units>, or set suppressUnitConversion=\"true\"",
        ),
        (
            &[
                ("name=\"u\" kind=\"input\"><ssc:Real unit=\"m\"", "name=\"u\" kind=\"input\"><ssc:Real unit=\"s\""),
                ("<ssd:DefaultExperiment", units),
            ],
            "<ssd:Connection ",
            "unit \"m\" cannot be converted to \"s\": their base units differ",
        ),
        (
            &[("<ssv:Real value=\"0.25\"/>", "<ssv:String value=\"slow\"/>")],
            "<ssv:String",
            "parameter \"tau\": a String value is not taken by this import (only numbers and Booleans)\n  \
             help: set it in the FMU itself",
        ),
        (
            &[("<ssv:Real value=\"0.25\"/>", "<ssv:Real value=\"fast\"/>")],
            "<ssv:Real value=\"fast\"",
            "value=\"fast\" is not a finite number\n  help: write the value as a decimal number",
        ),
        (
            &[("<ssv:Parameter name=\"tau\">", "<ssv:Parameter name=\"tau_s\">")],
            "<ssv:Parameter name=\"tau_s\"",
            "component \"lag\" has no variable \"tau_s\"\n  \
             help: name a variable of the FMU's modelDescription.xml (tandem check lists them)",
        ),
        (
            &[("<ssd:ParameterBinding><ssd:ParameterValues>", "<ssd:ParameterBinding source=\"../x.ssv\"><ssd:ParameterValues>")],
            "<ssd:ParameterBinding source",
            "source \"../x.ssv\" is not a file inside the package\n  help: give the .ssv's path inside the package",
        ),
        (
            // No unit in the SSD: the FMU variable's (the speed's m/s).
            &[("startConnector=\"x\"", "startConnector=\"v\"")],
            "<ssd:Connection ",
            "unit \"m/s\" is not declared in <ssd:Units>, so \"m/s\" cannot be converted to \"m\"",
        ),
        (
            &[("startTime=\"0\"", "startTime=\"1\"")],
            "<ssd:DefaultExperiment",
            "startTime=\"1\": a co-simulation starts at t = 0\n  help: give the default experiment startTime 0",
        ),
        (
            &[("stopTime=\"1\"", "stopTime=\"0\"")],
            "<ssd:DefaultExperiment",
            "stopTime=\"0\" is not after the start at t = 0",
        ),
        (
            &[("startElement=\"level\" ", "")],
            "<ssd:Connection ",
            "a connection to the system's own connectors is not taken (only component to component)\n  \
             help: connect the components directly",
        ),
        (
            &[("endConnector=\"u\"/>", "endConnector=\"u\"><ssc:BooleanMappingTransformation/></ssd:Connection>")],
            "<ssc:BooleanMappingTransformation",
            "<ssc:BooleanMappingTransformation> on a connection is not taken (only LinearTransformation)",
        ),
        (
            &[("endConnector=\"u\"", "endConnector=\"q\"")],
            "<ssd:Connection ",
            "component \"lag\" has no variable \"q\"",
        ),
        (
            &[("endElement=\"lag\"", "endElement=\"lag2\"")],
            "<ssd:Connection ",
            "the connection names component \"lag2\", which the system does not have",
        ),
        (
            &[("name=\"x\" kind=\"output\"", "name=\"x\" kind=\"input\"")],
            "<ssd:Connection ",
            "connector \"level.x\" is of kind \"input\", which cannot be at this end of a connection\n  help: connect outputs to inputs",
        ),
    ];
    for (i, (changes, element, expected)) in cases.iter().enumerate() {
        let mut ssd = good.clone();
        for (from, to) in *changes {
            assert!(ssd.contains(from), "case {i}: no {from}");
            ssd = ssd.replacen(from, to, 1);
        }
        let name = format!("refused{i}.ssp");
        ssp_package(&dir, &name, &ssd, &[]);
        // The refused element's place, found in the text as written.
        let text = ssd.replace("NS", SSP_NAMESPACES);
        let (line, column) = text
            .lines()
            .enumerate()
            .find_map(|(n, l)| l.find(element).map(|c| (n + 1, c + 1)))
            .unwrap_or_else(|| panic!("case {i}: no {element}"));
        let stderr = refused(&dir, &name);
        let wanted = format!("error: {name}: SystemStructure.ssd:{line}:{column}: {expected}");
        assert!(stderr.contains(&wanted), "case {i}: wanted\n{wanted}\ngot\n{stderr}");
    }
    // Malformed XML, at the parser's place.
    ssp_package(
        &dir,
        "malformed.ssp",
        &good.replace("</ssd:SystemStructureDescription>", "</ssd:System>"),
        &[],
    );
    let stderr = refused(&dir, "malformed.ssp");
    assert!(
        stderr.contains("error: malformed.ssp: SystemStructure.ssd:")
            && stderr.contains(": malformed XML: ")
            && stderr.contains("help: fix the XML"),
        "{stderr}"
    );
    // A parameter set file's refusal names that file.
    let ssv = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}",
        parameter_set("Real", &[("tau", 0.25)]).replace("<ssv:Real value=\"0.25\"/>", "<ssv:Binary value=\"00\"/>")
    );
    // The lag's binding (the last) takes its values from the file.
    let binding = "<ssd:ParameterBinding><ssd:ParameterValues>";
    let at = good.rfind(binding).unwrap();
    let with_file = format!(
        "{}<ssd:ParameterBinding source=\"resources/lag.ssv\"><ssd:ParameterValues>{}",
        &good[..at],
        &good[at + binding.len()..]
    );
    ssp_package(&dir, "ssv.ssp", &with_file, &[("resources/lag.ssv", &ssv)]);
    let stderr = refused(&dir, "ssv.ssp");
    assert!(
        stderr.contains(
            "error: ssv.ssp: resources/lag.ssv:3:27: parameter \"tau\": a Binary value is not taken by this import"
        ),
        "{stderr}"
    );
    // The archive itself: not a ZIP, entries leaving the folder or linking
    // out of it, no SystemStructure.ssd.
    std::fs::write(dir.join("text.ssp"), "not a zip").unwrap();
    let ssd: &[u8] = b"<x/>";
    zip_raw(
        &dir.join("climb.ssp"),
        &[("SystemStructure.ssd", ssd), ("../tandem-ssp-37-climb.txt", b"x")],
        &[],
    );
    zip_raw(
        &dir.join("absolute.ssp"),
        &[("SystemStructure.ssd", ssd), ("/tmp/tandem-ssp-37-evil.txt", b"x")],
        &[],
    );
    zip_raw(
        &dir.join("link.ssp"),
        &[("SystemStructure.ssd", ssd)],
        &[("resources/model.fmu", "/etc/passwd")],
    );
    zip_raw(&dir.join("empty.ssp"), &[("resources/readme.txt", b"x")], &[]);
    for (file, expected) in [
        ("text.ssp", "error: text.ssp: not a ZIP archive: "),
        (
            "climb.ssp",
            "error: climb.ssp: entry \"../tandem-ssp-37-climb.txt\" is an absolute path or climbs out with \"..\"\n  \
             help: the archive is unsafe; do not use it",
        ),
        (
            "absolute.ssp",
            "error: absolute.ssp: entry \"/tmp/tandem-ssp-37-evil.txt\" is an absolute path or climbs out with \"..\"",
        ),
        (
            "link.ssp",
            "error: link.ssp: entry \"resources/model.fmu\" is a symbolic link\n  \
             help: an SSP package holds plain files only; the archive is unsafe",
        ),
        (
            "empty.ssp",
            "error: empty.ssp: cannot read SystemStructure.ssd: No such file or directory (os error 2)\n  \
             help: an SSP package holds SystemStructure.ssd at its root and the files it names",
        ),
    ] {
        let stderr = refused(&dir, file);
        assert!(stderr.contains(expected), "{file}: wanted\n{expected}\ngot\n{stderr}");
    }
    assert!(
        !std::env::temp_dir().join("tandem-ssp-37-climb.txt").exists()
            && !Path::new("/tmp/tandem-ssp-37-evil.txt").exists()
    );
    // Every part not taken is named at once, by cosim and by check.
    let several = good
        .replacen("<ssd:Elements>", "<ssd:SignalDictionaries/><ssd:Elements>", 1)
        .replacen("<ssv:Real value=\"0.25\"/>", "<ssv:String value=\"slow\"/>", 1)
        .replacen("<ssv:Parameter name=\"x0\">", "<ssv:Parameter name=\"x_0\">", 1);
    ssp_package(&dir, "several.ssp", &several, &[]);
    for command in ["cosim", "check"] {
        let out = common::tandem(&dir, &[command, "several.ssp"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{command} took several.ssp");
        for wanted in [
            "error: several.ssp: 3 parts of the package are not taken:\nseveral.ssp: SystemStructure.ssd:3:",
            ": signal dictionaries are not taken by this import",
            ": parameter \"tau\": a String value is not taken by this import",
            ": component \"level\" has no variable \"x_0\"",
        ] {
            assert!(stderr.contains(wanted), "{command}: {wanted}\n{stderr}");
        }
    }
    // check refuses as cosim does.
    let out = common::tandem(&dir, &["check", "refused0.ssp"]);
    assert!(
        !out.status.success()
            && String::from_utf8_lossy(&out.stderr).contains("SSP version \"3.0\" is not one this import takes"),
        "{out:?}"
    );
}
