//! Request bodies: of the type the endpoint takes, read whole up to the
//! server's bound within [`BODY_WAIT`], and, for a model to compile, a
//! slot taken once the body has arrived ([`crate::slots`]).

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, FromRequest, Request, State};
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use http_body_util::BodyExt;

use crate::error::{too_large, ApiError};
use crate::slots::Slot;
use crate::state::App;

/// The longest a request body may take to arrive, from the handler's
/// first read of it to its last byte.
const BODY_WAIT: Duration = Duration::from_secs(5);

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

/// The body's length, when the request declares it.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
}

/// Every request: refused (413) when its declared length is over the
/// bound, before anything of it is read (a body without a length is cut
/// at the bound as it is read).
pub async fn refuse_oversized(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    match declared_length(request.headers()) {
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

/// A JSON request body whose model is compiled in one of the server's
/// slots, taken once the body has arrived whole (so that bodies sent
/// slowly hold none) and within the client's share; 429 when every slot,
/// or the client's share, is taken.
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
        let peer = request
            .extensions()
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(address)| address.ip());
        if let Some(length) = declared_length(request.headers()) {
            app.compiling.refuse_larger(length)?;
        }
        let body = read(request.into_body(), app.limits.body).await?;
        Ok(Compiled {
            slot: app.compiling.take(peer, body.len())?,
            body,
        })
    }
}

/// A request body that the layer which made it can read the rest of once
/// the handler has answered.
struct Shared(Arc<Mutex<Body>>);

impl http_body::Body for Shared {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let mut body = self.0.lock().unwrap_or_else(|e| e.into_inner());
        Pin::new(&mut *body).poll_frame(cx)
    }
}

/// Every request: once answered, what its handler left of its body is
/// read and dropped (up to the bound, within [`BODY_WAIT`]) before the
/// answer goes out, so that a client still sending a body the server
/// refused early (a slot, a type, an origin, a model too large to
/// compile) gets the answer, on a connection it may use again. A body
/// declared over the bound, found over it, or late (408), is not read on.
pub async fn drain_unread(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    let declared = declared_length(request.headers());
    if declared.is_some_and(|length| length > app.limits.body as u64) {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let shared = Arc::new(Mutex::new(body));
    let request = Request::from_parts(parts, Body::new(Shared(Arc::clone(&shared))));
    let response = next.run(request).await;
    // A body that did not arrive in time, or one found over the bound as
    // it was read (its length not declared), is not waited for again; a
    // 413 for a declared length within the bound refused something else
    // and is drained as any refusal.
    let drain = match response.status() {
        StatusCode::REQUEST_TIMEOUT => false,
        StatusCode::PAYLOAD_TOO_LARGE => declared.is_some(),
        _ => true,
    };
    if drain {
        let rest = std::mem::take(&mut *shared.lock().unwrap_or_else(|e| e.into_inner()));
        discard(rest, app.limits.body).await;
    }
    response
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
