//! A demo XCP slave for tests: three measurements sampled by a thread at
//! 1 kHz on event 0 and one characteristic, `gain`, that scales the sines.
//!
//! `demo_slave [ADDR]` (default 127.0.0.1:5555) serves UDP and TCP on ADDR,
//! prints `listening UDP_ADDR TCP_ADDR` and runs until stdin closes.
//!
//! Frame `k` is at `k` ms on its own clock: `time_s` = k / 1000,
//! `sine_1hz` = gain · sin(2π · time_s), `sine_10hz` = gain · sin(20π · time_s).

use std::io::Read;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tandem_xcp::map::{Event, Map};
use tandem_xcp::{Identity, Refusal, Server, Slave, Target};

/// The demo's values, shared by the frame thread and the slave.
#[derive(Default)]
struct State {
    values: [f64; 3],
    gain: f64,
}

struct Demo {
    state: Arc<Mutex<State>>,
    frame: Arc<AtomicU64>,
}

impl Target for Demo {
    fn measure(&self, index: usize) -> f64 {
        self.state.lock().map(|s| s.values[index]).unwrap_or(f64::NAN)
    }

    fn calibrate(&mut self, index: usize, value: f64) -> Result<(), Refusal> {
        if index != 0 || !value.is_finite() {
            return Err(Refusal::OutOfRange);
        }
        self.state.lock().map_err(|_| Refusal::Busy)?.gain = value;
        Ok(())
    }

    fn clock_ns(&self) -> u64 {
        self.frame.load(Ordering::Relaxed) * 1_000_000
    }
}

fn values(k: u64, gain: f64) -> [f64; 3] {
    let t = k as f64 / 1000.0;
    let tau = std::f64::consts::TAU;
    [gain * (tau * t).sin(), gain * (10.0 * tau * t).sin(), t]
}

/// The demo slave running: its server and its frame thread.
pub struct Running {
    /// The UDP and TCP server.
    pub server: Server,
    stop: Arc<AtomicBool>,
    frames: std::thread::JoinHandle<()>,
}

impl Running {
    /// Stops the frame thread and the server.
    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.frames.join();
        self.server.stop();
    }
}

/// Starts the demo slave on `addr` (UDP and TCP).
pub fn start(addr: SocketAddr) -> std::io::Result<Running> {
    let text = |s: &str| (s.to_string(), None, None, String::new());
    let map = Map::new(
        [text("sine_1hz"), text("sine_10hz"), text("time_s")],
        [text("gain")],
        vec![Event {
            name: "frame 1 ms".into(),
            period_ns: Some(1_000_000),
        }],
    );
    let state = Arc::new(Mutex::new(State {
        values: values(0, 1.0),
        gain: 1.0,
    }));
    let frame = Arc::new(AtomicU64::new(0));
    let identity = Identity {
        a2l_name: "demo_slave".into(),
        a2l: b"ASAP2_VERSION 1 71\n/begin PROJECT demo \"\" /end PROJECT\n".to_vec(),
    };
    let target = Demo {
        state: state.clone(),
        frame: frame.clone(),
    };
    let (slave, mut sampler) = Slave::new(&map, target, identity, vec![1.0]).map_err(std::io::Error::other)?;
    let server = Server::start(slave, addr)?;
    let stop = Arc::new(AtomicBool::new(false));
    let frames = std::thread::spawn({
        let stop = stop.clone();
        move || {
            let mut k = 0u64;
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(1));
                k += 1;
                let now = {
                    let Ok(mut s) = state.lock() else { return };
                    s.values = values(k, s.gain);
                    s.values
                };
                frame.store(k, Ordering::Relaxed);
                sampler.sample(0, k * 1_000_000, &now);
            }
        }
    });
    Ok(Running { server, stop, frames })
}

fn main() -> std::io::Result<()> {
    let addr = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:5555".into());
    let addr = addr
        .parse()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("address {addr:?}: {e}")))?;
    let running = start(addr)?;
    println!("listening {} {}", running.server.udp_addr(), running.server.tcp_addr());
    let _ = std::io::stdin().read_to_end(&mut Vec::new());
    running.stop();
    Ok(())
}
