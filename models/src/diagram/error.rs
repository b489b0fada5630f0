//! Errors found while loading and compiling a block diagram.

use std::fmt;

pub use crate::error_kind::ErrorKind;

/// A mistake in a model, with its place and how to fix it.
#[derive(Clone, Debug, PartialEq)]
pub struct DiagramError {
    /// Category, for programs that react to errors.
    pub kind: ErrorKind,
    /// Full path of the block concerned (`sub/inner`), when there is one.
    pub block: Option<String>,
    /// The block's port concerned (its name, as links spell it), when there
    /// is one.
    pub port: Option<Box<str>>,
    /// 1-based line and column in the file, when known.
    pub position: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub help: Option<String>,
}

impl DiagramError {
    /// An error about one block.
    pub fn at_block(kind: ErrorKind, block: &str, message: impl Into<String>) -> Self {
        DiagramError {
            kind,
            block: Some(block.to_string()),
            port: None,
            position: None,
            message: message.into(),
            help: None,
        }
    }

    /// Names the block's port concerned.
    pub fn port(mut self, port: impl Into<String>) -> Self {
        self.port = Some(port.into().into_boxed_str());
        self
    }

    /// Adds advice on how to fix the mistake.
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

impl fmt::Display for DiagramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some((line, col)) = self.position {
            write!(f, "{line}:{col}: ")?;
        }
        if let Some(block) = &self.block {
            // A path too long to read is shortened: its place says where.
            match block.char_indices().nth(SHOWN_PATH) {
                Some((end, _)) => write!(f, "block \"{}…\": ", &block[..end])?,
                None => write!(f, "block \"{block}\": ")?,
            }
        }
        write!(f, "{}", self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DiagramError {}

/// The longest block path a message shows in full (characters).
const SHOWN_PATH: usize = 80;

/// The most names a message lists before it says how many more there are.
const LISTED: usize = 12;

/// `items` joined with `", "`, the first few only: a block with a
/// thousand ports must not give a message of a thousand lines.
pub(crate) fn listed<S: AsRef<str>>(items: &[S]) -> String {
    listed_with(items, ", ")
}

/// As [`listed`], joined with `separator`.
pub(crate) fn listed_with<S: AsRef<str>>(items: &[S], separator: &str) -> String {
    let mut text = items
        .iter()
        .take(LISTED)
        .map(AsRef::as_ref)
        .collect::<Vec<_>>()
        .join(separator);
    if items.len() > LISTED {
        text.push_str(&format!(" and {} more", items.len() - LISTED));
    }
    text
}

/// The 1-based line and column (in characters) of the first byte of
/// `bytes` that is not UTF-8, `valid_up_to` bytes in.
pub fn invalid_utf8_at(bytes: &[u8], valid_up_to: usize) -> (usize, usize) {
    let good = &bytes[..valid_up_to.min(bytes.len())];
    let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&good[line_start..]).chars().count() + 1;
    (line, column)
}

/// Finds where block `path` (`a/b/c`) is declared in the JSON `text`: the
/// position of `"id": "c"` after those of its parents. Returns 1-based line
/// and column.
pub fn locate_block(text: &str, path: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    for id in path.split('/') {
        from += find_id(&text[from..], id)?;
    }
    let line = text[..from].matches('\n').count() + 1;
    let column = from - text[..from].rfind('\n').map_or(0, |i| i + 1) + 1;
    Some((line, column))
}

/// Byte offset of the first `"id"` key whose value is `id`.
fn find_id(text: &str, id: &str) -> Option<usize> {
    let mut start = 0;
    while let Some(pos) = text[start..].find("\"id\"") {
        let key = start + pos;
        let rest = text[key + 4..].trim_start();
        if let Some(rest) = rest.strip_prefix(':') {
            if rest
                .trim_start()
                .strip_prefix('"')
                .is_some_and(|v| v.starts_with(&format!("{id}\"")))
            {
                return Some(key);
            }
        }
        start = key + 4;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lists_are_cut_with_a_count() {
        let names: Vec<String> = (0..1000).map(|i| format!("u{i}")).collect();
        let text = listed(&names);
        assert!(text.starts_with("u0, u1, "), "{text}");
        assert!(text.ends_with("u11 and 988 more"), "{text}");
        assert_eq!(listed(&["a", "b"]), "a, b");
    }

    #[test]
    fn locates_nested_blocks_by_path() {
        let text =
            "{\n  \"blocks\": [\n    {\"id\": \"a\"},\n    {\"id\": \"sub\", \"blocks\": [\n      {\"id\": \"a\"}]}]}";
        assert_eq!(locate_block(text, "a"), Some((3, 6)));
        assert_eq!(locate_block(text, "sub/a"), Some((5, 8)));
        assert_eq!(locate_block(text, "missing"), None);
    }
}
