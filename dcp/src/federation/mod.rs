//! The DCP master: a federation file's members registered, configured,
//! initialised, run and stopped, and what every member sends recorded.
//!
//! In **lock-step** (DCP's non-real-time mode) the federation is a
//! co-simulation of Tandem's master (`tandem-cosim`, Jacobi, constant
//! extrapolation, held point inputs) whose participants are the remote
//! slaves: the master passes every value on, so results are bit for bit
//! those of the same system run in one process by `tandem cosim` with
//! `extrapolation = 0` and `point_inputs = "held"`. In **real time** the
//! slaves run on their own clocks from a common start, data goes from
//! slave to slave, and the master records the copies it gets.

mod file;
mod link;
mod realtime;
mod remote;
#[cfg(test)]
mod testing;
pub mod wire;

use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;

use tandem_cosim::{assemble, CosimError, Master, Ordering, Participant, PointInputs, Summary, SystemError};
use tandem_runtime::record::Recorder;

pub use file::{Federation, Member, GUIDE, MAX_SLAVES};
pub use link::{DataError, LinkError, LinkStats};
pub use realtime::{run_real_time, RealTimeReport, SlaveReception};

use link::Link;
use remote::RemoteSlave;
use wire::Wire;

/// Why a federation stopped.
#[derive(Debug, thiserror::Error)]
pub enum FederationError {
    /// Its file, as assembled with the members' ports.
    #[error(transparent)]
    File(#[from] SystemError),
    /// A member could not be registered or configured.
    #[error(transparent)]
    Link(#[from] LinkError),
    /// The lock-step run failed (a member, or the recording); its
    /// message names the cause, so it has no source.
    #[error("{0}")]
    Run(CosimError),
    /// The recording of a real-time run failed.
    #[error("cannot write the results: {0}")]
    Record(std::io::Error),
}

impl From<CosimError> for FederationError {
    fn from(e: CosimError) -> FederationError {
        FederationError::Run(e)
    }
}

impl From<std::io::Error> for FederationError {
    fn from(e: std::io::Error) -> FederationError {
        FederationError::Record(e)
    }
}

/// What each member's line counted, by name.
pub type LineStats = Vec<(String, Arc<LinkStats>)>;

/// The column names of a federation's recording after `time`: every
/// output element of every member, as `member.output`.
pub fn output_names(federation: &Federation) -> Vec<String> {
    federation
        .members
        .iter()
        .flat_map(|m| {
            m.description.ports.outputs.iter().flat_map(move |v| {
                (0..v.width()).map(move |k| {
                    if v.width() == 1 {
                        format!("{}.{}", m.name, v.name)
                    } else {
                        format!("{}.{}[{k}]", m.name, v.name)
                    }
                })
            })
        })
        .collect()
}

/// Runs `federation` in lock-step: `recorder` gets a row per step (t = 0
/// included) with [`output_names`]; `progress` the fraction done.
pub fn run_lock_step(
    federation: &Federation,
    recorder: &mut dyn Recorder,
    progress: &mut dyn FnMut(f64),
) -> Result<(Summary, LineStats), FederationError> {
    lock_step(
        federation,
        &mut |k, member| {
            Link::open(
                &member.name,
                k as u8 + 1,
                member.address,
                federation.timeout,
                federation.retries,
            )
        },
        recorder,
        progress,
    )
}

/// [`run_lock_step`] over `wires`, one per member in order, instead of
/// UDP (a test's or a fuzz target's own, in memory).
pub fn run_lock_step_on(
    federation: &Federation,
    wires: Vec<Box<dyn Wire>>,
    recorder: &mut dyn Recorder,
    progress: &mut dyn FnMut(f64),
) -> Result<(Summary, LineStats), FederationError> {
    let mut wires = wires.into_iter();
    lock_step(
        federation,
        &mut |k, member| {
            let wire = wires.next().ok_or_else(|| LinkError::Io {
                slave: member.name.clone(),
                what: "no line to it",
                error: std::io::ErrorKind::NotConnected.into(),
            })?;
            Ok(Link::on(
                &member.name,
                k as u8 + 1,
                member.address,
                federation.timeout,
                federation.retries,
                wire,
            ))
        },
        recorder,
        progress,
    )
}

/// A lock-step run with each member's line from `line`.
fn lock_step(
    federation: &Federation,
    line: &mut dyn FnMut(usize, &Member) -> Result<Link, LinkError>,
    recorder: &mut dyn Recorder,
    progress: &mut dyn FnMut(f64),
) -> Result<(Summary, LineStats), FederationError> {
    let mut participants = Vec::with_capacity(federation.members.len());
    let mut stats = Vec::with_capacity(federation.members.len());
    for (k, member) in federation.members.iter().enumerate() {
        let link = line(k, member)?;
        stats.push((member.name.clone(), link.stats.clone()));
        let remote = RemoteSlave::connect(member, link)?;
        participants.push(Participant::new(member.name.clone(), Box::new(remote), 1));
    }
    let master = Master {
        step: federation.step,
        steps: federation.steps,
        ordering: Ordering::Jacobi,
        extrapolation: 0,
        iterate: None,
        threads: participants.len(),
        point_inputs: PointInputs::Held,
    };
    let system = assemble(
        &federation.place(),
        master,
        participants,
        &federation.connections,
        "a federation cannot iterate",
    )?;
    let summary = system.run(recorder, progress)?;
    Ok((summary, stats))
}

/// One line per member: requests, datagrams sent again, stale and
/// malformed datagrams.
pub fn describe_stats(stats: &LineStats) -> Vec<String> {
    stats
        .iter()
        .map(|(name, s)| {
            format!(
                "{name}: {} requests, {} datagrams sent again, {} stale data, {} malformed",
                s.requests.load(AtomicOrdering::Relaxed),
                s.resent.load(AtomicOrdering::Relaxed),
                s.stale.load(AtomicOrdering::Relaxed),
                s.malformed.load(AtomicOrdering::Relaxed)
            )
        })
        .collect()
}
