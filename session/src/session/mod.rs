//! A run of a bound configuration: the tandem's two sides, the devices
//! with their lifecycle, the recording and the bus log, on the real or the
//! virtual clock, watched by an observer, ending in a [`Report`].
//!
//! [`Session::new`] does everything that may fail or allocate (preflight,
//! files, transports, the tandem's parts); [`Session::run`] starts the
//! threads, watches them from the calling (normal) thread, stops every
//! thread it started, and reports. A run that stops early (a diverged
//! explicit method, a receive-timeout fault) still reports.
//!
//! One file per concept: how a run is asked for and watched (`options`),
//! why it fails (`error`), its output files (`files`) and recording
//! (`recording`), its devices (`devices`) and frame taps (`taps`), the
//! stages that build it (`build`), the frames (`run`) and the end of the
//! run (`finish`).

mod build;
mod devices;
mod error;
mod files;
mod finish;
mod options;
mod recording;
mod run;
mod taps;
#[cfg(test)]
mod testing;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use tandem_runtime::linalg::Chosen;
use tandem_runtime::tandem::fast::FastSide;
use tandem_runtime::tandem::implicit_side::ImplicitSide;
use tandem_runtime::tandem::metrics::{Counter, Metrics};
use tandem_runtime::tandem::preflight::Preflight;
use tandem_runtime::tandem::virtual_clock::VirtualCosts;
use tandem_runtime::tandem::{ImplicitWork, TandemSettings};

use self::devices::FaultNames;
use self::recording::Recording;
use self::run::Ended;
use crate::bus::{BusFeed, InlineBus};
use crate::controls::Controls;
use crate::device::Device;
use crate::diag::DiagServers;
use crate::inputs::Fault;
use crate::log::BusLogWriter;
use crate::replay::LogFeed;
use crate::report::devices::DeviceView;
use crate::report::live::LiveStats;
use crate::report::Report;
use crate::transmit::Transmitter;
use crate::xcp::XcpRun;

pub use self::error::SessionError;
pub use self::options::{ClockMode, Observer, Options};

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

impl Session {
    /// Whether the virtual clock has stalls injected.
    pub(crate) fn has_virtual_stalls(&self) -> bool {
        !self.parts.costs.stalls.is_empty()
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
