//! The Modelica Reference FMUs (modelica/Reference-FMUs), when they are
//! here: each model run by Model Exchange and Co-Simulation as FMPy runs
//! it, its numeric columns judged against its published output by the FMI
//! cross-check's tube test (FMPy's `fmpy.cross_check.validate_signal`,
//! reimplemented below from its definition).
//!
//! CI has no copy of them (nothing outside the package registries can be
//! fetched there, and none of their code is kept here), so the test skips,
//! saying so, unless `TANDEM_REFERENCE_FMUS` names a folder holding the
//! built FMUs (`<Model>.fmu`, at any depth) and
//! `TANDEM_REFERENCE_FMUS_SOURCE` their source tree (for
//! `<Model>/<Model>_out.csv` and `_in.csv`). Build them with cmake
//! (`-DFMI_VERSION=2` or `3`) outside this repository.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use tandem_fmi::{Fmu, FmuModel, FmuSlave, InterfaceKind, Parameters, Recorded, StepEnd};
use tandem_models::Model;
use tandem_runtime::record::Trace;
use tandem_runtime::{FixedStep, Method, Simulation};

/// A CSV file's columns by name (the first is time); cells that are not
/// numbers (`true`/`false` aside) leave their column out. A cell of
/// several numbers apart (an FMI 3 array, as the reference outputs write
/// one) is its elements, columns `name[1]`, `name[2]`, … in row-major
/// order as Tandem names them.
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|l| !l.trim().is_empty()).peekable();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(|n| n.trim().trim_matches('"').to_string())
        .collect();
    // Each column's element count, from the first row.
    let widths: Vec<usize> = match lines.peek() {
        Some(first) => first.split(',').map(|c| c.split_whitespace().count().max(1)).collect(),
        None => vec![1; header.len()],
    };
    let names: Vec<String> = header
        .iter()
        .zip(&widths)
        .flat_map(|(name, &width)| match width {
            1 => vec![name.clone()],
            _ => (1..=width).map(|i| format!("{name}[{i}]")).collect(),
        })
        .collect();
    let mut columns = vec![Vec::new(); names.len()];
    let mut numeric = vec![true; names.len()];
    for line in lines {
        let cells = line
            .split(',')
            .take(header.len())
            .flat_map(|cell| match cell.split_whitespace().count() {
                0 | 1 => vec![cell],
                _ => cell.split_whitespace().collect(),
            });
        for (j, cell) in cells.enumerate().take(names.len()) {
            let value = match cell.trim() {
                "true" => Some(1.0),
                "false" => Some(0.0),
                c => c.parse::<f64>().ok(),
            };
            match value {
                Some(v) => columns[j].push(v),
                None => numeric[j] = false,
            }
        }
    }
    let kept: Vec<usize> = (0..names.len()).filter(|&j| numeric[j]).collect();
    (
        kept.iter().map(|&j| names[j].clone()).collect(),
        kept.iter().map(|&j| columns[j].clone()).collect(),
    )
}

/// Linear interpolation of (xp, fp) at x, held beyond the ends.
fn interp(x: f64, xp: &[f64], fp: &[f64]) -> f64 {
    let after = xp.partition_point(|&v| v <= x);
    if after == 0 {
        return fp[0];
    }
    if after == xp.len() {
        return fp[xp.len() - 1];
    }
    let (x0, x1) = (xp[after - 1], xp[after]);
    fp[after - 1] + (fp[after] - fp[after - 1]) * (x - x0) / (x1 - x0)
}

/// The share of `y(t)` outside the tube around `y_ref(t_ref)`, as the
/// cross-check's `validate_signal` defines it: the reference resampled at
/// 1000 points, a band of ±10 % of its range (or of its value, or 0.5 for
/// 0) widened over 21 samples, samples within [t_start, t_stop] counted.
fn outliers(t: &[f64], y: &[f64], t_ref: &[f64], y_ref: &[f64], t_start: f64, t_stop: f64) -> f64 {
    const NUM: usize = 1000;
    const DX: usize = 21;
    let band_t: Vec<f64> = (0..NUM)
        .map(|i| t_start + (t_stop - t_start) * i as f64 / (NUM - 1) as f64)
        .collect();
    // Duplicate reference times: the first of each.
    let mut xp = Vec::new();
    let mut fp = Vec::new();
    for (i, (&tr, &yr)) in t_ref.iter().zip(y_ref).enumerate() {
        if i == 0 || tr > t_ref[i - 1] {
            xp.push(tr);
            fp.push(yr);
        }
    }
    let band: Vec<f64> = band_t.iter().map(|&x| interp(x, &xp, &fp)).collect();
    let (lo, hi) = band
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
    let w = if lo == hi {
        if lo == 0.0 {
            0.5
        } else {
            lo.abs() * 0.1
        }
    } else {
        (hi - lo) * 0.1
    };
    // scipy's minimum_filter1d/maximum_filter1d of size 21 (centred,
    // "reflect" at the ends, which for a window of 10 either side keeps the
    // extreme within the window).
    let half = DX / 2;
    let y_min: Vec<f64> = (0..NUM)
        .map(|i| {
            band[i.saturating_sub(half)..(i + half + 1).min(NUM)]
                .iter()
                .copied()
                .fold(f64::INFINITY, f64::min)
                - w
        })
        .collect();
    let y_max: Vec<f64> = (0..NUM)
        .map(|i| {
            band[i.saturating_sub(half)..(i + half + 1).min(NUM)]
                .iter()
                .copied()
                .fold(f64::NEG_INFINITY, f64::max)
                + w
        })
        .collect();
    let out = t
        .iter()
        .zip(y)
        .filter(|(&ti, &yi)| {
            ti >= t_start
                && ti <= t_stop
                && (yi < interp(ti, &band_t, &y_min) || yi > interp(ti, &band_t, &y_max) || yi.is_nan())
        })
        .count();
    out as f64 / t.len() as f64
}

/// An input file's columns (time first), as [`read_csv`] gives them.
type Table = (Vec<String>, Vec<Vec<f64>>);

/// Writes into `u` the inputs named `inputs` at time `t` from `table`, as
/// FMPy's `Input` does: continuous ones interpolated, discrete ones (the
/// `discrete` flags) from the last row at or before `t`.
fn sample(table: &Table, inputs: &[String], discrete: &[bool], t: f64, u: &mut [f64]) {
    let (names, columns) = table;
    let times = &columns[0];
    let after = times.partition_point(|&time| time <= t);
    for (k, name) in inputs.iter().enumerate() {
        let Some(c) = names.iter().position(|n| n == name) else {
            continue;
        };
        u[k] = if discrete[k] {
            columns[c][after.max(1) - 1]
        } else {
            interp(t, times, &columns[c])
        };
    }
}

/// Whether each input (a signal name, an array's by element) is discrete.
fn discrete_flags(fmu: &Fmu, inputs: &[String]) -> Vec<bool> {
    inputs
        .iter()
        .map(|name| {
            let base = name.split('[').next().unwrap_or(name);
            fmu.description()
                .variable(base)
                .is_some_and(|v| v.variability != tandem_fmi::Variability::Continuous)
        })
        .collect()
}

/// Runs `fmu` by `interface` to `stop` at the output interval `step`,
/// recording `names`, with the inputs of `input`, when given; returns time
/// and the recorded columns.
fn simulate(
    fmu: &Fmu,
    interface: InterfaceKind,
    names: &[String],
    stop: f64,
    step: f64,
    input: Option<&Table>,
) -> Result<(Vec<f64>, Vec<Vec<f64>>), String> {
    let recorded = Recorded::patterns(names.iter().cloned());
    match interface {
        InterfaceKind::ModelExchange => {
            let mut model = FmuModel::with(fmu, &Parameters::new(), &recorded, 0.0).map_err(|e| e.to_string())?;
            let settings = FixedStep {
                solver: Method::Rk4.into(),
                step: step.min(1e-3),
                stop,
            };
            let inputs: Vec<String> = model.layout().inputs.iter().map(|v| v.name.clone()).collect();
            let discrete = discrete_flags(fmu, &inputs);
            let mut trace = Trace::default();
            let mut sim = Simulation::new(&mut model, settings).map_err(|e| e.to_string())?;
            match input {
                Some(table) => sim.run_driven(&mut trace, &mut |_| {}, &mut |t, u| {
                    sample(table, &inputs, &discrete, t, u)
                }),
                None => sim.run(&mut trace, &mut |_| {}),
            }
            .map_err(|e| e.to_string())?;
            let columns = (0..model.layout().outputs.len()).map(|j| trace.column(j)).collect();
            Ok((trace.time, columns))
        }
        InterfaceKind::CoSimulation => {
            let mut slave =
                FmuSlave::with(fmu, &Parameters::new(), &recorded, 0.0, Some(stop)).map_err(|e| e.to_string())?;
            let n = slave.output_variables().len();
            let inputs: Vec<String> = slave.input_variables().iter().map(|v| v.name.clone()).collect();
            let discrete = discrete_flags(fmu, &inputs);
            let mut u: Vec<f64> = slave.input_variables().iter().map(|v| v.default).collect();
            let mut y = vec![0.0; n];
            let (mut time, mut columns) = (Vec::new(), vec![Vec::new(); n]);
            let mut t = 0.0;
            let mut k = 0u64;
            loop {
                if let Some(table) = input {
                    sample(table, &inputs, &discrete, t, &mut u);
                    slave.set_inputs(&u).map_err(|e| e.to_string())?;
                }
                slave.outputs(&mut y).map_err(|e| e.to_string())?;
                time.push(t);
                for (c, &v) in columns.iter_mut().zip(&y) {
                    c.push(v);
                }
                if t >= stop - 1e-9 {
                    break;
                }
                let next = ((k + 1) as f64 * step).min(stop);
                match slave.do_step(t, next - t).map_err(|e| e.to_string())? {
                    StepEnd::Done => t = next,
                    StepEnd::Terminated(at) => {
                        slave.outputs(&mut y).map_err(|e| e.to_string())?;
                        time.push(at);
                        for (c, &v) in columns.iter_mut().zip(&y) {
                            c.push(v);
                        }
                        break;
                    }
                }
                k += 1;
            }
            Ok((time, columns))
        }
    }
}

fn fmus_in(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            fmus_in(&path, found);
        } else if path.extension().is_some_and(|e| e == "fmu") {
            found.push(path);
        }
    }
}

#[test]
fn the_reference_fmus_pass_the_cross_checks_tube_test() {
    let (Some(fmus), Some(source)) = (
        std::env::var_os("TANDEM_REFERENCE_FMUS"),
        std::env::var_os("TANDEM_REFERENCE_FMUS_SOURCE"),
    ) else {
        println!(
            "skipped: TANDEM_REFERENCE_FMUS (the built Reference FMUs) and TANDEM_REFERENCE_FMUS_SOURCE (their \
             source, for the reference outputs) are not both set"
        );
        return;
    };
    let mut found = Vec::new();
    fmus_in(Path::new(&fmus), &mut found);
    found.sort();
    let mut report: Vec<String> = Vec::new();
    let mut failed: HashMap<String, String> = HashMap::new();
    for path in &found {
        let model = path.file_stem().unwrap().to_string_lossy().to_string();
        let reference = Path::new(&source).join(&model).join(format!("{model}_out.csv"));
        let fmu = match Fmu::open(path) {
            Ok(fmu) => fmu,
            Err(e) => {
                report.push(format!("{}: refused: {e}", path.display()));
                if model != "Clocks" {
                    failed.insert(path.display().to_string(), e.to_string());
                }
                continue;
            }
        };
        if !reference.exists() || model == "Roberts" {
            // Roberts' packaged output is a copy of BouncingBall's.
            report.push(format!("{}: no reference output to compare with", path.display()));
            continue;
        }
        let input_file = Path::new(&source).join(&model).join(format!("{model}_in.csv"));
        // Feedthrough's packaged output is a run without its input file
        // (every output 0 throughout), as Roberts' is BouncingBall's: it is
        // compared without inputs (FMPy fed the inputs fails it too);
        // echoing inputs of every type is tested on types3.
        let input = (input_file.exists() && model != "Feedthrough").then(|| read_csv(&input_file));
        let (all_names, all_columns) = read_csv(&reference);
        // The reference's columns this FMU has (FMI 2's Feedthrough has no
        // Float32, the output file being FMI 3's); String and Binary
        // columns are not numbers and were dropped by read_csv.
        let (names, columns): (Vec<String>, Vec<Vec<f64>>) = all_names
            .into_iter()
            .zip(all_columns)
            .enumerate()
            .filter(|(j, (name, _))| {
                let variable = name.split('[').next().unwrap_or(name);
                *j == 0 || fmu.description().variable(variable).is_some()
            })
            .map(|(_, pair)| pair)
            .unzip();
        let t_ref = &columns[0];
        let stop = *t_ref.last().unwrap();
        let step = fmu.description().default_experiment.step.unwrap_or(stop / 500.0);
        for interface in [InterfaceKind::ModelExchange, InterfaceKind::CoSimulation] {
            if fmu.description().interface(interface).is_none() {
                continue;
            }
            let what = format!("{} {}", path.display(), interface.name());
            match simulate(&fmu, interface, &names[1..], stop, step, input.as_ref()) {
                Err(e) => {
                    report.push(format!("{what}: error: {e}"));
                    failed.insert(what, e);
                }
                Ok((t, ys)) => {
                    let worst = ys
                        .iter()
                        .zip(&columns[1..])
                        .zip(&names[1..])
                        .map(|((y, y_ref), name)| (outliers(&t, y, t_ref, y_ref, 0.0, stop), name))
                        .fold(
                            (0.0, String::new()),
                            |a, (o, n)| if o > a.0 { (o, n.clone()) } else { a },
                        );
                    let pass = worst.0 <= 0.1 && *t.last().unwrap() >= stop - 1e-9;
                    let inside = if worst.0 == 0.0 {
                        format!("all {} signals inside the tube", names.len() - 1)
                    } else {
                        format!(
                            "worst signal {} with {:.1} % outside the tube",
                            worst.1,
                            worst.0 * 100.0
                        )
                    };
                    report.push(format!(
                        "{what}: {} ({inside}; ended at t = {} s)",
                        if pass { "pass" } else { "FAIL" },
                        t.last().unwrap()
                    ));
                    if !pass {
                        failed.insert(what, format!("{worst:?}"));
                    }
                }
            }
        }
    }
    println!("{}", report.join("\n"));
    assert!(failed.is_empty(), "{failed:#?}");
}

/// The tube test itself, on signals whose answer is known: the reference
/// passes against itself, a copy 20 % of its range off fails, a copy
/// shifted within the tube's 21-sample width passes.
#[test]
fn the_tube_test_tells_a_wrong_signal_from_a_right_one() {
    let t: Vec<f64> = (0..=200).map(|i| i as f64 * 0.05).collect();
    let y: Vec<f64> = t.iter().map(|&t| t.sin()).collect();
    assert_eq!(outliers(&t, &y, &t, &y, 0.0, 10.0), 0.0);
    let off: Vec<f64> = y.iter().map(|v| v + 0.4).collect();
    assert!(outliers(&t, &off, &t, &y, 0.0, 10.0) > 0.5);
    let late: Vec<f64> = t.iter().map(|&t| (t - 0.05).sin()).collect();
    assert_eq!(outliers(&t, &late, &t, &y, 0.0, 10.0), 0.0);
    // A constant 0 gets a band of ±0.5, any other constant ±10 %.
    let zero = vec![0.0; t.len()];
    assert_eq!(outliers(&t, &vec![0.4; t.len()], &t, &zero, 0.0, 10.0), 0.0);
    assert_eq!(outliers(&t, &vec![0.6; t.len()], &t, &zero, 0.0, 10.0), 1.0);
}
