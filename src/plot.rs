//! Plots of recorded outputs (SVG or PNG). To be written.

use std::path::Path;

use tandem_models::Variable;
use tandem_runtime::record::Trace;

/// Draws every output of `trace` against time into `path` (.svg or .png),
/// one panel per signal, titled `title`.
pub fn write(path: &Path, title: &str, trace: &Trace, outputs: &[Variable]) -> anyhow::Result<()> {
    let _ = (path, title, trace, outputs);
    anyhow::bail!("plotting is not written yet")
}
