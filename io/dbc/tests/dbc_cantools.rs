//! Tandem's DBC codec against cantools, signal by signal: for every signal
//! of `tests/data/peer.dbc` (both byte orders, signed and unsigned, float32
//! and float64, factors and offsets, odd sizes and positions, extended
//! identifiers, a multiplexed message, a 64-byte CAN FD message), random
//! values encoded by Tandem decode to the same values in cantools, values
//! encoded by cantools decode to the same values in Tandem, and both write
//! the same bytes. cantools is driven through `tests/peers/cantools_peer.py`.

#[path = "../../../tests/support/peer_process.rs"]
mod peer_process;
#[path = "../../../tests/support/rng.rs"]
mod rng;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use peer_process::{hex, unhex};
use rng::Rng;
use tandem_dbc::{ByteOrder, Dbc, Message, Multiplex, Signal, ValueType};

const PEER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/cantools_peer.py");
const PEER_DBC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/peer.dbc");
/// Random payloads per message (per multiplexor value for the multiplexed one).
const ROUNDS: usize = 150;

/// A raw value: an integer, or a float signal's IEEE value.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Raw {
    Int(i128),
    Float(f64),
}

/// One payload's worth of values for a message.
struct Case {
    message: String,
    /// Each carried signal's name, raw value and physical value.
    values: Vec<(String, Raw, f64)>,
    /// What Tandem encodes for them.
    tandem_payload: Vec<u8>,
}

/// What cantools answered for a case.
struct Answer {
    /// The payload cantools encodes for the case's physical values.
    payload: Vec<u8>,
    /// (name, physical, raw) as cantools decodes Tandem's payload.
    decoded: Vec<(String, f64, Raw)>,
}

/// The peer DBC and the cases with cantools' answers, computed once for all tests.
fn peer_run() -> &'static (Dbc, Vec<(Case, Answer)>) {
    static RUN: OnceLock<(Dbc, Vec<(Case, Answer)>)> = OnceLock::new();
    RUN.get_or_init(|| {
        require_cantools();
        let dbc = Dbc::load(Path::new(PEER_DBC)).unwrap_or_else(|e| panic!("{e}"));
        let mut rng = Rng(0x7A4D_E3C1_9B05_1F27);
        let mut cases = Vec::new();
        for message in dbc.messages() {
            for selector in multiplexor_values(message) {
                for _ in 0..ROUNDS {
                    cases.push(random_case(message, selector, &mut rng));
                }
            }
        }
        let answers = ask_cantools(&cases);
        (dbc, cases.into_iter().zip(answers).collect())
    })
}

fn require_cantools() {
    let found = Command::new("python3").args(["-c", "import cantools"]).status();
    if !found.is_ok_and(|s| s.success()) {
        panic!("cantools missing: run .ci/run (it pip-installs python-can and cantools)");
    }
}

/// The multiplexor values to try: `[None]` for a plain message.
fn multiplexor_values(message: &Message) -> Vec<Option<u64>> {
    let mut values: Vec<Option<u64>> = message
        .signals
        .iter()
        .filter_map(|s| match s.multiplex {
            Multiplex::Multiplexed(v) => Some(Some(v)),
            _ => None,
        })
        .collect();
    values.sort();
    values.dedup();
    if values.is_empty() {
        values.push(None);
    }
    values
}

/// Random values for the signals `message` carries when its multiplexor is
/// `selector`, and Tandem's payload for them.
fn random_case(message: &Message, selector: Option<u64>, rng: &mut Rng) -> Case {
    let mut values = Vec::new();
    let mut payload = vec![0; message.len];
    for signal in &message.signals {
        let raw = match (signal.multiplex, selector) {
            (Multiplex::Multiplexed(v), Some(s)) if v != s => continue,
            (Multiplex::Multiplexor, Some(s)) => Raw::Int(i128::from(s)),
            _ => random_raw(signal, rng),
        };
        let (raw, physical) = match raw {
            Raw::Int(r) => (raw, r as f64 * signal.factor + signal.offset),
            Raw::Float(f) => {
                // The raw value both sides derive from the physical one,
                // which rounding may have moved from `f`.
                let physical = f * signal.factor + signal.offset;
                let raw = (physical - signal.offset) / signal.factor;
                let raw = if signal.size == 32 { f64::from(raw as f32) } else { raw };
                (Raw::Float(raw), physical)
            }
        };
        let limited = signal.encode(physical, &mut payload);
        assert!(
            !limited,
            "{}.{}: {physical} needed no limiting",
            message.name, signal.name
        );
        values.push((signal.name.clone(), raw, physical));
    }
    Case {
        message: message.name.clone(),
        values,
        tandem_payload: payload,
    }
}

/// A random raw value whose physical value lies in `[min, max]` (when
/// `min < max`) and is exact in an f64.
fn random_raw(signal: &Signal, rng: &mut Rng) -> Raw {
    match signal.value_type {
        ValueType::Float32 => {
            let value = (rng.unit() * 2.0 - 1.0) * 10f64.powi(rng.between(-3, 6) as i32);
            Raw::Float(f64::from(value as f32))
        }
        ValueType::Float64 => Raw::Float((rng.unit() * 2.0 - 1.0) * 10f64.powi(rng.between(-30, 30) as i32)),
        ValueType::Unsigned | ValueType::Signed => {
            let size = signal.size;
            let (mut lo, mut hi) = match signal.value_type {
                ValueType::Signed => (-(1i128 << (size - 1)), (1i128 << (size - 1)) - 1),
                _ => (0, (1i128 << size) - 1),
            };
            if signal.min < signal.max {
                let a = (signal.min - signal.offset) / signal.factor;
                let b = (signal.max - signal.offset) / signal.factor;
                lo = lo.max(a.min(b).ceil() as i128);
                hi = hi.min(a.max(b).floor() as i128);
            }
            // Beyond 53 bits, keep the raw value a multiple of the power of
            // two that makes it exact as an f64 physical value.
            let step = 1i128 << size.saturating_sub(53);
            Raw::Int(rng.between(lo / step, hi / step) * step)
        }
    }
}

/// cantools' answers: for each case, an `encode` and a `decode` request.
fn ask_cantools(cases: &[Case]) -> Vec<Answer> {
    let mut input = format!("{PEER_DBC}\n");
    for case in cases {
        let values: Vec<String> = case.values.iter().map(|(n, _, p)| format!("{n}={p:?}")).collect();
        input += &format!("encode {} {}\n", case.message, values.join(" "));
        input += &format!("decode {} {}\n", case.message, hex(&case.tandem_payload));
    }
    let mut child = Command::new("python3")
        .arg(PEER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    // The peer reads everything before it answers, so this cannot block.
    let written = child.stdin.take().expect("stdin").write_all(input.as_bytes());
    let output = child.wait_with_output().expect("the peer finishes");
    assert!(
        written.is_ok() && output.status.success(),
        "cantools peer failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).expect("UTF-8 answers");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), 2 * cases.len(), "one answer per request");
    cases
        .iter()
        .zip(lines.chunks(2))
        .map(|(case, pair)| {
            let context = |line: &str| format!("{}: cantools answered `{line}`", case.message);
            assert!(
                !pair[0].starts_with("error") && !pair[1].starts_with("error"),
                "{}",
                context(&pair.join(" / "))
            );
            Answer {
                payload: unhex(pair[0]),
                decoded: pair[1]
                    .split_whitespace()
                    .map(|item| {
                        let (name, values) = item.split_once('=').unwrap_or_else(|| panic!("{}", context(pair[1])));
                        let (physical, raw) = values.split_once(':').unwrap_or_else(|| panic!("{}", context(pair[1])));
                        let raw = raw
                            .parse()
                            .map(Raw::Int)
                            .unwrap_or_else(|_| Raw::Float(raw.parse().expect("a number")));
                        (name.to_string(), physical.parse().expect("a number"), raw)
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Whether two physical values of `signal` agree: within half a factor for
/// integer signals, to the last bits for float ones.
fn agree(signal: &Signal, a: f64, b: f64) -> bool {
    let tolerance = match signal.value_type {
        ValueType::Float32 | ValueType::Float64 => 1e-12 * a.abs().max(1.0),
        ValueType::Unsigned | ValueType::Signed => signal.factor.abs() / 2.0,
    };
    (a - b).abs() <= tolerance
}

#[test]
fn the_peer_dbc_covers_every_layout() {
    let (dbc, cases) = peer_run();
    let signals = || dbc.messages().iter().flat_map(|m| m.signals.iter());
    assert!(signals().any(|s| s.byte_order == ByteOrder::Intel && s.value_type == ValueType::Signed));
    assert!(signals().any(|s| s.byte_order == ByteOrder::Motorola && s.value_type == ValueType::Signed));
    assert!(signals().any(|s| s.byte_order == ByteOrder::Motorola && s.size == 12 && s.start_bit % 8 < 7));
    for value_type in [ValueType::Float32, ValueType::Float64] {
        for order in [ByteOrder::Intel, ByteOrder::Motorola] {
            assert!(signals().any(|s| s.value_type == value_type && s.byte_order == order));
        }
    }
    assert!(signals().any(|s| s.factor < 0.0) && signals().any(|s| s.offset != 0.0 && s.factor.fract() != 0.0));
    assert!(signals().any(|s| s.size == 64 && s.value_type == ValueType::Unsigned));
    assert!(dbc.messages().iter().any(|m| m.id.is_extended()));
    assert!(dbc.messages().iter().any(|m| m.len == 64));
    assert!(signals().any(|s| matches!(s.multiplex, Multiplex::Multiplexed(_))));
    for signal in signals() {
        let tried = cases
            .iter()
            .filter(|(c, _)| c.values.iter().any(|(n, ..)| *n == signal.name))
            .count();
        assert!(tried >= ROUNDS, "signal {} was tried {tried} times", signal.name);
    }
}

#[test]
fn cantools_decodes_what_tandem_encodes() {
    let (dbc, cases) = peer_run();
    for (case, answer) in cases {
        let message = dbc.message(&case.message).expect("the case's message");
        let names: Vec<&str> = answer.decoded.iter().map(|(n, ..)| n.as_str()).collect();
        let expected: Vec<&str> = case.values.iter().map(|(n, ..)| n.as_str()).collect();
        let (mut names, mut expected) = (names, expected);
        names.sort_unstable();
        expected.sort_unstable();
        assert_eq!(
            names,
            expected,
            "{}: the signals cantools finds in {}",
            case.message,
            hex(&case.tandem_payload)
        );
        for (name, raw, physical) in &case.values {
            let signal = message.signal(name).expect("the case's signal");
            let (_, theirs, their_raw) = answer.decoded.iter().find(|(n, ..)| n == name).expect("decoded");
            assert_eq!(
                their_raw,
                raw,
                "{}.{name}: raw value cantools reads in Tandem's {}",
                case.message,
                hex(&case.tandem_payload)
            );
            assert!(
                agree(signal, *physical, *theirs),
                "{}.{name}: Tandem encoded {physical}, cantools decodes {theirs} from {}",
                case.message,
                hex(&case.tandem_payload)
            );
        }
    }
}

#[test]
fn tandem_decodes_what_cantools_encodes() {
    let (dbc, cases) = peer_run();
    for (case, answer) in cases {
        let message = dbc.message(&case.message).expect("the case's message");
        assert_eq!(
            answer.payload.len(),
            message.len,
            "{}: cantools' payload length",
            case.message
        );
        for signal in &message.signals {
            let value = case.values.iter().find(|(n, ..)| *n == signal.name);
            assert_eq!(
                message.carries(signal, &answer.payload),
                value.is_some(),
                "{}.{}: carried by cantools' {}",
                case.message,
                signal.name,
                hex(&answer.payload)
            );
            if let Some((_, _, physical)) = value {
                let ours = signal.decode(&answer.payload);
                assert!(
                    agree(signal, *physical, ours),
                    "{}.{}: cantools encoded {physical} as {}, Tandem decodes {ours}",
                    case.message,
                    signal.name,
                    hex(&answer.payload)
                );
            }
        }
    }
}

#[test]
fn tandem_and_cantools_write_the_same_bytes() {
    let (_, cases) = peer_run();
    for (case, answer) in cases {
        let values: Vec<String> = case.values.iter().map(|(n, _, p)| format!("{n}={p}")).collect();
        assert_eq!(
            hex(&case.tandem_payload),
            hex(&answer.payload),
            "{} with {}: Tandem's payload (left) and cantools' (right)",
            case.message,
            values.join(" ")
        );
    }
}
