//! Typed access to a block's `params` object, remembering which keys were
//! read so that unknown keys can be reported.

use serde_json::{Map, Value};

use super::BlockError;
use crate::error_kind::ErrorKind;

/// The most input or output ports one block may have (`inputs`,
/// `outputs` and the like).
pub const MAX_PORTS: usize = 1024;

/// The widest signal one port may carry (an Inport's `width`).
pub const MAX_WIDTH: usize = 1 << 20;

/// `n` as a whole number in `min..=max`.
fn whole(n: f64, min: usize, max: usize) -> Option<usize> {
    (n.fract() == 0.0 && n >= min as f64 && n <= max as f64).then_some(n as usize)
}

/// A block's parameters during its build.
pub struct Params<'a> {
    map: &'a Map<String, Value>,
    read: Vec<&'static str>,
}

impl<'a> Params<'a> {
    /// Wraps the `params` object of one block.
    pub fn new(map: &'a Map<String, Value>) -> Self {
        Params { map, read: Vec::new() }
    }

    /// The parameter names the block asked for, in order.
    pub fn known(&self) -> &[&'static str] {
        &self.read
    }

    /// The keys present in the file that the block never asked for.
    pub fn unread(&self) -> impl Iterator<Item = &str> {
        self.map.keys().map(String::as_str).filter(|k| !self.read.contains(k))
    }

    fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        if !self.read.contains(&key) {
            self.read.push(key);
        }
        self.map.get(key).filter(|v| !v.is_null())
    }

    /// Whether the file gives parameter `key` (not absent, not `null`).
    pub fn given(&mut self, key: &'static str) -> bool {
        self.get(key).is_some()
    }

    /// A required number.
    pub fn number(&mut self, key: &'static str) -> Result<f64, BlockError> {
        let v = self.get(key).ok_or_else(|| BlockError::missing(key, "a number"))?;
        as_number(v).ok_or_else(|| BlockError::mistyped(key, "a number", v))
    }

    /// An optional number.
    pub fn number_opt(&mut self, key: &'static str) -> Result<Option<f64>, BlockError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => as_number(v)
                .map(Some)
                .ok_or_else(|| BlockError::mistyped(key, "a number", v)),
        }
    }

    /// A number with a default.
    pub fn number_or(&mut self, key: &'static str, default: f64) -> Result<f64, BlockError> {
        Ok(self.number_opt(key)?.unwrap_or(default))
    }

    /// A whole number from `min` to `max` with a default.
    pub fn count_or(&mut self, key: &'static str, default: usize, min: usize, max: usize) -> Result<usize, BlockError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v.as_f64().and_then(|n| whole(n, min, max)).ok_or_else(|| {
                let error = BlockError::mistyped(key, &format!("a whole number from {min} to {max}"), v);
                if v.as_f64().is_some_and(|n| n > max as f64) {
                    error.help(format!(
                        "{max} is the bound of \"{key}\"; split the block into several for more"
                    ))
                } else {
                    error
                }
            }),
        }
    }

    /// A list of whole numbers from `min` to `max` with a default.
    pub fn counts_or(
        &mut self,
        key: &'static str,
        default: &[usize],
        min: usize,
        max: usize,
    ) -> Result<Vec<usize>, BlockError> {
        match self.get(key) {
            None => Ok(default.to_vec()),
            Some(v) => as_numbers(v)
                .filter(|list| list.len() <= MAX_PORTS)
                .and_then(|list| list.iter().map(|&n| whole(n, min, max)).collect())
                .ok_or_else(|| {
                    BlockError::mistyped(
                        key,
                        &format!("a list of at most {MAX_PORTS} whole numbers from {min} to {max}"),
                        v,
                    )
                }),
        }
    }

    /// A required list of numbers; a single number counts as a list of one.
    pub fn numbers(&mut self, key: &'static str) -> Result<Vec<f64>, BlockError> {
        let v = self
            .get(key)
            .ok_or_else(|| BlockError::missing(key, "a list of numbers"))?;
        as_numbers(v).ok_or_else(|| BlockError::mistyped(key, "a number or a list of numbers", v))
    }

    /// A list of numbers with a default.
    pub fn numbers_or(&mut self, key: &'static str, default: &[f64]) -> Result<Vec<f64>, BlockError> {
        match self.get(key) {
            None => Ok(default.to_vec()),
            Some(v) => as_numbers(v).ok_or_else(|| BlockError::mistyped(key, "a number or a list of numbers", v)),
        }
    }

    /// A required matrix given as a list of rows; a list of numbers is one
    /// row and a number is a 1 × 1 matrix.
    pub fn matrix(&mut self, key: &'static str) -> Result<Vec<Vec<f64>>, BlockError> {
        let v = self
            .get(key)
            .ok_or_else(|| BlockError::missing(key, "a matrix (a list of rows)"))?;
        let rows = match v {
            Value::Array(items) if items.iter().all(Value::is_array) => {
                items.iter().map(as_numbers).collect::<Option<Vec<_>>>()
            }
            other => as_numbers(other).map(|row| vec![row]),
        };
        let rows = rows.ok_or_else(|| BlockError::mistyped(key, "a matrix (a list of rows of numbers)", v))?;
        if rows.first().is_none_or(Vec::is_empty) {
            return Err(BlockError::new(format!("parameter \"{key}\": the matrix is empty"))
                .help("give at least one row of at least one number"));
        }
        if rows.iter().any(|r| r.len() != rows[0].len()) {
            return Err(
                BlockError::new(format!("parameter \"{key}\": rows have different lengths"))
                    .help("give every row of the matrix the same number of columns"),
            );
        }
        Ok(rows)
    }

    /// A matrix with a default.
    pub fn matrix_or(&mut self, key: &'static str, default: Vec<Vec<f64>>) -> Result<Vec<Vec<f64>>, BlockError> {
        match self.get(key) {
            None => Ok(default),
            Some(_) => self.matrix(key),
        }
    }

    /// A required string.
    pub fn string(&mut self, key: &'static str) -> Result<&'a str, BlockError> {
        let v = self.get(key).ok_or_else(|| BlockError::missing(key, "a string"))?;
        v.as_str().ok_or_else(|| BlockError::mistyped(key, "a string", v))
    }

    /// An optional string.
    pub fn string_opt(&mut self, key: &'static str) -> Result<Option<&'a str>, BlockError> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(Some)
                .ok_or_else(|| BlockError::mistyped(key, "a string", v)),
        }
    }

    /// A string with a default.
    pub fn string_or(&mut self, key: &'static str, default: &'a str) -> Result<&'a str, BlockError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v.as_str().ok_or_else(|| BlockError::mistyped(key, "a string", v)),
        }
    }

    /// A list of strings with a default (a single string counts as one).
    pub fn strings_or(&mut self, key: &'static str, default: &[&'a str]) -> Result<Vec<&'a str>, BlockError> {
        match self.get(key) {
            None => Ok(default.to_vec()),
            Some(Value::String(s)) => Ok(vec![s.as_str()]),
            Some(v @ Value::Array(items)) => items
                .iter()
                .map(Value::as_str)
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| BlockError::mistyped(key, "a list of strings", v)),
            Some(v) => Err(BlockError::mistyped(key, "a list of strings", v)),
        }
    }

    /// One of `choices`, with a default.
    pub fn choice_or(
        &mut self,
        key: &'static str,
        choices: &[&'static str],
        default: &'static str,
    ) -> Result<&'static str, BlockError> {
        let given = self.string_or(key, default)?;
        choices.iter().copied().find(|c| *c == given).ok_or_else(|| {
            BlockError::new(format!(
                "parameter \"{key}\" is \"{given}\", which is not one of its values"
            ))
            .help(format!("use one of: {}", choices.join(", ")))
        })
    }

    /// An object of names bound to numbers (empty when absent).
    pub fn object_numbers(&mut self, key: &'static str) -> Result<Vec<(String, f64)>, BlockError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(v @ Value::Object(map)) => map
                .iter()
                .map(|(name, value)| as_number(value).map(|n| (name.clone(), n)))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| BlockError::mistyped(key, "an object of names to numbers", v)),
            Some(v) => Err(BlockError::mistyped(key, "an object of names to numbers", v)),
        }
    }

    /// A boolean with a default.
    pub fn flag_or(&mut self, key: &'static str, default: bool) -> Result<bool, BlockError> {
        match self.get(key) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| BlockError::mistyped(key, "true or false", v)),
        }
    }
}

/// The shape a list parameter must have: the one place where the length of
/// every vector, table and breakpoint list is checked against the widths
/// and counts it will meet, before anything runs (in the model compiler,
/// for a file and for a change at run time alike). What passes is what
/// the interpreter and the code generator index by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape<'a> {
    /// A number, broadcast to every element, or one value per element of
    /// `of` (a signal or the states, of `width` elements).
    PerElement {
        /// What the values are for, in words (`the input`).
        of: &'a str,
        /// Its number of elements.
        width: usize,
    },
    /// At least `min` values (`min` >= 1).
    AtLeast(usize),
    /// One value per element of `each`, of which there are `n`.
    OnePer {
        /// What the values are for, in words (`breakpoint`).
        each: &'a str,
        /// How many there are.
        n: usize,
    },
}

impl Shape<'_> {
    /// Checks that `values`, the value of parameter `key`, has this shape.
    /// The error names the parameter, what it holds and what it needs.
    pub fn check(self, key: &'static str, values: &[f64]) -> Result<(), BlockError> {
        let n = values.len();
        let (fits, fix) = match self {
            Shape::PerElement { of, width } => (
                n == 1 || (n > 0 && n == width),
                format!("give a number or one value per element of {of} (width {width})"),
            ),
            Shape::AtLeast(min) => (n >= min, format!("give a list of at least {}", values_word(min))),
            Shape::OnePer { each, n: want } => (n == want, format!("give one value per {each} ({want})")),
        };
        if fits {
            return Ok(());
        }
        let kind = if n == 0 || matches!(self, Shape::AtLeast(_)) {
            ErrorKind::Parameter
        } else {
            ErrorKind::Dimension
        };
        Err(BlockError::of_param(kind, key, format!("{}; {fix}", list_word(n))))
    }
}

/// A matrix parameter's required size, `rows` × `columns`, with what the
/// sizes stand for (`n × m: n states, m inputs`), checked like a [`Shape`].
pub fn check_matrix(
    key: &'static str,
    matrix: &[Vec<f64>],
    rows: usize,
    columns: usize,
    meaning: &str,
) -> Result<(), BlockError> {
    let found_columns = matrix.first().map_or(0, Vec::len);
    if matrix.len() == rows && matrix.iter().all(|r| r.len() == columns) {
        return Ok(());
    }
    Err(BlockError::of_param(
        ErrorKind::Dimension,
        key,
        format!(
            "a {}×{found_columns} matrix; give a {rows}×{columns} matrix ({meaning})",
            matrix.len()
        ),
    ))
}

/// `n` values, in words.
fn values_word(n: usize) -> String {
    if n == 1 {
        "one value".into()
    } else {
        format!("{n} values")
    }
}

/// A list of `n` values, in words.
fn list_word(n: usize) -> String {
    match n {
        0 => "an empty list".into(),
        1 => "one value".into(),
        n => format!("a list of {n} values"),
    }
}

/// A JSON number, or one of the strings `inf`, `-inf`.
fn as_number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s == "inf" => Some(f64::INFINITY),
        Value::String(s) if s == "-inf" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

fn as_numbers(v: &Value) -> Option<Vec<f64>> {
    match v {
        Value::Array(items) => items.iter().map(as_number).collect(),
        other => as_number(other).map(|n| vec![n]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn reads_typed_values_and_tracks_unread_keys() {
        let m = map(json!({"gain": 2.5, "v": [1, 2], "m": [[1, 2], [3, 4]], "extra": true}));
        let mut p = Params::new(&m);
        assert_eq!(p.number("gain").unwrap(), 2.5);
        assert_eq!(p.numbers("v").unwrap(), vec![1.0, 2.0]);
        assert_eq!(p.matrix("m").unwrap(), vec![vec![1.0, 2.0], vec![3.0, 4.0]]);
        assert_eq!(p.number_or("absent", 7.0).unwrap(), 7.0);
        assert_eq!(p.unread().collect::<Vec<_>>(), vec!["extra"]);
    }

    #[test]
    fn whole_numbers_may_be_written_with_a_decimal_point() {
        let m = map(json!({"a": 2.0, "b": 2.5, "c": -1}));
        let mut p = Params::new(&m);
        assert_eq!(p.count_or("a", 0, 1, MAX_PORTS).unwrap(), 2);
        assert!(p
            .count_or("b", 0, 1, MAX_PORTS)
            .unwrap_err()
            .to_string()
            .contains("whole number"));
        assert!(p.count_or("c", 0, 0, MAX_PORTS).is_err());
    }

    #[test]
    fn shapes_name_the_parameter_what_it_holds_and_what_it_needs() {
        let per_input = Shape::PerElement {
            of: "the input",
            width: 1,
        };
        assert_eq!(
            per_input.check("gain", &[]).unwrap_err().to_string(),
            "gain: an empty list; give a number or one value per element of the input (width 1)"
        );
        assert!(per_input.check("gain", &[2.0]).is_ok());
        let per_three = Shape::PerElement {
            of: "the input",
            width: 3,
        };
        assert!(per_three.check("gain", &[1.0, 2.0, 3.0]).is_ok());
        let e = per_three.check("gain", &[1.0, 2.0]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "gain: a list of 2 values; give a number or one value per element of the input (width 3)"
        );
        assert!(matches!(
            e,
            BlockError::Invalid {
                kind: ErrorKind::Dimension,
                param: Some("gain"),
                ..
            }
        ));
        assert_eq!(
            Shape::AtLeast(2).check("breakpoints", &[1.0]).unwrap_err().to_string(),
            "breakpoints: one value; give a list of at least 2 values"
        );
        assert_eq!(
            Shape::OnePer {
                each: "breakpoint",
                n: 3
            }
            .check("table", &[1.0, 2.0])
            .unwrap_err()
            .to_string(),
            "table: a list of 2 values; give one value per breakpoint (3)"
        );
        assert_eq!(
            check_matrix("B", &[vec![0.0], vec![1.0], vec![2.0]], 2, 1, "n × m")
                .unwrap_err()
                .to_string(),
            "B: a 3×1 matrix; give a 2×1 matrix (n × m)"
        );
        assert!(check_matrix("B", &[vec![0.0], vec![1.0]], 2, 1, "n × m").is_ok());
    }

    #[test]
    fn mistyped_and_missing_values_name_the_key() {
        let m = map(json!({"gain": "two", "rows": [[1, 2], [3]]}));
        let mut p = Params::new(&m);
        let e = p.number("gain").unwrap_err().to_string();
        assert!(
            e.contains("\"gain\"") && e.contains("number") && e.contains("\"two\""),
            "{e}"
        );
        assert!(p.number("k").unwrap_err().to_string().contains("missing"));
        assert!(p.matrix("rows").unwrap_err().to_string().contains("different lengths"));
    }
}
