//! Request bodies: of the type the endpoint takes, read whole up to the
//! server's bound within a time, and the slots that bound how many models
//! are compiled at once.

use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{FromRequest, Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::BodyExt;
use tokio::sync::OwnedSemaphorePermit;

use crate::error::ApiError;
use crate::state::App;

/// The longest a request body may take to arrive.
const BODY_WAIT: Duration = Duration::from_secs(30);

/// Refuses (415) a body whose `Content-Type` is not `expected` (its
/// parameters, such as `charset`, aside).
pub fn require_type(headers: &HeaderMap, expected: &str) -> Result<(), ApiError> {
    let given = headers.get(CONTENT_TYPE).and_then(|v| v.to_str().ok());
    let media = given.map(|v| v.split(';').next().unwrap_or("").trim());
    if media.is_some_and(|m| m.eq_ignore_ascii_case(expected)) {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        format!(
            "the body's Content-Type is {}; send it as {expected}",
            given.map_or("missing".to_string(), |g| format!("\"{g}\""))
        ),
    )
    .at("key", "Content-Type"))
}

/// Reads `body` whole: 413 past `limit` bytes (whether its length was
/// declared or not), 408 when it takes longer than [`BODY_WAIT`].
pub async fn read(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    match tokio::time::timeout(BODY_WAIT, axum::body::to_bytes(body, limit)).await {
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body took more than {} s to arrive; send it at once",
                BODY_WAIT.as_secs()
            ),
        )),
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(e)) => {
            let e = e.into_inner();
            match e.is::<http_body_util::LengthLimitError>() {
                true => Err(too_large(limit)),
                false => Err(ApiError::bad_request(format!(
                    "the request body could not be read: {e}"
                ))),
            }
        }
    }
}

/// 413: a body over `limit` bytes.
pub fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body has more than the {limit} bytes this server takes; send a smaller one"),
    )
}

/// Every request: refused (413) when its declared length is over the
/// bound, before anything of it is read (a body without a length is cut
/// at the bound as it is read).
pub async fn refuse_oversized(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let declared = request
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match declared {
        Some(length) if length > app.limits.body as u64 => too_large(app.limits.body).into_response(),
        _ => next.run(request).await,
    }
}

/// A JSON request body (`Content-Type: application/json`), read whole.
pub struct JsonBody(pub Bytes);

impl FromRequest<Arc<App>> for JsonBody {
    type Rejection = ApiError;

    async fn from_request(request: Request, app: &Arc<App>) -> Result<Self, ApiError> {
        require_type(request.headers(), "application/json")?;
        read(request.into_body(), app.limits.body).await.map(JsonBody)
    }
}

/// One of the server's slots for compiling a model (a check, the ports of
/// a block, the start of a simulation or a run), held until the
/// compilation ends.
pub struct Slot {
    _permit: OwnedSemaphorePermit,
}

/// A JSON request body whose model is compiled in one of the server's
/// slots, taken before the body is read (so that bodies held open cannot
/// pile up models). When every slot is taken, the body is read and
/// dropped (so that a client still sending gets the answer, not a broken
/// connection) and the answer is 429.
pub struct Compiled {
    /// The slot, to hold while compiling.
    pub slot: Slot,
    /// The body.
    pub body: Bytes,
}

impl FromRequest<Arc<App>> for Compiled {
    type Rejection = ApiError;

    async fn from_request(request: Request, app: &Arc<App>) -> Result<Self, ApiError> {
        require_type(request.headers(), "application/json")?;
        match Arc::clone(&app.compiling).try_acquire_owned() {
            Ok(permit) => Ok(Compiled {
                slot: Slot { _permit: permit },
                body: read(request.into_body(), app.limits.body).await?,
            }),
            Err(_) => {
                discard(request.into_body(), app.limits.body).await;
                Err(ApiError::busy(
                    "model checks and compilations",
                    app.limits.checks,
                    "try again after the Retry-After seconds",
                ))
            }
        }
    }
}

/// Reads `body` and drops it, up to `limit` bytes and [`BODY_WAIT`].
async fn discard(mut body: Body, limit: usize) {
    let mut seen = 0;
    let _ = tokio::time::timeout(BODY_WAIT, async {
        while let Some(Ok(frame)) = body.frame().await {
            seen += frame.data_ref().map_or(0, |d| d.len());
            if seen > limit {
                break;
            }
        }
    })
    .await;
}
