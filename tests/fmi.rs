//! FMUs from the command line: a Model Exchange FMU simulated offline
//! (`tandem sim ball.fmu`) and run as the real-time plant of `tandem run`,
//! and a co-simulation system (`tandem cosim`). The FMUs are the project's
//! own, built from `fmi/tests/fmus/`.

#[path = "../fmi/tests/support/fmus.rs"]
mod fmus;

mod common;

use std::path::Path;

use common::Table;

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

/// Issue 37 from the command line, on the FMU of every FMI 3 type
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
fn an_fmus_internal_counter_counts_each_event_once_in_a_real_time_run_in_process_or_isolated() {
    let dir = common::scratch("fmi_inner_state");
    fmus::build("counter", &dir);
    // The implicit side, 0.9 ms a step, delayed before the time events at
    // 0.1, 0.3 and 0.5 s: corrections re-integrate across them.
    let config = |isolate: bool| {
        format!(
            r#"model = "counter.fmu"
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
    for isolate in [false, true] {
        std::fs::write(dir.join("counter.toml"), config(isolate)).unwrap();
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
        assert_eq!(table.header, ["time", "x", "n", "allocations"]);
        for row in &table.rows {
            let (x, n) = counter_closed_form(row[0]);
            assert!(
                (row[1] - x).abs() < 1e-8,
                "isolated {isolate}: x({}) = {}, exact {x}",
                row[0],
                row[1]
            );
            // At an event's instant the frame's outputs show n before it.
            let at_event = ((row[0] * 10.0).round() / 10.0 - row[0]).abs() < 1e-9 && row[0] > 0.0;
            if !at_event {
                assert_eq!(row[2], n, "isolated {isolate}: n({})", row[0]);
            }
            // The fast side's FMU allocated its checkpoints when it was
            // instantiated, and nothing after.
            assert_eq!(row[3], 2.0 + tandem_fmi::INNER_CHECKPOINTS as f64);
        }
        tables.push(table.rows);
    }
    assert_eq!(tables[0], tables[1], "in process and isolated alike");
}
