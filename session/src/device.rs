//! An I/O device of a run (a CAN bus, a serial device) and its lifecycle,
//! as ros2_control's hardware interfaces have it:
//!
//! 1. **configure**: open the transport (when the run talks to the outside
//!    world) and hand over the device's real-time halves: what the fast
//!    thread reads each frame ([`ReadHalf`]) and what writes the frame's
//!    outputs ([`DeviceWriter`]);
//! 2. **activate**: start the device's I/O threads (a receive thread);
//! 3. **read** and **write**: every frame, through the halves, without
//!    allocating, locking or blocking;
//! 4. **deactivate**: stop and join the threads, close the transport.

use std::sync::Arc;
use std::thread::{self, JoinHandle};

use tandem_can::Duplex;
use tandem_runtime::tandem::clock::Nanos;
use tandem_runtime::tandem::control::RunControl;
use tandem_runtime::tandem::placement::{keep_off_core, place_current_thread};
use tandem_runtime::tandem::settings::Placement;

use crate::inputs::ReadHalf;
use crate::log::LogProducer;
use crate::metrics::DeviceMetrics;

/// How a run's devices meet the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traffic {
    /// Transports are opened; receive threads stamp frames on the real clock.
    Live,
    /// No transport: received frames come from a recorded log, sent frames
    /// go to the bus log only.
    Replay,
    /// A run on the virtual clock: no transport but the in-process
    /// (`virtual`) ones, polled at frame boundaries by the run itself;
    /// otherwise nothing is received and sent frames go to the bus log only.
    Offline,
}

/// When a frame sent for a frame's outputs is logged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogClock {
    /// The wall clock at the send (real-time runs).
    Wall,
    /// `origin_ns` plus the frame boundary at which it is due (virtual clock).
    Virtual {
        /// The log's time of the run's time 0.
        origin_ns: i64,
        /// The frame (ns).
        frame_ns: i64,
    },
}

/// What a device is given to configure itself.
pub struct Setup {
    /// Open the transport or not.
    pub traffic: Traffic,
    /// The frame (s).
    pub frame: f64,
    /// Where the device's frames are logged, if anywhere: a producer for
    /// each of its threads is taken from here.
    pub log: Option<LogSetup>,
    /// A transport opened by the run's caller, used instead of opening one
    /// (a bus carried over DCP).
    pub transport: Option<Duplex>,
}

/// Producers of the bus log, and how sends are stamped.
pub struct LogSetup {
    /// A producer for the device's receive side.
    pub rx: LogProducer,
    /// A producer for its transmitting side.
    pub tx: LogProducer,
    /// How sent frames are stamped.
    pub clock: LogClock,
}

/// Where and when a [`DeviceWriter`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// It never blocks: it runs on the fast thread itself, encoding after
    /// each frame and sending at the next frame boundary, with no thread
    /// wake-up in between.
    FastThread,
    /// Its writes may wait: it runs on the transmit thread, which wakes at
    /// the boundary after every this many frames.
    Every(u64),
}

impl Schedule {
    /// On the transmit thread: the first frame at or after `k` after which
    /// something is due.
    pub fn next_due(self, k: u64) -> Option<u64> {
        match self {
            Schedule::FastThread => None,
            Schedule::Every(period) => Some(k.div_ceil(period) * period),
        }
    }
}

/// Writes a frame's outputs to a device: encodes and sends what is due.
/// Must not allocate after start-up.
pub trait DeviceWriter: Send {
    /// Where and when it runs.
    fn schedule(&self) -> Schedule;
    /// Frame `k`'s outputs are `y`: encodes what is due after it (and, on
    /// the transmit thread, sends it).
    fn write(&mut self, k: u64, y: &[f64]);
    /// Frame `k` starts: a writer on the fast thread sends what frame
    /// `k - 1` made due.
    fn boundary(&mut self, k: u64) {
        let _ = k;
    }
    /// Slots `from..to` passed while the fast thread did not run (see
    /// [`OutputSink::skipped`](tandem_runtime::tandem::outputs::OutputSink::skipped)):
    /// what the slot before them made due is stale, not to be sent late,
    /// and goes out with slot `to`'s outputs instead.
    fn skipped(&mut self, from: u64, to: u64) {
        let _ = (from, to);
    }
}

/// A device's real-time halves.
#[derive(Default)]
pub struct Halves {
    /// What the fast thread reads, if the device drives inputs.
    pub read: Option<ReadHalf>,
    /// What writes outputs, if the device carries any.
    pub write: Option<Box<dyn DeviceWriter>>,
}

/// A device could not be configured or activated.
#[derive(Debug, thiserror::Error)]
#[error("{device}: {message}")]
pub struct DeviceError {
    /// The device's name.
    pub device: String,
    /// What went wrong, and the fix.
    pub message: String,
}

/// What kind of device, for reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// A CAN bus: it counts frames.
    Bus,
    /// A serial device: it counts lines.
    Serial,
}

/// An I/O device of a run.
pub trait Device: Send {
    /// Its name in logs and reports.
    fn name(&self) -> &str;
    /// What kind of device.
    fn kind(&self) -> DeviceKind;
    /// Its counters.
    fn metrics(&self) -> &Arc<DeviceMetrics>;
    /// Opens the transport as `setup` says and hands over the real-time
    /// halves. Called once, before any thread starts.
    fn configure(&mut self, setup: Setup) -> Result<Halves, DeviceError>;
    /// Starts the device's threads placed as `io` says (best effort); they
    /// stamp data on the run's clock once `control` has an origin and end
    /// when it asks them to stop.
    fn activate(&mut self, control: &Arc<RunControl>, io: IoPlacement) -> Result<(), DeviceError>;
    /// Stops and joins the device's threads and closes its transport.
    fn deactivate(&mut self);
}

/// Where a run's I/O threads run: at SCHED_FIFO `priority` (below the fast
/// thread, above the implicit one), on any core but the fast thread's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoPlacement {
    /// SCHED_FIFO priority.
    pub priority: u8,
    /// The fast thread's core, if it is pinned.
    pub fast_core: Option<usize>,
}

/// Places the calling I/O thread as `io` says where the system allows it
/// (best effort: without it, the thread runs as a normal one, anywhere).
pub fn prioritize(io: IoPlacement) {
    if let Some(core) = io.fast_core {
        keep_off_core(core);
    }
    let _ = place_current_thread(Placement {
        core: None,
        priority: io.priority,
    });
}

/// A device's I/O thread: started when the device is activated, stopped
/// and joined when it is deactivated.
#[derive(Default)]
pub struct IoThread {
    handle: Option<JoinHandle<()>>,
    control: Option<Arc<RunControl>>,
}

impl IoThread {
    /// Starts `work` on a thread called `name` placed as `io` says,
    /// once the run has its origin (the monotonic time of frame 0, given to
    /// `work` with the run's control); `work` returns when a stop is asked.
    /// `device` names the device in the error.
    pub fn start(
        &mut self,
        name: String,
        device: &str,
        control: &Arc<RunControl>,
        io: IoPlacement,
        work: impl FnOnce(Nanos, &RunControl) + Send + 'static,
    ) -> Result<(), DeviceError> {
        let run = Arc::clone(control);
        let handle = thread::Builder::new()
            .name(name)
            .spawn(move || {
                prioritize(io);
                if let Some(origin) = run.wait_for_origin() {
                    work(origin, &run);
                }
            })
            .map_err(|e| DeviceError {
                device: device.to_string(),
                message: format!("cannot start its receive thread: {e}"),
            })?;
        self.handle = Some(handle);
        self.control = Some(Arc::clone(control));
        Ok(())
    }

    /// Asks the run to stop (its frames are over) and joins the thread.
    pub fn stop(&mut self) {
        if let Some(control) = &self.control {
            control.request_stop();
        }
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}
