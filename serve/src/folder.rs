//! The served folder: the only part of the file system the API reads and
//! writes. Paths are relative, `/`-separated, and must stay inside it,
//! symbolic links followed.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path as UrlPath, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::state::App;

/// The most entries a folder listing shows.
const MAX_ENTRIES: usize = 10_000;

/// `relative` inside `root` (canonical), the existing part of it resolved
/// through symbolic links; 403 when it leads out.
pub fn resolve(root: &Path, relative: &str) -> Result<PathBuf, ApiError> {
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
        .all(|c| matches!(c, Component::Normal(_) | Component::CurDir))
    {
        return Err(forbidden("absolute paths and `..` are not allowed"));
    }
    let joined = root.join(path);
    // The deepest existing ancestor, resolved, must be inside the root.
    let mut existing = joined.as_path();
    while !existing.exists() {
        existing = existing.parent().unwrap_or(root);
    }
    let resolved = existing
        .canonicalize()
        .map_err(|e| forbidden(&format!("cannot be resolved ({e})")))?;
    if !resolved.starts_with(root) {
        return Err(forbidden("it leads out of the served folder"));
    }
    Ok(joined)
}

/// `?dir=` of a listing.
#[derive(Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    dir: String,
}

/// `GET /api/files?dir=DIR`: the folder's entries, folders first.
pub async fn list(State(app): State<Arc<App>>, Query(q): Query<ListQuery>) -> Result<Json<Value>, ApiError> {
    let dir = resolve(&app.folder, &q.dir)?;
    let read = std::fs::read_dir(&dir).map_err(|e| {
        ApiError::not_found(format!("folder \"{}\": {e}; give an existing folder", q.dir)).at("path", q.dir.as_str())
    })?;
    let mut entries: Vec<(bool, String, u64)> = Vec::new();
    for entry in read.flatten().take(MAX_ENTRIES) {
        let Ok(meta) = entry.metadata() else { continue };
        entries.push((
            !meta.is_dir(),
            entry.file_name().to_string_lossy().into_owned(),
            meta.len(),
        ));
    }
    entries.sort();
    let entries: Vec<Value> = entries
        .into_iter()
        .map(|(file, name, size)| match file {
            true => json!({"name": name, "kind": "file", "size": size}),
            false => json!({"name": name, "kind": "dir"}),
        })
        .collect();
    Ok(Json(json!({"dir": q.dir, "entries": entries})))
}

/// `GET /api/files/PATH`: the file's bytes.
pub async fn read(State(app): State<Arc<App>>, UrlPath(path): UrlPath<String>) -> Result<Response, ApiError> {
    let file = resolve(&app.folder, &path)?;
    let missing = |e: std::io::Error| ApiError::not_found(format!("file \"{path}\": {e}")).at("path", path.as_str());
    let meta = std::fs::metadata(&file).map_err(missing)?;
    if !meta.is_file() {
        return Err(ApiError::bad_request(format!(
            "\"{path}\" is not a file; list folders with /api/files?dir="
        )));
    }
    if meta.len() > app.limits.body as u64 {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "file \"{path}\" has {} bytes, more than the {} a request may carry",
                meta.len(),
                app.limits.body
            ),
        ));
    }
    let bytes = std::fs::read(&file).map_err(missing)?;
    let kind = match file.extension().and_then(|e| e.to_str()) {
        Some("json") => "application/json",
        Some("csv") => "text/csv",
        _ => "text/plain; charset=utf-8",
    };
    Ok(([(header::CONTENT_TYPE, kind)], bytes).into_response())
}

/// `PUT /api/files/PATH`: writes a `.json` or `.toml` file.
pub async fn write(
    State(app): State<Arc<App>>,
    UrlPath(path): UrlPath<String>,
    body: Bytes,
) -> Result<StatusCode, ApiError> {
    let file = resolve(&app.folder, &path)?;
    if !matches!(file.extension().and_then(|e| e.to_str()), Some("json" | "toml")) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!("\"{path}\": only .json models and .toml configurations can be written"),
        )
        .at("path", path.as_str()));
    }
    if file.is_dir() {
        return Err(ApiError::bad_request(format!("\"{path}\" is a folder")).at("path", path.as_str()));
    }
    if std::str::from_utf8(&body).is_err() {
        return Err(ApiError::bad_request("the file's text is not UTF-8").at("path", path.as_str()));
    }
    std::fs::write(&file, &body).map_err(|e| {
        ApiError::new(
            StatusCode::CONFLICT,
            format!("cannot write \"{path}\": {e}; does its folder exist?"),
        )
        .at("path", path.as_str())
    })?;
    Ok(StatusCode::NO_CONTENT)
}
