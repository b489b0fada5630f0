//! A Tandem run as a slave's member (`tandem run` of a configuration with
//! a `[dcp]` table): the explicit/implicit tandem on its own pinned
//! threads, from the federation's common start until the master stops it,
//! its buses carried over DCP.
//!
//! Each bus whose transport is `dcp` becomes two binary variables of MIME
//! type [`frames::MIME_TYPE`]: `<bus>.rx`, an input whose values are the
//! frames others sent (handed to the bus as if received), and `<bus>.tx`,
//! an output whose value at each communication point is the frames the run
//! sent since the last (the bus's DBC mapping is unchanged). The run
//! threads meet the slave only through the bounded channels of a
//! [`tandem_can::pipe`].

use std::path::PathBuf;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use tandem_can::{pipe, CanFrame, Duplex};
use tandem_config::bounds::{MAX_DURATION, MIN_FRAME};
use tandem_config::{RunConfig, TransportConfig};
use tandem_runtime::tandem::clock::MonotonicClock;
use tandem_runtime::tandem::preflight::preflight;
use tandem_runtime::tandem::settings::Policy;
use tandem_session::device::{prioritize, IoPlacement};
use tandem_session::{bind, BindError, ClockMode, Controls, Options, Report, Session, SessionError};

use super::member::{Member, MemberError};
use super::wiring::Slot;
use crate::frames;
use crate::ports::{Causality, Ports, Variable};
use crate::types::{DataType, OpMode, MAX_PDU};

/// Frames in flight between the slave and one bus, each way.
const PIPE_FRAMES: usize = 4096;
/// The header of a data PDU: type, sequence id, data id.
const DATA_HEADER: usize = 5;

/// A run of a configuration, as a slave's member.
pub struct SessionMember {
    config: RunConfig,
    results: PathBuf,
    ports: Ports,
    /// The buses carried over DCP, in the order of their variables.
    buses: Vec<String>,
    /// The slave's ends of the buses, while a run is on.
    ends: Vec<Duplex>,
    /// A frame taken from a bus that did not fit the last value.
    pending: Vec<Option<CanFrame>>,
    /// Each bus's frames of the current point, encoded.
    values: Vec<Vec<u8>>,
    /// Frames read from input data, handed to the buses once all read.
    staged: Vec<(usize, CanFrame)>,
    run: Option<Running>,
    report: Option<String>,
    counts: FrameCounts,
}

/// A run on its threads.
struct Running {
    thread: JoinHandle<Result<Report, SessionError>>,
    controls: Controls,
}

/// What became of the frames of a run.
#[derive(Clone, Copy, Debug, Default)]
struct FrameCounts {
    sent: u64,
    received: u64,
    /// Received frames a bus had no room for.
    dropped: u64,
}

impl SessionMember {
    /// The member of `config`, its names checked against its model and
    /// DBC files; its ports are its buses over DCP, and its outputs (the
    /// recording, the bus log) go to `results`.
    pub fn new(config: RunConfig, results: PathBuf) -> Result<SessionMember, BindError> {
        bind(config.clone())?;
        let buses: Vec<String> = config
            .buses
            .iter()
            .filter(|b| b.transport == TransportConfig::Dcp)
            .map(|b| b.name.clone())
            .collect();
        let n = buses.len() as u64;
        let variable = |k: usize, bus: &str, causality| Variable {
            name: format!("{bus}.{}", if causality == Causality::Input { "rx" } else { "tx" }),
            vr: k as u64 + 1 + if causality == Causality::Output { n } else { 0 },
            causality,
            data_type: DataType::Binary,
            elements: k..k + 1,
            unit: None,
            start: Vec::new(),
            range: None,
            dependencies: (causality == Causality::Output).then(Vec::new),
            mime_type: Some(frames::MIME_TYPE.to_string()),
        };
        let ports = Ports {
            inputs: buses
                .iter()
                .enumerate()
                .map(|(k, b)| variable(k, b, Causality::Input))
                .collect(),
            outputs: buses
                .iter()
                .enumerate()
                .map(|(k, b)| variable(k, b, Causality::Output))
                .collect(),
        };
        Ok(SessionMember {
            pending: vec![None; buses.len()],
            values: buses.iter().map(|_| Vec::with_capacity(MAX_PDU)).collect(),
            staged: Vec::with_capacity(MAX_PDU / frames::HEADER),
            config,
            results,
            ports,
            buses,
            ends: Vec::new(),
            run: None,
            report: None,
            counts: FrameCounts::default(),
        })
    }

    /// Why the run ended before the master stopped it, once it has.
    fn ended_early(&mut self) -> Option<MemberError> {
        if !self.run.as_ref()?.thread.is_finished() {
            return None;
        }
        Some(match self.end_run() {
            Some(failure) => MemberError::RunFailed(failure),
            None => MemberError::RunEnded {
                duration: self.config.settings.duration,
            },
        })
    }

    /// Stops the run, keeps its report and returns its failure, if any.
    fn end_run(&mut self) -> Option<String> {
        let run = self.run.take()?;
        run.controls.stop();
        let counts = self.counts;
        let frames = format!(
            "frames over DCP: {} sent, {} received, {} dropped (a bus full)",
            counts.sent, counts.received, counts.dropped
        );
        let (table, failure) = match run.thread.join() {
            Ok(Ok(report)) => (report.table(), report.failure.clone()),
            Ok(Err(e)) => (String::new(), Some(e.to_string())),
            Err(_) => (String::new(), Some("its thread panicked".to_string())),
        };
        let failed = failure
            .as_ref()
            .map_or(String::new(), |f| format!("the run failed: {f}\n"));
        self.report = Some(format!("{table}{failed}{frames}\n"));
        self.ends.clear();
        failure
    }
}

impl Member for SessionMember {
    fn ports(&self) -> &Ports {
        &self.ports
    }

    fn op_modes(&self) -> &[OpMode] {
        &[OpMode::HardRealTime, OpMode::SoftRealTime]
    }

    fn micro_step(&self) -> f64 {
        self.config.settings.frame
    }

    /// Its threads keep their own frame: a communication step only says
    /// how often frames cross, from the least frame to the longest run.
    fn takes_step(&self, h: f64) -> bool {
        (MIN_FRAME..=MAX_DURATION).contains(&h)
    }

    fn admits(&self, mode: OpMode) -> Result<(), MemberError> {
        if mode != OpMode::HardRealTime {
            return Ok(());
        }
        let settings = &self.config.settings;
        let report = preflight(settings, settings.policy != Policy::Explicit);
        if report.hard_real_time() {
            return Ok(());
        }
        let missing: Vec<&str> = report.missing().map(|c| c.name).collect();
        Err(MemberError::HardRealTimeRefused(format!(
            "this machine lacks {} (`tandem run` of the configuration without [dcp] prints the preflight)",
            missing.join(", ")
        )))
    }

    fn configure(&mut self) -> Result<(), MemberError> {
        self.stop();
        Ok(())
    }

    fn evaluate(&mut self) -> Result<(), MemberError> {
        Ok(())
    }

    fn step(&mut self, _t: f64, _h: f64) -> Result<(), MemberError> {
        Err(MemberError::ClockOnly)
    }

    fn start(&mut self, origin: Instant, _h: f64, hard: bool) -> Result<(), MemberError> {
        self.stop();
        // The calling (serving) thread carries the run's frames at each
        // point: it is placed as the run's I/O threads are (best effort).
        let fast = self.config.settings.fast.placement;
        prioritize(IoPlacement {
            priority: fast.priority.saturating_sub(1).max(1),
            fast_core: fast.core,
        });
        let plan = bind(self.config.clone())?;
        let mut options = Options::new(ClockMode::Real, &self.results);
        options.require_rt = hard;
        let wait = origin.saturating_duration_since(Instant::now());
        options.start_at = Some(MonotonicClock::raw_now() + wait.as_nanos() as i64);
        self.ends.clear();
        for bus in &self.buses {
            let (ours, theirs) = pipe::pair(PIPE_FRAMES);
            self.ends.push(ours);
            options.transports.insert(bus.clone(), theirs);
        }
        self.pending.fill(None);
        self.counts = FrameCounts::default();
        let mut session = Session::new(plan, options).map_err(|e| match e {
            SessionError::NotRealTime { missing, .. } => {
                MemberError::HardRealTimeRefused(format!("this machine lacks {missing}"))
            }
            e => MemberError::Session(e),
        })?;
        // A session made here has its controls.
        let Some(controls) = session.controls() else {
            return Err(MemberError::RunFailed("the run's controls are taken".into()));
        };
        let thread = thread::Builder::new()
            .name("dcp-run".into())
            .spawn(move || session.run(&mut ()))
            .map_err(MemberError::Spawn)?;
        self.run = Some(Running { thread, controls });
        Ok(())
    }

    fn advance(&mut self, _k: i64, _h: f64) -> Result<(), MemberError> {
        self.ended_early().map_or(Ok(()), Err)
    }

    fn stop(&mut self) {
        self.end_run();
    }

    fn take(&mut self, slots: &[Slot], payload: &[u8], _point: i64) -> bool {
        self.staged.clear();
        let mut at = 0;
        for slot in slots {
            let Ok((bytes, used)) = frames::value(&payload[at..]) else {
                return false;
            };
            let staged = &mut self.staged;
            if frames::decode(bytes, &mut |f| staged.push((slot.variable, f))).is_err() {
                return false;
            }
            at += used;
        }
        if at != payload.len() {
            return false;
        }
        for (bus, frame) in &self.staged {
            // Before the run starts and after it ends there is no bus.
            let Some(end) = self.ends.get_mut(*bus) else { continue };
            match end.tx.send(frame) {
                Ok(()) => self.counts.received += 1,
                Err(_) => self.counts.dropped += 1,
            }
        }
        true
    }

    fn collect(&mut self) {
        // Every bus's value in one data PDU: its header, and each value's
        // length before its frames.
        let buses = self.buses.len().max(1);
        let room = (MAX_PDU - DATA_HEADER - 4 * buses) / buses;
        for (k, value) in self.values.iter_mut().enumerate() {
            value.clear();
            let Some(end) = self.ends.get_mut(k) else { continue };
            let pending = &mut self.pending[k];
            loop {
                let frame = match pending.take() {
                    Some(f) => f,
                    None => match end.rx.recv(Duration::ZERO) {
                        Ok(Some(r)) => r.frame,
                        _ => break,
                    },
                };
                if value.len() + frames::HEADER + frame.len() > room {
                    *pending = Some(frame);
                    break;
                }
                frames::encode(&frame, value);
                self.counts.sent += 1;
            }
        }
    }

    fn give(&mut self, slots: &[Slot], out: &mut Vec<u8>) -> Result<(), MemberError> {
        for slot in slots {
            let value = &self.values[slot.variable];
            out.extend_from_slice(&(value.len() as u32).to_le_bytes());
            out.extend_from_slice(value);
        }
        Ok(())
    }

    fn report(&mut self) -> Option<String> {
        self.report.take()
    }
}
