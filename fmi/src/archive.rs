//! Unpacking an FMU (a ZIP archive): by default only what a run needs
//! (`modelDescription.xml`, this platform's binaries, `resources/`) into a
//! cache folder, once per content (SHA-256 of the file), reused by every
//! later opening of the same FMU; or everything into a temporary directory
//! removed when the last user of the FMU is dropped ([`Unpack`]).

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

/// Where an FMU is unpacked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unpack {
    /// Everything, into a temporary directory of its own, removed with
    /// the last user of the FMU.
    Temporary,
    /// Only what a run needs, into `<folder>/<content hash>/`, kept for
    /// the next opening of the same FMU (the folder may be deleted at any
    /// time no FMU runs from it).
    Cache(PathBuf),
}

impl Unpack {
    /// The cache [`cache_folder`] names, or a temporary directory when
    /// there is none (`TANDEM_FMU_CACHE=off`, no home folder).
    pub fn default_place() -> Unpack {
        cache_folder().map_or(Unpack::Temporary, Unpack::Cache)
    }
}

/// The folder FMUs are unpacked into: `$TANDEM_FMU_CACHE` when set (none
/// when it is `off`), else `$XDG_CACHE_HOME/tandem/fmu`, else
/// `$HOME/.cache/tandem/fmu`.
pub fn cache_folder() -> Option<PathBuf> {
    let var = |name| std::env::var_os(name).filter(|v| !v.is_empty());
    match var("TANDEM_FMU_CACHE") {
        Some(v) if v == "off" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => var("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|home| Path::new(&home).join(".cache")))
            .map(|base| base.join("tandem").join("fmu")),
    }
}

/// The name of the marker a complete cache entry holds.
const COMPLETE: &str = ".tandem-complete";

/// The FMU at `file` unpacked (what a run needs) in `cache`: its folder
/// and its model description. An entry another process is writing is not
/// read; two writing the same one at once each write their own and the
/// first to finish wins. `None` when the cache cannot be written (then the
/// caller unpacks into a temporary directory).
pub(crate) fn unpack_cached(file: &Path, cache: &Path) -> Result<Option<(PathBuf, String)>, FmuError> {
    let key = content_hash(file)?;
    let entry = cache.join(&key);
    if entry.join(COMPLETE).is_file() {
        let description = read_description(file, &entry.join("modelDescription.xml"))?;
        return Ok(Some((entry, description)));
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let staging = cache.join(format!(".{key}.{}.{nanos}", std::process::id()));
    if fs::create_dir_all(&staging).is_err() {
        return Ok(None);
    }
    let result = unpack_into(file, &staging, Only::Needed).and_then(|()| {
        File::create(staging.join(COMPLETE)).map_err(|source| FmuError::Io {
            file: file.to_path_buf(),
            action: format!("mark {} complete", staging.display()),
            source,
        })
    });
    if let Err(e) = result {
        let _ = fs::remove_dir_all(&staging);
        return Err(e);
    }
    if fs::rename(&staging, &entry).is_err() {
        // Another process finished the same entry first: use its.
        let _ = fs::remove_dir_all(&staging);
        if !entry.join(COMPLETE).is_file() {
            return Ok(None);
        }
    }
    let description = read_description(file, &entry.join("modelDescription.xml"))?;
    Ok(Some((entry, description)))
}

/// The SHA-256 of the file's bytes, its first 128 bits in hexadecimal.
fn content_hash(file: &Path) -> Result<String, FmuError> {
    use sha2::Digest;
    let io_error = |source| FmuError::Io {
        file: file.to_path_buf(),
        action: "read the file".to_string(),
        source,
    };
    let mut reader = File::open(file).map_err(|source| FmuError::Io {
        file: file.to_path_buf(),
        action: "open the file".to_string(),
        source,
    })?;
    let mut hasher = sha2::Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let n = reader.read(&mut buffer).map_err(io_error)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hasher.finalize()[..16].iter().map(|b| format!("{b:02x}")).collect())
}

/// Which entries are written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Only {
    /// Every entry.
    All,
    /// `modelDescription.xml`, `resources/` and this platform's binaries
    /// (of either FMI version); the other platforms' folders are made
    /// empty, for the message that names the platforms an FMU has.
    Needed,
}

/// Whether a run needs the entry `name`; for an entry of another
/// platform's binaries, that platform's folder.
fn needed(name: &str) -> Result<(), Option<String>> {
    if name == "modelDescription.xml" || name.starts_with("resources/") {
        return Ok(());
    }
    let Some(rest) = name.strip_prefix("binaries/") else {
        return Err(None);
    };
    let folder = rest.split('/').next().unwrap_or("");
    let ours = [crate::description::FmiVersion::V2, crate::description::FmiVersion::V3]
        .into_iter()
        .filter_map(crate::library::platform_folder)
        .any(|p| p == folder);
    if ours {
        Ok(())
    } else if folder.is_empty() {
        Err(None)
    } else {
        Err(Some(format!("binaries/{folder}")))
    }
}

/// Unpacks everything of the FMU at `file` into a temporary directory.
pub(crate) fn unpack(file: &Path) -> Result<Unpacked, FmuError> {
    let dir = tempfile::Builder::new()
        .prefix("tandem-fmu-")
        .tempdir()
        .map_err(|source| FmuError::Io {
            file: file.to_path_buf(),
            action: "create a temporary directory to unpack into".to_string(),
            source,
        })?;
    unpack_into(file, dir.path(), Only::All)?;
    let description = read_description(file, &dir.path().join("modelDescription.xml"))?;
    Ok(Unpacked { dir, description })
}

/// Unpacks the entries `only` chooses of the FMU at `file` into `dir`.
fn unpack_into(file: &Path, dir: &Path, only: Only) -> Result<(), FmuError> {
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
        if only == Only::Needed {
            if let Err(other) = needed(&name.replace('\\', "/")) {
                if let Some(folder) = other {
                    fs::create_dir_all(dir.join(folder)).map_err(io_error("create a platform folder"))?;
                }
                continue;
            }
        }
        let target = dir.join(&relative);
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
    Ok(())
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
