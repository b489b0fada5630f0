//! Reading a DBC file into [`Dbc`]: `can-dbc` parses it, this module
//! converts its syntax tree, and [`validate`](super::validate) checks the
//! result.

use std::path::Path;
use std::time::Duration;

use can_dbc::{AttributeValue, MessageId, MultiplexIndicator, NumericValue, SignalExtendedValueType};

use super::error::{DbcError, Issue};
use super::syntax::syntax_error;
use super::validate::validate;
use super::{ByteOrder, Dbc, Message, Multiplex, Signal, ValueType};
use crate::frame::CanId;

/// The attribute that gives a message's cycle time in milliseconds.
const CYCLE_TIME: &str = "GenMsgCycleTime";

impl Dbc {
    /// Reads and checks the DBC file at `path` (UTF-8, or Windows-1252 as
    /// DBC editors write). Errors name the path.
    pub fn load(path: &Path) -> Result<Dbc, DbcError> {
        let origin = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| {
            DbcError::new(
                &origin,
                None,
                format!("cannot read the DBC file: {e}"),
                "check the path (a relative one starts from the current directory)",
            )
        })?;
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => can_dbc::decode_cp1252(e.as_bytes())
                .map(|t| t.into_owned())
                .ok_or_else(|| {
                    DbcError::new(
                        &origin,
                        None,
                        "the file is neither UTF-8 nor Windows-1252 text".to_string(),
                        "save it as UTF-8",
                    )
                })?,
        };
        Dbc::parse(&text, &origin)
    }

    /// Parses and checks DBC `text`; `origin` (usually the file name) begins
    /// every error message.
    pub fn parse(text: &str, origin: &str) -> Result<Dbc, DbcError> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let tree = can_dbc::Dbc::try_from(text).map_err(|e| syntax_error(text, origin, &e))?;
        let messages = tree
            .messages
            .iter()
            .enumerate()
            .map(|(index, m)| {
                convert_message(&tree, m)
                    .map_err(|issue| issue.locate((text, origin), (index, &m.name), |i| &m.signals[i].name))
            })
            .collect::<Result<Vec<_>, _>>()?;
        validate(&messages, text, origin)?;
        Ok(Dbc { messages })
    }
}

/// `message` of `tree` as a [`Message`] (its identifier is checked by
/// [`validate`], which sees how it is written).
fn convert_message(tree: &can_dbc::Dbc, message: &can_dbc::Message) -> Result<Message, Issue> {
    let name = &message.name;
    let id = match message.id {
        MessageId::Standard(id) => CanId::Standard(id),
        MessageId::Extended(id) => CanId::Extended(id),
    };
    let signals = message
        .signals
        .iter()
        .enumerate()
        .map(|(index, s)| convert_signal(tree, message, index, s))
        .collect::<Result<_, _>>()?;
    Ok(Message {
        name: name.clone(),
        id,
        len: usize::try_from(message.size).unwrap_or(usize::MAX),
        cycle_time: cycle_time(tree, message)?,
        sender: message.transmitter.clone().unwrap_or_default(),
        signals,
    })
}

/// The message's `GenMsgCycleTime`, or the attribute's default.
fn cycle_time(tree: &can_dbc::Dbc, message: &can_dbc::Message) -> Result<Option<Duration>, Issue> {
    let Some(value) = tree.resolved_message_attribute(message.id, CYCLE_TIME) else {
        return Ok(None);
    };
    let ms = match value {
        AttributeValue::Uint(v) => *v as f64,
        AttributeValue::Int(v) => *v as f64,
        AttributeValue::Double(v) => *v,
        AttributeValue::String(s) => s.trim().parse().unwrap_or(f64::NAN),
    };
    if ms.is_nan() {
        return Err(Issue::message(
            format!("message `{}` has a {CYCLE_TIME} that is not a number", message.name),
            format!(
                "give it a number of milliseconds: `BA_ \"{CYCLE_TIME}\" BO_ {} 10;`",
                message.id.raw()
            ),
        ));
    }
    Ok(Duration::try_from_secs_f64(ms / 1000.0).ok().filter(|d| !d.is_zero()))
}

/// `signal`, number `index` of `message`, as a [`Signal`].
fn convert_signal(
    tree: &can_dbc::Dbc,
    message: &can_dbc::Message,
    index: usize,
    signal: &can_dbc::Signal,
) -> Result<Signal, Issue> {
    let multiplex =
        match signal.multiplexer_indicator {
            MultiplexIndicator::Plain => Multiplex::Plain,
            MultiplexIndicator::Multiplexor => Multiplex::Multiplexor,
            MultiplexIndicator::MultiplexedSignal(value) => Multiplex::Multiplexed(value),
            MultiplexIndicator::MultiplexorAndMultiplexedSignal(_) => return Err(Issue::signal(
                index,
                format!(
                    "signal `{}` of message `{}` is both multiplexed and a multiplexor (extended multiplexing)",
                    signal.name, message.name
                ),
                "Tandem supports one multiplexor per message: split the message, or mark the signal `M` or `m<value>`"
                    .to_string(),
            )),
        };
    let value_type = match tree.extended_value_type_for_signal(message.id, &signal.name) {
        Some(SignalExtendedValueType::IEEEfloat32Bit) => ValueType::Float32,
        Some(SignalExtendedValueType::IEEEdouble64bit) => ValueType::Float64,
        _ if signal.value_type == can_dbc::ValueType::Signed => ValueType::Signed,
        _ => ValueType::Unsigned,
    };
    let mut value_table: Vec<(i64, String)> = tree
        .value_descriptions_for_signal(message.id, &signal.name)
        .unwrap_or_default()
        .iter()
        .map(|v| (v.id, v.description.clone()))
        .collect();
    value_table.sort_by_key(|(raw, _)| *raw);
    Ok(Signal {
        name: signal.name.clone(),
        start_bit: u32::try_from(signal.start_bit).unwrap_or(u32::MAX),
        size: u32::try_from(signal.size).unwrap_or(u32::MAX),
        byte_order: match signal.byte_order {
            can_dbc::ByteOrder::LittleEndian => ByteOrder::Intel,
            can_dbc::ByteOrder::BigEndian => ByteOrder::Motorola,
        },
        value_type,
        factor: signal.factor,
        offset: signal.offset,
        min: number(signal.min),
        max: number(signal.max),
        unit: signal.unit.clone(),
        multiplex,
        value_table,
    })
}

/// A DBC number as an `f64`.
fn number(value: NumericValue) -> f64 {
    match value {
        NumericValue::Uint(v) => v as f64,
        NumericValue::Int(v) => v as f64,
        NumericValue::Double(v) => v,
    }
}
