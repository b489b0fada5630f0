//! The programmable block: Expression, a formula over its inputs and
//! parameters, parsed once (with exmex) and evaluated without allocation.
//! [`Formula`] also serves the conditions of the `If` block.

use exmex::prelude::*;
use exmex::{BinOp, FloatOpsFactory, MakeOperators, Operator};

use super::params::MAX_PORTS;
use super::{Block, BlockError, BlockType, Build, Ctx};

/// The block types of this family.
pub(crate) const TYPES: &[BlockType] = &[BlockType {
    name: "Expression",
    summary: "y = `expression` of inputs u1..un (u for one input) and named `constants`",
    build: expression,
}];

/// exmex's float operators plus comparisons (`<`, `<=`, `>`, `>=`, `==`,
/// `!=`) and logic (`&&`, `||`), which give 1 for true and 0 for false.
#[derive(Clone, Debug)]
pub(crate) struct TandemOps;

fn truth(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

impl MakeOperators<f64> for TandemOps {
    fn make<'a>() -> Vec<Operator<'a, f64>> {
        let bin = |repr: &'a str, apply: fn(f64, f64) -> f64, prio: i64| {
            Operator::make_bin(
                repr,
                BinOp {
                    apply,
                    prio,
                    is_commutative: false,
                },
            )
        };
        let mut ops = FloatOpsFactory::<f64>::make();
        ops.extend([
            bin("<", |a, b| truth(a < b), -1),
            bin("<=", |a, b| truth(a <= b), -1),
            bin(">", |a, b| truth(a > b), -1),
            bin(">=", |a, b| truth(a >= b), -1),
            bin("==", |a, b| truth(a == b), -1),
            bin("!=", |a, b| truth(a != b), -1),
            bin("&&", |a, b| truth(a != 0.0 && b != 0.0), -2),
            bin("||", |a, b| truth(a != 0.0 || b != 0.0), -3),
        ]);
        ops
    }
}

/// The longest expression text (bytes); parsing time grows with its
/// nesting, so it is bounded before parsing.
const MAX_TEXT: usize = 1024;

/// Largest number of operands (numbers and variables) evaluated on the
/// stack by exmex; longer formulas would allocate.
const MAX_OPERANDS: usize = 32;
/// Largest number of distinct variables.
const MAX_VARIABLES: usize = 16;

/// Where a variable of a formula takes its value.
#[derive(Clone, Copy, Debug)]
enum Variable {
    Input(usize),
    Constant(f64),
}

/// A parsed formula over inputs `u1`..`un` (and `u` when n = 1) and named
/// constants.
pub(crate) struct Formula {
    expr: FlatEx<f64, TandemOps>,
    variables: Vec<Variable>,
}

impl Formula {
    /// Parses `text`; `constants` are names bound to fixed values.
    pub(crate) fn parse(text: &str, n_inputs: usize, constants: &[(String, f64)]) -> Result<Self, BlockError> {
        if text.len() > MAX_TEXT {
            return Err(BlockError::new(format!(
                "an expression is {} bytes long, more than the bound of {MAX_TEXT}",
                text.len()
            ))
            .help("split it over several Expression blocks"));
        }
        let operands = count_operands(text);
        if operands > MAX_OPERANDS {
            return Err(BlockError::new(format!(
                "expression \"{text}\" has {operands} operands; at most {MAX_OPERANDS} evaluate without allocation"
            ))
            .help("split it over several Expression blocks"));
        }
        let expr = FlatEx::<f64, TandemOps>::parse(text).map_err(|e| {
            BlockError::new(format!("cannot parse expression \"{text}\": {e}"))
                .help("use numbers, u1..un, constants, + - * / ^, comparisons, && ||, and functions like sin, exp, sqrt, abs, ln")
        })?;
        if expr.var_names().len() > MAX_VARIABLES {
            return Err(BlockError::new(format!(
                "expression \"{text}\" uses more than {MAX_VARIABLES} variables"
            ))
            .help("split it over several Expression blocks"));
        }
        let variables = expr
            .var_names()
            .iter()
            .map(|name| {
                if let Some((_, v)) = constants.iter().find(|(c, _)| c == name) {
                    return Ok(Variable::Constant(*v));
                }
                let index = match name.as_str() {
                    "u" if n_inputs == 1 => Some(0),
                    other => other
                        .strip_prefix('u')
                        .and_then(|i| i.parse::<usize>().ok())
                        .filter(|&i| i >= 1 && i <= n_inputs)
                        .map(|i| i - 1),
                };
                index.map(Variable::Input).ok_or_else(|| {
                    let mut known: Vec<String> = (1..=n_inputs).map(|i| format!("u{i}")).collect();
                    known.extend(constants.iter().map(|(c, _)| c.clone()));
                    BlockError::new(format!(
                        "expression \"{text}\" uses \"{name}\", which is neither an input nor a constant"
                    ))
                    .help(format!(
                        "the names available are: {} (add constants under \"constants\", or raise \"inputs\")",
                        known.join(", ")
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Formula { expr, variables })
    }

    /// The value for the inputs given by `input(i)`; NaN where exmex fails.
    #[inline]
    pub(crate) fn eval(&self, input: impl Fn(usize) -> f64) -> f64 {
        let mut values = [0.0; MAX_VARIABLES];
        for (v, var) in values.iter_mut().zip(&self.variables) {
            *v = match *var {
                Variable::Input(i) => input(i),
                Variable::Constant(c) => c,
            };
        }
        self.expr.eval(&values[..self.variables.len()]).unwrap_or(f64::NAN)
    }
}

/// Numbers and variables in `text` (identifiers not followed by `(`).
fn count_operands(text: &str) -> usize {
    let chars: Vec<char> = text.chars().collect();
    let mut count = 0;
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.') {
                i += 1;
            }
            let next = chars[i..].iter().find(|c| !c.is_whitespace());
            if next != Some(&'(') || chars[start].is_ascii_digit() {
                count += 1;
            }
        } else {
            i += 1;
        }
    }
    count
}

/// Reads the `constants` object of a block: names bound to numbers.
pub(crate) fn constants(b: &mut Build) -> Result<Vec<(String, f64)>, BlockError> {
    b.params.object_numbers("constants")
}

struct Expression {
    formula: Formula,
}
impl Block for Expression {
    fn outputs(&self, c: &mut Ctx) {
        for k in 0..c.out_width(0) {
            let v = self.formula.eval(|i| c.u_at(i, k));
            c.set_at(0, k, v);
        }
    }
}

fn expression(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let text = b.params.string("expression")?;
    let n = b.params.count_or("inputs", 1, 0, MAX_PORTS)?;
    let constants = constants(b)?;
    let formula = Formula::parse(text, n, &constants)?;
    b.inputs(n);
    let w = b.common_width()?;
    b.outputs(&[w]);
    Ok(Box::new(Expression { formula }))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{build_error, eval, eval1};
    use super::*;
    use serde_json::json;

    #[test]
    fn formulas_evaluate_inputs_constants_comparisons_and_functions() {
        let e = |expr: &str, ins: &[f64]| {
            eval1(
                json!({"type": "Expression", "params": {"expression": expr, "inputs": ins.len(), "constants": {"k": 2.0}}}),
                ins,
            )
        };
        assert_eq!(e("k * u1 + u2^2", &[3.0, 4.0]), 22.0);
        assert_eq!(e("u * 10", &[0.5]), 5.0);
        assert_eq!(e("(u1 <= 0.2) * 3 + (u1 > 0.2) * 7", &[0.2]), 3.0);
        assert_eq!(e("u1 >= 1 && u2 < 0", &[1.0, -1.0]), 1.0);
        assert_eq!(e("u1 == 1 || u2 != 0", &[0.0, 0.0]), 0.0);
        assert!((e("sqrt(u1) + sin(0) + exp(0) + abs(-1)", &[4.0]) - 4.0).abs() < 1e-15);
    }

    #[test]
    fn vector_inputs_are_evaluated_element_wise() {
        let y = eval(
            json!({"type": "Expression", "params": {"expression": "u1 + u2", "inputs": 2}}),
            &[&[1.0, 2.0], &[10.0]],
            1,
            0.0,
        )
        .unwrap();
        assert_eq!(y, vec![vec![11.0, 12.0]]);
    }

    #[test]
    fn bad_formulas_name_the_problem() {
        let e = build_error(
            json!({"type": "Expression", "params": {"expression": "u1 + x", "inputs": 1}}),
            1,
        );
        assert!(e.contains("\"x\"") && e.contains("u1"), "{e}");
        let e = build_error(
            json!({"type": "Expression", "params": {"expression": "u1 +* (", "inputs": 1}}),
            1,
        );
        assert!(e.contains("cannot parse"), "{e}");
        let long = vec!["u1"; 40].join(" + ");
        let e = build_error(
            json!({"type": "Expression", "params": {"expression": long, "inputs": 1}}),
            1,
        );
        assert!(e.contains("40 operands"), "{e}");
    }

    #[test]
    fn operand_count_skips_function_names() {
        assert_eq!(count_operands("sin(u1) + 2.5 * cos (u2)"), 3);
    }
}
