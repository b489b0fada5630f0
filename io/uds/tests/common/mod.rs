//! What the UDS tests share.

use tandem_uds::{Did, Encoding};

/// DID `id`, encoded in `bytes` bytes (`signed` or not) as
/// `value = raw × scale + offset`.
pub fn did(id: u16, bytes: u8, signed: bool, scale: f64, offset: f64) -> Did {
    Did {
        id,
        encoding: Encoding {
            bytes,
            signed,
            scale,
            offset,
        },
    }
}
