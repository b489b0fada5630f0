//! E2E protection runs on the real-time transmit and receive paths, so it
//! allocates nothing: a counting global allocator watches protect and
//! check of every profile and of plain signals, over thousands of frames
//! including corrupt, repeated and short ones.

#[path = "../../../tests/support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::allocations_in;
use tandem_dbc::ByteOrder;
use tandem_e2e::{
    CheckStatus, Checker, Checksum, ChecksumSignal, Config, CounterSignal, DataIdMode, NibbleLayout, Profile,
    Protector, ReceiveCounts,
};

/// One configuration of each profile and mode, and of plain signals.
fn configs() -> Vec<Config> {
    let nibble = |data_id, mode| (data_id, mode, NibbleLayout::at_byte(2));
    let profiles = [
        (nibble(0x123, DataIdMode::Both), 1),
        (nibble(0x123, DataIdMode::Alt), 1),
        (nibble(0x123, DataIdMode::Nibble), 1),
        (nibble(0x123, DataIdMode::Both), 11),
        (nibble(0x123, DataIdMode::Nibble), 11),
    ]
    .map(|((data_id, mode, layout), n)| match n {
        1 => Profile::P01 { data_id, mode, layout },
        _ => Profile::P11 { data_id, mode, layout },
    });
    let plain = Profile::Plain {
        counter: Some(CounterSignal {
            start_bit: 8,
            bits: 4,
            byte_order: ByteOrder::Intel,
            max: 15,
        }),
        checksum: Some(ChecksumSignal {
            kind: Checksum::Crc16CcittFalse,
            start: 0,
            end: 8,
            at: 8,
            byte_order: ByteOrder::Motorola,
        }),
    };
    let mut all: Vec<Config> = profiles
        .into_iter()
        .chain([
            Profile::P02 {
                data_ids: std::array::from_fn(|i| i as u8 * 17),
            },
            Profile::P05 {
                data_id: 0xBEEF,
                offset: 16,
            },
            plain,
        ])
        .map(|profile| Config {
            profile,
            data_length: 16,
            max_delta_counter: 1,
        })
        .collect();
    all.push(Config {
        data_length: 4096,
        ..all[6]
    });
    all
}

#[test]
fn protect_and_check_allocate_nothing() {
    for config in configs() {
        let mut protector = Protector::new(config).unwrap();
        let mut checker = Checker::new(config).unwrap();
        let mut counts = ReceiveCounts::default();
        let mut payload = vec![0x5A; config.data_length];
        let allocations = allocations_in(|| {
            for round in 0..2_000u32 {
                payload[config.data_length - 1] = round as u8;
                protector.protect(&mut payload).unwrap();
                counts.record(checker.check(&payload));
                counts.record(checker.check(&payload));
                payload[0] ^= 0x01;
                counts.record(checker.check(&payload));
                payload[0] ^= 0x01;
                counts.record(checker.check(&payload[..1]));
                counts.record(CheckStatus::NoNewData);
            }
        });
        assert_eq!(allocations, 0, "{config:?}");
        // The frames did what they should, so the work was not skipped.
        assert_eq!(
            (counts.ok, counts.repeated, counts.length),
            (2_000, 2_000, 2_000),
            "{config:?}"
        );
        assert_eq!(counts.crc + counts.counter, 2_000, "{config:?}");
    }
}
