//! Fixed-step linearly implicit (Rosenbrock-W) methods for the fast
//! real-time side: stable on stiff modes, with a bounded cost per step (a
//! fixed number of `f` evaluations and triangular solves, no Newton
//! iteration, no allocation, no locks).
//!
//! The iteration matrix `W = I − hγJ` is factored on another thread and
//! handed to [`WStepper::step`]; it may be old (computed at another state
//! or time). The methods here are W-methods: they keep their order with any
//! matrix in place of `J`, so a stale matrix costs accuracy constants and
//! stiff stability, never the order. Stability on a stiff mode rests on the
//! matrix still holding that mode: on a mode with `λh = −20` stepped with a
//! matrix whose eigenvalue there is `sλ`, the step is stable for
//! `s ≥ 0.45` (linearly implicit Euler), `s ≥ 0.14` (ROS2) and `s ≥ 0.57`
//! (ROS34PW2), over-estimates (`s > 1`) damping less but staying stable
//! (checked up to `s = 20`). ROS34PW2 is the most accurate and the least
//! forgiving of a matrix that under-estimates stiffness.
//!
//! A method is written as published (Hairer & Wanner, *Solving ODEs II*,
//! §IV.7), with an arbitrary matrix `A ≈ J`:
//!
//! ```text
//! k_i = h f(t + α_i h, x + Σ_{j<i} α_ij k_j) + h A Σ_{j≤i} γ_ij k_j + γ_i h² f_t,
//! x₁  = x + Σ b_i k_i,          α_i = Σ_j α_ij,  γ_i = Σ_{j≤i} γ_ij,  γ_ii = γ,
//! ```
//!
//! and stepped in the transformed variables `U_i = Σ_{j≤i} γ_ij k_j`, which
//! need no product of `A` with a vector:
//!
//! ```text
//! W U_i = hγ [ f(t + α_i h, x + Σ_{j<i} a_ij U_j) + Σ_{j<i} (c_ij / h) U_j + γ_i h f_t ],
//! x₁    = x + Σ m_i U_i,
//! ```
//!
//! with `a = αΓ⁻¹`, `c = diag(1/γ) − Γ⁻¹`, `mᵀ = bᵀΓ⁻¹`. The transformed
//! coefficients are computed at compile time from the published ones
//! ([`WTableau::from_published`]), so only published numbers are typed in.

use std::fmt;
use std::str::FromStr;

use crate::linalg::{Factors, Matrix, SolveWork};
use crate::named::UnknownName;
use crate::ode::OdeSystem;
use crate::step::{FixedStepper, StepReport};

/// Stages of the longest method here.
pub const MAX_STAGES: usize = 4;

/// A method's coefficients as published, in Hairer and Wanner's notation
/// (see the module documentation). Entries beyond `stages` are zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Published {
    /// Number of stages `s`.
    pub stages: usize,
    /// `α_ij`, strictly lower triangular: the stage arguments.
    pub alpha: [[f64; MAX_STAGES]; MAX_STAGES],
    /// `γ_ij`, lower triangular with the single diagonal value `γ`.
    pub gamma: [[f64; MAX_STAGES]; MAX_STAGES],
    /// Weights `b_i`.
    pub b: [f64; MAX_STAGES],
}

/// A method in the transformed form [`WStepper`] steps with (see the
/// module documentation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WTableau {
    /// Number of stages `s`.
    pub stages: usize,
    /// The diagonal coefficient `γ` of `W = I − hγJ`.
    pub gamma: f64,
    /// Stage times `α_i` as fractions of the step.
    pub nodes: [f64; MAX_STAGES],
    /// `γ_i`, the weight of `h f_t` in stage `i`.
    pub time: [f64; MAX_STAGES],
    /// `a_ij` (j < i): stage arguments in the transformed variables.
    pub a: [[f64; MAX_STAGES]; MAX_STAGES],
    /// `c_ij` (j < i): coupling of earlier stages, divided by `h`.
    pub c: [[f64; MAX_STAGES]; MAX_STAGES],
    /// Weights `m_i` of the transformed stages.
    pub m: [f64; MAX_STAGES],
}

impl WTableau {
    /// The transformed coefficients of a published method:
    /// `a = αΓ⁻¹`, `c = diag(1/γ) − Γ⁻¹`, `mᵀ = bᵀΓ⁻¹`, `α_i` and `γ_i` the row
    /// sums of `α` and `Γ`.
    pub const fn from_published(p: &Published) -> WTableau {
        let s = p.stages;
        let g = &p.gamma;
        // Γ⁻¹ by forward substitution, column by column (Γ lower triangular).
        let mut inv = [[0.0; MAX_STAGES]; MAX_STAGES];
        let mut j = 0;
        while j < s {
            inv[j][j] = 1.0 / g[j][j];
            let mut i = j + 1;
            while i < s {
                let mut sum = 0.0;
                let mut k = j;
                while k < i {
                    sum += g[i][k] * inv[k][j];
                    k += 1;
                }
                inv[i][j] = -sum / g[i][i];
                i += 1;
            }
            j += 1;
        }
        let mut t = WTableau {
            stages: s,
            gamma: g[0][0],
            nodes: [0.0; MAX_STAGES],
            time: [0.0; MAX_STAGES],
            a: [[0.0; MAX_STAGES]; MAX_STAGES],
            c: [[0.0; MAX_STAGES]; MAX_STAGES],
            m: [0.0; MAX_STAGES],
        };
        let mut i = 0;
        while i < s {
            let mut j = 0;
            while j < i {
                t.nodes[i] += p.alpha[i][j];
                t.c[i][j] = -inv[i][j];
                let mut k = j;
                while k < i {
                    t.a[i][j] += p.alpha[i][k] * inv[k][j];
                    k += 1;
                }
                j += 1;
            }
            let mut j = 0;
            while j <= i {
                t.time[i] += g[i][j];
                t.m[j] += p.b[i] * inv[i][j];
                j += 1;
            }
            i += 1;
        }
        t
    }
}

/// Linearly implicit Euler: one stage, `γ = 1`, order 1, L-stable,
/// `R(z) = 1/(1 − z)`.
pub const ROSENBROCK_EULER: Published = Published {
    stages: 1,
    alpha: [[0.0; MAX_STAGES]; MAX_STAGES],
    gamma: [
        [1.0, 0.0, 0.0, 0.0],
        [0.0; MAX_STAGES],
        [0.0; MAX_STAGES],
        [0.0; MAX_STAGES],
    ],
    b: [1.0, 0.0, 0.0, 0.0],
};

/// `γ` of ROS2.
const ROS2_GAMMA: f64 = 1.0 + std::f64::consts::FRAC_1_SQRT_2;

/// ROS2 of Verwer, Spee, Blom and Hundsdorfer, *A second-order Rosenbrock
/// method applied to photochemical dispersion problems*, SIAM J. Sci.
/// Comput. 20 (1999): two stages, `γ = 1 + 1/√2`, `α₂₁ = 1`, `γ₂₁ = −2γ`,
/// `b = (½, ½)`; order 2 for any matrix, L-stable. (PETSc's `TSROSW2P`.)
pub const ROS2: Published = Published {
    stages: 2,
    alpha: [
        [0.0; MAX_STAGES],
        [1.0, 0.0, 0.0, 0.0],
        [0.0; MAX_STAGES],
        [0.0; MAX_STAGES],
    ],
    gamma: [
        [ROS2_GAMMA, 0.0, 0.0, 0.0],
        [-2.0 * ROS2_GAMMA, ROS2_GAMMA, 0.0, 0.0],
        [0.0; MAX_STAGES],
        [0.0; MAX_STAGES],
    ],
    b: [0.5, 0.5, 0.0, 0.0],
};

/// `γ` of ROS34PW2.
const ROS34PW2_GAMMA: f64 = 0.435866521508459;

/// ROS34PW2 of Rang and Angermann, *New Rosenbrock W-methods of order 3 for
/// partial differential algebraic equations of index 1*, BIT 45 (2005):
/// four stages, order 3 for any matrix, L-stable (`R(∞) = 0`).
///
/// Coefficients as registered for `TSROSWRA34PW2` in PETSc's
/// `src/ts/impls/rosw/rosw.c` (they agree with MATLODE's
/// `Coefficients_ROS34PW2.m`); the order conditions and `R(∞) = 0` are
/// checked in this module's tests.
// The digits are PETSc's, kept as printed there (17 significant digits).
#[allow(clippy::excessive_precision)]
pub const ROS34PW2: Published = Published {
    stages: 4,
    alpha: [
        [0.0; MAX_STAGES],
        [8.7173304301691801e-01, 0.0, 0.0, 0.0],
        [8.4457060015369423e-01, -1.1299064236484185e-01, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
    ],
    gamma: [
        [ROS34PW2_GAMMA, 0.0, 0.0, 0.0],
        [-8.7173304301691801e-01, ROS34PW2_GAMMA, 0.0, 0.0],
        [-9.0338057013044082e-01, 5.4180672388095326e-02, ROS34PW2_GAMMA, 0.0],
        [
            2.4212380706095346e-01,
            -1.2232505839045147e+00,
            5.4526025533510214e-01,
            ROS34PW2_GAMMA,
        ],
    ],
    b: [
        2.4212380706095346e-01,
        -1.2232505839045147e+00,
        1.5452602553351020e+00,
        4.3586652150845900e-01,
    ],
};

const ROSENBROCK_EULER_T: WTableau = WTableau::from_published(&ROSENBROCK_EULER);
const ROS2_T: WTableau = WTableau::from_published(&ROS2);
const ROS34PW2_T: WTableau = WTableau::from_published(&ROS34PW2);

/// The Rosenbrock-W methods by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WMethod {
    /// Linearly implicit Euler, order 1.
    RosenbrockEuler,
    /// ROS2 (Verwer et al. 1999), order 2.
    Ros2,
    /// ROS34PW2 (Rang & Angermann 2005), order 3.
    Ros34pw2,
}

impl WMethod {
    /// All methods, for listing valid names.
    pub const ALL: [WMethod; 3] = [WMethod::RosenbrockEuler, WMethod::Ros2, WMethod::Ros34pw2];

    /// The name used in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            WMethod::RosenbrockEuler => "rosenbrock-euler",
            WMethod::Ros2 => "ros2",
            WMethod::Ros34pw2 => "ros34pw2",
        }
    }

    /// The classical order, kept with any matrix in place of `J`.
    pub fn order(self) -> u32 {
        match self {
            WMethod::RosenbrockEuler => 1,
            WMethod::Ros2 => 2,
            WMethod::Ros34pw2 => 3,
        }
    }

    /// The diagonal coefficient `γ`: the factors handed to
    /// [`WStepper::step`] are those of `I − hγJ`.
    pub fn gamma(self) -> f64 {
        self.tableau().gamma
    }

    /// The method as published.
    pub fn published(self) -> &'static Published {
        match self {
            WMethod::RosenbrockEuler => &ROSENBROCK_EULER,
            WMethod::Ros2 => &ROS2,
            WMethod::Ros34pw2 => &ROS34PW2,
        }
    }

    /// The method in the transformed form the stepper uses.
    pub fn tableau(self) -> &'static WTableau {
        match self {
            WMethod::RosenbrockEuler => &ROSENBROCK_EULER_T,
            WMethod::Ros2 => &ROS2_T,
            WMethod::Ros34pw2 => &ROS34PW2_T,
        }
    }
}

impl fmt::Display for WMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for WMethod {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        crate::named::by_name(&WMethod::ALL, WMethod::name, s, "rosenbrock method")
    }
}

/// How a step accounts for the model's explicit dependence on time, `f_t`.
///
/// Inputs are held over a step, so only the model's own time sources
/// (ramps, sine waves, steps, clocks) make `f` depend on `t`. For a
/// W-method `f_t` is part of the matrix of the autonomous system
/// `(x, t)' = (f, 1)`, so leaving it out keeps the order; but on a stiff
/// mode driven by a time source (`x' = λ(x − g(t))`, `λh ≪ −1`) it makes
/// the state lag the source by about one step. On `x' = λ(x − sin t) +
/// cos t`, `λh = −20`, the error at `t = 1` falls from 4–5·10⁻⁴ to
/// 2·10⁻⁸ (linearly implicit Euler, ROS2) when differenced; with a stale matrix
/// (0.8 J) about fourfold, ROS34PW2 included. (With the exact matrix on a
/// linear problem ROS34PW2 is built so that `f_t` drops out.) Differencing
/// is the default; drop it for models known to have no time sources.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeDerivative {
    /// Difference `f` over the whole step at the start state:
    /// `h f_t ≈ f(t + h, x) − f(t, x)`, one extra evaluation per step.
    /// Exact for ramps; a step source switching inside the step adds a
    /// bounded term (its jump, weighted by `γ_i`), not jump / (tiny δ), and
    /// rounding in `t` does not matter.
    #[default]
    Difference,
    /// Take `f_t = 0`: for autonomous models (no time sources), saving
    /// one evaluation per step.
    Omitted,
}

/// Prepares the factors [`WStepper::step`] needs: LU of `I − hγ jac` for
/// step `h` and `method`'s `γ`. Returns `false` when the matrix is
/// singular (then `factors` must not be handed over). Allocates nothing,
/// but costs O(n³) dense (less sparse): run it off the real-time thread.
pub fn factor_iteration_matrix(factors: &mut Factors, jac: &Matrix, h: f64, method: WMethod) -> bool {
    factors.factor_shifted(jac, h * method.gamma())
}

/// A Rosenbrock-W integrator with its stage buffers, allocated once for
/// `n` continuous states.
pub struct WStepper {
    method: WMethod,
    time_derivative: TimeDerivative,
    /// Transformed stages `U_i`.
    stages: Vec<Vec<f64>>,
    /// The state a stage evaluates `f` at.
    scratch: Vec<f64>,
    /// `f(t + h, x) − f(t, x)`, the step's `h f_t`.
    time_change: Vec<f64>,
    /// Work space of the triangular solves.
    solve_work: SolveWork,
    evaluations: u64,
}

impl WStepper {
    /// An integrator of `method` for models with `n` continuous states,
    /// differencing `f_t` ([`TimeDerivative::Difference`]).
    pub fn new(method: WMethod, n: usize) -> Self {
        WStepper {
            method,
            time_derivative: TimeDerivative::default(),
            stages: vec![vec![0.0; n]; method.tableau().stages],
            scratch: vec![0.0; n],
            time_change: vec![0.0; n],
            solve_work: SolveWork::default(),
            evaluations: 0,
        }
    }

    /// The same integrator solving with factors like `factors` (sparse
    /// factors need work space made for their pattern; allocates).
    pub fn solving_with(mut self, factors: &Factors) -> Self {
        self.solve_work = factors.solve_work();
        self
    }

    /// The same integrator handling `f_t` as `time_derivative` says.
    pub fn with_time_derivative(mut self, time_derivative: TimeDerivative) -> Self {
        self.time_derivative = time_derivative;
        self
    }

    /// The method.
    pub fn method(&self) -> WMethod {
        self.method
    }

    /// How `f_t` is handled.
    pub fn time_derivative(&self) -> TimeDerivative {
        self.time_derivative
    }

    /// Derivative evaluations so far.
    pub fn evaluations(&self) -> u64 {
        self.evaluations
    }

    /// Derivative evaluations each step makes (with states): the stages,
    /// plus one when `f_t` is differenced.
    pub fn evaluations_per_step(&self) -> usize {
        self.stages.len() + usize::from(self.time_derivative == TimeDerivative::Difference)
    }

    /// The integrator stepping with `factors`: the LU factors of `I − hγA`
    /// for the steps' `h` and the method's `γ` ([`factor_iteration_matrix`];
    /// sparse ones with the work space of [`WStepper::solving_with`]).
    pub fn with_factors<'a>(&'a mut self, factors: &'a Factors) -> WStep<'a> {
        WStep { stepper: self, factors }
    }
}

/// A [`WStepper`] with the factors it steps with.
pub struct WStep<'a> {
    stepper: &'a mut WStepper,
    factors: &'a Factors,
}

impl FixedStepper for WStep<'_> {
    /// Real-time safe: a fixed number of `f` evaluations and triangular
    /// solves, no allocation, no locks.
    ///
    /// The factors must be those of `I − hγA` for this `h`, with `A` any
    /// approximation of the Jacobian `∂f/∂x`, however old, of size `n × n`.
    /// The order does not depend on `A`; stability on a stiff mode needs
    /// `A` to hold that mode. Factors prepared for another step `h'` are
    /// those of `A = (h'/h) J`: still a valid W-method, with that mode's
    /// stiffness misjudged by `h'/h`.
    ///
    /// With no states (`n = 0`) the step does nothing.
    fn step(&mut self, system: &mut dyn OdeSystem, t: f64, h: f64, x: &mut [f64]) -> StepReport {
        let n = x.len();
        debug_assert_eq!(
            n,
            self.stepper.scratch.len(),
            "WStepper built for {} states",
            self.stepper.scratch.len()
        );
        if n == 0 {
            return StepReport::DIRECT;
        }
        let tab = self.stepper.method.tableau();
        let hg = h * tab.gamma;
        let with_time = self.stepper.time_derivative == TimeDerivative::Difference;
        for i in 0..tab.stages {
            let (done, rest) = self.stepper.stages.split_at_mut(i);
            let stage = &mut rest[0];
            if i == 0 {
                // α₁ = 0: the first stage evaluates f at the start.
                system.rhs(t, x, stage);
                self.stepper.evaluations += 1;
                if with_time {
                    system.rhs(t + h, x, &mut self.stepper.time_change);
                    self.stepper.evaluations += 1;
                    for (d, f) in self.stepper.time_change.iter_mut().zip(stage.iter()) {
                        *d -= f;
                    }
                }
            } else {
                self.stepper.scratch.copy_from_slice(x);
                for (j, &a) in tab.a[i][..i].iter().enumerate() {
                    if a != 0.0 {
                        for (s, v) in self.stepper.scratch.iter_mut().zip(&done[j]) {
                            *s += a * v;
                        }
                    }
                }
                system.rhs(t + tab.nodes[i] * h, &self.stepper.scratch, stage);
                self.stepper.evaluations += 1;
            }
            // hγ [f + Σ (c_ij / h) U_j + γ_i h f_t] = hγ f + γ Σ c_ij U_j + hγ γ_i (h f_t).
            for v in stage.iter_mut() {
                *v *= hg;
            }
            for (j, &c) in tab.c[i][..i].iter().enumerate() {
                if c != 0.0 {
                    let w = tab.gamma * c;
                    for (v, p) in stage.iter_mut().zip(&done[j]) {
                        *v += w * p;
                    }
                }
            }
            if with_time && tab.time[i] != 0.0 {
                let w = hg * tab.time[i];
                for (v, d) in stage.iter_mut().zip(&self.stepper.time_change) {
                    *v += w * d;
                }
            }
            self.factors.solve(stage, &mut self.stepper.solve_work);
        }
        for (stage, &m) in self.stepper.stages.iter().zip(&tab.m) {
            for (xi, v) in x.iter_mut().zip(stage) {
                *xi += m * v;
            }
        }
        StepReport::DIRECT
    }

    fn evaluations(&self) -> u64 {
        self.stepper.evaluations
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;
    use tandem_models::{Layout, Model, StateRef};

    use crate::ode::ModelOde;

    /// One step of `stepper` with `lu` on `model` (no discrete states or
    /// inputs).
    fn step(stepper: &mut WStepper, model: &mut dyn Model, t: f64, h: f64, x: &mut [f64], lu: &Factors) {
        let mut system = ModelOde { model, xd: &[], u: &[] };
        stepper.with_factors(lu).step(&mut system, t, h, x);
    }

    /// `x' = f(p, t, x)`, a model written in Rust with one parameter.
    #[derive(Clone)]
    struct Ode {
        layout: Layout,
        p: f64,
        f: fn(f64, f64, &[f64], &mut [f64]),
    }

    impl Ode {
        fn new(n: usize, p: f64, f: fn(f64, f64, &[f64], &mut [f64])) -> Self {
            Ode {
                layout: Layout {
                    states: (0..n).map(|i| format!("x{i}")).collect(),
                    ..Layout::default()
                },
                p,
                f,
            }
        }
    }

    impl Model for Ode {
        fn layout(&self) -> &Layout {
            &self.layout
        }
        fn fork(&self) -> Box<dyn Model> {
            Box::new(self.clone())
        }
        fn initial_state(&mut self, _: &mut [f64], _: &mut [f64]) {}
        fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
            (self.f)(self.p, s.t, s.x, dx);
        }
        fn outputs(&mut self, _: StateRef<'_>, _: &mut [f64]) {}
    }

    /// Integrates `model` from `t = 0`, `x0` to `stop` in steps of `h`,
    /// factoring `I − hγ matrix(t, x)` before every step.
    #[expect(
        clippy::too_many_arguments,
        reason = "a test's whole integration: the method, the model, the span and the matrix it factors"
    )]
    fn integrate(
        method: WMethod,
        time: TimeDerivative,
        model: &mut Ode,
        x0: &[f64],
        stop: f64,
        h: f64,
        matrix: &dyn Fn(f64, &[f64]) -> DMatrix<f64>,
    ) -> Vec<f64> {
        let n = x0.len();
        let mut stepper = WStepper::new(method, n).with_time_derivative(time);
        let mut x = x0.to_vec();
        let steps = (stop / h).round() as usize;
        for k in 0..steps {
            let t = k as f64 * h;
            let lu = factored(matrix(t, &x), h, method);
            step(&mut stepper, model, t, h, &mut x, &lu);
        }
        assert_eq!(stepper.evaluations(), (steps * stepper.evaluations_per_step()) as u64);
        x
    }

    /// The dense factors of `I − hγ jac`.
    fn factored(jac: DMatrix<f64>, h: f64, method: WMethod) -> Factors {
        let jac = Matrix::from_dense(jac);
        let mut factors = Factors::new(&jac);
        assert!(factor_iteration_matrix(&mut factors, &jac, h, method));
        factors
    }

    fn max_error(x: &[f64], exact: &[f64]) -> f64 {
        x.iter().zip(exact).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
    }

    // ---- Order conditions of the published coefficients ----

    fn mat_vec(m: &[[f64; MAX_STAGES]; MAX_STAGES], v: &[f64; MAX_STAGES]) -> [f64; MAX_STAGES] {
        let mut r = [0.0; MAX_STAGES];
        for (ri, row) in r.iter_mut().zip(m) {
            *ri = row.iter().zip(v).map(|(a, b)| a * b).sum();
        }
        r
    }

    fn dot(a: &[f64; MAX_STAGES], b: &[f64; MAX_STAGES]) -> f64 {
        a.iter().zip(b).map(|(a, b)| a * b).sum()
    }

    /// The W-method order conditions (any matrix `A`) up to order 3, as
    /// (value, required value): trees of `f` nodes (weights through `α`)
    /// and `A` nodes (weights through `Γ`, diagonal included); trees with
    /// an `A` node must have weight 0.
    fn order_conditions(p: &Published) -> Vec<(&'static str, u32, f64, f64)> {
        let s = p.stages;
        let mut one = [0.0; MAX_STAGES];
        one[..s].fill(1.0);
        let al = mat_vec(&p.alpha, &one);
        let ga = mat_vec(&p.gamma, &one);
        let al2 = al.map(|a| a * a);
        vec![
            ("b·1", 1, dot(&p.b, &one), 1.0),
            ("b·α", 2, dot(&p.b, &al), 0.5),
            ("b·Γ1", 2, dot(&p.b, &ga), 0.0),
            ("b·α²", 3, dot(&p.b, &al2), 1.0 / 3.0),
            ("b·αα1", 3, dot(&p.b, &mat_vec(&p.alpha, &al)), 1.0 / 6.0),
            ("b·αΓ1", 3, dot(&p.b, &mat_vec(&p.alpha, &ga)), 0.0),
            ("b·Γα1", 3, dot(&p.b, &mat_vec(&p.gamma, &al)), 0.0),
            ("b·ΓΓ1", 3, dot(&p.b, &mat_vec(&p.gamma, &ga)), 0.0),
        ]
    }

    #[test]
    fn published_coefficients_satisfy_the_w_order_conditions() {
        for method in WMethod::ALL {
            let p = method.published();
            let conditions = order_conditions(p);
            for &(name, order, value, want) in &conditions {
                if order <= method.order() {
                    assert!((value - want).abs() < 1e-14, "{method}: {name} = {value}, want {want}");
                }
            }
            // Below order 3, some condition of the next order fails: the
            // order is exactly this (order 4 has no conditions listed here).
            if method.order() < 3 {
                let mut next = conditions.iter().filter(|c| c.1 == method.order() + 1);
                assert!(next.any(|c| (c.2 - c.3).abs() > 1e-3), "{method} has a higher order");
            }
            assert_eq!(p.gamma[0][0], method.gamma());
            for i in 0..p.stages {
                assert_eq!(p.gamma[i][i], method.gamma(), "{method}: single diagonal γ");
            }
        }
    }

    /// The stability function of a W-method on `x' = λx` with the matrix
    /// `μ` in place of `λ`, from the published coefficients:
    /// `R(z, w) = 1 + z bᵀ (I − zα − wΓ)⁻¹ 1`, `z = hλ`, `w = hμ`.
    fn stability_from_published(p: &Published, z: f64, w: f64) -> f64 {
        let s = p.stages;
        let mut k = [0.0; MAX_STAGES];
        for i in 0..s {
            let mut r = 1.0;
            for (j, kj) in k.iter().enumerate().take(i) {
                r += (z * p.alpha[i][j] + w * p.gamma[i][j]) * kj;
            }
            k[i] = r / (1.0 - w * p.gamma[i][i]);
        }
        1.0 + z * dot(&p.b, &k)
    }

    /// The stability functions in closed form: `P(z) / (1 − γz)^s`, `P` the
    /// expansion of `(1 − γz)^s e^z` to the method's order (which fixes its
    /// low coefficients), of degree below `s` for these L-stable methods.
    fn stability_closed_form(method: WMethod, z: f64) -> f64 {
        let g = method.gamma();
        let d = 1.0 - g * z;
        match method {
            // γ = 1: R = 1 / (1 − z).
            WMethod::RosenbrockEuler => 1.0 / (1.0 - z),
            // The z² coefficient ½ − 2γ + γ² vanishes for γ = 1 ± 1/√2.
            WMethod::Ros2 => (1.0 + (1.0 - 2.0 * g) * z) / (d * d),
            WMethod::Ros34pw2 => {
                let p1 = 1.0 - 4.0 * g;
                let p2 = 0.5 - 4.0 * g + 6.0 * g * g;
                let p3 = 1.0 / 6.0 - 2.0 * g + 6.0 * g * g - 4.0 * g * g * g;
                (1.0 + z * (p1 + z * (p2 + z * p3))) / d.powi(4)
            }
        }
    }

    #[test]
    fn transformed_coefficients_invert_the_published_ones() {
        for method in WMethod::ALL {
            let (p, t) = (method.published(), method.tableau());
            let s = p.stages;
            // Rebuild Γ⁻¹ from c (off the diagonal) and γ, then check Γ Γ⁻¹ = I,
            // αΓ⁻¹ = a and bᵀΓ⁻¹ = mᵀ.
            let inv = |i: usize, j: usize| if i == j { 1.0 / t.gamma } else { -t.c[i][j] };
            for i in 0..s {
                for j in 0..=i {
                    let gi: f64 = (j..=i).map(|k| p.gamma[i][k] * inv(k, j)).sum();
                    assert!(
                        (gi - f64::from(i == j)).abs() < 1e-13,
                        "{method}: (ΓΓ⁻¹)[{i}][{j}] = {gi}"
                    );
                    if j < i {
                        let a: f64 = (j..i).map(|k| p.alpha[i][k] * inv(k, j)).sum();
                        assert!((a - t.a[i][j]).abs() < 1e-13);
                    }
                }
                let m: f64 = (i..s).map(|k| p.b[k] * inv(k, i)).sum();
                assert!((m - t.m[i]).abs() < 1e-13);
            }
            // The stability functions agree and R(∞) = 0 (L-stable).
            for z in [-0.5, -3.0, -20.0, -1e4, 0.7] {
                let (r1, r2) = (stability_from_published(p, z, z), stability_closed_form(method, z));
                assert!(
                    (r1 - r2).abs() < 1e-12 * (1.0 + r2.abs()),
                    "{method}: R({z}) = {r1} vs {r2}"
                );
            }
            assert!(
                stability_from_published(p, -1e12, -1e12).abs() < 1e-9,
                "{method}: R(∞) ≠ 0"
            );
        }
    }

    // ---- Measured orders ----

    /// `x' = −x²`, `x(0) = 1`: `x = 1/(1 + t)`.
    fn quadratic(_: f64, _: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = -x[0] * x[0];
    }

    /// The linear oscillator `x₀' = x₁`, `x₁' = −x₀`.
    fn oscillator(_: f64, _: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = x[1];
        dx[1] = -x[0];
    }

    fn observed_order(error: impl Fn(f64) -> f64, h: f64) -> f64 {
        (error(h) / error(h / 2.0)).log2()
    }

    /// A step in `method`'s asymptotic range on the test problems: errors
    /// shrink at its order and stay well above rounding.
    fn asymptotic_step(method: WMethod) -> f64 {
        match method {
            WMethod::RosenbrockEuler | WMethod::Ros2 => 0.01,
            WMethod::Ros34pw2 => 0.025,
        }
    }

    #[test]
    fn methods_converge_at_their_order_with_exact_and_wrong_matrices() {
        type Matrix = Box<dyn Fn(f64, &[f64]) -> DMatrix<f64>>;
        let scalar: [(&str, Matrix); 4] = [
            (
                "exact",
                Box::new(|_, x: &[f64]| DMatrix::from_element(1, 1, -2.0 * x[0])),
            ),
            // Not J/2: with A = J/2 linearly implicit Euler happens to be of order 2.
            (
                "0.3 J",
                Box::new(|_, x: &[f64]| DMatrix::from_element(1, 1, -0.6 * x[0])),
            ),
            ("zero", Box::new(|_, _: &[f64]| DMatrix::zeros(1, 1))),
            (
                "frozen at t = 0",
                Box::new(|_, _: &[f64]| DMatrix::from_element(1, 1, -2.0)),
            ),
        ];
        let planar: [(&str, Matrix); 3] = [
            (
                "exact",
                Box::new(|_, _: &[f64]| DMatrix::from_row_slice(2, 2, &[0.0, 1.0, -1.0, 0.0])),
            ),
            (
                "unrelated",
                Box::new(|_, _: &[f64]| DMatrix::from_row_slice(2, 2, &[0.3, 0.5, -1.2, -0.4])),
            ),
            ("zero", Box::new(|_, _: &[f64]| DMatrix::zeros(2, 2))),
        ];
        for method in WMethod::ALL {
            let p = f64::from(method.order());
            let h = asymptotic_step(method);
            for (name, matrix) in &scalar {
                let error = |h: f64| {
                    let mut model = Ode::new(1, 0.0, quadratic);
                    let x = integrate(method, TimeDerivative::Omitted, &mut model, &[1.0], 1.0, h, matrix);
                    (x[0] - 0.5).abs()
                };
                let q = observed_order(error, h);
                println!("{method} x' = -x², {name} matrix: order {q:.3}");
                assert!((q - p).abs() < 0.2, "{method}, {name} matrix: observed order {q}");
            }
            for (name, matrix) in &planar {
                let error = |h: f64| {
                    let mut model = Ode::new(2, 0.0, oscillator);
                    let x = integrate(method, TimeDerivative::Omitted, &mut model, &[1.0, 0.0], 1.0, h, matrix);
                    max_error(&x, &[1f64.cos(), -1f64.sin()])
                };
                let q = observed_order(error, h);
                println!("{method} oscillator, {name} matrix: order {q:.3}");
                assert!((q - p).abs() < 0.2, "{method}, {name} matrix: observed order {q}");
            }
        }
    }

    /// `x' = −x + sin t`: `x = (x₀ + ½) e^{−t} + (sin t − cos t) / 2`.
    fn forced_decay(_: f64, t: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = -x[0] + t.sin();
    }

    /// `x' = cos t`: `x = x₀ + sin t`.
    fn cosine(_: f64, t: f64, _: &[f64], dx: &mut [f64]) {
        dx[0] = t.cos();
    }

    #[test]
    fn time_dependent_models_converge_at_the_methods_order() {
        let exact_decay = |t: f64| 1.5 * (-t).exp() + 0.5 * (t.sin() - t.cos());
        for method in WMethod::ALL {
            let p = f64::from(method.order());
            let h = asymptotic_step(method);
            for time in [TimeDerivative::Difference, TimeDerivative::Omitted] {
                // The exact matrix J = −1 and a wrong one.
                for jac in [-1.0, -0.3] {
                    let decay = |h: f64| {
                        let mut model = Ode::new(1, 0.0, forced_decay);
                        let matrix = |_: f64, _: &[f64]| DMatrix::from_element(1, 1, jac);
                        let x = integrate(method, time, &mut model, &[1.0], 2.0, h, &matrix);
                        (x[0] - exact_decay(2.0)).abs()
                    };
                    let q = observed_order(decay, h);
                    println!("{method} x' = -x + sin t, matrix {jac}, f_t {time:?}: order {q:.3}");
                    assert!(
                        (q - p).abs() < 0.2,
                        "{method} x' = -x + sin t, {jac}, f_t {time:?}: order {q}"
                    );
                }
                let wave = |h: f64| {
                    let mut model = Ode::new(1, 0.0, cosine);
                    let matrix = |_: f64, _: &[f64]| DMatrix::zeros(1, 1);
                    let x = integrate(method, time, &mut model, &[0.0], 2.0, h, &matrix);
                    (x[0] - 2f64.sin()).abs()
                };
                let q = observed_order(wave, h);
                println!("{method} x' = cos t, f_t {time:?}: order {q:.3}");
                assert!(
                    (q - p).abs() < 0.2,
                    "{method} x' = cos t, f_t {time:?}: observed order {q}"
                );
            }
        }
    }

    /// Prothero–Robinson: `x' = λ(x − sin t) + cos t`, `x = sin t` from `x(0) = 0`.
    fn prothero_robinson(lambda: f64, t: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = lambda * (x[0] - t.sin()) + t.cos();
    }

    #[test]
    fn differencing_f_t_keeps_a_stiff_mode_on_its_time_source() {
        // The fast side's case: λ = −2·10⁴ at a 1 ms step (λh = −20), with
        // the exact matrix and with a stale one (0.8 J).
        let (lambda, h) = (-2e4, 1e-3);
        for method in WMethod::ALL {
            let error = |time: TimeDerivative, scale: f64| {
                let mut model = Ode::new(1, lambda, prothero_robinson);
                let matrix = |_: f64, _: &[f64]| DMatrix::from_element(1, 1, scale * lambda);
                let x = integrate(method, time, &mut model, &[0.0], 1.0, h, &matrix);
                (x[0] - 1f64.sin()).abs()
            };
            for scale in [1.0, 0.8] {
                let (with, without) = (
                    error(TimeDerivative::Difference, scale),
                    error(TimeDerivative::Omitted, scale),
                );
                println!(
                    "{method} Prothero–Robinson λh = −20, matrix {scale} J: error {with:.2e} differenced, {without:.2e} omitted"
                );
                if method == WMethod::Ros34pw2 && scale == 1.0 {
                    // ROS34PW2 is built so that f_t drops out of the step on
                    // linear problems with the exact matrix: bᵀ(I − zB)⁻¹Γ1 ≡ 0.
                    assert!(
                        with < 1e-10 && (with - without).abs() < 1e-14,
                        "{method}: {with} vs {without}"
                    );
                } else if scale == 1.0 {
                    assert!(
                        with < 1e-2 * without,
                        "{method}: {with} differenced vs {without} omitted"
                    );
                } else {
                    assert!(
                        with < 0.5 * without,
                        "{method}: {with} differenced vs {without} omitted"
                    );
                }
            }
        }
    }

    // ---- Stability ----

    /// `x' = λx`.
    fn linear(lambda: f64, _: f64, x: &[f64], dx: &mut [f64]) {
        dx[0] = lambda * x[0];
    }

    #[test]
    fn stiff_decay_is_damped_by_the_stability_function() {
        let h = 1e-3;
        for method in WMethod::ALL {
            for z in [-20.0, -1e4] {
                let lambda = z / h;
                let mut model = Ode::new(1, lambda, linear);
                let mut stepper = WStepper::new(method, 1).with_time_derivative(TimeDerivative::Omitted);
                let lu = factored(DMatrix::from_element(1, 1, lambda), h, method);
                let mut x = [1.0];
                step(&mut stepper, &mut model, 0.0, h, &mut x, &lu);
                let (r, want) = (x[0], stability_closed_form(method, z));
                println!("{method}: R({z}) = {r:.6e}, closed form {want:.6e}");
                assert!(
                    (r - want).abs() < 1e-12 * want.abs().max(1e-3),
                    "{method}: R({z}) = {r}, want {want}"
                );
                assert!(r.abs() < 0.1, "{method}: |R({z})| = {}", r.abs());
                // 1000 steps stay bounded (x₀ = 1 again so it does not underflow at once).
                let mut x = [1.0];
                for k in 1..=1000 {
                    step(&mut stepper, &mut model, k as f64 * h, h, &mut x, &lu);
                    assert!(
                        x[0].is_finite() && x[0].abs() <= 1.0,
                        "{method}, z = {z}: x = {} at step {k}",
                        x[0]
                    );
                }
            }
        }
        // The L-stable methods damp the stiffest mode more than a mild one.
        for method in [WMethod::Ros2, WMethod::Ros34pw2] {
            assert!(stability_closed_form(method, -1e4).abs() < 1e-3);
        }
    }

    #[test]
    fn a_stale_matrix_keeps_stability_unless_it_underestimates_the_stiff_mode_too_much() {
        // λh = −20 stepped with the matrix of μ = sλ: the factors handed over
        // were computed where the mode was s times as stiff.
        let (h, z) = (1e-3, -20.0);
        let lambda = z / h;
        // Smallest s with |R(z, sz)| ≤ 1 (from the published coefficients,
        // scanning s in steps of 0.01).
        for (method, s_min) in [
            (WMethod::RosenbrockEuler, 0.45),
            (WMethod::Ros2, 0.14),
            (WMethod::Ros34pw2, 0.57),
        ] {
            let p = method.published();
            let r = |s: f64| stability_from_published(p, z, s * z);
            assert!(
                r(s_min).abs() <= 1.0 && r(s_min - 0.01).abs() > 1.0,
                "{method}: threshold moved"
            );
            for s in [0.5, 0.8, 1.0, 2.0, 20.0] {
                let mut model = Ode::new(1, lambda, linear);
                let mut stepper = WStepper::new(method, 1).with_time_derivative(TimeDerivative::Omitted);
                let lu = factored(DMatrix::from_element(1, 1, s * lambda), h, method);
                let mut x = [1.0];
                step(&mut stepper, &mut model, 0.0, h, &mut x, &lu);
                println!("{method}: R({z}, {s} · {z}) = {:.4}", x[0]);
                assert!((x[0] - r(s)).abs() < 1e-12, "{method}, s = {s}: {} vs {}", x[0], r(s));
                assert_eq!(x[0].abs() < 1.0, s >= s_min, "{method}, s = {s}: R = {}", x[0]);
            }
        }
    }

    #[test]
    fn a_model_without_states_is_left_alone() {
        // Factoring a 0 × 0 matrix works. (A dense solve of an empty vector
        // panics in nalgebra's triangular solve, so step must not call it.)
        let lu = factored(DMatrix::zeros(0, 0), 1e-3, WMethod::Ros34pw2);
        for method in WMethod::ALL {
            let mut model = Ode::new(0, 0.0, |_, _, _, _| {});
            let mut stepper = WStepper::new(method, 0);
            let mut x: [f64; 0] = [];
            step(&mut stepper, &mut model, 0.0, 1e-3, &mut x, &lu);
            assert_eq!(stepper.evaluations(), 0);
        }
    }

    #[test]
    fn evaluations_are_counted_per_stage_and_time_difference() {
        for (method, stages) in [
            (WMethod::RosenbrockEuler, 1),
            (WMethod::Ros2, 2),
            (WMethod::Ros34pw2, 4),
        ] {
            assert_eq!(WStepper::new(method, 3).evaluations_per_step(), stages + 1);
            let omitted = WStepper::new(method, 3).with_time_derivative(TimeDerivative::Omitted);
            assert_eq!(omitted.evaluations_per_step(), stages);
        }
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_valid_ones() {
        for m in WMethod::ALL {
            assert_eq!(m.name().parse::<WMethod>().unwrap(), m);
            assert_eq!(m.to_string(), m.name());
        }
        let err = "ros3p".parse::<WMethod>().unwrap_err().to_string();
        assert!(err.contains("rosenbrock-euler, ros2, ros34pw2"), "{err}");
    }
}
