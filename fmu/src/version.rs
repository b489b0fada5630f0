//! The FMI versions an exported FMU's model description can follow.

use std::fmt;
use std::str::FromStr;

/// The FMI version of an exported FMU's model description.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FmiVersion {
    /// FMI 3.0.
    #[default]
    Fmi3,
    /// FMI 2.0.
    Fmi2,
}

impl fmt::Display for FmiVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FmiVersion::Fmi3 => "3.0",
            FmiVersion::Fmi2 => "2.0",
        })
    }
}

/// A version Tandem does not export, as given.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no FMI version \"{0}\": Tandem exports FMI 3.0 (3) and FMI 2.0 (2) FMUs")]
pub struct UnknownVersion(pub String);

impl FromStr for FmiVersion {
    type Err = UnknownVersion;
    /// `3`, `3.0`, `2` or `2.0`.
    fn from_str(s: &str) -> Result<Self, UnknownVersion> {
        match s.trim() {
            "3" | "3.0" => Ok(FmiVersion::Fmi3),
            "2" | "2.0" => Ok(FmiVersion::Fmi2),
            other => Err(UnknownVersion(other.to_string())),
        }
    }
}
