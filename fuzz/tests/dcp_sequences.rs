//! The DCP slave driven in-process by sequences of datagrams (the
//! `dcp_slave` fuzz target's harness): the sessions of the fuzz seeds
//! reach the states they aim at; no sequence from a seeded generator
//! panics the slave; and a hostile master's configuration, however long,
//! leaves the slave's memory within a bound.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::time::Duration;

use tandem_dcp::pdu::{Network, Request};
use tandem_dcp::types::{OpMode, State};
use tandem_fuzz::dcp_slave::{configure, Bytes, Harness};

/// Counts the bytes allocated and not yet freed by the current thread.
struct Live;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
}

fn add(n: isize) {
    // The thread-local may be gone while a thread ends.
    let _ = LIVE.try_with(|l| l.set(l.get() + n));
}

unsafe impl GlobalAlloc for Live {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        add(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        add(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        add(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Live = Live;

/// Bytes this thread holds now.
fn live() -> isize {
    LIVE.with(Cell::get)
}

#[test]
fn a_lock_step_session_steps_and_a_soft_real_time_one_runs_on_its_clock() {
    let mut h = Harness::new();
    configure(&mut h, OpMode::NonRealTime.code());
    assert_eq!(h.slave.state(), State::Configured);
    for body in [
        Request::Run {
            state: State::Configured.code(),
            start: 0,
        },
        Request::Run {
            state: State::Synchronized.code(),
            start: 0,
        },
        Request::DoStep {
            state: State::Running.code(),
            steps: 3,
        },
        Request::SendOutputs {
            state: State::Computed.code(),
        },
    ] {
        h.request(body);
    }
    assert_eq!(h.slave.state(), State::Running);
    assert_eq!(h.slave.counters().data_out, 1);
    let mut h = Harness::new();
    configure(&mut h, OpMode::SoftRealTime.code());
    for state in [State::Configured, State::Synchronized] {
        h.request(Request::Run {
            state: state.code(),
            start: 0,
        });
    }
    for _ in 0..10 {
        h.wait(Duration::from_millis(10));
    }
    assert_eq!(h.slave.state(), State::Running);
    assert!(h.slave.counters().data_out >= 10, "{}", h.slave.counters());
}

/// A generator of bytes (xorshift64*), seeded.
struct Seeded(u64);

impl Seeded {
    fn next(&mut self) -> u8 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545F4914F6CDD1D) >> 56) as u8
    }
}

#[test]
fn no_sequence_of_datagrams_panics_the_slave_or_grows_its_memory() {
    let mut gen = Seeded(0x7A4D_E5C0_FFEE_0001);
    let mut most = 0;
    for round in 0..1000 {
        let bytes: Vec<u8> = (0..4000).map(|_| gen.next()).collect();
        let before = live();
        let mut h = Harness::new();
        let made = live();
        let mut b = Bytes(&bytes);
        // A third of the rounds start from a configured slave.
        match round % 3 {
            0 => {}
            1 => configure(&mut h, OpMode::NonRealTime.code()),
            _ => configure(&mut h, OpMode::SoftRealTime.code()),
        }
        while b.more() {
            h.operate(&mut b);
        }
        most = most.max(live() - made);
        drop(h);
        assert!(
            live() - before < 1 << 20,
            "round {round}: the slave left {} bytes behind",
            live() - before
        );
    }
    eprintln!("largest growth of a slave: {most} bytes");
    // Configurations, data and answers of thousands of random requests.
    assert!(most < 8 << 20, "a slave grew by {most} bytes");
}

#[test]
fn a_hostile_masters_configuration_is_refused_at_its_bounds_and_holds_the_memory_there() {
    let mut h = Harness::new();
    let uuid = h.slave.description().uuid;
    h.request(Request::Register {
        state: 0,
        uuid,
        op_mode: OpMode::NonRealTime.code(),
        major: 1,
        minor: 0,
    });
    let start = live();
    let mut after_bounds = 0;
    for k in 0..200_000u32 {
        let mut scratch = [0; 6];
        let id = (k % 4096) as u16;
        let body = match k % 5 {
            0 => Request::Output {
                data_id: id,
                pos: (k / 4096) as u16,
                source_vr: 5,
            },
            1 => Request::Input {
                data_id: id,
                pos: (k / 4096) as u16,
                target_vr: 4,
                source_type: 9,
            },
            2 => Request::TargetNetwork {
                data_id: id,
                network: Network::udp(
                    std::net::SocketAddrV4::new([10, 0, (k >> 8) as u8, k as u8].into(), 9000),
                    &mut scratch,
                ),
            },
            3 => Request::SourceNetwork {
                data_id: id,
                network: Network::udp(
                    std::net::SocketAddrV4::new([127, 0, 0, 1].into(), 10_000 + k as u16),
                    &mut scratch,
                ),
            },
            _ => Request::Scope { data_id: id, scope: 0 },
        };
        h.request(body);
        if k == 100_000 {
            after_bounds = live();
        }
    }
    let held = live() - start;
    eprintln!("held by the configuration: {held} bytes, {}", h.slave.counters());
    assert!(held < 16 << 20, "the configuration holds {held} bytes");
    assert!(
        live() - after_bounds < 1 << 20,
        "the memory still grew past the bounds: {}",
        live() - after_bounds
    );
    assert!(h.slave.counters().refused > 100_000, "{}", h.slave.counters());
    assert_eq!(h.slave.state(), State::Configuration);
}

#[test]
fn the_fuzz_seeds_reach_the_states_they_are_named_for() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/dcp_slave");
    for (seed, end) in [
        ("lock_step_session", State::Alive),
        ("soft_real_time_session", State::Alive),
        ("deregister_with_a_data_port", State::Alive),
        ("reset_with_a_data_port", State::Configuration),
        ("one_input_twice", State::Configured),
        ("huge_soft_real_time_step", State::Configuration),
    ] {
        let bytes = std::fs::read(root.join(seed)).unwrap();
        let mut b = Bytes(&bytes[1..]);
        let mut h = Harness::new();
        match bytes[0] % 4 {
            0 => {}
            1 => configure(&mut h, OpMode::NonRealTime.code()),
            _ => configure(&mut h, OpMode::SoftRealTime.code()),
        }
        while b.more() {
            h.operate(&mut b);
        }
        eprintln!("{seed}: {:?}, {}", h.slave.state(), h.slave.counters());
        assert_eq!(h.slave.state(), end, "{seed}: {}", h.slave.counters());
    }
}
