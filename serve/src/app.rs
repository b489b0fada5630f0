//! The server's routes, and the layers every request passes.

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::http::Uri;
use axum::middleware;
use axum::routing::{get, post};
use axum::Router;

use crate::body::{drain_unread, refuse_oversized};
use crate::error::{json_errors, ApiError};
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
