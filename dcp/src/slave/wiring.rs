//! What the master configures in CONFIGURATION (`CFG_*`): the time
//! resolution, which variables travel in which data id at which position,
//! where data goes and comes from, and the scopes; and the check of its
//! completeness before PREPARING.

use std::collections::BTreeMap;
use std::net::SocketAddrV4;

use crate::ports::{Causality, Ports};
use crate::types::{DataType, ErrorCode, Scope};

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
        place(
            self.inputs.entry(data_id).or_default(),
            Slot {
                pos,
                variable,
                data_type,
            },
        );
        Ok(())
    }

    /// `CFG_output`: `vr` of `ports` at `pos` of `data_id`.
    pub fn output(&mut self, ports: &Ports, data_id: u16, pos: u16, vr: u64) -> Result<(), ErrorCode> {
        let variable = ports
            .outputs
            .iter()
            .position(|v| v.vr == vr)
            .ok_or(ErrorCode::InvalidValueReference)?;
        let data_type = ports.outputs[variable].data_type;
        place(
            self.outputs.entry(data_id).or_default(),
            Slot {
                pos,
                variable,
                data_type,
            },
        );
        Ok(())
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

/// Puts `slot` in position order, replacing one at the same position.
fn place(slots: &mut Vec<Slot>, slot: Slot) {
    match slots.binary_search_by_key(&slot.pos, |s| s.pos) {
        Ok(k) => slots[k] = slot,
        Err(k) => slots.insert(k, slot),
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
}
