//! Writing the FMU's zip archive: deflated entries with a fixed date, so
//! that exporting the same model twice gives the same bytes, written beside
//! the destination first and renamed over it once complete.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, DateTime, ZipWriter};

/// A file of the archive.
pub struct Entry<'a> {
    name: String,
    bytes: &'a [u8],
    /// Unix permissions.
    mode: u32,
}

impl<'a> Entry<'a> {
    /// A data file.
    pub fn data(name: impl Into<String>, bytes: &'a [u8]) -> Self {
        Entry {
            name: name.into(),
            bytes,
            mode: 0o644,
        }
    }

    /// A shared library.
    pub fn program(name: impl Into<String>, bytes: &'a [u8]) -> Self {
        Entry {
            name: name.into(),
            bytes,
            mode: 0o755,
        }
    }
}

/// Writes `entries` as the zip archive `out`.
pub fn write(out: &Path, entries: &[Entry<'_>]) -> io::Result<()> {
    let file_name = out
        .file_name()
        .ok_or_else(|| io::Error::other("the path names no file"))?;
    let partial = out.with_file_name(format!(".{}.partial", file_name.to_string_lossy()));
    let written = write_to(&partial, entries).and_then(|()| std::fs::rename(&partial, out));
    if written.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    written
}

/// Writes the archive into `path`.
fn write_to(path: &Path, entries: &[Entry<'_>]) -> io::Result<()> {
    let mut zip = ZipWriter::new(BufWriter::new(File::create(path)?));
    for entry in entries {
        let options = SimpleFileOptions::default()
            .compression_method(CompressionMethod::Deflated)
            .last_modified_time(DateTime::default())
            .unix_permissions(entry.mode);
        zip.start_file(entry.name.as_str(), options).map_err(io::Error::other)?;
        zip.write_all(entry.bytes)?;
    }
    zip.finish().map_err(io::Error::other)?.flush()
}
