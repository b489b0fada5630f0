//! `tandem export`: pack a model as an FMU.

use std::path::PathBuf;

use clap::Args;
use tandem_fmu::FmiVersion;
use tandem_models::ModelRef;

use crate::out::say;

/// Arguments of `tandem export`.
#[derive(Args)]
pub struct ExportArgs {
    /// The model: a JSON block diagram, or the name of a built-in model.
    model: PathBuf,
    /// The FMU file to write (Co-Simulation, with the model's own solver
    /// and step).
    #[arg(long)]
    fmu: PathBuf,
    /// The FMI version of the FMU: 3 (3.0) or 2 (2.0).
    #[arg(long, default_value = "3")]
    fmi: FmiVersion,
}

/// Runs `tandem export`.
pub fn run(args: &ExportArgs) -> anyhow::Result<()> {
    let exe = std::env::current_exe()?;
    let library = tandem_fmu::library_beside(&exe)?;
    let model = ModelRef::parse(&args.model.to_string_lossy(), std::path::Path::new(""));
    let report = tandem_fmu::export(&model, &args.fmu, &library, args.fmi)?;
    say!("wrote {report}");
    Ok(())
}
