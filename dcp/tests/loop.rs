//! A feedback loop closed through two real-time slaves' models, as a
//! federation's spring-damper closes one: a mass (one slave's model) and
//! the spring and damper that push it (another's), each sending its
//! outputs at every communication point and stepping from the other's
//! newest samples, which arrive a step late (both send at the point, then
//! step). The members run in-process with the slave's own input samples
//! and extrapolation, their data as the bytes DCP carries.
//!
//! With the newest value held (the default) the mass settles. Following
//! the line through the two newest samples predicts the damper's force
//! two steps ahead from a mass that answers that force: the loop gains
//! at each step and the oscillation grows without bound.

use std::path::{Path, PathBuf};
use std::time::Instant;

use tandem_dcp::slave::member::Member;
use tandem_dcp::slave::model::ModelMember;
use tandem_dcp::slave::wiring::Slot;
use tandem_dcp::slave::{Extrapolation, SlaveConfig};
use tandem_dcp::types::DataType;

/// The communication step (s), also each model's step.
const H: f64 = 0.01;
/// Steps run: 3 s.
const STEPS: i64 = 300;
/// The mass's starting position (m).
const X0: f64 = 0.1;

/// The mass (1 kg): force in, position and velocity out.
const MASS: &str = r#"{
  "name": "mass",
  "blocks": [
    {"id": "F", "type": "Inport", "params": {"default": 0.0}},
    {"id": "inv_m", "type": "Gain", "params": {"gain": 1.0}},
    {"id": "vel", "type": "Integrator", "params": {"initial": 0.0}},
    {"id": "pos", "type": "Integrator", "params": {"initial": 0.1}},
    {"id": "x", "type": "Output"},
    {"id": "v", "type": "Output"}
  ],
  "links": [
    {"from": "F", "to": "inv_m"},
    {"from": "inv_m", "to": "vel"},
    {"from": "vel", "to": "pos"},
    {"from": "pos", "to": "x"},
    {"from": "vel", "to": "v"}
  ],
  "simulation": {"solver": "rk4", "step": 0.01, "stop": 1}
}"#;

/// The spring (100 N/m) and damper (20 N s/m): position and velocity in,
/// force out, without delay (direct feedthrough).
const SPRING_DAMPER: &str = r#"{
  "name": "spring_damper",
  "blocks": [
    {"id": "x", "type": "Inport", "params": {"default": 0.0}},
    {"id": "v", "type": "Inport", "params": {"default": 0.0}},
    {"id": "k", "type": "Gain", "params": {"gain": -100.0}},
    {"id": "c", "type": "Gain", "params": {"gain": -20.0}},
    {"id": "sum", "type": "Sum", "params": {"signs": "++"}},
    {"id": "F", "type": "Output"}
  ],
  "links": [
    {"from": "x", "to": "k"},
    {"from": "v", "to": "c"},
    {"from": "k", "to": "sum.1"},
    {"from": "c", "to": "sum.2"},
    {"from": "sum", "to": "F"}
  ],
  "simulation": {"solver": "rk4", "step": 0.01, "stop": 1}
}"#;

/// A folder of this test's own with both models.
fn folder() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tandem-dcp-loop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mass.json"), MASS).unwrap();
    std::fs::write(dir.join("spring_damper.json"), SPRING_DAMPER).unwrap();
    dir
}

/// Slave `name`'s model as its slave file gives it (`extra` keys added).
fn member(dir: &Path, name: &str, extra: &str) -> ModelMember {
    let text = format!("name = \"{name}\"\nsource = \"{name}.json\"\nstep = 0.01\ncontrol = \"127.0.0.1:1\"\n{extra}");
    let config = SlaveConfig::parse(&text, &dir.join(format!("{name}.toml"))).unwrap();
    ModelMember::load(config).unwrap()
}

/// Float64 slots of `names` among `variables`' names, in that order.
fn slots(variables: &[String], names: &[&str]) -> Vec<Slot> {
    names
        .iter()
        .enumerate()
        .map(|(pos, name)| Slot {
            pos: pos as u16,
            variable: variables.iter().position(|v| v == name).unwrap(),
            data_type: DataType::Float64,
        })
        .collect()
}

/// The mass's position at every point of the loop, both slaves' files
/// given `extra`.
fn positions(extra: &str) -> Vec<f64> {
    let dir = folder();
    let mut mass = member(&dir, "mass", extra);
    let mut spring = member(&dir, "spring_damper", extra);
    let names = |m: &ModelMember, inputs: bool| -> Vec<String> {
        let ports = m.ports();
        let v = if inputs { &ports.inputs } else { &ports.outputs };
        v.iter().map(|v| v.name.clone()).collect()
    };
    let mass_out = slots(&names(&mass, false), &["x", "v"]);
    let mass_in = slots(&names(&mass, true), &["F"]);
    let spring_out = slots(&names(&spring, false), &["F"]);
    let spring_in = slots(&names(&spring, true), &["x", "v"]);
    let origin = Instant::now();
    for m in [&mut mass, &mut spring] {
        m.configure().unwrap();
        m.start(origin, H, false).unwrap();
    }
    let (mut from_mass, mut from_spring) = (Vec::new(), Vec::new());
    let mut x = Vec::new();
    for k in 0..STEPS {
        // Point k: both send, then both step; each one's data reaches the
        // other once it has stepped.
        from_mass.clear();
        from_spring.clear();
        mass.give(&mass_out, &mut from_mass).unwrap();
        spring.give(&spring_out, &mut from_spring).unwrap();
        x.push(f64::from_le_bytes(from_mass[..8].try_into().unwrap()));
        mass.advance(k, H).unwrap();
        spring.advance(k, H).unwrap();
        assert!(mass.take(&mass_in, &from_spring, k));
        assert!(spring.take(&spring_in, &from_mass, k));
    }
    x
}

#[test]
fn a_tight_feedback_loop_between_real_time_slaves_settles_with_the_default_extrapolation() {
    assert_eq!(Extrapolation::default(), Extrapolation::Hold);
    let held = positions("");
    assert_eq!(held[0], X0);
    let last = held[held.len() - 50..].iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(last < 1e-6 * X0, "held: the mass still moves {last} m at 2.5 s to 3 s");
    assert_eq!(positions("extrapolation = \"hold\"\n"), held);

    let linear = positions("extrapolation = \"linear\"\n");
    let last = linear[linear.len() - 1].abs();
    assert!(
        last > 1e6,
        "linear: the loop should diverge, yet the mass is at {last} m at 3 s"
    );
}
