//! What a real-time tandem run is told: the frame, the policy that combines
//! the two integrators, and each thread's placement and method.

use std::fmt;
use std::str::FromStr;

use crate::events::EventSettings;
use crate::explicit::Method;
use crate::implicit::ImplicitMethod;
use crate::linalg::LinearSolver;
use crate::named::{by_name, UnknownName};
use crate::rosenbrock::WMethod;

/// How the fast thread combines its explicit result with the implicit one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Restart the fast integrator from the newest implicit state of a
    /// past frame and re-integrate to now.
    Correct,
    /// Use the implicit state of this frame when it is ready by the output
    /// deadline, else the explicit one.
    Select,
    /// No implicit thread: the baseline.
    Explicit,
}

impl Policy {
    /// All policies, for listing valid names.
    pub const ALL: [Policy; 3] = [Policy::Correct, Policy::Select, Policy::Explicit];

    /// The name used in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Correct => "correct",
            Policy::Select => "select",
            Policy::Explicit => "explicit",
        }
    }
}

impl FromStr for Policy {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        by_name(&Policy::ALL, Policy::name, s, "policy")
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How inputs beyond the last received sample are predicted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extrapolation {
    /// Hold the last sample (order 0).
    Hold,
    /// A line through the last two samples.
    Linear,
    /// A parabola through the last three samples.
    Quadratic,
}

impl Extrapolation {
    /// All orders, for listing valid names.
    pub const ALL: [Extrapolation; 3] = [Extrapolation::Hold, Extrapolation::Linear, Extrapolation::Quadratic];

    /// The name used in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            Extrapolation::Hold => "hold",
            Extrapolation::Linear => "linear",
            Extrapolation::Quadratic => "quadratic",
        }
    }

    /// Samples the polynomial goes through.
    pub fn points(self) -> usize {
        match self {
            Extrapolation::Hold => 1,
            Extrapolation::Linear => 2,
            Extrapolation::Quadratic => 3,
        }
    }
}

impl FromStr for Extrapolation {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        by_name(&Extrapolation::ALL, Extrapolation::name, s, "extrapolation")
    }
}

/// The implicit thread's integrator.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ImplicitSolver {
    /// The variable-order, variable-step BDF, landing on every frame time.
    Bdf,
    /// A fixed-step method with one step per macro step.
    Fixed(ImplicitMethod),
}

impl ImplicitSolver {
    /// Names accepted in configuration files.
    pub const NAMES: [&'static str; 4] = ["bdf", "bdf1", "bdf2", "trapezoidal"];
}

impl FromStr for ImplicitSolver {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        if s == "bdf" {
            return Ok(ImplicitSolver::Bdf);
        }
        s.parse::<ImplicitMethod>()
            .map(ImplicitSolver::Fixed)
            .map_err(|_| UnknownName {
                what: "implicit method",
                found: s.to_string(),
                valid: Self::NAMES.to_vec(),
            })
    }
}

impl fmt::Display for ImplicitSolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImplicitSolver::Bdf => f.write_str("bdf"),
            ImplicitSolver::Fixed(m) => f.write_str(m.name()),
        }
    }
}

/// The fast thread's integrator: one fixed step per frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastMethod {
    /// An explicit Runge–Kutta method: stable only below the model's
    /// fastest time constants.
    Explicit(Method),
    /// A linearly implicit (Rosenbrock-W) method, with the iteration matrix
    /// prepared by the implicit thread: stable on stiff modes, at a fixed
    /// cost (no Newton iteration).
    LinearlyImplicit(WMethod),
}

impl FastMethod {
    /// All methods, for listing valid names.
    pub const ALL: [FastMethod; 6] = [
        FastMethod::Explicit(Method::Euler),
        FastMethod::Explicit(Method::Heun),
        FastMethod::Explicit(Method::Rk4),
        FastMethod::LinearlyImplicit(WMethod::RosenbrockEuler),
        FastMethod::LinearlyImplicit(WMethod::Ros2),
        FastMethod::LinearlyImplicit(WMethod::Ros34pw2),
    ];

    /// The name used in configuration files.
    pub fn name(self) -> &'static str {
        match self {
            FastMethod::Explicit(m) => m.name(),
            FastMethod::LinearlyImplicit(m) => m.name(),
        }
    }
}

impl FromStr for FastMethod {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        by_name(&FastMethod::ALL, FastMethod::name, s, "fast method")
    }
}

impl fmt::Display for FastMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a thread runs and at which SCHED_FIFO priority.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placement {
    /// CPU core to pin to; `None` leaves the thread free.
    pub core: Option<usize>,
    /// SCHED_FIFO priority, 1 to 99.
    pub priority: u8,
}

/// The fast thread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FastSettings {
    /// Core and priority.
    pub placement: Placement,
    /// The method, one step per frame.
    pub method: FastMethod,
    /// A linearly implicit method's iteration matrix is prepared again at
    /// the newest frame's state every this many frames; 0 keeps the matrix
    /// of the initial state for the whole run.
    pub matrix_interval: u32,
}

impl FastSettings {
    /// Whether its iteration matrices are made again during a run of a
    /// model with `states` continuous states (a model without any needs
    /// none, and interval 0 keeps the first).
    pub fn refreshes_matrices(&self, states: usize) -> bool {
        matches!(self.method, FastMethod::LinearlyImplicit(_)) && self.matrix_interval > 0 && states > 0
    }
}

/// The implicit thread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImplicitThreadSettings {
    /// Core and priority (below the fast thread's).
    pub placement: Placement,
    /// The integrator.
    pub solver: ImplicitSolver,
    /// Relative tolerance (BDF error control, Newton convergence).
    pub rtol: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Newton iterations per step, at most (fixed-step methods).
    pub max_newton: u32,
    /// How both sides store the Jacobian and factor the iteration matrix
    /// (the fast side's too, for a linearly implicit method).
    pub linear_solver: LinearSolver,
    /// Time between two published results, a whole number of frames.
    pub macro_step: f64,
    /// How far ahead of the fast thread's newest frame the implicit thread
    /// may integrate, using extrapolated inputs; at least one macro step.
    pub lead: f64,
    /// When its state is this far behind the fast thread's newest frame, the
    /// implicit thread restarts from the fast thread's state.
    pub max_lag: f64,
    /// Cores of threads that difference the implicit side's Jacobians
    /// beside it (none: it differences them alone).
    pub helper_cores: HelperCores,
}

/// The cores of the implicit side's Jacobian helper threads, at most
/// [`HelperCores::MAX`], each thread pinned to one and run at the implicit
/// thread's priority.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HelperCores {
    cores: [usize; HelperCores::MAX],
    len: usize,
}

impl HelperCores {
    /// The most helper threads.
    pub const MAX: usize = 8;

    /// These cores, or `None` when there are more than [`HelperCores::MAX`].
    pub fn new(cores: &[usize]) -> Option<Self> {
        let mut helpers = HelperCores::default();
        helpers.cores.get_mut(..cores.len())?.copy_from_slice(cores);
        helpers.len = cores.len();
        Some(helpers)
    }

    /// The cores, one per helper thread.
    pub fn as_slice(&self) -> &[usize] {
        &self.cores[..self.len]
    }
}

/// How a real-time run handles the model's state events (zero crossings:
/// impacts, end stops, switches, time events).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameEvents {
    /// Locate crossings inside frames, on both sides (off: a crossing
    /// switches its mode at the next frame boundary, as `tandem sim
    /// --events off` does at grid steps).
    pub locate: bool,
    /// The most events each side locates in one frame; a crossing beyond
    /// them is handled at the next frame boundary, and counted. Bounds a
    /// frame's cost whatever the model does (a ball coming to rest bounces
    /// infinitely often in finite time).
    pub max_per_frame: u32,
}

impl FrameEvents {
    /// Events located per frame and side unless configured.
    pub const DEFAULT_MAX_PER_FRAME: u32 = 4;

    /// The settings of each side's event locator: the offline simulator's
    /// tolerances and rounds of the event iteration.
    pub fn locator_settings(&self) -> EventSettings {
        EventSettings {
            locate: self.locate,
            ..EventSettings::default()
        }
    }
}

impl Default for FrameEvents {
    fn default() -> Self {
        FrameEvents {
            locate: true,
            max_per_frame: Self::DEFAULT_MAX_PER_FRAME,
        }
    }
}

/// Everything a tandem run needs besides the model and its inputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TandemSettings {
    /// Frame period (s).
    pub frame: f64,
    /// Run length (s).
    pub duration: f64,
    /// The combination policy.
    pub policy: Policy,
    /// `correct`: frames re-integrated at most per correction.
    pub max_catchup: usize,
    /// Outputs are due this long after the frame's start (s).
    pub output_deadline: f64,
    /// The fast thread.
    pub fast: FastSettings,
    /// The implicit thread.
    pub implicit: ImplicitThreadSettings,
    /// State events.
    pub events: FrameEvents,
}

impl TandemSettings {
    /// Defaults for a frame of `frame` seconds: ROS34PW2 (its iteration
    /// matrix made every millisecond, at least every frame) on core 1 at
    /// priority 80,
    /// the BDF on core 0 at priority 70 (rtol 1e-6), one-frame macro step and
    /// lead, `correct` with 4 frames of catch-up,
    /// outputs due 0.8 of a frame after its start, a lag of 20 frames;
    /// events located inside frames, at most
    /// [`FrameEvents::DEFAULT_MAX_PER_FRAME`] per frame and side.
    pub fn new(frame: f64, duration: f64) -> Self {
        TandemSettings {
            frame,
            duration,
            policy: Policy::Correct,
            max_catchup: 4,
            output_deadline: 0.8 * frame,
            fast: FastSettings {
                placement: Placement {
                    core: Some(1),
                    priority: 80,
                },
                method: FastMethod::LinearlyImplicit(WMethod::Ros34pw2),
                matrix_interval: ((1e-3 / frame).round() as u32).max(1),
            },
            implicit: ImplicitThreadSettings {
                placement: Placement {
                    core: Some(0),
                    priority: 70,
                },
                solver: ImplicitSolver::Bdf,
                rtol: 1e-6,
                atol: 1e-8,
                max_newton: 4,
                linear_solver: LinearSolver::Auto,
                macro_step: frame,
                lead: frame,
                max_lag: 20.0 * frame,
                helper_cores: HelperCores::default(),
            },
            events: FrameEvents::default(),
        }
    }

    /// Frames in the run.
    pub fn frames(&self) -> u64 {
        self.in_frames(self.duration)
    }

    /// A duration given in seconds as whole frames (the configuration
    /// checks that it is one).
    pub fn in_frames(&self, seconds: f64) -> u64 {
        (seconds / self.frame).round() as u64
    }

    /// What the implicit thread does for a model with `states` continuous
    /// states.
    pub fn implicit_work(&self, states: usize) -> ImplicitWork {
        match self.policy {
            Policy::Correct | Policy::Select => ImplicitWork::Integrates(self.implicit.solver),
            Policy::Explicit if self.fast.refreshes_matrices(states) => ImplicitWork::Matrices,
            Policy::Explicit => ImplicitWork::Nothing,
        }
    }
}

/// What the implicit thread does in a run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ImplicitWork {
    /// There is none: an explicit fast method (or a matrix kept for the
    /// whole run) with policy `explicit`.
    Nothing,
    /// It only prepares the fast side's iteration matrices.
    Matrices,
    /// It integrates with this solver (and prepares the fast side's
    /// matrices, if it has any).
    Integrates(ImplicitSolver),
}

impl fmt::Display for ImplicitWork {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImplicitWork::Nothing => f.write_str("no implicit thread"),
            ImplicitWork::Matrices => f.write_str("matrices only"),
            ImplicitWork::Integrates(solver) => solver.fmt(f),
        }
    }
}
