//! The DBC signal database: hand-computed payloads for each layout
//! (`tests/data/codec.dbc`), the example EV DBC, and one test per kind of
//! bad input, checking that the error names the file, line and column, the
//! message and signal, and the fix.

use std::path::Path;
use std::time::Duration;

use tandem_can::CanId;
use tandem_dbc::{ByteOrder, Dbc, Multiplex, ValueType};

const CODEC_DBC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/codec.dbc");
const EV_DBC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../config/examples/ev.dbc");

fn codec() -> Dbc {
    Dbc::load(Path::new(CODEC_DBC)).unwrap_or_else(|e| panic!("{e}"))
}

fn ev_text() -> String {
    std::fs::read_to_string(EV_DBC).expect("config/examples/ev.dbc")
}

/// Encodes `values` (signal, physical) into a zeroed payload of `message`.
fn encode(dbc: &Dbc, message: &str, values: &[(&str, f64)]) -> Vec<u8> {
    let message = dbc.message(message).expect("message");
    let mut payload = vec![0; message.len];
    for (name, value) in values {
        let limited = message.signal(name).expect("signal").encode(*value, &mut payload);
        assert!(!limited, "{name} = {value} fits");
    }
    payload
}

fn decode(dbc: &Dbc, message: &str, signal: &str, payload: &[u8]) -> f64 {
    dbc.message(message)
        .and_then(|m| m.signal(signal))
        .expect("signal")
        .decode(payload)
}

/// The error for `text` (as file "bad.dbc"), which must not load.
fn error(text: &str) -> String {
    Dbc::parse(text, "bad.dbc")
        .expect_err("the DBC is rejected")
        .to_string()
}

/// Asserts that `message` contains each of `parts`.
fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "`{part}` missing from: {message}");
    }
}

/// A small valid DBC with one 8-byte message `M` (id 100) holding `signals`.
fn with_signals(signals: &str) -> String {
    format!("VERSION \"\"\n\nBS_:\n\nBU_: A\n\nBO_ 100 M: 8 A\n{signals}\n")
}

#[test]
fn intel_signals_are_little_endian_from_their_least_significant_bit() {
    let dbc = codec();
    let values = [("Unsigned12", 2748.0), ("Signed8", -2.0), ("Temperature", 21.5)];
    // 0xABC at bits 4..16; -2 in byte 2; (21.5 + 40) / 0.1 = 615 = 0x0267 in bytes 3..5.
    let expected = [0xC0, 0xAB, 0xFE, 0x67, 0x02, 0, 0, 0];
    assert_eq!(encode(&dbc, "IntelLayout", &values), expected);
    for (name, value) in values {
        assert!(
            (decode(&dbc, "IntelLayout", name, &expected) - value).abs() < 1e-9,
            "{name}"
        );
    }
    let signal = dbc.message("IntelLayout").unwrap().signal("Unsigned12").unwrap();
    assert_eq!(
        (signal.byte_order, signal.value_type),
        (ByteOrder::Intel, ValueType::Unsigned)
    );
}

#[test]
fn motorola_signals_are_big_endian_from_their_most_significant_bit() {
    let dbc = codec();
    let values = [("Word16", 4660.0), ("Crossing12", 2748.0), ("Signed10", -3.0)];
    // 7|16 is bytes 0..2 big-endian; 19|12 is the low nibble of byte 2 then
    // byte 3; 39|10 is byte 4 then the top two bits of byte 5 (-3 = 0x3FD).
    let expected = [0x12, 0x34, 0x0A, 0xBC, 0xFF, 0x40, 0, 0];
    assert_eq!(encode(&dbc, "MotorolaLayout", &values), expected);
    for (name, value) in values {
        assert_eq!(decode(&dbc, "MotorolaLayout", name, &expected), value, "{name}");
    }
}

#[test]
fn float_signals_carry_ieee_bits_in_their_byte_order() {
    let dbc = codec();
    let expected = [0x00, 0x00, 0xC0, 0x3F, 0xC0, 0x04, 0, 0, 0, 0, 0, 0];
    assert_eq!(encode(&dbc, "Floats", &[("Single", 1.5), ("Double", -2.5)]), expected);
    assert_eq!(decode(&dbc, "Floats", "Single", &expected), 1.5);
    assert_eq!(decode(&dbc, "Floats", "Double", &expected), -2.5);
    let floats = dbc.message("Floats").unwrap();
    assert_eq!(floats.signal("Single").unwrap().value_type, ValueType::Float32);
    assert_eq!(floats.signal("Double").unwrap().value_type, ValueType::Float64);
    // NaN is a float value like any other.
    let mut payload = expected;
    assert!(!floats.signal("Double").unwrap().encode(f64::NAN, &mut payload));
    assert!(decode(&dbc, "Floats", "Double", &payload).is_nan());
}

#[test]
fn multiplexed_signals_are_carried_when_the_multiplexor_selects_them() {
    let dbc = codec();
    let message = dbc.message("Multiplexed").unwrap();
    let page_one = encode(
        &dbc,
        "Multiplexed",
        &[("Page", 1.0), ("Speed", 4660.0), ("Always", 153.0)],
    );
    assert_eq!(page_one, [0x01, 0x34, 0x12, 0, 0, 0, 0, 0x99]);
    let page_two = encode(&dbc, "Multiplexed", &[("Page", 2.0), ("Offset", -1.0)]);
    assert_eq!(page_two, [0x02, 0xFF, 0, 0, 0, 0, 0, 0]);
    let carried = |payload: &[u8]| -> Vec<&str> {
        message
            .signals
            .iter()
            .filter(|s| message.carries(s, payload))
            .map(|s| s.name.as_str())
            .collect()
    };
    assert_eq!(carried(&page_one), ["Page", "Speed", "Always"]);
    assert_eq!(carried(&page_two), ["Page", "Offset", "Always"]);
    assert_eq!(carried(&[3]), ["Page", "Always"]);
    assert_eq!(message.signal("Page").unwrap().multiplex, Multiplex::Multiplexor);
    assert_eq!(message.signal("Offset").unwrap().multiplex, Multiplex::Multiplexed(2));
    assert_eq!(decode(&dbc, "Multiplexed", "Offset", &page_two), -1.0);
}

#[test]
fn encoding_clamps_to_min_max_and_saturates_to_the_raw_range() {
    let dbc = codec();
    let limits = dbc.message("Limits").unwrap();
    let (percent, nibble) = (limits.signal("Percent").unwrap(), limits.signal("Nibble").unwrap());
    let mut payload = [0u8; 2];
    // [0|100] with factor 0.5: 150 % is clamped to 100 %, raw 200.
    assert!(percent.encode(150.0, &mut payload));
    assert_eq!(payload[0], 200);
    assert!(!percent.encode(50.0, &mut payload));
    assert_eq!(payload[0], 100);
    // Rounding to the nearest raw value, ties to even (as cantools): 0.25 % is
    // raw 0.5 -> 0, 0.75 % is raw 1.5 -> 2.
    percent.encode(0.25, &mut payload);
    assert_eq!(payload[0], 0);
    percent.encode(0.75, &mut payload);
    assert_eq!(payload[0], 2);
    // A signed 4-bit signal without a range saturates to -8..=7, leaving the
    // other bits of its byte alone.
    payload[1] = 0xF0;
    assert!(nibble.encode(9.0, &mut payload));
    assert_eq!(payload[1], 0xF7);
    assert!(nibble.encode(-100.0, &mut payload));
    assert_eq!(payload[1], 0xF8);
    assert_eq!(nibble.decode(&payload), -8.0);
    // NaN has no raw value: raw 0, reported.
    assert!(nibble.encode(f64::NAN, &mut payload));
    assert_eq!(payload[1], 0xF0);
}

#[test]
fn short_payloads_decode_as_zero_padded_and_never_panic() {
    let dbc = codec();
    let intel = dbc.message("IntelLayout").unwrap();
    // Only byte 0 is there: the high nibble 0xC of Unsigned12 is all it reads.
    assert_eq!(intel.signal("Unsigned12").unwrap().decode(&[0xC0]), 12.0);
    assert_eq!(intel.signal("Temperature").unwrap().decode(&[]), -40.0);
    let mut short = [0u8; 1];
    intel.signal("Temperature").unwrap().encode(21.5, &mut short);
    assert_eq!(short, [0]);
    for message in dbc.messages() {
        for signal in &message.signals {
            for len in 0..=64 {
                let payload = vec![0xA5; len];
                signal.decode(&payload);
                signal.encode(signal.decode(&payload), &mut payload.clone());
                message.carries(signal, &payload);
            }
        }
    }
}

#[test]
fn messages_carry_ids_cycle_times_senders_and_value_names() {
    let dbc = codec();
    let names: Vec<&str> = dbc.messages().iter().map(|m| m.name.as_str()).collect();
    assert_eq!(
        names,
        ["IntelLayout", "MotorolaLayout", "Floats", "Multiplexed", "Limits"]
    );
    let intel = dbc.message_by_id(CanId::Standard(1)).unwrap();
    assert_eq!(
        (intel.name.as_str(), intel.len, intel.sender.as_str()),
        ("IntelLayout", 8, "ECU")
    );
    assert_eq!(intel.cycle_time, Some(Duration::from_millis(20)));
    // No attribute and a default of 0: no cycle time. Vector__XXX: no sender.
    let motorola = dbc.message("MotorolaLayout").unwrap();
    assert_eq!((motorola.cycle_time, motorola.sender.as_str()), (None, ""));
    let temperature = intel.signal("Temperature").unwrap();
    assert_eq!((temperature.factor, temperature.offset), (0.1, -40.0));
    assert_eq!(
        (temperature.min, temperature.max, temperature.unit.as_str()),
        (-40.0, 100.0, "degC")
    );
    let mode = dbc.message("Limits").unwrap().signal("Mode").unwrap();
    assert_eq!(mode.value_name(2), Some("Sport"));
    assert_eq!(mode.value_name(3), None);
    assert_eq!(mode.value_table.first(), Some(&(0, "Off".to_string())));
    assert!(dbc.message("Nothing").is_none() && dbc.message_by_id(CanId::Extended(1)).is_none());
}

#[test]
fn the_example_ev_dbc_maps_the_plant() {
    let dbc = Dbc::load(Path::new(EV_DBC)).unwrap_or_else(|e| panic!("{e}"));
    let command = dbc.message_by_id(CanId::Standard(0x100)).unwrap();
    assert_eq!((command.name.as_str(), command.sender.as_str()), ("ECU_Command", "ECU"));
    assert_eq!(command.cycle_time, Some(Duration::from_millis(10)));
    let bms = dbc.message_by_id(CanId::Extended(0x18FF_3000)).unwrap();
    assert_eq!(bms.cycle_time, Some(Duration::from_millis(100)));
    assert_eq!(bms.signal("BmsState").unwrap().value_name(2), Some("Fault"));
    let speeds = dbc.message("VCU_Speeds").unwrap();
    assert!(speeds.signals.iter().all(|s| s.byte_order == ByteOrder::Motorola));
    // The plant's values fit, in the plant's units (models/src/plants/ev.rs:
    // motor_speed in rpm, soc and road_grade in %): ±400 N m requests,
    // 60 m/s, 1500 rad/s = 14324 rpm, 400 V, ±600 A, a full battery.
    let mut payload = [0u8; 8];
    for (message, signal, value) in [
        ("ECU_Command", "TorqueRequest", -400.0),
        ("ECU_Command", "BrakePressure", 200.0),
        ("ECU_Command", "RoadGrade", -12.5),
        ("VCU_Speeds", "VehicleSpeed", 60.0),
        ("VCU_Speeds", "MotorSpeed", 14324.0),
        ("VCU_Speeds", "WheelSpeedFront", 193.5),
        ("VCU_Powertrain", "DcVoltage", 400.0),
        ("VCU_Powertrain", "BatteryCurrent", -600.0),
        ("VCU_Powertrain", "MotorCurrent", 600.0),
        ("BMS_Status", "Soc", 100.0),
        ("BMS_Status", "BatteryTemperature", 45.0),
        ("VCU_Diagnostics", "Distance", 250_000.0),
    ] {
        let signal = dbc.message(message).unwrap().signal(signal).unwrap();
        assert!(!signal.encode(value, &mut payload), "{}", signal.name);
        assert!(
            (signal.decode(&payload) - value).abs() <= signal.factor / 2.0,
            "{}",
            signal.name
        );
    }
}

#[test]
fn a_syntax_error_in_the_middle_of_a_real_dbc_gives_its_line_and_column() {
    let good = ev_text();
    let line = good
        .lines()
        .position(|l| l.contains("SG_ MotorSpeed"))
        .expect("MotorSpeed")
        + 1;
    let typo = good.lines().nth(line - 1).unwrap().replacen(',', ";", 1);
    let bad: String = good
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == line {
                format!("{typo}\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let col = bad.lines().nth(line - 1).unwrap().find(';').unwrap() + 1;
    let message = Dbc::parse(&bad, "ev.dbc").expect_err("a typo").to_string();
    assert_mentions(
        &message,
        &[
            &format!("ev.dbc:{line}:{col}: "),
            "expected `,`",
            "found `;`",
            "SG_ Name",
        ],
    );
}

#[test]
fn syntax_errors_point_at_the_offending_token() {
    let head = "VERSION \"\"\n\nBS_:\n\nBU_: A B\n\n";
    for (body, at, parts) in [
        // A missing `:` after the message name.
        (
            "BO_ 100 M 8 A\n",
            "bad.dbc:7:11: ",
            &["expected `:`", "found `8`", "BO_ Id Name: Length Sender"][..],
        ),
        // A byte order that is neither 0 nor 1.
        (
            "BO_ 100 M: 8 A\n SG_ S : 0|8@2+ (1,0) [0|0] \"\" B\n",
            "bad.dbc:8:14: ",
            &["expected the byte order, 1 (Intel) or 0 (Motorola)", "found `2`"],
        ),
        // A missing `]`.
        (
            "BO_ 100 M: 8 A\n SG_ S : 0|8@1+ (1,0) [0|255 \"\" B\n",
            "bad.dbc:8:30: ",
            &["expected `]`", "found `\"\"`"],
        ),
        // A missing `;` at the end of an attribute value.
        (
            "BA_ \"GenMsgCycleTime\" BO_ 100 10\n",
            "bad.dbc:7:33: ",
            &["expected `;`", "found the end of the line"],
        ),
        // A misspelt keyword.
        (
            "BO_ 100 M: 8 A\n SGG_ S : 0|8@1+ (1,0) [0|0] \"\" B\n",
            "bad.dbc:8:2: ",
            &["`SGG_` is not a DBC keyword"],
        ),
        // A unit string left open: pest fails on the next line, the error is
        // where the string opens.
        (
            "BO_ 100 M: 8 A\n SG_ S : 0|8@1+ (1,0) [0|0] \"km/h B\n SG_ T : 8|8@1+ (1,0) [0|0] \"\" B\n",
            "bad.dbc:8:29: ",
            &["this string is not closed on its line", "close it with `\"`"],
        ),
    ] {
        let message = error(&format!("{head}{body}"));
        assert_mentions(&message, &[at]);
        assert_mentions(&message, parts);
    }
}

#[test]
fn numbers_out_of_range_are_located() {
    let message = error(&with_signals(" SG_ S : 0|99999999999999999999@1+ (1,0) [0|0] \"\" A"));
    assert_mentions(
        &message,
        &[
            "bad.dbc:8:12: ",
            "`99999999999999999999` is out of range",
            "fits 64 bits",
        ],
    );
}

#[test]
fn overlapping_signals_are_rejected_at_the_second_one() {
    let message = error(&with_signals(
        " SG_ First : 0|12@1+ (1,0) [0|0] \"\" A\n SG_ Second : 8|8@1+ (1,0) [0|0] \"\" A",
    ));
    assert_mentions(
        &message,
        &[
            "bad.dbc:9:2: ",
            "`First` and `Second` of message `M`",
            "bit 8 (byte 1, bit 0)",
            "move one of them",
        ],
    );
    // Signals of different multiplexor values may share bits; the
    // multiplexor may not share with either.
    let shared = " SG_ Mux M : 0|8@1+ (1,0) [0|0] \"\" A\n SG_ P m0 : 8|8@1+ (1,0) [0|0] \"\" A\n \
                  SG_ Q m1 : 8|16@1+ (1,0) [0|0] \"\" A";
    assert!(Dbc::parse(&with_signals(shared), "ok.dbc").is_ok());
    let message = error(&with_signals(&format!(
        "{shared}\n SG_ R m1 : 4|8@1+ (1,0) [0|0] \"\" A"
    )));
    assert_mentions(&message, &["bad.dbc:11:2: ", "`Mux` and `R`", "bit 4"]);
}

#[test]
fn a_signal_beyond_its_message_is_rejected() {
    let message = error(&with_signals(
        " SG_ Ok : 0|8@1+ (1,0) [0|0] \"\" A\n SG_ Far : 60|8@1+ (1,0) [0|0] \"\" A",
    ));
    assert_mentions(
        &message,
        &[
            "bad.dbc:9:2: ",
            "signal `Far` of message `M`",
            "beyond the message's 8 bytes",
        ],
    );
    assert_mentions(&message, &["lengthen the message"]);
    // Motorola 7|16 is bytes 0 and 1, so 63|16 runs past byte 7.
    let message = error(&with_signals(" SG_ Big : 63|16@0+ (1,0) [0|0] \"\" A"));
    assert_mentions(
        &message,
        &[
            "bad.dbc:8:2: ",
            "`Big`",
            "Motorola",
            "reaches byte 8",
            "7|16@0 is bytes 0 and 1",
        ],
    );
}

#[test]
fn sizes_must_be_1_to_64_bits() {
    for size in ["0", "65"] {
        let message = error(&with_signals(&format!(" SG_ S : 0|{size}@1+ (1,0) [0|0] \"\" A")));
        assert_mentions(
            &message,
            &[
                "bad.dbc:8:2: ",
                &format!("`S` of message `M` has {size} bits"),
                "1 to 64 bits",
            ],
        );
    }
}

#[test]
fn floats_must_have_their_ieee_size() {
    let text = with_signals(" SG_ F : 0|16@1- (1,0) [0|0] \"\" A") + "SIG_VALTYPE_ 100 F : 1;\n";
    let message = error(&text);
    assert_mentions(
        &message,
        &["bad.dbc:8:2: ", "`F` of message `M` is a 32-bit float", "has 16 bits"],
    );
    assert_mentions(&message, &["give it 32 bits"]);
}

#[test]
fn a_zero_factor_is_rejected() {
    let message = error(&with_signals(" SG_ S : 0|8@1+ (0,5) [0|0] \"\" A"));
    assert_mentions(
        &message,
        &["bad.dbc:8:2: ", "`S` of message `M` has factor 0", "nonzero factor"],
    );
}

#[test]
fn lengths_must_be_can_lengths() {
    let message = error("BO_ 100 M: 10 A\n SG_ S : 0|8@1+ (1,0) [0|0] \"\" A\n");
    assert_mentions(
        &message,
        &["bad.dbc:1:1: ", "`M` is 10 bytes long", "12, 16, 20, 24, 32, 48 or 64"],
    );
}

#[test]
fn identifiers_must_fit_and_be_unique() {
    let message = error("BO_ 2048 M: 8 A\n");
    assert_mentions(
        &message,
        &[
            "bad.dbc:1:1: ",
            "identifier 2048 (0x800)",
            "does not fit 11 bits",
            "write 2147485696",
        ],
    );
    // can-dbc keeps 16 bits of a standard identifier: 65636 would be 100.
    let message = error("BO_ 65636 M: 8 A\n");
    assert_mentions(&message, &["bad.dbc:1:1: ", "identifier 65636"]);
    let message = error("BO_ 100 M: 8 A\n\nBO_ 100 N: 8 A\n");
    assert_mentions(
        &message,
        &["bad.dbc:3:1: ", "`M` and `N` have the same identifier 0x64"],
    );
    let message = error("BO_ 100 M: 8 A\n\nBO_ 101 M: 8 A\n");
    assert_mentions(&message, &["bad.dbc:3:1: ", "two messages are called `M`", "rename"]);
}

#[test]
fn multiplexing_needs_exactly_one_multiplexor() {
    let message = error(&with_signals(" SG_ S m1 : 0|8@1+ (1,0) [0|0] \"\" A"));
    assert_mentions(
        &message,
        &[
            "bad.dbc:8:2: ",
            "`S` of message `M` is multiplexed",
            "no multiplexor",
            "`M`",
        ],
    );
    let message = error(&with_signals(
        " SG_ X M : 0|4@1+ (1,0) [0|0] \"\" A\n SG_ Y M : 4|4@1+ (1,0) [0|0] \"\" A",
    ));
    assert_mentions(&message, &["bad.dbc:9:2: ", "two multiplexors, `X` and `Y`"]);
    let message = error(&with_signals(
        " SG_ X M : 0|4@1+ (1,0) [0|0] \"\" A\n SG_ Y m1M : 4|4@1+ (1,0) [0|0] \"\" A",
    ));
    assert_mentions(
        &message,
        &["bad.dbc:9:2: ", "`Y` of message `M`", "extended multiplexing"],
    );
}

#[test]
fn load_names_the_path_and_reads_windows_1252() {
    let missing = Path::new("/nonexistent/tandem.dbc");
    let message = Dbc::load(missing).expect_err("no such file").to_string();
    assert_mentions(
        &message,
        &["/nonexistent/tandem.dbc: cannot read the DBC file", "check the path"],
    );

    let dir = std::env::temp_dir().join(format!("tandem-dbc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("latin.dbc");
    // "°C" in Windows-1252 is the single byte 0xB0.
    let mut bytes = with_signals(" SG_ T : 0|8@1+ (1,-40) [0|0] \"#C\" A").into_bytes();
    let hash = bytes.iter().position(|&b| b == b'#').unwrap();
    bytes[hash] = 0xB0;
    std::fs::write(&path, bytes).unwrap();
    let loaded = Dbc::load(&path);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(loaded.unwrap().message("M").unwrap().signals[0].unit, "°C");

    let mut broken = with_signals(" SG_ S : 0|8@1+ (1,0) [0|0] \"\" A");
    broken.insert_str(0, "\n\n");
    broken = broken.replace("SG_ S :", "SG_ S ;");
    let message = Dbc::parse(&broken, "relative/dir/file.dbc")
        .expect_err("a typo")
        .to_string();
    assert_mentions(&message, &["relative/dir/file.dbc:10:8: "]);
}
