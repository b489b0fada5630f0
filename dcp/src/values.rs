//! Model port values (always `f64` in Tandem) as DCP values of any data
//! type, and back, with the checks that keep a value what it was: an
//! integer type takes the nearest whole number within its range, a
//! float32 a value within its range, a string the decimal text of one
//! number (shortest text that reads back to the same bits), a binary one
//! byte per element of a vector port (each a whole number 0 to 255).
//!
//! ```
//! use tandem_dcp::types::DataType;
//! use tandem_dcp::values::{decode, encode};
//! let mut bytes = Vec::new();
//! encode(DataType::Int16, &[-2.0, 300.4], &mut bytes).unwrap();
//! assert_eq!(bytes, [0xFE, 0xFF, 0x2C, 0x01]);
//! let mut back = [0.0; 2];
//! assert_eq!(decode(DataType::Int16, &bytes, &mut back), Ok(4));
//! assert_eq!(back, [-2.0, 300.0]);
//! assert!(encode(DataType::Uint8, &[256.0], &mut bytes).is_err());
//! ```

use std::io::Write;

use crate::types::DataType;

/// Why a value cannot be carried as its type.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
pub enum ValueError {
    /// Outside the type's range (or not a number, for an integer type).
    #[error("{value} is outside the range of {data_type} ({min} to {max})")]
    OutOfRange {
        /// The value.
        value: f64,
        /// The type.
        data_type: DataType,
        /// Its least value.
        min: f64,
        /// Its greatest value.
        max: f64,
    },
    /// A payload that ends inside a value.
    #[error("the payload ends inside a {data_type} value: it needs {needed} more bytes, {left} are left")]
    Truncated {
        /// The type.
        data_type: DataType,
        /// Bytes the value needs.
        needed: usize,
        /// Bytes left.
        left: usize,
    },
    /// A binary longer than the vector port it goes to.
    #[error("a binary of {length} bytes does not fit a port of {width} elements")]
    TooLong {
        /// The bytes received.
        length: usize,
        /// The port's elements.
        width: usize,
    },
    /// A string that is not a number.
    #[error("the string is not a number in decimal text")]
    NotANumber,
    /// A string or binary type on a port that is not one element (string)
    /// or a vector (binary) of the right kind.
    #[error("a {data_type} carries {expected}, this port has {width} elements")]
    Width {
        /// The type.
        data_type: DataType,
        /// What it carries.
        expected: &'static str,
        /// The port's elements.
        width: usize,
    },
}

/// The bytes of one element of a fixed-size type.
pub fn size(data_type: DataType) -> Option<usize> {
    use DataType::*;
    Some(match data_type {
        Uint8 | Int8 => 1,
        Uint16 | Int16 => 2,
        Uint32 | Int32 | Float32 => 4,
        Uint64 | Int64 | Float64 => 8,
        String | Binary => return None,
    })
}

/// The range of an integer type (as `f64`), and of float32.
fn range(data_type: DataType) -> Option<(f64, f64)> {
    use DataType::*;
    Some(match data_type {
        Uint8 => (0.0, u8::MAX as f64),
        Uint16 => (0.0, u16::MAX as f64),
        Uint32 => (0.0, u32::MAX as f64),
        Uint64 => (0.0, u64::MAX as f64),
        Int8 => (i8::MIN as f64, i8::MAX as f64),
        Int16 => (i16::MIN as f64, i16::MAX as f64),
        Int32 => (i32::MIN as f64, i32::MAX as f64),
        Int64 => (i64::MIN as f64, i64::MAX as f64),
        Float32 => (f32::MIN as f64, f32::MAX as f64),
        Float64 | String | Binary => return None,
    })
}

/// Checks that `value` can be carried as `data_type` (elements of a
/// binary included), giving the value it will carry.
pub fn check(data_type: DataType, value: f64) -> Result<f64, ValueError> {
    let (min, max) = match data_type {
        DataType::Binary => (0.0, 255.0),
        t => match range(t) {
            Some(r) => r,
            None => return Ok(value),
        },
    };
    let carried = if data_type == DataType::Float32 {
        value
    } else {
        value.round()
    };
    // NaN fails both comparisons; infinities of float32 pass through.
    let inside = (min..=max).contains(&carried) || (data_type == DataType::Float32 && value.is_infinite());
    if inside || (data_type == DataType::Float32 && value.is_nan()) {
        Ok(carried)
    } else {
        Err(ValueError::OutOfRange {
            value,
            data_type,
            min,
            max,
        })
    }
}

/// Appends the elements `values` of one variable encoded as `data_type`.
/// Does not allocate once `out` has room.
pub fn encode(data_type: DataType, values: &[f64], out: &mut Vec<u8>) -> Result<(), ValueError> {
    use DataType::*;
    match data_type {
        String => {
            let [value] = values else {
                return Err(ValueError::Width {
                    data_type,
                    expected: "one number",
                    width: values.len(),
                });
            };
            let at = out.len();
            out.extend_from_slice(&[0; 4]);
            // Display of f64 is the shortest text that reads back exactly.
            let _ = write!(out, "{value}");
            let length = (out.len() - at - 4) as u32;
            out[at..at + 4].copy_from_slice(&length.to_le_bytes());
        }
        Binary => {
            out.extend_from_slice(&(values.len() as u32).to_le_bytes());
            for &v in values {
                out.push(check(Binary, v)? as u8);
            }
        }
        _ => {
            for &v in values {
                let v = check(data_type, v)?;
                match data_type {
                    Uint8 => out.push(v as u8),
                    Uint16 => out.extend_from_slice(&(v as u16).to_le_bytes()),
                    Uint32 => out.extend_from_slice(&(v as u32).to_le_bytes()),
                    Uint64 => out.extend_from_slice(&(v as u64).to_le_bytes()),
                    Int8 => out.extend_from_slice(&(v as i8).to_le_bytes()),
                    Int16 => out.extend_from_slice(&(v as i16).to_le_bytes()),
                    Int32 => out.extend_from_slice(&(v as i32).to_le_bytes()),
                    Int64 => out.extend_from_slice(&(v as i64).to_le_bytes()),
                    Float32 => out.extend_from_slice(&(v as f32).to_le_bytes()),
                    _ => out.extend_from_slice(&v.to_le_bytes()),
                }
            }
        }
    }
    Ok(())
}

/// Decodes one variable of `into.len()` elements encoded as `data_type`
/// from the start of `bytes`; returns the bytes it took.
pub fn decode(data_type: DataType, bytes: &[u8], into: &mut [f64]) -> Result<usize, ValueError> {
    use DataType::*;
    let truncated = |needed: usize| ValueError::Truncated {
        data_type,
        needed,
        left: bytes.len(),
    };
    let Some(size) = size(data_type) else {
        let length = bytes.get(..4).ok_or_else(|| truncated(4))?;
        let length = u32::from_le_bytes(length.try_into().unwrap_or_default()) as usize;
        let body = bytes.get(4..4 + length).ok_or_else(|| truncated(4 + length))?;
        if data_type == String {
            let [value] = into else {
                return Err(ValueError::Width {
                    data_type,
                    expected: "one number",
                    width: into.len(),
                });
            };
            let text = std::str::from_utf8(body).map_err(|_| ValueError::NotANumber)?;
            *value = text.trim().parse().map_err(|_| ValueError::NotANumber)?;
        } else {
            if length > into.len() {
                return Err(ValueError::TooLong {
                    length,
                    width: into.len(),
                });
            }
            for (k, v) in into.iter_mut().enumerate() {
                *v = body.get(k).map_or(0.0, |&b| b as f64);
            }
        }
        return Ok(4 + length);
    };
    let total = size * into.len();
    let body = bytes.get(..total).ok_or_else(|| truncated(total))?;
    for (v, b) in into.iter_mut().zip(body.chunks_exact(size)) {
        let mut raw = [0u8; 8];
        raw[..size].copy_from_slice(b);
        *v = match data_type {
            Uint8 => b[0] as f64,
            Uint16 => u16::from_le_bytes([b[0], b[1]]) as f64,
            Uint32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            Uint64 => u64::from_le_bytes(raw) as f64,
            Int8 => b[0] as i8 as f64,
            Int16 => i16::from_le_bytes([b[0], b[1]]) as f64,
            Int32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            Int64 => i64::from_le_bytes(raw) as f64,
            Float32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            _ => f64::from_le_bytes(raw),
        };
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_specification_examples_encode_as_written() {
        // int32 -89498498 is 0xFAAA5C7E; float32 7256.2568359375 is
        // 0x45E2C20E; "beef" is its length then its bytes (DCP 1.0,
        // section 3.1.12).
        let mut out = Vec::new();
        encode(DataType::Int32, &[-89498498.0], &mut out).unwrap();
        assert_eq!(out, [0x7E, 0x5C, 0xAA, 0xFA]);
        out.clear();
        encode(DataType::Float32, &[7256.2568359375], &mut out).unwrap();
        assert_eq!(out, [0x0E, 0xC2, 0xE2, 0x45]);
        let mut v = [0.0];
        assert_eq!(decode(DataType::Float32, &out, &mut v), Ok(4));
        assert_eq!(v[0], 7256.2568359375);
    }

    #[test]
    fn every_type_round_trips_its_extremes() {
        use DataType::*;
        let cases: [(DataType, f64); 10] = [
            (Uint8, 255.0),
            (Uint16, 65535.0),
            (Uint32, 4294967295.0),
            (Uint64, 9007199254740992.0),
            (Int8, -128.0),
            (Int16, -32768.0),
            (Int32, -2147483648.0),
            (Int64, -9007199254740992.0),
            (Float32, 3.4e38),
            (Float64, 0.1),
        ];
        for (t, x) in cases {
            let mut out = Vec::new();
            encode(t, &[x, 0.0], &mut out).unwrap();
            let mut back = [1.0; 2];
            assert_eq!(decode(t, &out, &mut back), Ok(out.len()), "{t}");
            assert_eq!(back[0], if t == Float32 { x as f32 as f64 } else { x }, "{t}");
        }
        let mut out = Vec::new();
        encode(String, &[0.1 + 0.2], &mut out).unwrap();
        assert_eq!(&out[4..], b"0.30000000000000004");
        let mut back = [0.0];
        decode(String, &out, &mut back).unwrap();
        assert_eq!(back[0], 0.1 + 0.2);
        out.clear();
        encode(Binary, &[1.0, 2.0, 255.0], &mut out).unwrap();
        assert_eq!(out, [3, 0, 0, 0, 1, 2, 255]);
        let mut back = [9.0; 4];
        assert_eq!(decode(Binary, &out, &mut back), Ok(7));
        assert_eq!(back, [1.0, 2.0, 255.0, 0.0]);
    }

    #[test]
    fn values_out_of_range_and_short_payloads_are_errors() {
        use DataType::*;
        let mut out = Vec::new();
        for (t, x) in [
            (Uint8, -1.0),
            (Int8, 128.0),
            (Uint32, f64::NAN),
            (Float32, 1e39),
            (Binary, 256.0),
        ] {
            assert!(
                matches!(encode(t, &[x], &mut out), Err(ValueError::OutOfRange { .. })),
                "{t} {x}"
            );
        }
        let mut v = [0.0; 2];
        assert!(matches!(
            decode(Float64, &[0; 12], &mut v),
            Err(ValueError::Truncated { needed: 16, .. })
        ));
        assert!(matches!(
            decode(String, &[200, 0, 0, 0, b'1'], &mut v[..1]),
            Err(ValueError::Truncated { .. })
        ));
        assert_eq!(
            decode(String, &[1, 0, 0, 0, b'x'], &mut v[..1]),
            Err(ValueError::NotANumber)
        );
        assert!(matches!(
            decode(Binary, &[3, 0, 0, 0, 1, 2, 3], &mut v),
            Err(ValueError::TooLong { length: 3, width: 2 })
        ));
    }
}
