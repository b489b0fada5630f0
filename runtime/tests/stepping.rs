//! A simulation stepped one grid step at a time, with inputs set between
//! steps and a saved point gone back to: what a co-simulation master and an
//! exported FMU do with it.

use tandem_models::diagram;
use tandem_runtime::record::Trace;
use tandem_runtime::sim::Snapshot;
use tandem_runtime::{FixedStep, Method, Simulation, Solver};

/// x' = u - x, y = x, from x(0) = 0.
const LAG: &str = r#"{"blocks": [
    {"id": "u", "type": "Inport"}, {"id": "d", "type": "Sum", "params": {"signs": "+-"}},
    {"id": "x", "type": "Integrator"}, {"id": "y", "type": "Output"}],
  "links": [{"from": "u", "to": "d.1"}, {"from": "x", "to": ["d.2", "y"]}, {"from": "d", "to": "x"}]}"#;

fn settings(solver: Solver) -> FixedStep {
    FixedStep {
        solver,
        step: 0.01,
        stop: 1.0,
    }
}

#[test]
fn stepping_to_the_stop_time_records_what_a_run_records() {
    for solver in [Method::Rk4.into(), Solver::BDF] {
        let mut ran = Trace::default();
        let mut model = diagram::compile_str(LAG).unwrap().model;
        Simulation::new(&mut model, settings(solver))
            .unwrap()
            .run(&mut ran, &mut |_| {})
            .unwrap();
        let model = diagram::compile_str(LAG).unwrap().model;
        let mut sim = Simulation::owning(Box::new(model), settings(solver)).unwrap();
        let mut stepped = Trace::default();
        for _ in 0..100 {
            sim.step(&mut stepped).unwrap();
        }
        stepped.rows.push(sim.outputs().unwrap().to_vec());
        stepped.time.push(sim.time());
        assert_eq!(stepped.time, ran.time, "{solver}");
        assert_eq!(stepped.rows, ran.rows, "{solver}");
    }
}

#[test]
fn inputs_set_between_steps_drive_the_model_and_a_saved_point_repeats_bit_for_bit() {
    for solver in [Method::Rk4.into(), Solver::BDF] {
        let model = diagram::compile_str(LAG).unwrap().model;
        let mut sim = Simulation::owning(Box::new(model), settings(solver)).unwrap();
        let mut trace = Trace::default();
        sim.set_inputs(&[1.0]);
        for _ in 0..50 {
            sim.step(&mut trace).unwrap();
        }
        // x(t) = 1 - exp(-t) under a unit input.
        let x = sim.outputs().unwrap()[0];
        assert!((x - (1.0 - (-0.5f64).exp())).abs() < 1e-5, "{solver}: {x}");
        let mut saved = Snapshot::default();
        sim.save(&mut saved);
        let mut first = Vec::new();
        for round in 0..2 {
            sim.restore(&saved);
            sim.set_inputs(&[-1.0]);
            for _ in 0..10 {
                sim.step(&mut trace).unwrap();
            }
            let y = sim.outputs().unwrap()[0];
            if round == 0 {
                first.push(y);
            } else {
                assert_eq!(y.to_bits(), first[0].to_bits(), "{solver}");
            }
        }
        // From x(0.5), under u = -1 for 0.1 s: x = -1 + (x0 + 1) exp(-0.1).
        let expected = -1.0 + (x + 1.0) * (-0.1f64).exp();
        assert!(
            (first[0] - expected).abs() < 1e-5,
            "{solver}: {} vs {expected}",
            first[0]
        );
        assert!((sim.time() - 0.6).abs() < 1e-12);
    }
}

/// A sine, held every 0.1 s, integrated at a 0.01 s grid.
const HELD_SINE: &str = r#"{"blocks": [
    {"id": "s", "type": "Sine", "params": {"amplitude": 1, "frequency": 1}},
    {"id": "h", "type": "ZeroOrderHold", "sample_time": 0.1},
    {"id": "x", "type": "Integrator"}, {"id": "y", "type": "Output"}],
  "links": [{"from": "s", "to": "h"}, {"from": "h", "to": "x"}, {"from": "x", "to": "y"}]}"#;

#[test]
fn reading_the_outputs_between_steps_leaves_the_bdf_run_as_a_run_runs_it() {
    // Reading latches the hold's new value: the BDF must still restart there.
    let settings = FixedStep {
        solver: Solver::BDF,
        step: 0.01,
        stop: 2.0,
    };
    let mut model = diagram::compile_str(HELD_SINE).unwrap().model;
    let mut ran = Trace::default();
    Simulation::new(&mut model, settings)
        .unwrap()
        .run(&mut ran, &mut |_| {})
        .unwrap();
    let mut sim = Simulation::owning(Box::new(model), settings).unwrap();
    let mut read = vec![sim.outputs().unwrap().to_vec()];
    for _ in 0..200 {
        sim.step(&mut Trace::default()).unwrap();
        read.push(sim.outputs().unwrap().to_vec());
    }
    assert_eq!(read, ran.rows);
}

/// Advances `sim` to `to` as an importer's communication step does: whole
/// grid steps, then a shorter one to `to` when it is between two grid
/// points.
fn advance(sim: &mut Simulation, to: f64, step: f64, trace: &mut Trace) {
    while (sim.grid_point() + 1) as f64 * step <= to + 1e-9 * step {
        sim.step(trace).unwrap();
    }
    if to - sim.time() > 1e-9 * step {
        sim.advance_to(to, trace).unwrap();
    }
}

#[test]
fn stopping_between_grid_points_follows_the_solution_and_keeps_the_grid() {
    for solver in [Method::Rk4.into(), Solver::BDF] {
        let model = diagram::compile_str(LAG).unwrap().model;
        let mut sim = Simulation::owning(Box::new(model), settings(solver)).unwrap();
        let mut trace = Trace::default();
        sim.set_inputs(&[1.0]);
        let interval = 0.0037;
        let mut worst = 0.0f64;
        for k in 1..=270 {
            let t = k as f64 * interval;
            advance(&mut sim, t, 0.01, &mut trace);
            assert!(
                (sim.time() - t).abs() < 1e-12,
                "{solver}: at {} s, not {t} s",
                sim.time()
            );
            let x = sim.outputs().unwrap()[0];
            worst = worst.max((x - (1.0 - (-t).exp())).abs());
        }
        // Each grid point passed was recorded once, on the grid.
        assert_eq!(trace.time.len(), 100, "{solver}");
        assert!(trace.time.iter().enumerate().all(|(i, &t)| t == i as f64 * 0.01));
        let bound = if solver == Solver::BDF { 1e-5 } else { 1e-9 };
        println!("{solver}: largest error against 1 - exp(-t) at 270 points 3.7 ms apart: {worst:e}");
        assert!(worst < bound, "{solver}: {worst:e}");
    }
}

#[test]
fn between_grid_points_discrete_blocks_hold_and_hit_on_the_grid_only() {
    let settings = FixedStep {
        solver: Method::Rk4.into(),
        step: 0.01,
        stop: 2.0,
    };
    let model = diagram::compile_str(HELD_SINE).unwrap().model;
    let mut sim = Simulation::owning(Box::new(model), settings).unwrap();
    let mut trace = Trace::default();
    // x(t) integrates sin(t_k) (1 rad/s) held from each t_k = 0.1 k.
    let exact = |t: f64| {
        let k = (t / 0.1 + 1e-9).floor() as usize;
        let whole: f64 = (0..k).map(|i| (0.1 * i as f64).sin() * 0.1).sum();
        whole + (0.1 * k as f64).sin() * (t - 0.1 * k as f64)
    };
    for k in 1..=300 {
        let t = k as f64 * 0.0061;
        advance(&mut sim, t, 0.01, &mut trace);
        let x = sim.outputs().unwrap()[0];
        assert!((x - exact(t)).abs() < 1e-12, "at {t} s: {x} vs {}", exact(t));
    }
}
