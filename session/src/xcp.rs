//! The run's ASAM XCP slave (`[xcp]`, `--xcp`): the model's outputs and
//! inputs are its measurements, the model's tunable parameters its
//! characteristics.
//!
//! - DAQ lists are sampled at the end of each frame on the fast thread by
//!   a [`FrameTap`]: allocation-free, lock-free, stamped with the frame's
//!   time (so a run on the virtual clock gives the same DTOs every time).
//! - Events: channel 0 is the frame; then one per discrete rate of the
//!   model (sampled at the frames it hits); then, per bus, its receive and
//!   its transmit (sampled at the end of a frame in which the bus received,
//!   or sent, at least one frame).
//! - A DOWNLOAD to a characteristic goes through the run's [`Controls`]:
//!   the two-phase change both integrator threads swap in at one frame
//!   boundary. The reference page holds the values as loaded.
//! - On the virtual clock the run waits for the DTOs to be sent rather
//!   than let the ring overflow, and with `wait` it starts only once a
//!   master has started DAQ and, at its end, closes only once the master
//!   has disconnected (or [`LINGER`] has passed).

use std::io;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tandem_models::Layout;
use tandem_runtime::tandem::clock::nanos;
use tandem_runtime::tandem::outputs::FrameTap;
use tandem_xcp::a2l::{a2l, object_identifiers, Protocol, SlaveInfo, Transport};
use tandem_xcp::daq::{link, Link};
use tandem_xcp::map::{Event, Kind, Map};
use tandem_xcp::{Identity, Refusal, Sampler, Server, Slave, SlaveError, Sockets, Target};

use crate::controls::{ControlError, Controls};
use crate::metrics::DeviceMetrics;

/// How long a run that waits for its master keeps serving it after the
/// last frame, for the DTOs still queued and the master's DISCONNECT.
pub const LINGER: Duration = Duration::from_secs(10);
/// On the virtual clock, the ring's fill (bytes) above which the run waits
/// for the DTOs to be sent: half the ring, so one more frame always fits.
const VIRTUAL_BACKLOG: usize = tandem_xcp::daq::DTO_RING_BYTES / 2;
/// How often a waiting run looks again.
const WAIT_POLL: Duration = Duration::from_millis(1);

/// A run's XCP slave, as asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct XcpOptions {
    /// Where masters reach it, over UDP and TCP.
    pub listen: SocketAddr,
    /// Where to write its A2L file before the run starts.
    pub a2l: Option<PathBuf>,
    /// Start the frames only once a master has started DAQ, and close only
    /// once it has disconnected (or [`LINGER`] has passed).
    pub wait: bool,
}

/// A calibration made over XCP.
#[derive(Clone, Debug, PartialEq)]
pub struct Calibration {
    /// The characteristic, as the A2L names it (`ev.mass` for parameter
    /// `mass` of block `ev`).
    pub parameter: String,
    /// The value written.
    pub value: f64,
    /// The frame the run had reached when the DOWNLOAD was acknowledged.
    pub acknowledged_at: u64,
    /// The frame it took effect at on both integrator threads (none when
    /// the run ended first).
    pub applied_at: Option<u64>,
    /// The change's number among the run's parameter changes.
    seq: u64,
}

/// What the XCP slave did in a run.
#[derive(Clone, Debug, PartialEq)]
pub struct XcpReport {
    /// Where it listened for UDP.
    pub udp: SocketAddr,
    /// Where it listened for TCP.
    pub tcp: SocketAddr,
    /// The A2L file written, if one was.
    pub a2l: Option<PathBuf>,
    /// DTOs sent to masters.
    pub dtos_sent: u64,
    /// DAQ samples dropped because the DTO ring was full (each flagged to
    /// the master in the next DTO's PID).
    pub overruns: u64,
    /// DTOs sampled and never sent (the master left, or did not read them
    /// before the slave closed), in bytes.
    pub unsent_bytes: usize,
    /// The calibrations, in the order they were acknowledged.
    pub calibrations: Vec<Calibration>,
}

/// Why a run's XCP slave cannot start.
#[derive(Debug, thiserror::Error)]
pub enum XcpError {
    /// The address cannot be listened on.
    #[error("xcp: cannot listen on {address} (UDP and TCP): {cause}; pick a free port, or 0 for any")]
    Listen {
        /// The address.
        address: SocketAddr,
        /// What the system said.
        cause: io::Error,
    },
    /// The A2L file cannot be written.
    #[error("xcp: cannot write the A2L file {}: {cause}", path.display())]
    A2l {
        /// The file.
        path: PathBuf,
        /// What the system said.
        cause: io::Error,
    },
    /// The slave refused the run's map.
    #[error("xcp: {0}")]
    Slave(#[from] SlaveError),
}

/// The latest frame's measurement values, for SHORT_UPLOAD and UPLOAD
/// (polling) beside DAQ. The fast thread publishes them only while a
/// master polls (storing every value each frame costs it about a
/// microsecond at a hundred measurements): a poll asks for them for the
/// next [`POLL_WINDOW`] and waits, briefly, for a frame to publish.
struct Latest {
    /// Frames ended.
    frames: AtomicU64,
    /// The frame count up to which the values are asked for.
    asked_until: AtomicU64,
    /// The frame count when they were last published.
    published: AtomicU64,
    values: Vec<AtomicU64>,
}

/// How long the values stay published after a poll.
const POLL_WINDOW: Duration = Duration::from_secs(1);

impl Latest {
    /// Publishes `values` at the end of frame `k`, when asked.
    fn offer(&self, k: u64, values: &[f64]) {
        if k < self.asked_until.load(Ordering::Relaxed) {
            for (slot, v) in self.values.iter().zip(values) {
                slot.store(v.to_bits(), Ordering::Relaxed);
            }
            self.published.store(k + 1, Ordering::Release);
        }
        self.frames.store(k + 1, Ordering::Release);
    }

    /// Value `index` of a frame that ended after this call, or, when none
    /// does within `patience` (the run waits or has ended), the newest
    /// published; `window` frames make [`POLL_WINDOW`].
    fn poll(&self, index: usize, window: u64, patience: Duration) -> f64 {
        let now = self.frames.load(Ordering::Acquire);
        self.asked_until.fetch_max(now + window, Ordering::Relaxed);
        let until = Instant::now() + patience;
        while self.published.load(Ordering::Acquire) <= now && Instant::now() < until {
            std::thread::sleep(Duration::from_micros(100));
        }
        f64::from_bits(self.values[index].load(Ordering::Relaxed))
    }
}

/// A bus whose receive and transmit are events.
struct BusWatch {
    metrics: Arc<DeviceMetrics>,
    rx: u64,
    tx: u64,
    /// Its receive event; transmit is the next.
    event: u16,
}

/// Samples the DAQ lists at each frame's end on the fast thread.
struct DaqTap {
    sampler: Sampler,
    /// The outputs, then the inputs: measurement `i` is `values[i]`.
    values: Vec<f64>,
    outputs: usize,
    frame_ns: u64,
    buses: Vec<BusWatch>,
    latest: Arc<Latest>,
}

impl FrameTap for DaqTap {
    fn frame_end(&mut self, k: u64, u: &[f64], y: &[f64], rate_hits: &[bool]) {
        let (outputs, inputs) = self.values.split_at_mut(self.outputs);
        outputs.copy_from_slice(y);
        inputs.copy_from_slice(u);
        self.latest.offer(k, &self.values);
        let t = k * self.frame_ns;
        self.sampler.sample(0, t, &self.values);
        for (r, _) in rate_hits.iter().enumerate().filter(|(_, &hit)| hit) {
            self.sampler.sample(1 + r as u16, t, &self.values);
        }
        for bus in &mut self.buses {
            let (rx, tx) = (bus.metrics.rx_frames.get(), bus.metrics.tx_frames.get());
            if rx != bus.rx {
                bus.rx = rx;
                self.sampler.sample(bus.event, t, &self.values);
            }
            if tx != bus.tx {
                bus.tx = tx;
                self.sampler.sample(bus.event + 1, t, &self.values);
            }
        }
    }
}

/// A characteristic: the block parameter it sets, and its name.
struct Characteristic {
    block: String,
    param: String,
    /// Its identifier in the A2L (`ev.mass`), which masters know it by.
    name: String,
}

/// What the slave measures and calibrates: the run.
struct RunTarget {
    latest: Arc<Latest>,
    controls: Controls,
    /// The characteristics, in address order.
    parameters: Vec<Characteristic>,
    frame_ns: u64,
    calibrations: Arc<Mutex<Vec<Calibration>>>,
    /// Set once the frames have ended: a change could not take effect.
    ended: Arc<AtomicBool>,
}

impl Target for RunTarget {
    fn measure(&self, index: usize) -> f64 {
        let window = (POLL_WINDOW.as_nanos() as u64 / self.frame_ns).max(1);
        // Three frames, and some slack for a thread woken late.
        let patience = Duration::from_nanos(3 * self.frame_ns) + Duration::from_millis(2);
        self.latest.poll(index, window, patience)
    }

    /// A change the model refuses (one that would alter its shape, or a
    /// value outside what the parameter takes), or one after the last
    /// frame, is `ERR_ACCESS_DENIED`; a value that is not finite
    /// `ERR_OUT_OF_RANGE`; too many changes waiting `ERR_CMD_BUSY`.
    fn calibrate(&mut self, index: usize, value: f64) -> Result<(), Refusal> {
        if !value.is_finite() {
            return Err(Refusal::OutOfRange);
        }
        if self.ended.load(Ordering::Acquire) {
            return Err(Refusal::Denied);
        }
        let c = &self.parameters[index];
        match self.controls.set_parameter(&c.block, &c.param, &Value::from(value)) {
            Ok((seq, _)) => {
                let calibration = Calibration {
                    parameter: c.name.clone(),
                    value,
                    acknowledged_at: self.controls.frames(),
                    applied_at: None,
                    seq,
                };
                self.calibrations
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(calibration);
                Ok(())
            }
            Err(ControlError::Busy(_)) => Err(Refusal::Busy),
            Err(_) => Err(Refusal::Denied),
        }
    }

    fn clock_ns(&self) -> u64 {
        self.latest.frames.load(Ordering::Acquire) * self.frame_ns
    }
}

/// The address space of a run: the outputs then the inputs as
/// measurements, the numeric tunable parameters as characteristics (with
/// their values as loaded, their block and parameter, and their A2L
/// names), and the events.
fn run_map(
    layout: &Layout,
    tunables: Vec<(String, String, Value)>,
    frame_ns: u64,
    buses: &[String],
) -> (Map, Vec<f64>, Vec<Characteristic>) {
    let measurements = (layout.outputs.iter().map(|v| (v, "output")))
        .chain(layout.inputs.iter().map(|v| (v, "input")))
        .map(|(v, what)| {
            (
                v.name.clone(),
                v.unit.clone(),
                v.range,
                format!("the model's {what} {}", v.name),
            )
        });
    let numeric: Vec<(String, String, f64)> = tunables
        .into_iter()
        .filter_map(|(block, param, value)| Some((block, param, value.as_f64()?)))
        .collect();
    let characteristics = numeric.iter().map(|(block, param, _)| {
        (
            format!("{block}/{param}"),
            None,
            None,
            format!("parameter {param} of {block}"),
        )
    });
    let frame = Event {
        name: "frame".into(),
        period_ns: Some(frame_ns),
    };
    let rates = layout.rates.iter().map(|r| Event {
        name: format!("rate {} s", r.period),
        period_ns: Some(nanos(r.period) as u64),
    });
    let bus_events = buses.iter().flat_map(|bus| {
        ["rx", "tx"].map(|way| Event {
            name: format!("{bus} {way}"),
            period_ns: None,
        })
    });
    let events = std::iter::once(frame).chain(rates).chain(bus_events).collect();
    let map = Map::new(measurements, characteristics, events);
    let reference = numeric.iter().map(|(_, _, v)| *v).collect();
    let names = (map.objects.iter().zip(object_identifiers(&map)))
        .filter(|(o, _)| o.kind == Kind::Characteristic)
        .map(|(_, name)| name);
    let parameters = (numeric.into_iter().zip(names))
        .map(|((block, param, _), name)| Characteristic { block, param, name })
        .collect();
    (map, reference, parameters)
}

/// A run's XCP slave between [`XcpSetup::prepare`] (before the tandem is
/// assembled: the fast thread's tap) and [`XcpSetup::serve`] (once the
/// run's controls exist).
pub(crate) struct XcpSetup {
    options: XcpOptions,
    map: Map,
    reference: Vec<f64>,
    parameters: Vec<Characteristic>,
    link: Link,
    latest: Arc<Latest>,
    sockets: Sockets,
    frame_ns: u64,
}

impl XcpSetup {
    /// Binds the sockets and makes the tap the fast thread samples with.
    /// `buses` are the run's buses with their counters.
    pub(crate) fn prepare(
        options: XcpOptions,
        layout: &Layout,
        tunables: Vec<(String, String, Value)>,
        frame: f64,
        buses: &[(String, Arc<DeviceMetrics>)],
    ) -> Result<(XcpSetup, Box<dyn FrameTap>), XcpError> {
        let frame_ns = nanos(frame) as u64;
        let names: Vec<String> = buses.iter().map(|(name, _)| name.clone()).collect();
        let (map, reference, parameters) = run_map(layout, tunables, frame_ns, &names);
        let sockets = Sockets::bind(options.listen).map_err(|cause| XcpError::Listen {
            address: options.listen,
            cause,
        })?;
        let (link, sampler) = link();
        let measurements = layout.outputs.len() + layout.inputs.len();
        let latest = Arc::new(Latest {
            frames: AtomicU64::new(0),
            asked_until: AtomicU64::new(0),
            published: AtomicU64::new(0),
            values: (0..measurements).map(|_| AtomicU64::new(0)).collect(),
        });
        let first_bus_event = 1 + layout.rates.len() as u16;
        let tap = DaqTap {
            sampler,
            values: vec![0.0; measurements],
            outputs: layout.outputs.len(),
            frame_ns,
            buses: buses
                .iter()
                .enumerate()
                .map(|(i, (_, metrics))| BusWatch {
                    metrics: Arc::clone(metrics),
                    rx: 0,
                    tx: 0,
                    event: first_bus_event + 2 * i as u16,
                })
                .collect(),
            latest: Arc::clone(&latest),
        };
        let setup = XcpSetup {
            options,
            map,
            reference,
            parameters,
            link,
            latest,
            sockets,
            frame_ns,
        };
        Ok((setup, Box::new(tap)))
    }

    /// Writes the A2L file (when asked) and serves the slave, calibrating
    /// through `controls`; `name` is the run's (the A2L project's).
    pub(crate) fn serve(self, name: &str, controls: Controls, results: &Path) -> Result<XcpRun, XcpError> {
        let listen = |cause| XcpError::Listen {
            address: self.options.listen,
            cause,
        };
        let udp = self.sockets.udp_addr().map_err(listen)?;
        let tcp = self.sockets.tcp_addr().map_err(listen)?;
        let info = SlaveInfo::of_slave(
            name.to_string(),
            format!("Tandem run of {name}"),
            vec![
                Transport {
                    protocol: Protocol::Udp,
                    address: udp,
                },
                Transport {
                    protocol: Protocol::Tcp,
                    address: tcp,
                },
            ],
        );
        let text = a2l(&self.map, &info);
        let a2l_file = match &self.options.a2l {
            Some(path) => {
                let path = if path.is_absolute() {
                    path.clone()
                } else {
                    results.join(path)
                };
                std::fs::write(&path, &text).map_err(|cause| XcpError::A2l {
                    path: path.clone(),
                    cause,
                })?;
                Some(path)
            }
            None => None,
        };
        let a2l_name = a2l_file
            .as_deref()
            .and_then(Path::file_stem)
            .map_or_else(|| name.to_string(), |s| s.to_string_lossy().into_owned());
        let calibrations = Arc::new(Mutex::new(Vec::new()));
        let ended = Arc::new(AtomicBool::new(false));
        let target = RunTarget {
            ended: Arc::clone(&ended),
            latest: self.latest,
            controls: controls.clone(),
            parameters: self.parameters,
            frame_ns: self.frame_ns,
            calibrations: Arc::clone(&calibrations),
        };
        let identity = Identity {
            a2l_name,
            a2l: text.into_bytes(),
        };
        let slave = Slave::linked(&self.map, target, identity, self.reference, self.link)?;
        let server = self.sockets.serve(slave).map_err(listen)?;
        Ok(XcpRun {
            server,
            udp,
            tcp,
            a2l: a2l_file,
            wait: self.options.wait,
            controls,
            calibrations,
            ended,
        })
    }
}

/// A run's XCP slave, serving.
pub(crate) struct XcpRun {
    server: Server,
    udp: SocketAddr,
    tcp: SocketAddr,
    a2l: Option<PathBuf>,
    wait: bool,
    controls: Controls,
    calibrations: Arc<Mutex<Vec<Calibration>>>,
    ended: Arc<AtomicBool>,
}

impl XcpRun {
    /// Where masters reach it: UDP, TCP.
    pub(crate) fn addresses(&self) -> (SocketAddr, SocketAddr) {
        (self.udp, self.tcp)
    }

    /// Blocks until a master has started DAQ, when the run waits for one,
    /// or until `stop` is set.
    pub(crate) fn wait_for_master(&self, stop: &AtomicBool) {
        while self.wait && !self.server.status().daq_started && !stop.load(Ordering::Acquire) {
            std::thread::sleep(WAIT_POLL);
        }
    }

    /// On the virtual clock, after a frame: waits while the DTO ring is
    /// more than half full and a master is there to empty it.
    pub(crate) fn relieve(&self) {
        loop {
            let status = self.server.status();
            if status.pending_bytes <= VIRTUAL_BACKLOG || !status.connected {
                return;
            }
            std::thread::sleep(WAIT_POLL);
        }
    }

    /// After the last frame: gives the master the DTOs still queued (and,
    /// when the run waits for it, its DISCONNECT) for up to [`LINGER`],
    /// stops serving and reports.
    pub(crate) fn finish(mut self) -> XcpReport {
        self.ended.store(true, Ordering::Release);
        let until = Instant::now() + LINGER;
        while Instant::now() < until {
            let status = self.server.status();
            let drained = status.pending_bytes == 0 || !status.connected;
            if drained && !(self.wait && status.connected) {
                break;
            }
            std::thread::sleep(WAIT_POLL);
        }
        let status = self.server.status();
        self.server.stop();
        let applied = self.controls.applied();
        let mut calibrations = std::mem::take(&mut *self.calibrations.lock().unwrap_or_else(PoisonError::into_inner));
        for c in &mut calibrations {
            c.applied_at = applied.iter().find(|a| a.seq == c.seq).map(|a| a.frame);
        }
        XcpReport {
            udp: self.udp,
            tcp: self.tcp,
            a2l: self.a2l,
            dtos_sent: status.dtos_sent,
            overruns: status.overruns,
            unsent_bytes: status.pending_bytes,
            calibrations,
        }
    }
}
