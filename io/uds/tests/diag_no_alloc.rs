//! ISO-TP and the UDS server run on I/O threads, so once built they
//! allocate nothing: a counting global allocator watches a tester and an
//! ECU machine exchange multi-frame messages both ways, CAN FD and
//! classic, and the server answer every service, malformed requests included.

#[path = "../../../tests/support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::allocations_in;
use tandem_can::CanId;
use tandem_uds::isotp::{Config, Event, Machine};
use tandem_uds::{Did, Encoding, Server, ServerConfig};

#[test]
fn isotp_and_uds_allocate_nothing_per_message() {
    let id = |n| CanId::standard(n).unwrap();
    let encoding = Encoding {
        bytes: 4,
        signed: true,
        scale: 0.5,
        offset: 1.0,
    };
    let dids = (0..20).map(|n| Did { id: n, encoding }).collect();
    let mut server = Server::new(ServerConfig::new(dids, (1..50).collect())).unwrap();
    for fd in [false, true] {
        let base = Config {
            fd,
            tx_dl: if fd { 64 } else { 8 },
            block_size: 3,
            st_min: 0xF1,
            max_len: 5000,
            ..Config::classic(id(0x7E0), id(0x7E8))
        };
        let mut tester = Machine::new(base).unwrap();
        let mut ecu = Machine::new(Config {
            tx_id: base.rx_id,
            rx_id: base.tx_id,
            ..base
        })
        .unwrap();
        let request: Vec<u8> = [0x22]
            .into_iter()
            .chain((0..20u16).flat_map(u16::to_be_bytes))
            .collect();
        let long = vec![0x5A; 4500];
        let values = [2.5; 20];
        let (mut now, mut answered) = (0u64, 0);
        let allocations = allocations_in(|| {
            for round in 0..50 {
                tester.send(if round % 2 == 0 { &request } else { &long }).unwrap();
                let mut done = false;
                while !done {
                    now += 1_000_000;
                    while let Some(frame) = tester.transmit(now) {
                        if let Some(Event::Received(len)) = ecu.on_frame(&frame, now) {
                            let mut copy = [0u8; 64];
                            let n = len.min(64);
                            copy[..n].copy_from_slice(&ecu.message()[..n]);
                            if let Some(response) = server.handle(&copy[..n], &values, now) {
                                ecu.send(response).unwrap();
                            }
                            answered += 1;
                            done = true;
                        }
                    }
                    while let Some(frame) = ecu.transmit(now) {
                        tester.on_frame(&frame, now);
                    }
                }
                for request in [
                    &[0x19, 0x0A][..],
                    &[0x19, 0x02, 0xFF],
                    &[0x14, 0xFF, 0xFF, 0xFF],
                    &[0x10, 0x03],
                    &[0x27],
                ] {
                    server.handle(request, &values, now);
                }
            }
        });
        assert_eq!(answered, 50);
        assert_eq!(allocations, 0, "allocations while exchanging messages (fd: {fd})");
        assert_eq!(tester.counts().sent, 50);
    }
}
