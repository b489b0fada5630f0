//! The token every API request carries when the server has one: what a
//! token may be, a random one, and how a request's is compared.

use std::fmt::Write;

use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use axum::http::HeaderMap;

/// The fewest characters a token has.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Why a token cannot be used.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// Shorter than [`MIN_TOKEN_CHARS`] (empty included).
    #[error(
        "--token: the token has {0} characters, fewer than the {MIN_TOKEN_CHARS} a token needs; give a longer one, \
         or --token generate for a random one"
    )]
    Short(usize),
    /// A character a header cannot carry as it is.
    #[error(
        "--token: character {0} of the token is not printable ASCII (a space inside is fine, not at either end); \
         give a token of letters, digits and punctuation, or --token generate"
    )]
    Character(usize),
}

/// Checks that `token` can be used: at least [`MIN_TOKEN_CHARS`]
/// characters, each printable ASCII, and no space at either end (a
/// header's value loses those).
pub fn check_token(token: &str) -> Result<(), TokenError> {
    let count = token.chars().count();
    if count < MIN_TOKEN_CHARS {
        return Err(TokenError::Short(count));
    }
    let last = count - 1;
    match token
        .chars()
        .enumerate()
        .find(|&(i, c)| !(c.is_ascii_graphic() || (c == ' ' && i != 0 && i != last)))
    {
        Some((i, _)) => Err(TokenError::Character(i + 1)),
        None => Ok(()),
    }
}

/// A random token: 32 bytes from the system's generator, in hex.
pub fn generate_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(std::io::Error::from)?;
    Ok(bytes.iter().fold(String::with_capacity(64), |mut text, b| {
        let _ = write!(text, "{b:02x}");
        text
    }))
}

/// How a request stands against the server's token.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Carried {
    /// It carries the token where it may.
    Yes,
    /// It does not carry the token.
    No,
    /// It gives `?token=` on a request that is not a WebSocket upgrade:
    /// the query belongs only there, where a browser cannot set a header
    /// (a query is written into logs and the browser's history).
    InQuery,
}

/// Whether the request carries `token`: in `Authorization: Bearer`, or,
/// on a WebSocket upgrade only (`upgrade`), as `?token=` (form-encoded,
/// as a page's `URLSearchParams` writes it).
pub(crate) fn carries(parts: &Parts, token: &str, upgrade: bool) -> Carried {
    let query = parts
        .uri
        .query()
        .into_iter()
        .flat_map(|q| form_urlencoded::parse(q.as_bytes()))
        .find(|(key, _)| key == "token")
        .map(|(_, value)| value);
    if query.is_some() && !upgrade {
        return Carried::InQuery;
    }
    let bearer = bearer(&parts.headers);
    match bearer.is_some_and(|b| same(b, token.as_bytes()))
        || query.is_some_and(|q| same(q.as_bytes(), token.as_bytes()))
    {
        true => Carried::Yes,
        false => Carried::No,
    }
}

fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    headers
        .get(AUTHORIZATION)
        .and_then(|v| v.as_bytes().strip_prefix(b"Bearer "))
}

/// Whether `a` and `b` are equal, in a time that depends on their lengths
/// only (not on where they differ): every byte is compared, and the
/// differences are gathered through `black_box`, so that the comparison
/// cannot end early.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let difference = a.iter().zip(b).fold(0u8, |d, (x, y)| std::hint::black_box(d | (x ^ y)));
    difference == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_empty_and_unprintable_tokens_are_refused() {
        assert_eq!(check_token(""), Err(TokenError::Short(0)));
        assert_eq!(check_token("fifteen-chars!!"), Err(TokenError::Short(15)));
        assert_eq!(check_token("sixteen-chars!!!"), Ok(()));
        assert_eq!(check_token("with & and = and space"), Ok(()));
        assert_eq!(check_token(" leading-space-token"), Err(TokenError::Character(1)));
        assert_eq!(check_token("trailing-space-token "), Err(TokenError::Character(21)));
        assert_eq!(check_token("a-tab\there-in-token"), Err(TokenError::Character(6)));
        assert_eq!(check_token("non-ascii-é-in-token"), Err(TokenError::Character(11)));
    }

    #[test]
    fn generated_tokens_are_64_hex_digits_and_differ() {
        let (a, b) = (generate_token().unwrap(), generate_token().unwrap());
        assert_eq!(a.len(), 64);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
        assert_eq!(check_token(&a), Ok(()));
    }

    #[test]
    fn comparison_needs_every_byte() {
        assert!(same(b"abcdefgh", b"abcdefgh"));
        assert!(!same(b"abcdefgh", b"abcdefgi"));
        assert!(!same(b"xbcdefgh", b"abcdefgh"));
        assert!(!same(b"abcdefgh", b"abcdefg"));
    }
}
