//! The CRCs of the E2E profiles and of plain checksum signals, table-driven
//! with the tables computed at compile time.
//!
//! Each CRC offers its register form ([`Crc8::update`] and friends: feed
//! bytes into a running register, as the AUTOSAR CRC library's calls with
//! `IsFirstCall = FALSE` do) and its catalogue form (`checksum`: initial
//! value, all bytes, final XOR), whose check values over `"123456789"` are
//! those of the CRC catalogue (reveng.sourceforge.io/crc-catalogue).

/// An 8-bit CRC, most significant bit first (not reflected).
#[derive(Debug)]
pub struct Crc8 {
    table: [u8; 256],
    init: u8,
    xorout: u8,
}

impl Crc8 {
    /// The CRC of polynomial `poly` (without its top bit), initial register
    /// `init` and final XOR `xorout`.
    pub const fn new(poly: u8, init: u8, xorout: u8) -> Self {
        let mut table = [0u8; 256];
        let mut i = 0;
        while i < 256 {
            let mut reg = i as u8;
            let mut bit = 0;
            while bit < 8 {
                reg = if reg & 0x80 != 0 { (reg << 1) ^ poly } else { reg << 1 };
                bit += 1;
            }
            table[i] = reg;
            i += 1;
        }
        Crc8 { table, init, xorout }
    }

    /// The register after feeding `data` into `reg`.
    pub fn update(&self, mut reg: u8, data: &[u8]) -> u8 {
        for &byte in data {
            reg = self.table[usize::from(reg ^ byte)];
        }
        reg
    }

    /// The initial register value.
    pub fn init(&self) -> u8 {
        self.init
    }

    /// The final XOR.
    pub fn xorout(&self) -> u8 {
        self.xorout
    }

    /// The CRC of `data`.
    pub fn checksum(&self, data: &[u8]) -> u8 {
        self.update(self.init, data) ^ self.xorout
    }
}

/// A 16-bit CRC, most significant bit first (not reflected).
#[derive(Debug)]
pub struct Crc16 {
    table: [u16; 256],
    init: u16,
    xorout: u16,
}

impl Crc16 {
    /// The CRC of polynomial `poly` (without its top bit), initial register
    /// `init` and final XOR `xorout`.
    pub const fn new(poly: u16, init: u16, xorout: u16) -> Self {
        let mut table = [0u16; 256];
        let mut i = 0;
        while i < 256 {
            let mut reg = (i as u16) << 8;
            let mut bit = 0;
            while bit < 8 {
                reg = if reg & 0x8000 != 0 { (reg << 1) ^ poly } else { reg << 1 };
                bit += 1;
            }
            table[i] = reg;
            i += 1;
        }
        Crc16 { table, init, xorout }
    }

    /// The register after feeding `data` into `reg`.
    pub fn update(&self, mut reg: u16, data: &[u8]) -> u16 {
        for &byte in data {
            reg = (reg << 8) ^ self.table[usize::from((reg >> 8) as u8 ^ byte)];
        }
        reg
    }

    /// The initial register value.
    pub fn init(&self) -> u16 {
        self.init
    }

    /// The CRC of `data`.
    pub fn checksum(&self, data: &[u8]) -> u16 {
        self.update(self.init, data) ^ self.xorout
    }
}

/// A 32-bit CRC, least significant bit first (reflected input and output).
#[derive(Debug)]
pub struct Crc32 {
    table: [u32; 256],
    init: u32,
    xorout: u32,
}

impl Crc32 {
    /// The CRC of polynomial `poly` (written most significant bit first,
    /// without its top bit), initial register `init` and final XOR `xorout`.
    pub const fn new(poly: u32, init: u32, xorout: u32) -> Self {
        let reflected = poly.reverse_bits();
        let mut table = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut reg = i as u32;
            let mut bit = 0;
            while bit < 8 {
                reg = if reg & 1 != 0 { (reg >> 1) ^ reflected } else { reg >> 1 };
                bit += 1;
            }
            table[i] = reg;
            i += 1;
        }
        Crc32 { table, init, xorout }
    }

    /// The register after feeding `data` into `reg`.
    pub fn update(&self, mut reg: u32, data: &[u8]) -> u32 {
        for &byte in data {
            reg = (reg >> 8) ^ self.table[usize::from(reg as u8 ^ byte)];
        }
        reg
    }

    /// The CRC of `data`.
    pub fn checksum(&self, data: &[u8]) -> u32 {
        self.update(self.init, data) ^ self.xorout
    }
}

/// CRC-8/SAE-J1850: polynomial 0x1D, initial 0xFF, final XOR 0xFF (profiles
/// 1 and 11 run its register from 0x00 and leave out the final XOR).
pub static CRC8_SAE_J1850: Crc8 = Crc8::new(0x1D, 0xFF, 0xFF);

/// CRC-8/AUTOSAR ("8H2F"): polynomial 0x2F, initial 0xFF, final XOR 0xFF
/// (profile 2).
pub static CRC8_H2F: Crc8 = Crc8::new(0x2F, 0xFF, 0xFF);

/// CRC-16/CCITT-FALSE (catalogue name CRC-16/IBM-3740): polynomial 0x1021,
/// initial 0xFFFF, no final XOR (profile 5).
pub static CRC16_CCITT_FALSE: Crc16 = Crc16::new(0x1021, 0xFFFF, 0x0000);

/// CRC-32/AUTOSAR ("32P4"): polynomial 0xF4ACFB13, reflected, initial and
/// final XOR 0xFFFFFFFF (profiles 4 and 7).
pub static CRC32_P4: Crc32 = Crc32::new(0xF4AC_FB13, 0xFFFF_FFFF, 0xFFFF_FFFF);

#[cfg(test)]
mod tests {
    use super::*;

    /// The catalogue's check input.
    const CHECK: &[u8] = b"123456789";

    // Check values from the CRC catalogue (reveng.sourceforge.io/crc-catalogue/all.htm).
    #[test]
    fn sae_j1850_matches_the_catalogue() {
        assert_eq!(CRC8_SAE_J1850.checksum(CHECK), 0x4B);
    }

    #[test]
    fn h2f_matches_the_catalogue() {
        assert_eq!(CRC8_H2F.checksum(CHECK), 0xDF);
    }

    #[test]
    fn ccitt_false_matches_the_catalogue() {
        assert_eq!(CRC16_CCITT_FALSE.checksum(CHECK), 0x29B1);
    }

    #[test]
    fn p4_matches_the_catalogue() {
        assert_eq!(CRC32_P4.checksum(CHECK), 0x1697_D06A);
    }

    #[test]
    fn feeding_in_pieces_equals_feeding_at_once() {
        let (head, tail) = CHECK.split_at(4);
        let reg = CRC8_H2F.update(CRC8_H2F.init(), head);
        assert_eq!(CRC8_H2F.update(reg, tail) ^ CRC8_H2F.xorout(), 0xDF);
        let reg = CRC16_CCITT_FALSE.update(CRC16_CCITT_FALSE.init(), head);
        assert_eq!(CRC16_CCITT_FALSE.update(reg, tail), 0x29B1);
    }
}
