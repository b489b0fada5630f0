//! A federation in soft or hard real time: every member registered in
//! that mode, data wired from slave to slave (each output a connection
//! takes goes straight to the slave it drives) and a copy of every output
//! to the master; a common start a little ahead; heartbeats (`INF_state`)
//! every half second, a member silent for three seconds given up; then
//! stop, deregister, and the recording written a row per step, a missing
//! value held from the step before and counted.

use std::collections::BTreeMap;
use std::net::SocketAddrV4;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tandem_runtime::record::Recorder;
use tandem_runtime::tandem::metrics::{Histogram, Snapshot};
use toml::Spanned;

use super::link::{Link, Outputs};
use super::{Federation, FederationError, Member};
use crate::pdu::{Network, Request};
use crate::ports::Variable;
use crate::slave::age_histogram;
use crate::slave::wiring::Slot;
use crate::types::{Scope, State, VERSION};
use tandem_bus::poll::wait_readable;

/// How often the master asks each member's state.
const HEARTBEAT: Duration = Duration::from_millis(500);

/// How long a member may be silent before it is given up.
const SILENCE: Duration = Duration::from_secs(3);

/// The most values a real-time recording holds.
const MAX_VALUES: u64 = 100_000_000;

/// What the master received from one member.
#[derive(Clone, Debug)]
pub struct SlaveReception {
    /// Its name.
    pub name: String,
    /// Steps whose outputs never came (held from the step before).
    pub missing: u64,
    /// The age of its data on arrival at the master (s).
    pub ages: Snapshot,
}

/// What a real-time federation reports.
#[derive(Clone, Debug)]
pub struct RealTimeReport {
    /// Steps recorded.
    pub steps: u64,
    /// Per member.
    pub members: Vec<SlaveReception>,
}

/// The variable named `name` among `variables`.
fn find<'a>(variables: &'a [Variable], name: &str) -> Option<(usize, &'a Variable)> {
    variables.iter().enumerate().find(|(_, v)| v.name == name)
}

/// Connections at the level of variables: (from member, to member) to
/// its (from variable, to variable) pairs.
type Wires = BTreeMap<(usize, usize), Vec<(usize, usize)>>;

/// Runs `federation` in its real-time mode.
pub fn run_real_time(federation: &Federation, recorder: &mut dyn Recorder) -> Result<RealTimeReport, FederationError> {
    let mut links = open_links(federation)?;
    let wires = wires(federation)?;
    check_bound(federation)?;
    // Register and configure every member; member k's copy to the master
    // is data id k + 1, the wires' ids follow.
    let mut record_slots: Vec<Vec<Slot>> = Vec::with_capacity(links.len());
    for (k, (m, link)) in federation.members.iter().zip(&mut links).enumerate() {
        record_slots.push(configure_member(federation, m, link, k as u16 + 1)?);
    }
    let first_wire = federation.members.len() as u16 + 1;
    for (id, (&ends, pairs)) in (first_wire..).zip(&wires) {
        configure_wire(federation, &mut links, id, ends, pairs)?;
    }
    prepare(&mut links)?;
    let origin = start(federation, &mut links)?;
    let mut table = Table::new(federation);
    let fault = receive(federation, &mut links, &record_slots, origin, &mut table).err();
    stop(&mut links);
    // The rows received are written, up to the fault if there was one.
    let report = table.write(federation, recorder, fault.is_some())?;
    match fault {
        Some(e) => Err(e),
        None => Ok(report),
    }
}

/// Sends one request to a member and waits for its acknowledgement (and
/// for state `until`, when given).
fn ask(link: &mut Link, request: Request<'_>, until: Option<State>) -> Result<(), FederationError> {
    link.exchange(None, &[request], None, until)?;
    Ok(())
}

/// A control link to every member, slave ids from 1.
fn open_links(federation: &Federation) -> Result<Vec<Link>, FederationError> {
    let mut links = Vec::with_capacity(federation.members.len());
    for (k, m) in federation.members.iter().enumerate() {
        links.push(Link::open(
            &m.name,
            k as u8 + 1,
            m.address,
            federation.timeout,
            federation.retries,
        )?);
    }
    Ok(links)
}

/// The federation's connections resolved to members and variables.
fn wires(federation: &Federation) -> Result<Wires, FederationError> {
    let mut wires = Wires::new();
    for (i, c) in federation.connections.iter().enumerate() {
        let from = connection_end(federation, i, &c.from, false).map_err(tandem_cosim::SystemError::from)?;
        let to = connection_end(federation, i, &c.to, true).map_err(tandem_cosim::SystemError::from)?;
        wires.entry((from.0, to.0)).or_default().push((from.1, to.1));
    }
    Ok(wires)
}

/// The member and variable that end `end` of connection `i` names: an
/// input (`to`) or an output (`from`).
fn connection_end(
    federation: &Federation,
    i: usize,
    end: &Spanned<String>,
    inputs: bool,
) -> Result<(usize, usize), tandem_config::ConfigError> {
    let members = &federation.members;
    let (m, v) = end.get_ref().split_once('.').unwrap_or((end.get_ref(), ""));
    let member = members.iter().position(|x| x.name == m);
    let found = member.and_then(|k| {
        let ports = &members[k].description.ports;
        find(if inputs { &ports.inputs } else { &ports.outputs }, v).map(|(j, _)| (k, j))
    });
    found.ok_or_else(|| {
        let key = if inputs { "to" } else { "from" };
        federation.place().error(
            end.span(),
            &format!("connection[{i}].{key}"),
            format!(
                "no {} \"{v}\" of a member \"{m}\"; write <member>.<{}>, the members being: {}",
                if inputs { "input" } else { "output" },
                if inputs { "input" } else { "output" },
                members.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", ")
            ),
        )
    })
}

/// Refuses a run whose recording, every member's row of every point kept
/// until the end, would pass [`MAX_VALUES`].
fn check_bound(federation: &Federation) -> Result<(), FederationError> {
    let members = &federation.members;
    let steps_total = federation.steps;
    let width: usize = members
        .iter()
        .map(|m| m.description.ports.outputs.iter().map(|v| v.width()).sum::<usize>())
        .sum();
    let held = (steps_total.saturating_add(1)).saturating_mul(width as u64 + members.len() as u64);
    if held > MAX_VALUES {
        return Err(FederationError::Record(std::io::Error::other(format!(
            "{} points of {width} outputs from {} members pass the bound of {MAX_VALUES:e} values held in \
             real time; record a shorter run",
            steps_total.saturating_add(1),
            members.len()
        ))));
    }
    Ok(())
}

/// Registers member `m` and configures its time resolution and its copy
/// of every output to the master as data id `id`; the slots of that copy.
fn configure_member(
    federation: &Federation,
    m: &Member,
    link: &mut Link,
    id: u16,
) -> Result<Vec<Slot>, FederationError> {
    let d = &m.description;
    let (n, den) = m.resolution;
    ask(
        link,
        Request::Register {
            state: State::Alive.code(),
            uuid: d.uuid,
            op_mode: federation.mode.code(),
            major: VERSION.0,
            minor: VERSION.1,
        },
        Some(State::Configuration),
    )?;
    ask(
        link,
        Request::TimeRes {
            numerator: n,
            denominator: den,
        },
        None,
    )?;
    // Its copy to the master.
    let slots: Vec<Slot> = d
        .ports
        .outputs
        .iter()
        .enumerate()
        .map(|(j, v)| Slot {
            pos: j as u16,
            variable: j,
            data_type: v.data_type,
        })
        .collect();
    for s in &slots {
        ask(
            link,
            Request::Output {
                data_id: id,
                pos: s.pos,
                source_vr: d.ports.outputs[s.variable].vr,
            },
            None,
        )?;
    }
    if !slots.is_empty() {
        let master = link.local();
        send_to(link, id, m.ticks, master)?;
    }
    Ok(slots)
}

/// Configures output data id `id` of a member to go every `steps` ticks
/// to `target`, in every scope.
fn send_to(link: &mut Link, id: u16, steps: u32, target: SocketAddrV4) -> Result<(), FederationError> {
    let mut scratch = [0; 6];
    for body in [
        Request::Steps { steps, data_id: id },
        Request::TargetNetwork {
            data_id: id,
            network: Network::udp(target, &mut scratch),
        },
        Request::Scope {
            data_id: id,
            scope: Scope::All.code(),
        },
    ] {
        ask(link, body, None)?;
    }
    Ok(())
}

/// Configures data id `id` to carry the outputs of member `from` that
/// drive inputs of member `to` (the variables' `pairs`) straight from one
/// to the other.
fn configure_wire(
    federation: &Federation,
    links: &mut [Link],
    id: u16,
    (from, to): (usize, usize),
    pairs: &[(usize, usize)],
) -> Result<(), FederationError> {
    let members = &federation.members;
    let (fd, td) = (&members[from].description, &members[to].description);
    for (pos, &(fv, tv)) in pairs.iter().enumerate() {
        ask(
            &mut links[from],
            Request::Output {
                data_id: id,
                pos: pos as u16,
                source_vr: fd.ports.outputs[fv].vr,
            },
            None,
        )?;
        ask(
            &mut links[to],
            Request::Input {
                data_id: id,
                pos: pos as u16,
                target_vr: td.ports.inputs[tv].vr,
                source_type: fd.ports.outputs[fv].data_type.code(),
            },
            None,
        )?;
    }
    let target = members[to].address;
    send_to(&mut links[from], id, members[from].ticks, target)?;
    let mut scratch = [0; 6];
    for body in [
        Request::SourceNetwork {
            data_id: id,
            network: Network::udp(target, &mut scratch),
        },
        Request::Scope {
            data_id: id,
            scope: Scope::All.code(),
        },
    ] {
        ask(&mut links[to], body, None)?;
    }
    Ok(())
}

/// Takes every member configured through PREPARED to CONFIGURED.
fn prepare(links: &mut [Link]) -> Result<(), FederationError> {
    for link in links {
        ask(
            link,
            Request::Prepare {
                state: State::Configuration.code(),
            },
            Some(State::Prepared),
        )?;
        ask(
            link,
            Request::Configure {
                state: State::Prepared.code(),
            },
            Some(State::Configured),
        )?;
    }
    Ok(())
}

/// The common start, in whole seconds of UNIX time a little ahead: every
/// member told the start first (a slave may be SYNCHRONIZED only at the
/// start; DCPLib's are), then each set running. The instant of the start.
fn start(federation: &Federation, links: &mut [Link]) -> Result<Instant, FederationError> {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let start_unix = (now + federation.start_delay).as_secs() + 1;
    let origin = Instant::now() + Duration::from_secs(start_unix).saturating_sub(now);
    for link in links.iter_mut() {
        ask(
            link,
            Request::Run {
                state: State::Configured.code(),
                start: start_unix as i64,
            },
            None,
        )?;
    }
    for link in links.iter_mut() {
        let deadline = origin.max(Instant::now()) + link.patience();
        link.await_state(State::Synchronized, deadline)?;
    }
    for link in links.iter_mut() {
        ask(
            link,
            Request::Run {
                state: State::Synchronized.code(),
                start: start_unix as i64,
            },
            Some(State::Running),
        )?;
    }
    Ok(origin)
}

/// Stops the members still there (one given up is asked nothing) and
/// deregisters those that stopped; failures here change nothing.
fn stop(links: &mut [Link]) {
    for link in links.iter_mut().filter(|l| !l.gone()) {
        let stop = Request::Stop {
            state: State::Running.code(),
        };
        if link.exchange(None, &[stop], None, Some(State::Stopped)).is_ok() {
            let deregister = Request::Deregister {
                state: State::Stopped.code(),
            };
            let _ = link.exchange(None, &[deregister], None, Some(State::Alive));
        }
    }
}

/// What a real-time master received: per member, its values at each
/// point (when they came) and the ages of its data on arrival.
struct Table {
    widths: Vec<usize>,
    columns: Vec<Vec<Option<Vec<f64>>>>,
    ages: Vec<Histogram>,
    /// The newest point any member's data came for.
    newest: Option<usize>,
}

impl Table {
    /// Room for every point of `federation`.
    fn new(federation: &Federation) -> Table {
        let widths: Vec<usize> = federation
            .members
            .iter()
            .map(|m| m.description.ports.outputs.iter().map(|v| v.width()).sum())
            .collect();
        Table {
            columns: widths
                .iter()
                .map(|_| vec![None; federation.steps as usize + 1])
                .collect(),
            ages: widths.iter().map(|_| age_histogram()).collect(),
            widths,
            newest: None,
        }
    }

    /// Writes a row per point (every point; after a fault, those up to
    /// the newest received), a value missing held from the row before.
    fn write(
        &self,
        federation: &Federation,
        recorder: &mut dyn Recorder,
        fault: bool,
    ) -> Result<RealTimeReport, FederationError> {
        let h = federation.step;
        let last = match (fault, self.newest) {
            (false, _) => Some(federation.steps as usize),
            (true, newest) => newest,
        };
        let mut row = vec![0.0; self.widths.iter().sum()];
        let mut missing = vec![0u64; self.widths.len()];
        for n in last.map_or(0..0, |last| 0..last + 1) {
            let mut at = 0;
            for ((column, w), missing) in self.columns.iter().zip(&self.widths).zip(&mut missing) {
                match &column[n] {
                    Some(v) => row[at..at + w].copy_from_slice(v),
                    None => *missing += 1,
                }
                at += w;
            }
            recorder.record(n as f64 * h, &row)?;
        }
        recorder.finish()?;
        Ok(RealTimeReport {
            steps: last.map_or(0, |l| l as u64),
            members: federation
                .members
                .iter()
                .enumerate()
                .map(|(k, m)| SlaveReception {
                    name: m.name.clone(),
                    missing: missing[k],
                    ages: self.ages[k].snapshot(),
                })
                .collect(),
        })
    }
}

/// The run itself: the copies received into `table`, heartbeats sent;
/// until the end, or the first member that fails.
fn receive(
    federation: &Federation,
    links: &mut [Link],
    slots: &[Vec<Slot>],
    origin: Instant,
    table: &mut Table,
) -> Result<(), FederationError> {
    let h = federation.step;
    let steps = federation.steps;
    let end = origin + Duration::from_secs_f64(h * steps as f64 + 0.2);
    let mut next_heartbeat = Instant::now();
    let mut values = vec![0.0; table.widths.iter().copied().max().unwrap_or(0)];
    while Instant::now() < end {
        if Instant::now() >= next_heartbeat {
            for link in links.iter_mut() {
                link.heartbeat(SILENCE)?;
            }
            next_heartbeat += HEARTBEAT;
        }
        for (k, link) in links.iter_mut().enumerate() {
            let width = table.widths[k];
            while let Some(point) = link.take_data(&mut Outputs {
                data_id: k as u16 + 1,
                slots: &slots[k],
                ports: &federation.members[k].description.ports,
                into: &mut values[..width],
            })? {
                // A point the clock cannot hold has no age.
                let sent = Duration::try_from_secs_f64(h * point.max(0) as f64)
                    .ok()
                    .and_then(|d| origin.checked_add(d));
                if let Some(sent) = sent {
                    table.ages[k].record(Instant::now().saturating_duration_since(sent).as_secs_f64());
                }
                let Ok(n) = usize::try_from(point) else { continue };
                if let Some(row) = table.columns[k].get_mut(n) {
                    *row = Some(values[..width].to_vec());
                    table.newest = table.newest.max(Some(n));
                }
            }
        }
        // Until the next datagram, the next heartbeat or the end.
        let mut fds = [-1; super::MAX_SLAVES];
        for (fd, link) in fds.iter_mut().zip(links.iter()) {
            *fd = link.raw_fd().unwrap_or(-1);
        }
        let wake = next_heartbeat.min(end);
        wait_readable(&fds[..links.len()], wake.saturating_duration_since(Instant::now()))?;
    }
    Ok(())
}
