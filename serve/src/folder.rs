//! The served folder's files through the API: listed, read and written
//! beneath the folder ([`Root`]), by paths that are relative,
//! `/`-separated and without `..`.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::stream;
use rustix::fs::{FileType, Mode, OFlags};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::AsyncReadExt;

use crate::body::{read as read_body, require_type};
use crate::confine::{Refused, Root};
use crate::error::{blocking, ApiError};
use crate::state::App;

/// The most entries a folder listing shows.
const MAX_ENTRIES: usize = 10_000;
/// The bytes of a file sent at a time.
const CHUNK: usize = 64 << 10;

/// `relative`, a path given to the API, as a path inside the folder; 403
/// when it is absolute, has `..`, `\` or NUL.
pub fn api_path(relative: &str) -> Result<&Path, ApiError> {
    let forbidden = |why: &str| {
        ApiError::new(
            StatusCode::FORBIDDEN,
            format!("path \"{relative}\": {why}; give a path relative to the served folder, without `..`"),
        )
        .at("path", relative)
    };
    if relative.contains('\0') || relative.contains('\\') {
        return Err(forbidden("NUL and `\\` are not allowed"));
    }
    let path = Path::new(relative);
    if !path
        .components()
        .all(|c| matches!(c, std::path::Component::Normal(_) | std::path::Component::CurDir))
    {
        return Err(forbidden("absolute paths and `..` are not allowed"));
    }
    Ok(path)
}

/// The API's error for `path` that cannot be used as it is.
pub fn refused(path: &str, why: Refused) -> ApiError {
    let status = match &why {
        Refused::Outside | Refused::Loop | Refused::Link | Refused::Dangling => StatusCode::FORBIDDEN,
        Refused::Missing | Refused::NotAFolder => StatusCode::NOT_FOUND,
        Refused::NotAFile => StatusCode::BAD_REQUEST,
        Refused::Io(e) if e.kind() == std::io::ErrorKind::PermissionDenied => StatusCode::FORBIDDEN,
        Refused::Io(_) => StatusCode::CONFLICT,
    };
    ApiError::new(status, format!("path \"{path}\": {why}")).at("path", path)
}

/// `?dir=` of a listing.
#[derive(Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    dir: String,
}

/// `GET /api/files?dir=DIR`: the folder's entries, folders first;
/// symbolic links that lead out of the folder, dangle or loop are left
/// out.
pub async fn list(State(app): State<Arc<App>>, Query(q): Query<ListQuery>) -> Result<Json<Value>, ApiError> {
    blocking(move || {
        let dir = api_path(&q.dir)?;
        let entries = entries(&app.root, dir).map_err(|e| refused(&q.dir, e))?;
        let entries: Vec<Value> = entries
            .into_iter()
            .map(|(file, name, size)| match file {
                true => json!({"name": name, "kind": "file", "size": size}),
                false => json!({"name": name, "kind": "dir"}),
            })
            .collect();
        Ok(Json(json!({"dir": q.dir, "entries": entries})))
    })
    .await
}

/// The entries of folder `dir`, sorted folders first: whether a file,
/// the name, the size.
fn entries(root: &Root, dir: &Path) -> Result<Vec<(bool, String, u64)>, Refused> {
    let fd = root.open_at(dir, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())?;
    let mut entries = Vec::new();
    for entry in rustix::fs::Dir::read_from(&fd)?.flatten() {
        let name = std::ffi::OsStr::from_bytes(entry.file_name().to_bytes());
        if name == "." || name == ".." {
            continue;
        }
        let Ok(target) = root.open_at(&dir.join(name), OFlags::PATH, Mode::empty()) else {
            continue;
        };
        let Ok(stat) = rustix::fs::fstat(&target) else { continue };
        let file = FileType::from_raw_mode(stat.st_mode) != FileType::Directory;
        entries.push((file, name.to_string_lossy().into_owned(), stat.st_size as u64));
        if entries.len() == MAX_ENTRIES {
            break;
        }
    }
    entries.sort();
    Ok(entries)
}

/// Opens file `path` with `flags`, refusing anything but a regular file
/// (a FIFO is opened without waiting for its other end, then refused).
fn open_file(root: &Root, path: &str, flags: OFlags, mode: Mode) -> Result<std::fs::File, ApiError> {
    let fd = root
        .open_at(api_path(path)?, flags | OFlags::NONBLOCK, mode)
        .map_err(|e| match e {
            Refused::Io(e) if e.raw_os_error() == Some(rustix::io::Errno::ISDIR.raw_os_error()) => {
                folder_not_file(path)
            }
            Refused::Missing if flags.contains(OFlags::CREATE) => ApiError::new(
                StatusCode::CONFLICT,
                format!("cannot write \"{path}\": its folder does not exist; create it first"),
            )
            .at("path", path),
            e => refused(path, e),
        })?;
    let stat = rustix::fs::fstat(&fd).map_err(|e| refused(path, e.into()))?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => Ok(std::fs::File::from(fd)),
        FileType::Directory => Err(folder_not_file(path)),
        _ => Err(ApiError::bad_request(format!("\"{path}\" is not a regular file")).at("path", path)),
    }
}

fn folder_not_file(path: &str) -> ApiError {
    ApiError::bad_request(format!("\"{path}\" is a folder; list folders with /api/files?dir=")).at("path", path)
}

/// `GET /api/files/PATH`: the file's bytes, streamed.
pub async fn read(State(app): State<Arc<App>>, UrlPath(path): UrlPath<String>) -> Result<Response, ApiError> {
    let kind = match Path::new(&path).extension().and_then(|e| e.to_str()) {
        Some("json") => "application/json",
        Some("csv") => "text/csv",
        _ => "text/plain; charset=utf-8",
    };
    let file = blocking(move || open_file(&app.root, &path, OFlags::RDONLY, Mode::empty())).await?;
    let file = tokio::fs::File::from_std(file);
    let chunks = stream::try_unfold(file, |mut file| async move {
        let mut chunk = vec![0; CHUNK];
        let n = file.read(&mut chunk).await?;
        chunk.truncate(n);
        Ok::<_, std::io::Error>((n > 0).then(|| (Bytes::from(chunk), file)))
    });
    Ok(([(header::CONTENT_TYPE, kind)], Body::from_stream(chunks)).into_response())
}

/// `PUT /api/files/PATH`: writes a `.json` model (`application/json`) or
/// a `.toml` configuration (`application/toml`); a file with more than
/// one hard link is refused (403), since another of its names may be
/// outside the folder.
pub async fn write(
    State(app): State<Arc<App>>,
    UrlPath(path): UrlPath<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<StatusCode, ApiError> {
    let kind = match Path::new(&path).extension().and_then(|e| e.to_str()) {
        Some("json") => "application/json",
        Some("toml") => "application/toml",
        _ => {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!("\"{path}\": only .json models and .toml configurations can be written"),
            )
            .at("path", path.as_str()))
        }
    };
    require_type(&headers, kind)?;
    let body = read_body(body, app.limits.body).await?;
    if std::str::from_utf8(&body).is_err() {
        return Err(ApiError::bad_request("the file's text is not UTF-8").at("path", path.as_str()));
    }
    blocking(move || {
        // Not truncated at open: a file with another hard link is refused
        // untouched.
        let flags = OFlags::WRONLY | OFlags::CREATE;
        let mut file = open_file(&app.root, &path, flags, Mode::from_raw_mode(0o666))?;
        let cannot = |e: std::io::Error| {
            ApiError::new(StatusCode::CONFLICT, format!("cannot write \"{path}\": {e}")).at("path", path.as_str())
        };
        let links = rustix::fs::fstat(&file).map_err(|e| cannot(e.into()))?.st_nlink;
        if links > 1 {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "\"{path}\" has {links} hard links, so writing it would change a file that may be outside the \
                     served folder; the server writes only files with one link: save under another name"
                ),
            )
            .at("path", path.as_str()));
        }
        file.set_len(0).map_err(cannot)?;
        file.write_all(&body).map_err(cannot)
    })
    .await?;
    Ok(StatusCode::NO_CONTENT)
}
