//! A data identifier's value as bytes: a scaled integer, big endian.

/// How a value is written: `raw = round((value - offset) / scale)` as an
/// unsigned or two's-complement integer of `bytes` bytes, big endian,
/// saturated to that integer's range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Encoding {
    /// 1 to 8.
    pub bytes: u8,
    /// Two's complement rather than unsigned.
    pub signed: bool,
    /// Physical units per raw step (not 0).
    pub scale: f64,
    /// The physical value of raw 0.
    pub offset: f64,
}

impl Encoding {
    /// The raw integer for `value`, saturated to the encoding's range.
    pub fn raw(&self, value: f64) -> i128 {
        let bits = u32::from(self.bytes) * 8;
        let (min, max) = if self.signed {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        // `as` saturates a float to i128's range (and NaN to 0).
        (((value - self.offset) / self.scale).round() as i128).clamp(min, max)
    }

    /// Writes `value` into `out` (`bytes` long).
    pub fn write(&self, value: f64, out: &mut [u8]) {
        let raw = self.raw(value).to_be_bytes();
        out.copy_from_slice(&raw[16 - usize::from(self.bytes)..]);
    }
}

/// One data identifier the server reads: its number and its encoding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Did {
    /// The 16-bit identifier.
    pub id: u16,
    /// How its value is written.
    pub encoding: Encoding,
}
