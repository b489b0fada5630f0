//! `point_inputs = "held"` against closed forms: a ramp x = t drives a
//! gain y = 2u. With the newest point inputs y follows x at the same
//! point (y = 2t); with held ones it takes the value x had at the start of
//! the step that reached the point (y = 2(t - H) after t = 0).

use std::path::Path;

use tandem_runtime::record::Trace;

const RAMP: &str = r#"{"name": "ramp", "blocks": [
    {"id": "one", "type": "Constant", "params": {"value": 1.0}},
    {"id": "x", "type": "Integrator", "params": {"initial": 0.0}},
    {"id": "out", "type": "Output"}],
  "links": [{"from": "one", "to": "x"}, {"from": "x", "to": "out"}]}"#;

const GAIN: &str = r#"{"name": "gain", "blocks": [
    {"id": "u", "type": "Inport"},
    {"id": "k", "type": "Gain", "params": {"gain": 2.0}},
    {"id": "y", "type": "Output"}],
  "links": [{"from": "u", "to": "k"}, {"from": "k", "to": "y"}]}"#;

/// The gain's output at every macro step of 0.125 s up to 1 s.
fn run(point_inputs: &str) -> Vec<f64> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("ramp.json"), RAMP).unwrap();
    std::fs::write(dir.path().join("gain.json"), GAIN).unwrap();
    let text = format!(
        "[master]\nstep = 0.125\nstop = 1\nextrapolation = 0\n{point_inputs}\n\
         [[model]]\nname = \"ramp\"\nsource = \"ramp.json\"\nstep = 0.125\n\
         [[model]]\nname = \"gain\"\nsource = \"gain.json\"\nstep = 0.125\n\
         [[connection]]\nfrom = \"ramp.out\"\nto = \"gain.u\"\n"
    );
    let system = tandem_cosim::parse(&text, &dir.path().join("s.toml")).unwrap();
    let mut trace = Trace::default();
    system.run(&mut trace, &mut |_| {}).unwrap();
    trace.rows.iter().map(|r| r[1]).collect()
}

#[test]
fn held_point_inputs_delay_a_feedthrough_by_one_macro_step() {
    let h = 0.125;
    let newest = run("");
    let held = run("point_inputs = \"held\"");
    for n in 0..=8 {
        let t = n as f64 * h;
        // RK4 integrates the constant to rounding.
        assert!((newest[n] - 2.0 * t).abs() < 1e-14, "newest at t = {t}: {}", newest[n]);
        let expected = if n == 0 { 0.0 } else { 2.0 * (t - h) };
        assert!((held[n] - expected).abs() < 1e-14, "held at t = {t}: {}", held[n]);
    }
}

#[test]
fn held_point_inputs_need_jacobi_without_iteration() {
    let e = tandem_cosim::parse(
        "[master]\nstep = 0.1\nstop = 1\nordering = \"gauss-seidel\"\npoint_inputs = \"held\"\n",
        Path::new("s.toml"),
    )
    .err()
    .unwrap();
    assert!(
        e.to_string()
            .starts_with("s.toml:5:16: master.point_inputs: held point inputs need ordering = \"jacobi\""),
        "{e}"
    );
    let e = tandem_cosim::parse(
        "[master]\nstep = 0.1\nstop = 1\npoint_inputs = \"late\"\n",
        Path::new("s.toml"),
    )
    .err()
    .unwrap();
    assert!(e.to_string().contains("unknown point inputs \"late\""), "{e}");
}
