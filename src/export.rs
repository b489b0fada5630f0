//! `tandem export`: pack a model as an FMU.

use std::path::PathBuf;

use clap::Args;
use tandem_fmu::FmiVersion;
use tandem_models::ModelRef;

use crate::out::say;
use crate::sim::SolverArgs;

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
    // The FMU runs the model with these over its own settings; the
    // importer's communication step must be a whole multiple of its step,
    // and the stop time is its default experiment's.
    #[command(flatten)]
    solver: SolverArgs,
}

/// Runs `tandem export`.
pub fn run(args: &ExportArgs) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let library = tandem_fmu::library_beside(&exe)?;
    let model = ModelRef::parse(&args.model.to_string_lossy(), std::path::Path::new(""));
    let report = tandem_fmu::export(&model, &args.fmu, &library, args.fmi, &args.solver.overrides())?;
    say!("wrote {report}");
    Ok(())
}
