//! A CAN frame as every transport, log and codec sees it: classic data,
//! remote or CAN FD, with an 11- or 29-bit identifier.

use std::fmt;

/// Largest payload of a classic frame.
pub const CLASSIC_MAX_LEN: usize = 8;
/// Largest payload of a CAN FD frame.
pub const FD_MAX_LEN: usize = 64;

/// The payload lengths a CAN FD frame can have, indexed by DLC.
pub const FD_LENGTHS: [usize; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64];

/// An 11-bit (standard) or 29-bit (extended) identifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CanId {
    /// 11-bit identifier, at most 0x7FF.
    Standard(u16),
    /// 29-bit identifier, at most 0x1FFF_FFFF.
    Extended(u32),
}

impl CanId {
    /// A standard identifier, if `id` fits 11 bits.
    pub fn standard(id: u16) -> Result<Self, FrameError> {
        (id <= 0x7FF)
            .then_some(CanId::Standard(id))
            .ok_or(FrameError::IdRange(u32::from(id), 11))
    }

    /// An extended identifier, if `id` fits 29 bits.
    pub fn extended(id: u32) -> Result<Self, FrameError> {
        (id <= 0x1FFF_FFFF)
            .then_some(CanId::Extended(id))
            .ok_or(FrameError::IdRange(id, 29))
    }

    /// An extended identifier when `extended`, else a standard one, if
    /// `id` fits its width (logs store either as one number and a flag).
    pub fn new(id: u32, extended: bool) -> Result<Self, FrameError> {
        if extended {
            CanId::extended(id)
        } else {
            u16::try_from(id)
                .map_err(|_| FrameError::IdRange(id, 11))
                .and_then(CanId::standard)
        }
    }

    /// The identifier's number.
    pub fn raw(self) -> u32 {
        match self {
            CanId::Standard(id) => u32::from(id),
            CanId::Extended(id) => id,
        }
    }

    /// Whether it is a 29-bit identifier.
    pub fn is_extended(self) -> bool {
        matches!(self, CanId::Extended(_))
    }
}

/// What kind of frame it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameKind {
    /// A classic data frame (up to 8 bytes).
    Data,
    /// A classic remote frame: a request with a length and no payload.
    Remote,
    /// A CAN FD frame (up to 64 bytes), with its bit-rate switch and error
    /// state indicator flags.
    Fd {
        /// Bit-rate switch: the data phase ran at the faster bit rate.
        brs: bool,
        /// Error state indicator: the sender was error passive.
        esi: bool,
    },
}

/// A frame that cannot exist on a CAN bus.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// The identifier does not fit its width.
    #[error("identifier {0:#X} does not fit {1} bits")]
    IdRange(u32, u8),
    /// The payload is too long, or not a valid CAN FD length.
    #[error("{len} data bytes is not a valid {kind} length (valid: {valid})")]
    Length {
        /// The length given.
        len: usize,
        /// "classic" or "CAN FD".
        kind: &'static str,
        /// The valid lengths, for the message.
        valid: &'static str,
    },
}

/// One CAN frame. Construct it with [`CanFrame::data`], [`CanFrame::remote`]
/// or [`CanFrame::fd`], which check its length.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CanFrame {
    id: CanId,
    kind: FrameKind,
    len: u8,
    data: [u8; FD_MAX_LEN],
}

impl CanFrame {
    /// A classic data frame with `payload` (at most 8 bytes).
    pub fn data(id: CanId, payload: &[u8]) -> Result<Self, FrameError> {
        if payload.len() > CLASSIC_MAX_LEN {
            return Err(FrameError::Length {
                len: payload.len(),
                kind: "classic",
                valid: "0 to 8",
            });
        }
        Ok(Self::filled(id, FrameKind::Data, payload))
    }

    /// A classic remote frame requesting `len` bytes (at most 8).
    pub fn remote(id: CanId, len: usize) -> Result<Self, FrameError> {
        if len > CLASSIC_MAX_LEN {
            return Err(FrameError::Length {
                len,
                kind: "classic",
                valid: "0 to 8",
            });
        }
        let mut frame = Self::filled(id, FrameKind::Remote, &[]);
        frame.len = len as u8;
        Ok(frame)
    }

    /// A CAN FD frame with `payload` (a length in [`FD_LENGTHS`]).
    pub fn fd(id: CanId, payload: &[u8], brs: bool, esi: bool) -> Result<Self, FrameError> {
        if !FD_LENGTHS.contains(&payload.len()) {
            return Err(FrameError::Length {
                len: payload.len(),
                kind: "CAN FD",
                valid: "0 to 8, 12, 16, 20, 24, 32, 48, 64",
            });
        }
        Ok(Self::filled(id, FrameKind::Fd { brs, esi }, payload))
    }

    fn filled(id: CanId, kind: FrameKind, payload: &[u8]) -> Self {
        let mut data = [0; FD_MAX_LEN];
        data[..payload.len()].copy_from_slice(payload);
        CanFrame {
            id,
            kind,
            len: payload.len() as u8,
            data,
        }
    }

    /// The identifier.
    pub fn id(&self) -> CanId {
        self.id
    }

    /// Data, remote or FD.
    pub fn kind(&self) -> FrameKind {
        self.kind
    }

    /// Whether it is a CAN FD frame.
    pub fn is_fd(&self) -> bool {
        matches!(self.kind, FrameKind::Fd { .. })
    }

    /// Whether it is a remote frame.
    pub fn is_remote(&self) -> bool {
        self.kind == FrameKind::Remote
    }

    /// The payload length in bytes (for a remote frame, the requested one).
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether the frame carries no payload bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The data length code: the length for classic frames, the index in
    /// [`FD_LENGTHS`] for FD frames.
    pub fn dlc(&self) -> u8 {
        if self.is_fd() {
            FD_LENGTHS.iter().position(|&l| l == self.len()).unwrap_or(0) as u8
        } else {
            self.len
        }
    }

    /// The payload (empty for a remote frame).
    pub fn payload(&self) -> &[u8] {
        if self.is_remote() {
            &[]
        } else {
            &self.data[..self.len()]
        }
    }
}

impl fmt::Debug for CanFrame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let width = if self.id.is_extended() { 8 } else { 3 };
        write!(f, "{:0width$X} {:?} [", self.id.raw(), self.kind)?;
        for b in self.payload() {
            write!(f, "{b:02X}")?;
        }
        write!(f, "]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_and_identifiers_are_checked() {
        assert!(CanId::standard(0x800).is_err());
        assert!(CanId::extended(0x2000_0000).is_err());
        let id = CanId::standard(0x123).unwrap();
        assert!(CanFrame::data(id, &[0; 9]).is_err());
        assert!(CanFrame::fd(id, &[0; 9], false, false).is_err());
        let fd = CanFrame::fd(id, &[7; 12], true, false).unwrap();
        assert_eq!((fd.len(), fd.dlc(), fd.payload()[11]), (12, 9, 7));
        let remote = CanFrame::remote(id, 4).unwrap();
        assert_eq!((remote.len(), remote.payload().len()), (4, 0));
    }
}
