//! A DCP slave in lock-step as a participant of Tandem's co-simulation
//! master: registered and configured when made, its t = 0 outputs from the
//! initialisation loop (`STC_initialize`, `STC_send_outputs`), each step
//! its inputs as data, then `STC_do_step` and `STC_send_outputs` sent
//! back to back, so that a step costs one round trip.

use std::net::SocketAddrV4;
use std::time::Instant;

use tandem_cosim::{Course, Feedthrough, Recording, SubModel, SubModelError};
use tandem_models::Variable as Port;

use super::file::{resolution_for, Member};
use super::link::{Link, LinkError, Outputs};
use crate::pdu::{Network, Request};
use crate::ports::Ports;
use crate::slave::wiring::Slot;
use crate::types::{ErrorCode, OpMode, Scope, State, VERSION};

/// The data id of the inputs the master sends a slave.
pub(crate) const INPUT_DATA: u16 = 1;
/// The data id of the outputs a slave sends the master.
pub(crate) const OUTPUT_DATA: u16 = 2;

/// A remote slave in lock-step.
pub(crate) struct RemoteSlave {
    link: Link,
    ports: Ports,
    inputs: Vec<Port>,
    outputs: Vec<Port>,
    feedthrough: Feedthrough,
    input_slots: Vec<Slot>,
    output_slots: Vec<Slot>,
    /// The resolution (s) of one step count.
    resolution: (u32, u32),
    /// Ticks of the resolution in a communication step.
    ticks: u32,
    state: State,
    /// Input values held over the current step.
    u: Vec<f64>,
    /// Outputs at the newest point.
    y: Vec<f64>,
    /// A state change and `STC_send_outputs` go back to back.
    back_to_back: bool,
}

/// The slots of every variable of one causality, in order, each sent as
/// its own type.
fn slots(variables: &[crate::ports::Variable]) -> Vec<Slot> {
    variables
        .iter()
        .enumerate()
        .map(|(k, v)| Slot {
            pos: k as u16,
            variable: k,
            data_type: v.data_type,
        })
        .collect()
}

/// The output data a lock-step exchange waits for, into `y`, if the
/// slave has outputs.
fn outputs<'a>(slots: &'a [Slot], ports: &'a Ports, y: &'a mut [f64]) -> Option<Outputs<'a>> {
    (!slots.is_empty()).then_some(Outputs {
        data_id: OUTPUT_DATA,
        slots,
        ports,
        into: y,
    })
}

/// A variable's elements as model ports (`name`, or `name[k]` for a
/// vector).
fn elements(variables: &[crate::ports::Variable]) -> Vec<Port> {
    variables
        .iter()
        .flat_map(|v| {
            (0..v.width()).map(move |k| Port {
                name: if v.width() == 1 {
                    v.name.clone()
                } else {
                    format!("{}[{k}]", v.name)
                },
                unit: v.unit.clone(),
                default: v.start.get(k).copied().unwrap_or(0.0),
                range: v.range,
            })
        })
        .collect()
}

impl RemoteSlave {
    /// Registers `member` (its id is the line's) in lock-step and configures it up
    /// to CONFIGURED, every input fed by the master and every output sent
    /// to it.
    pub(crate) fn connect(member: &Member, link: Link) -> Result<RemoteSlave, LinkError> {
        let d = &member.description;
        let ports = d.ports.clone();
        let inputs = elements(&ports.inputs);
        let outputs = elements(&ports.outputs);
        // The outputs' dependencies (when the description gives them) as
        // element lists; otherwise every output depends on every input.
        let lists: Option<Vec<Vec<usize>>> = ports
            .outputs
            .iter()
            .map(|o| {
                let deps = o.dependencies.as_ref()?;
                let list: Vec<usize> = deps
                    .iter()
                    .filter_map(|vr| ports.inputs.iter().find(|i| i.vr == *vr))
                    .flat_map(|i| i.elements.clone())
                    .collect();
                Some(vec![list; o.width()])
            })
            .collect::<Option<Vec<_>>>()
            .map(|v| v.concat());
        let feedthrough = lists
            .and_then(|l| Feedthrough::from_lists(inputs.len(), l).ok())
            .unwrap_or_else(|| Feedthrough::all(inputs.len(), outputs.len()));
        let mut remote = RemoteSlave {
            input_slots: slots(&ports.inputs),
            output_slots: slots(&ports.outputs),
            u: inputs.iter().map(|p| p.default).collect(),
            y: vec![0.0; outputs.len()],
            link,
            ports,
            inputs,
            outputs,
            feedthrough,
            back_to_back: true,
            resolution: member.resolution,
            ticks: member.ticks,
            state: State::Alive,
        };
        remote.register(&d.uuid, d.control.unwrap_or(member.address))?;
        Ok(remote)
    }

    /// `STC_register` to CONFIGURED; `own_address` is where the slave says
    /// it listens (its input data comes there through the same path as its
    /// control PDUs).
    fn register(&mut self, uuid: &[u8; 16], own_address: SocketAddrV4) -> Result<(), LinkError> {
        let link = &mut self.link;
        link.exchange(
            None,
            &[Request::Register {
                state: State::Alive.code(),
                uuid: *uuid,
                op_mode: OpMode::NonRealTime.code(),
                major: VERSION.0,
                minor: VERSION.1,
            }],
            None,
            Some(State::Configuration),
        )?;
        let (numerator, denominator) = self.resolution;
        let mut config = vec![Request::TimeRes { numerator, denominator }];
        for s in &self.input_slots {
            config.push(Request::Input {
                data_id: INPUT_DATA,
                pos: s.pos,
                target_vr: self.ports.inputs[s.variable].vr,
                source_type: s.data_type.code(),
            });
        }
        for s in &self.output_slots {
            config.push(Request::Output {
                data_id: OUTPUT_DATA,
                pos: s.pos,
                source_vr: self.ports.outputs[s.variable].vr,
            });
        }
        let (mut source, mut target) = ([0; 6], [0; 6]);
        let master = link.local();
        if !self.input_slots.is_empty() {
            config.push(Request::SourceNetwork {
                data_id: INPUT_DATA,
                network: Network::udp(own_address, &mut source),
            });
            config.push(Request::Scope {
                data_id: INPUT_DATA,
                scope: Scope::All.code(),
            });
        }
        if !self.output_slots.is_empty() {
            // Optional in non-real time, but DCPLib's slaves require it.
            config.push(Request::Steps {
                steps: self.ticks,
                data_id: OUTPUT_DATA,
            });
            config.push(Request::TargetNetwork {
                data_id: OUTPUT_DATA,
                network: Network::udp(master, &mut target),
            });
            config.push(Request::Scope {
                data_id: OUTPUT_DATA,
                scope: Scope::All.code(),
            });
        }
        for body in &config {
            link.exchange(None, std::slice::from_ref(body), None, None)?;
        }
        link.exchange(
            None,
            &[Request::Prepare {
                state: State::Configuration.code(),
            }],
            None,
            Some(State::Prepared),
        )?;
        link.exchange(
            None,
            &[Request::Configure {
                state: State::Prepared.code(),
            }],
            None,
            Some(State::Configured),
        )?;
        self.state = State::Configured;
        Ok(())
    }

    /// Input data, `change` (a state change that ends in state `between`)
    /// and `STC_send_outputs`, waiting for the outputs and for state
    /// `until`. The two requests go back to back (one round trip), until a
    /// slave refuses the second as not allowed in its state: one that
    /// acknowledges a transition before it ends it (DCPLib's), which the
    /// specification allows. From then on the second waits for `between`.
    /// A slave refuses the second too when it refused `change` (its input
    /// data lost) and that refusal was lost on the way: then it is still
    /// in `until`, the state `change` left, and the exchange goes again.
    fn exchange(&mut self, change: Request<'_>, between: State, until: State) -> Result<(), LinkError> {
        let send = Request::SendOutputs { state: between.code() };
        let RemoteSlave {
            link,
            input_slots,
            output_slots,
            ports,
            u,
            y,
            back_to_back,
            ..
        } = self;
        let data = (!input_slots.is_empty()).then_some((INPUT_DATA, &input_slots[..], &*ports, &u[..]));
        let mut again = link.retries();
        while *back_to_back {
            match link.exchange(data, &[change, send], outputs(output_slots, ports, y), Some(until)) {
                Err(LinkError::Refused {
                    error: Some(ErrorCode::NotAllowedInState),
                    request,
                    ..
                }) if request == send.name() => {
                    if again > 0 && link.asked_state()? == Some(until) {
                        again -= 1;
                        continue;
                    }
                    *back_to_back = false;
                    let deadline = Instant::now() + link.patience();
                    link.await_state(between, deadline)?;
                    return link.exchange(None, &[send], outputs(output_slots, ports, y), Some(until));
                }
                done => return done,
            }
        }
        link.exchange(data, &[change], None, Some(between))?;
        link.exchange(None, &[send], outputs(output_slots, ports, y), Some(until))
    }

    /// The number of resolution ticks in `h` seconds (the communication
    /// step's, checked with the federation file).
    fn ticks(&self, h: f64) -> Result<u32, SubModelError> {
        match resolution_for(h, Some(self.resolution)) {
            Some((_, ticks)) => Ok(ticks),
            None => Err(SubModelError::StepNotMultiple {
                step: h,
                micro: self.resolution.0 as f64 / self.resolution.1 as f64,
            }),
        }
    }

    /// Stops and deregisters the slave (best effort: the run is over; a
    /// slave given up is asked nothing).
    fn leave(&mut self) {
        if self.link.gone() {
            return;
        }
        let stoppable = self.state.stoppable();
        if stoppable {
            let _ = self.link.exchange(
                None,
                &[Request::Stop {
                    state: self.state.code(),
                }],
                None,
                Some(State::Stopped),
            );
            self.state = State::Stopped;
        }
        if matches!(self.state, State::Stopped | State::Configuration) {
            let _ = self.link.exchange(
                None,
                &[Request::Deregister {
                    state: self.state.code(),
                }],
                None,
                Some(State::Alive),
            );
        }
    }
}

impl Drop for RemoteSlave {
    fn drop(&mut self) {
        self.leave();
    }
}

/// A line error as a participant's error.
fn failed(e: LinkError) -> SubModelError {
    SubModelError::Remote {
        slave: e.slave().to_owned(),
        reason: e.to_string(),
    }
}

impl SubModel for RemoteSlave {
    fn inputs(&self) -> &[Port] {
        &self.inputs
    }

    fn outputs(&self) -> &[Port] {
        &self.outputs
    }

    fn feedthrough(&self) -> &Feedthrough {
        &self.feedthrough
    }

    /// At t = 0 a round of the initialisation loop; after a step, the
    /// outputs the step sent (computed with the inputs held over it).
    fn evaluate(&mut self, u: &[f64], y: &mut [f64]) -> Result<(), SubModelError> {
        if self.state == State::Configured {
            self.u.copy_from_slice(u);
            self.exchange(
                Request::Initialize {
                    state: State::Configured.code(),
                },
                State::Initialized,
                State::Configured,
            )
            .map_err(failed)?;
        }
        y.copy_from_slice(&self.y);
        Ok(())
    }

    fn step(&mut self, t: f64, h: f64, inputs: &[Course], _: Option<&mut Recording>) -> Result<(), SubModelError> {
        if self.state == State::Configured {
            self.link
                .exchange(
                    None,
                    &[Request::Run {
                        state: State::Configured.code(),
                        start: 0,
                    }],
                    None,
                    Some(State::Synchronized),
                )
                .map_err(failed)?;
            self.link
                .exchange(
                    None,
                    &[Request::Run {
                        state: State::Synchronized.code(),
                        start: 0,
                    }],
                    None,
                    Some(State::Running),
                )
                .map_err(failed)?;
            self.state = State::Running;
        }
        for (u, c) in self.u.iter_mut().zip(inputs) {
            *u = c.at(t);
        }
        let steps = self.ticks(h)?;
        self.exchange(
            Request::DoStep {
                state: State::Running.code(),
                steps,
            },
            State::Computed,
            State::Running,
        )
        .map_err(failed)
    }

    fn save(&mut self) -> Result<(), SubModelError> {
        Err(SubModelError::NoRollback(format!(
            "slave \"{}\" is a remote DCP slave, which cannot go back",
            self.link.name
        )))
    }

    fn restore(&mut self) -> Result<(), SubModelError> {
        Err(SubModelError::NothingSaved)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::io;
    use std::net::Ipv4Addr;
    use std::os::fd::RawFd;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use super::super::testing::{next_into, pdu as out, variable};
    use super::*;
    use crate::description::Description;
    use crate::federation::wire::Wire;
    use crate::pdu::{DataKind, Pdu, Response};
    use crate::ports::Causality;

    /// A slave that acknowledges `STC_initialize` and `STC_do_step` before
    /// it ends them (as DCPLib's do: the state they lead to is notified
    /// later), and refuses `STC_send_outputs` until then; or, `on_time`,
    /// ends them first (as Tandem's do).
    #[derive(Default)]
    struct Late {
        on_time: bool,
        /// How many `STC_do_step` it refuses for their lost input data, each
        /// refusal lost on its way back.
        lose_steps: usize,
        state: Option<State>,
        /// The notification of a transition still under way.
        pending: Option<State>,
        inbox: VecDeque<Vec<u8>>,
        /// The sequence id of its next output data.
        data_seq: u16,
        /// Each request's name, and whether it was refused.
        log: Asked,
    }

    impl Late {
        fn answer(&mut self, seq: u16, body: Request<'_>) {
            let ack = out(Pdu::Response {
                seq,
                sender: 1,
                body: Response::Ack,
            });
            let notify = |s: State| {
                out(Pdu::StateChanged {
                    sender: 1,
                    state: s.code(),
                })
            };
            let state = self.state.unwrap_or(State::Alive);
            let (refused, then): (bool, &[State]) = match body {
                Request::Register { .. } => (false, &[State::Configuration]),
                Request::Prepare { .. } => (false, &[State::Preparing, State::Prepared]),
                Request::Configure { .. } => (false, &[State::Configuring, State::Configured]),
                Request::Initialize { .. } if self.on_time => (false, &[State::Initializing, State::Initialized]),
                Request::Initialize { .. } => {
                    self.pending = Some(State::Initialized);
                    (false, &[State::Initializing])
                }
                Request::DoStep { .. } if self.lose_steps > 0 => {
                    self.lose_steps -= 1;
                    self.log.lock().unwrap().push((body.name(), true));
                    return;
                }
                Request::DoStep { .. } if self.on_time => (false, &[State::Computing, State::Computed]),
                Request::DoStep { .. } => {
                    self.pending = Some(State::Computed);
                    (false, &[State::Computing])
                }
                Request::State => {
                    self.log.lock().unwrap().push((body.name(), false));
                    self.inbox.push_back(out(Pdu::Response {
                        seq,
                        sender: 1,
                        body: Response::StateAck { state: state.code() },
                    }));
                    return;
                }
                Request::SendOutputs { .. } if state == State::Initialized => {
                    (false, &[State::SendingI, State::Configured])
                }
                Request::SendOutputs { .. } if state == State::Computed => (false, &[State::SendingD, State::Running]),
                Request::SendOutputs { .. } => (true, &[]),
                Request::Run { .. } if state == State::Configured => {
                    (false, &[State::Synchronizing, State::Synchronized])
                }
                Request::Run { .. } => (false, &[State::Running]),
                Request::Stop { .. } => (false, &[State::Stopping, State::Stopped]),
                Request::Deregister { .. } => (false, &[State::Alive]),
                _ => (false, &[]),
            };
            self.log.lock().unwrap().push((body.name(), refused));
            if refused {
                self.inbox.push_back(out(Pdu::Response {
                    seq,
                    sender: 1,
                    body: Response::Nack {
                        expected: seq.wrapping_add(1),
                        error: ErrorCode::NotAllowedInState.code(),
                    },
                }));
                return;
            }
            self.inbox.push_back(ack);
            if matches!(then.last(), Some(State::Configured | State::Running))
                && matches!(body, Request::SendOutputs { .. })
            {
                self.data_seq += 1;
                self.inbox.push_back(out(Pdu::Data {
                    kind: DataKind::InputOutput,
                    seq: self.data_seq,
                    id: OUTPUT_DATA,
                    payload: &0.75f64.to_le_bytes(),
                }));
            }
            for &s in then {
                self.inbox.push_back(notify(s));
                self.state = Some(s);
            }
        }
    }

    impl Wire for Late {
        fn local(&self) -> SocketAddrV4 {
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9)
        }
        fn send(&mut self, datagrams: &[(SocketAddrV4, &[u8])]) -> io::Result<()> {
            for (_, bytes) in datagrams {
                if let Ok(Pdu::Request { seq, body, .. }) = Pdu::read(bytes) {
                    self.answer(seq, body);
                }
            }
            Ok(())
        }
        fn receive(&mut self, buf: &mut [u8], _: Option<Instant>) -> io::Result<Option<usize>> {
            // The transition under way ends once everything before is out.
            if self.inbox.is_empty() {
                if let Some(s) = self.pending.take() {
                    self.inbox.push_back(out(Pdu::StateChanged {
                        sender: 1,
                        state: s.code(),
                    }));
                    self.state = Some(s);
                }
            }
            Ok(next_into(&mut self.inbox, buf))
        }
        fn raw_fd(&self) -> Option<RawFd> {
            None
        }
    }

    /// Each request a slave was asked, by name, and whether it refused it.
    type Asked = Arc<Mutex<Vec<(&'static str, bool)>>>;

    /// A lock-step member of one input and one output on `wire`, connected
    /// and stepped twice; what the wire's slave was asked.
    fn connected(wire: Late) -> (RemoteSlave, Asked) {
        let address = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 8);
        let member = Member {
            name: "late".into(),
            description: Description {
                name: "late".into(),
                uuid: [7; 16],
                op_modes: vec![OpMode::NonRealTime],
                fixed_resolution: Some((1, 100)),
                recommended_resolution: None,
                control: Some(address),
                heartbeat: None,
                ports: Ports {
                    inputs: vec![variable("a", 2, Causality::Input)],
                    outputs: vec![variable("y", 1, Causality::Output)],
                },
            },
            address,
            resolution: (1, 100),
            ticks: 1,
        };
        let log = wire.log.clone();
        let link = Link::on("late", 1, address, Duration::from_millis(1), 3, Box::new(wire));
        let mut remote = RemoteSlave::connect(&member, link).unwrap();
        let mut y = [0.0];
        remote.evaluate(&[0.5], &mut y).unwrap();
        assert_eq!(y, [0.75]);
        for t in [0.0, 0.01] {
            let stepped = remote.step(t, 0.01, &[Course::constant(0.5)], None);
            assert!(stepped.is_ok(), "{stepped:?}: {:?}", log.lock().unwrap());
        }
        (remote, log)
    }

    /// What the slave was asked from `STC_initialize` on, and whether it
    /// refused; and whether it was asked `CFG_steps` before.
    fn asked(log: &Mutex<Vec<(&'static str, bool)>>) -> (Vec<(&'static str, bool)>, bool) {
        let log = log.lock().unwrap().clone();
        let from = log.iter().position(|(n, _)| *n == "STC_initialize").unwrap();
        (log[from..].to_vec(), log[..from].iter().any(|(n, _)| *n == "CFG_steps"))
    }

    #[test]
    fn a_slave_that_ends_its_transitions_after_acknowledging_them_is_stepped_one_request_at_a_time() {
        let (_remote, log) = connected(Late::default());
        let (asked, steps) = asked(&log);
        assert_eq!(
            asked,
            [
                ("STC_initialize", false),
                ("STC_send_outputs", true),
                ("INF_state", false),
                ("STC_send_outputs", false),
                ("STC_run", false),
                ("STC_run", false),
                ("STC_do_step", false),
                ("STC_send_outputs", false),
                ("STC_do_step", false),
                ("STC_send_outputs", false),
            ]
        );
        assert!(steps, "{asked:?}");
    }

    #[test]
    fn a_step_whose_refusal_was_lost_goes_again_once_the_slave_says_it_did_not_step() {
        // The first step is refused (its input data lost) and the refusal
        // lost: the step's STC_send_outputs is refused as not allowed, as
        // a slave that acknowledges early refuses it, but the slave is
        // still RUNNING. The step goes again, both requests back to back
        // from then on.
        let (_remote, log) = connected(Late {
            on_time: true,
            lose_steps: 1,
            ..Late::default()
        });
        let (asked, _) = asked(&log);
        assert_eq!(
            asked,
            [
                ("STC_initialize", false),
                ("STC_send_outputs", false),
                ("STC_run", false),
                ("STC_run", false),
                ("STC_do_step", true),
                ("STC_send_outputs", true),
                ("INF_state", false),
                ("STC_do_step", false),
                ("STC_send_outputs", false),
                ("STC_do_step", false),
                ("STC_send_outputs", false),
            ]
        );
    }
}
