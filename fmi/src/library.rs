//! Finding the FMU's binary for this platform, loading it, and resolving
//! its functions.

use std::path::{Path, PathBuf};

use libloading::Library;

use crate::description::FmiVersion;
use crate::error::FmuError;

/// The platform folders (under `binaries/`) of this machine, in FMI 2 and
/// FMI 3 naming; `None` where the standard names none.
struct Platform {
    fmi2: Option<&'static str>,
    fmi3: Option<&'static str>,
}

#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
const PLATFORM: Platform = Platform {
    fmi2: Some("linux64"),
    fmi3: Some("x86_64-linux"),
};
#[cfg(all(target_os = "linux", target_arch = "x86"))]
const PLATFORM: Platform = Platform {
    fmi2: Some("linux32"),
    fmi3: Some("x86-linux"),
};
#[cfg(all(target_os = "linux", target_arch = "aarch64"))]
const PLATFORM: Platform = Platform {
    fmi2: None,
    fmi3: Some("aarch64-linux"),
};
#[cfg(all(target_os = "windows", target_arch = "x86_64"))]
const PLATFORM: Platform = Platform {
    fmi2: Some("win64"),
    fmi3: Some("x86_64-windows"),
};
#[cfg(all(target_os = "windows", target_arch = "x86"))]
const PLATFORM: Platform = Platform {
    fmi2: Some("win32"),
    fmi3: Some("x86-windows"),
};
#[cfg(all(target_os = "macos", target_arch = "x86_64"))]
const PLATFORM: Platform = Platform {
    fmi2: Some("darwin64"),
    fmi3: Some("x86_64-darwin"),
};
#[cfg(all(target_os = "macos", target_arch = "aarch64"))]
const PLATFORM: Platform = Platform {
    // FMI 2's darwin64 is x86_64 only.
    fmi2: None,
    fmi3: Some("aarch64-darwin"),
};
#[cfg(not(any(
    all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")
    ),
    all(target_os = "windows", any(target_arch = "x86_64", target_arch = "x86")),
    all(target_os = "macos", any(target_arch = "x86_64", target_arch = "aarch64")),
)))]
const PLATFORM: Platform = Platform { fmi2: None, fmi3: None };

/// The platform folder of this machine for FMUs of `version`, if the
/// standard names one.
pub fn platform_folder(version: FmiVersion) -> Option<&'static str> {
    match version {
        FmiVersion::V2 => PLATFORM.fmi2,
        FmiVersion::V3 => PLATFORM.fmi3,
    }
}

/// Loads `binaries/<platform>/<identifier>.<ext>` from the unpacked FMU in
/// `dir`; `file` (the FMU) is named in errors. Returns the library and its
/// path inside the FMU.
pub(crate) fn load(
    file: &Path,
    dir: &Path,
    version: FmiVersion,
    identifier: &str,
) -> Result<(Library, String), FmuError> {
    let binaries = dir.join("binaries");
    let name = format!("{identifier}.{}", std::env::consts::DLL_EXTENSION);
    let missing = |expected: String| FmuError::MissingBinary {
        file: file.to_path_buf(),
        expected,
        platform: format!("{version} {}-{}", std::env::consts::ARCH, std::env::consts::OS),
        found: platform_folders(&binaries),
    };
    let Some(folder) = platform_folder(version) else {
        return Err(missing(format!(
            "binaries/<none: {version} names no folder for this platform>/{name}"
        )));
    };
    let relative = format!("binaries/{folder}/{name}");
    let path: PathBuf = binaries.join(folder).join(&name);
    if !path.is_file() {
        return Err(missing(relative));
    }
    // SAFETY: loading runs the binary's initialisers; an FMU's binary is
    // code the user chose to run.
    let library = unsafe { Library::new(&path) }.map_err(|source| FmuError::Load {
        file: file.to_path_buf(),
        library: relative.clone(),
        source,
    })?;
    Ok((library, relative))
}

/// The folders under `binaries/`, sorted.
fn platform_folders(binaries: &Path) -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(binaries)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

/// A group of C functions resolved together.
pub(crate) trait Group: Sized + Copy {
    /// Resolves every function of the group, or returns the name of the
    /// first one `library` does not export.
    ///
    /// # Safety
    /// The declared signatures must be those of the C functions.
    unsafe fn load(library: &Library) -> Result<Self, &'static str>;
}

/// Declares a [`Group`]: a struct with one function pointer per symbol,
/// named as the symbol.
macro_rules! functions {
    ($(#[$meta:meta])* $name:ident { $($symbol:ident: fn($($arg:ty),* $(,)?) $(-> $ret:ty)?;)* }) => {
        $(#[$meta])*
        #[allow(non_snake_case)]
        #[derive(Clone, Copy)]
        pub(crate) struct $name {
            $(pub(crate) $symbol: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
        }

        impl $name {
            /// The names of the group's functions.
            pub(crate) const NAMES: &'static [&'static str] = &[$(stringify!($symbol)),*];
        }

        impl $crate::library::Group for $name {
            unsafe fn load(library: &libloading::Library) -> Result<Self, &'static str> {
                Ok($name {
                    // SAFETY: the caller vouches for the signature.
                    $($symbol: *unsafe { library.get(stringify!($symbol)) }.map_err(|_| stringify!($symbol))?,)*
                })
            }
        }
    };
}

pub(crate) use functions;
