//! Speed figures of the models and the simulation driver:
//!
//! - `blocks`: block evaluations per second on a generated diagram of about
//!   10 000 blocks (one evaluation = one block's outputs in one pass), in
//!   minor passes (with the derivatives) and major steps (the major pass
//!   and the updates), interpreted and compiled to machine code
//!   (`tandem-jit`) side by side;
//! - `examples`: major steps per second on the three shipped examples.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tandem_jit::CompiledModel;
use tandem_models::diagram::DiagramModel;
use tandem_models::{diagram, MajorStep, Model, StateRef};
use tandem_runtime::record::Recorder;
use tandem_runtime::{FixedStep, Simulation};

/// The shipped examples, built into the binary.
pub const EXAMPLES: [(&str, &str); 3] = [
    ("abs_slip", include_str!("../../models/examples/abs_slip.json")),
    (
        "bouncing_ball",
        include_str!("../../models/examples/bouncing_ball.json"),
    ),
    (
        "cruise_control",
        include_str!("../../models/examples/cruise_control.json"),
    ),
];

/// A diagram of `chains` chains, each an integrator followed by `length`
/// alternating Gain and Sum blocks whose end drives the integrator.
fn generated_model(chains: usize, length: usize) -> Value {
    let mut blocks = Vec::new();
    let mut links = Vec::new();
    for c in 0..chains {
        blocks.push(json!({"id": format!("x{c}"), "type": "Integrator", "params": {"initial": 1.0}}));
        let mut previous = format!("x{c}");
        for k in 0..length {
            let id = format!("b{c}_{k}");
            if k % 2 == 0 {
                blocks.push(json!({"id": id, "type": "Gain", "params": {"gain": 0.5}}));
                links.push(json!({"from": previous, "to": id}));
            } else {
                blocks.push(json!({"id": id, "type": "Sum", "params": {"signs": "+-"}}));
                links.push(json!({"from": previous, "to": format!("{id}.1")}));
                links.push(json!({"from": format!("x{c}"), "to": format!("{id}.2")}));
            }
            previous = id;
        }
        links.push(json!({"from": previous, "to": format!("x{c}")}));
    }
    json!({"blocks": blocks, "links": links})
}

/// Calls `f` in rounds until `budget` has passed; returns calls and time.
pub(crate) fn measure(budget: Duration, mut f: impl FnMut()) -> (u64, Duration) {
    f();
    let start = Instant::now();
    let mut calls = 0;
    while start.elapsed() < budget {
        for _ in 0..16 {
            f();
        }
        calls += 16;
    }
    (calls, start.elapsed())
}

/// Block evaluations per second demanded of the compiled diagram, in
/// every pass.
const COMPILED_GOAL: f64 = 1e9;

/// Derivative evaluations per second of `model` at its initial state.
fn evaluations_per_second(model: &mut dyn Model, budget: Duration) -> f64 {
    let layout = model.layout().clone();
    let mut x = vec![0.0; layout.states.len()];
    let mut xd = vec![0.0; layout.discrete];
    model.initial_state(&mut x, &mut xd);
    let mut dx = vec![0.0; x.len()];
    let (calls, time) = measure(budget, || {
        model.derivatives(
            StateRef {
                t: 0.0,
                x: &x,
                xd: &xd,
                u: &[],
            },
            &mut dx,
        );
    });
    calls as f64 / time.as_secs_f64()
}

/// Major steps (the major pass, then the updates) per second of `model`
/// at its initial state.
fn major_steps_per_second(model: &mut dyn Model, budget: Duration) -> f64 {
    let layout = model.layout().clone();
    let mut x = vec![0.0; layout.states.len()];
    let mut xd = vec![0.0; layout.discrete];
    model.initial_state(&mut x, &mut xd);
    let (x0, hits) = (x.clone(), vec![true; layout.rates.len()]);
    let mut y = vec![0.0; layout.outputs.len()];
    let (calls, time) = measure(budget, || {
        x.copy_from_slice(&x0);
        let mut step = MajorStep {
            t: 0.0,
            x: &mut x,
            xd: &mut xd,
            u: &[],
            hits: &hits,
            y: &mut y,
        };
        // The generated diagram's values stay finite.
        let _ = model.major_outputs(&mut step);
        model.update(&mut step);
    });
    calls as f64 / time.as_secs_f64()
}

/// Block evaluations and RK4 steps per second on the generated diagram,
/// interpreted and compiled to machine code.
pub fn blocks(budget: Duration) -> anyhow::Result<()> {
    let compile_start = Instant::now();
    let mut interpreted = diagram::compile_str(&generated_model(100, 99).to_string())?.model;
    let compile_time = compile_start.elapsed();
    let program = Arc::clone(interpreted.program());
    let n_blocks = program.blocks().len();
    let code =
        tandem_jit::compile(&program)?.ok_or_else(|| anyhow::anyhow!("the generated diagram has algebraic loops"))?;
    println!(
        "generated diagram: {n_blocks} blocks, {} states, built in {:.1} ms; {}",
        program.layout().states.len(),
        compile_time.as_secs_f64() * 1e3,
        code.report
    );
    let mut compiled = CompiledModel::new(DiagramModel::new(program), Arc::new(code));
    let settings = FixedStep {
        solver: tandem_runtime::Method::Rk4.into(),
        step: 1e-3,
        stop: 0.1,
    };
    println!(
        "  {:<12} {:>16} {:>10} {:>16} {:>10} {:>16}",
        "", "minor evals/s", "ns/block", "major evals/s", "ns/block", "rk4 steps/s"
    );
    let models: [(&str, &mut dyn Model); 2] = [("interpreted", &mut interpreted), ("compiled", &mut compiled)];
    for (name, model) in models {
        let minor = evaluations_per_second(model, budget / 6) * n_blocks as f64;
        let major = major_steps_per_second(model, budget / 6) * n_blocks as f64;
        let steps = steps_per_second(model, settings, budget / 6)?;
        println!(
            "  {name:<12} {minor:>16.3e} {:>10.2} {major:>16.3e} {:>10.2} {steps:>16.3e}",
            1e9 / minor,
            1e9 / major
        );
        if name == "compiled" {
            let met = |v: f64| if v >= COMPILED_GOAL { "met" } else { "NOT met" };
            println!(
                "  goal: >= {COMPILED_GOAL:.0e} block evaluations/s compiled in every pass: minor {}, major {}",
                met(minor),
                met(major)
            );
        }
    }
    Ok(())
}

/// Discards the outputs.
struct Discard;
impl Recorder for Discard {
    fn record(&mut self, _: f64, _: &[f64]) -> std::io::Result<()> {
        Ok(())
    }
}

/// Major steps per second of whole runs of `model`, repeated for `budget`.
fn steps_per_second(model: &mut dyn Model, settings: FixedStep, budget: Duration) -> anyhow::Result<f64> {
    let start = Instant::now();
    let (mut steps, mut time) = (0u64, Duration::ZERO);
    while start.elapsed() < budget {
        let summary = Simulation::new(model, settings)?.run(&mut Discard, &mut |_| {})?;
        steps += summary.steps;
        time += summary.wall;
    }
    Ok(steps as f64 / time.as_secs_f64())
}

/// Steps per second on the shipped examples.
pub fn examples(budget: Duration) -> anyhow::Result<()> {
    println!("examples (rk4, their own step):");
    for (name, text) in EXAMPLES {
        let mut compiled = diagram::compile_str(text)?;
        let settings = tandem_config::fixed_step(&compiled.simulation, &tandem_config::Overrides::default())?;
        let per_second = steps_per_second(&mut compiled.model, settings, budget / 3)?;
        println!(
            "  {name:<16} {per_second:>10.3e} steps/s ({} blocks)",
            compiled.model.program().blocks().len()
        );
    }
    Ok(())
}
