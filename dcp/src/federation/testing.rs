//! What the master's tests share: datagrams written, a queue of them read
//! as a wire reads, and float64 variables.

use std::collections::VecDeque;

use crate::pdu::Pdu;
use crate::ports::{Causality, Variable};
use crate::types::DataType;

/// The bytes of `pdu`.
pub(super) fn pdu(pdu: Pdu<'_>) -> Vec<u8> {
    pdu.to_vec()
}

/// The next of `queue` into `buf`: its length.
pub(super) fn next_into(queue: &mut VecDeque<Vec<u8>>, buf: &mut [u8]) -> Option<usize> {
    queue.pop_front().map(|b| {
        buf[..b.len()].copy_from_slice(&b);
        b.len()
    })
}

/// A scalar float64 variable.
pub(super) fn variable(name: &str, vr: u64, causality: Causality) -> Variable {
    Variable {
        name: name.into(),
        vr,
        causality,
        data_type: DataType::Float64,
        elements: 0..1,
        unit: None,
        start: vec![0.0],
        range: None,
        dependencies: None,
        mime_type: None,
    }
}
