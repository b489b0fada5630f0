//! A run of a bound configuration: the tandem's two sides, the devices
//! with their lifecycle, the recording and the bus log, on the real or the
//! virtual clock, watched by an observer, ending in a [`Report`].
//!
//! [`Session::new`] does everything that may fail or allocate (preflight,
//! files, transports, the tandem's parts); [`Session::run`] starts the
//! threads, watches them from the calling (normal) thread, stops every
//! thread it started, and reports. A run that stops early (a diverged
//! explicit method, a receive-timeout fault) still reports.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tandem_can::Duplex;
use tandem_config::bounds::{check_output_size, OutputTooLarge};
use tandem_models::Layout;
use tandem_runtime::linalg::Chosen;
use tandem_runtime::record::{CsvRecorder, Recorder};
use tandem_runtime::tandem::assemble::{assemble, RecordPlan, SetupError, Wiring};
use tandem_runtime::tandem::clock::{nanos, Nanos};
use tandem_runtime::tandem::control::RunControl;
use tandem_runtime::tandem::fast::FastSide;
use tandem_runtime::tandem::implicit_side::ImplicitSide;
use tandem_runtime::tandem::inputs::{InputSource, Profile, Signals};
use tandem_runtime::tandem::metrics::{Counter, Metrics};
use tandem_runtime::tandem::outputs::{FrameTap, OutputSink};
use tandem_runtime::tandem::preflight::{preflight, Preflight};
use tandem_runtime::tandem::recording::RowReceiver;
use tandem_runtime::tandem::threads::{run_realtime, STOP_GRACE};
use tandem_runtime::tandem::virtual_clock::{run_virtual, VirtualCosts};
use tandem_runtime::tandem::{ImplicitWork, TandemSettings};

use crate::bind::{BoundBus, BoundRecording, BoundSerial, Plan};
use crate::bus::{BusDevice, BusFeed, InlineBus};
use crate::controls::{Controls, InputOverrides, Overridden};
use crate::device::{Device, DeviceError, DeviceKind, Halves, IoPlacement, LogClock, LogSetup, Setup, Traffic};
use crate::diag::{self, DiagServers};
use crate::fault::{FaultQueue, FaultTrigger};
use crate::inputs::{DeviceInputs, Fault};
use crate::log::{wall_ns, BusLogWriter, LogHub};
use crate::mapping::BusMap;
use crate::replay::{LogFeed, ReplayError};
use crate::report::devices::DeviceView;
use crate::report::live::LiveStats;
use crate::report::{RecordingReport, ReplayReport, Report, TAP_DIAGNOSTICS, TAP_XCP};
use crate::serial::SerialDevice;
use crate::transmit::{transmit_paths, SendAtFrameEnd, Transmitter};
use crate::xcp::{XcpError, XcpOptions, XcpRun, XcpSetup};

/// Every how many frames a run on the virtual clock hands its recorded
/// rows to the observer (and the CSV file) unless told otherwise: often
/// enough for a paced run's live plot, seldom enough to batch them.
const VIRTUAL_DRAIN: u64 = 32;

/// How far (s of wall time) a paced run on the virtual clock may get ahead
/// of its pace before it sleeps: sleeping per frame would cost more than
/// the frames.
const PACE_SLACK: f64 = 0.002;

/// Which clock a session runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockMode {
    /// Real threads on the monotonic clock.
    Real,
    /// Both sides interleaved on the calling thread in virtual time, with
    /// the configuration's costs and injected faults: deterministic.
    Virtual,
}

/// How a session runs, beyond its configuration.
pub struct Options {
    /// The clock.
    pub clock: ClockMode,
    /// Refuse to start unless every real-time check passes.
    pub require_rt: bool,
    /// Where relative output files (the recording, the bus log) go; created
    /// when something is written there.
    pub results: PathBuf,
    /// The bus log, instead of the configuration's `record.bus_log`.
    pub bus_log: Option<PathBuf>,
    /// A recorded log whose frames are fed to the buses instead of their
    /// transports.
    pub replay: Option<LogFeed>,
    /// How often the observer sees live statistics (run time).
    pub live_interval: Option<Duration>,
    /// Allow a recording above [`MAX_OUTPUT_VALUES`](tandem_config::bounds::MAX_OUTPUT_VALUES).
    pub large_output: bool,
    /// On the virtual clock, every how many frames the recorded rows are
    /// handed to the observer (1: before each [`Observer::tick`]).
    pub virtual_drain: u64,
    /// On the real clock, the `CLOCK_MONOTONIC` time (ns) of frame 0, when
    /// it is agreed with others (a federation's common start); otherwise
    /// the run starts as soon as its threads are ready.
    pub start_at: Option<Nanos>,
    /// Transports opened by the caller, by bus name: a bus whose transport
    /// is `dcp` takes its own from here.
    pub transports: BTreeMap<String, Duplex>,
    /// The run's XCP slave, instead of the plan's (`[xcp]`).
    pub xcp: Option<XcpOptions>,
    /// On the virtual clock, run time per wall time (1: as fast as the
    /// real clock; none: as fast as possible).
    pub pace: Option<f64>,
}

impl Options {
    /// A run on `clock` writing into `results`, with nothing else asked.
    pub fn new(clock: ClockMode, results: impl Into<PathBuf>) -> Self {
        Options {
            clock,
            require_rt: false,
            results: results.into(),
            bus_log: None,
            replay: None,
            live_interval: None,
            large_output: false,
            virtual_drain: VIRTUAL_DRAIN,
            start_at: None,
            transports: BTreeMap::new(),
            xcp: None,
            pace: None,
        }
    }
}

/// Watches a running session from the calling thread (a normal thread:
/// nothing here delays the real-time threads).
pub trait Observer {
    /// Every `live_interval` of run time: `stats` covers the interval that
    /// ends at run time `t` (s).
    fn live(&mut self, t: f64, stats: &mut LiveStats) {
        let _ = (t, stats);
    }

    /// Each recorded row, in order, as it is drained: the frame's time and
    /// the recorded outputs.
    fn record(&mut self, t: f64, y: &[f64]) {
        let _ = (t, y);
    }

    /// While the frames run, at each poll of the watching thread (on the
    /// virtual clock, after each frame and its sends, before the in-process
    /// buses receive for the next) with `running`; once more with `running`
    /// false when the real-time work has stopped, before the session closes
    /// its devices and files.
    fn tick(&mut self, running: bool) {
        let _ = running;
    }

    /// On the virtual clock, after the in-process buses have received for
    /// the next frame, before it starts. Runs sharing such buses advance in
    /// lock-step by waiting in both calls: every run's sends done before any
    /// receives (in `tick`), every run's receives done before any computes
    /// on (here).
    fn received(&mut self) {}
}

/// An observer that watches nothing.
impl Observer for () {}

/// Two observers, each shown everything, the first first.
impl<A: Observer, B: Observer> Observer for (A, B) {
    fn live(&mut self, t: f64, stats: &mut LiveStats) {
        self.0.live(t, stats);
        self.1.live(t, stats);
    }

    fn record(&mut self, t: f64, y: &[f64]) {
        self.0.record(t, y);
        self.1.record(t, y);
    }

    fn tick(&mut self, running: bool) {
        self.0.tick(running);
        self.1.tick(running);
    }

    fn received(&mut self) {
        self.0.received();
        self.1.received();
    }
}

/// A session that cannot be built or run.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// `require_rt` was asked and a real-time check failed.
    #[error("--require-rt: missing {missing}; fix them or run without --require-rt (soft real time)")]
    NotRealTime {
        /// The checks that failed.
        missing: String,
        /// The whole preflight.
        preflight: Box<Preflight>,
    },
    /// A device could not be configured or activated.
    #[error(transparent)]
    Device(#[from] DeviceError),
    /// The tandem cannot run this model with these settings.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The recording would be larger than the bound, and was not allowed.
    #[error(transparent)]
    OutputTooLarge(#[from] OutputTooLarge),
    /// An output file cannot be created or written.
    #[error("{what} {}: {cause}", path.display())]
    File {
        /// What the file is for.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What the system said.
        cause: io::Error,
    },
    /// The replayed log cannot be read.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The XCP slave cannot start.
    #[error(transparent)]
    Xcp(#[from] XcpError),
    /// A session that shares the process's virtual clock with others
    /// (advanced frame by frame in lock-step) was given stalls of its own.
    #[error("virtual_clock.stalls stop one session's own clock, which sessions sharing the process's virtual clock in lock-step cannot follow; run this configuration with `tandem run --virtual-clock`, or without its stalls")]
    StallsOnSharedClock,
    /// A thread could not be started.
    #[error("cannot start the {what} thread: {cause}")]
    Thread {
        /// Which thread.
        what: &'static str,
        /// What the system said.
        cause: io::Error,
    },
}

/// A recording's CSV file, and where it is.
type CsvFile = (CsvRecorder<BufWriter<File>>, PathBuf);

/// The recording: the fast thread's rows, drained to the observer and
/// into a CSV file.
struct Recording {
    rows: RowReceiver,
    csv: Option<CsvFile>,
    /// The CSV file, kept for the report after `csv` is closed.
    file: Option<PathBuf>,
    written: usize,
    error: Option<io::Error>,
}

/// Recorded rows as they reach the observer (and the CSV file).
struct Rows<'a> {
    csv: Option<&'a mut CsvRecorder<BufWriter<File>>>,
    observer: &'a mut dyn Observer,
}

impl Recorder for Rows<'_> {
    fn record(&mut self, t: f64, y: &[f64]) -> io::Result<()> {
        self.observer.record(t, y);
        match self.csv.as_mut() {
            Some(csv) => csv.record(t, y),
            None => Ok(()),
        }
    }
    fn record_labelled(&mut self, t: f64, y: &[f64], label: &'static str) -> io::Result<()> {
        self.observer.record(t, y);
        match self.csv.as_mut() {
            Some(csv) => csv.record_labelled(t, y, label),
            None => Ok(()),
        }
    }
}

impl Recording {
    /// Hands what the ring holds to `observer` and writes it to the CSV
    /// file; the first write error is kept and reported at the end (the
    /// rest of the run goes on, the observer still sees every row).
    fn drain(&mut self, observer: &mut dyn Observer) {
        let csv = match (&mut self.csv, &self.error) {
            (Some((csv, _)), None) => Some(csv),
            _ => None,
        };
        let mut rows = Rows { csv, observer };
        match self.rows.drain(&mut rows) {
            Ok(n) => self.written += n,
            Err(e) => self.error = Some(e),
        }
    }
}

/// How the frames ended: the fast side after its last frame (if its
/// thread returned it), why the run stopped early (if it did), and what the
/// real-time threads could not obtain.
struct Ended {
    fast: Option<FastSide>,
    failure: Option<String>,
    warnings: Vec<String>,
}

/// What describes a receive-timeout fault: per device, per message, its
/// name and timeout.
type FaultNames = Vec<(String, Vec<(String, f64)>)>;

/// A run, built and ready to start.
pub struct Session {
    parts: Parts,
    fast: FastSide,
    implicit: Option<ImplicitSide>,
}

/// Everything of a session but the tandem's two sides, which its threads
/// take while they run.
struct Parts {
    name: String,
    /// The recorded outputs' names, when there is a recording.
    recorded: Option<Vec<String>>,
    /// The unit of each input and output that declares one, by name.
    units: Vec<(String, String)>,
    /// The handle on the run, until taken.
    controls: Option<Controls>,
    /// Set to stop the run at its next frame.
    stop: Arc<AtomicBool>,
    settings: TandemSettings,
    implicit_work: ImplicitWork,
    linear_algebra: Chosen,
    /// Helper threads differencing the implicit side's Jacobians.
    jacobian_helpers: usize,
    costs: VirtualCosts,
    options: Options,
    preflight: Option<Preflight>,
    metrics: Arc<Metrics>,
    recording: Option<Recording>,
    devices: Vec<Box<dyn Device>>,
    feeds: Vec<Option<BusFeed>>,
    /// The buses on in-process transports, polled at each frame boundary
    /// on the virtual clock.
    inline: Vec<InlineBus>,
    replay: Option<LogFeed>,
    transmitter: Option<Transmitter>,
    log: Option<(BusLogWriter, PathBuf)>,
    fault: Arc<Fault>,
    fault_names: FaultNames,
    dropped_outputs: Arc<Counter>,
    /// In a real-time replay, how late (µs) the last record was fed.
    replay_late_us: Option<f64>,
    /// The XCP slave, serving.
    xcp: Option<XcpRun>,
    /// What the fast thread taps at each frame's end, by name.
    taps: Vec<&'static str>,
    /// The buses' diagnostic servers, stopped when the session is dropped.
    _diagnostics: Option<DiagServers>,
}

/// `path` in `results` unless it is absolute.
fn in_results(results: &Path, path: &Path) -> PathBuf {
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        results.join(path)
    }
}

/// Creates `file` (and its folder) with `create`; `what` names it in the
/// error.
fn create_output<T>(
    file: &Path,
    what: &'static str,
    create: impl FnOnce(&Path) -> io::Result<T>,
) -> Result<T, SessionError> {
    let error = |path: &Path| {
        let path = path.to_path_buf();
        move |cause| SessionError::File { what, path, cause }
    };
    if let Some(dir) = file.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(error(dir))?;
    }
    create(file).map_err(error(file))
}

/// Cuts a text file that failed part-way through a line back to its last
/// whole line, and says what it holds: the lines written before the
/// failure, each whole.
fn kept_whole(file: &Path) -> String {
    match cut_to_whole_lines(file).and_then(|()| count_lines(file)) {
        Ok(n) => format!("the {n} lines before it are in the file, each whole"),
        Err(e) => format!("the lines before it are in the file, the last perhaps cut short: {e}"),
    }
}

/// The number of lines of `file`.
fn count_lines(file: &Path) -> io::Result<u64> {
    use std::io::Read;
    let mut f = io::BufReader::new(File::open(file)?);
    let mut chunk = [0u8; 1 << 16];
    let mut lines = 0;
    loop {
        match f.read(&mut chunk)? {
            0 => return Ok(lines),
            n => lines += chunk[..n].iter().filter(|&&b| b == b'\n').count() as u64,
        }
    }
}

/// Truncates `file` after its last newline.
fn cut_to_whole_lines(file: &Path) -> io::Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut f = std::fs::OpenOptions::new().read(true).write(true).open(file)?;
    let mut end = f.metadata()?.len();
    let mut chunk = [0u8; 4096];
    while end > 0 {
        let start = end.saturating_sub(chunk.len() as u64);
        let part = &mut chunk[..(end - start) as usize];
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(part)?;
        if let Some(i) = part.iter().rposition(|&b| b == b'\n') {
            return f.set_len(start + i as u64 + 1);
        }
        end = start;
    }
    f.set_len(0)
}

/// The preflight of a real-clock run; refused when `require_rt` is asked
/// and a check fails.
fn check_preflight(
    settings: &TandemSettings,
    work: ImplicitWork,
    options: &Options,
) -> Result<Option<Preflight>, SessionError> {
    if options.clock == ClockMode::Virtual {
        return Ok(None);
    }
    let report = preflight(settings, work != ImplicitWork::Nothing);
    if options.require_rt && !report.hard_real_time() {
        let missing: Vec<&str> = report.missing().map(|c| c.name).collect();
        return Err(SessionError::NotRealTime {
            missing: missing.join(", "),
            preflight: Box::new(report),
        });
    }
    Ok(Some(report))
}

/// The devices of a run, configured.
struct Configured {
    devices: Vec<Box<dyn Device>>,
    halves: Vec<Halves>,
    /// Each bus's receive side, when replaying.
    feeds: Vec<Option<BusFeed>>,
    /// The buses on in-process transports, on the virtual clock.
    inline: Vec<InlineBus>,
    fault_names: FaultNames,
    /// Each bus's name, fault queue and mapping, for faults at run time.
    fault_queues: Vec<(String, Arc<FaultQueue>, Arc<BusMap>)>,
}

/// Builds and configures the buses and serial devices; each bus logs to
/// `hub` when there is one, stamping sent frames by `log_clock`.
#[expect(
    clippy::too_many_arguments,
    reason = "the devices, the clocks and the hubs a run wires them to, each from another stage of Session::new"
)]
fn configure_devices(
    buses: Vec<BoundBus>,
    serial: Vec<BoundSerial>,
    traffic: Traffic,
    frame: f64,
    mut hub: Option<&mut LogHub>,
    log_clock: LogClock,
    handed: &mut BTreeMap<String, Duplex>,
) -> Result<Configured, SessionError> {
    let mut c = Configured {
        devices: Vec::new(),
        halves: Vec::new(),
        feeds: Vec::new(),
        inline: Vec::new(),
        fault_names: Vec::new(),
        fault_queues: Vec::new(),
    };
    for (i, bus) in buses.into_iter().enumerate() {
        let log = hub.as_mut().map(|hub| LogSetup {
            rx: hub.producer(),
            tx: hub.producer(),
            clock: log_clock,
        });
        let messages = bus
            .map
            .rx
            .iter()
            .map(|m| (m.message.name.clone(), m.timeout.map_or(0.0, |t| t.after)))
            .collect();
        c.fault_names.push((format!("bus {}", bus.name), messages));
        let mut device = BusDevice::new(&bus.name, i as u16, bus.transport, bus.map, bus.faults);
        c.fault_queues
            .push((bus.name.clone(), device.fault_queue(), Arc::clone(device.map())));
        let transport = handed.remove(&bus.name);
        c.halves.push(device.configure(Setup {
            traffic,
            frame,
            log,
            transport,
        })?);
        match traffic {
            Traffic::Replay => c.feeds.push(device.take_feed()),
            Traffic::Offline => c.inline.extend(device.take_inline()),
            Traffic::Live => {}
        }
        c.devices.push(Box::new(device));
    }
    for device in serial {
        let timeout = device.map.timeout.map_or(0.0, |t| t.after);
        c.fault_names
            .push((format!("serial {}", device.name), vec![("no line".into(), timeout)]));
        let mut device = SerialDevice::new(&device.name, &device.device, device.baud, device.map);
        c.halves.push(device.configure(Setup {
            traffic,
            frame,
            log: None,
            transport: None,
        })?);
        c.devices.push(Box::new(device));
    }
    Ok(c)
}

/// What the fast thread reads and writes: the profile overridden by the
/// devices' read halves, and, when a device writes, the queue to their
/// writers with the transmitter that serves them.
type FastIo = (Box<dyn InputSource>, Option<Box<dyn OutputSink>>, Option<Transmitter>);

/// Wires the devices' halves to the fast thread.
fn wire(
    halves: Vec<Halves>,
    devices: &[Box<dyn Device>],
    profile: Signals,
    layout: &Layout,
    fault: &Arc<Fault>,
    dropped_outputs: &Arc<Counter>,
) -> FastIo {
    // Inputs no device drives follow the profile.
    let mut inputs = DeviceInputs::new(
        Box::new(Profile::new(profile)),
        layout.inputs.iter().map(|v| v.default).collect(),
        Arc::clone(fault),
    );
    let mut writers = Vec::new();
    for (i, Halves { read, write }) in halves.into_iter().enumerate() {
        if let Some(read) = read {
            inputs.add(i, read);
        }
        if let Some(write) = write {
            writers.push((write, Arc::clone(devices[i].metrics())));
        }
    }
    let (outputs, transmitter) = transmit_paths(layout.outputs.len(), writers, Arc::clone(dropped_outputs));
    let outputs = outputs.map(|o| Box::new(o) as Box<dyn OutputSink>);
    (Box::new(inputs), outputs, transmitter)
}

/// The CSV file of a recording, if it has one, created with its header.
fn recording_file(record: &BoundRecording, results: &Path, layout: &Layout) -> Result<Option<CsvFile>, SessionError> {
    let Some(file) = &record.file else {
        return Ok(None);
    };
    let file = in_results(results, file);
    let header: Vec<String> = record.signals.iter().map(|&i| layout.outputs[i].name.clone()).collect();
    let csv = create_output(&file, "cannot create the recording", |f| {
        CsvRecorder::create(f, &header, record.frame_source.then_some("frame_source"))
    })?;
    Ok(Some((csv, file)))
}

impl Session {
    /// Whether the virtual clock has stalls injected.
    pub(crate) fn has_virtual_stalls(&self) -> bool {
        !self.parts.costs.stalls.is_empty()
    }

    /// Builds the run of `plan`: the preflight (real clock), the output
    /// files, the devices (configured: transports opened unless replaying
    /// or on the virtual clock) and both sides of the tandem.
    pub fn new(plan: Plan, mut options: Options) -> Result<Session, SessionError> {
        let Plan {
            settings,
            virtual_costs,
            bus_log,
            model,
            name,
            evaluation: _,
            inputs,
            extrapolation,
            record,
            mut buses,
            serial,
            xcp: configured_xcp,
        } = plan;
        let diag_plans: Vec<_> = buses.iter_mut().filter_map(|b| b.diagnostics.take()).collect();
        let implicit_work = settings.implicit_work(model.layout().states.len());
        let linear_algebra = Chosen::of(
            settings.implicit.linear_solver,
            model.layout().states.len(),
            model.sparsity().as_deref(),
        );
        let preflight = check_preflight(&settings, implicit_work, &options)?;
        let virtual_clock = options.clock == ClockMode::Virtual;
        let mut replay = options.replay.take();
        if let Some(feed) = replay.as_mut() {
            feed.route(buses.iter().map(|b| b.name.clone()).collect())?;
        }
        let bus_count = buses.len();
        let traffic = match (&replay, options.clock) {
            (Some(_), _) => Traffic::Replay,
            (None, ClockMode::Real) => Traffic::Live,
            (None, ClockMode::Virtual) => Traffic::Offline,
        };

        // The bus log: a producer per logging thread of every bus.
        let log_file = options
            .bus_log
            .clone()
            .or(bus_log)
            .filter(|_| !buses.is_empty())
            .map(|f| in_results(&options.results, &f));
        let mut hub = log_file.as_ref().map(|_| LogHub::new(virtual_clock));
        let log_clock = if virtual_clock {
            LogClock::Virtual {
                origin_ns: replay.as_ref().map_or(0, LogFeed::start_ns),
                frame_ns: nanos(settings.frame),
            }
        } else {
            LogClock::Wall
        };
        let configured = configure_devices(
            buses,
            serial,
            traffic,
            settings.frame,
            hub.as_mut(),
            log_clock,
            &mut options.transports,
        )?;
        let Configured {
            devices,
            halves,
            feeds,
            inline,
            fault_names,
            fault_queues,
        } = configured;

        let layout = model.layout();
        let fault = Arc::new(Fault::default());
        let dropped_outputs = Arc::new(Counter::default());
        let (inputs, outputs, transmitter) = wire(halves, &devices, inputs, layout, &fault, &dropped_outputs);
        let outputs = match outputs {
            Some(o) if !inline.is_empty() => Some(Box::new(SendAtFrameEnd(o)) as Box<dyn OutputSink>),
            o => o,
        };
        let overrides = Arc::new(InputOverrides::new(layout.inputs.len()));
        let inputs = Box::new(Overridden::new(inputs, Arc::clone(&overrides)));
        let csv = match &record {
            Some(r) => {
                if r.file.is_some() {
                    let rows = settings.frames() as f64 / r.decimation as f64;
                    check_output_size(rows, r.signals.len() + 1, options.large_output)?;
                }
                recording_file(r, &options.results, layout)?
            }
            None => None,
        };
        let recorded = record
            .as_ref()
            .map(|r| r.signals.iter().map(|&i| layout.outputs[i].name.clone()).collect());
        let units = (layout.inputs.iter().chain(&layout.outputs))
            .filter_map(|v| Some((v.name.clone(), v.unit.clone()?)))
            .collect();
        let record_plan = record.map(|r| RecordPlan {
            signals: r.signals,
            decimation: r.decimation,
        });
        let asked = options.xcp.clone().or(configured_xcp.map(|x| XcpOptions {
            listen: x.listen,
            a2l: None,
            wait: x.wait,
        }));
        let (xcp, tap) = match asked {
            Some(asked) => {
                let buses: Vec<_> = (devices.iter().take(bus_count))
                    .map(|d| (d.name().to_string(), Arc::clone(d.metrics())))
                    .collect();
                Some(XcpSetup::prepare(
                    asked,
                    layout,
                    model.tunables(),
                    settings.frame,
                    &buses,
                )?)
            }
            None => None,
        }
        .unzip();
        let live = traffic == Traffic::Live;
        // On the virtual clock only in-process buses carry frames: their
        // servers answer from the values of the newest frame.
        let diag_plans: Vec<_> = (diag_plans.into_iter())
            .filter(|plan| live || traffic == Traffic::Offline && plan.in_process())
            .map(|plan| {
                let device = devices
                    .iter()
                    .find(|d| d.kind() == DeviceKind::Bus && d.name() == plan.bus());
                (plan, device.map_or_else(Arc::default, |d| Arc::clone(d.metrics())))
            })
            .collect();
        let (diagnostics, diag_tap) = diag::start(diag_plans)?.unzip();
        let taps = [(tap.is_some(), TAP_XCP), (diag_tap.is_some(), TAP_DIAGNOSTICS)]
            .into_iter()
            .filter_map(|(on, name)| on.then_some(name))
            .collect();
        let tap = match (tap, diag_tap) {
            (Some(xcp), Some(diag)) => Some(Box::new((xcp, diag)) as Box<dyn FrameTap>),
            (tap, diag) => tap.or(diag.map(|d| Box::new(d) as Box<dyn FrameTap>)),
        };
        let wiring = Wiring {
            inputs,
            extrapolation,
            record: record_plan,
            outputs,
            tap,
        };
        let tandem = assemble(&settings, model.as_ref(), wiring)?;
        let recording = tandem.recording.map(|rows| Recording {
            rows,
            file: csv.as_ref().map(|(_, file)| file.clone()),
            csv,
            written: 0,
            error: None,
        });
        let log = match (hub, log_file) {
            (Some(hub), Some(file)) => {
                let names = devices.iter().map(|d| d.name().to_string()).collect();
                let faults = devices.iter().map(|d| d.metrics().faults.clone()).collect();
                let start = if virtual_clock { 0 } else { wall_ns() };
                let writer = create_output(&file, "cannot create the bus log", |f| {
                    hub.spawn(f, start, names, faults)
                })?;
                Some((writer, file))
            }
            _ => None,
        };
        let stop = Arc::new(AtomicBool::new(false));
        let implicit_model = tandem.implicit.is_some();
        let controls = Controls::new(
            model,
            tandem.retuner,
            implicit_model,
            overrides,
            Arc::clone(&tandem.metrics),
            Arc::clone(&stop),
            FaultTrigger::new(fault_queues, settings.frame),
        );
        let xcp = match xcp {
            Some(setup) => Some(setup.serve(&name, controls.clone(), &options.results)?),
            None => None,
        };
        let parts = Parts {
            name,
            recorded,
            units,
            controls: Some(controls),
            stop,
            settings,
            implicit_work,
            linear_algebra,
            jacobian_helpers: tandem.jacobian_helpers,
            costs: virtual_costs,
            options,
            preflight,
            metrics: tandem.metrics,
            recording,
            devices,
            feeds,
            inline,
            replay,
            transmitter,
            log,
            fault,
            fault_names,
            dropped_outputs,
            replay_late_us: None,
            xcp,
            taps,
            _diagnostics: diagnostics,
        };
        Ok(Session {
            parts,
            fast: tandem.fast,
            implicit: tandem.implicit,
        })
    }

    /// The run's name (its model's).
    pub fn name(&self) -> &str {
        &self.parts.name
    }

    /// The run's settings.
    pub fn settings(&self) -> &TandemSettings {
        &self.parts.settings
    }

    /// What its implicit thread does.
    pub fn implicit_work(&self) -> ImplicitWork {
        self.parts.implicit_work
    }

    /// How both threads store and factor the Jacobian and the iteration
    /// matrix.
    pub fn linear_algebra(&self) -> Chosen {
        self.parts.linear_algebra
    }

    /// Helper threads differencing the implicit side's Jacobians beside it
    /// (`implicit.helper_cores`; 0 when it differences them alone).
    pub fn jacobian_helpers(&self) -> usize {
        self.parts.jacobian_helpers
    }

    /// The preflight, on the real clock.
    pub fn preflight(&self) -> Option<&Preflight> {
        self.parts.preflight.as_ref()
    }

    /// The clock it runs on.
    pub fn clock(&self) -> ClockMode {
        self.parts.options.clock
    }

    /// The names of the outputs the recording holds (in the order of the
    /// rows [`Observer::record`] sees), when the run records.
    pub fn recorded(&self) -> Option<&[String]> {
        self.parts.recorded.as_deref()
    }

    /// The unit of each of the model's inputs and outputs that declares
    /// one, by name.
    pub fn units(&self) -> &[(String, String)] {
        &self.parts.units
    }

    /// The handle that sets inputs, changes parameters and stops the run
    /// from another thread; there is one, and the first call takes it.
    pub fn controls(&mut self) -> Option<Controls> {
        self.parts.controls.take()
    }

    /// Where the run's XCP slave listens (UDP, TCP), when it has one.
    pub fn xcp_addresses(&self) -> Option<(SocketAddr, SocketAddr)> {
        self.parts.xcp.as_ref().map(XcpRun::addresses)
    }

    /// The counters both sides write, to read while the run goes on.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.parts.metrics
    }

    /// The devices, to read their counters while the run goes on.
    pub fn devices(&self) -> Vec<DeviceView> {
        self.parts.device_views()
    }

    /// Runs to the end of the duration (or until a failure, a fault or a
    /// stop request), showing `observer` live statistics, and reports.
    pub fn run(self, observer: &mut dyn Observer) -> Result<Report, SessionError> {
        let Session {
            mut parts,
            mut fast,
            mut implicit,
        } = self;
        let started = Instant::now();
        let mut live = LiveStats::new(Arc::clone(&parts.metrics), parts.device_views());
        let ended = match parts.options.clock {
            ClockMode::Virtual => {
                let failure = parts.run_virtual(&mut fast, implicit.as_mut(), observer, &mut live)?;
                Ended {
                    fast: Some(fast),
                    failure,
                    warnings: Vec::new(),
                }
            }
            ClockMode::Real => parts.run_real(fast, implicit, observer, &mut live)?,
        };
        observer.tick(false);
        parts.finish(ended, started.elapsed(), observer)
    }
}

impl Parts {
    /// The devices as the reports see them.
    fn device_views(&self) -> Vec<DeviceView> {
        self.devices
            .iter()
            .map(|d| DeviceView {
                name: d.name().to_string(),
                kind: d.kind(),
                metrics: Arc::clone(d.metrics()),
            })
            .collect()
    }

    /// The receive-timeout fault raised, as a message naming the device,
    /// the message and the fix.
    fn fault_message(&self) -> Option<String> {
        let (device, message) = self.fault.get()?;
        let (device_name, messages) = &self.fault_names[device];
        let (message_name, timeout) = &messages[message];
        Some(format!(
            "{device_name}: message {message_name} not received for {timeout} s (timeout policy `fault`); check the \
             sender, or use on_timeout = \"hold\" or \"default\""
        ))
    }

    /// Stops the devices, closes the files and reports; `fast` is the fast
    /// side after its last frame. A file that could not be written is a
    /// failure of the run, in the report with everything else.
    fn finish(mut self, ended: Ended, wall: Duration, observer: &mut dyn Observer) -> Result<Report, SessionError> {
        let Ended {
            fast,
            failure,
            warnings,
        } = ended;
        let fast = fast.as_ref();
        for device in &mut self.devices {
            device.deactivate();
        }
        let mut failures: Vec<String> = self.fault_message().into_iter().chain(failure).collect();
        if let Some(r) = self.recording.as_mut() {
            r.drain(observer);
            if let Some((csv, _)) = r.csv.as_mut().filter(|_| r.error.is_none()) {
                if let Err(e) = csv.finish() {
                    r.error = Some(e);
                }
            }
            if let (Some(e), Some((csv, file))) = (&r.error, r.csv.take()) {
                // Closed first: its buffer may still try to write.
                drop(csv);
                failures.push(format!(
                    "writing the recording {}: {e} ({})",
                    file.display(),
                    kept_whole(&file)
                ));
            }
        }
        let bus_log = match self.log.take() {
            Some((writer, file)) => match writer.finish() {
                Ok(records) => Some((file, records)),
                Err(e) => {
                    failures.push(format!(
                        "writing the bus log {}: {e} ({})",
                        file.display(),
                        kept_whole(&file)
                    ));
                    None
                }
            },
            None => None,
        };
        Ok(Report {
            name: self.name.clone(),
            settings: self.settings,
            implicit_work: self.implicit_work,
            virtual_clock: self.options.clock == ClockMode::Virtual,
            wall,
            preflight: self.preflight.take(),
            recording: self.recording.as_ref().map(|r| RecordingReport {
                file: r.file.clone(),
                rows: r.written,
                dropped: fast.and_then(FastSide::recorder).map_or(0, |s| s.dropped()),
            }),
            dropped_records: fast.map_or(0, FastSide::dropped_records),
            dropped_outputs: self.dropped_outputs.get(),
            devices: self.device_views(),
            bus_log,
            replay: self.replay.as_ref().map(|feed| ReplayReport {
                duration: feed.duration(),
                unrouted: feed.unrouted(),
                last_late_us: self.replay_late_us,
            }),
            failure: (!failures.is_empty()).then(|| failures.join("; ")),
            warnings,
            metrics: Arc::clone(&self.metrics),
            xcp: self.xcp.take().map(XcpRun::finish),
            taps: self.taps.clone(),
        })
    }

    /// The run on the virtual clock, on this thread; returns why it stopped
    /// early, if it did.
    fn run_virtual(
        &mut self,
        fast: &mut FastSide,
        implicit: Option<&mut ImplicitSide>,
        observer: &mut dyn Observer,
        live: &mut LiveStats,
    ) -> Result<Option<String>, SessionError> {
        let frame = self.settings.frame;
        let every = self
            .options
            .live_interval
            .map(|d| (d.as_secs_f64() / frame).round().max(1.0) as u64);
        if let Some(feed) = self.replay.as_mut() {
            feed.until(0.0, &mut self.feeds).map_err(ReplayError::from)?;
        }
        let mut replay_error = None;
        if let Some(x) = &self.xcp {
            x.wait_for_master(&self.stop);
        }
        let costs = &self.costs;
        let xcp = &self.xcp;
        let (pace, started) = (self.options.pace, Instant::now());
        let (replay, feeds, inline, transmitter, recording, fault, stop) = (
            &mut self.replay,
            &mut self.feeds,
            &mut self.inline,
            &mut self.transmitter,
            &mut self.recording,
            &self.fault,
            &self.stop,
        );
        let drain = self.options.virtual_drain.max(1);
        let (origin_ns, frame_ns) = (replay.as_ref().map_or(0, LogFeed::start_ns), nanos(frame));
        let result = run_virtual(fast, implicit, self.settings.frames(), nanos(frame), costs, &mut |k| {
            if let Some(t) = transmitter.as_mut() {
                t.pump();
            }
            if let Some(feed) = replay.as_mut() {
                if let Err(e) = feed.until((k + 1) as f64 * frame, feeds) {
                    replay_error = Some(e);
                    return ControlFlow::Break(());
                }
            }
            if k % drain == drain - 1 {
                if let Some(r) = recording.as_mut() {
                    r.drain(observer);
                }
            }
            observer.tick(true);
            if let Some(x) = xcp {
                x.relieve();
            }
            if let Some(pace) = pace {
                let ahead = (k + 1) as f64 * frame / pace - started.elapsed().as_secs_f64();
                if ahead > PACE_SLACK {
                    std::thread::sleep(Duration::from_secs_f64(ahead));
                }
            }
            // What the other nodes sent up to this boundary (runs in
            // lock-step are all past their sends once `tick` returns).
            let boundary = k + 1;
            for bus in inline.iter_mut() {
                bus.poll(boundary as f64 * frame, origin_ns + boundary as i64 * frame_ns);
            }
            observer.received();
            if every.is_some_and(|e| (k + 1) % e == 0) {
                observer.live((k + 1) as f64 * frame, live);
            }
            if fault.get().is_some() || stop.load(Ordering::Acquire) {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        if let Some(e) = replay_error {
            return Err(ReplayError::from(e).into());
        }
        Ok(result.err().map(|e| e.to_string()))
    }

    /// The run on real threads.
    fn run_real(
        &mut self,
        fast: FastSide,
        implicit: Option<ImplicitSide>,
        observer: &mut dyn Observer,
        live: &mut LiveStats,
    ) -> Result<Ended, SessionError> {
        let control = Arc::new(RunControl::new());
        // Below the fast thread, above the implicit one, off the fast core.
        let io = IoPlacement {
            priority: self.settings.fast.placement.priority.saturating_sub(1).max(1),
            fast_core: self.settings.fast.placement.core,
        };
        for device in &mut self.devices {
            device.activate(&control, io)?;
        }
        let player = match self.replay.take() {
            Some(feed) => Some(
                feed.spawn_player(std::mem::take(&mut self.feeds), Arc::clone(&control), io)
                    .map_err(|cause| SessionError::Thread { what: "replay", cause })?,
            ),
            None => None,
        };
        let transmit: Option<JoinHandle<()>> = match self.transmitter.take() {
            Some(t) => Some(
                t.spawn(nanos(self.settings.frame), Arc::clone(&control), io)
                    .map_err(|cause| SessionError::Thread {
                        what: "transmit",
                        cause,
                    })?,
            ),
            None => None,
        };
        if let Some(x) = &self.xcp {
            x.wait_for_master(&self.stop);
        }
        let interval = self.options.live_interval;
        let poll = interval
            .unwrap_or(Duration::from_secs(1))
            .min(Duration::from_millis(100));
        let started = Instant::now();
        let mut last_print = Instant::now();
        let (recording, fault, stop) = (&mut self.recording, &self.fault, &self.stop);
        let outcome = run_realtime(
            &self.settings,
            fast,
            implicit,
            Arc::clone(&control),
            self.options.start_at,
            poll,
            &mut |finished| {
                observer.tick(!finished);
                if let Some(r) = recording.as_mut() {
                    r.drain(observer);
                }
                if fault.get().is_some() || stop.load(Ordering::Acquire) {
                    control.request_stop();
                }
                if let Some(interval) = interval {
                    if !finished && last_print.elapsed() >= interval {
                        last_print = Instant::now();
                        observer.live(started.elapsed().as_secs_f64(), live);
                    }
                }
            },
        );
        control.request_stop();
        if let Some(t) = transmit {
            let _ = t.join();
        }
        if let Some(player) = player {
            match player.join() {
                Ok(Ok((feed, late))) => {
                    self.replay = Some(feed);
                    self.replay_late_us = Some(late);
                }
                Ok(Err(e)) => return Err(ReplayError::from(e).into()),
                Err(_) => {}
            }
        }
        let mut warnings = Vec::new();
        if let Some(late) = outcome.late_start {
            warnings.push(format!(
                "the frames began {:.1} ms after the agreed start (the run's threads were not ready in time): \
                 every frame is that much late",
                late as f64 / 1e6
            ));
        }
        let mut failure = outcome.failure.map(|e| e.to_string());
        if !outcome.stuck.is_empty() {
            let stuck = format!(
                "the {} thread(s) did not stop within {} s of the end; the run ended without them (what they \
                 recorded before is kept)",
                outcome.stuck.join(" and "),
                STOP_GRACE.as_secs_f64()
            );
            failure = Some(failure.map_or(stuck.clone(), |f| format!("{f}; {stuck}")));
        }
        for (thread, setup) in [
            ("fast", Some(&outcome.fast_setup)),
            ("implicit", outcome.implicit_setup.as_ref()),
        ] {
            for refused in setup.into_iter().flat_map(|s| s.refusals()) {
                warnings.push(format!("{thread} thread: {refused}"));
            }
        }
        Ok(Ended {
            fast: outcome.fast,
            failure,
            warnings,
        })
    }
}
