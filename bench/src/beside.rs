//! The programs cargo builds beside this benchmark, which some
//! measurements run as processes of their own.

use std::path::PathBuf;

/// The `tandem` binary beside this one (`cargo build --release` builds
/// both).
pub fn tandem() -> anyhow::Result<PathBuf> {
    Ok(std::env::current_exe()?.with_file_name("tandem"))
}
