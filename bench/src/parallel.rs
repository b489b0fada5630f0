//! `tandem-bench parallel`: how much of the implicit thread's work could
//! run on a helper core. Its work per frame is the BDF's step to the frame
//! (Newton iterations, and now and then a Jacobian and an LU) and the fast
//! side's iteration matrix (a Jacobian and an LU, every frame). The
//! Jacobians' column groups, the LUs and the fast side's matrix do not
//! depend on the Newton iterations running beside them: that is the part a
//! helper could take. Measured on the EV plant over its drive cycle, with
//! the examples' tolerances, its inputs either smooth (the drive cycle) or
//! stepwise (sampled every 10 ms, as the ECU's CAN messages bring them).

use std::hint::black_box;
use std::time::{Duration, Instant};

use tandem_runtime::bdf::jacobian::{Increments, Jacobian};
use tandem_runtime::linalg::{Factors, LinearSolver};
use tandem_runtime::tandem::inputs::{InputSource, Profile};
use tandem_runtime::{factor_iteration_matrix, Bdf, BdfOptions, ModelOde, OdeSystem, Tolerance, WMethod};

use crate::realtime::ev;

/// The frame (s).
const FRAME: f64 = 1e-3;
/// The drive cycle's length (s).
const DURATION: f64 = 20.0;

/// What the implicit thread did over a run, and what it took.
struct Work {
    /// Time in the BDF's steps.
    bdf: Duration,
    /// The BDF's Jacobian evaluations and LU factorisations.
    jacobians: u64,
    factorizations: u64,
    /// Time making the fast side's matrix (a Jacobian and an LU) each frame.
    matrices: Duration,
    /// One Jacobian and one LU, each on its own (mean).
    jacobian: Duration,
    lu: Duration,
}

/// Integrates the EV plant frame by frame as the implicit thread does
/// (inputs held over each frame; the BDF restarts where stepwise inputs
/// change), making the fast side's matrix at each frame's state, and times
/// each part. `sample`: inputs read every this many seconds and held.
fn integrate(sample: Option<f64>) -> anyhow::Result<Work> {
    let (mut model, signals) = ev();
    let n = model.layout().states.len();
    let mut inputs = Profile::new(signals);
    let (mut x, mut xd) = (vec![0.0; n], vec![0.0; model.layout().discrete]);
    model.initial_state(&mut x, &mut xd);
    let mut u: Vec<f64> = model.layout().inputs.iter().map(|v| v.default).collect();
    let options = BdfOptions {
        rtol: 1e-4,
        atol: Tolerance::Scalar(1e-4),
        increments: Increments::Unit,
        ..BdfOptions::default()
    };
    let mut bdf = Bdf::new(n, options, model.sparsity())?;
    let mut jacobian = Jacobian::new(n, model.sparsity(), LinearSolver::Auto);
    let mut lu = Factors::new(&jacobian.matrix);
    let mut fy = vec![0.0; n];
    let (mut in_bdf, mut in_matrices, mut in_jacobian, mut in_lu) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO, Duration::ZERO);
    let frames = (DURATION / FRAME).round() as u64;
    let mut held = vec![f64::NAN; u.len()];
    for k in 0..frames {
        let (a, b) = (k as f64 * FRAME, (k + 1) as f64 * FRAME);
        let read_at = sample.map_or(a, |p| (a / p + 1e-9).floor() * p);
        inputs.read(read_at, &mut u);
        let mut ode = ModelOde {
            model: model.as_mut(),
            xd: &xd,
            u: &u,
        };
        let started = Instant::now();
        if k == 0 || (sample.is_some() && u != held) {
            bdf.init(&mut ode, a, &x, b);
            held.copy_from_slice(&u);
        }
        while bdf.t() < b {
            bdf.step(&mut ode, b)?;
        }
        x.copy_from_slice(bdf.y());
        in_bdf += started.elapsed();

        // The fast side's matrix at this state, timed whole and in parts.
        let started = Instant::now();
        ode.rhs(b, &x, &mut fy);
        jacobian.evaluate(&mut ode, b, &x, &fy, &[], FRAME, Increments::Unit);
        let evaluated = Instant::now();
        black_box(factor_iteration_matrix(
            &mut lu,
            &jacobian.matrix,
            FRAME,
            WMethod::Ros34pw2,
        ));
        let factored = Instant::now();
        in_matrices += factored - started;
        in_jacobian += evaluated - started;
        in_lu += factored - evaluated;
    }
    let stats = bdf.stats();
    Ok(Work {
        bdf: in_bdf,
        jacobians: stats.jacobian_evals,
        factorizations: stats.factorizations,
        matrices: in_matrices,
        jacobian: in_jacobian / frames as u32,
        lu: in_lu / frames as u32,
    })
}

/// `tandem-bench parallel`.
pub fn run() -> anyhow::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!(
        "parallel part of the implicit thread's work: ev plant ({} states), 1 ms frames, 20 s drive cycle,",
        ev().0.layout().states.len()
    );
    println!("  bdf rtol 1e-4 atol 1e-4 (the examples'), a ros34pw2 matrix for the fast side every frame; µs per frame (mean)");
    println!(
        "  {:<24} {:>8} {:>14} {:>12} {:>10} {:>16}",
        "inputs", "bdf", "of it jac+LU", "fast matrix", "parallel", "bound, 1 helper"
    );
    for (name, sample) in [("drive cycle (smooth)", None), ("stepwise every 10 ms", Some(0.01))] {
        let w = integrate(sample)?;
        let frames = DURATION / FRAME;
        let per_frame = |d: Duration| d.as_secs_f64() * 1e6 / frames;
        let bdf = per_frame(w.bdf);
        let matrix = per_frame(w.matrices);
        let (jacobian, lu) = (w.jacobian.as_secs_f64() * 1e6, w.lu.as_secs_f64() * 1e6);
        let in_bdf = (w.jacobians as f64 * jacobian + w.factorizations as f64 * lu) / frames;
        let share = (in_bdf + matrix) / (bdf + matrix);
        // Amdahl's bound with the parallel part split over two cores.
        let bound = 1.0 / ((1.0 - share) + share / 2.0);
        println!(
            "  {name:<24} {bdf:>8.1} {in_bdf:>14.1} {matrix:>12.1} {:>9.0}% {bound:>15.2}x",
            share * 100.0
        );
        println!(
            "  {:<24} ({} Jacobians at {jacobian:.1} µs, {} LUs at {lu:.1} µs)",
            "", w.jacobians, w.factorizations
        );
    }
    println!(
        "  this machine: {cores} cores; the fast thread and the implicit thread take one each, so a helper needs a third"
    );
    Ok(())
}
