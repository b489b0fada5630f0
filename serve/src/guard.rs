//! What keeps other sites out: every request must name this server in its
//! `Host` (a page on another name that resolves here, DNS rebinding, is
//! refused); an API request a browser sends for another origin is refused
//! (its `Origin` or `Sec-Fetch-Site` says so), then the token is checked;
//! and every response carries the headers that keep it from being framed,
//! sniffed or read by another site. No response allows another origin
//! (no CORS).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::header::{HOST, ORIGIN, UPGRADE};
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::App;
use crate::token::{self, Carried};

/// The page's content security policy: its own scripts, styles, images
/// and connections (WebSockets included) only; no frames, forms or base.
pub const PAGE_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; \
                               connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; \
                               frame-ancestors 'none'";

/// The request's `Host`, as text.
fn host(headers: &HeaderMap) -> Option<&str> {
    headers.get(HOST).and_then(|v| v.to_str().ok())
}

/// Every request: refused (421) unless its `Host` names this server.
pub async fn check_host(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    match host(request.headers()) {
        Some(h) if app.hosts.allows(h) => next.run(request).await,
        given => ApiError::new(
            StatusCode::MISDIRECTED_REQUEST,
            format!(
                "this server does not answer to the name \"{}\"; open it by its address (or localhost), or start it \
                 with --allow-host NAME for each other name it has",
                given.unwrap_or("")
            ),
        )
        .at("key", "Host")
        .into_response(),
    }
}

/// Whether a browser says the request comes from another origin: its
/// `Origin` is not this server's (as the request's `Host` names it), or
/// `Sec-Fetch-Site` says another site.
fn cross_origin(headers: &HeaderMap) -> Option<String> {
    if let Some(origin) = headers.get(ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let authority = origin
            .strip_prefix("http://")
            .or_else(|| origin.strip_prefix("https://"));
        let own = matches!((authority, host(headers)), (Some(a), Some(h)) if a.eq_ignore_ascii_case(h));
        if !own {
            return Some(format!("its Origin is \"{origin}\""));
        }
    }
    match headers.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        Some(site @ ("cross-site" | "same-site")) => Some(format!("its Sec-Fetch-Site is \"{site}\"")),
        _ => None,
    }
}

/// Whether the request asks to become a WebSocket (`Upgrade: websocket`).
fn websocket_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get(UPGRADE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.eq_ignore_ascii_case("websocket"))
}

/// API requests: refused (403) when a browser sends them for another
/// origin; then (401) without the token, when the server has one, or
/// with it in the query of a request that is not a WebSocket upgrade.
pub async fn check_api(State(app): State<Arc<App>>, request: Request, next: Next) -> Response {
    if let Some(why) = cross_origin(request.headers()) {
        return ApiError::new(
            StatusCode::FORBIDDEN,
            format!("this request comes from another site ({why}); the API answers only the page this server serves"),
        )
        .at("key", "Origin")
        .into_response();
    }
    if let Some(expected) = &app.token {
        let (parts, body) = request.into_parts();
        match token::carries(&parts, expected, websocket_upgrade(&parts.headers)) {
            Carried::Yes => return next.run(Request::from_parts(parts, body)).await,
            Carried::No => return ApiError::unauthorized().into_response(),
            Carried::InQuery => return ApiError::token_in_query().into_response(),
        }
    }
    next.run(request).await
}

/// Every response: the headers that keep other sites from framing it,
/// sniffing its type or reading it, and the page's content security
/// policy.
pub async fn protect(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    for (name, value) in [
        ("content-security-policy", PAGE_POLICY),
        ("x-content-type-options", "nosniff"),
        ("x-frame-options", "DENY"),
        ("referrer-policy", "no-referrer"),
        ("cross-origin-opener-policy", "same-origin"),
        ("cross-origin-resource-policy", "same-origin"),
    ] {
        headers.insert(HeaderName::from_static(name), HeaderValue::from_static(value));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_origin_is_told_by_origin_or_fetch_metadata() {
        let headers = |pairs: &[(&'static str, &'static str)]| {
            let mut h = HeaderMap::new();
            for (k, v) in pairs {
                h.insert(*k, HeaderValue::from_static(v));
            }
            h
        };
        let host = ("host", "127.0.0.1:8080");
        assert!(cross_origin(&headers(&[host])).is_none());
        assert!(cross_origin(&headers(&[host, ("origin", "http://127.0.0.1:8080")])).is_none());
        assert!(cross_origin(&headers(&[host, ("sec-fetch-site", "same-origin")])).is_none());
        for other in [
            "http://127.0.0.1:9090",
            "http://localhost:8080",
            "null",
            "http://evil.example",
        ] {
            let h = HeaderMap::from_iter([
                (HOST, HeaderValue::from_static("127.0.0.1:8080")),
                (ORIGIN, HeaderValue::from_static(other)),
            ]);
            assert!(cross_origin(&h).is_some(), "{other}");
        }
        assert!(cross_origin(&headers(&[host, ("sec-fetch-site", "cross-site")])).is_some());
        assert!(cross_origin(&headers(&[host, ("sec-fetch-site", "same-site")])).is_some());
    }
}
