//! `tandem dcp-slave` (a model as a DCP slave) and `tandem federate` (a
//! DCP master running a federation file).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::Args;
use tandem_config::bounds::check_output_size;
use tandem_dcp::federation::{self, Federation};
use tandem_dcp::slave::{Slave, SlaveConfig};
use tandem_dcp::types::OpMode;
use tandem_models::reference::file_stem;

use crate::out::say;
use crate::progress::{human, Progress};
use crate::sim::{csv_file, OutputArgs};

/// Arguments of `tandem dcp-slave`.
#[derive(Args)]
pub struct SlaveArgs {
    /// The slave file (TOML; see dcp/FEDERATION.md).
    slave: PathBuf,
    /// Write the slave's DCP description (XML) here and exit.
    #[arg(long)]
    description: Option<PathBuf>,
}

/// Runs `tandem dcp-slave`: serves masters until killed.
pub fn slave(args: &SlaveArgs) -> anyhow::Result<()> {
    let config = SlaveConfig::load(&args.slave)?;
    let name = config.name().to_string();
    let mut slave = Slave::bind(config)?;
    if let Some(path) = &args.description {
        std::fs::write(path, slave.description().write())
            .with_context(|| format!("cannot write {}", path.display()))?;
        say!("{name}: wrote its DCP slave description to {}", path.display());
        return Ok(());
    }
    say!("{name}: DCP slave listening on {} (UDP)", slave.local_addr());
    let never = AtomicBool::new(false);
    slave.serve(&never, &mut |slave| {
        let ages = slave.data_ages();
        let age = if ages.count == 0 {
            String::new()
        } else {
            format!(
                "; input data age p50 {:.1} µs, p99 {:.1} µs",
                ages.percentile(0.5) * 1e6,
                ages.percentile(0.99) * 1e6
            )
        };
        say!("{name}: run ended; since start: {}{age}", slave.counters());
    })?;
    Ok(())
}

/// Arguments of `tandem federate`.
#[derive(Args)]
pub struct FederateArgs {
    /// The federation file (TOML; see dcp/FEDERATION.md).
    federation: PathBuf,
    // Every member's outputs at every step go to the CSV file.
    #[command(flatten)]
    output: OutputArgs,
}

/// Runs `tandem federate`.
pub fn federate(args: &FederateArgs) -> anyhow::Result<()> {
    let federation = Federation::load(&args.federation)?;
    let names = federation::output_names(&federation);
    check_output_size(federation.steps as f64 + 1.0, names.len() + 1, args.output.large_output)
        .with_context(|| args.federation.display().to_string())?;
    let (out, mut csv) = csv_file(&args.output, &args.federation, &names)?;
    let stem = file_stem(&args.federation);
    let rows_note = || {
        format!(
            "{} (the rows before this are in {})",
            args.federation.display(),
            out.display()
        )
    };
    if federation.mode == OpMode::NonRealTime {
        let mut progress = Progress::new();
        let result = federation::run_lock_step(&federation, &mut csv, &mut |f| progress.update(f));
        progress.finish();
        let (summary, stats) = result.with_context(rows_note)?;
        say!(
            "{stem}: {} members in lock-step, {} steps of {} s in {}; wrote {}",
            federation.members.len(),
            summary.macro_steps,
            federation.step,
            human(summary.wall),
            out.display()
        );
        for line in federation::describe_stats(&stats) {
            say!("  {line}");
        }
    } else {
        let report = federation::run_real_time(&federation, &mut csv).with_context(rows_note)?;
        say!(
            "{stem}: {} members in {}, {} steps of {} s; wrote {}",
            federation.members.len(),
            federation.mode.name(),
            report.steps,
            federation.step,
            out.display()
        );
        for m in &report.members {
            say!(
                "  {}: {} steps missing (held), data age at the master p50 {:.1} µs, p99 {:.1} µs",
                m.name,
                m.missing,
                m.ages.percentile(0.5) * 1e6,
                m.ages.percentile(0.99) * 1e6
            );
        }
    }
    Ok(())
}
