//! Discrete dynamics, updated only at sample hits of major steps:
//! UnitDelay, Memory, ZeroOrderHold, DiscreteIntegrator,
//! DiscreteTransferFunction, DiscretePID, Counter.

use super::continuous::{check_denominator, coefficients, initial_values};
use super::kernel::count;
use super::{Block, BlockError, BlockType, Build, Ctx, Kernel, Rate, Update};

/// The block types of this family.
pub(crate) const TYPES: &[BlockType] = &[
    BlockType {
        name: "UnitDelay",
        summary: "y(n) = u(n-1), y(0) = `initial`",
        build: unit_delay,
    },
    BlockType {
        name: "Memory",
        summary: "The input of the previous major step",
        build: memory,
    },
    BlockType {
        name: "ZeroOrderHold",
        summary: "Samples u at each hit and holds it",
        build: zero_order_hold,
    },
    BlockType {
        name: "DiscreteIntegrator",
        summary: "Forward Euler: y(n) = x(n), x(n+1) = x(n) + `gain` T u(n)",
        build: discrete_integrator,
    },
    BlockType {
        name: "DiscreteTransferFunction",
        summary: "`numerator`(z) / `denominator`(z), coefficients highest power first",
        build: discrete_transfer_function,
    },
    BlockType {
        name: "DiscretePID",
        summary: "kp e(n) + ki T Σe + kd (e(n) - e(n-1)) / T (T = 1 with `per_sample`)",
        build: discrete_pid,
    },
    BlockType {
        name: "Counter",
        summary: "Counts hits from `initial`, wrapping to `initial` after `upper`",
        build: counter,
    },
];

/// Output = discrete state, state = input at each update.
struct Delay;
impl Block for Delay {
    fn outputs(&self, c: &mut Ctx) {
        for k in 0..c.xd.len() {
            let v = c.xd[k];
            c.set_at(0, k, v);
        }
    }
    fn update(&self, c: &mut Ctx) {
        for k in 0..c.xd.len() {
            c.xd[k] = c.u_at(0, k);
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Delay
    }

    fn update_kernel(&self) -> Update {
        Update::Delay
    }
}

/// Declares a delay-like block: one input without feedthrough whose width
/// defaults to that of `initial`.
fn delay(b: &mut Build, rate: Rate) -> Result<Box<dyn Block>, BlockError> {
    let initial = b.params.numbers_or("initial", &[0.0])?;
    b.inputs(1);
    b.no_feedthrough(0);
    let w = b.width_or(0, initial.len().max(1))?;
    b.outputs(&[w]);
    b.discrete_states(initial_values(&initial, w, "initial", "the input")?);
    b.rate(rate);
    Ok(Box::new(Delay))
}

fn unit_delay(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    delay(b, Rate::Discrete)
}

fn memory(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    delay(b, Rate::Continuous)
}

struct Hold;
impl Block for Hold {
    fn outputs(&self, c: &mut Ctx) {
        c.pass(0, 0);
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Pass
    }
}

fn zero_order_hold(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    b.inputs(1);
    let w = b.width(0)?;
    b.outputs(&[w]);
    b.rate(Rate::Discrete);
    Ok(Box::new(Hold))
}

struct DiscreteIntegrator {
    gain: f64,
}
impl Block for DiscreteIntegrator {
    fn outputs(&self, c: &mut Ctx) {
        Delay.outputs(c);
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Delay
    }
    fn update(&self, c: &mut Ctx) {
        for k in 0..c.xd.len() {
            c.xd[k] += self.gain * c.period * c.u_at(0, k);
        }
    }

    fn update_kernel(&self) -> Update {
        Update::Accumulate { gain: self.gain }
    }
}

fn discrete_integrator(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let gain = b.params.number_or("gain", 1.0)?;
    delay(b, Rate::Discrete)?;
    Ok(Box::new(DiscreteIntegrator { gain }))
}

/// Direct form II transposed: y = b0 u + s0, s_i = b_{i+1} u - a_{i+1} y + s_{i+1}.
struct DiscreteTf {
    num: Vec<f64>,
    den: Vec<f64>,
}
impl DiscreteTf {
    fn output(&self, c: &Ctx) -> f64 {
        self.num[0] * c.u(0) + c.xd.first().copied().unwrap_or(0.0)
    }
}
impl Block for DiscreteTf {
    fn outputs(&self, c: &mut Ctx) {
        let y = self.output(c);
        c.set(0, y);
    }
    fn update(&self, c: &mut Ctx) {
        let (u, y) = (c.u(0), self.output(c));
        let n = c.xd.len();
        for i in 0..n {
            let next = if i + 1 < n { c.xd[i + 1] } else { 0.0 };
            c.xd[i] = self.num[i + 1] * u - self.den[i + 1] * y + next;
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::DiscreteTransfer {
            num: &self.num,
            den: &self.den,
        }
    }

    fn update_kernel(&self) -> Update {
        Update::Transfer
    }
}

fn discrete_transfer_function(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let num = coefficients(b, "numerator")?;
    let den = coefficients(b, "denominator")?;
    check_denominator(&den)?;
    if num.len() > den.len() {
        return Err(BlockError::new(
            "the transfer function must be proper (numerator no longer than denominator, both highest power first)",
        ));
    }
    let mut padded = vec![0.0; den.len() - num.len()];
    padded.extend(&num);
    let num: Vec<f64> = padded.iter().map(|c| c / den[0]).collect();
    let den: Vec<f64> = den.iter().map(|c| c / den[0]).collect();
    b.inputs(1);
    if num[0] == 0.0 {
        b.no_feedthrough(0);
    }
    b.scalar(0)?;
    b.outputs(&[1]);
    b.discrete_states(vec![0.0; den.len() - 1]);
    b.rate(Rate::Discrete);
    Ok(Box::new(DiscreteTf { num, den }))
}

/// `xd` = [running sum of errors before this sample, previous error].
struct DiscretePid {
    kp: f64,
    ki: f64,
    kd: f64,
    per_sample: bool,
}
impl Block for DiscretePid {
    fn outputs(&self, c: &mut Ctx) {
        let e = c.u(0);
        let t = if self.per_sample { 1.0 } else { c.period };
        let sum = c.xd[0] + e;
        let difference = e - c.xd[1];
        c.set(0, self.kp * e + self.ki * t * sum + self.kd * difference / t);
    }
    fn update(&self, c: &mut Ctx) {
        let e = c.u(0);
        c.xd[0] += e;
        c.xd[1] = e;
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::DiscretePid {
            kp: self.kp,
            ki: self.ki,
            kd: self.kd,
            per_sample: self.per_sample,
        }
    }

    fn update_kernel(&self) -> Update {
        Update::SumAndLast
    }
}

fn discrete_pid(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let kp = b.params.number_or("kp", 1.0)?;
    let ki = b.params.number_or("ki", 0.0)?;
    let kd = b.params.number_or("kd", 0.0)?;
    let per_sample = b.params.flag_or("per_sample", false)?;
    b.inputs(1);
    b.scalar(0)?;
    b.outputs(&[1]);
    b.discrete_states(vec![0.0, 0.0]);
    b.rate(Rate::Discrete);
    Ok(Box::new(DiscretePid { kp, ki, kd, per_sample }))
}

struct Counter {
    initial: f64,
    upper: f64,
}
impl Block for Counter {
    fn outputs(&self, c: &mut Ctx) {
        let v = c.xd[0];
        c.set(0, v);
    }
    fn update(&self, c: &mut Ctx) {
        c.xd[0] = count(c.xd[0], self.initial, self.upper);
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Delay
    }

    fn update_kernel(&self) -> Update {
        Update::Count {
            initial: self.initial,
            upper: self.upper,
        }
    }
}

fn counter(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let initial = b.params.number_or("initial", 0.0)?;
    let upper = b.params.number_or("upper", f64::INFINITY)?;
    if upper < initial {
        return Err(BlockError::new(format!(
            "\"upper\" ({upper}) is below \"initial\" ({initial})"
        )));
    }
    b.inputs(0);
    b.outputs(&[1]);
    b.discrete_states(vec![initial]);
    b.rate(Rate::Discrete);
    Ok(Box::new(Counter { initial, upper }))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{build_error, eval};
    use serde_json::json;

    #[test]
    fn discrete_blocks_need_a_sample_time() {
        let e = build_error(json!({"type": "UnitDelay"}), 1);
        assert!(e.contains("needs a discrete sample time"), "{e}");
        let e = build_error(json!({"type": "Counter"}), 0);
        assert!(e.contains("needs a discrete sample time"), "{e}");
    }

    #[test]
    fn empty_lists_are_refused_by_name() {
        let e = build_error(
            json!({"type": "UnitDelay", "sample_time": 0.1, "params": {"initial": []}}),
            1,
        );
        assert!(
            e.ends_with(
                "block \"b\": initial: an empty list; give a number or one value per element of the input (width 1)"
            ),
            "{e}"
        );
        let e = build_error(
            json!({"type": "DiscreteTransferFunction", "sample_time": 0.1, "params": {"numerator": [1], "denominator": []}}),
            1,
        );
        assert!(
            e.ends_with("block \"b\": denominator: an empty list; give a list of at least one value"),
            "{e}"
        );
    }

    #[test]
    fn first_outputs_are_the_initial_values() {
        let y = eval(
            json!({"type": "UnitDelay", "sample_time": 0.1, "params": {"initial": [1, 2]}}),
            &[&[5.0, 6.0]],
            1,
            0.0,
        )
        .unwrap();
        assert_eq!(y, vec![vec![1.0, 2.0]]);
        let y = eval(
            json!({"type": "DiscretePID", "sample_time": 0.5, "params": {"kp": 2, "ki": 1, "kd": 1}}),
            &[&[3.0]],
            1,
            0.0,
        )
        .unwrap();
        // kp e + ki T e + kd e / T at the first sample.
        assert_eq!(y, vec![vec![6.0 + 1.5 + 6.0]]);
        let y = eval(json!({"type": "DiscreteTransferFunction", "sample_time": 1, "params": {"numerator": [2, 1], "denominator": [1, -0.5]}}), &[&[3.0]], 1, 0.0).unwrap();
        assert_eq!(y, vec![vec![6.0]]);
    }
}
