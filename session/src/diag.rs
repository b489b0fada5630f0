//! A bus's diagnostic server (`[bus.diagnostics]`): a UDS server on
//! ISO-TP, on a node of its own on the bus's transport, answered from a
//! thread of its own. The fast thread publishes the values it reads at each
//! frame's end into atomics (`DiagTap`): a store per DID and per DTC,
//! no lock, no allocation. The server thread reads the newest of them per
//! request, and reports each DTC's test as failing when its output was
//! above 0.5 at any frame since the last request (so a short failure
//! between two requests still confirms it) and at the newest frame.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tandem_can::CanId;
use tandem_config::{ConfigError, DiagnosticsConfig, RunConfig, TransportConfig};
use tandem_models::Layout;
use tandem_runtime::tandem::outputs::FrameTap;
use tandem_uds::isotp::{Addressing, Config as IsoTpConfig, Link};
use tandem_uds::{Did, Encoding, Server, ServerConfig, NEGATIVE_RESPONSE};

use crate::bus::open_transport;
use crate::device::DeviceError;
use crate::lookup::port;
use crate::metrics::DeviceMetrics;

/// The longest request or response (an ISO-TP classic first frame's bound).
const MAX_MESSAGE: usize = 4095;
/// How long the server thread waits for a request before looking at the stop flag.
const POLL: Duration = Duration::from_millis(20);
/// How long a response may take to leave.
const SEND_TIMEOUT: Duration = Duration::from_secs(2);

/// Where a DID's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Output(usize),
    Input(usize),
}

/// A bus's diagnostics bound to the model: ports as indices.
pub struct DiagPlan {
    bus: String,
    transport: TransportConfig,
    isotp: IsoTpConfig,
    server: ServerConfig,
    dids: Vec<Source>,
    dtcs: Vec<usize>,
}

impl DiagPlan {
    /// The bus it serves.
    pub fn bus(&self) -> &str {
        &self.bus
    }

    /// Whether its bus is inside the process (which the virtual clock
    /// opens too).
    pub fn in_process(&self) -> bool {
        matches!(self.transport, TransportConfig::Virtual { .. })
    }
}

/// Binds `diagnostics` of bus `bus` (on `transport`) to the model's `layout`.
pub(crate) fn bind(
    config: &RunConfig,
    bus: &str,
    transport: &TransportConfig,
    diagnostics: &DiagnosticsConfig,
    layout: &Layout,
) -> Result<DiagPlan, ConfigError> {
    let d = diagnostics;
    let mut dids = Vec::with_capacity(d.dids.len());
    let mut served = Vec::with_capacity(d.dids.len());
    for did in &d.dids {
        let named = |ports: &[tandem_models::Variable]| ports.iter().position(|v| v.name == did.signal.value);
        let source = match (named(&layout.outputs), named(&layout.inputs)) {
            (Some(i), _) => Source::Output(i),
            (None, Some(i)) => Source::Input(i),
            (None, None) => {
                let names = |ports: &[tandem_models::Variable]| {
                    ports.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(", ")
                };
                return Err(config.error_at(
                    &did.signal,
                    format!(
                        "the model has no output or input \"{}\"; its outputs: {}; its inputs: {}",
                        did.signal.value,
                        names(&layout.outputs),
                        names(&layout.inputs)
                    ),
                ));
            }
        };
        dids.push(source);
        served.push(Did {
            id: did.id,
            encoding: Encoding {
                bytes: did.bytes,
                signed: did.signed,
                scale: did.scale,
                offset: did.offset,
            },
        });
    }
    let dtcs = (d.dtcs.iter())
        .map(|dtc| port(config, "output", &layout.outputs, &dtc.output))
        .collect::<Result<Vec<_>, _>>()?;
    let id = |raw: u32| {
        if d.extended_id {
            CanId::Extended(raw)
        } else {
            CanId::Standard(raw as u16)
        }
    };
    let isotp = IsoTpConfig {
        addressing: d
            .addresses
            .map_or(Addressing::Normal, |(ecu, tester)| Addressing::Extended {
                tx: tester,
                rx: ecu,
            }),
        fd: d.fd,
        tx_dl: if d.fd { 64 } else { 8 },
        padding: d.padding,
        block_size: d.block_size,
        st_min: d.st_min,
        max_len: MAX_MESSAGE,
        ..IsoTpConfig::classic(id(d.response_id), id(d.request_id))
    };
    let server = ServerConfig {
        max_response: MAX_MESSAGE,
        ..ServerConfig::new(served, d.dtcs.iter().map(|dtc| dtc.code).collect())
    };
    Ok(DiagPlan {
        bus: bus.to_string(),
        transport: transport.clone(),
        isotp,
        server,
        dids,
        dtcs,
    })
}

/// What the fast thread publishes for the server thread.
struct Published {
    /// Each DID's newest value (f64 bits; NaN before the first frame).
    values: Vec<AtomicU64>,
    /// Each DTC's output above 0.5 at the newest frame.
    failing: Vec<AtomicBool>,
    /// Each DTC's output above 0.5 at a frame since the server last looked.
    failed: Vec<AtomicBool>,
}

/// Publishes the values the diagnostic servers read, at each frame's end
/// on the fast thread.
pub(crate) struct DiagTap {
    servers: Vec<(Arc<Published>, Vec<Source>, Vec<usize>)>,
}

impl FrameTap for DiagTap {
    fn frame_end(&mut self, _k: u64, u: &[f64], y: &[f64], _rate_hits: &[bool]) {
        for (published, dids, dtcs) in &self.servers {
            for (slot, source) in published.values.iter().zip(dids) {
                let value = match *source {
                    Source::Output(i) => y[i],
                    Source::Input(i) => u[i],
                };
                slot.store(value.to_bits(), Ordering::Relaxed);
            }
            for ((now, since), &output) in published.failing.iter().zip(&published.failed).zip(dtcs) {
                let failing = y[output] > 0.5;
                now.store(failing, Ordering::Relaxed);
                if failing {
                    since.store(true, Ordering::Relaxed);
                }
            }
        }
    }
}

/// The running servers; dropping them stops and joins their threads.
pub(crate) struct DiagServers {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Drop for DiagServers {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// Opens each plan's node on its bus and starts its server thread, counting
/// in its bus's metrics; the tap feeds them. `None` when there is no plan.
pub(crate) fn start(plans: Vec<(DiagPlan, Arc<DeviceMetrics>)>) -> Result<Option<(DiagServers, DiagTap)>, DeviceError> {
    if plans.is_empty() {
        return Ok(None);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let mut servers = DiagServers {
        stop: Arc::clone(&stop),
        threads: Vec::new(),
    };
    let mut tap = DiagTap { servers: Vec::new() };
    for (plan, metrics) in plans {
        let device = || format!("bus {} diagnostics", plan.bus);
        let fail = |message: String| DeviceError {
            device: device(),
            message,
        };
        let duplex = open_transport(&plan.transport).map_err(|e| fail(e.to_string()))?;
        let link = Link::new(plan.isotp, duplex).map_err(|e| fail(e.to_string()))?;
        let server = Server::new(plan.server).map_err(|e| fail(e.to_string()))?;
        let published = Arc::new(Published {
            values: plan.dids.iter().map(|_| AtomicU64::new(f64::NAN.to_bits())).collect(),
            failing: plan.dtcs.iter().map(|_| AtomicBool::new(false)).collect(),
            failed: plan.dtcs.iter().map(|_| AtomicBool::new(false)).collect(),
        });
        let serving = Serving {
            link,
            server,
            published: Arc::clone(&published),
            values: vec![f64::NAN; plan.dids.len()],
            request: vec![0; MAX_MESSAGE],
            stop: Arc::clone(&stop),
            metrics,
        };
        let thread = std::thread::Builder::new()
            .name(format!("diag-{}", plan.bus))
            .spawn(move || serving.run())
            .map_err(|e| fail(format!("cannot start its thread: {e}")))?;
        servers.threads.push(thread);
        tap.servers.push((published, plan.dids, plan.dtcs));
    }
    Ok(Some((servers, tap)))
}

/// One server thread's state.
struct Serving {
    link: Link,
    server: Server,
    published: Arc<Published>,
    values: Vec<f64>,
    request: Vec<u8>,
    stop: Arc<AtomicBool>,
    metrics: Arc<DeviceMetrics>,
}

impl Serving {
    /// Answers requests until stopped, counting them. A transport error or
    /// a response that cannot leave is counted and costs that request only
    /// (the tester repeats it).
    fn run(mut self) {
        let epoch = Instant::now();
        while !self.stop.load(Ordering::Relaxed) {
            let len = match self.link.recv(POLL) {
                Ok(Some(request)) => {
                    self.request[..request.len()].copy_from_slice(request);
                    request.len()
                }
                Ok(None) => continue,
                Err(_) => {
                    self.metrics.uds_errors.increment();
                    std::thread::sleep(POLL);
                    continue;
                }
            };
            let published = &self.published;
            for (value, slot) in self.values.iter_mut().zip(&published.values) {
                *value = f64::from_bits(slot.load(Ordering::Relaxed));
            }
            for (i, (now, since)) in published.failing.iter().zip(&published.failed).enumerate() {
                if since.swap(false, Ordering::Relaxed) {
                    self.server.report(i, true);
                }
                self.server.report(i, now.load(Ordering::Relaxed));
            }
            let now = epoch.elapsed().as_nanos() as u64;
            self.metrics.uds_requests.increment();
            if let Some(response) = self.server.handle(&self.request[..len], &self.values, now) {
                if response.first() == Some(&NEGATIVE_RESPONSE) {
                    self.metrics.uds_negative.increment();
                }
                if self.link.send(response, SEND_TIMEOUT).is_err() {
                    self.metrics.uds_errors.increment();
                }
            }
        }
    }
}
