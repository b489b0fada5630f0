//! Unpacking an FMU (a ZIP archive) into a temporary directory that is
//! removed when the last user of the FMU is dropped.

use std::fs::{self, File};
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};

use tempfile::TempDir;

use crate::error::FmuError;

/// The most bytes all entries may unpack to together: 2 GiB.
pub const MAX_UNPACKED: u64 = 2 << 30;

/// The most entries an FMU may hold.
pub const MAX_ENTRIES: usize = 100_000;

/// The largest `modelDescription.xml` read: 64 MiB.
pub const MAX_DESCRIPTION: u64 = 64 << 20;

/// An FMU unpacked into a temporary directory, and its model description.
pub(crate) struct Unpacked {
    /// Removed on drop.
    pub dir: TempDir,
    /// The text of `modelDescription.xml`.
    pub description: String,
}

/// Unpacks the FMU at `file`.
pub(crate) fn unpack(file: &Path) -> Result<Unpacked, FmuError> {
    let io_error = |action: &str| {
        let action = action.to_string();
        move |source| FmuError::Io {
            file: file.to_path_buf(),
            action,
            source,
        }
    };
    let archive_error = |message: String, help: &str| FmuError::Archive {
        file: file.to_path_buf(),
        message,
        help: help.to_string(),
    };
    let reader = File::open(file).map_err(io_error("open the file"))?;
    let mut zip = zip::ZipArchive::new(reader).map_err(|e| {
        archive_error(
            format!("not a ZIP archive: {e}"),
            "an FMU is a ZIP file holding modelDescription.xml and binaries/; check that the file is complete",
        )
    })?;
    if zip.len() > MAX_ENTRIES {
        return Err(archive_error(
            format!("{} entries, more than the {MAX_ENTRIES} allowed", zip.len()),
            "this is not a plausible FMU; check where it came from",
        ));
    }
    let dir = tempfile::Builder::new()
        .prefix("tandem-fmu-")
        .tempdir()
        .map_err(io_error("create a temporary directory to unpack into"))?;
    let mut unpacked = 0u64;
    for index in 0..zip.len() {
        let mut entry = zip.by_index(index).map_err(|e| {
            archive_error(
                format!("entry {index} cannot be read: {e}"),
                "the archive is damaged; export the FMU again",
            )
        })?;
        let name = entry
            .name()
            .map_err(|e| {
                archive_error(
                    format!("entry {index} has an unreadable name: {e}"),
                    "the archive is damaged; export the FMU again",
                )
            })?
            .into_owned();
        let relative = safe_path(&name).ok_or_else(|| {
            archive_error(
                format!("entry \"{name}\" is an absolute path or climbs out with \"..\""),
                "unpacking it would write outside the FMU's directory; the archive is unsafe, do not use it",
            )
        })?;
        // Links could point anywhere; an FMU needs none for the platforms
        // loaded here.
        if entry.is_symlink() {
            continue;
        }
        let target = dir.path().join(&relative);
        if entry.is_dir() {
            fs::create_dir_all(&target).map_err(io_error(&format!("create the directory \"{name}\"")))?;
            continue;
        }
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(io_error(&format!("create the directory of \"{name}\"")))?;
        }
        let mut out = File::create(&target).map_err(io_error(&format!("unpack \"{name}\"")))?;
        // The size in the header may lie: count what is really written.
        let room = MAX_UNPACKED - unpacked;
        let written = io::copy(&mut (&mut entry).take(room + 1), &mut out).map_err(|e| {
            archive_error(
                format!("entry \"{name}\" cannot be unpacked: {e}"),
                "the archive is damaged or uses a compression other than stored or deflate; export the FMU again",
            )
        })?;
        unpacked += written;
        if unpacked > MAX_UNPACKED {
            return Err(archive_error(
                format!("unpacks to more than {MAX_UNPACKED} bytes (2 GiB), the bound on an FMU's contents"),
                "this is not a plausible FMU (a ZIP bomb?); check where it came from",
            ));
        }
    }
    let description = read_description(file, &dir.path().join("modelDescription.xml"))?;
    Ok(Unpacked { dir, description })
}

/// `name` as a relative path inside the archive's directory, or `None`
/// when it is absolute or has a `..` component (with either separator).
fn safe_path(name: &str) -> Option<PathBuf> {
    if name.contains('\0') || name.split(['/', '\\']).any(|part| part == "..") || name.starts_with(['/', '\\']) {
        return None;
    }
    let path = PathBuf::from(name);
    path.components()
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
        .then_some(path)
}

/// Reads `modelDescription.xml` from the unpacked directory, within its bound.
pub(crate) fn read_description(file: &Path, path: &Path) -> Result<String, FmuError> {
    let missing = || FmuError::Archive {
        file: file.to_path_buf(),
        message: "no modelDescription.xml at the top of the archive".to_string(),
        help: "an FMU holds modelDescription.xml at its root (not in a sub-folder); re-zip it from inside its folder"
            .to_string(),
    };
    let reader = match File::open(path) {
        Ok(reader) => reader,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(missing()),
        Err(source) => {
            return Err(FmuError::Io {
                file: file.to_path_buf(),
                action: "read modelDescription.xml".to_string(),
                source,
            })
        }
    };
    let mut bytes = Vec::new();
    reader
        .take(MAX_DESCRIPTION + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| FmuError::Io {
            file: file.to_path_buf(),
            action: "read modelDescription.xml".to_string(),
            source,
        })?;
    if bytes.len() as u64 > MAX_DESCRIPTION {
        return Err(FmuError::Archive {
            file: file.to_path_buf(),
            message: format!("modelDescription.xml is larger than {MAX_DESCRIPTION} bytes (64 MiB), the bound on it"),
            help: "this is not a plausible model description; check where the FMU came from".to_string(),
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&valid[start..]).chars().count() + 1;
        FmuError::Description {
            file: file.to_path_buf(),
            line: line as u32,
            column: column as u32,
            message: "the text is not UTF-8".to_string(),
            help: "save modelDescription.xml as UTF-8, as the FMI standard requires".to_string(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::safe_path;

    #[test]
    fn entry_names_that_leave_the_directory_are_refused() {
        for bad in ["/etc/passwd", "../x", "a/../../x", "a\\..\\x", "\\x", "a/..", "a\0b"] {
            assert!(safe_path(bad).is_none(), "{bad:?} accepted");
        }
        for good in [
            "modelDescription.xml",
            "binaries/linux64/m.so",
            "./resources/a.txt",
            "resources/",
        ] {
            assert!(safe_path(good).is_some(), "{good:?} refused");
        }
    }
}
