//! What a block computes in a minor evaluation, described as data: its
//! outputs (and, for blocks with continuous states, its derivatives) as a
//! [`Kernel`] with the block's parameters, for code generators that compile
//! a program further (`tandem-jit`). Each variant's documentation states
//! the operations, in the order the interpreter performs them; a code
//! generator that follows them gives the interpreter's results bit for bit.
//!
//! Minor evaluations are those of [`super::Ctx::is_major`] false: a
//! zero-crossing function's side is the latched mode (see
//! [`super::Ctx::side`]), discrete states are read, never written.

use super::lookup::{Curve, Surface};

/// A block's minor evaluation, or [`Kernel::Opaque`] for a block only the
/// interpreter evaluates.
///
/// Conventions: `u(i, k)` is element `k` of input `i`, a scalar input
/// broadcast to every `k`; `y(j, k)` element `k` of output `j`; `w` the
/// width of output 0; `x`, `xd` the block's states; `side(i, z)` the
/// latched side of its zero crossing `i` at value `z`, which records the
/// switching distance. Sums and products are left to right.
#[derive(Clone, Copy, Debug)]
pub enum Kernel<'a> {
    /// Evaluated by the interpreter only.
    Opaque,
    /// Writes nothing (ports, terminators).
    Nothing,
    /// `y(0, k) = u(0, k)` for every `k < w`.
    Pass,
    /// Output 0 is inputs 0, 1, ... concatenated (each at its own width).
    Mux,
    /// Input 0 split over the outputs in order (each at its own width).
    Demux,
    /// Inputs `0..n` are data, `n..2n` their activities: output 0 is the
    /// first data input `i` whose activity `u(n + i, 0) > 0`, passed as
    /// [`Kernel::Pass`]; unchanged when none is active.
    Merge {
        /// Data inputs.
        n: usize,
    },
    /// Passes input 0 when the control `u(1, 0)` passes the criterion,
    /// else input 2 (as [`Kernel::Pass`]).
    Switch(Criterion),
    /// One gain: `y(0, k) = g * u(0, k)`; several: `y(0, k) = g[k] * u(0, k)`.
    Gain(&'a [f64]),
    /// One input: `acc = identity; acc = op(acc, u(0, k))` over the input's
    /// elements, into `y(0, 0)`. Several: per output element `k`,
    /// `acc = identity; acc = op(acc, u(i, k))` over the inputs `i`.
    /// `inverse[i]` selects `-` for Sum and `/` for Product.
    Fold {
        /// The combination.
        op: FoldOp,
        /// Per input, the inverse operation.
        inverse: &'a [bool],
    },
    /// `y(0, k) = f(u(0, k))`.
    Unary(Unary),
    /// `y(0, k) = f(u(0, k), u(1, k))`.
    Binary(Binary),
    /// `y = if side(k, u) { u } else { -u }`.
    Abs,
    /// `y = if side(k, u) { 1 } else { -1 }` (0 at u = 0 only in major
    /// evaluations).
    Sign,
    /// Two inputs: `y = if side(k, a - b) == max { a } else { b }`.
    MinMax {
        /// Max rather than min.
        max: bool,
    },
    /// `above = side(2k, u - lower)`, `below = side(2k + 1, upper - u)`;
    /// `y = lower` when not above, else `upper` when not below, else `u`.
    Saturation {
        /// Lower limit.
        lower: f64,
        /// Upper limit.
        upper: f64,
    },
    /// Regions as [`Kernel::Saturation`] with `start`, `end`:
    /// `u - start`, `u - end`, else `0`.
    DeadZone {
        /// Start of the dead zone.
        start: f64,
        /// End of the dead zone.
        end: f64,
    },
    /// `y(0, k) = value[k]`.
    Constant(&'a [f64]),
    /// `y = wave.at(t)`.
    Sine(Wave),
    /// `y = t`.
    Clock,
    /// `y = if side(0, t - time) { after } else { before }`.
    Step {
        /// Time of the step.
        time: f64,
        /// Value before.
        before: f64,
        /// Value after.
        after: f64,
    },
    /// `y = if side(0, t - start) { initial + slope * (t - start) } else { initial }`.
    Ramp {
        /// Slope.
        slope: f64,
        /// Start time.
        start: f64,
        /// Value before the start.
        initial: f64,
    },
    /// `side(0, xd[0] - t)`; `y = xd[1]`.
    Pulse,
    /// `y(0, k) = curves[k].value(t)` (FromTable).
    TimeTable(&'a [Curve]),
    /// `y(0, k) = curve.value(u(0, k))` (Lookup1D, broadcast as [`Kernel::Unary`]).
    Lookup(&'a Curve),
    /// `y(0, k) = surface.value(u(0, k), u(1, k))` (Lookup2D, broadcast as
    /// [`Kernel::Binary`]).
    Lookup2D(&'a Surface),
    /// Outputs: per element `k`, `side` of `upper - x[k]` when `upper` is
    /// finite, then of `x[k] - lower` when `lower` is (numbering the
    /// crossings in that order), and `y(0, k) = x[k].clamp(lower, upper)`.
    /// Derivatives: `dx[k] = 0` when `(x[k] == upper && d > 0) || (x[k] ==
    /// lower && d < 0)`, each clause only for a finite limit, else `d`,
    /// with `d = u(0, k)`.
    Integrator {
        /// Lower limit (may be -inf).
        lower: f64,
        /// Upper limit (may be +inf).
        upper: f64,
    },
    /// `y[i] = 0; y[i] += c[i n + j] x[j]` over `j`, then `+= d[i m + j]
    /// u(0, j)`; derivatives alike with `a` and `b`. Row-major matrices.
    Linear {
        /// States.
        n: usize,
        /// Inputs.
        m: usize,
        /// Outputs.
        p: usize,
        /// n × n.
        a: &'a [f64],
        /// n × m.
        b: &'a [f64],
        /// p × n.
        c: &'a [f64],
        /// p × m.
        d: &'a [f64],
    },
    /// `e = u(0, 0)`; `y = kp e + ki x[0] + (kd n) (e - x[1])`, left to
    /// right; `dx[0] = e`, `dx[1] = n (e - x[1])`.
    Pid {
        /// Proportional gain.
        kp: f64,
        /// Integral gain.
        ki: f64,
        /// Derivative gain.
        kd: f64,
        /// Derivative filter coefficient.
        n: f64,
    },
    /// The discrete PID: `e = u(0, 0)`, `t` 1 (`per_sample`) or the
    /// period; `y = kp e + ki t (xd[0] + e) + kd (e - xd[1]) / t`, left to
    /// right (products before sums, `ki t` first).
    DiscretePid {
        /// Proportional gain.
        kp: f64,
        /// Integral gain.
        ki: f64,
        /// Derivative gain.
        kd: f64,
        /// Whether `t` is 1 rather than the period.
        per_sample: bool,
    },
    /// The discrete transfer function (coefficients divided by the
    /// denominator's first, the numerator padded to its length):
    /// `y = num[0] u(0, 0) + xd[0]` (`+ 0` without states).
    DiscreteTransfer {
        /// Numerator, highest power first.
        num: &'a [f64],
        /// Denominator, highest power first, `den[0] = 1`.
        den: &'a [f64],
    },
    /// `y(0, k) = xd[k]` over the discrete states.
    Delay,
    /// `y(0, k) = (u(0, k) - xd[k]) / (t - xd[w])` when `xd[w + 1] > 0 &&
    /// t > xd[w]`, else `0`.
    Derivative,
    /// `y(0, k)` is 1 when the relation of `u(0, k)` to `rhs` holds, else 0,
    /// `rhs` the constant or `u(1, k)`; see [`Relation`].
    Compare {
        /// The relation.
        relation: Relation,
        /// The right-hand side, when constant.
        constant: Option<f64>,
    },
    /// `y(0, k)` from the count of non-zero `u(i, k)` over the inputs.
    Logical(Logic),
    /// `y = xd[1]`.
    Edge,
    /// `side(0, u(0, 0) - offset)`; `y = xd[1]`.
    HitCrossing {
        /// The level crossed.
        offset: f64,
    },
}

/// What a block does in an update (`Block::update`, at a major step
/// where it runs), as data for code generators.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Update {
    /// Done by the interpreter only.
    Opaque,
    /// Nothing: the block keeps no state an update advances.
    Nothing,
    /// `x[k] = x[k].clamp(lower, upper)` over the continuous states, as
    /// `f64::clamp` does: raised to `lower` when below it, then lowered to
    /// `upper` when above it.
    Clamp {
        /// Lower limit (may be -inf).
        lower: f64,
        /// Upper limit (may be +inf).
        upper: f64,
    },
    /// `xd[k] = u(0, k)` over the discrete states.
    Delay,
    /// `xd[k] = xd[k] + gain * period * u(0, k)` over the discrete states,
    /// the product left to right.
    Accumulate {
        /// The gain.
        gain: f64,
    },
    /// The states of the block's [`Kernel::DiscreteTransfer`], from its
    /// coefficients, its input `u` and its output `y` before the update:
    /// `xd[i] = num[i + 1] u - den[i + 1] y + xd[i + 1]` in increasing
    /// `i` (the last without `xd[i + 1]`).
    Transfer,
    /// `xd[0] = xd[0] + u(0, 0)`, `xd[1] = u(0, 0)`: the discrete PID's
    /// running sum and last error.
    SumAndLast,
    /// `xd[0] = initial` when `xd[0] + 1 > upper`, else `xd[0] + 1` (the
    /// Counter block: [`count`]).
    Count {
        /// Where the count starts again.
        initial: f64,
        /// The largest count.
        upper: f64,
    },
}

/// The Counter's next count after `count`: one more, or `initial` again
/// past `upper`.
#[inline]
pub fn count(count: f64, initial: f64, upper: f64) -> f64 {
    let next = count + 1.0;
    if next > upper {
        initial
    } else {
        next
    }
}

/// A sine wave of time (the Sine block).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Wave {
    /// Amplitude.
    pub amplitude: f64,
    /// Frequency in rad/s.
    pub frequency: f64,
    /// Phase in rad.
    pub phase: f64,
    /// Bias.
    pub bias: f64,
}

impl Wave {
    /// `bias + amplitude * sin(frequency * t + phase)`, in that order.
    #[inline]
    pub fn at(&self, t: f64) -> f64 {
        self.bias + self.amplitude * (self.frequency * t + self.phase).sin()
    }
}

/// A Switch's criterion on its control input `c`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Criterion {
    /// `side(0, c - threshold)`.
    AtLeast(f64),
    /// `!side(0, threshold - c)`.
    Above(f64),
    /// `c != 0`.
    NonZero,
}

/// How a fold combines values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FoldOp {
    /// `acc + u`, or `acc - u` for inverse inputs; identity 0.
    Sum,
    /// `acc * u`, or `acc / u` for inverse inputs; identity 1.
    Product,
    /// `acc.min(u)`; identity +inf.
    Min,
    /// `acc.max(u)`; identity -inf.
    Max,
}

impl FoldOp {
    /// The value an empty fold gives.
    pub fn identity(self) -> f64 {
        match self {
            FoldOp::Sum => 0.0,
            FoldOp::Product => 1.0,
            FoldOp::Min => f64::INFINITY,
            FoldOp::Max => f64::NEG_INFINITY,
        }
    }

    /// One step of the fold.
    #[inline]
    pub fn apply(self, acc: f64, u: f64, inverse: bool) -> f64 {
        match (self, inverse) {
            (FoldOp::Sum, false) => acc + u,
            (FoldOp::Sum, true) => acc - u,
            (FoldOp::Product, false) => acc * u,
            (FoldOp::Product, true) => acc / u,
            (FoldOp::Min, _) => acc.min(u),
            (FoldOp::Max, _) => acc.max(u),
        }
    }
}

/// A function of one argument (MathFunction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    /// `u.sqrt()`.
    Sqrt,
    /// `u.exp()`.
    Exp,
    /// `u.ln()`.
    Log,
    /// `u.log10()`.
    Log10,
    /// `u * u`.
    Square,
    /// `1 / u`.
    Reciprocal,
    /// `u.sin()`.
    Sin,
    /// `u.cos()`.
    Cos,
    /// `u.tan()`.
    Tan,
    /// `u.asin()`.
    Asin,
    /// `u.acos()`.
    Acos,
    /// `u.atan()`.
    Atan,
    /// `u.sinh()`.
    Sinh,
    /// `u.cosh()`.
    Cosh,
    /// `u.tanh()`.
    Tanh,
}

impl Unary {
    /// Every function with its name in model files.
    pub const ALL: [(Unary, &'static str); 15] = [
        (Unary::Sqrt, "sqrt"),
        (Unary::Exp, "exp"),
        (Unary::Log, "log"),
        (Unary::Log10, "log10"),
        (Unary::Square, "square"),
        (Unary::Reciprocal, "reciprocal"),
        (Unary::Sin, "sin"),
        (Unary::Cos, "cos"),
        (Unary::Tan, "tan"),
        (Unary::Asin, "asin"),
        (Unary::Acos, "acos"),
        (Unary::Atan, "atan"),
        (Unary::Sinh, "sinh"),
        (Unary::Cosh, "cosh"),
        (Unary::Tanh, "tanh"),
    ];

    /// The function's value at `u`.
    #[inline]
    pub fn apply(self, u: f64) -> f64 {
        match self {
            Unary::Sqrt => u.sqrt(),
            Unary::Exp => u.exp(),
            Unary::Log => u.ln(),
            Unary::Log10 => u.log10(),
            Unary::Square => u * u,
            Unary::Reciprocal => 1.0 / u,
            Unary::Sin => u.sin(),
            Unary::Cos => u.cos(),
            Unary::Tan => u.tan(),
            Unary::Asin => u.asin(),
            Unary::Acos => u.acos(),
            Unary::Atan => u.atan(),
            Unary::Sinh => u.sinh(),
            Unary::Cosh => u.cosh(),
            Unary::Tanh => u.tanh(),
        }
    }
}

/// A function of two arguments (MathFunction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binary {
    /// `a.powf(b)`.
    Pow,
    /// `a.atan2(b)`.
    Atan2,
    /// `a.hypot(b)`.
    Hypot,
    /// `a % b`.
    Rem,
}

impl Binary {
    /// Every function with its name in model files.
    pub const ALL: [(Binary, &'static str); 4] = [
        (Binary::Pow, "pow"),
        (Binary::Atan2, "atan2"),
        (Binary::Hypot, "hypot"),
        (Binary::Rem, "rem"),
    ];

    /// The function's value at `(a, b)`.
    #[inline]
    pub fn apply(self, a: f64, b: f64) -> f64 {
        match self {
            Binary::Pow => a.powf(b),
            Binary::Atan2 => a.atan2(b),
            Binary::Hypot => a.hypot(b),
            Binary::Rem => a % b,
        }
    }
}

/// A comparison of `a` with `b`, with the zero crossing it switches
/// through (numbered by element `k`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// `!side(k, a - b)`.
    Lt,
    /// `side(k, b - a)`.
    Le,
    /// `!side(k, b - a)`.
    Gt,
    /// `side(k, a - b)`.
    Ge,
    /// `a == b` (no zero crossing).
    Eq,
    /// `a != b` (no zero crossing).
    Ne,
}

/// A logical operator over `trues`, the count of non-zero inputs of `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Logic {
    /// `trues == n`.
    And,
    /// `trues > 0`.
    Or,
    /// `trues < n`.
    Nand,
    /// `trues == 0`.
    Nor,
    /// `trues` odd.
    Xor,
    /// `trues == 0`.
    Not,
}
