//! One ISO-TP connection's settings and their bounds.

use tandem_can::frame::{CanId, FD_LENGTHS};

/// Largest message a [`Config`] may allow (16 MiB): the buffers are
/// allocated at this size when a machine is built, so a configuration
/// cannot make it allocate without bound (the standard's FF_DL goes to
/// 4 GiB).
pub const MAX_MESSAGE_LEN: usize = 1 << 24;

/// How a frame addresses its receiver.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Addressing {
    /// The identifier alone addresses the frame.
    Normal,
    /// The first data byte is an address (N_TA): `tx` on the frames sent,
    /// `rx` expected on the frames received (others are not for this node).
    Extended {
        /// The address byte written into every frame sent.
        tx: u8,
        /// The address byte of the frames this node receives.
        rx: u8,
    },
}

impl Addressing {
    /// The bytes the address takes at the start of every frame.
    pub(crate) fn len(self) -> usize {
        match self {
            Addressing::Normal => 0,
            Addressing::Extended { .. } => 1,
        }
    }
}

/// One ISO-TP connection: who sends to whom, how frames are framed, and the
/// flow control this node asks of its peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// The identifier of the frames this node sends.
    pub tx_id: CanId,
    /// The identifier of the frames this node receives.
    pub rx_id: CanId,
    /// Normal or extended addressing.
    pub addressing: Addressing,
    /// Send CAN FD frames (receiving accepts both kinds).
    pub fd: bool,
    /// Bit-rate switch on the CAN FD frames sent.
    pub brs: bool,
    /// The frame length used to send (TX_DL): 8 for classic CAN; 8, 12,
    /// 16, 20, 24, 32, 48 or 64 for CAN FD.
    pub tx_dl: usize,
    /// Pad every frame sent to 8 bytes with this byte. CAN FD frames longer
    /// than 8 bytes are always rounded up to the next valid length, with
    /// this byte or else 0xCC.
    pub padding: Option<u8>,
    /// The block size asked of the sender (BS, 0 = no further flow control).
    pub block_size: u8,
    /// The separation time asked of the sender, as sent (STmin: 0x00–0x7F
    /// milliseconds, 0xF1–0xF9 100–900 µs).
    pub st_min: u8,
    /// The longest message sent or received, in bytes: a longer first
    /// frame is answered with FC.OVFLW.
    pub max_len: usize,
    /// N_Bs: how long a transmission waits for a flow control, in ns.
    pub n_bs_ns: u64,
    /// N_Cr: how long a reception waits for the next consecutive frame, in ns.
    pub n_cr_ns: u64,
}

impl Config {
    /// Classic CAN, normal addressing, no padding, BS 0 and STmin 0, 4095-byte
    /// messages, 1 s timeouts.
    pub fn classic(tx_id: CanId, rx_id: CanId) -> Self {
        Config {
            tx_id,
            rx_id,
            addressing: Addressing::Normal,
            fd: false,
            brs: false,
            tx_dl: 8,
            padding: None,
            block_size: 0,
            st_min: 0,
            max_len: 4095,
            n_bs_ns: 1_000_000_000,
            n_cr_ns: 1_000_000_000,
        }
    }

    /// Checks the settings; the error names the field and its bound.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !self.fd && self.tx_dl != 8 {
            return Err(ConfigError::ClassicTxDl(self.tx_dl));
        }
        if self.fd && (self.tx_dl < 8 || !FD_LENGTHS.contains(&self.tx_dl)) {
            return Err(ConfigError::FdTxDl(self.tx_dl));
        }
        if self.max_len == 0 || self.max_len > MAX_MESSAGE_LEN {
            return Err(ConfigError::MaxLen(self.max_len));
        }
        if self.st_min > 0x7F && !(0xF1..=0xF9).contains(&self.st_min) {
            return Err(ConfigError::StMin(self.st_min));
        }
        if self.n_bs_ns == 0 || self.n_cr_ns == 0 {
            return Err(ConfigError::Timeout);
        }
        Ok(())
    }
}

/// A [`Config`] outside its bounds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// `tx_dl` of a classic connection.
    #[error("tx_dl {0} on classic CAN: it must be 8 (or set fd)")]
    ClassicTxDl(usize),
    /// `tx_dl` of a CAN FD connection.
    #[error("tx_dl {0} on CAN FD: it must be one of 8, 12, 16, 20, 24, 32, 48, 64")]
    FdTxDl(usize),
    /// `max_len` out of range.
    #[error("max_len {0}: it must be 1 to {MAX_MESSAGE_LEN} bytes")]
    MaxLen(usize),
    /// A reserved STmin value.
    #[error("st_min {0:#04X}: it must be 0x00-0x7F (ms) or 0xF1-0xF9 (100-900 us)")]
    StMin(u8),
    /// A zero timeout.
    #[error("n_bs_ns and n_cr_ns must be above 0")]
    Timeout,
}
