//! The `check` and `blocks` commands, as a user sees them.

mod common;

#[test]
fn check_prints_order_states_rates_and_ports() {
    let dir = common::scratch("check");
    let model = common::root().join("models/examples/cruise_control.json");
    let out = common::tandem_ok(&dir, &["check", model.to_str().unwrap()]);
    assert!(out.contains("11 blocks, 1 states, 3 discrete states"), "{out}");
    // The PID must run before the force sum, which it feeds directly; the
    // integrator needs nothing before it (no feedthrough).
    let position = |id: &str| {
        out.lines()
            .position(|l| l.split_whitespace().nth(1) == Some(id))
            .unwrap_or_else(|| panic!("{id} missing:\n{out}"))
    };
    assert!(position("controller") < position("net_force"));
    assert!(position("error") < position("controller"));
    assert!(position("vehicle") < position("error"));
    assert!(out.contains("states: vehicle"), "{out}");
    assert!(out.contains("0.02 s: controller"), "{out}");
    assert!(
        out.contains("inputs: pedal") && out.contains("outputs: v, v_ref, force"),
        "{out}"
    );
    assert!(out.contains("algebraic loops: none"), "{out}");
    // What compiles, proved without generating code: every block, the
    // controller's discrete PID at its hits (0.02 s) included.
    assert!(out.ends_with("machine code: 11 of 11 blocks compile\n"), "{out}");
}

#[test]
fn check_reports_an_algebraic_loop_and_fails() {
    let dir = common::scratch("check_loop");
    let model = r#"{"blocks": [{"id": "a", "type": "Gain", "params": {"gain": 2}}, {"id": "b", "type": "Identity"}],
                  "links": [{"from": "a", "to": "b"}, {"from": "b", "to": "a"}]}"#;
    std::fs::write(dir.join("loop.json"), model).unwrap();
    let out = common::tandem(&dir, &["check", "loop.json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("loop through a, b (ports a.1 <- b; b.1 <- a)"),
        "{stderr}"
    );
}

#[test]
fn blocks_lists_the_library() {
    let out = common::tandem_ok(&common::scratch("blocks"), &["blocks"]);
    for name in [
        "Integrator",
        "Expression",
        "DiscretePID",
        "Lookup2D",
        "If",
        "Merge",
        "Subsystem",
    ] {
        assert!(out.lines().any(|l| l.starts_with(name)), "{name} missing:\n{out}");
    }
}

#[test]
fn sim_plots_every_output_with_its_unit() {
    let dir = common::scratch("plot");
    let model = common::root().join("models/examples/bouncing_ball.json");
    common::tandem_ok(
        &dir,
        &[
            "sim",
            model.to_str().unwrap(),
            "--plot",
            "ball.svg",
            "--out",
            "ball.csv",
        ],
    );
    let svg = std::fs::read_to_string(dir.join("ball.svg")).unwrap();
    assert!(svg.starts_with("<svg"), "not an SVG");
    for label in ["Bouncing ball", "x [m]", "v [m/s]", "time [s]"] {
        assert!(svg.contains(label), "{label} missing from the plot");
    }
    let out = common::tandem(
        &dir,
        &[
            "sim",
            model.to_str().unwrap(),
            "--plot",
            "ball.pdf",
            "--out",
            "refused.csv",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && stderr.contains(".pdf") && stderr.contains(".svg"),
        "{stderr}"
    );
    // Refused before the run: no results were written.
    assert!(!dir.join("refused.csv").exists());
}
