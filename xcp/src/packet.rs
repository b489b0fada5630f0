//! XCP packets and their framing on Ethernet.
//!
//! XCP on Ethernet (ASAM XCP 1.x Part 3, "XCP on Ethernet", section 3.3)
//! puts a 4-byte header before each packet: `LEN` (u16, the packet's
//! length without the header) and `CTR` (u16, a counter), both
//! little-endian. A UDP datagram carries one or more framed packets; TCP
//! carries a stream of them. Every multi-byte field inside a packet is
//! little-endian (Intel byte order, the slave's `BYTE_ORDER` 0).

/// The largest command or response packet (CTO), in bytes.
pub const MAX_CTO: usize = 255;
/// The largest data packet (DTO), in bytes: a framed DTO fits one
/// Ethernet frame's UDP payload (1472 bytes) with room to spare.
pub const MAX_DTO: usize = 1400;
/// Bytes of the Ethernet header (`LEN`, `CTR`) before each packet.
pub const HEADER: usize = 4;

/// Packet identifiers (PIDs) of responses from the slave (Part 2, 1.1.2).
pub mod pid {
    /// A positive response.
    pub const RES: u8 = 0xFF;
    /// An error response.
    pub const ERR: u8 = 0xFE;
}

/// Error codes of an `ERR` packet (Part 2, section 1.1.3.2, table
/// "error codes").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ErrorCode {
    /// Answer to SYNCH: the command processor is in sync.
    CmdSynch = 0x00,
    /// The command was not executed: the slave is busy (here: another
    /// master is connected, or the sampler has not taken earlier DAQ
    /// changes).
    CmdBusy = 0x10,
    /// The command is refused while a DAQ list runs.
    DaqActive = 0x11,
    /// The command is not implemented.
    CmdUnknown = 0x20,
    /// The command's length or a field is malformed.
    CmdSyntax = 0x21,
    /// A parameter is out of range (address outside any object, count
    /// beyond a bound).
    OutOfRange = 0x22,
    /// The memory is read-only (a measurement, the reference page).
    WriteProtected = 0x23,
    /// Access denied (the target refused a calibration).
    AccessDenied = 0x24,
    /// Access locked (seed and key; not used by this slave).
    AccessLocked = 0x25,
    /// The page does not exist.
    PageNotValid = 0x26,
    /// The page mode is not valid.
    ModeNotValid = 0x27,
    /// The segment does not exist.
    SegmentNotValid = 0x28,
    /// The command came out of sequence.
    Sequence = 0x29,
    /// The DAQ configuration is not valid.
    DaqConfig = 0x2A,
    /// A bound on DAQ lists, ODTs or entries is exceeded.
    MemoryOverflow = 0x30,
}

/// Why a datagram or stream cannot be split into packets.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum FrameError {
    /// The header's `LEN` is 0: no packet is empty.
    #[error("XCP on Ethernet packet at byte {at} has LEN 0; every packet carries at least its PID")]
    Empty {
        /// The header's offset in the datagram or stream buffer.
        at: usize,
    },
    /// The header's `LEN` exceeds the largest packet.
    #[error("XCP on Ethernet packet at byte {at} has LEN {len}, beyond MAX_CTO {MAX_CTO}")]
    TooLong {
        /// The header's offset.
        at: usize,
        /// Its `LEN`.
        len: usize,
    },
    /// A datagram ends inside a header or a packet.
    #[error("XCP on Ethernet datagram ends at byte {end} inside the packet whose header is at byte {at}; LEN must match the bytes sent")]
    Truncated {
        /// The header's offset.
        at: usize,
        /// The datagram's length.
        end: usize,
    },
}

/// Appends `packet` framed with the Ethernet header (`LEN`, `ctr`) to `out`.
pub fn frame(ctr: u16, packet: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(packet.len() as u16).to_le_bytes());
    out.extend_from_slice(&ctr.to_le_bytes());
    out.extend_from_slice(packet);
}

/// The next framed command packet at the start of `buf`: `Ok(Some((packet,
/// consumed)))`, `Ok(None)` when `buf` holds only part of one (read more
/// of a stream), or an error when its header is not valid. `at` is `buf`'s
/// offset, for the error's message.
pub fn next_packet(buf: &[u8], at: usize) -> Result<Option<(&[u8], usize)>, FrameError> {
    if buf.len() < HEADER {
        return Ok(None);
    }
    let len = u16::from_le_bytes([buf[0], buf[1]]) as usize;
    if len == 0 {
        return Err(FrameError::Empty { at });
    }
    if len > MAX_CTO {
        return Err(FrameError::TooLong { at, len });
    }
    Ok(buf.get(HEADER..HEADER + len).map(|packet| (packet, HEADER + len)))
}

/// The command packets of one UDP datagram, in order; an invalid header
/// or a truncated packet ends the datagram with an error after the packets
/// before it.
pub fn datagram_packets(datagram: &[u8]) -> impl Iterator<Item = Result<&[u8], FrameError>> {
    let mut at = 0;
    let mut failed = false;
    std::iter::from_fn(move || {
        if failed || at >= datagram.len() {
            return None;
        }
        let item = match next_packet(&datagram[at..], at) {
            Ok(Some((packet, used))) => {
                at += used;
                Ok(packet)
            }
            Ok(None) => Err(FrameError::Truncated {
                at,
                end: datagram.len(),
            }),
            Err(e) => Err(e),
        };
        failed = item.is_err();
        Some(item)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_datagram_splits_into_its_framed_packets() {
        let mut d = Vec::new();
        frame(7, &[0xFF, 0x00], &mut d);
        frame(8, &[0xFD], &mut d);
        assert_eq!(&d[..6], &[2, 0, 7, 0, 0xFF, 0x00], "LEN and CTR little-endian");
        let packets: Vec<_> = datagram_packets(&d).collect();
        assert_eq!(packets, [Ok(&[0xFF, 0x00][..]), Ok(&[0xFD][..])]);
    }

    #[test]
    fn bad_headers_end_the_datagram_with_an_error_naming_the_place() {
        let mut d = Vec::new();
        frame(0, &[0xFD], &mut d);
        d.extend_from_slice(&[5, 0, 1, 0, 0xFF]);
        let packets: Vec<_> = datagram_packets(&d).collect();
        assert_eq!(
            packets,
            [Ok(&[0xFD][..]), Err(FrameError::Truncated { at: 5, end: 10 })]
        );
        assert_eq!(
            datagram_packets(&[0, 0, 0, 0, 0xFF]).collect::<Vec<_>>(),
            [Err(FrameError::Empty { at: 0 })]
        );
        assert_eq!(
            datagram_packets(&[0, 1, 0, 0]).collect::<Vec<_>>(),
            [Err(FrameError::TooLong { at: 0, len: 256 })]
        );
        assert_eq!(next_packet(&[1, 0, 0], 0), Ok(None), "a stream reads on");
    }
}
