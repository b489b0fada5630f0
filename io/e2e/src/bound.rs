//! The bounds a protection's configuration values must keep, named in
//! the errors that report a value beyond one.

use std::fmt;

/// A bound a configuration value broke.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// The value must be at least this.
    AtLeast(u64),
    /// The value must be at most this; the text says why.
    AtMost(u64, &'static str),
    /// The value must be a multiple of this.
    MultipleOf(u64),
    /// The field it places would end in byte `byte`, beyond the data.
    EndsBeyond {
        /// The byte the field would end in.
        byte: u64,
        /// The data length in bytes.
        length: u64,
    },
    /// The value must differ from another field's place; the text names it.
    Overlaps(&'static str),
    /// The mode does not exist in this profile; the text lists those that do.
    NotInProfile(&'static str),
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::AtLeast(n) => write!(f, "it must be at least {n}"),
            Bound::AtMost(n, why) => write!(f, "it must be at most {n} ({why})"),
            Bound::MultipleOf(n) => write!(f, "it must be a multiple of {n}"),
            Bound::EndsBeyond { byte, length } => {
                write!(f, "the field would end in byte {byte}, beyond the {length}-byte data")
            }
            Bound::Overlaps(other) => write!(f, "it shares its byte or nibble with {other}; move one of them"),
            Bound::NotInProfile(allowed) => write!(f, "the profile has no such mode; use {allowed}"),
        }
    }
}
