//! The FMU's binary: the cdylib cargo builds from this crate, where the
//! `tandem` executable finds it, and where it goes inside an FMU.
//!
//! Cargo builds the cdylib whenever it builds this crate's library, also as
//! a dependency of the `tandem` package (`cargo build --release`), but then
//! leaves it in the profile's `deps` folder
//! (`target/release/deps/libtandem_fmu.so`, no hash in the name); built as
//! a package of its own (`cargo build --release -p tandem-fmu`, or with
//! `--workspace`) it is also copied beside the executable
//! (`target/release/libtandem_fmu.so`). Test binaries live in `deps`, beside
//! it. `cargo install` installs executables only, never the cdylib.

use std::path::{Path, PathBuf};

use crate::version::FmiVersion;

/// Why the FMU's binary cannot be found or placed.
#[derive(Debug, thiserror::Error)]
pub enum LibraryError {
    /// The FMU's binary was not found.
    #[error("the FMU binary {} is not beside {} (looked for {}); build it with `{BUILD_COMMAND}` in Tandem's source folder, which leaves it in target/release/ beside the tandem executable, or copy it beside the executable", library_file_name(), exe.display(), searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    NoLibrary {
        /// The executable it was looked for beside.
        exe: PathBuf,
        /// The places looked at.
        searched: Vec<PathBuf>,
    },
    /// FMI has no binaries folder for this machine.
    #[error("FMI {version} names no binaries folder for {arch} {os}; export FMI 3.0 on x86, x86_64 or aarch64 Linux, x86 or x86_64 Windows, or x86_64 or aarch64 macOS (FMI 2.0: x86 or x86_64 Linux or Windows, x86_64 macOS)")]
    Platform {
        /// The FMI version asked for.
        version: FmiVersion,
        /// This machine's architecture.
        arch: &'static str,
        /// This machine's operating system.
        os: &'static str,
    },
}

/// The name of this crate's library without prefix and extension.
const LIBRARY: &str = "tandem_fmu";

/// The file name of the cdylib on this platform (`libtandem_fmu.so`).
pub fn library_file_name() -> String {
    format!(
        "{}{LIBRARY}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// The cargo command that builds the cdylib beside the executable.
pub const BUILD_COMMAND: &str = "cargo build --release -p tandem-fmu";

/// The FMU's binary for the executable `exe`: the cdylib beside it, or in
/// the `deps` folder beside it, or beside its folder when the executable
/// itself is in a `deps` folder (a test binary). The error names the places
/// searched and the cargo command that builds it.
pub fn library_beside(exe: &Path) -> Result<PathBuf, LibraryError> {
    let file = library_file_name();
    let dir = exe.parent().unwrap_or(Path::new("."));
    let mut searched = vec![dir.join(&file), dir.join("deps").join(&file)];
    if dir.file_name().is_some_and(|name| name == "deps") {
        if let Some(profile) = dir.parent() {
            searched.push(profile.join(&file));
        }
    }
    match searched.iter().find(|path| path.is_file()) {
        Some(found) => Ok(found.clone()),
        None => Err(LibraryError::NoLibrary {
            exe: exe.to_owned(),
            searched,
        }),
    }
}

/// The folder under `binaries/` for this machine in an FMU of `version`,
/// and the library's extension there.
pub fn platform(version: FmiVersion) -> Result<(&'static str, &'static str), LibraryError> {
    let standard = match version {
        FmiVersion::Fmi3 => tandem_fmi::FmiVersion::V3,
        FmiVersion::Fmi2 => tandem_fmi::FmiVersion::V2,
    };
    let folder = tandem_fmi::platform_folder(standard).ok_or(LibraryError::Platform {
        version,
        arch: std::env::consts::ARCH,
        os: std::env::consts::OS,
    })?;
    Ok((folder, std::env::consts::DLL_SUFFIX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_library_names_where_it_was_looked_for_and_how_to_build_it() {
        let e = library_beside(Path::new("/nowhere/target/release/tandem")).unwrap_err();
        let text = e.to_string();
        let file = library_file_name();
        assert!(text.contains(&format!("/nowhere/target/release/{file}")), "{text}");
        assert!(text.contains(&format!("/nowhere/target/release/deps/{file}")), "{text}");
        assert!(text.contains(BUILD_COMMAND), "{text}");
        let e = library_beside(Path::new("/nowhere/target/debug/deps/test-0123")).unwrap_err();
        assert!(e.to_string().contains(&format!("/nowhere/target/debug/{file}")), "{e}");
    }
}
