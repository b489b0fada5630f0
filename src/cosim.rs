//! `tandem cosim`: run a co-simulation system file or an SSP package,
//! write CSV, optionally plot.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use tandem_config::bounds::check_output_size;
use tandem_models::reference::file_stem;
use tandem_runtime::record::{Both, Trace};

use crate::out::say;
use crate::progress::{human, Progress};
use crate::sim::{csv_file, OutputArgs};

/// Arguments of `tandem cosim`.
#[derive(Args)]
pub struct CosimArgs {
    /// The system file (TOML; see cosim/SYSTEM.md), or an SSP package
    /// (`.ssp`).
    system: PathBuf,
    // Every sub-model's outputs at every macro step go to the CSV file.
    #[command(flatten)]
    output: OutputArgs,
    /// Run every FMU's code in a process of its own, as `fmu.isolate =
    /// true` does for one (see `tandem sim --isolate`).
    #[arg(long)]
    isolate: bool,
    /// Evaluate block diagrams with the interpreter instead of compiling
    /// them to machine code (the results are the same bit for bit).
    #[arg(long)]
    interpret: bool,
}

/// Runs `tandem cosim`.
pub fn run(args: &CosimArgs) -> anyhow::Result<()> {
    if let Some(plot) = &args.output.plot {
        crate::plot::check_path(plot)?;
    }
    let loading = tandem_cosim::Loading {
        isolate_fmus: args.isolate,
        interpret: args.interpret,
    };
    // An SSP package is unpacked for as long as its system runs.
    let (system, _package) = if tandem_cosim::ssp::is_ssp(&args.system) {
        let (system, package) = tandem_cosim::ssp::load(&args.system, loading)?;
        (system, Some(package))
    } else {
        (tandem_cosim::load_with(&args.system, loading)?, None)
    };
    let outputs = system.output_variables();
    let names: Vec<String> = outputs.iter().map(|v| v.name.clone()).collect();
    let master = system.master();
    let (steps, step, order) = (master.steps, master.step, system.order().join(" → "));
    check_output_size(steps as f64 + 1.0, names.len() + 1, args.output.large_output)
        .with_context(|| args.system.display().to_string())?;
    let (out, mut csv) = csv_file(&args.output, &args.system, &names)?;
    let mut trace = Trace::default();
    let mut progress = Progress::new();
    let result = if args.output.plot.is_some() {
        system.run(&mut Both(&mut csv, &mut trace), &mut |f| progress.update(f))
    } else {
        system.run(&mut csv, &mut |f| progress.update(f))
    };
    progress.finish();
    let summary = result.with_context(|| {
        format!(
            "{} (the rows before this are in {})",
            args.system.display(),
            out.display()
        )
    })?;
    if let Some(plot) = &args.output.plot {
        crate::plot::write(plot, file_stem(&args.system), &trace, &outputs)
            .with_context(|| format!("cannot draw {}", plot.display()))?;
    }
    let iterations = match summary.unconverged {
        0 => format!("{} repeated macro steps", summary.iterations),
        n => format!(
            "{} repeated macro steps, {n} not converged (largest change left {:e})",
            summary.iterations, summary.largest_change
        ),
    };
    say!(
        "{}: {} macro steps of {step} s to t = {} s ({order}) in {} ({iterations}); wrote {}{}",
        file_stem(&args.system),
        summary.macro_steps,
        summary.macro_steps as f64 * step,
        human(summary.wall),
        out.display(),
        args.output
            .plot
            .as_ref()
            .map(|p| format!(" and {}", p.display()))
            .unwrap_or_default()
    );
    Ok(())
}
