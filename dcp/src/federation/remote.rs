//! A DCP slave in lock-step as a participant of Tandem's co-simulation
//! master: registered and configured when made, its t = 0 outputs from the
//! initialisation loop (`STC_initialize`, `STC_send_outputs`), each step
//! its inputs as data, then `STC_do_step` and `STC_send_outputs` sent
//! back to back, so that a step costs one round trip.

use std::net::SocketAddrV4;

use tandem_cosim::{Course, Feedthrough, Recording, SubModel, SubModelError};
use tandem_models::Variable as Port;

use super::file::{resolution_for, Member};
use super::link::{Link, LinkError, Outputs};
use crate::pdu::{Network, Request};
use crate::ports::Ports;
use crate::slave::wiring::Slot;
use crate::types::{OpMode, Scope, State, VERSION};

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

    /// Input data and `requests`, waiting for the outputs when `outputs`
    /// and for state `until`.
    fn exchange(&mut self, requests: &[Request<'_>], outputs: bool, until: State) -> Result<(), LinkError> {
        let data =
            (!self.input_slots.is_empty()).then_some((INPUT_DATA, &self.input_slots[..], &self.ports, &self.u[..]));
        let outputs = (outputs && !self.output_slots.is_empty()).then_some(Outputs {
            data_id: OUTPUT_DATA,
            slots: &self.output_slots,
            ports: &self.ports,
            into: &mut self.y,
        });
        self.link.exchange(data, requests, outputs, Some(until))
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
    SubModelError::Other(Box::new(e))
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
                &[
                    Request::Initialize {
                        state: State::Configured.code(),
                    },
                    Request::SendOutputs {
                        state: State::Initialized.code(),
                    },
                ],
                true,
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
            &[
                Request::DoStep {
                    state: State::Running.code(),
                    steps,
                },
                Request::SendOutputs {
                    state: State::Computed.code(),
                },
            ],
            true,
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
