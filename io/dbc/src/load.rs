//! Reading a DBC file into [`Dbc`]: `can-dbc` parses it, this module
//! converts its syntax tree, and [`validate`](super::validate) checks the
//! result.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::time::Duration;

use can_dbc::{
    AttributeDefinition, AttributeValue, AttributeValueType, MessageId, MultiplexIndicator, NumericValue,
    SignalExtendedValueType, ValDescription, ValueDescription,
};

use super::error::{DbcError, Issue};
use super::syntax::syntax_error;
use super::validate::validate;
use super::{ByteOrder, Dbc, Message, Multiplex, Signal, ValueType};
use tandem_can::frame::{CanId, CLASSIC_MAX_LEN};

/// The attribute that gives a message's cycle time in milliseconds.
const CYCLE_TIME: &str = "GenMsgCycleTime";

/// The attribute that says whether a message is a classic or an FD frame.
const FRAME_FORMAT: &str = "VFrameFormat";

/// The largest DBC file read (bytes): ten times the largest seen in use.
const MAX_FILE: u64 = 256 << 20;

/// The longest cycle time a message may have (ms): a day.
const MAX_CYCLE_TIME_MS: f64 = 86_400_000.0;

impl Dbc {
    /// Reads and checks the DBC file at `path` (UTF-8, or Windows-1252 as
    /// DBC editors write). Errors name the path.
    pub fn load(path: &Path) -> Result<Dbc, DbcError> {
        let origin = path.display().to_string();
        let cannot_read = |e: std::io::Error| {
            DbcError::new(
                &origin,
                None,
                format!("cannot read the DBC file: {e}"),
                "check the path (a relative one starts from the current directory)",
            )
        };
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .and_then(|f| f.take(MAX_FILE + 1).read_to_end(&mut bytes))
            .map_err(cannot_read)?;
        if bytes.len() as u64 > MAX_FILE {
            return Err(DbcError::new(
                &origin,
                None,
                format!(
                    "the file is larger than {} MiB, the bound of a DBC file",
                    MAX_FILE >> 20
                ),
                "check that this is a DBC file",
            ));
        }
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
        let lookups = Lookups::new(&tree);
        let messages = tree
            .messages
            .iter()
            .enumerate()
            .map(|(index, m)| {
                convert_message(&lookups, m)
                    .map_err(|issue| issue.locate((text, origin), (index, &m.name), |i| &m.signals[i].name))
            })
            .collect::<Result<Vec<_>, _>>()?;
        validate(&messages, text, origin)?;
        Ok(Dbc { messages })
    }
}

/// What the messages' conversion looks up in the rest of the file, indexed
/// once so that a file of many messages converts in linear time.
struct Lookups<'t> {
    /// Each message's own `GenMsgCycleTime` (the first given).
    cycle_times: HashMap<MessageId, &'t AttributeValue>,
    /// The `GenMsgCycleTime` of messages that give none.
    default_cycle_time: Option<&'t AttributeValue>,
    /// `SIG_VALTYPE_` of each (message, signal).
    value_types: HashMap<(MessageId, &'t str), &'t SignalExtendedValueType>,
    /// `VAL_` tables of each (message, signal).
    value_tables: HashMap<(MessageId, &'t str), &'t [ValDescription]>,
    /// Each message's own `VFrameFormat`, by name (`StandardCAN_FD`).
    frame_formats: HashMap<MessageId, &'t str>,
    /// The `VFrameFormat` of messages that give none.
    default_frame_format: Option<&'t str>,
}

impl<'t> Lookups<'t> {
    fn new(tree: &'t can_dbc::Dbc) -> Self {
        let mut cycle_times = HashMap::new();
        for a in tree.attribute_values_message.iter().filter(|a| a.name == CYCLE_TIME) {
            cycle_times.entry(a.message_id).or_insert(&a.value);
        }
        let mut value_types = HashMap::new();
        for v in &tree.signal_extended_value_type_list {
            value_types
                .entry((v.message_id, v.signal_name.as_str()))
                .or_insert(&v.signal_extended_value_type);
        }
        let mut value_tables = HashMap::new();
        for v in &tree.value_descriptions {
            if let ValueDescription::Signal {
                message_id,
                name,
                value_descriptions,
            } = v
            {
                value_tables
                    .entry((*message_id, name.as_str()))
                    .or_insert(value_descriptions.as_slice());
            }
        }
        let formats: &[String] = tree
            .attribute_definitions
            .iter()
            .find_map(|d| match d {
                AttributeDefinition::Message(name, AttributeValueType::Enum(names)) if name == FRAME_FORMAT => {
                    Some(names.as_slice())
                }
                _ => None,
            })
            .unwrap_or_default();
        let format_name = |v: &'t AttributeValue| -> Option<&'t str> {
            match v {
                AttributeValue::String(s) => Some(s.as_str()),
                AttributeValue::Uint(i) => formats.get(usize::try_from(*i).ok()?).map(String::as_str),
                AttributeValue::Int(i) => formats.get(usize::try_from(*i).ok()?).map(String::as_str),
                AttributeValue::Double(_) => None,
            }
        };
        let mut frame_formats = HashMap::new();
        for a in tree.attribute_values_message.iter().filter(|a| a.name == FRAME_FORMAT) {
            if let Some(name) = format_name(&a.value) {
                frame_formats.entry(a.message_id).or_insert(name);
            }
        }
        Lookups {
            cycle_times,
            default_cycle_time: tree.attribute_default(CYCLE_TIME),
            value_types,
            value_tables,
            frame_formats,
            default_frame_format: tree.attribute_default(FRAME_FORMAT).and_then(format_name),
        }
    }

    /// The message's `VFrameFormat` when it names a classic CAN frame.
    fn classic_format(&self, id: MessageId) -> Option<&'t str> {
        let format = self.frame_formats.get(&id).copied().or(self.default_frame_format)?;
        (!format.contains("FD")).then_some(format)
    }
}

/// `message` as a [`Message`] (its identifier is checked by [`validate`],
/// which sees how it is written).
fn convert_message(tree: &Lookups<'_>, message: &can_dbc::Message) -> Result<Message, Issue> {
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
    let len = usize::try_from(message.size).unwrap_or(usize::MAX);
    if let Some(format) = tree.classic_format(message.id).filter(|_| len > CLASSIC_MAX_LEN) {
        return Err(Issue::message(
            format!("message `{name}` is {len} bytes long, but its {FRAME_FORMAT} {format} is classic CAN (at most 8)"),
            "make it at most 8 bytes, or give it a CAN FD format (StandardCAN_FD or ExtendedCAN_FD)",
        ));
    }
    Ok(Message {
        name: name.clone(),
        id,
        len,
        cycle_time: cycle_time(tree, message)?,
        sender: message.transmitter.clone().unwrap_or_default(),
        signals,
    })
}

/// The message's `GenMsgCycleTime`, or the attribute's default; 0 means
/// the message is not periodic.
fn cycle_time(tree: &Lookups<'_>, message: &can_dbc::Message) -> Result<Option<Duration>, Issue> {
    let Some(value) = tree.cycle_times.get(&message.id).copied().or(tree.default_cycle_time) else {
        return Ok(None);
    };
    let ms = match value {
        AttributeValue::Uint(v) => *v as f64,
        AttributeValue::Int(v) => *v as f64,
        AttributeValue::Double(v) => *v,
        AttributeValue::String(s) => s.trim().parse().unwrap_or(f64::NAN),
    };
    if !(0.0..=MAX_CYCLE_TIME_MS).contains(&ms) {
        return Err(Issue::message(
            format!(
                "message `{}` has a {CYCLE_TIME} of {ms} ms, not a number of milliseconds from 0 (not periodic) to \
                 {MAX_CYCLE_TIME_MS}",
                message.name
            ),
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
    tree: &Lookups<'_>,
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
    let value_type = match tree.value_types.get(&(message.id, signal.name.as_str())) {
        Some(SignalExtendedValueType::IEEEfloat32Bit) => ValueType::Float32,
        Some(SignalExtendedValueType::IEEEdouble64bit) => ValueType::Float64,
        _ if signal.value_type == can_dbc::ValueType::Signed => ValueType::Signed,
        _ => ValueType::Unsigned,
    };
    let mut value_table: Vec<(i64, String)> = tree
        .value_tables
        .get(&(message.id, signal.name.as_str()))
        .copied()
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
