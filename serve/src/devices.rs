//! The serial devices a run started through the server may open: those
//! the server was started with (`--device PATH`), and those named by the
//! run configurations in the served folder when it started. A page can
//! write configurations, so one written after the start allows nothing:
//! `/dev/kmsg`, `/dev/tty` or `/dev/ptmx` named by it are refused.

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

use tandem_config::{parse_run_config, PathUse};
use tandem_models::plants;

use crate::confine::RESULTS;

/// How deep the start-up scan looks below the folder.
const SCAN_DEPTH: usize = 4;
/// The most `.toml` files the start-up scan reads.
const SCAN_FILES: usize = 1000;
/// The largest configuration the scan reads (bytes).
const SCAN_BYTES: u64 = 1 << 20;

/// The devices a run may name.
#[derive(Debug, Default)]
pub struct Devices {
    /// As given or named, and resolved (a `/dev/serial/by-id/` link
    /// allows its target too).
    allowed: Vec<PathBuf>,
}

impl Devices {
    /// `given` (`--device`), and the devices named by run configurations
    /// in `folder` (up to [`SCAN_DEPTH`] folders down, [`SCAN_FILES`]
    /// files, its `results/` and hidden folders left out; a file that is
    /// not a configuration is passed over).
    pub fn gather(given: &[PathBuf], folder: &Path) -> Devices {
        let mut named = given.to_vec();
        let mut files = Vec::new();
        toml_files(folder, 0, &mut files);
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let Ok(config) = parse_run_config(&text, &file, plants::PROFILES) else {
                continue;
            };
            named.extend(
                config
                    .paths()
                    .into_iter()
                    .filter(|p| p.usage == PathUse::Device)
                    .map(|p| p.path.to_path_buf()),
            );
        }
        let resolved: Vec<PathBuf> = named.iter().filter_map(|p| p.canonicalize().ok()).collect();
        named.extend(resolved);
        named.sort();
        named.dedup();
        Devices { allowed: named }
    }

    /// Whether `device` is allowed (as named, or by what it resolves to)
    /// and is a character device under `/dev`.
    pub fn allows(&self, device: &Path) -> bool {
        let resolved = device.canonicalize().ok();
        let allowed =
            self.allowed.iter().any(|a| a == device) || resolved.as_ref().is_some_and(|r| self.allowed.contains(r));
        let serial = resolved
            .filter(|r| r.starts_with("/dev"))
            .and_then(|r| r.metadata().ok())
            .is_some_and(|m| m.file_type().is_char_device());
        allowed && serial
    }
}

/// The `.toml` files in `dir` and below it, into `files`.
fn toml_files(dir: &Path, depth: usize, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        if files.len() >= SCAN_FILES {
            return;
        }
        let name = entry.file_name();
        let hidden = name.to_string_lossy().starts_with('.');
        let Ok(kind) = entry.file_type() else { continue };
        let path = entry.path();
        if kind.is_dir() && depth < SCAN_DEPTH && !hidden && !(depth == 0 && name == RESULTS) {
            toml_files(&path, depth + 1, files);
        } else if kind.is_file()
            && path.extension().is_some_and(|e| e == "toml")
            && entry.metadata().is_ok_and(|m| m.len() <= SCAN_BYTES)
        {
            files.push(path);
        }
    }
}
