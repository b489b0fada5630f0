//! `tandem dcp-slave` (a model as a DCP slave) and `tandem federate` (a
//! DCP master running a federation file).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use clap::Args;
use tandem_config::bounds::check_output_size;
use tandem_config::RunConfig;
use tandem_dcp::federation::{self, Federation};
use tandem_dcp::slave::config::uuid_for;
use tandem_dcp::slave::member::Member;
use tandem_dcp::slave::model::ModelMember;
use tandem_dcp::slave::session::SessionMember;
use tandem_dcp::slave::{describe, Identity, Slave, SlaveConfig};
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
    let identity = config.identity();
    serve(
        identity,
        Box::new(ModelMember::load(config)?),
        args.description.as_deref(),
    )
}

/// Runs `tandem run` of a configuration with a `[dcp]` table: serves
/// masters until killed, each run's outputs in `results`.
pub fn run_slave(config: RunConfig, results: &Path, description: Option<&Path>) -> anyhow::Result<()> {
    let dcp = config.dcp.clone().context("the configuration has no [dcp] table")?;
    let identity = Identity {
        uuid: uuid_for(&dcp.name),
        name: dcp.name,
        endpoint: dcp.endpoint,
    };
    let member = SessionMember::new(config, results.to_path_buf())?;
    serve(identity, Box::new(member), description)
}

/// Writes the description of `member` served as `identity` to
/// `description` if given; otherwise serves masters until killed, saying
/// what each run counted.
fn serve(identity: Identity, member: Box<dyn Member>, description: Option<&Path>) -> anyhow::Result<()> {
    let name = identity.name.clone();
    if let Some(path) = description {
        std::fs::write(path, describe(&identity, member.as_ref()).write())
            .with_context(|| format!("cannot write {}", path.display()))?;
        say!("{name}: wrote its DCP slave description to {}", path.display());
        return Ok(());
    }
    let mut slave = Slave::new(identity, member)?;
    say!("{name}: DCP slave listening on {} (UDP)", slave.local_addr());
    let never = AtomicBool::new(false);
    slave.serve(&never, &mut |slave| {
        if let Some(report) = slave.run_report() {
            crate::out::write_raw(&report);
        }
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
