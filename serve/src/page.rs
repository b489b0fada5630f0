//! The page: `web/dist/`, built from `web/` and embedded in the binary at
//! compile time, so that `cargo build` alone gives a server with its page;
//! or, for work on the page, a built page read from a folder at start-up
//! (`tandem serve --page web/dist`), so that a change needs no rebuild of
//! the binary.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Bytes;
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use include_dir::{include_dir, Dir};

static EMBEDDED: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../web/dist");

/// The most files and folders a page read from a folder may have.
pub const MAX_PAGE_FILES: usize = 1000;
/// The most bytes a page read from a folder may have in all.
pub const MAX_PAGE_BYTES: u64 = 64 << 20;

/// Where the page's files come from.
#[derive(Clone)]
pub enum Page {
    /// The page built into the binary.
    Embedded,
    /// A page read from a folder at start-up, by path relative to it
    /// (`assets/index.js`).
    Loaded(Arc<HashMap<String, Bytes>>),
}

/// Why a page folder cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum PageError {
    /// A file or folder cannot be read.
    #[error("--page {}: {cause}; give the folder `npm run build` writes (web/dist)", path.display())]
    Read {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        cause: std::io::Error,
    },
    /// The folder is larger than a page may be.
    #[error("--page {}: more than {MAX_PAGE_FILES} files and folders or {MAX_PAGE_BYTES} bytes; give the folder `npm run build` writes (web/dist)", .0.display())]
    TooLarge(PathBuf),
    /// An entry the page cannot hold: a symbolic link, or a name that is
    /// not UTF-8.
    #[error("--page {}: a symbolic link or a name that is not UTF-8; a built page has neither", .0.display())]
    Unusable(PathBuf),
    /// The folder has no `index.html`.
    #[error("--page {}: no index.html; give the folder `npm run build` writes (web/dist)", .0.display())]
    NoIndex(PathBuf),
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Page::Embedded => f.write_str("Embedded"),
            Page::Loaded(files) => write!(f, "Loaded({} files)", files.len()),
        }
    }
}

impl Page {
    /// The page in `folder`, read whole now: its files and folders, no
    /// symbolic link, bounded by [`MAX_PAGE_FILES`] and [`MAX_PAGE_BYTES`].
    pub fn load(folder: &Path) -> Result<Page, PageError> {
        let mut files = HashMap::new();
        let mut bytes = 0u64;
        let mut entries = 0usize;
        let mut pending = vec![(folder.to_path_buf(), String::new())];
        while let Some((dir, prefix)) = pending.pop() {
            let read = |path: &Path| {
                let path = path.to_path_buf();
                move |cause| PageError::Read { path, cause }
            };
            for entry in std::fs::read_dir(&dir).map_err(read(&dir))? {
                let entry = entry.map_err(read(&dir))?;
                let kind = entry.file_type().map_err(read(&entry.path()))?;
                let (Some(name), false) = (entry.file_name().to_str().map(str::to_string), kind.is_symlink()) else {
                    return Err(PageError::Unusable(entry.path()));
                };
                entries += 1;
                if entries > MAX_PAGE_FILES {
                    return Err(PageError::TooLarge(folder.to_path_buf()));
                }
                let relative = format!("{prefix}{name}");
                if kind.is_dir() {
                    pending.push((entry.path(), format!("{relative}/")));
                } else if kind.is_file() {
                    bytes += entry.metadata().map_err(read(&entry.path()))?.len();
                    if bytes > MAX_PAGE_BYTES {
                        return Err(PageError::TooLarge(folder.to_path_buf()));
                    }
                    files.insert(
                        relative,
                        Bytes::from(std::fs::read(entry.path()).map_err(read(&entry.path()))?),
                    );
                }
            }
        }
        if !files.contains_key("index.html") {
            return Err(PageError::NoIndex(folder.to_path_buf()));
        }
        Ok(Page::Loaded(Arc::new(files)))
    }

    /// The file at `path`, if the page has one.
    fn file(&self, path: &str) -> Option<Bytes> {
        match self {
            Page::Embedded => EMBEDDED.get_file(path).map(|f| Bytes::from_static(f.contents())),
            Page::Loaded(files) => files.get(path).cloned(),
        }
    }

    /// A file of the page by its URL path; any other path is the page
    /// itself (its views are client-side routes).
    pub fn serve(&self, uri: &Uri) -> Response {
        let path = uri.path().trim_start_matches('/');
        let (path, contents) = match self.file(path) {
            Some(contents) => (path, contents),
            None => match self.file("index.html") {
                Some(contents) => ("index.html", contents),
                None => {
                    return (
                        StatusCode::NOT_FOUND,
                        "this build of tandem has no page: build web/ (see web/README.md) and rebuild",
                    )
                        .into_response()
                }
            },
        };
        let kind = match Path::new(path).extension().and_then(|e| e.to_str()) {
            Some("html") => "text/html; charset=utf-8",
            Some("js") => "text/javascript; charset=utf-8",
            Some("css") => "text/css; charset=utf-8",
            Some("svg") => "image/svg+xml",
            Some("png") => "image/png",
            Some("ico") => "image/x-icon",
            Some("json") => "application/json",
            Some("woff2") => "font/woff2",
            _ => "application/octet-stream",
        };
        ([(header::CONTENT_TYPE, kind)], contents).into_response()
    }
}
