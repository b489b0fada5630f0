//! The A2L file (ASAM MCD-2 MC 1.7) that describes a slave to a master:
//! a MEASUREMENT per measurement and a CHARACTERISTIC per characteristic of
//! a [`Map`], each an `f64` at its map address, and the XCP transport,
//! DAQ processor, events and calibration pages in an `IF_DATA XCP` block
//! with the A2ML that describes it.
//!
//! Names become A2L identifiers by [`names::identifier`] (a block path's
//! `/` becomes `.`, other characters outside `[A-Za-z0-9_.]` become `_`,
//! a keyword gets a trailing `_`), made unique by a `_2`, `_3`, … suffix;
//! the original name opens the object's long identifier.
//!
//! Characteristics lie in one memory segment with two calibration pages:
//! [`WORKING_PAGE`], which a master writes, and [`REFERENCE_PAGE`], the
//! values as loaded, read only.
//!
//! The output depends on nothing but its inputs: the same map and slave
//! give the same bytes. It is UTF-8 (units such as `N·m` stay as they
//! are), which ASAM MCD-2 MC 1.7 allows; a file written for tools that
//! assume Latin-1 without a byte-order mark should start with one.

pub mod names;

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};

use crate::map::{Kind, Map, Object, CHARACTERISTIC_BASE, VALUE_BYTES};
use crate::map::{REFERENCE_PAGE, WORKING_PAGE};
use crate::{daq, packet};
use names::{identifier, quoted, unique, MAX_STRING};

/// The A2ML of the `IF_DATA XCP` content written here: the subset of
/// ASAM's XCP 1.x A2ML that it uses.
pub const XCP_A2ML: &str = include_str!("a2l/xcp_if_data.aml");

/// The XCP protocol layer version written in `PROTOCOL_LAYER` (1.0).
pub const PROTOCOL_LAYER_VERSION: u16 = 0x0100;
/// The XCP on Ethernet transport layer version (1.0).
pub const TRANSPORT_LAYER_VERSION: u16 = 0x0100;

/// The optional XCP commands the slave implements, as listed in
/// `PROTOCOL_LAYER` (the standard commands CONNECT, DISCONNECT,
/// GET_STATUS and SYNCH are always there).
pub const OPTIONAL_COMMANDS: &[&str] = &[
    "GET_COMM_MODE_INFO",
    "GET_ID",
    "SET_MTA",
    "UPLOAD",
    "SHORT_UPLOAD",
    "DOWNLOAD",
    "SET_CAL_PAGE",
    "GET_CAL_PAGE",
    "COPY_CAL_PAGE",
    "SET_DAQ_PTR",
    "WRITE_DAQ",
    "SET_DAQ_LIST_MODE",
    "START_STOP_DAQ_LIST",
    "START_STOP_SYNCH",
    "GET_DAQ_PROCESSOR_INFO",
    "GET_DAQ_RESOLUTION_INFO",
    "GET_DAQ_EVENT_INFO",
    "FREE_DAQ",
    "ALLOC_DAQ",
    "ALLOC_ODT",
    "ALLOC_ODT_ENTRY",
];

/// An XCP on Ethernet transport.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// XCP on UDP/IP.
    Udp,
    /// XCP on TCP/IP.
    Tcp,
}

/// Where a master reaches the slave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Transport {
    /// UDP or TCP.
    pub protocol: Protocol,
    /// The address and port a master connects to (an unspecified address
    /// such as `0.0.0.0` is written as it is: give the reachable one).
    pub address: SocketAddr,
}

/// An XCP time unit, as DAQ timestamps and event cycles use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TimeUnit {
    /// 1 ns.
    Ns1,
    /// 10 ns.
    Ns10,
    /// 100 ns.
    Ns100,
    /// 1 µs.
    Us1,
    /// 10 µs.
    Us10,
    /// 100 µs.
    Us100,
    /// 1 ms.
    Ms1,
    /// 10 ms.
    Ms10,
    /// 100 ms.
    Ms100,
    /// 1 s.
    S1,
}

impl TimeUnit {
    /// Every unit, shortest first.
    pub const ALL: [TimeUnit; 10] = [
        TimeUnit::Ns1,
        TimeUnit::Ns10,
        TimeUnit::Ns100,
        TimeUnit::Us1,
        TimeUnit::Us10,
        TimeUnit::Us100,
        TimeUnit::Ms1,
        TimeUnit::Ms10,
        TimeUnit::Ms100,
        TimeUnit::S1,
    ];

    /// Its XCP code (`TIME_UNIT`, `TIMESTAMP_MODE` unit): 0 for 1 ns up to
    /// 9 for 1 s.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Its length in nanoseconds.
    pub fn nanoseconds(self) -> u64 {
        10u64.pow(self.code().into())
    }

    /// Its A2L keyword in `TIMESTAMP_SUPPORTED` (`UNIT_1US`, …).
    fn keyword(self) -> &'static str {
        [
            "UNIT_1NS",
            "UNIT_10NS",
            "UNIT_100NS",
            "UNIT_1US",
            "UNIT_10US",
            "UNIT_100US",
            "UNIT_1MS",
            "UNIT_10MS",
            "UNIT_100MS",
            "UNIT_1S",
        ][usize::from(self.code())]
    }
}

/// The size of a DAQ timestamp on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimestampSize {
    /// 1 byte.
    Byte,
    /// 2 bytes.
    Word,
    /// 4 bytes.
    Dword,
}

/// The DAQ timestamps the slave puts in the first DTO of each sample of
/// a list whose mode asks for them (timestamps are not fixed on).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timestamp {
    /// Units per tick.
    pub ticks: u16,
    /// The unit.
    pub unit: TimeUnit,
    /// Its size in a DTO.
    pub size: TimestampSize,
}

/// How DTOs identify their ODT (`IDENTIFICATION_FIELD_TYPE_…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Identification {
    /// One byte, an absolute ODT number (PID).
    Absolute,
    /// A relative ODT number byte and an absolute DAQ list byte.
    RelativeByte,
    /// A relative ODT number byte and an absolute DAQ list word.
    RelativeWord,
    /// As [`Identification::RelativeWord`], with a fill byte for alignment.
    RelativeWordAligned,
}

/// How the slave tells a master that DTOs were lost (`…OVERLOAD…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overload {
    /// Not at all.
    None,
    /// The PID's most significant bit set in the next DTO.
    Pid,
    /// An `EV_DAQ_OVERLOAD` event packet.
    Event,
}

/// What the A2L says about the slave besides its address space.
#[derive(Clone, Debug, PartialEq)]
pub struct SlaveInfo {
    /// The project's and module's name (the model's name; made an
    /// identifier as object names are).
    pub name: String,
    /// A description for the project's and module's long identifier.
    pub description: String,
    /// Where masters connect: at most one UDP and one TCP transport are
    /// written (later ones of the same protocol are left out).
    pub transports: Vec<Transport>,
    /// The largest command or response packet, in bytes.
    pub max_cto: u8,
    /// The largest data transfer packet, in bytes.
    pub max_dto: u16,
    /// The most DAQ lists a master may allocate.
    pub max_daq: u16,
    /// The largest ODT entry, in bytes.
    pub max_odt_entry_size: u8,
    /// DAQ timestamps, or `None` when DTOs carry none.
    pub timestamp: Option<Timestamp>,
    /// How DTOs identify their ODT.
    pub identification: Identification,
    /// How lost DTOs are indicated.
    pub overload: Overload,
}

impl SlaveInfo {
    /// What [`crate::Slave`] is: its packet sizes, DAQ bounds, 4-byte
    /// timestamps in 1 µs ticks, absolute ODT numbers and overload in the
    /// PID, reached through `transports`.
    pub fn of_slave(name: String, description: String, transports: Vec<Transport>) -> SlaveInfo {
        SlaveInfo {
            name,
            description,
            transports,
            max_cto: packet::MAX_CTO as u8,
            max_dto: packet::MAX_DTO as u16,
            max_daq: daq::MAX_DAQ_LISTS as u16,
            max_odt_entry_size: daq::MAX_ENTRY_BYTES,
            timestamp: Some(Timestamp {
                ticks: 1,
                unit: TimeUnit::Us1,
                size: TimestampSize::Dword,
            }),
            identification: Identification::Absolute,
            overload: Overload::Pid,
        }
    }
}

/// An event's `TIME_CYCLE` and `TIME_UNIT` for a period in nanoseconds:
/// `(0, 1 ns)` for a sporadic event (`None` or 0); otherwise the longest
/// unit that divides the period into at most 255 units (1 ms is 1 × 1 ms),
/// or, when none does, the shortest in which it rounds to at most 255
/// units (1.234567 ms is 123 × 10 µs; beyond 255 s is written as 255 s).
pub fn event_cycle(period_ns: Option<u64>) -> (u8, TimeUnit) {
    let Some(period) = period_ns.filter(|&p| p > 0) else {
        return (0, TimeUnit::Ns1);
    };
    let exact = TimeUnit::ALL
        .into_iter()
        .rev()
        .find(|u| period % u.nanoseconds() == 0 && period / u.nanoseconds() <= 255);
    if let Some(unit) = exact {
        return ((period / unit.nanoseconds()) as u8, unit);
    }
    let rounded = |u: TimeUnit| (period + u.nanoseconds() / 2) / u.nanoseconds();
    TimeUnit::ALL
        .into_iter()
        .find(|&u| rounded(u) <= 255)
        .map_or((255, TimeUnit::S1), |u| (rounded(u) as u8, u))
}

/// The A2L identifier given to each object of `map`, in the order of
/// `map.objects` (measurements and characteristics share one name space).
pub fn object_identifiers(map: &Map) -> Vec<String> {
    unique(map.objects.iter().map(|o| identifier(&o.name)).collect())
}

/// The A2L file describing `slave` with the objects and events of `map`.
///
/// Its `EPK` is the module's identifier (up to 200 characters) and a
/// 64-bit FNV-1a hash of the module's content, so a description of other
/// objects, events or transports has another `EPK`.
pub fn a2l(map: &Map, slave: &SlaveInfo) -> String {
    let name = identifier(&slave.name);
    let body = module_body(map, slave);
    let description = quoted(&slave.description, MAX_STRING);
    let mut out = String::with_capacity(body.len() + XCP_A2ML.len() + 1024);
    let _ = writeln!(out, "ASAP2_VERSION 1 71");
    let _ = writeln!(out, "/begin PROJECT {name} {description}");
    let _ = writeln!(out, "  /begin MODULE {name} {description}");
    let _ = writeln!(out, "    /begin A2ML\n{XCP_A2ML}    /end A2ML");
    let epk = format!("{name:.200} {:016x}", fnv1a(body.as_bytes()));
    write_mod_par(&mut out, map, &epk);
    out.push_str(&body);
    let _ = writeln!(out, "  /end MODULE");
    let _ = writeln!(out, "/end PROJECT");
    out
}

/// The module's content after `MOD_PAR`: `MOD_COMMON`, `IF_DATA XCP`,
/// the conversions, the record layout and the objects.
fn module_body(map: &Map, slave: &SlaveInfo) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "    /begin MOD_COMMON \"\"\n      BYTE_ORDER MSB_LAST\n      ALIGNMENT_BYTE 1\n      \
         ALIGNMENT_WORD 1\n      ALIGNMENT_LONG 1\n      ALIGNMENT_INT64 1\n      \
         ALIGNMENT_FLOAT32_IEEE 1\n      ALIGNMENT_FLOAT64_IEEE 1\n      DEPOSIT ABSOLUTE\n    \
         /end MOD_COMMON"
    );
    write_if_data(&mut out, map, slave);

    let units = compu_methods(map);
    for (cm, unit) in &units {
        let long = match *unit {
            "" => "identity, no unit".to_string(),
            unit => format!("identity in {unit}"),
        };
        let _ = writeln!(
            out,
            "    /begin COMPU_METHOD {cm} {} IDENTICAL \"%16.9\" {}\n    /end COMPU_METHOD",
            quoted(&long, MAX_STRING),
            quoted(unit, MAX_STRING),
        );
    }
    let has_characteristics = map.objects.iter().any(|o| o.kind == Kind::Characteristic);
    if has_characteristics {
        let _ = writeln!(
            out,
            "    /begin RECORD_LAYOUT {RECORD_LAYOUT}\n      FNC_VALUES 1 FLOAT64_IEEE COLUMN_DIR \
             DIRECT\n    /end RECORD_LAYOUT"
        );
    }
    for (object, ident) in map.objects.iter().zip(object_identifiers(map)) {
        let cm = &units
            .iter()
            .find(|(_, unit)| *unit == unit_of(object))
            .expect("every unit has a COMPU_METHOD")
            .0;
        write_object(&mut out, object, &ident, cm);
    }
    out
}

/// The 64-bit FNV-1a hash of `bytes`: a stable fingerprint of the
/// description for its `EPK`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The record layout of every characteristic: one `f64`.
const RECORD_LAYOUT: &str = "RL_FLOAT64";

/// The unit string of an object ("" when it has none).
fn unit_of(object: &Object) -> &str {
    object.unit.as_deref().unwrap_or("")
}

/// The COMPU_METHODs, one per unit in order of first use: `(name, unit)`.
fn compu_methods(map: &Map) -> Vec<(String, &str)> {
    let mut units: Vec<&str> = Vec::new();
    for object in &map.objects {
        if !units.contains(&unit_of(object)) {
            units.push(unit_of(object));
        }
    }
    let bases = units
        .iter()
        .map(|u| match *u {
            "" => "CM_NONE".to_string(),
            u => identifier(&format!("CM_{u}")),
        })
        .collect();
    unique(bases).into_iter().zip(units).collect()
}

/// `MOD_PAR`: the `EPK` (the version identifier a master compares), and
/// the characteristics' memory segment with its two pages.
fn write_mod_par(out: &mut String, map: &Map, epk: &str) {
    let _ = writeln!(out, "    /begin MOD_PAR \"\"\n      EPK {}", quoted(epk, MAX_STRING));
    let count = map.objects.iter().filter(|o| o.kind == Kind::Characteristic).count() as u32;
    if count > 0 {
        let _ = writeln!(
            out,
            "      /begin MEMORY_SEGMENT calibration \"calibration parameters\" DATA RAM INTERN \
             0x{CHARACTERISTIC_BASE:X} 0x{:X} -1 -1 -1 -1 -1\n        /begin IF_DATA XCP\n          \
             /begin SEGMENT 0 2 0 0 0\n            \
             /begin PAGE {WORKING_PAGE} ECU_ACCESS_DONT_CARE XCP_READ_ACCESS_DONT_CARE \
             XCP_WRITE_ACCESS_DONT_CARE /end PAGE\n            \
             /begin PAGE {REFERENCE_PAGE} ECU_ACCESS_DONT_CARE XCP_READ_ACCESS_DONT_CARE \
             XCP_WRITE_ACCESS_NOT_ALLOWED /end PAGE\n          /end SEGMENT\n        \
             /end IF_DATA\n      /end MEMORY_SEGMENT",
            count * VALUE_BYTES
        );
    }
    let _ = writeln!(out, "    /end MOD_PAR");
}

/// The module's `IF_DATA XCP`: protocol layer, DAQ with its events, pages
/// and the transports.
fn write_if_data(out: &mut String, map: &Map, slave: &SlaveInfo) {
    let _ = writeln!(out, "    /begin IF_DATA XCP");
    let _ = writeln!(
        out,
        "      /begin PROTOCOL_LAYER\n        0x{PROTOCOL_LAYER_VERSION:04X} 1000 2000 0 0 0 0 0 {} \
         {} BYTE_ORDER_MSB_LAST ADDRESS_GRANULARITY_BYTE",
        slave.max_cto, slave.max_dto
    );
    for command in OPTIONAL_COMMANDS {
        let _ = writeln!(out, "        OPTIONAL_CMD {command}");
    }
    let _ = writeln!(out, "      /end PROTOCOL_LAYER");

    let identification = match slave.identification {
        Identification::Absolute => "ABSOLUTE",
        Identification::RelativeByte => "RELATIVE_BYTE",
        Identification::RelativeWord => "RELATIVE_WORD",
        Identification::RelativeWordAligned => "RELATIVE_WORD_ALIGNED",
    };
    let overload = match slave.overload {
        Overload::None => "NO_OVERLOAD_INDICATION",
        Overload::Pid => "OVERLOAD_INDICATION_PID",
        Overload::Event => "OVERLOAD_INDICATION_EVENT",
    };
    let _ = writeln!(
        out,
        "      /begin DAQ\n        DYNAMIC {} {} 0 OPTIMISATION_TYPE_DEFAULT ADDRESS_EXTENSION_FREE \
         IDENTIFICATION_FIELD_TYPE_{identification} GRANULARITY_ODT_ENTRY_SIZE_DAQ_BYTE {} \
         {overload}",
        slave.max_daq,
        map.events.len(),
        slave.max_odt_entry_size,
    );
    if let Some(t) = slave.timestamp {
        let size = match t.size {
            TimestampSize::Byte => "SIZE_BYTE",
            TimestampSize::Word => "SIZE_WORD",
            TimestampSize::Dword => "SIZE_DWORD",
        };
        let _ = writeln!(
            out,
            "        /begin TIMESTAMP_SUPPORTED {} {size} {} /end TIMESTAMP_SUPPORTED",
            t.ticks,
            t.unit.keyword()
        );
    }
    for (channel, event) in map.events.iter().enumerate() {
        let (cycle, unit) = event_cycle(event.period_ns);
        let _ = writeln!(
            out,
            "        /begin EVENT {} {} {channel} DAQ 255 {cycle} {} 0 /end EVENT",
            quoted(&event.name, 100),
            quoted(&event.name, 8),
            unit.code()
        );
    }
    let _ = writeln!(out, "      /end DAQ");
    if map.objects.iter().any(|o| o.kind == Kind::Characteristic) {
        let _ = writeln!(out, "      /begin PAG 1 /end PAG");
    }

    for protocol in [Protocol::Udp, Protocol::Tcp] {
        let Some(transport) = slave.transports.iter().find(|t| t.protocol == protocol) else {
            continue;
        };
        let block = match protocol {
            Protocol::Udp => "XCP_ON_UDP_IP",
            Protocol::Tcp => "XCP_ON_TCP_IP",
        };
        let host = match transport.address.ip() {
            IpAddr::V4(ip) => format!("ADDRESS \"{ip}\""),
            IpAddr::V6(ip) => format!("IPV6 \"{ip}\""),
        };
        let _ = writeln!(
            out,
            "      /begin {block} 0x{TRANSPORT_LAYER_VERSION:04X} {} {host} /end {block}",
            transport.address.port()
        );
    }
    let _ = writeln!(out, "    /end IF_DATA");
}

/// A finite `(lower, upper)` pair from an object's limits: a missing,
/// NaN or inverted pair gives the `f64` range, and an infinite bound the
/// `f64` extreme on its side.
fn limits(object: &Object) -> (f64, f64) {
    match object.limits {
        Some((lower, upper)) if lower <= upper => (lower.max(f64::MIN), upper.min(f64::MAX)),
        _ => (f64::MIN, f64::MAX),
    }
}

/// One MEASUREMENT or CHARACTERISTIC.
fn write_object(out: &mut String, object: &Object, ident: &str, cm: &str) {
    let long = if object.description.is_empty() {
        object.name.clone()
    } else {
        format!("{}: {}", object.name, object.description)
    };
    let long = quoted(&long, MAX_STRING);
    let (lower, upper) = limits(object);
    let address = object.address;
    match object.kind {
        Kind::Measurement => {
            let _ = writeln!(
                out,
                "    /begin MEASUREMENT {ident} {long} FLOAT64_IEEE {cm} 0 0 {lower:?} {upper:?}\n      \
                 ECU_ADDRESS 0x{address:X}\n    /end MEASUREMENT"
            );
        }
        Kind::Characteristic => {
            let _ = writeln!(
                out,
                "    /begin CHARACTERISTIC {ident} {long} VALUE 0x{address:X} {RECORD_LAYOUT} 0 {cm} \
                 {lower:?} {upper:?}\n    /end CHARACTERISTIC"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fnv1a;

    #[test]
    fn fnv1a_matches_the_published_test_vectors() {
        // From the FNV reference test suite (Fowler, Noll, Vo).
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
