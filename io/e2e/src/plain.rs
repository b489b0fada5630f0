//! Plain counter and checksum signals, as platforms that predate E2E use
//! them: a rolling counter somewhere in the payload, and a checksum over a
//! byte range written at a chosen byte.

use super::bound::Bound;
use super::crc::{CRC16_CCITT_FALSE, CRC32_P4, CRC8_H2F, CRC8_SAE_J1850};
use tandem_dbc::{BitField, ByteOrder};

/// A rolling counter of `bits` bits at `start_bit`, numbered as a DBC
/// signal's (an Intel signal's start bit is its least significant bit, a
/// Motorola one's its most significant), counting `0..=max` and wrapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CounterSignal {
    /// The DBC start bit.
    pub start_bit: u32,
    /// Size in bits, 1 to 16.
    pub bits: u32,
    /// Intel or Motorola.
    pub byte_order: ByteOrder,
    /// The last value before the counter wraps to 0: 1 to 2^bits − 1.
    pub max: u32,
}

/// A checksum of `kind` over bytes `start..end`, written at byte `at`
/// (its bytes must lie outside the range).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChecksumSignal {
    /// Which checksum.
    pub kind: Checksum,
    /// First byte summed.
    pub start: usize,
    /// One past the last byte summed.
    pub end: usize,
    /// The checksum's first byte.
    pub at: usize,
    /// For checksums of more than one byte: Intel writes the least
    /// significant byte first, Motorola the most significant.
    pub byte_order: ByteOrder,
}

/// The checksums a [`ChecksumSignal`] can carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Checksum {
    /// CRC-8/SAE-J1850 (polynomial 0x1D, initial and final XOR 0xFF).
    Crc8SaeJ1850,
    /// CRC-8/AUTOSAR "8H2F" (polynomial 0x2F, initial and final XOR 0xFF).
    Crc8H2f,
    /// CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF), 2 bytes.
    Crc16CcittFalse,
    /// CRC-32/AUTOSAR "32P4" (polynomial 0xF4ACFB13, reflected), 4 bytes.
    Crc32P4,
    /// The XOR of the bytes.
    Xor,
    /// The sum of the bytes, modulo 256.
    Sum,
}

impl Checksum {
    /// Its size in bytes.
    pub fn width(self) -> usize {
        match self {
            Checksum::Crc16CcittFalse => 2,
            Checksum::Crc32P4 => 4,
            Checksum::Crc8SaeJ1850 | Checksum::Crc8H2f | Checksum::Xor | Checksum::Sum => 1,
        }
    }

    /// The checksum of `data`.
    pub fn of(self, data: &[u8]) -> u32 {
        match self {
            Checksum::Crc8SaeJ1850 => CRC8_SAE_J1850.checksum(data).into(),
            Checksum::Crc8H2f => CRC8_H2F.checksum(data).into(),
            Checksum::Crc16CcittFalse => CRC16_CCITT_FALSE.checksum(data).into(),
            Checksum::Crc32P4 => CRC32_P4.checksum(data),
            Checksum::Xor => data.iter().fold(0, |x, b| x ^ b).into(),
            Checksum::Sum => data.iter().fold(0u8, |x, b| x.wrapping_add(*b)).into(),
        }
    }
}

impl CounterSignal {
    fn field(&self) -> BitField {
        BitField {
            start_bit: self.start_bit,
            size: self.bits,
            byte_order: self.byte_order,
        }
    }
}

impl ChecksumSignal {
    /// Where the checksum's bytes sit.
    fn place(&self) -> std::ops::Range<usize> {
        self.at..self.at + self.kind.width()
    }

    /// The checksum `data` should carry.
    fn expected(&self, data: &[u8]) -> u32 {
        self.kind.of(&data[self.start..self.end])
    }

    /// The checksum `data` carries.
    fn carried(&self, data: &[u8]) -> u32 {
        let bytes = &data[self.place()];
        let fold = |value: u32, b: &u8| value << 8 | u32::from(*b);
        match self.byte_order {
            ByteOrder::Intel => bytes.iter().rev().fold(0, fold),
            ByteOrder::Motorola => bytes.iter().fold(0, fold),
        }
    }

    /// Writes `value` into its place.
    fn write(&self, data: &mut [u8], value: u32) {
        let width = self.kind.width();
        let bytes = &mut data[self.place()];
        for (i, b) in bytes.iter_mut().enumerate() {
            let shift = match self.byte_order {
                ByteOrder::Intel => 8 * i,
                ByteOrder::Motorola => 8 * (width - 1 - i),
            };
            *b = (value >> shift) as u8;
        }
    }
}

/// Checks the plain signals against `data_length`: the field at fault, its
/// value and the bound it broke.
pub(super) fn validate(
    counter: Option<CounterSignal>,
    checksum: Option<ChecksumSignal>,
    data_length: usize,
) -> Result<(), (&'static str, u64, Bound)> {
    let len = data_length as u64;
    if let Some(checksum) = checksum {
        if checksum.end > data_length {
            return Err((
                "checksum.end",
                checksum.end as u64,
                Bound::AtMost(len, "the data length"),
            ));
        }
        if checksum.start >= checksum.end {
            let why = "the range must hold a byte";
            let bound = Bound::AtMost(checksum.end.saturating_sub(1) as u64, why);
            return Err(("checksum.start", checksum.start as u64, bound));
        }
        let width = checksum.kind.width() as u64;
        let end = (checksum.at as u64).saturating_add(width);
        if end > len {
            let bound = Bound::EndsBeyond {
                byte: end - 1,
                length: len,
            };
            return Err(("checksum.at", checksum.at as u64, bound));
        }
        if checksum.at < checksum.end && checksum.start < checksum.place().end {
            return Err(("checksum.at", checksum.at as u64, Bound::Overlaps("the summed range")));
        }
    }
    if let Some(counter) = counter {
        if !(1..=16).contains(&counter.bits) {
            let bound = if counter.bits == 0 {
                Bound::AtLeast(1)
            } else {
                Bound::AtMost(16, "counters are 16 bits at most")
            };
            return Err(("counter.bits", counter.bits.into(), bound));
        }
        let top = (1u64 << counter.bits) - 1;
        if counter.max == 0 {
            return Err(("counter.max", 0, Bound::AtLeast(1)));
        }
        if u64::from(counter.max) > top {
            let bound = Bound::AtMost(top, "what the counter's bits hold");
            return Err(("counter.max", counter.max.into(), bound));
        }
        let field = counter.field();
        let last = field.last_byte() as u64;
        if last >= len {
            let bound = Bound::EndsBeyond {
                byte: last,
                length: len,
            };
            return Err(("counter.start_bit", counter.start_bit.into(), bound));
        }
        if let Some(checksum) = checksum {
            if (0..counter.bits).any(|i| checksum.place().contains(&field.position(i).0)) {
                return Err((
                    "counter.start_bit",
                    counter.start_bit.into(),
                    Bound::Overlaps("the checksum"),
                ));
            }
        }
    }
    Ok(())
}

/// Writes `counter` then the checksum over the result.
pub(super) fn protect(counter: Option<CounterSignal>, checksum: Option<ChecksumSignal>, data: &mut [u8], value: u32) {
    if let Some(counter) = counter {
        counter.field().write(data, value.into());
    }
    if let Some(checksum) = checksum {
        checksum.write(data, checksum.expected(data));
    }
}

/// The counter of a received payload whose checksum is right (`None`
/// without a counter signal), or what is wrong with it.
pub(super) fn verify(
    counter: Option<CounterSignal>,
    checksum: Option<ChecksumSignal>,
    data: &[u8],
) -> Result<Option<u32>, super::CheckError> {
    if let Some(checksum) = checksum {
        if checksum.carried(data) != checksum.expected(data) {
            return Err(super::CheckError::Crc);
        }
    }
    match counter {
        Some(counter) => {
            let value = counter.field().read(data) as u32;
            if value > counter.max {
                return Err(super::CheckError::Counter);
            }
            Ok(Some(value))
        }
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_sit_where_a_dbc_signal_would() {
        // Intel: start bit 12 is the high nibble of byte 1.
        let intel = CounterSignal {
            start_bit: 12,
            bits: 4,
            byte_order: ByteOrder::Intel,
            max: 14,
        };
        let mut data = [0u8; 3];
        protect(Some(intel), None, &mut data, 9);
        assert_eq!(data, [0x00, 0x90, 0x00]);
        // Motorola: start bit 3 is the most significant of a 6-bit field
        // spanning byte 0's low nibble and byte 1's top two bits.
        let motorola = CounterSignal {
            start_bit: 3,
            bits: 6,
            byte_order: ByteOrder::Motorola,
            max: 63,
        };
        let mut data = [0u8; 3];
        protect(Some(motorola), None, &mut data, 0b10_1101);
        assert_eq!(data, [0b0000_1011, 0b0100_0000, 0x00]);
        assert_eq!(verify(Some(motorola), None, &data), Ok(Some(0b10_1101)));
        assert_eq!(
            verify(Some(intel), None, &[0, 0xF0, 0]),
            Err(super::super::CheckError::Counter)
        );
    }

    #[test]
    fn checksums_go_in_the_chosen_byte_order() {
        let mut data = *b"\x00\x00123456789";
        let signal = |byte_order| ChecksumSignal {
            kind: Checksum::Crc16CcittFalse,
            start: 2,
            end: 11,
            at: 0,
            byte_order,
        };
        protect(None, Some(signal(ByteOrder::Motorola)), &mut data, 0);
        assert_eq!(data[..2], [0x29, 0xB1]);
        protect(None, Some(signal(ByteOrder::Intel)), &mut data, 0);
        assert_eq!(data[..2], [0xB1, 0x29]);
        assert_eq!(Checksum::Xor.of(&[0x0F, 0xF0, 0x01]), 0xFE);
        assert_eq!(Checksum::Sum.of(&[0xFF, 0x02]), 0x01);
    }
}
