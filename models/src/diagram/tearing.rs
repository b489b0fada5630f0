//! Algebraic loops solved by Newton (`"algebraic_loops": "solve"`): each
//! loop (a strongly connected component of the direct-feedthrough graph) is
//! torn at some input ports until what is left of it is acyclic. At run time
//! a torn input reads a guess instead of its source, and Newton's method
//! drives `source - guess` to zero. The blocks of a loop are ordered
//! contiguously so that the iteration re-evaluates exactly them.

use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap};

/// A loop to solve: its blocks in evaluation order and the torn input
/// ports (block, input index).
#[derive(Clone, Debug)]
pub(crate) struct LoopPlan {
    pub members: Vec<usize>,
    pub torn: Vec<(usize, usize)>,
}

/// Feedthrough edges into one block: `(input index, source)`, with `None`
/// for its guard (which cannot be torn).
pub(crate) type InEdges = Vec<(Option<usize>, usize)>;

/// Tears every loop in `loops` and orders all blocks, each loop's blocks
/// contiguously. Fails with the blocks of a loop that closes only through
/// guards (enable or trigger signals), which cannot be torn.
pub(crate) fn tear_and_order(
    edges: &[InEdges],
    loops: &[Vec<usize>],
    strongly_connected: impl Fn(&[BTreeSet<usize>]) -> Vec<Vec<usize>>,
) -> Result<(Vec<usize>, Vec<LoopPlan>), Vec<usize>> {
    let n = edges.len();
    let mut plans = Vec::new();
    for component in loops {
        let mut torn: Vec<(usize, usize)> = Vec::new();
        let inside = |b: usize| component.binary_search(&b).is_ok();
        let sub_deps = |torn: &[(usize, usize)]| -> Vec<BTreeSet<usize>> {
            let mut deps = vec![BTreeSet::new(); n];
            for &b in component {
                for &(port, from) in &edges[b] {
                    let cut = port.is_some_and(|i| torn.contains(&(b, i)));
                    if inside(from) && !cut {
                        deps[b].insert(from);
                    }
                }
            }
            deps
        };
        loop {
            let left = strongly_connected(&sub_deps(&torn));
            if left.is_empty() {
                break;
            }
            for cycle in left {
                let in_cycle = |b: usize| cycle.binary_search(&b).is_ok();
                let tearable = cycle
                    .iter()
                    .copied()
                    .find(|&b| edges[b].iter().any(|&(port, from)| port.is_some() && in_cycle(from)));
                let Some(b) = tearable else {
                    return Err(cycle);
                };
                for &(port, from) in &edges[b] {
                    if let (Some(i), true) = (port, in_cycle(from)) {
                        if !torn.contains(&(b, i)) {
                            torn.push((b, i));
                        }
                    }
                }
            }
        }
        let deps = sub_deps(&torn);
        let members = kahn(component, |b| deps[b].iter().copied().collect());
        plans.push(LoopPlan { members, torn });
    }
    Ok((condensed_order(edges, &plans), plans))
}

/// Kahn's algorithm over `nodes` (ties in index order), with `deps(b)` the
/// nodes `b` must follow (among `nodes`).
fn kahn(nodes: &[usize], deps: impl Fn(usize) -> Vec<usize>) -> Vec<usize> {
    let size = nodes.iter().max().map_or(0, |m| m + 1);
    let mut index = vec![None; size];
    for (k, &b) in nodes.iter().enumerate() {
        index[b] = Some(k);
    }
    let position = |b: usize| index.get(b).copied().flatten();
    let mut missing: Vec<usize> = nodes
        .iter()
        .map(|&b| deps(b).iter().filter(|&&d| position(d).is_some()).count())
        .collect();
    let mut users: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    for (k, &b) in nodes.iter().enumerate() {
        for d in deps(b) {
            if let Some(p) = position(d) {
                users[p].push(k);
            }
        }
    }
    let mut ready: BinaryHeap<Reverse<usize>> = (0..nodes.len()).filter(|&k| missing[k] == 0).map(Reverse).collect();
    let mut order = Vec::with_capacity(nodes.len());
    while let Some(Reverse(k)) = ready.pop() {
        order.push(nodes[k]);
        for &u in &users[k] {
            missing[u] -= 1;
            if missing[u] == 0 {
                ready.push(Reverse(u));
            }
        }
    }
    order
}

/// The order of all blocks, each loop's members kept together in their
/// torn order: Kahn's algorithm on the graph with every loop contracted.
fn condensed_order(edges: &[InEdges], plans: &[LoopPlan]) -> Vec<usize> {
    let n = edges.len();
    // Unit of each block: a loop, or the block alone (units n + loop).
    let mut unit: Vec<usize> = (0..n).collect();
    for (k, plan) in plans.iter().enumerate() {
        for &b in &plan.members {
            unit[b] = n + k;
        }
    }
    let units: Vec<usize> = (0..n)
        .filter(|&b| unit[b] == b)
        .chain((0..plans.len()).map(|k| n + k))
        .collect();
    let members = |u: usize| -> Vec<usize> {
        if u < n {
            vec![u]
        } else {
            plans[u - n].members.clone()
        }
    };
    let unit_deps = |u: usize| -> Vec<usize> {
        let mut deps: Vec<usize> = members(u)
            .iter()
            .flat_map(|&b| edges[b].iter().map(|&(_, from)| unit[from]))
            .filter(|&d| d != u)
            .collect();
        deps.sort_unstable();
        deps.dedup();
        deps
    };
    kahn(&units, unit_deps).into_iter().flat_map(members).collect()
}
