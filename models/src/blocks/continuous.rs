//! Continuous dynamics: Integrator, Derivative, TransferFunction,
//! StateSpace, PID.

use super::params::{check_matrix, Shape};
use super::{Block, BlockError, BlockType, Build, Ctx, Kernel, Rate, Update};
use crate::error_kind::ErrorKind;

/// The highest order of a TransferFunction: its companion matrix is dense,
/// so its cost grows with the square of the order.
const MAX_ORDER: usize = 256;

/// The block types of this family.
pub(crate) const TYPES: &[BlockType] = &[
    BlockType {
        name: "Integrator",
        summary: "x' = u, y = x; optional reset input (`reset`), reset value input (`external_initial`), limits",
        build: integrator,
    },
    BlockType {
        name: "Derivative",
        summary: "du/dt estimated from the last major step",
        build: derivative,
    },
    BlockType {
        name: "TransferFunction",
        summary: "`numerator`(s) / `denominator`(s), coefficients highest power first",
        build: transfer_function,
    },
    BlockType {
        name: "StateSpace",
        summary: "x' = A x + B u, y = C x + D u",
        build: state_space,
    },
    BlockType {
        name: "PID",
        summary: "kp e + ki ∫e + kd N (e - filtered e), derivative filter coefficient `n`",
        build: pid,
    },
];

/// The initial values of `w` states from parameter `key`: a number
/// broadcast, or one value per element of `of` (of width `w`).
pub(crate) fn initial_values(values: &[f64], w: usize, key: &'static str, of: &str) -> Result<Vec<f64>, BlockError> {
    Shape::PerElement { of, width: w }.check(key, values)?;
    Ok(match values {
        [one] => vec![*one; w],
        many => many.to_vec(),
    })
}

/// Transfer-function coefficients from parameter `key`, highest power
/// first, without leading zeros: at least one is nonzero.
pub(crate) fn coefficients(b: &mut Build, key: &'static str) -> Result<Vec<f64>, BlockError> {
    let given = b.params.numbers(key)?;
    Shape::AtLeast(1).check(key, &given)?;
    Ok(given.into_iter().skip_while(|&c| c == 0.0).collect())
}

/// Checks that a denominator without its leading zeros is not empty.
pub(crate) fn check_denominator(den: &[f64]) -> Result<(), BlockError> {
    if den.is_empty() {
        return Err(BlockError::of_param(
            ErrorKind::Parameter,
            "denominator",
            "every coefficient is 0; give a nonzero coefficient (highest power first)",
        ));
    }
    Ok(())
}

/// When an integrator's reset input fires.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Trigger {
    Rising,
    Falling,
    Either,
    Level,
}

impl Trigger {
    /// Whether the change of the reset signal from `before` to `now` fires.
    fn fires(self, before: f64, now: f64) -> bool {
        let rising = (before < 0.0 && now >= 0.0) || (before == 0.0 && now > 0.0);
        let falling = (before > 0.0 && now <= 0.0) || (before == 0.0 && now < 0.0);
        match self {
            Trigger::Rising => rising,
            Trigger::Falling => falling,
            Trigger::Either => rising || falling,
            Trigger::Level => now != 0.0,
        }
    }
}

struct Integrator {
    initial: Vec<f64>,
    reset: Option<Trigger>,
    /// Input index of the reset value, when external.
    reset_value: Option<usize>,
    lower: f64,
    upper: f64,
}

impl Block for Integrator {
    /// The state, within the limits; reaching a finite limit is a zero
    /// crossing (so the state stops exactly there).
    fn outputs(&self, c: &mut Ctx) {
        let mut i = 0;
        for k in 0..c.x.len() {
            let x = c.x[k];
            if self.upper.is_finite() {
                c.side(i, self.upper - x);
                i += 1;
            }
            if self.lower.is_finite() {
                c.side(i, x - self.lower);
                i += 1;
            }
            c.set_at(0, k, x.clamp(self.lower, self.upper));
        }
    }

    /// The input, or 0 while the state rests on a finite limit (clamped
    /// there at the last major step) and the input pushes against it. A
    /// state beyond a limit is one that crosses it inside a step: it flows
    /// on smoothly, so that the step's extension locates the crossing,
    /// where the event clamps it. An infinite limit is never rested on.
    fn derivatives(&self, c: &mut Ctx) {
        let (upper, lower) = (self.upper.is_finite(), self.lower.is_finite());
        for k in 0..c.x.len() {
            let d = c.u_at(0, k);
            let x = c.x[k];
            let rests = (upper && x == self.upper && d > 0.0) || (lower && x == self.lower && d < 0.0);
            c.dx[k] = if rests { 0.0 } else { d };
        }
    }

    /// Applies a reset at the major step where the reset signal fired (the
    /// event instant when that signal comes from a block with zero
    /// crossings) and keeps the state within its limits.
    fn update(&self, c: &mut Ctx) {
        if let Some(trigger) = self.reset {
            let now = c.u(1);
            let fired = trigger.fires(c.xd[0], now);
            c.xd[0] = now;
            if fired {
                for k in 0..c.x.len() {
                    c.x[k] = match self.reset_value {
                        Some(i) => c.u_at(i, k),
                        None => self.initial[k],
                    };
                }
            }
        }
        for x in c.x.iter_mut() {
            *x = x.clamp(self.lower, self.upper);
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Integrator {
            lower: self.lower,
            upper: self.upper,
        }
    }

    fn update_kernel(&self) -> Update {
        match self.reset {
            Some(_) => Update::Opaque,
            None if self.lower.is_finite() || self.upper.is_finite() => Update::Clamp {
                lower: self.lower,
                upper: self.upper,
            },
            // Clamping to infinite limits changes no value, NaN included.
            None => Update::Nothing,
        }
    }
}

fn integrator(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let initial = b.params.numbers_or("initial", &[0.0])?;
    let reset = match b
        .params
        .choice_or("reset", &["none", "rising", "falling", "either", "level"], "none")?
    {
        "rising" => Some(Trigger::Rising),
        "falling" => Some(Trigger::Falling),
        "either" => Some(Trigger::Either),
        "level" => Some(Trigger::Level),
        _ => None,
    };
    let external = b.params.flag_or("external_initial", false)?;
    let lower = b.params.number_or("lower", f64::NEG_INFINITY)?;
    let upper = b.params.number_or("upper", f64::INFINITY)?;
    if lower > upper {
        return Err(BlockError::new(format!(
            "\"lower\" ({lower}) is above \"upper\" ({upper})"
        )));
    }
    if external && reset.is_none() {
        return Err(BlockError::new("\"external_initial\" needs a reset input")
            .help("set \"reset\" to rising, falling, either or level"));
    }
    let mut names = vec!["in"];
    names.extend(reset.map(|_| "reset"));
    names.extend(external.then_some("x0"));
    b.named_inputs(&names);
    for i in 0..names.len() {
        b.no_feedthrough(i);
    }
    let w = b.width_or(0, initial.len().max(1))?;
    if reset.is_some() {
        b.scalar(1)?;
    }
    let reset_value = external.then_some(2);
    if external {
        let wx = b.width_or(2, w)?;
        if wx != w && wx != 1 {
            return Err(BlockError::dimension(format!(
                "dimension mismatch: input x0 has width {wx} but the integrator has width {w}"
            )));
        }
    }
    let initial = initial_values(&initial, w, "initial", "the input")?;
    b.outputs(&[w]);
    b.states(initial.iter().map(|x| x.clamp(lower, upper)).collect());
    b.zero_crossings(w * (usize::from(upper.is_finite()) + usize::from(lower.is_finite())));
    if reset.is_some() {
        b.discrete_states(vec![0.0]);
    }
    b.rate(Rate::Continuous);
    Ok(Box::new(Integrator {
        initial,
        reset,
        reset_value,
        lower,
        upper,
    }))
}

/// Output `(u - u_prev) / (t - t_prev)`; `xd` holds `u_prev` then `t_prev`
/// and a flag telling whether a previous sample exists.
struct Derivative;
impl Block for Derivative {
    fn outputs(&self, c: &mut Ctx) {
        let w = c.out_width(0);
        let (t_prev, valid) = (c.xd[w], c.xd[w + 1]);
        for k in 0..w {
            let v = if valid > 0.0 && c.t > t_prev {
                (c.u_at(0, k) - c.xd[k]) / (c.t - t_prev)
            } else {
                0.0
            };
            c.set_at(0, k, v);
        }
    }

    fn update(&self, c: &mut Ctx) {
        let w = c.out_width(0);
        for k in 0..w {
            c.xd[k] = c.u_at(0, k);
        }
        c.xd[w] = c.t;
        c.xd[w + 1] = 1.0;
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Derivative
    }
}

fn derivative(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    b.inputs(1);
    let w = b.width(0)?;
    b.outputs(&[w]);
    b.discrete_states(vec![0.0; w + 2]);
    b.rate(Rate::Continuous);
    Ok(Box::new(Derivative))
}

/// A linear system x' = A x + B u, y = C x + D u (dense, row-major).
struct Linear {
    n: usize,
    m: usize,
    p: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    d: Vec<f64>,
}

impl Block for Linear {
    fn outputs(&self, ctx: &mut Ctx) {
        for i in 0..self.p {
            let mut y = 0.0;
            for j in 0..self.n {
                y += self.c[i * self.n + j] * ctx.x[j];
            }
            for j in 0..self.m {
                y += self.d[i * self.m + j] * ctx.u_at(0, j);
            }
            ctx.set_at(0, i, y);
        }
    }

    fn derivatives(&self, ctx: &mut Ctx) {
        for i in 0..self.n {
            let mut dx = 0.0;
            for j in 0..self.n {
                dx += self.a[i * self.n + j] * ctx.x[j];
            }
            for j in 0..self.m {
                dx += self.b[i * self.m + j] * ctx.u_at(0, j);
            }
            ctx.dx[i] = dx;
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Linear {
            n: self.n,
            m: self.m,
            p: self.p,
            a: &self.a,
            b: &self.b,
            c: &self.c,
            d: &self.d,
        }
    }

    fn update_kernel(&self) -> Update {
        Update::Nothing
    }
}

impl Linear {
    /// Declares ports and states of the system for block `b`.
    fn declare(self, b: &mut Build, x0: Vec<f64>) -> Result<Box<dyn Block>, BlockError> {
        b.inputs(1);
        if self.d.iter().all(|&d| d == 0.0) {
            b.no_feedthrough(0);
        }
        let w = b.width_or(0, self.m)?;
        if w != self.m {
            return Err(BlockError::dimension(format!(
                "dimension mismatch: the input has width {w} but the system has {} inputs",
                self.m
            )));
        }
        b.outputs(&[self.p]);
        b.states(x0);
        b.rate(Rate::Continuous);
        Ok(Box::new(self))
    }
}

/// Controllable canonical form of num(s)/den(s).
fn transfer_function(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let num = coefficients(b, "numerator")?;
    let den = coefficients(b, "denominator")?;
    check_denominator(&den)?;
    if num.len() > den.len() {
        return Err(BlockError::new(format!(
            "the transfer function must be proper: numerator degree {} exceeds denominator degree {}",
            num.len() as i64 - 1,
            den.len() as i64 - 1
        ))
        .help("make \"denominator\" at least as long as \"numerator\" (coefficients highest power first)"));
    }
    let n = den.len() - 1;
    if n > MAX_ORDER {
        return Err(BlockError::new(format!(
            "the transfer function has order {n}, more than the bound of {MAX_ORDER}"
        ))
        .help("split it into a cascade of lower-order transfer functions"));
    }
    let a: Vec<f64> = den.iter().map(|c| c / den[0]).collect();
    let mut bn = vec![0.0; den.len() - num.len()];
    bn.extend(num.iter().map(|c| c / den[0]));
    let mut am = vec![0.0; n * n];
    for i in 0..n.saturating_sub(1) {
        am[i * n + i + 1] = 1.0;
    }
    for j in 0..n {
        am[(n - 1) * n + j] = -a[n - j];
    }
    let mut bm = vec![0.0; n];
    if n > 0 {
        bm[n - 1] = 1.0;
    }
    let cm: Vec<f64> = (0..n).map(|j| bn[n - j] - a[n - j] * bn[0]).collect();
    Linear {
        n,
        m: 1,
        p: 1,
        a: am,
        b: bm,
        c: cm,
        d: vec![bn[0]],
    }
    .declare(b, vec![0.0; n])
}

fn state_space(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let a = b.params.matrix("A")?;
    let bm = b.params.matrix("B")?;
    let c = b.params.matrix("C")?;
    // Every matrix has a first row (`Params::matrix`): n states, m inputs,
    // p outputs.
    let n = a.len();
    let m = bm.first().map_or(0, Vec::len);
    let p = c.len();
    let d = b.params.matrix_or("D", vec![vec![0.0; m]; p])?;
    let initial = b.params.numbers_or("initial", &[0.0])?;
    check_matrix("A", &a, n, n, "n × n for n states")?;
    check_matrix("B", &bm, n, m, "n × m: n states, m inputs")?;
    check_matrix("C", &c, p, n, "p × n: p outputs, n states")?;
    check_matrix("D", &d, p, m, "p × m: p outputs, m inputs")?;
    let x0 = initial_values(&initial, n, "initial", "the state")?;
    let flat = |m: Vec<Vec<f64>>| m.into_iter().flatten().collect();
    Linear {
        n,
        m,
        p,
        a: flat(a),
        b: flat(bm),
        c: flat(c),
        d: flat(d),
    }
    .declare(b, x0)
}

struct Pid {
    kp: f64,
    ki: f64,
    kd: f64,
    n: f64,
}
impl Block for Pid {
    fn outputs(&self, c: &mut Ctx) {
        let e = c.u(0);
        let y = self.kp * e + self.ki * c.x[0] + self.kd * self.n * (e - c.x[1]);
        c.set(0, y);
    }
    fn derivatives(&self, c: &mut Ctx) {
        let e = c.u(0);
        c.dx[0] = e;
        c.dx[1] = self.n * (e - c.x[1]);
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Pid {
            kp: self.kp,
            ki: self.ki,
            kd: self.kd,
            n: self.n,
        }
    }

    fn update_kernel(&self) -> Update {
        Update::Nothing
    }
}

fn pid(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let kp = b.params.number_or("kp", 1.0)?;
    let ki = b.params.number_or("ki", 0.0)?;
    let kd = b.params.number_or("kd", 0.0)?;
    let n = b.params.number_or("n", 100.0)?;
    if n.is_nan() || n <= 0.0 {
        return Err(BlockError::new(format!(
            "the derivative filter coefficient \"n\" must be > 0, found {n}"
        )));
    }
    b.inputs(1);
    b.scalar(0)?;
    b.outputs(&[1]);
    b.states(vec![0.0, 0.0]);
    b.rate(Rate::Continuous);
    Ok(Box::new(Pid { kp, ki, kd, n }))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{build_error, eval};
    use super::Trigger;
    use serde_json::json;

    #[test]
    fn triggers_fire_on_their_edges() {
        assert!(
            Trigger::Rising.fires(-1.0, 0.0) && Trigger::Rising.fires(0.0, 1.0) && !Trigger::Rising.fires(1.0, 2.0)
        );
        assert!(Trigger::Falling.fires(1.0, 0.0) && !Trigger::Falling.fires(-1.0, 0.0));
        assert!(Trigger::Either.fires(1.0, -1.0) && Trigger::Either.fires(-1.0, 1.0));
        assert!(Trigger::Level.fires(5.0, 1.0) && !Trigger::Level.fires(1.0, 0.0));
    }

    #[test]
    fn linear_blocks_check_their_matrices() {
        let e = build_error(
            json!({"type": "StateSpace", "params": {"A": [[0, 1], [0, 0]], "B": [[0], [1], [2]], "C": [[1, 0]]}}),
            1,
        );
        assert!(
            e.contains("block \"b\": B: a 3×1 matrix; give a 2×1 matrix (n × m: n states, m inputs)"),
            "{e}"
        );
        let e = build_error(
            json!({"type": "TransferFunction", "params": {"numerator": [1, 0, 0], "denominator": [1, 1]}}),
            1,
        );
        assert!(e.contains("proper"), "{e}");
    }

    #[test]
    fn initial_values_and_coefficients_are_checked_for_their_length() {
        let e = build_error(json!({"type": "Integrator", "params": {"initial": []}}), 1);
        assert!(
            e.ends_with(
                "block \"b\": initial: an empty list; give a number or one value per element of the input (width 1)"
            ),
            "{e}"
        );
        let e = build_error(
            json!({"type": "StateSpace", "params": {"A": [[0, 1], [0, 0]], "B": [[0], [1]], "C": [[1, 0]], "initial": [1, 2, 3]}}),
            1,
        );
        assert!(
            e.ends_with(
                "block \"b\": initial: a list of 3 values; give a number or one value per element of the state \
                 (width 2)"
            ),
            "{e}"
        );
        let e = build_error(
            json!({"type": "TransferFunction", "params": {"numerator": [], "denominator": [1, 1]}}),
            1,
        );
        assert!(
            e.ends_with("block \"b\": numerator: an empty list; give a list of at least one value"),
            "{e}"
        );
        let e = build_error(
            json!({"type": "TransferFunction", "params": {"numerator": [0], "denominator": [0, 0]}}),
            1,
        );
        assert!(
            e.ends_with(
                "block \"b\": denominator: every coefficient is 0; give a nonzero coefficient (highest power first)"
            ),
            "{e}"
        );
    }

    #[test]
    fn proper_transfer_function_passes_its_direct_term() {
        // (2s + 3) / (s + 1) at x = 0 is the direct term 2.
        let y = eval(
            json!({"type": "TransferFunction", "params": {"numerator": [2, 3], "denominator": [1, 1]}}),
            &[&[5.0]],
            1,
            0.0,
        )
        .unwrap();
        assert_eq!(y, vec![vec![10.0]]);
    }
}
