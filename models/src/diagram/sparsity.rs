//! Which state derivatives depend on which states, from the structure of a
//! compiled diagram: a signal depends on the states that reach it through
//! direct-feedthrough ports, and a block's derivatives on everything its
//! inputs depend on. Held outputs (discrete and major-step blocks) depend
//! on nothing during a step; guarded blocks count as enabled. The result over-approximates
//! (a block's outputs are taken to depend on all its feedthrough inputs and
//! all its states), which is safe for grouping Jacobian columns.
//!
//! The same structure gives which model outputs depend directly on which
//! model inputs ([`feedthrough`]), for a co-simulation master.

use super::entry::{Entry, Exec};
use crate::blocks::Slot;

/// The most dependencies (signal element, state) the analysis handles:
/// past it, wide vectors of states make the pattern nearly dense, and it
/// is given up (the Jacobian is then taken as dense).
const BUDGET: usize = 1 << 25;

/// For each state `j`, the derivatives `ẋ_i` that may depend on `x_j`;
/// `None` when the pattern would pass [`BUDGET`].
pub(crate) fn structural(
    entries: &[Entry],
    slots: &[Slot],
    n_signals: usize,
    n_states: usize,
) -> Option<Vec<Vec<usize>>> {
    // States each signal element depends on, sorted. The execution order
    // puts every feedthrough source first, so one pass settles them.
    let mut signal: Vec<Vec<u32>> = vec![Vec::new(); n_signals];
    let mut work = 0usize;
    for e in entries {
        if e.exec != Exec::Always {
            continue;
        }
        let through = inputs_of(e, slots, &signal, true, &mut work)?;
        for o in 0..e.n_out as usize {
            let slot = slots[e.outs as usize + o];
            work += through.len() * slot.width as usize;
            if work > BUDGET {
                return None;
            }
            for k in slot.offset..slot.offset + slot.width {
                signal[k as usize].clone_from(&through);
            }
        }
    }
    // Derivatives read their inputs after all signals are known.
    let mut rows: Vec<Vec<usize>> = vec![Vec::new(); n_states];
    for e in entries.iter().filter(|e| e.x.1 > e.x.0) {
        let deps = inputs_of(e, slots, &signal, false, &mut work)?;
        work += deps.len() * (e.x.1 - e.x.0) as usize;
        if work > BUDGET {
            return None;
        }
        for j in deps {
            rows[j as usize].extend((e.x.0..e.x.1).map(|s| s as usize));
        }
    }
    for r in &mut rows {
        r.sort_unstable();
        r.dedup();
    }
    Some(rows)
}

/// The states that the block's inputs (only its feedthrough ones when
/// `through`), its guard and its own states depend on; `None` once `work`
/// (dependencies read so far) passes [`BUDGET`].
fn inputs_of(e: &Entry, slots: &[Slot], signal: &[Vec<u32>], through: bool, work: &mut usize) -> Option<Vec<u32>> {
    let mut deps: Vec<u32> = e.guard.map(|g| signal[g as usize].clone()).unwrap_or_default();
    for i in (0..e.n_in as usize).filter(|&i| !through || e.feeds_through(i)) {
        let slot = slots[e.ins as usize + i];
        for k in slot.offset..slot.offset + slot.width {
            let read = &signal[k as usize];
            *work += read.len();
            if *work > BUDGET {
                return None;
            }
            deps.extend_from_slice(read);
        }
    }
    deps.extend(e.x.0..e.x.1);
    deps.sort_unstable();
    deps.dedup();
    Some(deps)
}

/// For each model output, the model inputs that reach it through
/// direct-feedthrough ports and guards, sorted. Every block counts, held
/// ones included (at their hits they compute from their inputs), so the
/// result over-approximates; blocks of torn loops are gone over again
/// until nothing changes.
pub(crate) fn feedthrough(
    entries: &[Entry],
    slots: &[Slot],
    n_signals: usize,
    input_copies: &[(usize, u32)],
    output_slots: &[u32],
) -> Vec<Vec<usize>> {
    // Model inputs each signal element depends on, sorted.
    let mut signal: Vec<Vec<usize>> = vec![Vec::new(); n_signals];
    for &(i, offset) in input_copies {
        signal[offset as usize].push(i);
    }
    let mut changed = true;
    while changed {
        changed = false;
        for e in entries {
            let mut through: Vec<usize> = e.guard.map(|g| signal[g as usize].clone()).unwrap_or_default();
            for i in (0..e.n_in as usize).filter(|&i| e.feeds_through(i)) {
                let slot = slots[e.ins as usize + i];
                for k in slot.offset..slot.offset + slot.width {
                    through.extend_from_slice(&signal[k as usize]);
                }
            }
            if through.is_empty() {
                continue;
            }
            through.sort_unstable();
            through.dedup();
            for o in 0..e.n_out as usize {
                let slot = slots[e.outs as usize + o];
                for k in slot.offset..slot.offset + slot.width {
                    let deps = &mut signal[k as usize];
                    let before = deps.len();
                    deps.extend_from_slice(&through);
                    deps.sort_unstable();
                    deps.dedup();
                    changed |= deps.len() != before;
                }
            }
        }
    }
    output_slots.iter().map(|&o| signal[o as usize].clone()).collect()
}

#[cfg(test)]
mod tests {
    use crate::diagram::compile_str;
    use crate::Model;

    #[test]
    fn independent_chains_share_no_rows_and_integrators_break_feedthrough() {
        // a' = -a; b' = a - b; c' = -c: column a touches rows a and b,
        // column b row b, column c row c.
        let c = compile_str(
            r#"{"blocks": [
              {"id": "a", "type": "Integrator", "params": {"initial": 1}},
              {"id": "b", "type": "Integrator"},
              {"id": "c", "type": "Integrator", "params": {"initial": 1}},
              {"id": "na", "type": "Gain", "params": {"gain": -1}},
              {"id": "db", "type": "Sum", "params": {"signs": "+-"}},
              {"id": "nc", "type": "Gain", "params": {"gain": -1}}],
             "links": [
              {"from": "a", "to": ["na", "db.1"]}, {"from": "na", "to": "a"},
              {"from": "b", "to": "db.2"}, {"from": "db", "to": "b"},
              {"from": "c", "to": "nc"}, {"from": "nc", "to": "c"}]}"#,
        )
        .unwrap();
        let states = &c.model.layout().states;
        let index = |name: &str| states.iter().position(|s| s == name).unwrap();
        let (a, b, cc) = (index("a"), index("b"), index("c"));
        let sparsity = c.model.sparsity().unwrap();
        let mut column_a = vec![a, b];
        column_a.sort();
        assert_eq!(sparsity[a], column_a);
        assert_eq!(sparsity[b], vec![b]);
        assert_eq!(sparsity[cc], vec![cc]);
    }

    #[test]
    fn outputs_depend_on_the_inputs_that_reach_them_through_feedthrough_ports_only() {
        // y1 = 2 u1 + u2 (direct), y2 = integral of u2 (through a state).
        let c = compile_str(
            r#"{"blocks": [
              {"id": "u1", "type": "Inport"}, {"id": "u2", "type": "Inport"},
              {"id": "k", "type": "Gain", "params": {"gain": 2}},
              {"id": "s", "type": "Sum", "params": {"signs": "++"}},
              {"id": "x", "type": "Integrator"},
              {"id": "y1", "type": "Output"}, {"id": "y2", "type": "Output"}],
             "links": [
              {"from": "u1", "to": "k"}, {"from": "k", "to": "s.1"}, {"from": "u2", "to": ["s.2", "x"]},
              {"from": "s", "to": "y1"}, {"from": "x", "to": "y2"}]}"#,
        )
        .unwrap();
        assert_eq!(c.model.program().feedthrough(), vec![vec![0, 1], vec![]]);
    }
}
