//! The checks a converted DBC passes before Tandem uses it: every message
//! has an identifier that fits, a CAN length, and a unique name and
//! identifier, and every signal fits its message without sharing bits with
//! another it can appear with.

use std::collections::{HashMap, HashSet};

use super::error::{DbcError, Issue};
use super::source::Sites;
use super::{ByteOrder, Message, Multiplex, Signal, ValueType};
use tandem_can::frame::{CanId, CLASSIC_MAX_LEN, FD_LENGTHS};

/// Checks `messages`, parsed from `text` read from `origin`; the error
/// points at the `BO_` or `SG_` line concerned.
pub(super) fn validate(messages: &[Message], text: &str, origin: &str) -> Result<(), DbcError> {
    let sites = Sites::of(text);
    let mut earlier = Earlier::default();
    for (index, message) in messages.iter().enumerate() {
        let written_id = sites.find(index, &message.name).map(|site| site.id);
        let check = check_id(message, written_id)
            .and_then(|()| earlier.check_names(messages, index))
            .and_then(|()| check_length(message))
            .and_then(|()| {
                message
                    .signals
                    .iter()
                    .enumerate()
                    .try_for_each(|(i, s)| check_signal(message, i, s))
            })
            .and_then(|()| check_multiplexing(message))
            .and_then(|()| check_overlaps(message));
        check.map_err(|issue| issue.locate((text, origin), (index, &message.name), |i| &message.signals[i].name))?;
    }
    Ok(())
}

/// The names and identifiers of the messages checked so far.
#[derive(Default)]
struct Earlier<'m> {
    names: HashSet<&'m str>,
    ids: HashMap<CanId, &'m str>,
}

impl<'m> Earlier<'m> {
    /// No earlier message than `messages[index]` has its name or
    /// identifier; then it is one of the earlier ones.
    fn check_names(&mut self, messages: &'m [Message], index: usize) -> Result<(), Issue> {
        let message = &messages[index];
        if !self.names.insert(&message.name) {
            return Err(Issue::message(
                format!("two messages are called `{}`", message.name),
                "rename one of them",
            ));
        }
        match self.ids.insert(message.id, &message.name) {
            Some(other) => Err(Issue::message(
                format!(
                    "messages `{other}` and `{}` have the same identifier {}",
                    message.name,
                    describe_id(message.id)
                ),
                "give each message its own identifier",
            )),
            None => Ok(()),
        }
    }
}

/// The length is one a classic or CAN FD frame can have.
fn check_length(message: &Message) -> Result<(), Issue> {
    if message.len <= CLASSIC_MAX_LEN || FD_LENGTHS.contains(&message.len) {
        return Ok(());
    }
    Err(Issue::message(
        format!(
            "message `{}` is {} bytes long, not a CAN frame length",
            message.name, message.len
        ),
        "give it 0 to 8 bytes, or a CAN FD length: 12, 16, 20, 24, 32, 48 or 64",
    ))
}

/// The identifier fits its width, as written: `can-dbc` keeps the low 16
/// bits of a standard identifier and the low 29 of an extended one.
fn check_id(message: &Message, written: Option<&str>) -> Result<(), Issue> {
    let as_dbc = match message.id {
        CanId::Standard(id) => u64::from(id),
        CanId::Extended(id) => u64::from(id) | 0x8000_0000,
    };
    let number = written.and_then(|w| w.parse::<u64>().ok()).unwrap_or(as_dbc);
    let (fits, bits) = match message.id {
        CanId::Standard(_) => (number <= 0x7FF, 11),
        CanId::Extended(_) => (number.checked_sub(0x8000_0000).is_some_and(|id| id <= 0x1FFF_FFFF), 29),
    };
    if fits {
        return Ok(());
    }
    let fix = match message.id {
        CanId::Standard(_) if number <= 0x1FFF_FFFF => format!(
            "for a 29-bit identifier add 2147483648 (0x80000000): write {}",
            number + 0x8000_0000
        ),
        _ => "an identifier has at most 29 bits (0x1FFFFFFF); an extended one is written as 0x80000000 plus it"
            .to_string(),
    };
    Err(Issue::message(
        format!(
            "message `{}` has identifier {number} ({number:#X}), which does not fit {bits} bits",
            message.name
        ),
        fix,
    ))
}

/// The most signals one message may have (multiplexed ones included).
const MAX_SIGNALS: usize = 1024;

/// The signal's size, type and factor make sense and it fits the message.
fn check_signal(message: &Message, index: usize, signal: &Signal) -> Result<(), Issue> {
    let named = format!("signal `{}` of message `{}`", signal.name, message.name);
    if index >= MAX_SIGNALS {
        return Err(Issue::signal(
            index,
            format!(
                "message `{}` has more than {MAX_SIGNALS} signals, the bound of one message",
                message.name
            ),
            "split the message",
        ));
    }
    if message.signals[..index].iter().any(|s| s.name == signal.name) {
        return Err(Issue::signal(
            index,
            format!("{named} is defined twice"),
            "rename or remove one of them",
        ));
    }
    if !(1..=64).contains(&signal.size) {
        return Err(Issue::signal(
            index,
            format!("{named} has {} bits", signal.size),
            "give it 1 to 64 bits (the number after `|` in `StartBit|Size`)",
        ));
    }
    let float_size = match signal.value_type {
        ValueType::Float32 => Some(32),
        ValueType::Float64 => Some(64),
        ValueType::Unsigned | ValueType::Signed => None,
    };
    if let Some(bits) = float_size.filter(|&bits| bits != signal.size) {
        return Err(Issue::signal(
            index,
            format!(
                "{named} is a {bits}-bit float (SIG_VALTYPE_) but has {} bits",
                signal.size
            ),
            format!("give it {bits} bits, or fix its SIG_VALTYPE_ (1 = float32, 2 = float64)"),
        ));
    }
    if signal.factor == 0.0 || !signal.factor.is_finite() {
        return Err(Issue::signal(
            index,
            format!(
                "{named} has factor {}, so its raw value cannot be recovered",
                signal.factor
            ),
            "give it a finite, nonzero factor in `(Factor,Offset)`",
        ));
    }
    if signal.min > signal.max {
        return Err(Issue::signal(
            index,
            format!(
                "{named} has its minimum {} above its maximum {}",
                signal.min, signal.max
            ),
            "write `[Min|Max]` with the minimum first, or `[0|0]` for no range",
        ));
    }
    let last_byte = signal.bits().last_byte();
    if last_byte >= message.len {
        let (order, hint) = match signal.byte_order {
            ByteOrder::Intel => ("Intel", "its start bit is the least significant bit"),
            ByteOrder::Motorola => (
                "Motorola",
                "its start bit is the most significant one: 7|16@0 is bytes 0 and 1",
            ),
        };
        return Err(Issue::signal(
            index,
            format!(
                "{named} ({}|{}, {order}) reaches byte {last_byte}, beyond the message's {} bytes",
                signal.start_bit, signal.size, message.len
            ),
            format!("move or shorten the signal ({hint}), or lengthen the message in its BO_ line"),
        ));
    }
    Ok(())
}

/// At most one multiplexor, and one exists if any signal is multiplexed.
fn check_multiplexing(message: &Message) -> Result<(), Issue> {
    let mut multiplexors = message
        .signals
        .iter()
        .enumerate()
        .filter(|(_, s)| s.multiplex == Multiplex::Multiplexor);
    let first = multiplexors.next();
    if let (Some((_, first)), Some((index, second))) = (first, multiplexors.next()) {
        return Err(Issue::signal(
            index,
            format!(
                "message `{}` has two multiplexors, `{}` and `{}`",
                message.name, first.name, second.name
            ),
            "Tandem supports one multiplexor (`M`) per message: keep one",
        ));
    }
    let multiplexed = message
        .signals
        .iter()
        .enumerate()
        .find(|(_, s)| matches!(s.multiplex, Multiplex::Multiplexed(_)));
    if let Some((_, selector)) = first {
        let values = 1u128 << selector.size.min(64);
        let unreachable = message
            .signals
            .iter()
            .enumerate()
            .find_map(|(index, s)| match s.multiplex {
                Multiplex::Multiplexed(value) if u128::from(value) >= values => Some((index, s, value)),
                _ => None,
            });
        if let Some((index, signal, value)) = unreachable {
            return Err(Issue::signal(
                index,
                format!(
                    "signal `{}` of message `{}` is multiplexed on value {value}, which the {}-bit multiplexor `{}` \
                     cannot hold (its largest is {})",
                    signal.name,
                    message.name,
                    selector.size,
                    selector.name,
                    values - 1
                ),
                "give the signal a value the multiplexor can hold, or widen the multiplexor",
            ));
        }
    }
    match (first, multiplexed) {
        (None, Some((index, signal))) => Err(Issue::signal(
            index,
            format!(
                "signal `{}` of message `{}` is multiplexed, but the message has no multiplexor",
                signal.name, message.name
            ),
            "mark the signal that selects the multiplexed ones with `M`",
        )),
        _ => Ok(()),
    }
}

/// No two signals that can be in the same payload share a bit.
fn check_overlaps(message: &Message) -> Result<(), Issue> {
    let masks: Vec<[u64; 8]> = message.signals.iter().map(bit_mask).collect();
    for (b, second) in message.signals.iter().enumerate() {
        for (a, first) in message.signals[..b].iter().enumerate() {
            let exclusive = matches!(
                (first.multiplex, second.multiplex),
                (Multiplex::Multiplexed(x), Multiplex::Multiplexed(y)) if x != y
            );
            let shared = (0..8).find_map(|w| {
                let common = masks[a][w] & masks[b][w];
                (common != 0).then(|| w * 64 + common.trailing_zeros() as usize)
            });
            if let (false, Some(bit)) = (exclusive, shared) {
                return Err(Issue::signal(
                    b,
                    format!(
                        "signals `{}` and `{}` of message `{}` both use bit {bit} (byte {}, bit {})",
                        first.name,
                        second.name,
                        message.name,
                        bit / 8,
                        bit % 8
                    ),
                    "move one of them; only signals multiplexed on different values (m1, m2) may share bits",
                ));
            }
        }
    }
    Ok(())
}

/// The payload bits a signal uses (bit n = byte n / 8, bit n % 8), as a set
/// over 64 bytes.
fn bit_mask(signal: &Signal) -> [u64; 8] {
    let mut mask = [0u64; 8];
    for i in 0..signal.size {
        let (byte, bit) = signal.bit_position(i);
        let n = byte * 8 + bit as usize;
        mask[n / 64] |= 1 << (n % 64);
    }
    mask
}

/// An identifier as a DBC user reads it.
fn describe_id(id: CanId) -> String {
    match id {
        CanId::Standard(id) => format!("{id:#X}"),
        CanId::Extended(id) => format!("{id:#X} (extended)"),
    }
}
