//! Errors found while loading and compiling a block diagram.

use std::fmt;

/// What kind of mistake a [`DiagramError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The file is not valid JSON or does not have the model's shape.
    Syntax,
    /// A block `type` that the library does not have.
    UnknownBlockType,
    /// A parameter that is unknown, missing, mistyped or out of range.
    Parameter,
    /// Two blocks with the same id among siblings, or an id with `.` or `/`.
    DuplicateId,
    /// A link naming a block or port that does not exist.
    Link,
    /// An input port with no link into it.
    Unconnected,
    /// An input port with more than one link into it.
    MultiplyConnected,
    /// Connected ports of different widths.
    Dimension,
    /// A cycle of direct-feedthrough ports.
    AlgebraicLoop,
    /// A sample time that is malformed or does not fit the solver step.
    SampleTime,
}

/// A mistake in a model, with its place and how to fix it.
#[derive(Clone, Debug, PartialEq)]
pub struct DiagramError {
    /// Category, for programs that react to errors.
    pub kind: ErrorKind,
    /// Full path of the block concerned (`sub/inner`), when there is one.
    pub block: Option<String>,
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
            position: None,
            message: message.into(),
            help: None,
        }
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
            write!(f, "block \"{block}\": ")?;
        }
        write!(f, "{}", self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

impl std::error::Error for DiagramError {}

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
    fn locates_nested_blocks_by_path() {
        let text =
            "{\n  \"blocks\": [\n    {\"id\": \"a\"},\n    {\"id\": \"sub\", \"blocks\": [\n      {\"id\": \"a\"}]}]}";
        assert_eq!(locate_block(text, "a"), Some((3, 6)));
        assert_eq!(locate_block(text, "sub/a"), Some((5, 8)));
        assert_eq!(locate_block(text, "missing"), None);
    }
}
