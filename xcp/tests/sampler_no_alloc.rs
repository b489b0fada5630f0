//! The DAQ sampler allocates nothing on the real-time thread: not when it
//! samples, not when it takes a new DAQ configuration, not when the DTO
//! ring is full.

#[path = "../../tests/support/counting_alloc.rs"]
mod counting_alloc;

use tandem_xcp::map::{Event, Map};
use tandem_xcp::{Identity, Refusal, Slave, Target};

struct Still;

impl Target for Still {
    fn measure(&self, _: usize) -> f64 {
        0.0
    }
    fn calibrate(&mut self, _: usize, _: f64) -> Result<(), Refusal> {
        Ok(())
    }
    fn clock_ns(&self) -> u64 {
        0
    }
}

#[test]
fn sampling_allocates_nothing() {
    let n = |i: usize| (format!("m{i}"), None, None, String::new());
    let map = Map::new(
        (0..100).map(n),
        [],
        vec![Event {
            name: "frame".into(),
            period_ns: Some(1_000_000),
        }],
    );
    let (mut slave, mut sampler) = Slave::new(&map, Still, Identity::default(), vec![]).unwrap();
    let mut out = Vec::new();
    let mut ask = |slave: &mut Slave<Still>, p: &[u8]| {
        out.clear();
        slave.handle(p, &mut out);
        assert_eq!(out[0], 0xFF, "{p:x?} answered {out:x?}");
    };
    ask(&mut slave, &[0xFF, 0]);
    ask(&mut slave, &[0xD5, 0, 1, 0]);
    ask(&mut slave, &[0xD4, 0, 0, 0, 2]);
    ask(&mut slave, &[0xD3, 0, 0, 0, 0, 100]);
    ask(&mut slave, &[0xD3, 0, 0, 0, 1, 1]);
    ask(&mut slave, &[0xE2, 0, 0, 0, 0, 0]);
    for i in 0..100u32 {
        let a = (0x0001_0000 + 8 * i).to_le_bytes();
        ask(&mut slave, &[0xE1, 0xFF, 8, 0, a[0], a[1], a[2], a[3]]);
    }
    ask(&mut slave, &[0xE2, 0, 0, 0, 1, 0]);
    ask(&mut slave, &[0xE1, 0xFF, 2, 0, 0, 0, 1, 0]);
    ask(&mut slave, &[0xE0, 0x10, 0, 0, 0, 0, 1, 0]);
    ask(&mut slave, &[0xDE, 1, 0, 0]);
    let values: Vec<f64> = (0..100).map(f64::from).collect();
    let count = counting_alloc::allocations_in(|| {
        for k in 0..10_000u64 {
            sampler.sample(0, k * 1_000_000, &values);
        }
    });
    assert_eq!(count, 0, "sampling until the ring overflows");
    assert!(slave.overruns() > 0, "the ring did overflow");
    ask(&mut slave, &[0xDE, 0, 0, 0]);
    ask(&mut slave, &[0xDE, 1, 0, 0]);
    let mut dto = Vec::new();
    while slave.next_dto(&mut dto) {}
    let count = counting_alloc::allocations_in(|| sampler.sample(0, 0, &values));
    assert_eq!(count, 0, "taking two new configurations");
    assert!(slave.next_dto(&mut dto));
    assert_eq!(dto.len(), 1 + 4 + 800, "PID, timestamp, 100 values");
}
