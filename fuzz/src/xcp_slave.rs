//! The XCP slave's command processor and DAQ setup fed a session of
//! command packets: each packet is handled, the sampler samples its events
//! after each, and the DTOs are taken. Every answer must be a response or
//! an error packet within `MAX_CTO`, and every DTO within `MAX_DTO`.

use tandem_xcp::map::{Event, Map};
use tandem_xcp::packet::{MAX_CTO, MAX_DTO};
use tandem_xcp::{Identity, Refusal, Slave, Target};

/// The most packets of one input.
const MAX_PACKETS: usize = 256;

/// A target of constant measurements that refuses negative calibrations.
struct Fixed;

impl Target for Fixed {
    fn measure(&self, index: usize) -> f64 {
        index as f64 * 0.5
    }

    fn calibrate(&mut self, _: usize, value: f64) -> Result<(), Refusal> {
        if value < 0.0 {
            Err(Refusal::OutOfRange)
        } else {
            Ok(())
        }
    }

    fn clock_ns(&self) -> u64 {
        1_000_000
    }
}

/// A slave of three measurements, two characteristics and three events.
fn slave() -> (Slave<Fixed>, tandem_xcp::Sampler) {
    let object = |name: &str| (name.to_string(), None, None, String::new());
    let map = Map::new(
        [object("v"), object("i"), object("soc")],
        [object("gain"), object("offset")],
        vec![
            Event {
                name: "frame".into(),
                period_ns: Some(1_000_000),
            },
            Event {
                name: "rate".into(),
                period_ns: Some(10_000_000),
            },
            Event {
                name: "can0 rx".into(),
                period_ns: None,
            },
        ],
    );
    let identity = Identity {
        a2l_name: "fuzz".into(),
        a2l: b"ASAP2_VERSION 1 71\n".to_vec(),
    };
    Slave::new(&map, Fixed, identity, vec![1.0, 0.0]).expect("the map is valid")
}

/// Runs `data` as packets, each a length byte and that many bytes.
pub fn xcp_slave(data: &[u8]) {
    let (mut slave, mut sampler) = slave();
    let mut out = Vec::with_capacity(MAX_CTO);
    let mut dto = Vec::with_capacity(MAX_DTO);
    let values = [1.0, 2.0, 3.0];
    let mut rest = data;
    for k in 0..MAX_PACKETS as u64 {
        let Some((&len, tail)) = rest.split_first() else {
            break;
        };
        let (packet, tail) = tail.split_at((len as usize).min(tail.len()));
        rest = tail;
        out.clear();
        slave.handle(packet, &mut out);
        assert!(out.len() <= MAX_CTO, "an answer of {} bytes", out.len());
        assert!(out.is_empty() || matches!(out[0], 0xFF | 0xFE), "answer {out:02X?}");
        for event in 0..3 {
            sampler.sample(event, k * 1_000_000, &values);
        }
        while slave.next_dto(&mut dto) {
            assert!(dto.len() <= MAX_DTO, "a DTO of {} bytes", dto.len());
        }
    }
}
