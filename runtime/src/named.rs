//! Parsing the names of methods and policies, with the valid ones listed on
//! a mistake.

use std::fmt;

/// A name that is not one of the valid ones.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct UnknownName {
    /// What was asked for (`policy`, `solver`, ...).
    pub what: &'static str,
    /// The name given.
    pub found: String,
    /// The valid names.
    pub valid: Vec<&'static str>,
}

impl fmt::Display for UnknownName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} \"{}\"; use one of: {}",
            self.what,
            self.found,
            self.valid.join(", ")
        )
    }
}

/// The one of `all` whose `name` is `s`, or an error naming `what` was
/// asked for and listing the valid names.
pub(crate) fn by_name<T: Copy>(
    all: &[T],
    name: fn(T) -> &'static str,
    s: &str,
    what: &'static str,
) -> Result<T, UnknownName> {
    all.iter().copied().find(|&m| name(m) == s).ok_or_else(|| UnknownName {
        what,
        found: s.to_string(),
        valid: all.iter().map(|&m| name(m)).collect(),
    })
}
