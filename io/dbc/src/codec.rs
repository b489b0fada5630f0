//! Signal values in and out of payload bits, without allocating.

use super::{ByteOrder, Message, Multiplex, Signal, ValueType};

impl Signal {
    /// The physical value in `payload`: raw × factor + offset. Bits beyond
    /// the payload's end read as 0, so any payload decodes (a short one to
    /// the value of its zero-padded form); this never allocates or panics.
    pub fn decode(&self, payload: &[u8]) -> f64 {
        let raw = self.raw(payload);
        let value = match self.value_type {
            ValueType::Unsigned => raw as f64,
            ValueType::Signed => sign_extend(raw, self.size) as f64,
            ValueType::Float32 => f64::from(f32::from_bits(raw as u32)),
            ValueType::Float64 => f64::from_bits(raw),
        };
        value * self.factor + self.offset
    }

    /// Writes the raw value of `physical` into `payload`, leaving every other
    /// bit as it is; bits beyond the payload's end are not written. Returns
    /// whether the value had to be limited to fit:
    ///
    /// - when `min < max`, `physical` is first clamped to `[min, max]`;
    /// - an integer signal's raw value is `(physical − offset) / factor`
    ///   rounded to the nearest integer, ties to even (as cantools does),
    ///   then saturated to what its size and signedness can hold; NaN has
    ///   no raw value and is written as raw 0 (returning `true`);
    /// - a float signal's raw value is `(physical − offset) / factor`,
    ///   written as its IEEE bits (NaN and infinities included); a float32
    ///   beyond the largest finite single saturates to it.
    ///
    /// Never allocates or panics.
    pub fn encode(&self, physical: f64, payload: &mut [u8]) -> bool {
        let (raw, limited) = self.raw_of(physical);
        self.bits().write(payload, raw);
        limited
    }

    /// Writes `raw` into the signal's bits of `payload` as it is (its low
    /// `size` bits), leaving every other bit as it is: a raw value no
    /// scaling or range applies to.
    pub fn encode_raw(&self, raw: u64, payload: &mut [u8]) {
        self.bits().write(payload, raw);
    }

    /// The signal's raw bits in `payload`, least significant first; bits
    /// beyond the payload's end read as 0.
    pub(super) fn raw(&self, payload: &[u8]) -> u64 {
        self.bits().read(payload)
    }

    /// Where bit `i` of the raw value (0 = least significant) sits in the
    /// payload: (byte index, bit in that byte with 0 = least significant).
    pub fn bit_position(&self, i: u32) -> (usize, u32) {
        self.bits().position(i)
    }

    /// The bits the signal occupies.
    pub(super) fn bits(&self) -> BitField {
        BitField {
            start_bit: self.start_bit,
            size: self.size,
            byte_order: self.byte_order,
        }
    }

    /// The raw bits for `physical`, and whether it was clamped or saturated.
    fn raw_of(&self, physical: f64) -> (u64, bool) {
        let mut limited = false;
        let mut value = physical;
        if self.min < self.max && (value < self.min || value > self.max) {
            value = value.clamp(self.min, self.max);
            limited = true;
        }
        let scaled = (value - self.offset) / self.factor;
        match self.value_type {
            ValueType::Float64 => (scaled.to_bits(), limited),
            ValueType::Float32 => {
                let single = scaled as f32;
                if scaled.is_finite() && single.is_infinite() {
                    (f32::MAX.copysign(single).to_bits().into(), true)
                } else {
                    (single.to_bits().into(), limited)
                }
            }
            ValueType::Unsigned | ValueType::Signed if scaled.is_nan() => (0, true),
            ValueType::Unsigned | ValueType::Signed => {
                let (lowest, highest) = self.raw_range();
                // `as` saturates at the i128 bounds, far beyond any signal.
                let wanted = scaled.round_ties_even() as i128;
                let raw = wanted.clamp(lowest, highest);
                (raw as u64, limited || raw != wanted)
            }
        }
    }

    /// The lowest and highest raw integer the signal can hold.
    fn raw_range(&self) -> (i128, i128) {
        let size = self.size.min(64);
        match (self.value_type, size) {
            (_, 0) => (0, 0),
            (ValueType::Signed, _) => (-(1 << (size - 1)), (1 << (size - 1)) - 1),
            _ => (0, (1 << size) - 1),
        }
    }
}

impl Message {
    /// Whether `signal` is carried by `payload`: plain signals and the
    /// multiplexor always; a multiplexed signal when the multiplexor's raw
    /// value equals its own.
    pub fn carries(&self, signal: &Signal, payload: &[u8]) -> bool {
        match signal.multiplex {
            Multiplex::Multiplexed(value) => self
                .signals
                .iter()
                .find(|s| s.multiplex == Multiplex::Multiplexor)
                .is_some_and(|mux| mux.raw(payload) == value),
            Multiplex::Plain | Multiplex::Multiplexor => true,
        }
    }
}

/// A run of payload bits holding an unsigned raw value, numbered as the
/// DBC numbers a signal's (see the module documentation): what a signal
/// occupies, and what the plain counter signals of `tandem-e2e` occupy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BitField {
    /// The DBC start bit.
    pub start_bit: u32,
    /// Size in bits; bits beyond the 64th are not read or written.
    pub size: u32,
    /// Intel or Motorola.
    pub byte_order: ByteOrder,
}

impl BitField {
    /// Where bit `i` of the raw value (0 = least significant) sits in the
    /// payload: (byte index, bit in that byte with 0 = least significant).
    pub fn position(&self, i: u32) -> (usize, u32) {
        let start = u64::from(self.start_bit);
        match self.byte_order {
            ByteOrder::Intel => {
                let pos = start + u64::from(i);
                ((pos / 8) as usize, (pos % 8) as u32)
            }
            ByteOrder::Motorola => {
                // Count bits in transmission order (byte 0 bit 7 first): the
                // start bit is the most significant, raw bit i follows it by
                // size - 1 - i places.
                let msb = start / 8 * 8 + 7 - start % 8;
                let pos = msb + u64::from(self.size.saturating_sub(1).saturating_sub(i));
                ((pos / 8) as usize, 7 - (pos % 8) as u32)
            }
        }
    }

    /// The raw bits in `payload`, least significant first; bits beyond the
    /// payload's end read as 0.
    pub fn read(&self, payload: &[u8]) -> u64 {
        (0..self.size.min(64)).fold(0, |raw, i| {
            let (byte, bit) = self.position(i);
            match payload.get(byte) {
                Some(b) if b >> bit & 1 == 1 => raw | 1 << i,
                _ => raw,
            }
        })
    }

    /// Writes the low `size` bits of `raw`, leaving every other bit as it
    /// is; bits beyond the payload's end are not written.
    pub fn write(&self, payload: &mut [u8], raw: u64) {
        for i in 0..self.size.min(64) {
            let (byte, bit) = self.position(i);
            if let Some(b) = payload.get_mut(byte) {
                if raw >> i & 1 == 1 {
                    *b |= 1 << bit;
                } else {
                    *b &= !(1 << bit);
                }
            }
        }
    }

    /// The highest payload byte index the field touches.
    pub fn last_byte(&self) -> usize {
        (0..self.size).map(|i| self.position(i).0).max().unwrap_or(0)
    }
}

/// `raw`'s low `size` bits as a two's-complement number.
fn sign_extend(raw: u64, size: u32) -> i64 {
    match size {
        0 => 0,
        1..=63 => {
            let unused = 64 - size;
            ((raw << unused) as i64) >> unused
        }
        _ => raw as i64,
    }
}
