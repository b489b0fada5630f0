//! `tandem export`: pack a model as an FMU.

use std::path::PathBuf;

use clap::Args;
use tandem_config::Overrides;
use tandem_fmu::FmiVersion;
use tandem_models::ModelRef;

use crate::out::say;

/// Arguments of `tandem export`.
#[derive(Args)]
pub struct ExportArgs {
    /// The model: a JSON block diagram, or the name of a built-in model.
    model: PathBuf,
    /// The FMU file to write (Co-Simulation, running the model with the
    /// solver and step below).
    #[arg(long)]
    fmu: PathBuf,
    /// The FMI version of the FMU: 3 (3.0) or 2 (2.0).
    #[arg(long, default_value = "3")]
    fmi: FmiVersion,
    /// The FMU's integration method: euler, heun, rk4 or bdf (default: the
    /// model's, else rk4).
    #[arg(long)]
    solver: Option<String>,
    /// Its fixed step in seconds (bdf: its output grid); the importer's
    /// communication step must be a whole multiple (default: the model's,
    /// else 0.001).
    #[arg(long)]
    step: Option<f64>,
    /// The default experiment's stop time in seconds (default: the
    /// model's, else 10).
    #[arg(long)]
    stop: Option<f64>,
    /// Relative tolerance of bdf.
    #[arg(long)]
    rtol: Option<f64>,
    /// Absolute tolerance of bdf.
    #[arg(long)]
    atol: Option<f64>,
}

/// Runs `tandem export`.
pub fn run(args: &ExportArgs) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let library = tandem_fmu::library_beside(&exe)?;
    let model = ModelRef::parse(&args.model.to_string_lossy(), std::path::Path::new(""));
    let overrides = Overrides {
        solver: args.solver.clone(),
        step: args.step,
        stop: args.stop,
        rtol: args.rtol,
        atol: args.atol,
    };
    let report = tandem_fmu::export(&model, &args.fmu, &library, args.fmi, &overrides)?;
    say!("wrote {report}");
    Ok(())
}
