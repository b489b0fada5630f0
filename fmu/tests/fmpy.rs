//! Exported FMUs as an independent importer sees them: FMPy validates
//! their model descriptions, simulates them, steps them with inputs and
//! restored states, and shows the errors they log. Each result is compared
//! with Tandem's own simulation of the same model, bit for bit.
//!
//! Skipped, with a message, when FMPy is not installed (CI installs it).

mod support;

use std::path::Path;

use support::*;
use tandem_fmu::FmiVersion;
use tandem_runtime::record::Trace;
use tandem_runtime::sim::Snapshot;
use tandem_runtime::Simulation;

const VERSIONS: [FmiVersion; 2] = [FmiVersion::Fmi3, FmiVersion::Fmi2];

#[test]
fn fmpy_finds_no_problem_in_exported_fmus() {
    if !fmpy_available("fmpy_finds_no_problem_in_exported_fmus") {
        return;
    }
    for file in ["cruise_control.json", "bouncing_ball.json"] {
        for version in VERSIONS {
            let fmu = export_fmu(&example(file), version).path;
            let said = fmpy(&["validate", fmu.to_str().unwrap()]);
            assert_eq!(said.trim(), "problems: 0", "{file}, FMI {version}:\n{said}");
        }
    }
}

/// FMPy's simulation of the FMU of `model` to `stop`, at the model's step,
/// against `tandem sim`'s rows.
fn simulate_and_compare(model: &Path, stop: f64, version: FmiVersion) {
    let report = export_fmu(model, version);
    let step = report.settings.step.to_string();
    let fmpy_rows = rows(&fmpy(&[
        "simulate",
        report.path.to_str().unwrap(),
        &stop.to_string(),
        &step,
    ]));
    let tandem_rows = tandem_sim(model, stop);
    let difference = max_relative_difference(&fmpy_rows, &tandem_rows);
    let same = identical(&fmpy_rows, &tandem_rows);
    println!(
        "{} FMI {version}: {} rows, max relative difference {difference:e}, bit-identical: {same}",
        model.display(),
        fmpy_rows.len()
    );
    assert!(same, "{}: max relative difference {difference:e}", model.display());
}

#[test]
fn fmpy_simulations_record_what_tandem_sim_records() {
    if !fmpy_available("fmpy_simulations_record_what_tandem_sim_records") {
        return;
    }
    for version in VERSIONS {
        // An Inport at its default and a discrete PID; state events.
        simulate_and_compare(&example("cruise_control.json"), 20.0, version);
        simulate_and_compare(&example("bouncing_ball.json"), 20.0, version);
    }
    let bdf = with_solver("cruise_control.json", "bdf");
    simulate_and_compare(&bdf, 20.0, FmiVersion::Fmi3);
    let bdf = with_solver("bouncing_ball.json", "bdf");
    simulate_and_compare(&bdf, 20.0, FmiVersion::Fmi3);
}

/// The cruise control's exact solution (`models/examples/cruise_control.json`:
/// m v' = F - b v, the PID's force held over each 0.02 s period, sampling
/// v and the reference speed `gain` × 0.5) at `times` (ascending, from 0),
/// with the speed map's `gain` and the controller's `kp`: rows of
/// (v, v_ref, force).
fn cruise_exact(times: &[f64], gain: f64, kp: f64) -> Vec<[f64; 3]> {
    let (m, b, period, ki, kd) = (1500.0, 20.0, 0.02, 0.01, 0.01);
    let decay = |s: f64| (-b / m * s).exp();
    let v_ref = gain * 0.5;
    let (mut v_k, mut total, mut e_prev, mut f_k) = (0.0, 0.0, 0.0, 0.0);
    // The sample the force is of; -1 before the first.
    let mut sampled = -1i64;
    times
        .iter()
        .map(|&t| {
            let k = (t / period + 1e-9).floor() as i64;
            while sampled < k {
                if sampled >= 0 {
                    v_k = v_k * decay(period) + f_k / b * (1.0 - decay(period));
                }
                sampled += 1;
                let e = v_ref - v_k;
                total += e;
                f_k = kp * e + ki * total + kd * (e - e_prev);
                e_prev = e;
            }
            let since = t - k as f64 * period;
            [v_k * decay(since) + f_k / b * (1.0 - decay(since)), v_ref, f_k]
        })
        .collect()
}

/// The largest difference of FMPy's rows (time, v, v_ref, force) from the
/// cruise control's exact solution, relative to max(1, |value|).
fn worst_against_exact(rows: &[Vec<f64>], gain: f64, kp: f64) -> f64 {
    let times: Vec<f64> = rows.iter().map(|r| r[0]).collect();
    let exact = cruise_exact(&times, gain, kp);
    let mut worst = 0.0f64;
    for (row, exact) in rows.iter().zip(&exact) {
        for (got, want) in row[1..].iter().zip(exact) {
            worst = worst.max((got - want).abs() / want.abs().max(1.0));
        }
    }
    worst
}

#[test]
fn fmpy_at_an_odd_output_interval_follows_the_closed_form_and_tandem_sim() {
    if !fmpy_available("fmpy_at_an_odd_output_interval_follows_the_closed_form_and_tandem_sim") {
        return;
    }
    let model = example("cruise_control.json");
    let tandem = tandem_sim(&model, 20.0);
    for version in VERSIONS {
        let report = export_fmu(&model, version);
        // 3.5 ms: every step but every 20th ends between two of the
        // model's 10 ms steps, and the controller samples every 20 ms.
        let rows = rows(&fmpy(&["simulate", report.path.to_str().unwrap(), "20", "0.0035"]));
        assert_eq!(rows.len(), 5716, "FMI {version}: 20 / 0.0035 rows, and the stop time");
        assert_eq!(rows.last().unwrap()[0], 20.0);
        let worst = worst_against_exact(&rows, 50.0, 1.0);
        // Where a communication point is a grid point (every 70 ms), the
        // split steps before it leave the integrator's error only.
        let mut on_grid = 0;
        let mut drift = 0.0f64;
        for row in &rows {
            let k = (row[0] / 0.01).round();
            if (row[0] - k * 0.01).abs() < 1e-9 {
                let sim = &tandem[k as usize];
                assert_eq!(sim[0], k * 0.01);
                on_grid += 1;
                for (a, b) in row[1..].iter().zip(&sim[1..]) {
                    drift = drift.max((a - b).abs() / b.abs().max(1.0));
                }
            }
        }
        println!(
            "FMI {version} at 3.5 ms: {} rows, largest relative difference from the exact solution {worst:e}, from tandem sim at the {on_grid} common points {drift:e}",
            rows.len()
        );
        assert_eq!(on_grid, 287);
        assert!(worst < 1e-9, "FMI {version}: {worst:e}");
        assert!(drift < 1e-12, "FMI {version}: {drift:e}");
    }
}

#[test]
fn fmpy_start_values_set_the_exported_parameters() {
    if !fmpy_available("fmpy_start_values_set_the_exported_parameters") {
        return;
    }
    let model = example("cruise_control.json");
    for version in VERSIONS {
        let report = export_fmu(&model, version);
        assert_eq!((report.parameters, report.tunable), (7, 7), "{report}");
        let path = report.path.to_str().unwrap();
        // The reference speed is gain × 0.5, and kp shapes the response.
        for (gain, kp) in [(50.0, 1.0), (30.0, 1.0), (30.0, 4.0)] {
            let gain_text = format!("speed_map.gain={gain}");
            let kp_text = format!("controller.kp={kp}");
            let rows = rows(&fmpy(&["simulate", path, "20", "0.05", &gain_text, &kp_text]));
            assert_eq!(rows.len(), 401);
            let worst = worst_against_exact(&rows, gain, kp);
            println!(
                "FMI {version}, gain {gain}, kp {kp}: largest relative difference from the exact solution {worst:e}"
            );
            assert!(worst < 1e-9, "FMI {version}, gain {gain}, kp {kp}: {worst:e}");
            assert_eq!(rows[400][2], gain * 0.5);
        }
    }
}

/// Tandem stepped as the driver's `slave` command steps the FMU: input
/// `u1`, then `n` communication steps of `per` model steps, `u2` from step
/// `n / 2`, after saving the state there; then the second half again from
/// the saved state.
fn tandem_stepped(model: &Path, per: usize, n: usize, (u1, u2): (f64, f64)) -> Vec<Vec<f64>> {
    let (model, settings) = tandem_model(model, 1e9);
    let mut sim = Simulation::owning(model, settings).unwrap();
    let mut discard = Trace::default();
    let mut rows = Vec::new();
    let mut row = |sim: &mut Simulation| {
        let t = sim.time();
        rows.push(
            std::iter::once(t)
                .chain(sim.outputs().unwrap().iter().copied())
                .collect::<Vec<_>>(),
        );
    };
    sim.set_inputs(&[u1]);
    row(&mut sim);
    let mut saved = Snapshot::default();
    let half = n / 2;
    for k in 0..n {
        if k == half {
            sim.save(&mut saved);
            sim.set_inputs(&[u2]);
        }
        for _ in 0..per {
            sim.step(&mut discard).unwrap();
        }
        row(&mut sim);
    }
    sim.restore(&saved);
    sim.set_inputs(&[u2]);
    for _ in half..n {
        for _ in 0..per {
            sim.step(&mut discard).unwrap();
        }
        row(&mut sim);
    }
    rows
}

#[test]
fn fmpy_stepping_with_inputs_and_restored_states_matches_tandem_stepped_alike() {
    if !fmpy_available("fmpy_stepping_with_inputs_and_restored_states_matches_tandem_stepped_alike") {
        return;
    }
    let rk4 = example("cruise_control.json");
    let bdf = with_solver("cruise_control.json", "bdf");
    for (model, version) in [
        (&rk4, FmiVersion::Fmi3),
        (&rk4, FmiVersion::Fmi2),
        (&bdf, FmiVersion::Fmi3),
    ] {
        let report = export_fmu(model, version);
        // Two model steps per communication step; the pedal (value
        // reference 1) at 0.3, then 0.8.
        let h = 2.0 * report.settings.step;
        let n = 400;
        let said = fmpy(&[
            "slave",
            report.path.to_str().unwrap(),
            &h.to_string(),
            &n.to_string(),
            "1",
            "0.3",
            "0.8",
        ]);
        let (first, again) = said.split_once("restored\n").expect("the driver restored the state");
        let (first, again) = (rows(first), rows(again));
        let tandem = tandem_stepped(model, 2, n, (0.3, 0.8));
        let (tandem_first, tandem_again) = tandem.split_at(n + 1);
        let difference = max_relative_difference(&first, tandem_first);
        println!(
            "{} FMI {version} stepped: max relative difference {difference:e}",
            model.display()
        );
        assert!(identical(&first, tandem_first), "{}: {difference:e}", model.display());
        assert!(
            identical(&again, tandem_again),
            "{}: after the restore",
            model.display()
        );
        assert!(identical(&again, &first[n / 2 + 1..]), "restoring repeats the steps");
        // The input change shows: the reference speed is 50 × pedal.
        let v_ref = |row: &Vec<f64>| row[2];
        assert_eq!(v_ref(&first[0]), 15.0);
        assert_eq!(v_ref(&first[n]), 40.0);
    }
}

#[test]
fn errors_reach_the_importers_logger_naming_the_call_and_the_fix() {
    if !fmpy_available("errors_reach_the_importers_logger_naming_the_call_and_the_fix") {
        return;
    }
    for version in VERSIONS {
        let report = export_fmu(&example("cruise_control.json"), version);
        let said = fmpy(&["errors", report.path.to_str().unwrap(), "0.01"]);
        let prefix = if version == FmiVersion::Fmi3 { "fmi3" } else { "fmi2" };
        for expected in [
            "doStep: status 3".to_string(),
            format!("  {prefix}DoStep: communicationStepSize -0.01 s: give a positive, finite step"),
            "set output: status 3".to_string(),
            format!(
                "  {prefix}Set{}: variable \"v\" (value reference 2) is an output: only inputs and parameters can be set",
                if version == FmiVersion::Fmi3 { "Float64" } else { "Real" }
            ),
            "instantiate: Failed to instantiate".to_string(),
            format!("  {prefix}Instantiate"),
            "neither model.json nor builtin is there".to_string(),
        ] {
            assert!(said.contains(&expected), "FMI {version}: {expected:?} in\n{said}");
        }
    }
}
