//! Tandem's ISO-TP machine on frames written out by hand from ISO
//! 15765-2:2016's frame layouts (its tables 9 to 20): what it sends, what it
//! ignores, what aborts, and when, on a clock the test advances.

use tandem_can::{CanFrame, CanId};
use tandem_uds::isotp::{st_min_ns, Addressing, Config, Event, Fault, Machine};

const MS: u64 = 1_000_000;

fn id(n: u16) -> CanId {
    CanId::standard(n).unwrap()
}

fn peer(data: &[u8]) -> CanFrame {
    CanFrame::data(id(0x7E8), data).unwrap()
}

fn machine(config: Config) -> Machine {
    Machine::new(config).unwrap()
}

fn classic() -> Config {
    Config::classic(id(0x7E0), id(0x7E8))
}

#[test]
fn single_and_first_frames_have_the_standard_layouts() {
    let mut m = machine(classic());
    m.send(&[1, 2, 3]).unwrap();
    assert_eq!(m.transmit(0).unwrap().payload(), [0x03, 1, 2, 3]);
    assert!(!m.is_sending());
    let message: Vec<u8> = (0..20).collect();
    m.send(&message).unwrap();
    assert_eq!(m.transmit(0).unwrap().payload(), [0x10, 20, 0, 1, 2, 3, 4, 5]);
    assert_eq!(m.transmit(0), None, "waits for a flow control");
    assert_eq!(m.on_frame(&peer(&[0x30, 0, 0]), 0), None);
    assert_eq!(m.transmit(0).unwrap().payload(), [0x21, 6, 7, 8, 9, 10, 11, 12]);
    assert_eq!(m.transmit(0).unwrap().payload(), [0x22, 13, 14, 15, 16, 17, 18, 19]);
    assert!(!m.is_sending());
    assert_eq!(m.counts().sent, 2);

    // CAN FD: the escaped single frame, then the escaped first frame (FF_DL > 4095).
    let fd = Config {
        fd: true,
        tx_dl: 64,
        padding: Some(0xAA),
        max_len: 5000,
        ..classic()
    };
    let mut m = machine(fd);
    m.send(&[7; 9]).unwrap();
    let frame = m.transmit(0).unwrap();
    assert!(frame.is_fd());
    assert_eq!(frame.payload()[..11], [0x00, 9, 7, 7, 7, 7, 7, 7, 7, 7, 7]);
    assert_eq!(
        frame.payload()[11],
        0xAA,
        "rounded up to 12 bytes with the padding byte"
    );
    assert_eq!(frame.len(), 12);
    m.send(&[1; 4096]).unwrap();
    let frame = m.transmit(0).unwrap();
    assert_eq!(frame.payload()[..7], [0x10, 0x00, 0x00, 0x00, 0x10, 0x00, 1]);
    assert_eq!(frame.len(), 64);
}

#[test]
fn extended_addressing_prefixes_and_filters_the_address_byte() {
    let config = Config {
        addressing: Addressing::Extended { tx: 0x55, rx: 0x66 },
        padding: Some(0xCC),
        ..classic()
    };
    let mut m = machine(config);
    m.send(&[1, 2, 3, 4, 5, 6]).unwrap();
    assert_eq!(m.transmit(0).unwrap().payload(), [0x55, 0x06, 1, 2, 3, 4, 5, 6]);
    m.send(&[9; 7]).unwrap();
    assert_eq!(m.transmit(0).unwrap().payload(), [0x55, 0x10, 7, 9, 9, 9, 9, 9]);
    assert_eq!(
        m.on_frame(&peer(&[0x77, 0x02, 1, 2]), 0),
        None,
        "another node's address"
    );
    assert_eq!(m.on_frame(&peer(&[0x66, 0x02, 1, 2]), 0), Some(Event::Received(2)));
    assert_eq!(m.message(), [1, 2]);
}

#[test]
fn block_size_and_stmin_pace_the_consecutive_frames() {
    let mut m = machine(classic());
    m.send(&[0; 7 * 6 + 6]).unwrap();
    m.transmit(0).unwrap();
    // BS 2, STmin 0xF3 = 300 µs.
    m.on_frame(&peer(&[0x30, 2, 0xF3]), 10 * MS);
    assert_eq!(m.transmit(10 * MS).unwrap().payload()[0], 0x21);
    assert_eq!(m.deadline(), Some(10 * MS + 300_000));
    assert_eq!(m.transmit(10 * MS + 299_999), None);
    assert_eq!(m.transmit(10 * MS + 300_000).unwrap().payload()[0], 0x22);
    assert_eq!(m.transmit(20 * MS), None, "block of 2 done: waits for a flow control");
    // FC.WAIT restarts N_Bs; CTS with BS 0 and STmin 5 ms sends the rest.
    assert_eq!(m.on_frame(&peer(&[0x31, 0, 0]), 900 * MS), None);
    assert_eq!(m.expire(1800 * MS), None, "N_Bs restarted by FC.WAIT");
    m.on_frame(&peer(&[0x30, 0, 5]), 1800 * MS);
    let mut times = Vec::new();
    let mut now = 1800 * MS;
    while m.is_sending() {
        if let Some(frame) = m.transmit(now) {
            times.push((now, frame.payload()[0]));
        }
        now += 100_000;
    }
    assert_eq!(
        times,
        [
            (1800 * MS, 0x23),
            (1805 * MS, 0x24),
            (1810 * MS, 0x25),
            (1815 * MS, 0x26)
        ]
    );
    assert_eq!(
        [0x00, 0x7F, 0xF1, 0xF9, 0x80, 0xF0, 0xFA].map(st_min_ns),
        [0, 127 * MS, 100_000, 900_000, 127 * MS, 127 * MS, 127 * MS],
        "reserved STmin values mean 127 ms"
    );
}

#[test]
fn the_receiver_answers_with_flow_control_per_block() {
    let config = Config {
        block_size: 2,
        st_min: 0xF1,
        padding: Some(0x55),
        ..classic()
    };
    let mut m = machine(config);
    assert_eq!(m.on_frame(&peer(&[0x10, 20, 0, 1, 2, 3, 4, 5]), 0), None);
    assert_eq!(
        m.transmit(0).unwrap().payload(),
        [0x30, 2, 0xF1, 0x55, 0x55, 0x55, 0x55, 0x55]
    );
    assert_eq!(m.on_frame(&peer(&[0x21, 6, 7, 8, 9, 10, 11, 12]), 1), None);
    assert_eq!(m.transmit(1), None);
    assert_eq!(
        m.on_frame(&peer(&[0x22, 13, 14, 15, 16, 17, 18, 19]), 2),
        Some(Event::Received(20))
    );
    assert_eq!(m.message(), (0..20).collect::<Vec<u8>>());
    // A block of 2 asks for the next flow control.
    m.on_frame(&peer(&[0x10, 30, 0, 0, 0, 0, 0, 0]), 3);
    m.transmit(3).unwrap();
    m.on_frame(&peer(&[0x21, 0, 0, 0, 0, 0, 0, 0]), 4);
    m.on_frame(&peer(&[0x22, 0, 0, 0, 0, 0, 0, 0]), 5);
    assert_eq!(m.transmit(5).unwrap().payload()[..3], [0x30, 2, 0xF1]);
}

#[test]
fn malformed_frames_are_ignored_or_abort_as_the_standard_says() {
    let mut m = machine(classic());
    let ignored = [
        (&[0x00, 1][..], Fault::BadLength),                   // SF_DL 0
        (&[0x05, 1, 2][..], Fault::BadLength),                // SF_DL beyond the frame
        (&[0x10, 0, 0, 0, 0, 0, 0, 0][..], Fault::BadLength), // FF_DL 0, escaped 0
        (&[0x10, 6, 1, 2, 3, 4, 5, 6][..], Fault::BadLength), // FF_DL a single frame carries
        (&[0x10, 20, 1, 2][..], Fault::BadLength),            // first frame shorter than 8
        (&[0x21, 1, 2][..], Fault::UnexpectedConsecutive),    // no reception
        (&[0x30, 0, 0][..], Fault::UnexpectedFlowControl),    // no transmission
        (&[0x45, 0][..], Fault::UnknownPci(0x45)),
        (&[][..], Fault::BadLength),
    ];
    for (n, (data, fault)) in ignored.iter().enumerate() {
        assert_eq!(m.on_frame(&peer(data), 0), Some(Event::Fault(*fault)), "{data:02X?}");
        assert_eq!(m.counts().ignored, n as u64 + 1);
    }
    assert_eq!(m.transmit(0), None, "nothing answered");

    // Out of sequence: the reception is aborted.
    m.on_frame(&peer(&[0x10, 20, 0, 1, 2, 3, 4, 5]), 0);
    m.transmit(0).unwrap();
    let wrong = m.on_frame(&peer(&[0x22, 0, 0, 0, 0, 0, 0, 0]), 1);
    assert_eq!(wrong, Some(Event::Fault(Fault::WrongSequence { expected: 1, got: 2 })));
    assert_eq!(
        m.on_frame(&peer(&[0x21, 0, 0, 0, 0, 0, 0, 0]), 2),
        Some(Event::Fault(Fault::UnexpectedConsecutive))
    );
    // A single frame mid-reception replaces it.
    m.on_frame(&peer(&[0x10, 20, 0, 1, 2, 3, 4, 5]), 3);
    assert_eq!(m.on_frame(&peer(&[0x01, 9]), 4), Some(Event::Received(1)));
    assert_eq!(m.counts().rx_aborted, 2);
}

#[test]
fn overflow_timeouts_and_bad_flow_status() {
    let config = Config {
        max_len: 100,
        ..classic()
    };
    let mut m = machine(config);
    let refused = m.on_frame(&peer(&[0x10, 101, 0, 0, 0, 0, 0, 0]), 0);
    assert_eq!(refused, Some(Event::Fault(Fault::TooLong { len: 101, max: 100 })));
    assert_eq!(m.transmit(0).unwrap().payload(), [0x32, 0, 0], "FC.OVFLW");

    // N_Cr: 1 s after the flow control, the reception is dropped.
    m.on_frame(&peer(&[0x10, 50, 0, 0, 0, 0, 0, 0]), 0);
    m.transmit(5);
    assert_eq!(m.expire(5 + 1000 * MS - 1), None);
    assert_eq!(m.expire(5 + 1000 * MS), Some(Fault::TimeoutCr));

    // N_Bs: no flow control within 1 s.
    m.send(&[0; 50]).unwrap();
    m.transmit(0).unwrap();
    assert_eq!(m.expire(1000 * MS), Some(Fault::TimeoutBs));
    assert!(!m.is_sending());
    // FC.OVFLW and a reserved flow status end the transmission.
    for (fs, fault) in [(0x32, Fault::PeerOverflow), (0x37, Fault::InvalidFlowStatus(7))] {
        m.send(&[0; 50]).unwrap();
        m.transmit(0).unwrap();
        assert_eq!(m.on_frame(&peer(&[fs, 0, 0]), 1), Some(Event::Fault(fault)));
        assert!(fault.aborts_transmission() && !m.is_sending());
    }
    assert_eq!(m.counts().tx_aborted, 3);
    assert!(m.send(&[0; 101]).is_err());
    assert!(m.send(&[]).is_err());
}

#[test]
fn configurations_out_of_bounds_are_refused() {
    for bad in [
        Config { tx_dl: 64, ..classic() },
        Config {
            fd: true,
            tx_dl: 13,
            ..classic()
        },
        Config {
            max_len: 0,
            ..classic()
        },
        Config {
            max_len: (1 << 24) + 1,
            ..classic()
        },
        Config {
            st_min: 0xFA,
            ..classic()
        },
    ] {
        assert!(Machine::new(bad).is_err(), "{bad:?}");
    }
}
