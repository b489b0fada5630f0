//! The server's routes, and the layers every request passes.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::body::{drain_unread, refuse_oversized};
use crate::error::{too_large, ApiError};
use crate::guard::{check_api, check_host, protect};
use crate::page::Page;
use crate::state::App;
use crate::{folder, library, runs, simulations};

/// The routes: the page at `/`, the API under `/api`. Layers, outermost
/// first: the protective headers, what is left of a body read once
/// answered, 4xx bodies made JSON, the `Host` check, the body bound; for
/// the API, the origin and token checks.
pub fn router(app: Arc<App>, page: Page) -> Router {
    let api = Router::new()
        .route("/blocks", get(library::blocks))
        .route("/ports", post(library::ports))
        .route("/check", post(library::check))
        .route("/files", get(folder::list))
        .route("/files/{*path}", get(folder::read).put(folder::write))
        .route("/simulations", post(simulations::start).get(simulations::list))
        .route(
            "/simulations/{id}",
            get(simulations::status).delete(simulations::cancel),
        )
        .route("/simulations/{id}/csv", get(simulations::csv))
        .route("/simulations/{id}/stream", get(simulations::stream))
        .route("/runs", post(runs::start).get(runs::list))
        .route("/runs/{id}", get(runs::status).delete(runs::stop))
        .route("/runs/{id}/changes", post(runs::change).get(runs::changes))
        .route("/runs/{id}/faults", post(runs::fault))
        .route("/runs/{id}/stream", get(runs::stream))
        .fallback(|| async { ApiError::not_found("no such API endpoint; see serve/API.md") })
        .layer(middleware::from_fn_with_state(Arc::clone(&app), check_api));
    Router::new()
        .nest("/api", api)
        .fallback(move |uri: Uri| async move { page.serve(&uri) })
        .layer(DefaultBodyLimit::max(app.limits.body))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), refuse_oversized))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), check_host))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), json_errors))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), drain_unread))
        .layer(middleware::from_fn(protect))
        .with_state(app)
}

/// The most of a plain-text error body kept when it is made JSON.
const PLAIN_ERROR: usize = 1024;

/// Every response: a 4xx whose body is not JSON (the framework's own
/// refusals: a method not allowed, a body over the bound, a path or query
/// that cannot be decoded, a WebSocket request without its upgrade) gets
/// the API's JSON error body, naming the method, the path and the fix
/// (its other headers kept).
pub async fn json_errors(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let (method, path) = (request.method().clone(), request.uri().path().to_string());
    let response = next.run(request).await;
    let json = HeaderValue::from_static("application/json");
    if !response.status().is_client_error() || response.headers().get(header::CONTENT_TYPE) == Some(&json) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, PLAIN_ERROR).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let error = match parts.status {
        StatusCode::METHOD_NOT_ALLOWED => ApiError::new(
            parts.status,
            format!(
                "{method} is not allowed on {path}; the Allow header lists the methods it takes (see serve/API.md)"
            ),
        ),
        StatusCode::PAYLOAD_TOO_LARGE => too_large(app.limits.body),
        status => ApiError::new(
            status,
            format!(
                "{method} {path}: {}; see serve/API.md",
                text.trim().trim_end_matches('.')
            ),
        ),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::CONTENT_TYPE);
    let mut answer = error.into_response();
    for (name, value) in parts.headers.iter() {
        answer.headers_mut().entry(name).or_insert_with(|| value.clone());
    }
    answer
}
