//! What the master configures in CONFIGURATION (`CFG_*`): the time
//! resolution, which variables travel in which data id at which position,
//! where data goes and comes from, and the scopes; and the check of its
//! completeness before PREPARING.
//!
//! Everything here comes from the wire, so it is bounded: at most
//! [`MAX_DATA_IDS`] data ids, [`MAX_SLOTS`] positions in all, a data id's
//! values within one datagram, [`MAX_TARGETS`] targets of a data id and
//! [`MAX_STREAMS`] in all, and [`MAX_DATA_SOCKETS`] source ports. A
//! configuration beyond a bound is refused: `NOT_SUPPORTED_PDU_SIZE` for
//! data ids and positions, `INVALID_NETWORK_INFORMATION` for addresses.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddrV4;

use super::sockets::MAX_DATA_SOCKETS;
use crate::pdu::Request;
use crate::ports::{Causality, Ports, Variable};
use crate::types::{DataType, ErrorCode, Scope, Transport, MAX_PDU};

/// The most data ids a slave takes configuration for.
pub const MAX_DATA_IDS: usize = 1024;
/// The most positions configured in all data ids together.
pub const MAX_SLOTS: usize = 1 << 16;
/// The most targets of one output data id.
pub const MAX_TARGETS: usize = 16;
/// The most targets of all data ids together (each is a datagram per step).
pub const MAX_STREAMS: usize = 64;
/// The header of a data PDU: type, sequence id, data id.
const DATA_HEADER: usize = 5;
/// The longest decimal text of an `f64` (Rust's shortest round-trip form
/// of the smallest subnormal, `0.000…5`, is 326 characters).
const LONGEST_NUMBER: usize = 340;

/// One position of a data id: the variable (index among the inputs or
/// outputs) and its type on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// `pos`.
    pub pos: u16,
    /// The variable's index.
    pub variable: usize,
    /// The type its values travel as.
    pub data_type: DataType,
}

/// The configuration received so far.
#[derive(Clone, Debug, Default)]
pub struct Wiring {
    /// `CFG_time_res`: numerator, denominator.
    pub resolution: Option<(u32, u32)>,
    /// `CFG_steps` of each output data id.
    pub steps: BTreeMap<u16, u32>,
    /// Input data ids: their slots, in position order once prepared.
    pub inputs: BTreeMap<u16, Vec<Slot>>,
    /// Output data ids.
    pub outputs: BTreeMap<u16, Vec<Slot>>,
    /// Where each output data id goes.
    pub targets: BTreeMap<u16, Vec<SocketAddrV4>>,
    /// Where each input data id comes in.
    pub sources: BTreeMap<u16, SocketAddrV4>,
    /// Each data id's scope.
    pub scopes: BTreeMap<u16, Scope>,
    /// Every data id named so far.
    ids: BTreeSet<u16>,
    /// Positions configured in all data ids.
    slots: usize,
}

/// The least bytes a value of `v` takes as `data_type`.
fn least_bytes(v: &Variable, data_type: DataType) -> usize {
    match crate::values::size(data_type) {
        Some(size) => size * v.width(),
        None if data_type == DataType::Binary && !v.carries_frames() => 4 + v.width(),
        None => 4,
    }
}

/// The most bytes a value of `v` takes as `data_type` (CAN frames: what
/// its slave puts in, which it fits to the datagram).
fn most_bytes(v: &Variable, data_type: DataType) -> usize {
    match data_type {
        DataType::String => 4 + LONGEST_NUMBER,
        _ => least_bytes(v, data_type),
    }
}

impl Wiring {
    /// `CFG_input`: `vr` of `ports` at `pos` of `data_id`, sent as `source`.
    pub fn input(&mut self, ports: &Ports, data_id: u16, pos: u16, vr: u64, source: u8) -> Result<(), ErrorCode> {
        let variable = ports
            .inputs
            .iter()
            .position(|v| v.vr == vr)
            .ok_or(ErrorCode::InvalidValueReference)?;
        let data_type = DataType::from_code(source).ok_or(ErrorCode::InvalidSourceDataType)?;
        if !data_type.converts_to(ports.inputs[variable].data_type) {
            return Err(ErrorCode::InvalidSourceDataType);
        }
        let slot = Slot {
            pos,
            variable,
            data_type,
        };
        self.place(Causality::Input, &ports.inputs, data_id, slot)
    }

    /// `CFG_output`: `vr` of `ports` at `pos` of `data_id`.
    pub fn output(&mut self, ports: &Ports, data_id: u16, pos: u16, vr: u64) -> Result<(), ErrorCode> {
        let variable = ports
            .outputs
            .iter()
            .position(|v| v.vr == vr)
            .ok_or(ErrorCode::InvalidValueReference)?;
        let slot = Slot {
            pos,
            variable,
            data_type: ports.outputs[variable].data_type,
        };
        self.place(Causality::Output, &ports.outputs, data_id, slot)
    }

    /// Places `slot` (of one of `variables`) in `data_id` of the inputs or
    /// outputs, when the data id's values still fit a datagram (an input's
    /// least, an output's most).
    fn place(&mut self, side: Causality, variables: &[Variable], data_id: u16, slot: Slot) -> Result<(), ErrorCode> {
        self.make_room(data_id)?;
        let (map, bytes): (_, fn(&Variable, DataType) -> usize) = match side {
            Causality::Input => (&mut self.inputs, least_bytes),
            Causality::Output => (&mut self.outputs, most_bytes),
        };
        let slots = map.entry(data_id).or_default();
        let payload: usize = slots
            .iter()
            .filter(|s| s.pos != slot.pos)
            .chain([&slot])
            .map(|s| bytes(&variables[s.variable], s.data_type))
            .sum();
        if payload > MAX_PDU - DATA_HEADER {
            if slots.is_empty() {
                map.remove(&data_id);
            }
            return Err(ErrorCode::NotSupportedPduSize);
        }
        self.slots += place(slots, slot);
        Ok(())
    }

    /// Carries out a `CFG_*` request of a slave with `ports` (the others
    /// are not for the wiring: `NOT_ALLOWED_IN_STATE`).
    pub fn configure(&mut self, body: Request<'_>, ports: &Ports) -> Result<(), ErrorCode> {
        match body {
            Request::TimeRes { numerator, denominator } => {
                if numerator == 0 || denominator == 0 {
                    return Err(ErrorCode::InvalidTimeResolution);
                }
                self.resolution = Some((numerator, denominator));
            }
            Request::Steps { steps, data_id } => {
                if steps == 0 {
                    return Err(ErrorCode::InvalidSteps);
                }
                self.make_room(data_id)?;
                self.steps.insert(data_id, steps);
            }
            Request::Input {
                data_id,
                pos,
                target_vr,
                source_type,
            } => self.input(ports, data_id, pos, target_vr, source_type)?,
            Request::Output {
                data_id,
                pos,
                source_vr,
            } => self.output(ports, data_id, pos, source_vr)?,
            Request::Clear => *self = Wiring::default(),
            Request::TargetNetwork { data_id, network } | Request::SourceNetwork { data_id, network } => {
                if network.transport != Transport::UdpIpv4.code() {
                    return Err(ErrorCode::InvalidTransportProtocol);
                }
                let address = network.as_udp().ok_or(ErrorCode::InvalidNetworkInformation)?;
                if address.port() == 0 {
                    return Err(ErrorCode::InvalidNetworkInformation);
                }
                self.make_room(data_id)?;
                if matches!(body, Request::TargetNetwork { .. }) {
                    self.target(data_id, address)?;
                } else {
                    self.source(data_id, address)?;
                }
            }
            Request::Parameter { .. } | Request::TunableParameter { .. } => {
                return Err(ErrorCode::InvalidValueReference)
            }
            Request::ParamNetwork { network, .. } => {
                if network.transport != Transport::UdpIpv4.code() {
                    return Err(ErrorCode::InvalidTransportProtocol);
                }
            }
            Request::Scope { data_id, scope } => {
                let scope = Scope::from_code(scope).ok_or(ErrorCode::InvalidScope)?;
                self.make_room(data_id)?;
                self.scopes.insert(data_id, scope);
            }
            _ => return Err(ErrorCode::NotAllowedInState),
        }
        Ok(())
    }

    /// Adds `address` to the targets of `data_id`.
    fn target(&mut self, data_id: u16, address: SocketAddrV4) -> Result<(), ErrorCode> {
        if address.ip().is_unspecified() {
            return Err(ErrorCode::InvalidNetworkInformation);
        }
        let all: usize = self.targets.values().map(Vec::len).sum();
        let targets = self.targets.entry(data_id).or_default();
        if targets.contains(&address) {
            return Ok(());
        }
        if targets.len() >= MAX_TARGETS || all >= MAX_STREAMS {
            return Err(ErrorCode::InvalidNetworkInformation);
        }
        targets.push(address);
        Ok(())
    }

    /// Makes `address` the source of `data_id`.
    fn source(&mut self, data_id: u16, address: SocketAddrV4) -> Result<(), ErrorCode> {
        let mut ports: BTreeSet<u16> = self
            .sources
            .iter()
            .filter(|(&id, _)| id != data_id)
            .map(|(_, a)| a.port())
            .collect();
        ports.insert(address.port());
        if ports.len() > MAX_DATA_SOCKETS {
            return Err(ErrorCode::InvalidNetworkInformation);
        }
        self.sources.insert(data_id, address);
        Ok(())
    }

    /// Counts `data_id` among those named, refusing a new one when there
    /// are [`MAX_DATA_IDS`] already, and any when there are
    /// [`MAX_SLOTS`] positions.
    fn make_room(&mut self, data_id: u16) -> Result<(), ErrorCode> {
        if self.slots >= MAX_SLOTS || (!self.ids.contains(&data_id) && self.ids.len() >= MAX_DATA_IDS) {
            return Err(ErrorCode::NotSupportedPduSize);
        }
        self.ids.insert(data_id);
        Ok(())
    }

    /// The most bytes of every output data PDU to every target, and how
    /// many there are: what one communication point sends.
    pub fn output_bytes(&self, ports: &Ports) -> (usize, usize) {
        let mut bytes = 0;
        let mut count = 0;
        for (id, slots) in &self.outputs {
            let targets = self.targets.get(id).map_or(0, Vec::len);
            // CAN frames fill what their slave leaves them of a datagram.
            let payload: usize = slots
                .iter()
                .map(|s| match &ports.outputs[s.variable] {
                    v if v.carries_frames() => MAX_PDU,
                    v => most_bytes(v, s.data_type),
                })
                .sum();
            bytes += targets * (DATA_HEADER + payload).min(MAX_PDU);
            count += targets;
        }
        (bytes, count)
    }

    /// The distinct ports input data comes in on, but `control`.
    pub fn source_ports(&self, control: u16) -> Vec<u16> {
        let ports: BTreeSet<u16> = self
            .sources
            .values()
            .map(|a| a.port())
            .filter(|&p| p != control)
            .collect();
        ports.into_iter().collect()
    }

    /// The first thing missing before PREPARING, if any (in the
    /// specification's order of checks).
    pub fn incomplete(&self, fixed_resolution: bool, steps_needed: bool) -> Option<ErrorCode> {
        let gap = |slots: &[Slot]| slots.iter().enumerate().any(|(k, s)| s.pos as usize != k);
        if self.inputs.values().any(|s| gap(s)) {
            return Some(ErrorCode::GapInputPos);
        }
        if self.outputs.values().any(|s| gap(s)) {
            return Some(ErrorCode::GapOutputPos);
        }
        if self.inputs.keys().any(|id| !self.sources.contains_key(id)) {
            return Some(ErrorCode::NetworkInfoInput);
        }
        if self.outputs.keys().any(|id| !self.targets.contains_key(id)) {
            return Some(ErrorCode::NetworkInfoOutput);
        }
        if steps_needed && self.outputs.keys().any(|id| !self.steps.contains_key(id)) {
            return Some(ErrorCode::IncompleteSteps);
        }
        if self.resolution.is_none() && !fixed_resolution {
            return Some(ErrorCode::IncompleteTimeResolution);
        }
        if self
            .inputs
            .keys()
            .chain(self.outputs.keys())
            .any(|id| !self.scopes.contains_key(id))
        {
            return Some(ErrorCode::IncompleteScope);
        }
        None
    }

    /// Whether data id `id` is in force in the initialisation phase or
    /// the run.
    pub fn active(&self, id: u16, initializing: bool) -> bool {
        match self.scopes.get(&id) {
            Some(Scope::All) | None => true,
            Some(Scope::Initialization) => initializing,
            Some(Scope::Run) => !initializing,
        }
    }

    /// The causality a data id serves on this slave, if it is configured.
    pub fn causality(&self, id: u16) -> Option<Causality> {
        if self.inputs.contains_key(&id) {
            Some(Causality::Input)
        } else if self.outputs.contains_key(&id) {
            Some(Causality::Output)
        } else {
            None
        }
    }
}

/// Puts `slot` in position order, replacing one at the same position;
/// the positions added (0 or 1).
fn place(slots: &mut Vec<Slot>, slot: Slot) -> usize {
    match slots.binary_search_by_key(&slot.pos, |s| s.pos) {
        Ok(k) => {
            slots[k] = slot;
            0
        }
        Err(k) => {
            slots.insert(k, slot);
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;
    use tandem_models::Variable;

    #[test]
    fn a_configuration_is_complete_only_with_every_piece_in_the_specified_order() {
        let ports = Ports::of(&[Variable::new("u")], &[Variable::new("y")], &BTreeMap::new(), None).unwrap();
        let mut w = Wiring::default();
        assert_eq!(w.input(&ports, 1, 0, 9, 9), Err(ErrorCode::InvalidValueReference));
        assert_eq!(w.input(&ports, 1, 0, 1, 0x0B), Err(ErrorCode::InvalidSourceDataType));
        w.input(&ports, 1, 1, 1, 0x08).unwrap();
        assert_eq!(w.incomplete(false, false), Some(ErrorCode::GapInputPos));
        w.input(&ports, 1, 0, 1, 0x09).unwrap();
        w.inputs.get_mut(&1).unwrap().pop();
        w.output(&ports, 2, 0, 2).unwrap();
        assert_eq!(w.incomplete(false, false), Some(ErrorCode::NetworkInfoInput));
        let a = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9000);
        w.sources.insert(1, a);
        w.targets.insert(2, vec![a]);
        assert_eq!(w.incomplete(false, true), Some(ErrorCode::IncompleteSteps));
        assert_eq!(w.incomplete(false, false), Some(ErrorCode::IncompleteTimeResolution));
        assert_eq!(w.incomplete(true, false), Some(ErrorCode::IncompleteScope));
        w.scopes.insert(1, Scope::All);
        w.scopes.insert(2, Scope::Run);
        assert_eq!(w.incomplete(true, false), None);
        assert!(!w.active(2, true) && w.active(2, false) && w.active(1, true));
    }

    #[test]
    fn what_a_master_configures_is_refused_at_its_bounds() {
        let ports = Ports::of(&[Variable::new("u")], &[Variable::new("y")], &BTreeMap::new(), None).unwrap();
        let mut w = Wiring::default();
        let scope = |id| Request::Scope { data_id: id, scope: 0 };
        for id in 0..MAX_DATA_IDS as u16 {
            w.configure(scope(id), &ports).unwrap();
        }
        assert_eq!(w.configure(scope(5000), &ports), Err(ErrorCode::NotSupportedPduSize));
        assert_eq!(w.configure(scope(7), &ports), Ok(()), "a data id already named");
        // 8187 float64 values fit a datagram (65 496 bytes of 65 502), 8188
        // do not.
        let mut w = Wiring::default();
        for pos in 0..8187 {
            w.input(&ports, 1, pos, 1, 9).unwrap();
        }
        assert_eq!(w.input(&ports, 1, 8187, 1, 9), Err(ErrorCode::NotSupportedPduSize));
        assert_eq!(
            w.input(&ports, 1, 8000, 1, 8),
            Ok(()),
            "a float32 in place of a float64"
        );
        assert_eq!(w.inputs[&1].len(), 8187);
        let mut w = Wiring::default();
        let mut scratch = [0; 6];
        let at = |port| SocketAddrV4::new(Ipv4Addr::LOCALHOST, port);
        for k in 0..MAX_TARGETS as u16 {
            let network = crate::pdu::Network::udp(at(9000 + k), &mut scratch);
            w.configure(Request::TargetNetwork { data_id: 1, network }, &ports)
                .unwrap();
        }
        let network = crate::pdu::Network::udp(at(8999), &mut scratch);
        let refused = w.configure(Request::TargetNetwork { data_id: 1, network }, &ports);
        assert_eq!(refused, Err(ErrorCode::InvalidNetworkInformation));
        for k in 0..MAX_DATA_SOCKETS as u16 {
            let network = crate::pdu::Network::udp(at(10_000 + k), &mut scratch);
            w.configure(Request::SourceNetwork { data_id: k, network }, &ports)
                .unwrap();
        }
        let network = crate::pdu::Network::udp(at(20_000), &mut scratch);
        let refused = w.configure(Request::SourceNetwork { data_id: 999, network }, &ports);
        assert_eq!(refused, Err(ErrorCode::InvalidNetworkInformation));
        assert_eq!(w.source_ports(10_000).len(), MAX_DATA_SOCKETS - 1);
    }
}
