//! A thermal ladder of `n` nodes, the shape of a large stiff plant whose
//! states each touch a few neighbours (a rod or a cooling plate in lumped
//! segments, a string of cells): node `i` exchanges heat with nodes `i − 1`
//! and `i + 1`, and both ends with an ambient held at 0,
//!
//! `dT_i/dt = k (T_{i−1} − 2 T_i + T_{i+1}) + heating δ_{i0}`, `T_{−1} = T_n = 0`,
//!
//! with `k = (n + 1)² / π²` per second, so that the slowest mode decays in
//! one second whatever `n` (its rate is `4k sin²(π / (2(n + 1)))`, just
//! under 1/s) and the fastest at about `4k`: `λh ≈ −1.6·10³` at `n = 2000`
//! and a 1 ms frame. The Jacobian is tridiagonal and declared.
//!
//! Without heating the solution is known in closed form
//! ([`Ladder::exact`]): the initial state is the sum of the first and third
//! eigenmodes `sin(m π (i + 1) / (n + 1))`, each decaying at its own rate.

use crate::model::{Layout, Model, StateRef, Variable};

/// The most nodes a ladder may have.
pub const MAX_NODES: usize = 1_000_000;

/// The built-in name's prefix: `ladder-2000` is a ladder of 2000 nodes.
pub const PREFIX: &str = "ladder-";

/// A thermal ladder of `n` nodes.
#[derive(Clone, Debug)]
pub struct Ladder {
    layout: Layout,
    /// Conductance over capacity between neighbours (1/s).
    k: f64,
}

/// The amplitudes of the eigenmodes the ladder starts in (K).
const MODES: [(usize, f64); 2] = [(1, 10.0), (3, 5.0)];

impl Ladder {
    /// A ladder of `n` nodes (1 to [`MAX_NODES`]).
    pub fn new(n: usize) -> Self {
        assert!((1..=MAX_NODES).contains(&n), "a ladder has 1 to {MAX_NODES} nodes");
        let outputs = ["first", "middle", "last"].map(|at| Variable {
            unit: Some("K".into()),
            ..Variable::new(format!("t_{at}"))
        });
        Ladder {
            layout: Layout {
                states: (0..n).map(|i| format!("T[{i}]")).collect(),
                inputs: vec![Variable {
                    unit: Some("K/s".into()),
                    ..Variable::new("heating")
                }],
                outputs: outputs.to_vec(),
                ..Layout::default()
            },
            k: ((n + 1) as f64 / std::f64::consts::PI).powi(2),
        }
    }

    /// The ladder a built-in name (`ladder-N`) asks for, if it is one: the
    /// size must be 1 to [`MAX_NODES`].
    pub fn named(name: &str) -> Option<Self> {
        super::sized(name, PREFIX, MAX_NODES).map(Ladder::new)
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.layout.states.len()
    }

    /// Whether it has no nodes (never: at least one).
    pub fn is_empty(&self) -> bool {
        self.layout.states.is_empty()
    }

    /// The temperature of node `i` at `t` without heating, in closed form.
    pub fn exact(&self, i: usize, t: f64) -> f64 {
        MODES
            .iter()
            .map(|&(m, amplitude)| amplitude * (-self.rate(m) * t).exp() * (self.angle(m) * (i + 1) as f64).sin())
            .sum()
    }

    /// The decay rate of eigenmode `m` (1/s), `4k sin²(mπ / (2(n + 1)))`.
    pub fn rate(&self, m: usize) -> f64 {
        4.0 * self.k * (self.angle(m) / 2.0).sin().powi(2)
    }

    /// `mπ / (n + 1)`.
    fn angle(&self, m: usize) -> f64 {
        m as f64 * std::f64::consts::PI / (self.len() + 1) as f64
    }
}

impl Model for Ladder {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn pure_derivatives(&self) -> bool {
        true
    }

    fn fork(&self) -> Box<dyn Model> {
        Box::new(self.clone())
    }

    fn initial_state(&mut self, x: &mut [f64], _: &mut [f64]) {
        for (i, x) in x.iter_mut().enumerate() {
            *x = self.exact(i, 0.0);
        }
    }

    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        let x = s.x;
        let n = x.len();
        for i in 0..n {
            let left = if i > 0 { x[i - 1] } else { 0.0 };
            let right = if i + 1 < n { x[i + 1] } else { 0.0 };
            dx[i] = self.k * (left - 2.0 * x[i] + right);
        }
        dx[0] += s.u[0];
    }

    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        let n = s.x.len();
        y[0] = s.x[0];
        y[1] = s.x[n / 2];
        y[2] = s.x[n - 1];
    }

    fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
        let n = self.len();
        Some(
            (0..n)
                .map(|j| (j.saturating_sub(1)..(j + 2).min(n)).collect())
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_initial_state_is_an_eigenvector_combination_the_derivatives_decay() {
        // Each eigenmode is an eigenvector of the tridiagonal operator: the
        // derivative of the initial state is the sum of −rate × mode.
        let mut ladder = Ladder::new(50);
        let n = ladder.len();
        let mut x = vec![0.0; n];
        ladder.initial_state(&mut x, &mut []);
        let mut dx = vec![0.0; n];
        let s = StateRef {
            t: 0.0,
            x: &x,
            xd: &[],
            u: &[0.0],
        };
        ladder.derivatives(s, &mut dx);
        let h = 1e-7;
        for (i, d) in dx.iter().enumerate() {
            let slope = (ladder.exact(i, h) - ladder.exact(i, -h)) / (2.0 * h);
            assert!(
                (d - slope).abs() < 1e-5 * slope.abs().max(1.0),
                "node {i}: {d} vs {slope}"
            );
        }
    }

    #[test]
    fn names_give_their_size_within_bounds() {
        assert_eq!(Ladder::named("ladder-2000").map(|l| l.len()), Some(2000));
        assert_eq!(Ladder::named("LADDER-3").map(|l| l.len()), Some(3));
        for bad in [
            "ladder-0",
            "ladder-",
            "ladder-x",
            "ladder-+5",
            "ladder-1000001",
            "ladder",
            "lad",
        ] {
            assert!(Ladder::named(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn the_slowest_mode_decays_in_about_a_second_whatever_the_size() {
        for n in [10, 2000] {
            let ladder = Ladder::new(n);
            let rate = ladder.rate(1);
            assert!(rate > 0.99 && rate <= 1.0, "{n} nodes: {rate}/s");
            // The fastest mode: about 4k, stiff at a 1 ms frame.
            let fastest = ladder.rate(n);
            assert!(fastest / (4.0 * ladder.k) > 0.97, "{n} nodes: {fastest}/s");
        }
    }
}
