//! The page: `web/dist/`, built from `web/` and embedded in the binary at
//! compile time, so that `cargo build` alone gives a server with its page.

use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use include_dir::{include_dir, Dir};

static PAGE: Dir<'_> = include_dir!("$CARGO_MANIFEST_DIR/../web/dist");

/// A file of the page by its URL path; any other path is the page itself
/// (its views are client-side routes).
pub async fn serve(uri: Uri) -> Response {
    let path = uri.path().trim_start_matches('/');
    let file = PAGE.get_file(path).or_else(|| PAGE.get_file("index.html"));
    match file {
        Some(file) => {
            let kind = match file.path().extension().and_then(|e| e.to_str()) {
                Some("html") => "text/html; charset=utf-8",
                Some("js") => "text/javascript; charset=utf-8",
                Some("css") => "text/css; charset=utf-8",
                Some("svg") => "image/svg+xml",
                Some("png") => "image/png",
                Some("ico") => "image/x-icon",
                Some("json") => "application/json",
                _ => "application/octet-stream",
            };
            ([(header::CONTENT_TYPE, kind)], file.contents()).into_response()
        }
        None => (
            StatusCode::NOT_FOUND,
            "this build of tandem has no page: build web/ (see web/README.md) and rebuild",
        )
            .into_response(),
    }
}
