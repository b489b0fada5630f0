//! Arithmetic: Gain, Sum, Product, Abs, Sign, MinMax, MathFunction.

use super::kernel::{Binary, FoldOp, Kernel, Unary};
use super::params::{Shape, MAX_PORTS};
use super::{Block, BlockError, BlockType, Build, Ctx};

/// The block types of this family.
pub(crate) const TYPES: &[BlockType] = &[
    BlockType { name: "Gain", summary: "y = `gain` * u (element-wise when `gain` is a list)", build: gain },
    BlockType { name: "Sum", summary: "Adds and subtracts inputs by `signs` (e.g. \"+-+\"); one input: sum of its elements", build: sum },
    BlockType { name: "Product", summary: "Multiplies and divides inputs by `ops` (e.g. \"*/\"); one input: product of its elements", build: product },
    BlockType { name: "Divide", summary: "Product with `ops` \"*/\" by default: u1 / u2", build: divide },
    BlockType { name: "Abs", summary: "|u|", build: abs },
    BlockType { name: "Sign", summary: "-1, 0 or 1 by the sign of u", build: sign },
    BlockType { name: "MinMax", summary: "Element-wise `function` (min or max) over the inputs; one input: over its elements", build: min_max },
    BlockType { name: "MathFunction", summary: "`function` of u: sqrt, exp, log, log10, square, reciprocal, sin, cos, tan, asin, acos, atan, sinh, cosh, tanh; of (u1, u2): pow, atan2, hypot, rem", build: math_function },
];

struct Gain(Vec<f64>);
impl Block for Gain {
    fn outputs(&self, c: &mut Ctx) {
        if let [k] = self.0[..] {
            c.map(0, 0, |u| k * u);
        } else {
            for (i, &k) in self.0.iter().enumerate() {
                let v = k * c.u_at(0, i);
                c.set_at(0, i, v);
            }
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Gain(&self.0)
    }
}

fn gain(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let k = b.params.numbers("gain")?;
    b.inputs(1);
    let w = b.width(0)?;
    // A list on a scalar input makes a vector of the list's length.
    if w != 1 || k.is_empty() {
        Shape::PerElement {
            of: "the input",
            width: w,
        }
        .check("gain", &k)?;
    }
    b.outputs(&[w.max(k.len())]);
    Ok(Box::new(Gain(k)))
}

/// Reads a string of operator characters (`|` and spaces ignored).
fn operators(b: &mut Build, key: &'static str, default: &'static str, allowed: &str) -> Result<Vec<char>, BlockError> {
    let text = b.params.string_or(key, default)?;
    let ops: Vec<char> = text.chars().filter(|c| *c != '|' && *c != ' ').collect();
    if ops.len() > MAX_PORTS {
        return Err(BlockError::new(format!(
            "parameter \"{key}\" has {} signs, one per input: more than the bound of {MAX_PORTS} inputs",
            ops.len()
        ))
        .help("split the block into several"));
    }
    if ops.is_empty() || ops.iter().any(|c| !allowed.contains(*c)) {
        return Err(BlockError::new(format!(
            "parameter \"{key}\" is \"{text}\"; it must be made of the characters {allowed}"
        ))
        .help(format!("one character per input, e.g. \"{default}\"")));
    }
    Ok(ops)
}

/// Element-wise combination of all inputs, or a reduction of one input.
struct Fold {
    /// Per input: true for the inverse operation (`-` or `/`).
    inverse: Vec<bool>,
    op: FoldOp,
}
impl Block for Fold {
    fn outputs(&self, c: &mut Ctx) {
        if let [inverse] = self.inverse[..] {
            let mut acc = self.op.identity();
            for k in 0..c.in_width(0) {
                acc = self.op.apply(acc, c.u_at(0, k), inverse);
            }
            c.set(0, acc);
        } else if c.out_width(0) == 1 {
            let mut acc = self.op.identity();
            for (i, &inverse) in self.inverse.iter().enumerate() {
                acc = self.op.apply(acc, c.u(i), inverse);
            }
            c.set(0, acc);
        } else {
            for k in 0..c.out_width(0) {
                let mut acc = self.op.identity();
                for (i, &inverse) in self.inverse.iter().enumerate() {
                    acc = self.op.apply(acc, c.u_at(i, k), inverse);
                }
                c.set_at(0, k, acc);
            }
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Fold {
            op: self.op,
            inverse: &self.inverse,
        }
    }
}

fn fold(b: &mut Build, inverse: Vec<bool>, op: FoldOp) -> Result<Box<dyn Block>, BlockError> {
    b.inputs(inverse.len());
    let w = if inverse.len() == 1 {
        b.width(0)?;
        1
    } else {
        b.common_width()?
    };
    b.outputs(&[w]);
    Ok(Box::new(Fold { inverse, op }))
}

fn sum(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let signs = operators(b, "signs", "++", "+-")?;
    fold(b, signs.iter().map(|&s| s == '-').collect(), FoldOp::Sum)
}

fn product(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    multiply(b, "**")
}

fn divide(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    multiply(b, "*/")
}

/// A Product-like block whose `ops` default to `default`.
fn multiply(b: &mut Build, default: &'static str) -> Result<Box<dyn Block>, BlockError> {
    let ops = operators(b, "ops", default, "*/")?;
    fold(b, ops.iter().map(|&s| s == '/').collect(), FoldOp::Product)
}

/// An element-wise function of one input.
struct Map1(Unary);
impl Block for Map1 {
    fn outputs(&self, c: &mut Ctx) {
        let f = self.0;
        c.map(0, 0, |u| f.apply(u));
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Unary(self.0)
    }
}

/// Declares one input and one output of the same width.
pub(crate) fn same_width(b: &mut Build) -> Result<usize, BlockError> {
    b.inputs(1);
    let w = b.width(0)?;
    b.outputs(&[w]);
    Ok(w)
}

/// |u|, switching sign through a zero crossing of u per element.
struct Abs;
impl Block for Abs {
    fn outputs(&self, c: &mut Ctx) {
        for k in 0..c.out_width(0) {
            let u = c.u_at(0, k);
            let y = if c.side(k, u) { u } else { -u };
            c.set_at(0, k, y);
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Abs
    }
}

fn abs(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let w = same_width(b)?;
    b.zero_crossings(w);
    Ok(Box::new(Abs))
}

/// -1, 0 or 1; between major steps it holds ±1 by the latched side of u.
struct Sign;
impl Block for Sign {
    fn outputs(&self, c: &mut Ctx) {
        for k in 0..c.out_width(0) {
            let u = c.u_at(0, k);
            let positive = c.side(k, u);
            let y = match (c.is_major(), positive) {
                (true, _) if u == 0.0 => 0.0,
                (_, true) => 1.0,
                (_, false) => -1.0,
            };
            c.set_at(0, k, y);
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Sign
    }
}

fn sign(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let w = same_width(b)?;
    b.zero_crossings(w);
    Ok(Box::new(Sign))
}

/// Min or max of two inputs, element-wise, switching through a zero
/// crossing of u1 - u2 per element.
struct MinMax2 {
    max: bool,
}
impl Block for MinMax2 {
    fn outputs(&self, c: &mut Ctx) {
        for k in 0..c.out_width(0) {
            let (a, b) = (c.u_at(0, k), c.u_at(1, k));
            let first_larger = c.side(k, a - b);
            c.set_at(0, k, if first_larger == self.max { a } else { b });
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::MinMax { max: self.max }
    }
}

fn min_max(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let function = b.params.choice_or("function", &["min", "max"], "min")?;
    let n = b.params.count_or("inputs", 2, 1, MAX_PORTS)?;
    if n == 2 {
        b.inputs(2);
        let w = b.common_width()?;
        b.outputs(&[w]);
        b.zero_crossings(w);
        return Ok(Box::new(MinMax2 { max: function == "max" }));
    }
    let op = if function == "min" { FoldOp::Min } else { FoldOp::Max };
    fold(b, vec![false; n], op)
}

/// An element-wise function of two inputs.
struct Map2(Binary);
impl Block for Map2 {
    fn outputs(&self, c: &mut Ctx) {
        for k in 0..c.out_width(0) {
            let v = self.0.apply(c.u_at(0, k), c.u_at(1, k));
            c.set_at(0, k, v);
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Binary(self.0)
    }
}

fn math_function(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let name = b.params.string("function")?;
    if let Some(&(f, _)) = Unary::ALL.iter().find(|(_, n)| *n == name) {
        same_width(b)?;
        return Ok(Box::new(Map1(f)));
    }
    if let Some(&(f, _)) = Binary::ALL.iter().find(|(_, n)| *n == name) {
        b.inputs(2);
        let w = b.common_width()?;
        b.outputs(&[w]);
        return Ok(Box::new(Map2(f)));
    }
    let all: Vec<&str> = Unary::ALL
        .iter()
        .map(|p| p.1)
        .chain(Binary::ALL.iter().map(|p| p.1))
        .collect();
    Err(BlockError::new(format!("unknown function \"{name}\"")).help(format!("use one of: {}", all.join(", "))))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{build_error, eval, eval1};
    use serde_json::json;

    #[test]
    fn gain_sum_and_product_follow_their_operators() {
        assert_eq!(eval1(json!({"type": "Gain", "params": {"gain": -2.5}}), &[4.0]), -10.0);
        let g = eval(
            json!({"type": "Gain", "params": {"gain": [1, 2, 3]}}),
            &[&[2.0]],
            1,
            0.0,
        )
        .unwrap();
        assert_eq!(g, vec![vec![2.0, 4.0, 6.0]]);
        assert_eq!(
            eval1(json!({"type": "Sum", "params": {"signs": "+-+"}}), &[1.0, 2.0, 4.0]),
            3.0
        );
        assert_eq!(
            eval1(json!({"type": "Sum", "params": {"signs": "|+-"}}), &[1.0, 2.0]),
            -1.0
        );
        assert_eq!(
            eval1(json!({"type": "Product", "params": {"ops": "*/"}}), &[3.0, 4.0]),
            0.75
        );
        let reduce = eval(
            json!({"type": "Sum", "params": {"signs": "+"}}),
            &[&[1.0, 2.0, 3.0]],
            1,
            0.0,
        )
        .unwrap();
        assert_eq!(reduce, vec![vec![6.0]]);
        let broadcast = eval(json!({"type": "Sum"}), &[&[1.0, 2.0], &[10.0]], 1, 0.0).unwrap();
        assert_eq!(broadcast, vec![vec![11.0, 12.0]]);
    }

    #[test]
    fn gain_is_a_number_or_one_value_per_element() {
        let e = build_error(json!({"type": "Gain", "params": {"gain": []}}), 1);
        assert!(
            e.ends_with(
                "block \"b\": gain: an empty list; give a number or one value per element of the input (width 1)"
            ),
            "{e}"
        );
        let e = eval(
            json!({"type": "Gain", "params": {"gain": [1, 2]}}),
            &[&[1.0, 2.0, 3.0]],
            1,
            0.0,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.ends_with(
                "block \"b\": gain: a list of 2 values; give a number or one value per element of the input \
                 (width 3)"
            ),
            "{e}"
        );
        let y = eval(
            json!({"type": "Gain", "params": {"gain": [1, 2, 3]}}),
            &[&[1.0, 2.0, 3.0]],
            1,
            0.0,
        )
        .unwrap();
        assert_eq!(y, vec![vec![1.0, 4.0, 9.0]]);
    }

    #[test]
    fn divide_defaults_to_one_over_the_other() {
        assert_eq!(eval1(json!({"type": "Divide"}), &[3.0, 4.0]), 0.75);
        assert_eq!(
            eval1(json!({"type": "Divide", "params": {"ops": "//"}}), &[2.0, 4.0]),
            0.125
        );
    }

    #[test]
    fn element_functions() {
        assert_eq!(eval1(json!({"type": "Abs"}), &[-3.0]), 3.0);
        assert_eq!(eval1(json!({"type": "Sign"}), &[-3.0]), -1.0);
        assert_eq!(eval1(json!({"type": "Sign"}), &[0.0]), 0.0);
        assert_eq!(
            eval1(
                json!({"type": "MinMax", "params": {"function": "max", "inputs": 3}}),
                &[1.0, 5.0, 2.0]
            ),
            5.0
        );
        assert_eq!(eval1(json!({"type": "MinMax"}), &[1.0, -5.0]), -5.0);
        assert_eq!(
            eval1(json!({"type": "MathFunction", "params": {"function": "sqrt"}}), &[9.0]),
            3.0
        );
        assert_eq!(
            eval1(
                json!({"type": "MathFunction", "params": {"function": "pow"}}),
                &[2.0, 10.0]
            ),
            1024.0
        );
        assert_eq!(
            eval1(
                json!({"type": "MathFunction", "params": {"function": "hypot"}}),
                &[3.0, 4.0]
            ),
            5.0
        );
        let a = eval1(
            json!({"type": "MathFunction", "params": {"function": "atan2"}}),
            &[1.0, -1.0],
        );
        assert!((a - 3.0 * std::f64::consts::FRAC_PI_4).abs() < 1e-15);
    }

    #[test]
    fn bad_operators_and_functions_are_named() {
        assert!(build_error(json!({"type": "Sum", "params": {"signs": "+*"}}), 2).contains("\"signs\""));
        let e = build_error(json!({"type": "MathFunction", "params": {"function": "sqr"}}), 1);
        assert!(e.contains("unknown function \"sqr\"") && e.contains("sqrt"), "{e}");
        let e = build_error(json!({"type": "Gain", "params": {"gain": [1, 2]}}), 0);
        assert!(e.contains("not connected"), "{e}");
    }
}
