//! The server's routes, and the checks every request passes first.

use std::sync::Arc;

use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::header::{AUTHORIZATION, CONTENT_LENGTH};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::error::ApiError;
use crate::state::App;
use crate::{folder, library, page, runs, simulations};

/// The routes: the page at `/`, the API under `/api`.
pub fn router(app: Arc<App>) -> Router {
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
        .route("/runs/{id}/stream", get(runs::stream))
        .fallback(|| async { ApiError::not_found("no such API endpoint; see serve/API.md") })
        .layer(middleware::from_fn_with_state(Arc::clone(&app), authorize));
    Router::new()
        .nest("/api", api)
        .fallback(page::serve)
        .layer(DefaultBodyLimit::max(app.limits.body))
        .layer(middleware::from_fn_with_state(Arc::clone(&app), refuse_oversized))
        .with_state(app)
}

/// Refuses API requests without the token, when there is one: in the
/// `Authorization: Bearer` header, or `?token=` for WebSockets.
async fn authorize(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let Some(token) = &app.token else {
        return next.run(request).await;
    };
    let bearer = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let query = request
        .uri()
        .query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("token="));
    if bearer == Some(token) || query == Some(token) {
        next.run(request).await
    } else {
        ApiError::unauthorized().into_response()
    }
}

/// Refuses a body whose declared length is over the bound before reading
/// it (a body without a length is cut at the bound as it is read).
async fn refuse_oversized(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(length) if length > app.limits.body as u64 => ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request body has {length} bytes, more than the {} this server takes; send a smaller model",
                app.limits.body
            ),
        )
        .into_response(),
        _ => next.run(request).await,
    }
}
