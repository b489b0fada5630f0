//! Durations written with a unit, as in `"1ms"` or `"20s"`: configuration
//! files never take a bare number of seconds, so a frame of `1` cannot be
//! mistaken for one of 1 ms.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserialize, Deserializer, Visitor};

/// The units a duration may be written in: name, then its length in
/// seconds as a power of ten times a factor, so that `"50us"` is exactly the
/// number `50e-6`. `us`, `µs` (micro sign) and `μs` (Greek mu) are one unit.
const UNITS: [(&str, i32, f64); 7] = [
    ("min", 0, 60.0),
    ("s", 0, 1.0),
    ("ms", -3, 1.0),
    ("us", -6, 1.0),
    ("\u{b5}s", -6, 1.0),
    ("\u{3bc}s", -6, 1.0),
    ("ns", -9, 1.0),
];

/// What [`Duration`]'s JSON Schema requires of the string: a non-negative
/// decimal number, optionally with an exponent, then a unit: `min`, `s`,
/// `ms`, `us` (or `µs`), `ns`.
pub const DURATION_PATTERN: &str =
    "^ *([0-9]+(\\.[0-9]*)?|\\.[0-9]+)([eE][+-]?[0-9]+)? *(min|s|ms|us|\u{b5}s|\u{3bc}s|ns) *$";

/// Units as listed in messages.
const UNIT_LIST: &str = "min, s, ms, us (or \u{b5}s), ns";

/// A length of time, in seconds, from a string such as `"20s"`, `"1ms"`,
/// `"50us"`, `"50µs"`, `"100ns"`, `"2min"` or `"0.8ms"`.
///
/// ```
/// use tandem_config::Duration;
/// assert_eq!("1ms".parse::<Duration>().unwrap().seconds(), 1e-3);
/// assert_eq!("2min".parse::<Duration>().unwrap().seconds(), 120.0);
/// let e = "20".parse::<Duration>().unwrap_err();
/// assert!(e.to_string().contains("\"20s\""), "{e}");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd, Default)]
pub struct Duration(f64);

impl Duration {
    /// A duration of `seconds`, which must be finite and not negative.
    pub fn from_seconds(seconds: f64) -> Option<Duration> {
        (seconds.is_finite() && seconds >= 0.0).then_some(Duration(seconds))
    }

    /// The length in seconds: finite, and zero or more.
    pub fn seconds(self) -> f64 {
        self.0
    }
}

impl fmt::Display for Duration {
    /// The shortest of the units that writes the duration without an
    /// exponent or a long fraction, as `1ms` or `20s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = self.0;
        if s == 0.0 {
            return f.write_str("0s");
        }
        for (unit, scale) in [("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)] {
            if s >= scale {
                let v = s / scale;
                // Round off the noise of the division (0.0003 / 1e-6 = 299.99999999999994).
                let rounded = (v * 1e9).round() / 1e9;
                let v = if rounded.is_finite() { rounded } else { v };
                return write!(f, "{v}{unit}");
            }
        }
        write!(f, "{s}s")
    }
}

/// The examples that messages give.
const EXAMPLES: &str = "e.g. \"1ms\", \"20s\", \"50us\"";

/// A duration that cannot be read (the text as written is quoted).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Nothing was written.
    #[error("a duration cannot be empty; write a number and a unit, {EXAMPLES}")]
    Empty,
    /// A minus sign.
    #[error("a duration cannot be negative, found \"{0}\"; write e.g. \"0s\" or \"1ms\"")]
    Negative(String),
    /// No number first.
    #[error("\"{0}\" does not start with a number; write a number and a unit, {EXAMPLES}")]
    NoNumber(String),
    /// A number without a unit.
    #[error("\"{text}\" has no unit; write e.g. \"{number}s\" or \"{number}ms\" (units: {UNIT_LIST})")]
    NoUnit {
        /// As written.
        text: String,
        /// Its number.
        number: String,
    },
    /// A unit that is not one of ns, us, µs, ms, s, min, h.
    #[error("unknown unit \"{unit}\" in \"{text}\"; use one of: {UNIT_LIST}, e.g. \"{number}s\" or \"{number}ms\"")]
    UnknownUnit {
        /// As written.
        text: String,
        /// Its number.
        number: String,
        /// Its unit.
        unit: String,
    },
    /// The number part is not a number.
    #[error("\"{number}\" in \"{text}\" is not a number; write e.g. \"1.5ms\"")]
    NotANumber {
        /// As written.
        text: String,
        /// Its number.
        number: String,
    },
    /// Beyond what a duration can hold.
    #[error("\"{0}\" is too long to be a duration")]
    TooLong(String),
}

impl FromStr for Duration {
    type Err = DurationError;

    /// Parses a number followed by a unit; the message of an error quotes
    /// what was found and gives examples.
    fn from_str(text: &str) -> Result<Duration, DurationError> {
        let s = text.trim_matches(' ');
        if s.is_empty() {
            return Err(DurationError::Empty);
        }
        if s.starts_with('-') {
            return Err(DurationError::Negative(text.into()));
        }
        let number_end = number_length(s);
        let (number, unit) = s.split_at(number_end);
        let unit = unit.trim_start_matches(' ');
        if number.is_empty() {
            return Err(DurationError::NoNumber(text.into()));
        }
        if unit.is_empty() {
            return Err(DurationError::NoUnit {
                text: text.into(),
                number: number.into(),
            });
        }
        let Some(&(_, power, factor)) = UNITS.iter().find(|(name, _, _)| *name == unit) else {
            return Err(DurationError::UnknownUnit {
                text: text.into(),
                number: number.into(),
                unit: unit.into(),
            });
        };
        // The unit's power of ten joins the number's exponent, for the
        // correctly rounded value: "0.8ms" is 0.8e-3, not 0.8 * 1e-3.
        let (mantissa, exponent) = match number.find(['e', 'E']) {
            Some(i) => (&number[..i], &number[i + 1..]),
            None => (number, "0"),
        };
        // An exponent too long for an i64 is far beyond any f64 anyway.
        let exponent = exponent
            .parse::<i64>()
            .unwrap_or(if exponent.starts_with('-') { -100_000 } else { 100_000 });
        let exponent = exponent.clamp(-100_000, 100_000) + i64::from(power);
        let value: f64 = format!("{mantissa}e{exponent}")
            .parse()
            .map_err(|_| DurationError::NotANumber {
                text: text.into(),
                number: number.into(),
            })?;
        Duration::from_seconds(value * factor).ok_or_else(|| DurationError::TooLong(text.into()))
    }
}

/// Bytes of the decimal number (digits, a point, an exponent) at the start
/// of `s`.
fn number_length(s: &str) -> usize {
    let b = s.as_bytes();
    let digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = digits(0);
    if i < b.len() && b[i] == b'.' {
        i = digits(i + 1);
    }
    if i == 0 || (i == 1 && b[0] == b'.') {
        return 0;
    }
    // An exponent only when digits follow: "5e-3s" is 5e-3 s, but in "5ex" the
    // `e` starts the (unknown) unit.
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let end = digits(j);
        if end > j {
            i = end;
        }
    }
    i
}

impl<'de> Deserialize<'de> for Duration {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DurationVisitor)
    }
}

/// Takes strings only; a number gets an error that says to add a unit.
struct DurationVisitor;

impl DurationVisitor {
    fn bare_number<E: de::Error>(number: impl fmt::Display) -> E {
        E::custom(format!(
            "found the bare number {number}, but a duration is a string with a unit: \
             write \"{number}s\" for seconds, or e.g. \"1ms\", \"50us\" (units: {UNIT_LIST})"
        ))
    }
}

impl<'de> Visitor<'de> for DurationVisitor {
    type Value = Duration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a duration as a string with a unit, {EXAMPLES}")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
        Err(Self::bare_number(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
        Err(Self::bare_number(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Duration, E> {
        Err(Self::bare_number(v))
    }
}

impl JsonSchema for Duration {
    fn schema_name() -> Cow<'static, str> {
        "Duration".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": format!(
                "A length of time: a number, then a unit ({UNIT_LIST}); a bare number is not a duration."
            ),
            "type": "string",
            "pattern": DURATION_PATTERN,
            "examples": ["1ms", "20s", "50us", "100ns", "2min"],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: &str) -> f64 {
        s.parse::<Duration>().unwrap_or_else(|e| panic!("{s}: {e}")).seconds()
    }

    #[test]
    fn units() {
        assert_eq!(secs("20s"), 20.0);
        assert_eq!(secs("1ms"), 1e-3);
        assert_eq!(secs("50us"), 50e-6);
        assert_eq!(secs("50\u{b5}s"), 50e-6);
        assert_eq!(secs("50\u{3bc}s"), 50e-6);
        assert_eq!(secs("100ns"), 100e-9);
        assert_eq!(secs("2min"), 120.0);
        assert_eq!(secs("0.8ms"), 0.8e-3);
        assert_eq!(secs(".5s"), 0.5);
        assert_eq!(secs("1.5e-3s"), 1.5e-3);
        assert_eq!(secs(" 3 ms "), 3e-3);
        assert_eq!(secs("0us"), 0.0);
        assert_eq!(secs("1e-320ns"), 0.0);
        assert_eq!(secs("5.s"), 5.0);
    }

    #[test]
    fn mistakes() {
        let e = |s: &str| s.parse::<Duration>().unwrap_err().to_string();
        assert!(e("20").contains("has no unit; write e.g. \"20s\""), "{}", e("20"));
        assert!(e("20sec").contains("unknown unit \"sec\" in \"20sec\"; use one of: min, s, ms"));
        assert!(e("ms").contains("does not start with a number"));
        assert!(e("-1ms").contains("cannot be negative"));
        assert!(e("").contains("cannot be empty"));
        assert!(e("5ex").contains("unknown unit \"ex\""));
        assert!(e("1e400s").contains("too long"));
        assert!(e("1e99999999999999999999ns").contains("too long"));
        assert_eq!(secs("1e-99999999999999999999s"), 0.0);
        assert!(e("1.2.3s").contains("unknown unit \".3s\""));
    }

    #[test]
    fn display() {
        for (s, shown) in [
            ("1ms", "1ms"),
            ("20s", "20s"),
            ("300us", "300us"),
            ("0.8ms", "800us"),
            ("0s", "0s"),
        ] {
            assert_eq!(s.parse::<Duration>().unwrap().to_string(), shown);
        }
        let huge = "1e300s".parse::<Duration>().unwrap().to_string();
        assert!(huge.starts_with("1000000") && huge.ends_with('s'), "{huge}");
        assert_eq!(
            "1e-20s".parse::<Duration>().unwrap().to_string(),
            "0.00000000000000000001s"
        );
    }

    #[test]
    fn the_pattern_agrees_with_the_parser_on_examples() {
        // No regex engine here (tests/run_config.rs checks the pattern with
        // Python's): every unit is one of the pattern's alternatives.
        let alternatives = DURATION_PATTERN
            .rsplit_once(" *(")
            .unwrap()
            .1
            .split_once(')')
            .unwrap()
            .0;
        let mut listed: Vec<&str> = alternatives.split('|').collect();
        let mut units: Vec<&str> = UNITS.iter().map(|(u, _, _)| *u).collect();
        listed.sort();
        units.sort();
        assert_eq!(listed, units);
    }
}
