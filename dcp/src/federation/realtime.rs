//! A federation in soft or hard real time: every member registered in
//! that mode, data wired from slave to slave (each output a connection
//! takes goes straight to the slave it drives) and a copy of every output
//! to the master; a common start a little ahead; heartbeats (`INF_state`)
//! every half second, a member silent for three seconds given up; then
//! stop, deregister, and the recording written a row per step, a missing
//! value held from the step before and counted.

use std::collections::BTreeMap;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tandem_runtime::record::Recorder;
use tandem_runtime::tandem::metrics::{Histogram, Snapshot};

use super::link::{Link, Outputs};
use super::{Federation, FederationError};
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

/// Runs `federation` in its real-time mode.
pub fn run_real_time(federation: &Federation, recorder: &mut dyn Recorder) -> Result<RealTimeReport, FederationError> {
    let place = federation.place();
    let members = &federation.members;
    let mut links = Vec::with_capacity(members.len());
    for (k, m) in members.iter().enumerate() {
        links.push(Link::open(
            &m.name,
            k as u8 + 1,
            m.address,
            federation.timeout,
            federation.retries,
        )?);
    }
    // Connections at the level of variables: (from member, from var, to member, to var).
    let mut wires: BTreeMap<(usize, usize), Vec<(usize, usize)>> = BTreeMap::new();
    for (i, c) in federation.connections.iter().enumerate() {
        let end = |text: &str, inputs: bool, key: &str, span: std::ops::Range<usize>| {
            let (m, v) = text.split_once('.').unwrap_or((text, ""));
            let member = members.iter().position(|x| x.name == m);
            let found = member.and_then(|k| {
                let ports = &members[k].description.ports;
                find(if inputs { &ports.inputs } else { &ports.outputs }, v).map(|(j, _)| (k, j))
            });
            found.ok_or_else(|| {
                place.error(
                    span,
                    &format!("connection[{i}].{key}"),
                    format!(
                        "no {} \"{v}\" of a member \"{m}\"; write <member>.<{}>, the members being: {}",
                        if inputs { "input" } else { "output" },
                        if inputs { "input" } else { "output" },
                        members.iter().map(|m| m.name.as_str()).collect::<Vec<_>>().join(", ")
                    ),
                )
            })
        };
        let from = end(c.from.get_ref(), false, "from", c.from.span()).map_err(tandem_cosim::SystemError::from)?;
        let to = end(c.to.get_ref(), true, "to", c.to.span()).map_err(tandem_cosim::SystemError::from)?;
        wires.entry((from.0, to.0)).or_default().push((from.1, to.1));
    }
    let steps_total = federation.steps;
    let width: usize = members
        .iter()
        .map(|m| m.description.ports.outputs.iter().map(|v| v.width()).sum::<usize>())
        .sum();
    // Each member's row of each point is kept until the end.
    let held = (steps_total.saturating_add(1)).saturating_mul(width as u64 + members.len() as u64);
    if held > MAX_VALUES {
        return Err(FederationError::Record(std::io::Error::other(format!(
            "{} points of {width} outputs from {} members pass the bound of {MAX_VALUES:e} values held in \
             real time; record a shorter run",
            steps_total.saturating_add(1),
            members.len()
        ))));
    }
    // Register and configure every member.
    let mut record_slots: Vec<Vec<Slot>> = Vec::new();
    let mut next_id: u16 = 1;
    let mut ticks = Vec::new();
    for (k, m) in members.iter().enumerate() {
        let d = &m.description;
        let link = &mut links[k];
        let (n, den) = m.resolution;
        let steps = m.ticks;
        ticks.push(steps);
        link.exchange(
            None,
            &[Request::Register {
                state: State::Alive.code(),
                uuid: d.uuid,
                op_mode: federation.mode.code(),
                major: VERSION.0,
                minor: VERSION.1,
            }],
            None,
            Some(State::Configuration),
        )?;
        link.exchange(
            None,
            &[Request::TimeRes {
                numerator: n,
                denominator: den,
            }],
            None,
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
        let id = next_id;
        next_id += 1;
        let mut scratch = [0; 6];
        for s in &slots {
            link.exchange(
                None,
                &[Request::Output {
                    data_id: id,
                    pos: s.pos,
                    source_vr: d.ports.outputs[s.variable].vr,
                }],
                None,
                None,
            )?;
        }
        if !slots.is_empty() {
            let master = link.local();
            for body in [
                Request::Steps { steps, data_id: id },
                Request::TargetNetwork {
                    data_id: id,
                    network: Network::udp(master, &mut scratch),
                },
                Request::Scope {
                    data_id: id,
                    scope: Scope::All.code(),
                },
            ] {
                link.exchange(None, &[body], None, None)?;
            }
        }
        record_slots.push(slots);
    }
    for (&(from, to), pairs) in &wires {
        let id = next_id;
        next_id += 1;
        let (fd, td) = (&members[from].description, &members[to].description);
        for (pos, &(fv, tv)) in pairs.iter().enumerate() {
            links[from].exchange(
                None,
                &[Request::Output {
                    data_id: id,
                    pos: pos as u16,
                    source_vr: fd.ports.outputs[fv].vr,
                }],
                None,
                None,
            )?;
            links[to].exchange(
                None,
                &[Request::Input {
                    data_id: id,
                    pos: pos as u16,
                    target_vr: td.ports.inputs[tv].vr,
                    source_type: fd.ports.outputs[fv].data_type.code(),
                }],
                None,
                None,
            )?;
        }
        let mut a = [0; 6];
        let mut b = [0; 6];
        let target = members[to].address;
        for body in [
            Request::Steps {
                steps: ticks[from],
                data_id: id,
            },
            Request::TargetNetwork {
                data_id: id,
                network: Network::udp(target, &mut a),
            },
            Request::Scope {
                data_id: id,
                scope: Scope::All.code(),
            },
        ] {
            links[from].exchange(None, &[body], None, None)?;
        }
        for body in [
            Request::SourceNetwork {
                data_id: id,
                network: Network::udp(target, &mut b),
            },
            Request::Scope {
                data_id: id,
                scope: Scope::All.code(),
            },
        ] {
            links[to].exchange(None, &[body], None, None)?;
        }
    }
    for link in &mut links {
        let prepare = Request::Prepare {
            state: State::Configuration.code(),
        };
        link.exchange(None, &[prepare], None, Some(State::Prepared))?;
        let configure = Request::Configure {
            state: State::Prepared.code(),
        };
        link.exchange(None, &[configure], None, Some(State::Configured))?;
    }
    // The common start, in whole seconds of UNIX time.
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let start_unix = (now + federation.start_delay).as_secs() + 1;
    let origin = Instant::now() + Duration::from_secs(start_unix).saturating_sub(now);
    // Every member told the start first: a slave may be SYNCHRONIZED only
    // at the start (DCPLib's are).
    for link in &mut links {
        link.exchange(
            None,
            &[Request::Run {
                state: State::Configured.code(),
                start: start_unix as i64,
            }],
            None,
            None,
        )?;
    }
    for link in &mut links {
        let deadline = origin.max(Instant::now()) + link.patience();
        link.await_state(State::Synchronized, deadline)?;
    }
    for link in &mut links {
        link.exchange(
            None,
            &[Request::Run {
                state: State::Synchronized.code(),
                start: start_unix as i64,
            }],
            None,
            Some(State::Running),
        )?;
    }
    let mut table = Table::new(federation);
    let fault = receive(federation, &mut links, &record_slots, origin, &mut table).err();
    // Stop the members still there (one given up is asked nothing).
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
    // The rows received are written, up to the fault if there was one.
    let report = table.write(federation, recorder, fault.is_some())?;
    match fault {
        Some(e) => Err(e),
        None => Ok(report),
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
