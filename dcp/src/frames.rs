//! CAN frames as DCP binary data: the frames a member sent over one
//! communication step, in the order sent, in one binary value of a variable
//! whose MIME type is [`MIME_TYPE`]. Each frame is 6 bytes of header and
//! its payload:
//!
//! | bytes | field |
//! |---|---|
//! | 0..4 | identifier, uint32 little endian; bit 31 set for a 29-bit (extended) identifier |
//! | 4 | kind: 0 classic data, 1 classic remote, 2 FD, plus 4 for FD's bit-rate switch and 8 for its error state indicator |
//! | 5 | length: payload bytes (a remote frame's requested length, with no payload) |
//! | 6.. | payload |

use tandem_can::{CanFrame, CanId, FrameKind};

/// The MIME type of a binary variable carrying CAN frames.
pub const MIME_TYPE: &str = "application/vnd.tandem.can-frames";

/// Bytes before a frame's payload.
pub const HEADER: usize = 6;

/// The identifier flag of an extended frame.
const EXTENDED: u32 = 1 << 31;

/// Bytes that are not frames.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FramesError {
    /// The bytes end inside a frame.
    #[error("the frames end inside a frame at byte {at}")]
    Truncated {
        /// Where that frame starts.
        at: usize,
    },
    /// A frame that cannot exist on a CAN bus.
    #[error("the frame at byte {at} cannot be on a CAN bus: {reason}")]
    Invalid {
        /// Where it starts.
        at: usize,
        /// Why.
        reason: String,
    },
}

/// The frames of the binary value at the start of `bytes` (its uint32
/// length and the bytes it counts), and the bytes the value takes.
pub fn value(bytes: &[u8]) -> Result<(&[u8], usize), FramesError> {
    let truncated = FramesError::Truncated { at: 0 };
    let len = bytes.get(..4).ok_or(truncated.clone())?;
    let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let frames = bytes.get(4..4 + len).ok_or(truncated)?;
    Ok((frames, 4 + len))
}

/// Appends `frame` to `out`.
pub fn encode(frame: &CanFrame, out: &mut Vec<u8>) {
    let id = frame.id();
    let raw = id.raw() | if id.is_extended() { EXTENDED } else { 0 };
    let kind = match frame.kind() {
        FrameKind::Data => 0,
        FrameKind::Remote => 1,
        FrameKind::Fd { brs, esi } => 2 | (brs as u8) << 2 | (esi as u8) << 3,
    };
    out.extend_from_slice(&raw.to_le_bytes());
    out.push(kind);
    out.push(frame.len() as u8);
    if !frame.is_remote() {
        out.extend_from_slice(frame.payload());
    }
}

/// Reads the frames of `bytes` in order, giving each to `take`; stops at
/// the first that is not a frame (those before it were taken).
pub fn decode(bytes: &[u8], take: &mut dyn FnMut(CanFrame)) -> Result<(), FramesError> {
    let mut at = 0;
    while at < bytes.len() {
        let header = bytes.get(at..at + HEADER).ok_or(FramesError::Truncated { at })?;
        let raw = u32::from_le_bytes([header[0], header[1], header[2], header[3]]);
        let (kind, len) = (header[4], header[5] as usize);
        let invalid = |reason: String| FramesError::Invalid { at, reason };
        let id = if raw & EXTENDED != 0 {
            CanId::extended(raw & !EXTENDED)
        } else {
            u16::try_from(raw)
                .map_err(|_| tandem_can::FrameError::IdRange(raw, 11))
                .and_then(CanId::standard)
        }
        .map_err(|e| invalid(e.to_string()))?;
        let carried = if kind == 1 { 0 } else { len };
        let payload = bytes
            .get(at + HEADER..at + HEADER + carried)
            .ok_or(FramesError::Truncated { at })?;
        let frame = match kind {
            0 => CanFrame::data(id, payload),
            1 => CanFrame::remote(id, len),
            k if k & !0b1100 == 2 => CanFrame::fd(id, payload, k & 4 != 0, k & 8 != 0),
            other => return Err(invalid(format!("unknown kind {other}"))),
        }
        .map_err(|e| invalid(e.to_string()))?;
        take(frame);
        at += HEADER + carried;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_of_every_kind_come_back_and_their_bytes_are_as_documented() {
        let frames = [
            CanFrame::data(CanId::standard(0x123).unwrap(), &[1, 2, 3]).unwrap(),
            CanFrame::remote(CanId::extended(0x1abc_def0).unwrap(), 4).unwrap(),
            CanFrame::fd(CanId::standard(0x7ff).unwrap(), &[9; 12], true, false).unwrap(),
        ];
        let mut out = Vec::new();
        for f in &frames {
            encode(f, &mut out);
        }
        assert_eq!(&out[..9], &[0x23, 0x01, 0, 0, 0, 3, 1, 2, 3]);
        assert_eq!(&out[9..15], &[0xf0, 0xde, 0xbc, 0x9a, 1, 4]);
        assert_eq!(&out[15..21], &[0xff, 0x07, 0, 0, 2 | 4, 12]);
        let mut back = Vec::new();
        decode(&out, &mut |f| back.push(f)).unwrap();
        assert_eq!(back, frames);
    }

    #[test]
    fn bytes_that_are_not_frames_are_refused_where_they_start() {
        let mut out = Vec::new();
        encode(&CanFrame::data(CanId::standard(1).unwrap(), &[1]).unwrap(), &mut out);
        let mut n = 0;
        assert_eq!(
            decode(&out[..out.len() - 1], &mut |_| n += 1),
            Err(FramesError::Truncated { at: 0 })
        );
        out.extend_from_slice(&[0x00, 0x08, 0, 0, 0, 0]);
        assert!(matches!(
            decode(&out, &mut |_| n += 1),
            Err(FramesError::Invalid { at: 7, .. })
        ));
        assert_eq!(n, 1, "the frame before the bad one was taken");
        assert!(matches!(
            decode(&[1, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0], &mut |_| ()),
            Err(FramesError::Invalid { at: 0, .. })
        ));
        assert!(matches!(
            decode(&[1, 0, 0, 0, 7, 0], &mut |_| ()),
            Err(FramesError::Invalid { .. })
        ));
        assert_eq!(value(&[2, 0, 0, 0, 7, 8, 9]), Ok((&[7u8, 8][..], 6)));
        assert!(value(&[3, 0, 0, 0, 7]).is_err());
    }
}
