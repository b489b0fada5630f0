//! Building a run ([`Session::new`]) in named stages: check (the
//! preflight on the real clock), route (which traffic the buses carry),
//! plan the bus log, configure the devices, wire them to the fast thread,
//! prepare the recording, start the frame taps, assemble the tandem, open
//! the bus log, and hand out the controls (the XCP slave serving them).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use tandem_models::Model;
use tandem_runtime::linalg::Chosen;
use tandem_runtime::tandem::assemble::{assemble, Wiring};
use tandem_runtime::tandem::clock::nanos;
use tandem_runtime::tandem::preflight::{preflight, Preflight};
use tandem_runtime::tandem::{ImplicitWork, TandemSettings};

use super::devices::{configure_devices, wire};
use super::error::SessionError;
use super::files::{create_output, in_results};
use super::options::{ClockMode, Options};
use super::recording::{prepare_recording, Recording};
use super::taps::{asked_xcp, join_taps, prepare_xcp, start_diagnostics};
use super::{Parts, Session};
use crate::bind::{BoundBus, Plan};
use crate::controls::Controls;
use crate::device::{Device, LogClock, Traffic};
use crate::fault::FaultTrigger;
use crate::log::{wall_ns, BusLogWriter, LogHub};
use crate::replay::LogFeed;

/// What the checks before anything is opened decide: what the implicit
/// thread does, how both sides factor, and (real clock) the preflight.
pub(super) struct Checked {
    /// What the implicit thread does.
    pub(super) implicit_work: ImplicitWork,
    /// How both threads store and factor the matrices.
    pub(super) linear_algebra: Chosen,
    /// The preflight, on the real clock.
    pub(super) preflight: Option<Preflight>,
}

/// Stage 1, check: what `model` asks of the threads under `settings`, and
/// the preflight of a real-clock run, refused when `options.require_rt`
/// is asked and a check fails.
pub(super) fn check(settings: &TandemSettings, model: &dyn Model, options: &Options) -> Result<Checked, SessionError> {
    let states = model.layout().states.len();
    let implicit_work = settings.implicit_work(states);
    let linear_algebra = Chosen::of(settings.implicit.linear_solver, states, model.sparsity().as_deref());
    let preflight = check_preflight(settings, implicit_work, options)?;
    Ok(Checked {
        implicit_work,
        linear_algebra,
        preflight,
    })
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

/// Stage 2, route: the replayed log (if any) routed to `buses` by name,
/// and what the buses carry: the log's frames, their transports' (real
/// clock), or their in-process channels' (virtual clock).
pub(super) fn route(
    replay: Option<LogFeed>,
    buses: &[BoundBus],
    clock: ClockMode,
) -> Result<(Option<LogFeed>, Traffic), SessionError> {
    let mut replay = replay;
    if let Some(feed) = replay.as_mut() {
        feed.route(buses.iter().map(|b| b.name.clone()).collect())?;
    }
    let traffic = match (&replay, clock) {
        (Some(_), _) => Traffic::Replay,
        (None, ClockMode::Real) => Traffic::Live,
        (None, ClockMode::Virtual) => Traffic::Offline,
    };
    Ok((replay, traffic))
}

/// Where the bus log goes and what gathers it, before the devices are
/// configured.
pub(super) struct BusLogPlan {
    /// The file, when the run has buses and a bus log.
    pub(super) file: Option<PathBuf>,
    /// A producer per logging thread of every bus, when there is a file.
    pub(super) hub: Option<LogHub>,
    /// How the frames sent are stamped.
    pub(super) clock: LogClock,
}

/// Stage 3, plan the bus log: `asked` (relative paths in `results`) when
/// the run has buses; on the virtual clock, frames stamped from
/// `origin_ns` (the replayed log's start) in frames of `frame` s, else by
/// the wall clock.
pub(super) fn plan_bus_log(
    asked: Option<PathBuf>,
    has_buses: bool,
    results: &Path,
    clock: ClockMode,
    origin_ns: i64,
    frame: f64,
) -> BusLogPlan {
    let virtual_clock = clock == ClockMode::Virtual;
    let file = asked.filter(|_| has_buses).map(|f| in_results(results, &f));
    let hub = file.as_ref().map(|_| LogHub::new(virtual_clock));
    let clock = match virtual_clock {
        true => LogClock::Virtual {
            origin_ns,
            frame_ns: nanos(frame),
        },
        false => LogClock::Wall,
    };
    BusLogPlan { file, hub, clock }
}

/// Stage 9, open the bus log: its file created and its writer started,
/// naming `devices` (their frames' times from 0 on the virtual clock, else
/// from the wall clock's now).
pub(super) fn open_bus_log(
    plan: BusLogPlan,
    devices: &[Box<dyn Device>],
    virtual_clock: bool,
) -> Result<Option<(BusLogWriter, PathBuf)>, SessionError> {
    let (Some(hub), Some(file)) = (plan.hub, plan.file) else {
        return Ok(None);
    };
    let names = devices.iter().map(|d| d.name().to_string()).collect();
    let faults = devices.iter().map(|d| d.metrics().faults.clone()).collect();
    let start = if virtual_clock { 0 } else { wall_ns() };
    let writer = create_output(&file, "cannot create the bus log", |f| {
        hub.spawn(f, start, names, faults)
    })?;
    Ok(Some((writer, file)))
}

/// The unit of each of `model`'s inputs and outputs that declares one, by
/// name.
fn units(model: &dyn Model) -> Vec<(String, String)> {
    let layout = model.layout();
    (layout.inputs.iter().chain(&layout.outputs))
        .filter_map(|v| Some((v.name.clone(), v.unit.clone()?)))
        .collect()
}

impl Session {
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
        let checked = check(&settings, model.as_ref(), &options)?;
        let (replay, traffic) = route(options.replay.take(), &buses, options.clock)?;
        let origin_ns = replay.as_ref().map_or(0, LogFeed::start_ns);
        let asked_log = options.bus_log.clone().or(bus_log);
        let has_buses = !buses.is_empty();
        let mut log = plan_bus_log(
            asked_log,
            has_buses,
            &options.results,
            options.clock,
            origin_ns,
            settings.frame,
        );
        let bus_count = buses.len();
        let frame = settings.frame;
        let configured = configure_devices(
            buses,
            serial,
            traffic,
            frame,
            log.hub.as_mut(),
            log.clock,
            &mut options.transports,
        )?;
        let wired = wire(
            configured.halves,
            &configured.devices,
            inputs,
            model.layout(),
            !configured.inline.is_empty(),
        );
        let devices = configured.devices;
        let record = prepare_recording(record, &settings, &options, model.layout())?;
        let asked = asked_xcp(options.xcp.clone(), configured_xcp);
        let (xcp, xcp_tap) = prepare_xcp(asked, model.as_ref(), frame, &devices[..bus_count])?.unzip();
        let (diagnostics, diag_tap) = start_diagnostics(diag_plans, &devices, traffic)?.unzip();
        let (tap, taps) = join_taps(xcp_tap, diag_tap);
        let wiring = Wiring {
            inputs: wired.inputs,
            extrapolation,
            record: record.plan,
            outputs: wired.outputs,
            tap,
        };
        let tandem = assemble(&settings, model.as_ref(), wiring)?;
        let recording = tandem.recording.map(|rows| Recording::new(rows, record.csv));
        let log = open_bus_log(log, &devices, options.clock == ClockMode::Virtual)?;
        let stop = Arc::new(AtomicBool::new(false));
        let units = units(model.as_ref());
        let controls = Controls::new(
            model,
            tandem.retuner,
            tandem.implicit.is_some(),
            wired.overrides,
            Arc::clone(&tandem.metrics),
            Arc::clone(&stop),
            FaultTrigger::new(configured.fault_queues, settings.frame),
        );
        let xcp = match xcp {
            Some(setup) => Some(setup.serve(&name, controls.clone(), &options.results)?),
            None => None,
        };
        let parts = Parts {
            name,
            recorded: record.recorded,
            units,
            controls: Some(controls),
            stop,
            settings,
            implicit_work: checked.implicit_work,
            linear_algebra: checked.linear_algebra,
            jacobian_helpers: tandem.jacobian_helpers,
            costs: virtual_costs,
            options,
            preflight: checked.preflight,
            metrics: tandem.metrics,
            recording,
            devices,
            feeds: configured.feeds,
            inline: configured.inline,
            replay,
            transmitter: wired.transmitter,
            log,
            fault: wired.fault,
            fault_names: configured.fault_names,
            dropped_outputs: wired.dropped_outputs,
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
}

#[cfg(test)]
mod tests {
    use super::super::testing::{ev, scratch};
    use super::*;

    #[test]
    fn the_virtual_clock_needs_no_preflight() {
        let (dir, plan) = ev("check-virtual", "");
        let mut options = Options::new(ClockMode::Virtual, &dir);
        options.require_rt = true;
        let checked = check(&plan.settings, plan.model.as_ref(), &options).unwrap();
        assert!(checked.preflight.is_none());
        let states = plan.model.layout().states.len();
        assert!(checked.implicit_work == plan.settings.implicit_work(states));
    }

    #[test]
    fn the_real_clock_runs_the_preflight() {
        let (dir, plan) = ev("check-real", "");
        let mut options = Options::new(ClockMode::Real, &dir);
        let checked = check(&plan.settings, plan.model.as_ref(), &options).unwrap();
        let hard = checked.preflight.expect("a preflight").hard_real_time();
        options.require_rt = true;
        match check(&plan.settings, plan.model.as_ref(), &options) {
            Ok(checked) => assert!(hard && checked.preflight.is_some()),
            Err(e) => {
                assert!(!hard);
                assert!(e.to_string().starts_with("--require-rt: missing "), "{e}");
            }
        }
    }

    #[test]
    fn the_buses_carry_what_the_clock_says_unless_replaying() {
        let (replay, traffic) = route(None, &[], ClockMode::Real).unwrap();
        assert!(replay.is_none());
        assert_eq!(traffic, Traffic::Live);
        let (_, traffic) = route(None, &[], ClockMode::Virtual).unwrap();
        assert_eq!(traffic, Traffic::Offline);
    }

    #[test]
    fn the_bus_log_goes_to_the_results_when_there_are_buses() {
        let results = Path::new("/tmp/results");
        let asked = || Some(PathBuf::from("bus.log"));
        let none = plan_bus_log(asked(), false, results, ClockMode::Virtual, 0, 1e-3);
        assert!(none.file.is_none() && none.hub.is_none());
        let log = plan_bus_log(asked(), true, results, ClockMode::Virtual, 5, 1e-3);
        assert_eq!(log.file, Some(results.join("bus.log")));
        assert!(log.hub.is_some());
        let stamped = LogClock::Virtual {
            origin_ns: 5,
            frame_ns: 1_000_000,
        };
        assert_eq!(log.clock, stamped);
        let real = plan_bus_log(Some("/abs/bus.asc".into()), true, results, ClockMode::Real, 5, 1e-3);
        assert_eq!(real.file.as_deref(), Some(Path::new("/abs/bus.asc")));
        assert_eq!(real.clock, LogClock::Wall);
    }

    #[test]
    fn the_bus_log_is_created_and_closed() {
        let dir = scratch("bus-log");
        let log = plan_bus_log(Some("logs/bus.log".into()), true, &dir, ClockMode::Virtual, 0, 1e-3);
        let (writer, file) = open_bus_log(log, &[], true).unwrap().expect("a bus log");
        assert_eq!(file, dir.join("logs/bus.log"));
        assert_eq!(writer.finish().unwrap(), 0);
        assert!(file.is_file());
        let none = plan_bus_log(None, true, &dir, ClockMode::Virtual, 0, 1e-3);
        assert!(open_bus_log(none, &[], true).unwrap().is_none());
    }

    #[test]
    fn units_are_those_the_model_declares() {
        let model = tandem_models::plants::builtin("ev").unwrap();
        let units = units(model.as_ref());
        let layout = model.layout();
        let declared = layout.inputs.iter().chain(&layout.outputs).filter(|v| v.unit.is_some());
        assert_eq!(units.len(), declared.count());
    }
}
