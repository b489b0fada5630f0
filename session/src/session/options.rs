//! How a session runs beyond its configuration ([`Options`], [`ClockMode`])
//! and what watches it from the calling thread ([`Observer`]).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use tandem_can::Duplex;
use tandem_runtime::tandem::clock::Nanos;

use crate::replay::LogFeed;
use crate::report::live::LiveStats;
use crate::xcp::XcpOptions;

/// Every how many frames a run on the virtual clock hands its recorded
/// rows to the observer (and the CSV file) unless told otherwise: often
/// enough for a paced run's live plot, seldom enough to batch them.
const VIRTUAL_DRAIN: u64 = 32;

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
