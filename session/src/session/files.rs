//! The session's output files: where they go (relative to the results
//! folder), creating them with their folder, and cutting one that failed
//! part-way back to its whole lines.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use super::error::SessionError;

/// `path` in `results` unless it is absolute.
pub(super) fn in_results(results: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        results.join(path)
    }
}

/// Creates `file` (and its folder) with `create`; `what` names it in the
/// error.
pub(super) fn create_output<T>(
    file: &Path,
    what: &'static str,
    create: impl FnOnce(&Path) -> io::Result<T>,
) -> Result<T, SessionError> {
    let error = |path: &Path| {
        let path = path.to_path_buf();
        move |cause| SessionError::File { what, path, cause }
    };
    if let Some(dir) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(error(dir))?;
    }
    create(file).map_err(error(file))
}

/// Cuts a text file that failed part-way through a line back to its last
/// whole line, and says what it holds: the lines written before the
/// failure, each whole.
pub(super) fn kept_whole(file: &Path) -> String {
    match cut_to_whole_lines(file).and_then(|()| count_lines(file)) {
        Ok(n) => format!("the {n} lines before it are in the file, each whole"),
        Err(e) => format!("the lines before it are in the file, the last perhaps cut short: {e}"),
    }
}

/// The number of lines of `file`.
fn count_lines(file: &Path) -> io::Result<u64> {
    use std::io::Read;
    let mut f = io::BufReader::new(File::open(file)?);
    let mut chunk = [0u8; 1 << 16];
    let mut lines = 0;
    loop {
        match f.read(&mut chunk)? {
            0 => return Ok(lines),
            n => lines += chunk[..n].iter().filter(|&&b| b == b'\n').count() as u64,
        }
    }
}

/// Truncates `file` after its last newline.
fn cut_to_whole_lines(file: &Path) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open(file)?;
    let mut end = f.metadata()?.len();
    let mut chunk = [0u8; 4096];
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let part = &mut chunk[..(end - start) as usize];
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(part)?;
        if let Some(i) = part.iter().rposition(|&b| b == b'\n') {
            return f.set_len(start + i as u64 + 1);
        }
        end = start;
    }
    f.set_len(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch file holding `text`, in a folder of its own.
    fn scratch(name: &str, text: &[u8]) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tandem-session-files-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("out.csv");
        std::fs::write(&file, text).unwrap();
        file
    }

    #[test]
    fn a_file_cut_part_way_keeps_its_whole_lines() {
        let file = scratch("cut", b"t,y\n0,1\n0.001,2\n0.00");
        assert_eq!(kept_whole(&file), "the 3 lines before it are in the file, each whole");
        assert_eq!(std::fs::read(&file).unwrap(), b"t,y\n0,1\n0.001,2\n");
        let empty = scratch("no-newline", b"t,y");
        cut_to_whole_lines(&empty).unwrap();
        assert_eq!(count_lines(&empty).unwrap(), 0);
        assert!(std::fs::read(&empty).unwrap().is_empty());
    }

    #[test]
    fn a_whole_file_is_left_as_it_is() {
        let long: Vec<u8> = (0..5000).flat_map(|i| format!("{i}\n").into_bytes()).collect();
        let file = scratch("whole", &long);
        cut_to_whole_lines(&file).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), long);
        assert_eq!(count_lines(&file).unwrap(), 5000);
    }

    #[test]
    fn outputs_go_to_the_results_folder_unless_absolute() {
        let results = Path::new("/tmp/results");
        assert_eq!(in_results(results, Path::new("run.csv")), results.join("run.csv"));
        assert_eq!(
            in_results(results, Path::new("/elsewhere/run.csv")),
            Path::new("/elsewhere/run.csv")
        );
        let error = create_output(Path::new("/proc/no/such/run.csv"), "cannot create the recording", |f| {
            std::fs::write(f, b"")
        })
        .expect_err("no folder there");
        assert!(
            error.to_string().starts_with("cannot create the recording /proc/no"),
            "{error}"
        );
    }
}
