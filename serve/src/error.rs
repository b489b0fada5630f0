//! API errors: a 4xx status and a JSON body naming the place and the fix.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use tandem_models::diagram::DiagramError;

/// An error answered to a request.
#[derive(Debug)]
pub struct ApiError {
    /// The status (4xx).
    pub status: StatusCode,
    /// What is wrong, with the fix.
    pub message: String,
    /// Where: `line`, `column`, `block`, `port`, `key`.
    pub place: Map<String, Value>,
    /// The model error's kind, when it is one.
    pub kind: Option<String>,
    /// Seconds to wait before trying again (429).
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An error with `status` and `message`, no place.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            place: Map::new(),
            kind: None,
            retry_after: None,
        }
    }

    /// 400: a malformed request.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// 422: a well-formed request that cannot be done (a bad model).
    pub fn unprocessable(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, message)
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// 401.
    pub fn unauthorized() -> Self {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "this server needs its token: send `Authorization: Bearer TOKEN` (WebSockets: `?token=TOKEN`)",
        )
    }

    /// 401: the token given in the query of an ordinary API request.
    pub fn token_in_query() -> Self {
        ApiError::new(
            StatusCode::UNAUTHORIZED,
            "the token is accepted in the query (`?token=`) only on a WebSocket upgrade, since a query is written \
             into logs and history; send it in the `Authorization: Bearer TOKEN` header",
        )
        .at("key", "token")
    }

    /// 429: `limit` `what` at once already; `fix` says what to do.
    pub fn busy(what: &str, limit: usize, fix: &str) -> Self {
        ApiError {
            retry_after: Some(1),
            ..ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!("{limit} {what} are running already, the server's limit; {fix}"),
            )
        }
    }

    /// Adds `key: value` to the place.
    pub fn at(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.place.insert(key.to_string(), value.into());
        self
    }

    /// 422 for a model error, with its block, port, line and column.
    pub fn model(error: &DiagramError) -> Self {
        let mut e = ApiError::unprocessable(error.to_string());
        if let Some((line, column)) = error.position {
            e = e.at("line", line).at("column", column);
        }
        if let Some(block) = &error.block {
            e = e.at("block", block.as_str());
        }
        if let Some(port) = &error.port {
            e = e.at("port", &**port);
        }
        e.kind = Some(format!("{:?}", error.kind));
        e
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut body = json!({"error": self.message});
        if !self.place.is_empty() {
            body["place"] = Value::Object(self.place);
        }
        if let Some(kind) = self.kind {
            body["kind"] = Value::String(kind);
        }
        let mut response = (self.status, Json(body)).into_response();
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, seconds.into());
        }
        response
    }
}

/// A request body parsed as JSON into `T`; a mistake is a 400 at its line
/// and column.
pub fn parse_body<T: DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    let text = std::str::from_utf8(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the request body is not UTF-8 (invalid byte at offset {}); send UTF-8 JSON",
            e.valid_up_to()
        ))
    })?;
    serde_json::from_str(text).map_err(|e| {
        ApiError::bad_request(format!("invalid request JSON: {e}"))
            .at("line", e.line())
            .at("column", e.column())
    })
}

/// Runs `work` (compiling a model, building a session) on the blocking
/// pool, so that a large model never holds up the server's other requests.
pub async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the server failed on this request ({e}); please report it with the request"),
        ))
    })
}

/// 413: a body over `limit` bytes.
pub fn too_large(limit: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body has more than the {limit} bytes this server takes; send a smaller one"),
    )
}
