//! The column groups of a difference Jacobian spread over helper threads.
//!
//! Each helper owns a fork of the model and a contiguous share of the
//! groups, made once. For one Jacobian the calling thread hands every
//! helper its share (the state, the held discrete states and inputs, the
//! increments: copied into buffers the share owns), evaluates its own
//! share meanwhile, then takes the shares back and writes their columns.
//! A share travels as a `Box`, so nothing is allocated per Jacobian, and
//! nothing locks: a share moves through a
//! one-slot atomic cell, the helper is woken by `unpark` and sleeps when it
//! has nothing to do, and the calling thread spins for its shares (the
//! helpers work while it evaluates its own share, so the wait is short).
//! Each perturbed
//! state and each division is the one the calling thread alone would make,
//! so the Jacobian is the same bit for bit, provided the model's
//! derivatives depend on nothing its forks do not share
//! ([`Model::pure_derivatives`]).
//!
//! A helper that dies (its model panicked) is dropped: its groups are
//! evaluated by the calling thread from then on.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_utils::atomic::AtomicCell;

use tandem_models::{Definition, Model, StateRef};

/// The helper threads of one Jacobian.
pub struct JacobianHelpers {
    helpers: Vec<Helper>,
}

/// What a helper thread does first, given its core (pin itself, raise its
/// priority).
pub type ThreadSetup = Arc<dyn Fn(Option<usize>) + Send + Sync>;

/// A [`ThreadSetup`] that pins the thread to its core, if it has one.
pub fn pin_to_core() -> ThreadSetup {
    Arc::new(|core| {
        if let Some(id) = core {
            core_affinity::set_for_current(core_affinity::CoreId { id });
        }
    })
}

/// One helper thread and the share it evaluates.
struct Helper {
    /// The groups it evaluates.
    groups: Range<usize>,
    mailbox: Arc<Mailbox>,
    /// The share, while the helper is idle.
    parked: Option<Box<Share>>,
    /// Whether the helper has the share now.
    busy: bool,
    /// False once the helper died.
    alive: bool,
    thread: Option<JoinHandle<()>>,
}

/// The cells a share passes through, each way.
struct Mailbox {
    to_helper: AtomicCell<Option<Box<Share>>>,
    to_caller: AtomicCell<Option<Box<Share>>>,
    stop: AtomicBool,
}

impl Mailbox {
    /// The helper's loop: evaluates each share it is given, until told to
    /// stop. For [`SPIN`] after a share it waits busy, so that Jacobians
    /// in quick succession (one per frame) find it awake; then it sleeps
    /// until woken, which can take tens of microseconds.
    fn serve(&self) {
        let mut last = Instant::now();
        while !self.stop.load(Ordering::Acquire) {
            match self.to_helper.take() {
                Some(mut share) => {
                    share.evaluate();
                    self.to_caller.store(Some(share));
                    last = Instant::now();
                }
                // Yielding, not spinning: a thread of the same
                // SCHED_FIFO priority on this core gets to run.
                None if last.elapsed() < SPIN => std::thread::yield_now(),
                None => std::thread::park(),
            }
        }
    }
}

/// How long a helper waits busy for its next share before it sleeps.
const SPIN: Duration = Duration::from_millis(2);

/// What a helper evaluates `f` with.
struct Share {
    model: Box<dyn Model>,
    /// Its groups' columns.
    groups: Vec<Vec<usize>>,
    t: f64,
    y: Vec<f64>,
    xd: Vec<f64>,
    u: Vec<f64>,
    increment: Vec<f64>,
    perturbed: Vec<f64>,
    /// `f` at each group's perturbed state.
    f: Vec<Vec<f64>>,
}

impl Share {
    fn evaluate(&mut self) {
        for (group, f) in self.groups.iter().zip(&mut self.f) {
            self.perturbed.copy_from_slice(&self.y);
            for &j in group {
                self.perturbed[j] = self.y[j] + self.increment[j];
            }
            let s = StateRef {
                t: self.t,
                x: &self.perturbed,
                xd: &self.xd,
                u: &self.u,
            };
            self.model.derivatives(s, f);
        }
    }
}

/// The contiguous ranges `groups` groups split into over `parts` threads,
/// as even as can be, the calling thread's first.
pub fn shares(groups: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.max(1);
    (0..parts)
        .map(|p| groups * p / parts..groups * (p + 1) / parts)
        .collect()
}

impl JacobianHelpers {
    /// One helper per entry of `cores` (pinned there when `Some`), each with
    /// a fork of `model` and its share of `groups`; the calling thread keeps
    /// the first share, returned beside the helpers.
    pub fn spawn(
        model: &dyn Model,
        groups: &[Vec<usize>],
        cores: &[Option<usize>],
        setup: &ThreadSetup,
    ) -> std::io::Result<(Self, Range<usize>)> {
        let layout = model.layout();
        let n = layout.states.len();
        let ranges = shares(groups.len(), cores.len() + 1);
        let mut helpers = Vec::with_capacity(cores.len());
        for (index, (range, &core)) in ranges[1..].iter().zip(cores).enumerate() {
            let share = Box::new(Share {
                model: model.fork(),
                groups: groups[range.clone()].to_vec(),
                t: 0.0,
                y: vec![0.0; n],
                xd: vec![0.0; layout.discrete],
                u: vec![0.0; layout.inputs.len()],
                increment: vec![0.0; n],
                perturbed: vec![0.0; n],
                f: vec![vec![0.0; n]; range.len()],
            });
            let mailbox = Arc::new(Mailbox {
                to_helper: AtomicCell::new(None),
                to_caller: AtomicCell::new(None),
                stop: AtomicBool::new(false),
            });
            let (served, setup) = (Arc::clone(&mailbox), Arc::clone(setup));
            let thread = std::thread::Builder::new()
                .name(format!("jacobian-{}", index + 1))
                .spawn(move || {
                    setup(core);
                    served.serve();
                })?;
            helpers.push(Helper {
                groups: range.clone(),
                mailbox,
                parked: Some(share),
                busy: false,
                alive: true,
                thread: Some(thread),
            });
        }
        Ok((JacobianHelpers { helpers }, ranges[0].clone()))
    }

    /// Number of helper threads alive.
    pub fn alive(&self) -> usize {
        self.helpers.iter().filter(|h| h.alive).count()
    }

    /// Hands each helper its share of a Jacobian at `(t, y)` with `xd`, `u`
    /// held and state `j` perturbed by `increment[j]`.
    pub fn start(&mut self, t: f64, y: &[f64], xd: &[f64], u: &[f64], increment: &[f64]) {
        for helper in self.helpers.iter_mut().filter(|h| h.alive) {
            let (Some(mut share), Some(thread)) = (helper.parked.take(), helper.thread.as_ref()) else {
                continue;
            };
            share.t = t;
            share.y.copy_from_slice(y);
            share.xd.copy_from_slice(xd);
            share.u.copy_from_slice(u);
            share.increment.copy_from_slice(increment);
            helper.mailbox.to_helper.store(Some(share));
            helper.busy = true;
            thread.thread().unpark();
        }
    }

    /// Waits for the shares [`JacobianHelpers::start`] handed out and
    /// passes each column `j` with `f` at its perturbed state to `column`.
    /// A helper that died is dropped from then on; its groups are among
    /// [`JacobianHelpers::lost`] for the caller to evaluate.
    pub fn finish(&mut self, mut column: impl FnMut(usize, &[f64])) {
        for helper in self.helpers.iter_mut().filter(|h| h.busy) {
            helper.parked = loop {
                if let Some(share) = helper.mailbox.to_caller.take() {
                    break Some(share);
                }
                if helper.thread.as_ref().is_none_or(JoinHandle::is_finished) {
                    helper.alive = false;
                    break None;
                }
                std::thread::yield_now();
            };
            helper.busy = false;
            if let Some(share) = &helper.parked {
                for (group, f) in share.groups.iter().zip(&share.f) {
                    for &j in group {
                        column(j, f);
                    }
                }
            }
        }
    }

    /// The groups of helpers that died, which the caller evaluates itself.
    pub fn lost(&self) -> impl Iterator<Item = Range<usize>> + '_ {
        self.helpers.iter().filter(|h| !h.alive).map(|h| h.groups.clone())
    }

    /// Puts a copy of `definition` in each helper's fork (from
    /// [`Model::retune`], before the calling thread's model takes it).
    /// Reference counts only: nothing is allocated or freed.
    pub fn swap_definition(&mut self, definition: &Definition) {
        for share in self.helpers.iter_mut().filter_map(|h| h.parked.as_mut()) {
            let mut copy = definition.clone();
            share.model.swap_definition(&mut copy);
        }
    }
}

impl Drop for JacobianHelpers {
    fn drop(&mut self) {
        for helper in &mut self.helpers {
            helper.mailbox.stop.store(true, Ordering::Release);
            if let Some(thread) = helper.thread.take() {
                thread.thread().unpark();
                let _ = thread.join();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tandem_models::diagram::compile_str;
    use tandem_models::plants::ladder::Ladder;
    use tandem_models::{Layout, Model, StateRef};

    use crossbeam_utils::atomic::AtomicCell;

    use super::{pin_to_core, shares};
    use crate::bdf::jacobian::{Increments, Jacobian};
    use crate::linalg::{LinearSolver, Matrix};
    use crate::ode::{ModelOde, OdeSystem};

    /// The Jacobian of `model` at `y` with `helpers` helper threads, and the
    /// helpers alive after it.
    fn jacobian_of(model: &mut dyn Model, y: &[f64], u: &[f64], helpers: usize) -> (Matrix, usize) {
        let n = y.len();
        let mut jacobian = Jacobian::new(n, model.sparsity(), LinearSolver::Auto);
        assert_eq!(
            jacobian.spread(model, &vec![None; helpers], &pin_to_core()).unwrap(),
            helpers.min(jacobian.groups() - 1)
        );
        let mut system = ModelOde { model, xd: &[], u };
        let mut fy = vec![0.0; n];
        system.rhs(0.5, y, &mut fy);
        jacobian.evaluate(&mut system, 0.5, y, &fy, &[], 1e-3, Increments::Unit);
        let alive = jacobian.helpers();
        (jacobian.matrix, alive)
    }

    /// A state that is not smooth in any one unit: every column differs.
    fn wavy(n: usize) -> Vec<f64> {
        (0..n).map(|i| 20.0 + (0.37 * i as f64).sin() * 5.0).collect()
    }

    #[test]
    fn shares_pass_through_cells_that_do_not_lock() {
        assert!(AtomicCell::<Option<Box<super::Share>>>::is_lock_free());
    }

    #[test]
    fn shares_cover_every_group_once_in_order() {
        assert_eq!(shares(7, 3), vec![0..2, 2..4, 4..7]);
        assert_eq!(shares(2, 4), vec![0..0, 0..1, 1..1, 1..2]);
        assert_eq!(shares(5, 0), vec![0..5]);
    }

    #[test]
    fn a_jacobian_on_helper_threads_is_the_callers_bit_for_bit() {
        let y = wavy(300);
        let mut ladder = Ladder::new(300);
        let (alone, _) = jacobian_of(&mut ladder, &y, &[2.0], 0);
        for helpers in [1, 2, 5] {
            let (helped, alive) = jacobian_of(&mut ladder, &y, &[2.0], helpers);
            assert_eq!(alive, helpers.min(2), "a tridiagonal matrix has 3 groups");
            assert_eq!(helped.to_dense(), alone.to_dense(), "{helpers} helpers");
        }
        // Not all zero: the comparison compares something.
        assert!(alone.get(150, 150) < 0.0 && alone.get(150, 151) > 0.0);
    }

    /// The ladder, whose forks panic when they evaluate.
    struct Fragile {
        ladder: Ladder,
        fork: bool,
    }

    impl Model for Fragile {
        fn layout(&self) -> &Layout {
            self.ladder.layout()
        }
        fn fork(&self) -> Box<dyn Model> {
            Box::new(Fragile {
                ladder: self.ladder.clone(),
                fork: true,
            })
        }
        fn pure_derivatives(&self) -> bool {
            true
        }
        fn initial_state(&mut self, x: &mut [f64], xd: &mut [f64]) {
            self.ladder.initial_state(x, xd);
        }
        fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
            assert!(!self.fork, "a helper's model fails");
            self.ladder.derivatives(s, dx);
        }
        fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
            self.ladder.outputs(s, y);
        }
        fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
            self.ladder.sparsity()
        }
    }

    #[test]
    fn the_groups_of_a_helper_that_died_are_evaluated_by_the_caller() {
        let y = wavy(40);
        let (alone, _) = jacobian_of(&mut Ladder::new(40), &y, &[0.0], 0);
        let mut fragile = Fragile {
            ladder: Ladder::new(40),
            fork: false,
        };
        let (helped, alive) = jacobian_of(&mut fragile, &y, &[0.0], 2);
        assert_eq!(alive, 0, "both helpers died");
        assert_eq!(helped.to_dense(), alone.to_dense());
    }

    /// `x1' = k x2`, `x2' = x1`: two column groups, `k` changeable.
    fn oscillator() -> Box<dyn Model> {
        let text = r#"{"blocks": [
            {"id": "a", "type": "Integrator", "params": {"initial": 1.0}},
            {"id": "b", "type": "Integrator", "params": {"initial": 0.0}},
            {"id": "k", "type": "Gain", "params": {"gain": -1.0}}],
          "links": [{"from": "b", "to": "k"}, {"from": "k", "to": "a"}, {"from": "a", "to": "b"}]}"#;
        Box::new(compile_str(text).unwrap().model)
    }

    #[test]
    fn helpers_take_a_retuned_definition_with_the_caller() {
        let mut model = oscillator();
        assert!(model.pure_derivatives());
        let mut jacobian = Jacobian::new(2, model.sparsity(), LinearSolver::Auto);
        assert_eq!(jacobian.spread(model.as_ref(), &[None], &pin_to_core()).unwrap(), 1);
        let mut definition = model.retune("k", "gain", &json!(-4.0)).unwrap();
        jacobian.swap_definition(&definition);
        assert!(model.swap_definition(&mut definition));
        let y = [0.3, 0.7];
        let mut system = ModelOde {
            model: model.as_mut(),
            xd: &[],
            u: &[],
        };
        let mut fy = [0.0; 2];
        system.rhs(0.0, &y, &mut fy);
        jacobian.evaluate(&mut system, 0.0, &y, &fy, &[], 1e-3, Increments::Unit);
        let m = &jacobian.matrix;
        // Columns of both threads: the helper's (x2) has the new gain.
        assert!((m.get(0, 1) + 4.0).abs() < 1e-6, "{}", m.get(0, 1));
        assert!((m.get(1, 0) - 1.0).abs() < 1e-6, "{}", m.get(1, 0));
    }

    #[test]
    fn models_whose_workspace_holds_modes_get_no_helpers() {
        let text = r#"{"blocks": [
            {"id": "a", "type": "Integrator", "params": {"initial": 1.0}},
            {"id": "b", "type": "Integrator", "params": {"initial": 0.0}},
            {"id": "s", "type": "Abs"}],
          "links": [{"from": "b", "to": "s"}, {"from": "s", "to": "a"}, {"from": "a", "to": "b"}]}"#;
        let model = compile_str(text).unwrap().model;
        assert!(!model.pure_derivatives(), "Abs latches its sign between events");
        let mut jacobian = Jacobian::new(2, model.sparsity(), LinearSolver::Auto);
        assert_eq!(jacobian.spread(&model, &[None], &pin_to_core()).unwrap(), 0);
    }
}
