//! What is wrong with a DBC file, where, and how to fix it.

use std::fmt;

use super::source::Sites;

/// A DBC file that cannot be used: unreadable, a syntax error, or a layout
/// Tandem rejects (overlapping signals, a signal beyond its message, a size
/// outside 1..=64 bits, a float that is not 32 or 64 bits, a zero factor, a
/// length that is not a CAN length, a standard identifier beyond 11 bits,
/// duplicate names or identifiers, a multiplexed signal without a
/// multiplexor, or extended multiplexing).
///
/// Displays as `FILE:LINE:COL: what is wrong; how to fix it`, or
/// `FILE: ...` when there is no position to give.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DbcError {
    origin: String,
    at: Option<(usize, usize)>,
    what: String,
    fix: String,
}

impl DbcError {
    /// An error in `origin` at 1-based `(line, column)` if known.
    pub(super) fn new(origin: &str, at: Option<(usize, usize)>, what: String, fix: impl Into<String>) -> Self {
        DbcError {
            origin: origin.to_string(),
            at,
            what,
            fix: fix.into(),
        }
    }
}

impl fmt::Display for DbcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.origin)?;
        if let Some((line, col)) = self.at {
            write!(f, ":{line}:{col}")?;
        }
        write!(f, ": {}; {}", self.what, self.fix)
    }
}

impl std::error::Error for DbcError {}

/// A problem with a message or one of its signals, before its place in the
/// text is known.
pub(super) struct Issue {
    /// The signal concerned (its index in the message), if any.
    signal: Option<usize>,
    what: String,
    fix: String,
}

impl Issue {
    /// A problem with the message itself.
    pub(super) fn message(what: String, fix: impl Into<String>) -> Self {
        Issue {
            signal: None,
            what,
            fix: fix.into(),
        }
    }

    /// A problem with signal number `index` of the message.
    pub(super) fn signal(index: usize, what: String, fix: impl Into<String>) -> Self {
        Issue {
            signal: Some(index),
            what,
            fix: fix.into(),
        }
    }

    /// The error in `origin`, at the `SG_` line of the signal concerned
    /// (named by `signal_name` from its index) or else the `BO_` line of
    /// message number `index` (in file order) of `text`, called `name`.
    pub(super) fn locate<'m>(
        self,
        (text, origin): (&str, &str),
        (index, name): (usize, &str),
        signal_name: impl Fn(usize) -> &'m str,
    ) -> DbcError {
        let sites = Sites::of(text);
        let site = sites.find(index, name);
        let signal_at = self.signal.and_then(|i| site?.signal(i, signal_name(i)));
        DbcError::new(origin, signal_at.or(site.map(|s| s.at)), self.what, self.fix)
    }
}
