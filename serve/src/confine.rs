//! The served folder as an open directory, and every file the server
//! touches for a request resolved beneath it by the kernel: `openat2`
//! with `RESOLVE_BENEATH` follows symbolic links that stay inside and
//! refuses one that leads out (an absolute target, or `..` past the
//! folder) before anything outside is looked up, so a refusal says
//! nothing of what is there. Files are opened, listed and created through
//! the descriptor this gives, never through a path resolved again.
//!
//! Kernels without `openat2` (Linux before 5.6, or a sandbox that
//! forbids it) get a walk that opens one component at a time with
//! `O_NOFOLLOW` and follows no symbolic link at all.

use std::ffi::OsStr;
use std::fmt;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{openat, openat2, statat, AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// The folder of the served folder that runs write into.
pub const RESULTS: &str = "results";

/// Why a path cannot be used.
#[derive(Debug)]
pub enum Refused {
    /// It leads out of the folder: absolute, `..` past it, or through a
    /// symbolic link pointing out.
    Outside,
    /// Symbolic links loop, or are nested too deep.
    Loop,
    /// A symbolic link, where links are not followed (see the module's
    /// doc).
    Link,
    /// Nothing is there.
    Missing,
    /// A symbolic link to nothing, where a file is to be created.
    Dangling,
    /// A part of it that must be a folder is not.
    NotAFolder,
    /// It is there, and not a regular file.
    NotAFile,
    /// What the system said otherwise.
    Io(std::io::Error),
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Outside => f.write_str("it leads out of the served folder"),
            Refused::Loop => f.write_str("its symbolic links loop"),
            Refused::Link => f.write_str(
                "it goes through a symbolic link, and this system (no openat2: Linux before 5.6) cannot follow \
                 one safely",
            ),
            Refused::Missing => f.write_str("no such file or folder"),
            Refused::Dangling => f.write_str("it is a symbolic link to nothing; remove the link or name another file"),
            Refused::NotAFolder => f.write_str("a part of it is not a folder"),
            Refused::NotAFile => f.write_str("it is not a regular file"),
            Refused::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<Errno> for Refused {
    fn from(e: Errno) -> Self {
        match e {
            Errno::XDEV => Refused::Outside,
            Errno::LOOP => Refused::Loop,
            Errno::NOENT => Refused::Missing,
            Errno::NOTDIR => Refused::NotAFolder,
            e => Refused::Io(e.into()),
        }
    }
}

/// `text` with `folder`'s absolute path taken out (paths inside it become
/// relative), so that no answer shows where the server keeps its files.
pub fn relative(folder: &Path, text: &str) -> String {
    let folder = folder.to_string_lossy();
    text.replace(&format!("{folder}/"), "").replace(&*folder, ".")
}

/// Every string in `value` made [`relative`] to `folder`.
pub fn relative_json(folder: &Path, value: &mut serde_json::Value) {
    match value {
        serde_json::Value::String(text) => *text = relative(folder, text),
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| relative_json(folder, v)),
        serde_json::Value::Object(fields) => fields.values_mut().for_each(|v| relative_json(folder, v)),
        _ => {}
    }
}

/// The served folder, open.
#[derive(Debug)]
pub struct Root {
    dir: OwnedFd,
    /// Its canonical path.
    path: PathBuf,
    /// Whether the kernel resolves beneath it (`openat2`); otherwise the
    /// walk that follows no link.
    beneath: bool,
}

/// How many times a resolution disturbed by a concurrent rename is tried.
const TRIES: usize = 8;

impl Root {
    /// Opens the folder at `path`.
    pub fn open(path: &Path) -> std::io::Result<Root> {
        let path = path.canonicalize()?;
        let dir = rustix::fs::open(&path, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())?;
        let beneath = openat2(
            &dir,
            ".",
            OFlags::PATH | OFlags::CLOEXEC,
            Mode::empty(),
            ResolveFlags::BENEATH,
        )
        .is_ok();
        Ok(Root { dir, path, beneath })
    }

    /// Its canonical path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens `relative` (inside the folder; `..` allowed while it stays
    /// inside) with `flags` (and `mode` when it creates).
    pub fn open_at(&self, relative: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Refused> {
        // openat2 refuses O_PATH with any flag but these.
        let flags = match flags.contains(OFlags::PATH) {
            true => flags | OFlags::CLOEXEC,
            false => flags | OFlags::CLOEXEC | OFlags::NOCTTY,
        };
        if relative.has_root() {
            return Err(Refused::Outside);
        }
        let relative = if relative.as_os_str().is_empty() {
            Path::new(".")
        } else {
            relative
        };
        if !self.beneath {
            return self.walk(relative, flags, mode);
        }
        let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
        for _ in 0..TRIES {
            match openat2(&self.dir, relative, flags, mode, resolve) {
                Err(Errno::AGAIN) | Err(Errno::INTR) => continue,
                result => return result.map_err(Refused::from),
            }
        }
        Err(Refused::Io(Errno::AGAIN.into()))
    }

    /// The kind of what `relative` leads to.
    pub fn kind(&self, relative: &Path) -> Result<FileType, Refused> {
        let fd = self.open_at(relative, OFlags::PATH, Mode::empty())?;
        Ok(FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode))
    }

    /// Its folder `relative`, as a root of its own (what is resolved
    /// beneath it stays in it).
    pub fn subfolder(&self, relative: &Path) -> Result<Root, Refused> {
        let dir = self.open_at(relative, OFlags::PATH | OFlags::DIRECTORY, Mode::empty())?;
        Ok(Root {
            dir,
            path: self.path.join(relative),
            beneath: self.beneath,
        })
    }

    /// Whether `relative` is itself a symbolic link (its folder resolved
    /// beneath the root).
    pub fn is_link(&self, relative: &Path) -> bool {
        let (Some(parent), Some(name)) = (relative.parent(), relative.file_name()) else {
            return false;
        };
        let Ok(dir) = self.open_at(parent, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()) else {
            return false;
        };
        statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Symlink)
    }

    /// Checks that a file may be created or replaced at `relative` (`..`
    /// not allowed) by a caller that opens it by path: its deepest part
    /// that exists resolves beneath the root, is a regular file when it is
    /// the file itself and a folder otherwise, and no part of it is a
    /// symbolic link to nothing (which the caller would follow).
    pub fn check_new(&self, relative: &Path) -> Result<(), Refused> {
        if relative.has_root() || relative.components().any(|c| c == Component::ParentDir) {
            return Err(Refused::Outside);
        }
        for part in relative.ancestors().filter(|p| !p.as_os_str().is_empty()) {
            let expected = if part == relative {
                FileType::RegularFile
            } else {
                FileType::Directory
            };
            match self.kind(part) {
                Ok(kind) if kind == expected => return Ok(()),
                Ok(_) if part == relative => return Err(Refused::NotAFile),
                Ok(_) => return Err(Refused::NotAFolder),
                Err(Refused::Missing) if self.is_link(part) => return Err(Refused::Dangling),
                Err(Refused::Missing) => continue,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// `open_at` for kernels without `openat2`: `..` taken lexically
    /// (exact, since no link is followed), then one component at a time,
    /// none of them a symbolic link.
    fn walk(&self, relative: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Refused> {
        let mut parts: Vec<&OsStr> = Vec::new();
        for component in relative.components() {
            match component {
                Component::Normal(name) => parts.push(name),
                Component::CurDir => {}
                Component::ParentDir => {
                    parts.pop().ok_or(Refused::Outside)?;
                }
                Component::RootDir | Component::Prefix(_) => return Err(Refused::Outside),
            }
        }
        let Some((last, folders)) = parts.split_last() else {
            return Ok(openat(&self.dir, ".", flags, mode)?);
        };
        let mut dir = openat(
            &self.dir,
            ".",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let link = |dir: &OwnedFd, name: &OsStr| {
            statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Symlink)
        };
        for name in folders {
            let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            dir = match openat(&dir, *name, flags, Mode::empty()) {
                Ok(next) => next,
                Err(Errno::NOTDIR) if link(&dir, name) => return Err(Refused::Link),
                Err(e) => return Err(e.into()),
            };
        }
        match openat(&dir, *last, flags | OFlags::NOFOLLOW, mode) {
            Err(Errno::LOOP) | Err(Errno::NOTDIR) if link(&dir, last) => Err(Refused::Link),
            Err(e) => Err(e.into()),
            Ok(fd) if FileType::from_raw_mode(rustix::fs::fstat(&fd)?.st_mode) == FileType::Symlink => {
                Err(Refused::Link)
            }
            Ok(fd) => Ok(fd),
        }
    }

    #[cfg(test)]
    fn without_openat2(mut self) -> Root {
        self.beneath = false;
        self
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use super::*;

    /// A folder `root` with `inside/file.json`, beside `outside/secret`,
    /// and links of each kind in `root`.
    fn layout(name: &str) -> (PathBuf, PathBuf) {
        let base = std::env::temp_dir().join(format!("tandem-confine-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let (root, outside) = (base.join("root"), base.join("outside"));
        std::fs::create_dir_all(root.join("inside")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(root.join("inside/file.json"), "{}").unwrap();
        std::fs::write(outside.join("secret"), "s").unwrap();
        symlink("inside/file.json", root.join("in")).unwrap();
        symlink(outside.join("secret"), root.join("out")).unwrap();
        symlink("../outside/secret", root.join("out-relative")).unwrap();
        symlink(outside.join("missing"), root.join("dangling-out")).unwrap();
        symlink("inside/missing.json", root.join("dangling-in")).unwrap();
        symlink("loop-b", root.join("loop-a")).unwrap();
        symlink("loop-a", root.join("loop-b")).unwrap();
        symlink(&outside, root.join("out-dir")).unwrap();
        (root, base)
    }

    fn read(root: &Root, path: &str) -> Result<String, Refused> {
        let fd = root.open_at(Path::new(path), OFlags::RDONLY, Mode::empty())?;
        Ok(std::io::read_to_string(std::fs::File::from(fd)).unwrap())
    }

    fn create(root: &Root, path: &str) -> Result<(), Refused> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC;
        root.open_at(Path::new(path), flags, Mode::from_raw_mode(0o644))
            .map(drop)
    }

    #[test]
    fn links_inside_are_followed_and_links_out_refused_whether_their_target_exists_or_not() {
        let (path, base) = layout("beneath");
        let root = Root::open(&path).unwrap();
        assert!(root.beneath, "this kernel has openat2");
        assert_eq!(read(&root, "in").unwrap(), "{}");
        assert_eq!(read(&root, "inside/../in").unwrap(), "{}");
        for out in [
            "out",
            "out-relative",
            "dangling-out",
            "out-dir/secret",
            "../outside/secret",
            "/etc/passwd",
        ] {
            assert!(matches!(read(&root, out), Err(Refused::Outside)), "{out}");
        }
        assert!(matches!(create(&root, "dangling-out"), Err(Refused::Outside)));
        assert!(matches!(create(&root, "out-dir/new.json"), Err(Refused::Outside)));
        assert!(!base.join("outside/missing").exists() && !base.join("outside/new.json").exists());
        assert!(matches!(read(&root, "loop-a"), Err(Refused::Loop)));
        assert!(matches!(read(&root, "dangling-in"), Err(Refused::Missing)));
        // Creating through a dangling link that stays inside creates its target.
        create(&root, "dangling-in").unwrap();
        assert!(path.join("inside/missing.json").is_file());
        std::fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn without_openat2_no_link_is_followed() {
        let (path, base) = layout("walk");
        let root = Root::open(&path).unwrap().without_openat2();
        assert_eq!(read(&root, "inside/file.json").unwrap(), "{}");
        assert_eq!(read(&root, "inside/../inside/./file.json").unwrap(), "{}");
        for link in ["in", "out", "dangling-out", "dangling-in", "loop-a", "out-dir/secret"] {
            assert!(matches!(read(&root, link), Err(Refused::Link)), "{link}");
        }
        assert!(matches!(create(&root, "dangling-out"), Err(Refused::Link)));
        assert!(matches!(create(&root, "out-dir/new.json"), Err(Refused::Link)));
        assert!(matches!(root.kind(Path::new("in")), Err(Refused::Link)));
        assert!(matches!(
            read(&root, "inside/../../outside/secret"),
            Err(Refused::Outside)
        ));
        assert!(matches!(read(&root, "inside/file.json/x"), Err(Refused::NotAFolder)));
        assert!(matches!(read(&root, "nothing"), Err(Refused::Missing)));
        create(&root, "inside/new.json").unwrap();
        assert!(path.join("inside/new.json").is_file());
        assert!(!base.join("outside/missing").exists() && !base.join("outside/new.json").exists());
        std::fs::remove_dir_all(base).unwrap();
    }
}
