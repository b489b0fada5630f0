//! `tandem bench`: speed figures. To be written.

use clap::Args;

/// Arguments of `tandem bench`.
#[derive(Args)]
pub struct BenchArgs {}

/// Runs the benchmarks.
pub fn run(_: &BenchArgs) -> anyhow::Result<()> {
    anyhow::bail!("not written yet")
}
