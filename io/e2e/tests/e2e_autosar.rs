//! Tandem's E2E protection against the `autosar-e2e` package (PyPI, import
//! `e2e`), driven through `tests/peers/e2e_peer.py`: for profiles 1 (data
//! ID modes Both, Alt, Low and Nibble), 2, 5 and 11 (Both and Nibble), on
//! seeded random payloads, lengths, header offsets, data IDs and counters,
//!
//! - Tandem's [`Protector`] writes the same bytes as autosar-e2e, and
//!   autosar-e2e accepts them;
//! - Tandem's [`Checker`] takes a stream of frames autosar-e2e protected as
//!   `Ok` through the counter's wrap, and each fault made of them gives
//!   exactly its status: a repeated frame `Repeated`, a jump within the
//!   maximum delta `OkSomeLost`, beyond it `WrongSequence`, a flipped bit
//!   `Error(Crc)` (autosar-e2e rejecting the same frame), a wrong data ID
//!   nibble `Error(DataId)` and the invalid counter 15 `Error(Counter)`;
//! - plain checksum signals carry the CRC autosar-e2e's `crc` module
//!   computes over the same bytes (the XOR and sum as Python computes them).

#[path = "../../../tests/support/peer_process.rs"]
mod peer_process;
#[path = "../../../tests/support/rng.rs"]
mod rng;

use std::io::Write;
use std::process::{Command, Stdio};

use peer_process::{hex, unhex};
use rng::Rng;
use tandem_dbc::ByteOrder;
use tandem_e2e::{
    CheckError, CheckStatus, Checker, Checksum, ChecksumSignal, Config, DataIdMode, NibbleLayout, Profile, Protector,
};

const PEER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/e2e_peer.py");
/// Random payloads per profile and mode.
const ROUNDS: usize = 300;

/// The profiles and modes under test: (profile number, mode).
const VARIANTS: [(u8, DataIdMode); 8] = [
    (1, DataIdMode::Both),
    (1, DataIdMode::Alt),
    (1, DataIdMode::Low),
    (1, DataIdMode::Nibble),
    (2, DataIdMode::Both),
    (5, DataIdMode::Both),
    (11, DataIdMode::Both),
    (11, DataIdMode::Nibble),
];

/// Answers to `requests`, one line each, from the peer.
fn ask_peer(requests: &[String]) -> Vec<String> {
    let found = Command::new("python3").args(["-c", "import e2e.p11"]).status();
    if !found.is_ok_and(|s| s.success()) {
        panic!("autosar-e2e missing: run .ci/run (it pip-installs autosar-e2e)");
    }
    let mut child = Command::new("python3")
        .arg(PEER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    // The peer reads everything before it answers, so this cannot block.
    let written = child
        .stdin
        .take()
        .expect("stdin")
        .write_all((requests.join("\n") + "\n").as_bytes());
    let output = child.wait_with_output().expect("the peer finishes");
    assert!(
        written.is_ok() && output.status.success(),
        "autosar-e2e peer failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let answers: Vec<String> = String::from_utf8(output.stdout)
        .expect("UTF-8")
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(answers.len(), requests.len(), "one answer per request");
    for (request, answer) in requests.iter().zip(&answers) {
        assert!(
            !answer.starts_with("error"),
            "`{request}`: autosar-e2e answered `{answer}`"
        );
    }
    answers
}

/// A random configuration of `variant` and the header's byte offset.
fn random_config((profile, mode): (u8, DataIdMode), rng: &mut Rng) -> (Config, usize) {
    let mut between = |lo: usize, hi: usize| rng.between(lo as i128, hi as i128) as usize;
    let (profile, data_length, at) = match profile {
        1 | 11 => {
            let len = between(2, 30);
            let at = between(0, len - 2);
            let top = if mode == DataIdMode::Nibble { 0x0FFF } else { 0xFFFF };
            let data_id = between(0, top) as u16;
            let layout = NibbleLayout::at_byte(at as u16);
            let profile = if profile == 1 {
                Profile::P01 { data_id, mode, layout }
            } else {
                Profile::P11 { data_id, mode, layout }
            };
            (profile, len, at)
        }
        2 => {
            let data_ids = std::array::from_fn(|_| between(0, 255) as u8);
            (Profile::P02 { data_ids }, between(2, 64), 0)
        }
        _ => {
            let len = between(3, 300);
            let at = between(0, len - 3);
            let data_id = between(0, 0xFFFF) as u16;
            (
                Profile::P05 {
                    data_id,
                    offset: (at * 8) as u16,
                },
                len,
                at,
            )
        }
    };
    let config = Config {
        profile,
        data_length,
        max_delta_counter: 2,
    };
    config.validate().unwrap_or_else(|e| panic!("{e}"));
    (config, at)
}

/// The byte holding the counter (in its low nibble for profiles 1, 2 and
/// 11), for a header at byte `at`.
fn counter_byte(config: &Config, at: usize) -> usize {
    match config.profile {
        Profile::P05 { .. } => at + 2,
        _ => at + 1,
    }
}

/// `payload` with its counter field set to `counter`.
fn with_counter(config: &Config, at: usize, payload: &[u8], counter: u32) -> Vec<u8> {
    let mut payload = payload.to_vec();
    let byte = &mut payload[counter_byte(config, at)];
    *byte = match config.profile {
        Profile::P05 { .. } => counter as u8,
        _ => (*byte & 0xF0) | counter as u8,
    };
    payload
}

/// The peer request that protects or checks `payload` under `config`.
fn request(op: &str, config: &Config, at: usize, payload: &[u8]) -> String {
    let (number, id, mode) = match config.profile {
        Profile::P01 { data_id, mode, .. } => (1, data_id.to_string(), mode as u8),
        Profile::P11 { data_id, mode, .. } => (11, data_id.to_string(), mode as u8),
        Profile::P02 { data_ids } => (2, hex(&data_ids), 0),
        Profile::P05 { data_id, .. } => (5, data_id.to_string(), 0),
        Profile::Plain { .. } => unreachable!("plain protection has no autosar-e2e profile"),
    };
    format!("{op} {number} {id} {mode} {} {at} {}", config.data_length, hex(payload))
}

/// Asks the peer to protect `payload` (whose counter field it increments)
/// under `config`.
fn peer_protect(config: &Config, at: usize, payload: &[u8], counter: u32) -> String {
    let modulus = config.profile.counter_modulus();
    let before = with_counter(config, at, payload, (counter + modulus - 1) % modulus);
    request("protect", config, at, &before)
}

/// A byte whose bits the CRC covers and nothing else reads: a data byte
/// after the header if there is one, else the CRC itself.
fn plain_data_byte(config: &Config, at: usize, rng: &mut Rng) -> usize {
    let header = match config.profile {
        Profile::P05 { .. } => at..at + 3,
        _ => at..at + 2,
    };
    let others: Vec<usize> = (0..config.data_length).filter(|i| !header.contains(i)).collect();
    if others.is_empty() {
        at
    } else {
        others[rng.between(0, others.len() as i128 - 1) as usize]
    }
}

#[test]
fn protection_matches_autosar_e2e_byte_for_byte() {
    let mut rng = Rng(0x3E2E_5A17_C0DE_0001);
    let mut cases = Vec::new();
    let mut requests = Vec::new();
    for variant in VARIANTS {
        for _ in 0..ROUNDS {
            let (config, at) = random_config(variant, &mut rng);
            let extra = rng.between(0, 3) as usize;
            let payload: Vec<u8> = (0..config.data_length + extra).map(|_| rng.next() as u8).collect();
            let counter = rng.between(0, i128::from(config.profile.counter_modulus()) - 1) as u32;
            let mut protector = Protector::new(config).unwrap();
            protector.set_counter(counter);
            let mut ours = payload.clone();
            protector.protect(&mut ours).unwrap();
            assert_eq!(protector.counter(), (counter + 1) % config.profile.counter_modulus());
            let mut corrupt = ours.clone();
            corrupt[plain_data_byte(&config, at, &mut rng)] ^= 1 << rng.between(0, 7);
            requests.push(peer_protect(&config, at, &payload, counter));
            requests.push(request("check", &config, at, &ours));
            requests.push(request("check", &config, at, &corrupt));
            cases.push((config, ours, corrupt));
        }
    }
    let answers = ask_peer(&requests);
    for ((config, ours, corrupt), answer) in cases.iter().zip(answers.chunks(3)) {
        let context = format!("{config:?}");
        assert_eq!(hex(ours), answer[0], "protected bytes, {context}");
        assert_eq!(answer[1], "1", "autosar-e2e accepts ours, {context}");
        assert_eq!(answer[2], "0", "autosar-e2e rejects a flipped bit, {context}");
        let mut checker = Checker::new(*config).unwrap();
        assert_eq!(checker.check(corrupt), CheckStatus::Error(CheckError::Crc), "{context}");
        assert_eq!(checker.check(ours), CheckStatus::Ok, "{context}");
    }
}

/// `count` frames autosar-e2e protected under `config`, with counters
/// 0, 1, 2, ... (wrapping) and random data.
fn peer_stream(config: &Config, at: usize, count: u32, rng: &mut Rng) -> Vec<Vec<u8>> {
    let modulus = config.profile.counter_modulus();
    let requests: Vec<String> = (0..count)
        .map(|i| {
            let payload: Vec<u8> = (0..config.data_length).map(|_| rng.next() as u8).collect();
            peer_protect(config, at, &payload, i % modulus)
        })
        .collect();
    ask_peer(&requests).iter().map(|answer| unhex(answer)).collect()
}

#[test]
fn the_checker_gives_each_fault_its_status_on_autosar_e2e_frames() {
    let mut rng = Rng(0x3E2E_5A17_C0DE_0002);
    for variant in VARIANTS {
        let (config, at) = random_config(variant, &mut rng);
        let modulus = config.profile.counter_modulus();
        let frames = peer_stream(&config, at, modulus + 12, &mut rng);
        let context = format!("{config:?}");
        let mut checker = Checker::new(config).unwrap();
        let mut corrupt = frames[2].clone();
        corrupt[plain_data_byte(&config, at, &mut rng)] ^= 0x10;
        let script: [(&[u8], CheckStatus); 8] = [
            (&frames[0], CheckStatus::Ok),
            (&frames[1], CheckStatus::Ok),
            (&frames[1], CheckStatus::Repeated),
            (&corrupt, CheckStatus::Error(CheckError::Crc)),
            (&frames[2], CheckStatus::Ok),
            (&frames[4], CheckStatus::OkSomeLost { lost: 1 }),
            (&frames[7], CheckStatus::WrongSequence),
            (
                &frames[7][..config.data_length - 1],
                CheckStatus::Error(CheckError::Length),
            ),
        ];
        for (step, (frame, expected)) in script.into_iter().enumerate() {
            assert_eq!(checker.check(frame), expected, "step {step}, {context}");
        }
        for (i, frame) in frames.iter().enumerate().skip(8) {
            assert_eq!(
                checker.check(frame),
                CheckStatus::Ok,
                "frame {i} of the wrapping stream, {context}"
            );
        }
    }
}

#[test]
fn a_wrong_nibble_or_counter_is_rejected_by_both() {
    let mut rng = Rng(0x3E2E_5A17_C0DE_0003);
    let mut cases = Vec::new();
    let mut requests = Vec::new();
    for variant in VARIANTS.into_iter().filter(|(p, _)| *p == 1 || *p == 11) {
        for _ in 0..ROUNDS / 10 {
            let (config, at) = random_config(variant, &mut rng);
            let payload: Vec<u8> = (0..config.data_length).map(|_| rng.next() as u8).collect();
            let mut ours = payload.clone();
            Protector::new(config).unwrap().protect(&mut ours).unwrap();
            let mut counter_15 = ours.clone();
            counter_15[at + 1] |= 0x0F;
            requests.push(request("check", &config, at, &counter_15));
            cases.push((config, counter_15, CheckError::Counter));
            if variant.1 == DataIdMode::Nibble {
                let mut nibble = ours.clone();
                nibble[at + 1] ^= 0x10 << rng.between(0, 3);
                requests.push(request("check", &config, at, &nibble));
                cases.push((config, nibble, CheckError::DataId));
            }
        }
    }
    let answers = ask_peer(&requests);
    for ((config, frame, error), answer) in cases.iter().zip(&answers) {
        assert_eq!(answer, "0", "autosar-e2e rejects it, {config:?}");
        let status = Checker::new(*config).unwrap().check(frame);
        assert_eq!(status, CheckStatus::Error(*error), "{config:?}");
    }
}

#[test]
fn plain_checksums_match_autosar_e2e_crcs() {
    let kinds = [
        (Checksum::Crc8SaeJ1850, "crc8"),
        (Checksum::Crc8H2f, "crc8_h2f"),
        (Checksum::Crc16CcittFalse, "crc16"),
        (Checksum::Crc32P4, "crc32_p4"),
        (Checksum::Xor, "xor"),
        (Checksum::Sum, "sum"),
    ];
    let mut rng = Rng(0x3E2E_5A17_C0DE_0004);
    let mut cases = Vec::new();
    let mut requests = Vec::new();
    for (kind, name) in kinds {
        for _ in 0..ROUNDS / 3 {
            let len = rng.between(kind.width() as i128 + 1, 64) as usize;
            let at = rng.between(0, (len - kind.width()) as i128) as usize;
            // The range lies before or after the checksum.
            let (start, end) = if at > 0 && (rng.next().is_multiple_of(2) || at + kind.width() == len) {
                (rng.between(0, at as i128 - 1) as usize, at)
            } else {
                let start = at + kind.width();
                (start, rng.between(start as i128 + 1, len as i128) as usize)
            };
            let byte_order = if rng.next().is_multiple_of(2) {
                ByteOrder::Intel
            } else {
                ByteOrder::Motorola
            };
            let checksum = ChecksumSignal {
                kind,
                start,
                end,
                at,
                byte_order,
            };
            let config = Config {
                profile: Profile::Plain {
                    counter: None,
                    checksum: Some(checksum),
                },
                data_length: len,
                max_delta_counter: 1,
            };
            let mut payload: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
            Protector::new(config)
                .unwrap_or_else(|e| panic!("{e}"))
                .protect(&mut payload)
                .unwrap();
            requests.push(format!("crc {name} {}", hex(&payload[start..end])));
            cases.push((checksum, payload));
        }
    }
    let answers = ask_peer(&requests);
    for ((checksum, payload), answer) in cases.iter().zip(&answers) {
        let mut carried = payload[checksum.at..checksum.at + checksum.kind.width()].to_vec();
        if checksum.byte_order == ByteOrder::Intel {
            carried.reverse();
        }
        let carried = carried.iter().fold(0u64, |v, b| v << 8 | u64::from(*b));
        assert_eq!(carried.to_string(), *answer, "{checksum:?}");
    }
}
