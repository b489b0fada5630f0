//! The large sparse problems of `tandem-bench stiff`: the 2D Brusselator
//! (reaction–diffusion on a periodic grid) and the battery pack, solved by
//! Tandem's BDF with its coloured difference Jacobian and sparse LU, and by
//! CVODE with KLU and analytic Jacobians (`bench/cvode/sparse.c`). Both are
//! held to the accuracy of a CVODE solution at tolerances 1e-4 as tight,
//! computed in the same run.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use tandem_models::plants::pack::Pack;
use tandem_models::plants::testset::significant_digits;
use tandem_models::{Layout, Model, StateRef};
use tandem_runtime::bdf::helpers::pin_to_core;
use tandem_runtime::bdf::jacobian::{Increments, Jacobian};
use tandem_runtime::linalg::{Factors, LinearSolver};
use tandem_runtime::{Bdf, BdfOptions, ModelOde, OdeSystem, Tolerance};

use super::{harness_figures, Figures};

/// The Brusselator's constants: `A`, `B` and the diffusion coefficient.
const A: f64 = 1.0;
const B: f64 = 3.4;
const ALPHA: f64 = 0.002;

/// The pack's discharge current (A) and coolant temperature (°C).
const PACK_CURRENT: f64 = 100.0;
const PACK_COOLANT: f64 = 25.0;

/// A case: the harness's problem name, its size, and the run's tolerances.
struct Case {
    problem: &'static str,
    size: usize,
    rtol: f64,
    atol: f64,
}

/// The cases: Brusselators of 2048 and 4608 states and a pack of 2000.
const CASES: [Case; 3] = [
    Case {
        problem: "BRUSS2D",
        size: 32,
        rtol: 1e-6,
        atol: 1e-8,
    },
    Case {
        problem: "BRUSS2D",
        size: 48,
        rtol: 1e-6,
        atol: 1e-8,
    },
    Case {
        problem: "PACK",
        size: 400,
        rtol: 1e-6,
        atol: 1e-8,
    },
];

/// The 2D Brusselator on a periodic `grid × grid` mesh of the unit square,
/// the species `u`, `v` interleaved per point:
/// `u' = A + u²v − (B+1)u + α N² Δu`, `v' = Bu − u²v + α N² Δv`.
#[derive(Clone)]
struct Brusselator {
    grid: usize,
    layout: Layout,
}

impl Brusselator {
    /// On a `grid × grid` mesh.
    fn new(grid: usize) -> Self {
        let states = (0..grid * grid)
            .flat_map(|p| [format!("u[{p}]"), format!("v[{p}]")])
            .collect();
        Brusselator {
            grid,
            layout: Layout {
                states,
                ..Layout::default()
            },
        }
    }

    /// The index of species `s` at point `(i, j)`, wrapping around.
    fn at(&self, i: isize, j: isize, s: usize) -> usize {
        let n = self.grid as isize;
        2 * (i.rem_euclid(n) * n + j.rem_euclid(n)) as usize + s
    }
}

impl Model for Brusselator {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn fork(&self) -> Box<dyn Model> {
        Box::new(self.clone())
    }

    fn pure_derivatives(&self) -> bool {
        true
    }

    fn initial_state(&mut self, x: &mut [f64], _: &mut [f64]) {
        for i in 0..self.grid as isize {
            for j in 0..self.grid as isize {
                x[self.at(i, j, 0)] = 0.5 + j as f64 / self.grid as f64;
                x[self.at(i, j, 1)] = 1.0 + 5.0 * i as f64 / self.grid as f64;
            }
        }
    }

    fn outputs(&mut self, _: StateRef<'_>, _: &mut [f64]) {}

    fn derivatives(&mut self, s: StateRef<'_>, dy: &mut [f64]) {
        let y = s.x;
        let c = ALPHA * (self.grid * self.grid) as f64;
        for i in 0..self.grid as isize {
            for j in 0..self.grid as isize {
                let (u, v) = (y[self.at(i, j, 0)], y[self.at(i, j, 1)]);
                let laplacian = |s: usize, centre: f64| {
                    y[self.at(i - 1, j, s)]
                        + y[self.at(i + 1, j, s)]
                        + y[self.at(i, j - 1, s)]
                        + y[self.at(i, j + 1, s)]
                        - 4.0 * centre
                };
                dy[self.at(i, j, 0)] = A + u * u * v - (B + 1.0) * u + c * laplacian(0, u);
                dy[self.at(i, j, 1)] = B * u - u * u * v + c * laplacian(1, v);
            }
        }
    }

    fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
        let mut depends = vec![Vec::new(); 2 * self.grid * self.grid];
        for i in 0..self.grid as isize {
            for j in 0..self.grid as isize {
                for s in 0..2 {
                    let mut rows = vec![
                        self.at(i, j, 0),
                        self.at(i, j, 1),
                        self.at(i - 1, j, s),
                        self.at(i + 1, j, s),
                        self.at(i, j - 1, s),
                        self.at(i, j + 1, s),
                    ];
                    rows.sort_unstable();
                    rows.dedup();
                    depends[self.at(i, j, s)] = rows;
                }
            }
        }
        Some(depends)
    }
}

/// The most runs of a large case (each takes seconds).
const MAX_REPEATS: usize = 3;

/// Runs the large sparse cases, each timed as the median of `repeats` runs
/// (at most [`MAX_REPEATS`]), and prints them beside the goal (Tandem ≤ 0.5× CVODE's wall time
/// at equal accuracy).
pub fn run(harness: &Path, repeats: usize) -> anyhow::Result<()> {
    let repeats = repeats.clamp(1, MAX_REPEATS);
    println!();
    println!("Large sparse problems: Tandem BDF (T: coloured difference Jacobian, faer sparse LU) against CVODE 6.4 with KLU (C: analytic sparse Jacobian); digits against CVODE at tolerances 1e-4 as tight; wall = median of {repeats} runs");
    println!(
        "{:<13} {:>5}  {:>11}  {:>11}  {:>11}  {:>9}  {:>9}  {:>19}  {:>7}",
        "case", "n", "scd T/C", "nst T/C", "nfe T/C", "nfeLS T", "nje T/C", "wall ms T/C", "wall"
    );
    let mut ratios = Vec::new();
    let mut helped_walls = Vec::new();
    for case in &CASES {
        let label = format!("{}-{}", case.problem, case.size);
        let reference = cvode_sparse(harness, case, 1e-4 * case.rtol, 1e-4 * case.atol, 1)?;
        let theirs = cvode_sparse(harness, case, case.rtol, case.atol, repeats)?;
        let ours = tandem(case, repeats, 0)?;
        let helped = tandem(case, repeats, 1)?;
        if helped.y != ours.y {
            bail!("{label}: the Jacobian on two threads changed the solution");
        }
        helped_walls.push((label.clone(), ours.wall, helped.wall));
        let digits = |y: &[f64]| significant_digits(y, &reference.y, case.atol);
        let ratio = ours.wall.as_secs_f64() / theirs.wall.as_secs_f64();
        ratios.push(ratio);
        println!(
            "{label:<13} {:>5}  {:>5.2}/{:<5.2}  {:>5}/{:<5}  {:>5}/{:<5}  {:>9}  {:>4}/{:<4}  {:>9.1}/{:<9.1}  {ratio:>7.2}",
            ours.y.len(),
            digits(&ours.y),
            digits(&theirs.y),
            ours.steps,
            theirs.steps,
            ours.rhs,
            theirs.rhs,
            ours.rhs_jacobian,
            ours.jacobians,
            theirs.jacobians,
            ours.wall.as_secs_f64() * 1e3,
            theirs.wall.as_secs_f64() * 1e3,
        );
    }
    println!(
        "wall T/C: max {:.2}; goal <= 0.5 at equal accuracy",
        ratios.iter().cloned().fold(0.0, f64::max)
    );
    println!("The difference Jacobian on 2 threads (one helper with its own copy of the model; the same solution bit for bit):");
    for ((label, one, two), case) in helped_walls.into_iter().zip(&CASES) {
        let walls = jacobian_walls(case)?;
        println!(
            "  {label:<13} one Jacobian ({} column groups): {:>7.1} µs on 1 thread, {:>7.1} µs on 2 ({:.2}x), its LU {:>7.1} µs; whole run {:>7.1} ms, {:>7.1} ms ({:.2}x)",
            walls.groups,
            walls.alone.as_secs_f64() * 1e6,
            walls.helped.as_secs_f64() * 1e6,
            walls.alone.as_secs_f64() / walls.helped.as_secs_f64(),
            walls.factorisation.as_secs_f64() * 1e6,
            one.as_secs_f64() * 1e3,
            two.as_secs_f64() * 1e3,
            one.as_secs_f64() / two.as_secs_f64()
        );
    }
    Ok(())
}

/// Solves `case` with Tandem's BDF `repeats` times, its difference
/// Jacobians spread over `helpers` more threads.
fn tandem(case: &Case, repeats: usize, helpers: usize) -> anyhow::Result<Figures> {
    let options = BdfOptions {
        rtol: case.rtol,
        atol: Tolerance::Scalar(case.atol),
        ..BdfOptions::default()
    };
    let (mut model, u, t_end) = model_of(case);
    let n = model.layout().states.len();
    let mut y0 = vec![0.0; n];
    model.initial_state(&mut y0, &mut []);
    let mut walls = Vec::with_capacity(repeats);
    let mut last = None;
    for _ in 0..repeats {
        let start = Instant::now();
        let mut bdf = Bdf::new(n, options.clone(), model.sparsity())?;
        bdf.jacobian_mut()
            .spread(model.as_ref(), &vec![None; helpers], &pin_to_core())?;
        let mut system = ModelOde {
            model: model.as_mut(),
            xd: &[],
            u: &u,
        };
        let mut y = vec![0.0; n];
        bdf.init(&mut system, 0.0, &y0, t_end);
        bdf.solve_to(&mut system, t_end, f64::INFINITY, &mut y)?;
        walls.push(start.elapsed());
        last = Some((y, *bdf.stats()));
    }
    let (y, stats) = last.context("at least one run")?;
    Ok(Figures::of_runs(y, &stats, walls))
}

/// The case's model, its inputs and its end time.
fn model_of(case: &Case) -> (Box<dyn Model>, Vec<f64>, f64) {
    match case.problem {
        "BRUSS2D" => (Box::new(Brusselator::new(case.size)), Vec::new(), 10.0),
        _ => (Box::new(Pack::new(case.size)), vec![PACK_CURRENT, PACK_COOLANT], 600.0),
    }
}

/// Median wall times of one difference Jacobian at a case's initial state
/// and of the factorisation of its iteration matrix.
struct JacobianWalls {
    /// Column groups (evaluations of `f` per Jacobian).
    groups: usize,
    /// The Jacobian on the calling thread alone.
    alone: Duration,
    /// With one helper thread.
    helped: Duration,
    /// The numeric LU of `I − γJ`.
    factorisation: Duration,
}

/// Times one difference Jacobian at the initial state of `case`, alone and
/// with one helper, and the factorisation of `I − γJ`.
fn jacobian_walls(case: &Case) -> anyhow::Result<JacobianWalls> {
    const EVALUATIONS: usize = 201;
    let (mut model, u, _) = model_of(case);
    let n = model.layout().states.len();
    let (mut y, mut fy) = (vec![0.0; n], vec![0.0; n]);
    model.initial_state(&mut y, &mut []);
    let median = |mut walls: Vec<Duration>| {
        walls.sort();
        walls[walls.len() / 2]
    };
    let mut wall = |helpers: usize| -> anyhow::Result<(Jacobian, Duration)> {
        let mut jacobian = Jacobian::new(n, model.sparsity(), LinearSolver::Auto);
        jacobian.spread(model.as_ref(), &vec![None; helpers], &pin_to_core())?;
        let mut system = ModelOde {
            model: model.as_mut(),
            xd: &[],
            u: &u,
        };
        system.rhs(0.0, &y, &mut fy);
        let walls = (0..EVALUATIONS)
            .map(|_| {
                let start = Instant::now();
                jacobian.evaluate(&mut system, 0.0, &y, &fy, &[], 1e-3, Increments::Unit);
                start.elapsed()
            })
            .collect();
        Ok((jacobian, median(walls)))
    };
    let (jacobian, alone) = wall(0)?;
    let (_, helped) = wall(1)?;
    let mut factors = Factors::new(&jacobian.matrix);
    let factorisation = median(
        (0..EVALUATIONS)
            .map(|_| {
                let start = Instant::now();
                factors.factor_shifted(&jacobian.matrix, 1e-3);
                start.elapsed()
            })
            .collect(),
    );
    Ok(JacobianWalls {
        groups: jacobian.groups(),
        alone,
        helped,
        factorisation,
    })
}

/// Solves `case` with CVODE and KLU through the harness at `rtol`, `atol`.
fn cvode_sparse(harness: &Path, case: &Case, rtol: f64, atol: f64, repeats: usize) -> anyhow::Result<Figures> {
    let output = Command::new(harness)
        .args([
            case.problem,
            &case.size.to_string(),
            &rtol.to_string(),
            &atol.to_string(),
            &repeats.to_string(),
        ])
        .output()
        .with_context(|| format!("cannot run {}", harness.display()))?;
    if !output.status.success() {
        bail!(
            "CVODE's sparse harness failed on {}-{}: {}",
            case.problem,
            case.size,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    harness_figures(&output.stdout)
}
