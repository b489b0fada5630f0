//! What the master loop needs of a system, fixed for the run: who is due
//! when, where each sub-model's outputs sit among the coupling values, and
//! which connection drives each input.

use crate::graph::Link;
use crate::system::{Master, System};

/// What the loop needs of the system, fixed for the run.
pub(super) struct Plan {
    pub(super) names: Vec<String>,
    pub(super) every: Vec<u64>,
    /// The grid of each sub-model's own solver, if it has one (s).
    pub(super) grids: Vec<Option<f64>>,
    /// Sub-model `m`'s outputs are `offsets[m]..offsets[m + 1]` of the
    /// coupling values.
    pub(super) offsets: Vec<usize>,
    /// For each sub-model, for each input, the connection driving it.
    pub(super) drivers: Vec<Vec<Option<Link>>>,
    /// The coupling values that drive a connection.
    pub(super) coupled: Vec<usize>,
    pub(super) master: Master,
    pub(super) order: Vec<usize>,
    pub(super) rollback: bool,
}

impl Plan {
    pub(super) fn new(system: &System) -> Plan {
        let ps = &system.participants;
        let mut offsets = vec![0];
        for p in ps {
            offsets.push(offsets[offsets.len() - 1] + p.model.outputs().len());
        }
        let mut drivers: Vec<Vec<Option<Link>>> = ps.iter().map(|p| vec![None; p.model.inputs().len()]).collect();
        let mut coupled = Vec::new();
        for l in &system.links {
            drivers[l.to.model][l.to.port] = Some(*l);
            coupled.push(offsets[l.from.model] + l.from.port);
        }
        coupled.sort_unstable();
        coupled.dedup();
        Plan {
            names: ps.iter().map(|p| p.name.clone()).collect(),
            every: ps.iter().map(|p| p.every).collect(),
            grids: ps.iter().map(|p| p.model.grid()).collect(),
            offsets,
            drivers,
            coupled,
            master: system.master.clone(),
            order: system.order.clone(),
            rollback: system.rollback,
        }
    }

    /// Whether the macro steps are iterated: asked for, with connections
    /// to settle.
    pub(super) fn iterates(&self) -> bool {
        self.master.iterate.is_some() && !self.coupled.is_empty()
    }

    /// Whether sub-model `m` takes a step at base macro step `n`.
    pub(super) fn due(&self, m: usize, n: u64) -> bool {
        n.is_multiple_of(self.every[m])
    }

    /// The samples sub-model `m` records over a communication step on its
    /// grid, both ends included, when it has a grid.
    pub(super) fn samples(&self, m: usize) -> Option<usize> {
        let step = self.every[m] as f64 * self.master.step;
        self.grids[m].map(|grid| (step / grid).round() as usize + 1)
    }

    /// The time of `tick` base macro steps (s).
    pub(super) fn time(&self, tick: u64) -> f64 {
        tick as f64 * self.master.step
    }
}
