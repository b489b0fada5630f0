//! The generated A2L, read back by independent readers: the `a2lfile`
//! crate loads it in strict mode with no message, finds nothing to report in
//! its consistency check, parses every `IF_DATA XCP` with the file's A2ML,
//! and what it parsed equals the map the file was made from; pya2l
//! (Python, `pya2ldb` on PyPI) reads the same objects and its validator
//! finds nothing but the missing `ADDR_EPK`.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::process::Command;

use a2lfile::{A2lFile, A2lObjectName, CharacteristicType, DataType, GenericIfData};
use tandem_xcp::a2l::{a2l, event_cycle, Protocol, SlaveInfo, TimeUnit, Transport};
use tandem_xcp::map::{Event, Kind, Map};
use tandem_xcp::map::{REFERENCE_PAGE, WORKING_PAGE};

type Item = (String, Option<String>, Option<(f64, f64)>, String);

fn item(name: &str, unit: Option<&str>, limits: Option<(f64, f64)>, description: &str) -> Item {
    (
        name.to_string(),
        unit.map(str::to_string),
        limits,
        description.to_string(),
    )
}

/// The slave's own description (what `Slave` implements), reached at
/// `transports`.
fn slave(transports: &[(Protocol, &str)]) -> SlaveInfo {
    SlaveInfo::of_slave(
        "ev_plant".to_string(),
        "EV plant \"demo\"".to_string(),
        transports
            .iter()
            .map(|(protocol, address)| Transport {
                protocol: *protocol,
                address: address.parse::<SocketAddr>().unwrap(),
            })
            .collect(),
    )
}

/// Loads `text` strictly and checks it; fails on any message of either.
fn load(text: &str) -> A2lFile {
    checked(text).unwrap_or_else(|problem| panic!("{problem}\n{text}"))
}

/// `text` loaded strictly, or the first thing a2lfile finds wrong: a load
/// error or message, a check message, an IF_DATA its A2ML does not describe.
fn checked(text: &str) -> Result<A2lFile, String> {
    let (file, messages) =
        a2lfile::load_from_string(text, None, true).map_err(|e| format!("a2lfile refused the file: {e}"))?;
    if !messages.is_empty() {
        return Err(format!("load messages: {messages:?}"));
    }
    let checks = file.check();
    if !checks.is_empty() {
        return Err(format!("check messages: {checks:?}"));
    }
    let module = &file.project.module[0];
    let if_datas = module.if_data.iter().chain(
        module
            .mod_par
            .iter()
            .flat_map(|p| p.memory_segment.iter().flat_map(|m| m.if_data.iter())),
    );
    let invalid = if_datas
        .filter(|i| !i.ifdata_valid)
        .map(|i| format!("IF_DATA does not follow the A2ML: {i:?}"))
        .next();
    invalid.map_or(Ok(file), Err)
}

/// The scalars of an IF_DATA subtree in order (numbers, enum items and
/// strings as text; a tagged item as its tag, then its content).
fn leaves(data: &GenericIfData, out: &mut Vec<String>) {
    match data {
        GenericIfData::Char(_, (v, _)) => out.push(v.to_string()),
        GenericIfData::Int(_, (v, _)) => out.push(v.to_string()),
        GenericIfData::Long(_, (v, _)) => out.push(v.to_string()),
        GenericIfData::Int64(_, (v, _)) => out.push(v.to_string()),
        GenericIfData::UChar(_, (v, _)) => out.push(v.to_string()),
        GenericIfData::UInt(_, (v, _)) => out.push(v.to_string()),
        GenericIfData::ULong(_, (v, _)) => out.push(v.to_string()),
        GenericIfData::UInt64(_, (v, _)) => out.push(v.to_string()),
        GenericIfData::Float(_, v) => out.push(v.to_string()),
        GenericIfData::Double(_, v) => out.push(v.to_string()),
        GenericIfData::String(_, v) | GenericIfData::EnumItem(_, v) => out.push(v.clone()),
        GenericIfData::Array(items)
        | GenericIfData::Sequence(items)
        | GenericIfData::Struct(_, _, items)
        | GenericIfData::Block { items, .. } => items.iter().for_each(|i| leaves(i, out)),
        GenericIfData::TaggedStruct(tagged) | GenericIfData::TaggedUnion(tagged) => {
            let sorted: BTreeMap<_, _> = tagged.iter().collect();
            for items in sorted.values() {
                for item in *items {
                    out.push(item.tag.clone());
                    leaves(&item.data, out);
                }
            }
        }
        GenericIfData::None => {}
    }
}

/// Every tagged item called `tag` in an IF_DATA subtree, as its leaves.
fn tagged(data: &GenericIfData, tag: &str, out: &mut Vec<Vec<String>>) {
    match data {
        GenericIfData::Array(items)
        | GenericIfData::Sequence(items)
        | GenericIfData::Struct(_, _, items)
        | GenericIfData::Block { items, .. } => items.iter().for_each(|i| tagged(i, tag, out)),
        GenericIfData::TaggedStruct(map) | GenericIfData::TaggedUnion(map) => {
            let sorted: BTreeMap<_, _> = map.iter().collect();
            for items in sorted.values() {
                for item in *items {
                    if item.tag == tag {
                        let mut found = Vec::new();
                        leaves(&item.data, &mut found);
                        out.push(found);
                    }
                    tagged(&item.data, tag, out);
                }
            }
        }
        _ => {}
    }
}

/// Every `tag` item in the module's IF_DATA XCP.
fn module_tagged(file: &A2lFile, tag: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for if_data in &file.project.module[0].if_data {
        if let Some(items) = &if_data.ifdata_items {
            tagged(items, tag, &mut out);
        }
    }
    out
}

fn ev_map() -> Map {
    Map::new(
        [
            item("vehicle_speed", Some("km/h"), Some((0.0, 250.0)), "vehicle speed"),
            item("dc_voltage", Some("V"), None, ""),
            item(
                "motor/torque",
                Some("N·m"),
                Some((-350.5, 350.5)),
                "shaft torque, \"signed\" C:\\motor",
            ),
            item("battery/soc", None, Some((0.0, 1.0)), ""),
        ],
        [
            item("speed_map/gain", Some("km/h"), Some((0.0, 10.0)), "gain"),
            item("inverter/kp", None, None, ""),
        ],
        vec![
            Event {
                name: "frame 1 ms".to_string(),
                period_ns: Some(1_000_000),
            },
            Event {
                name: "rate 10 ms".to_string(),
                period_ns: Some(10_000_000),
            },
            Event {
                name: "can0 rx".to_string(),
                period_ns: None,
            },
            Event {
                name: "can0 tx".to_string(),
                period_ns: None,
            },
            Event {
                name: "frame 250 us".to_string(),
                period_ns: Some(250_000),
            },
        ],
    )
}

#[test]
#[expect(
    clippy::too_many_lines,
    reason = "one file parsed once, then each kind of object it must hold checked in turn against the map"
)]
fn a_parsed_file_has_every_object_event_and_transport_of_its_map() {
    let map = ev_map();
    let text = a2l(
        &map,
        &slave(&[(Protocol::Udp, "127.0.0.1:5555"), (Protocol::Tcp, "10.0.0.7:5556")]),
    );
    let file = load(&text);
    assert_eq!(
        file.asap2_version.as_ref().map(|v| (v.version_no, v.upgrade_no)),
        Some((1, 71))
    );
    let module = &file.project.module[0];
    assert_eq!(file.project.get_name(), "ev_plant");
    assert_eq!(module.get_name(), "ev_plant");
    assert_eq!(module.long_identifier, "EV plant \"demo\"");

    let common = module.mod_common.as_ref().unwrap();
    assert_eq!(
        common.byte_order.as_ref().map(|b| b.byte_order),
        Some(a2lfile::ByteOrderEnum::MsbLast)
    );

    let unit = |conversion: &str| -> String {
        let cm = module.compu_method.get(conversion).expect("COMPU_METHOD exists");
        assert_eq!(cm.conversion_type, a2lfile::ConversionType::Identical);
        cm.unit.clone()
    };

    let measurements: Vec<_> = map.objects.iter().filter(|o| o.kind == Kind::Measurement).collect();
    assert_eq!(module.measurement.len(), measurements.len());
    let expected_names = ["vehicle_speed", "dc_voltage", "motor.torque", "battery.soc"];
    for ((object, m), name) in measurements.iter().zip(&module.measurement).zip(expected_names) {
        assert_eq!(m.get_name(), name);
        assert!(
            m.long_identifier.starts_with(&object.name),
            "{} keeps {}",
            m.long_identifier,
            object.name
        );
        assert_eq!(m.datatype, DataType::Float64Ieee);
        assert_eq!(m.ecu_address.as_ref().map(|a| a.address), Some(object.address));
        assert_eq!(unit(&m.conversion), object.unit.clone().unwrap_or_default());
        let limits = object.limits.unwrap_or((f64::MIN, f64::MAX));
        assert_eq!((m.lower_limit, m.upper_limit), limits);
        assert_eq!((m.resolution, m.accuracy), (0, 0.0));
    }
    assert_eq!(
        module.measurement[2].long_identifier,
        "motor/torque: shaft torque, \"signed\" C:\\motor"
    );

    let characteristics: Vec<_> = map.objects.iter().filter(|o| o.kind == Kind::Characteristic).collect();
    assert_eq!(module.characteristic.len(), characteristics.len());
    for ((object, c), name) in characteristics
        .iter()
        .zip(&module.characteristic)
        .zip(["speed_map.gain", "inverter.kp"])
    {
        assert_eq!(c.get_name(), name);
        assert!(c.long_identifier.starts_with(&object.name));
        assert_eq!(c.characteristic_type, CharacteristicType::Value);
        assert_eq!(c.address, object.address);
        assert_eq!(unit(&c.conversion), object.unit.clone().unwrap_or_default());
        let limits = object.limits.unwrap_or((f64::MIN, f64::MAX));
        assert_eq!((c.lower_limit, c.upper_limit), limits);
        let layout = module.record_layout.get(&c.deposit).expect("RECORD_LAYOUT exists");
        let values = layout.fnc_values.as_ref().expect("FNC_VALUES");
        assert_eq!((values.position, values.datatype), (1, DataType::Float64Ieee));
    }
    // One COMPU_METHOD per unit: km/h, V, N·m and none.
    assert_eq!(module.compu_method.len(), 4);

    let events = module_tagged(&file, "EVENT");
    let expected: Vec<Vec<String>> = [
        ("frame 1 ms", "frame 1 ", 0, 1, 6),
        ("rate 10 ms", "rate 10 ", 1, 1, 7),
        ("can0 rx", "can0 rx", 2, 0, 0),
        ("can0 tx", "can0 tx", 3, 0, 0),
        ("frame 250 us", "frame 25", 4, 25, 4),
    ]
    .iter()
    .map(|(name, short, channel, cycle, unit)| {
        [
            name.to_string(),
            short.to_string(),
            channel.to_string(),
            "DAQ".to_string(),
            "255".to_string(),
            cycle.to_string(),
            unit.to_string(),
            "0".to_string(),
        ]
        .to_vec()
    })
    .collect();
    assert_eq!(events, expected);

    let daq = module_tagged(&file, "DAQ");
    assert_eq!(
        daq[0][..10],
        [
            "DYNAMIC",
            "16",
            "5",
            "0",
            "OPTIMISATION_TYPE_DEFAULT",
            "ADDRESS_EXTENSION_FREE",
            "IDENTIFICATION_FIELD_TYPE_ABSOLUTE",
            "GRANULARITY_ODT_ENTRY_SIZE_DAQ_BYTE",
            "8",
            "OVERLOAD_INDICATION_PID"
        ]
    );
    assert_eq!(
        module_tagged(&file, "TIMESTAMP_SUPPORTED"),
        [["1", "SIZE_DWORD", "UNIT_1US"]]
    );
    let protocol = &module_tagged(&file, "PROTOCOL_LAYER")[0];
    assert_eq!(
        protocol[8..12],
        ["255", "1400", "BYTE_ORDER_MSB_LAST", "ADDRESS_GRANULARITY_BYTE"]
    );
    assert!(protocol.iter().any(|c| c == "DOWNLOAD"));
    assert!(protocol.iter().any(|c| c == "ALLOC_ODT_ENTRY"));

    assert_eq!(
        module_tagged(&file, "XCP_ON_UDP_IP"),
        [["256", "5555", "ADDRESS", "127.0.0.1"]]
    );
    assert_eq!(
        module_tagged(&file, "XCP_ON_TCP_IP"),
        [["256", "5556", "ADDRESS", "10.0.0.7"]]
    );

    // The characteristics' memory segment: both pages, over every
    // characteristic's bytes.
    let segment = &module.mod_par.as_ref().unwrap().memory_segment[0];
    assert_eq!((segment.address, segment.size), (0x0002_0000, 16));
    let mut pages = Vec::new();
    tagged(segment.if_data[0].ifdata_items.as_ref().unwrap(), "PAGE", &mut pages);
    assert_eq!(pages.len(), 2);
    assert_eq!(pages[0][0], WORKING_PAGE.to_string());
    assert_eq!(pages[0][3], "XCP_WRITE_ACCESS_DONT_CARE");
    assert_eq!(pages[1][0], REFERENCE_PAGE.to_string());
    assert_eq!(pages[1][3], "XCP_WRITE_ACCESS_NOT_ALLOWED");
}

#[test]
fn names_that_are_no_identifiers_become_valid_and_unique() {
    let names = [
        "speed_map/gain",
        "speed_map.gain",
        "pos[1]",
        "pos[x]",
        "VALUE",
        "MEASUREMENT",
        "FLOAT64_IEEE",
        "2nd stage",
        "",
        "ü",
        "a b",
        "a_b",
        "a_b_2",
    ];
    let map = Map::new(
        names.iter().map(|n| item(n, Some("m/s"), None, "")),
        [item("VALUE", Some("m s"), None, ""), item("a b", Some("m_s"), None, "")],
        Vec::new(),
    );
    let text = a2l(&map, &slave(&[(Protocol::Udp, "127.0.0.1:5555")]));
    let file = load(&text);
    let module = &file.project.module[0];
    let parsed: Vec<String> = module
        .measurement
        .iter()
        .map(|m| m.get_name().to_string())
        .chain(module.characteristic.iter().map(|c| c.get_name().to_string()))
        .collect();
    assert_eq!(
        parsed,
        [
            "speed_map.gain",
            "speed_map.gain_2",
            "pos[1]",
            "pos_x_",
            "VALUE_",
            "MEASUREMENT_",
            "FLOAT64_IEEE_",
            "_2nd_stage",
            "_",
            "__2",
            "a_b",
            "a_b_3",
            "a_b_2",
            "VALUE__2",
            "a_b_4",
        ]
    );
    // Each long identifier keeps the name it came from.
    let long: Vec<&str> = module
        .measurement
        .iter()
        .map(|m| m.long_identifier.as_str())
        .chain(module.characteristic.iter().map(|c| c.long_identifier.as_str()))
        .collect();
    let originals: Vec<&str> = names.iter().copied().chain(["VALUE", "a b"]).collect();
    assert_eq!(long, originals);
    for name in &parsed {
        let mut chars = name.chars();
        assert!(chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_'));
        assert!(chars.all(|c| c.is_ascii_alphanumeric() || "_.[]".contains(c)));
    }
    // Units "m s" and "m_s" map to the same identifier but keep two methods.
    let methods: Vec<(&str, &str)> = module
        .compu_method
        .iter()
        .map(|c| (c.get_name(), c.unit.as_str()))
        .collect();
    assert_eq!(methods, [("CM_m.s", "m/s"), ("CM_m_s", "m s"), ("CM_m_s_2", "m_s")]);
}

#[test]
fn a_map_without_objects_or_events_still_gives_a_valid_file() {
    let file = load(&a2l(&Map::default(), &slave(&[])));
    let module = &file.project.module[0];
    assert!(module.measurement.is_empty() && module.characteristic.is_empty());
    assert!(module_tagged(&file, "EVENT").is_empty());
    assert!(module_tagged(&file, "XCP_ON_UDP_IP").is_empty());
    assert_eq!(module_tagged(&file, "DAQ")[0][2], "0", "no event channels");
}

#[test]
fn long_names_hostile_strings_and_odd_limits_stay_valid() {
    let long = "block/".repeat(400) + "out";
    let map = Map::new(
        [
            item(
                &long,
                Some("\"quoted\" \\unit\n"),
                Some((f64::NEG_INFINITY, f64::INFINITY)),
                "",
            ),
            item(&long, None, Some((f64::NAN, 1.0)), &"d".repeat(1000)),
            item("inverted", None, Some((5.0, -5.0)), "tab\there\u{7}"),
        ],
        [],
        vec![Event {
            name: "\"evil\" \\ event ".repeat(20),
            period_ns: Some(1_234_567),
        }],
    );
    let mut info = slave(&[(Protocol::Tcp, "[::1]:5555"), (Protocol::Tcp, "127.0.0.1:1")]);
    info.name = "my model/v2 \"beta\"".to_string();
    info.timestamp = None;
    let text = a2l(&map, &info);
    let file = load(&text);
    let module = &file.project.module[0];
    assert_eq!(module.get_name(), "my_model.v2__beta_");
    let mut long_name = info.clone();
    long_name.name = "m".repeat(2000);
    let long_file = load(&a2l(&map, &long_name));
    let epk = long_file.project.module[0]
        .mod_par
        .clone()
        .unwrap()
        .epk
        .unwrap()
        .identifier;
    assert_eq!(epk.len(), 200 + 1 + 16, "the hash survives a long name: {epk}");
    let measurements: Vec<_> = module.measurement.iter().collect();
    let [a, b, c] = measurements[..] else {
        panic!("three measurements")
    };
    assert_eq!(a.get_name().len(), 1000);
    assert_eq!(b.get_name(), format!("{}_2", a.get_name()));
    assert_eq!(a.long_identifier.chars().count(), 255);
    assert!(long.starts_with(&a.long_identifier));
    assert_eq!((a.lower_limit, a.upper_limit), (f64::MIN, f64::MAX));
    assert_eq!((b.lower_limit, b.upper_limit), (f64::MIN, f64::MAX));
    assert_eq!((c.lower_limit, c.upper_limit), (f64::MIN, f64::MAX));
    assert_eq!(c.long_identifier, "inverted: tab\there ");
    assert_eq!(
        module.compu_method.get(&a.conversion).unwrap().unit,
        "\"quoted\" \\unit\n"
    );
    let event = &module_tagged(&file, "EVENT")[0];
    assert_eq!(event[0].chars().count(), 100);
    assert!("\"evil\" \\ event ".repeat(20).starts_with(&event[0]));
    // 1.234567 ms is no whole number of any unit up to 255: 123 × 10 µs.
    assert_eq!(event[5..7], ["123", "4"]);
    // One transport per protocol: the first given.
    assert_eq!(module_tagged(&file, "XCP_ON_TCP_IP"), [["256", "5555", "IPV6", "::1"]]);
    assert!(module_tagged(&file, "TIMESTAMP_SUPPORTED").is_empty());
}

#[test]
fn the_reader_finds_what_a_broken_file_gets_wrong() {
    let text = a2l(&ev_map(), &slave(&[(Protocol::Udp, "127.0.0.1:5555")]));
    assert!(checked(&text).is_ok());
    let cut = |from: &str, to: &str| {
        let start = text.find(from).unwrap();
        let end = text.find(to).unwrap() + to.len();
        format!("{}{}", &text[..start], &text[end..])
    };
    let without_a2ml = cut("/begin A2ML", "/end A2ML");
    assert!(checked(&without_a2ml).unwrap_err().contains("IF_DATA"));
    let without_methods = cut("/begin COMPU_METHOD", "/end COMPU_METHOD");
    assert!(checked(&without_methods).unwrap_err().contains("COMPU_METHOD"));
    let unescaped = text.replace(r#"\"signed\""#, r#""signed""#);
    assert!(checked(&unescaped).is_err());
    let slash = text.replace("motor.torque", "motor/torque");
    assert!(checked(&slash).is_err());
}

#[test]
fn the_same_map_gives_the_same_bytes_and_another_map_another_epk() {
    let info = slave(&[(Protocol::Udp, "127.0.0.1:5555"), (Protocol::Tcp, "127.0.0.1:5555")]);
    assert_eq!(a2l(&ev_map(), &info), a2l(&ev_map(), &info));
    let epk = |map: &Map| {
        let file = load(&a2l(map, &info));
        let mod_par = file.project.module[0].mod_par.clone().unwrap();
        mod_par.epk.unwrap().identifier
    };
    let mut other = ev_map();
    other.objects[0].address += 8;
    assert!(epk(&ev_map()).starts_with("ev_plant "));
    assert_ne!(epk(&ev_map()), epk(&other));
}

#[test]
fn event_cycles_are_whole_numbers_of_the_longest_unit_that_divides_them() {
    assert_eq!(event_cycle(None), (0, TimeUnit::Ns1));
    assert_eq!(event_cycle(Some(0)), (0, TimeUnit::Ns1));
    assert_eq!(event_cycle(Some(100)), (1, TimeUnit::Ns100));
    assert_eq!(event_cycle(Some(1_000)), (1, TimeUnit::Us1));
    assert_eq!(event_cycle(Some(255)), (255, TimeUnit::Ns1));
    assert_eq!(event_cycle(Some(250_000)), (25, TimeUnit::Us10));
    assert_eq!(event_cycle(Some(200_000_000)), (2, TimeUnit::Ms100));
    assert_eq!(event_cycle(Some(1_000_000_000)), (1, TimeUnit::S1));
    assert_eq!(event_cycle(Some(1_001)), (100, TimeUnit::Ns10));
    assert_eq!(event_cycle(Some(1_000 * 1_000_000_000)), (255, TimeUnit::S1));
}

/// The second reader, pya2l, driven by `tests/peers/pya2l_peer.py`.
const PYA2L_PEER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/pya2l_peer.py");

#[test]
fn pya2l_reads_the_same_objects_and_its_validator_agrees() {
    let found = Command::new("python3").args(["-c", "import pya2l"]).status();
    if !found.is_ok_and(|s| s.success()) {
        panic!("pya2l missing: run .ci/run (it pip-installs pya2ldb)");
    }
    let map = ev_map();
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("pya2l_ev.a2l");
    std::fs::write(&path, a2l(&map, &slave(&[(Protocol::Udp, "127.0.0.1:5555")]))).unwrap();
    let output = Command::new("python3")
        .arg(PYA2L_PEER)
        .arg(&path)
        .output()
        .expect("python3 runs");
    assert!(
        output.status.success(),
        "pya2l peer failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).expect("UTF-8 answers");
    let lines: Vec<Vec<&str>> = stdout.lines().map(|l| l.split('\t').collect()).collect();
    let of =
        |kind: &str| -> Vec<Vec<&str>> { lines.iter().filter(|l| l[0] == kind).map(|l| l[1..].to_vec()).collect() };
    // Python's repr of the type's bounds.
    let limit = |l: Option<(f64, f64)>| match l {
        Some((lower, upper)) => (format!("{lower:?}"), format!("{upper:?}")),
        None => (
            "-1.7976931348623157e+308".to_string(),
            "1.7976931348623157e+308".to_string(),
        ),
    };
    let units: BTreeMap<&str, &str> = of("U").iter().map(|u| (u[0], u[2])).collect();
    assert!(of("U").iter().all(|u| u[1] == "IDENTICAL"));
    let measurements = of("M");
    let characteristics = of("C");
    let mut parsed = measurements.iter().chain(&characteristics);
    for object in &map.objects {
        let item = parsed.next().expect("one item per object");
        assert!(item[1].starts_with(&object.name), "{item:?} keeps {}", object.name);
        assert_eq!(item[2], object.address.to_string());
        let (conversion, lower, upper) = match object.kind {
            Kind::Measurement => (item[3], item[4], item[5]),
            Kind::Characteristic => {
                assert_eq!(item[3], "RL_FLOAT64");
                (item[4], item[5], item[6])
            }
        };
        assert_eq!(units[conversion], object.unit.clone().unwrap_or_default());
        let (want_lower, want_upper) = limit(object.limits);
        assert_eq!((lower, upper), (want_lower.as_str(), want_upper.as_str()));
    }
    assert!(parsed.next().is_none(), "no item but the map's");
    // The slave does not serve its EPK from memory, so there is no ADDR_EPK.
    assert_eq!(of("D"), [["WARNING: ev_plant::ModPar: Missing ADDR_EPK."]]);
}
