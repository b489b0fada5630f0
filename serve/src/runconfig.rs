//! A run configuration started through the server: the file read beneath
//! the served folder, and every path it names ([`RunConfig::paths`])
//! kept in it: files read resolve beneath the folder, files written
//! beneath its `results/` (with no `..`), devices are the serial devices
//! the server allows ([`Devices`]). A refusal is decided before anything outside is looked at, and
//! no message shows the folder's absolute path.

use std::path::{Component, Path};

use rustix::fs::FileType;
use tandem_config::{load_run_config, ConfigError, NamedPath, PathUse, RunConfig};
use tandem_models::plants;

use crate::confine::{Refused, Root, RESULTS};
use crate::devices::Devices;
use crate::error::ApiError;
use crate::folder::{api_path, refused};
use crate::state::App;

/// A 422 for a configuration error, at its place; paths relative to the
/// served folder.
fn config_error(app: &App, e: &ConfigError) -> ApiError {
    let mut error = ApiError::unprocessable(app.relative(&e.to_string()));
    if let Some(location) = e.location {
        error = error.at("line", location.line).at("column", location.column);
    }
    if !e.key.is_empty() {
        error = error.at("key", e.key.as_str());
    }
    error.at("path", app.relative(&e.file.to_string_lossy()))
}

/// Reads the run configuration at `relative` (a path given to the API)
/// and checks every path it names.
pub fn load(app: &App, relative: &str) -> Result<RunConfig, ApiError> {
    let path = api_path(relative)?;
    let unusable = |e: Refused| match e {
        // A configuration that is not there is a request that cannot be
        // done, not a missing endpoint.
        Refused::Missing | Refused::NotAFolder | Refused::NotAFile => {
            ApiError::unprocessable(format!("path \"{relative}\": {e}")).at("path", relative)
        }
        e => refused(relative, e),
    };
    match app.root.kind(path) {
        Ok(FileType::RegularFile) => {}
        Ok(_) => return Err(unusable(Refused::NotAFile)),
        Err(e) => return Err(unusable(e)),
    }
    let config = load_run_config(&app.root.path().join(path), plants::PROFILES).map_err(|e| config_error(app, &e))?;
    for named in config.paths() {
        check(&app.root, &app.devices, &named).map_err(|refused| {
            let e = ConfigError {
                file: config.file.clone(),
                location: named.location,
                key: named.key.clone(),
                message: refused.to_string(),
            };
            config_error(app, &e)
        })?;
    }
    Ok(config)
}

/// Why a path a configuration names is not taken through the server.
#[derive(Debug, thiserror::Error)]
enum PathRefused {
    /// A file read from outside the served folder.
    #[error(
        "\"{0}\" is outside the served folder; through the server a configuration names files inside it, \
         relative to the configuration"
    )]
    ReadOutside(String),
    /// A file written outside `results/`; why.
    #[error(
        "\"{shown}\" {why}; through the server a run writes only into the served folder's {RESULTS}/: give a \
         path relative to it, without `..`"
    )]
    WriteOutside {
        /// The path as named.
        shown: String,
        /// How it leads out.
        why: &'static str,
    },
    /// The folder refused the path.
    #[error("\"{shown}\": {cause}")]
    Refused {
        /// The path as named.
        shown: String,
        /// What the folder said.
        cause: Refused,
    },
    /// A device the server was not started to allow.
    #[error(
        "\"{0}\" is not a serial device this server was started to allow; start it with --device {0} (repeat \
         for each device), or name the device in a configuration in the folder before starting it"
    )]
    Device(String),
}

/// Checks one path a configuration names (a device against `devices`).
fn check(root: &Root, devices: &Devices, named: &NamedPath<'_>) -> Result<(), PathRefused> {
    let shown = named.path.display().to_string();
    match named.usage {
        PathUse::Read => {
            let outside = || PathRefused::ReadOutside(shown.clone());
            let inside = named.path.strip_prefix(root.path()).map_err(|_| outside())?;
            let refused = |cause| PathRefused::Refused {
                shown: inside.display().to_string(),
                cause,
            };
            match root.kind(inside) {
                Ok(FileType::RegularFile) => Ok(()),
                Ok(_) => Err(refused(Refused::NotAFile)),
                Err(Refused::Outside) => Err(outside()),
                Err(e) => Err(refused(e)),
            }
        }
        PathUse::Write => {
            let results = root.path().join(RESULTS);
            let inside = if named.path.is_absolute() {
                named.path.strip_prefix(&results).unwrap_or(Path::new(".."))
            } else {
                named.path
            };
            let outside = |why| PathRefused::WriteOutside {
                shown: shown.clone(),
                why,
            };
            if !inside.components().all(|c| matches!(c, Component::Normal(_))) {
                return Err(outside("leads out of results/"));
            }
            match root.subfolder(Path::new(RESULTS)) {
                Ok(results) => results.check_new(inside),
                // The run creates results/ and what is in it.
                Err(Refused::Missing) if !root.is_link(Path::new(RESULTS)) => Ok(()),
                Err(Refused::Missing) => Err(Refused::Dangling),
                Err(e) => Err(e),
            }
            .map_err(|e| match e {
                Refused::Outside => outside("leads out of results/ through a symbolic link"),
                cause => PathRefused::Refused {
                    shown: shown.clone(),
                    cause,
                },
            })
        }
        PathUse::Device => match devices.allows(named.path) {
            true => Ok(()),
            false => Err(PathRefused::Device(shown)),
        },
    }
}
