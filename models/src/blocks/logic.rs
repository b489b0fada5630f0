//! Logic and conditional execution: RelationalOperator, LogicalOperator,
//! CompareToConstant, If (driving If action subsystems and Merge).

use super::expression::{constants, Formula};
use super::kernel::{Logic, Relation};
use super::params::MAX_PORTS;
use super::{Block, BlockError, BlockType, Build, Ctx, Kernel, Rate};

/// The block types of this family.
pub(crate) const TYPES: &[BlockType] = &[
    BlockType {
        name: "RelationalOperator",
        summary: "1 when u1 `operator` u2 holds (<, <=, >, >=, ==, !=), else 0",
        build: relational,
    },
    BlockType {
        name: "LogicalOperator",
        summary: "`operator` (AND, OR, NAND, NOR, XOR, NOT) over the inputs (nonzero is true)",
        build: logical,
    },
    BlockType {
        name: "CompareToConstant",
        summary: "1 when u `operator` `constant` holds, else 0",
        build: compare_to_constant,
    },
    BlockType {
        name: "Edge",
        summary: "1 at the major step where its input changed in `direction` (rising, falling, either), else 0",
        build: edge,
    },
    BlockType {
        name: "HitCrossing",
        summary: "Locates the instant its input crosses `offset` in `direction`: 1 at that major step, else 0",
        build: hit_crossing,
    },
    BlockType {
        name: "If",
        summary: "Activates the output of the first true of `conditions` over u1..un, else the `else` output",
        build: if_block,
    },
];

const RELATIONS: &[&str] = &["<", "<=", ">", ">=", "==", "!="];

/// A comparison. The ordered ones switch through a zero crossing of
/// u1 - u2 (or u2 - u1), located in time; equality has none.
impl Relation {
    fn parse(op: &str) -> Relation {
        match op {
            "<" => Relation::Lt,
            "<=" => Relation::Le,
            ">" => Relation::Gt,
            ">=" => Relation::Ge,
            "==" => Relation::Eq,
            _ => Relation::Ne,
        }
    }

    fn is_ordered(self) -> bool {
        !matches!(self, Relation::Eq | Relation::Ne)
    }

    /// Whether `a` relation `b` holds; ordered relations go through
    /// zero-crossing function `k` of the block.
    fn holds(self, c: &mut Ctx, k: usize, a: f64, b: f64) -> bool {
        match self {
            Relation::Ge => c.side(k, a - b),
            Relation::Lt => !c.side(k, a - b),
            Relation::Le => c.side(k, b - a),
            Relation::Gt => !c.side(k, b - a),
            Relation::Eq => a == b,
            Relation::Ne => a != b,
        }
    }
}

fn truth(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// u1 (or u) compared with u2 (or a constant), element-wise.
struct Compare {
    relation: Relation,
    constant: Option<f64>,
}
impl Block for Compare {
    fn outputs(&self, c: &mut Ctx) {
        for k in 0..c.out_width(0) {
            let rhs = self.constant.unwrap_or_else(|| c.u_at(1, k));
            let v = truth(self.relation.holds(c, k, c.u_at(0, k), rhs));
            c.set_at(0, k, v);
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Compare {
            relation: self.relation,
            constant: self.constant,
        }
    }
}

/// Declares the output and zero crossings of a comparison of width `w`.
fn compare(b: &mut Build, op: &str, w: usize, constant: Option<f64>) -> Result<Box<dyn Block>, BlockError> {
    let relation = Relation::parse(op);
    b.outputs(&[w]);
    b.zero_crossings(if relation.is_ordered() { w } else { 0 });
    Ok(Box::new(Compare { relation, constant }))
}

fn relational(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let op = b.params.choice_or("operator", RELATIONS, "<=")?;
    b.inputs(2);
    let w = b.common_width()?;
    compare(b, op, w, None)
}

fn compare_to_constant(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let op = b.params.choice_or("operator", RELATIONS, "<=")?;
    let constant = b.params.number("constant")?;
    b.inputs(1);
    let w = b.width(0)?;
    compare(b, op, w, Some(constant))
}

/// Which changes of a signal count.
#[derive(Clone, Copy)]
enum Direction {
    Rising,
    Falling,
    Either,
}

impl Direction {
    fn read(b: &mut Build) -> Result<Direction, BlockError> {
        Ok(
            match b
                .params
                .choice_or("direction", &["rising", "falling", "either"], "rising")?
            {
                "rising" => Direction::Rising,
                "falling" => Direction::Falling,
                _ => Direction::Either,
            },
        )
    }

    fn matches(self, before: f64, now: f64) -> bool {
        match self {
            Direction::Rising => now > before,
            Direction::Falling => now < before,
            Direction::Either => now != before,
        }
    }
}

/// 1 for the major step at which its input changed in `direction` (its
/// own event instant included), 0 otherwise. `xd` = [input at the last
/// major step, output].
struct Edge {
    direction: Direction,
}
impl Block for Edge {
    fn outputs(&self, c: &mut Ctx) {
        if c.is_major() {
            let u = c.u(0);
            c.xd[1] = truth(self.direction.matches(c.xd[0], u));
            c.xd[0] = u;
        }
        let v = c.xd[1];
        c.set(0, v);
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Edge
    }
}

fn edge(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let direction = Direction::read(b)?;
    b.inputs(1);
    b.scalar(0)?;
    b.outputs(&[1]);
    b.discrete_states(vec![0.0, 0.0]);
    b.rate(Rate::Continuous);
    Ok(Box::new(Edge { direction }))
}

/// Makes the solver hit the instant its input crosses `offset`: 1 for the
/// major step of the crossing, 0 otherwise. `xd` = [side at the last major
/// step (1 above), output].
struct HitCrossing {
    offset: f64,
    direction: Direction,
}
impl Block for HitCrossing {
    fn outputs(&self, c: &mut Ctx) {
        let above = truth(c.side(0, c.u(0) - self.offset));
        if c.is_major() {
            c.xd[1] = truth(self.direction.matches(c.xd[0], above));
            c.xd[0] = above;
        }
        let v = c.xd[1];
        c.set(0, v);
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::HitCrossing { offset: self.offset }
    }
}

fn hit_crossing(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let offset = b.params.number_or("offset", 0.0)?;
    let direction = Direction::read(b)?;
    b.inputs(1);
    b.scalar(0)?;
    b.outputs(&[1]);
    b.zero_crossings(1);
    // Starts "above": a signal starting below its offset is no crossing.
    b.discrete_states(vec![f64::NAN, 0.0]);
    b.rate(Rate::Continuous);
    Ok(Box::new(HitCrossing { offset, direction }))
}

struct Logical(Logic);
impl Block for Logical {
    fn outputs(&self, c: &mut Ctx) {
        for k in 0..c.out_width(0) {
            let trues = (0..c.n_inputs()).filter(|&i| c.u_at(i, k) != 0.0).count();
            let n = c.n_inputs();
            let v = match self.0 {
                Logic::And => trues == n,
                Logic::Or => trues > 0,
                Logic::Nand => trues < n,
                Logic::Nor => trues == 0,
                Logic::Xor => trues % 2 == 1,
                Logic::Not => trues == 0,
            };
            c.set_at(0, k, truth(v));
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Logical(self.0)
    }
}

fn logical(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let op = b
        .params
        .choice_or("operator", &["AND", "OR", "NAND", "NOR", "XOR", "NOT"], "AND")?;
    let logic = match op {
        "AND" => Logic::And,
        "OR" => Logic::Or,
        "NAND" => Logic::Nand,
        "NOR" => Logic::Nor,
        "XOR" => Logic::Xor,
        _ => Logic::Not,
    };
    let n = b
        .params
        .count_or("inputs", if op == "NOT" { 1 } else { 2 }, 1, MAX_PORTS)?;
    if op == "NOT" && n != 1 {
        return Err(BlockError::new("NOT takes exactly one input").help("remove \"inputs\" or set it to 1"));
    }
    b.inputs(n);
    let w = b.common_width()?;
    b.outputs(&[w]);
    Ok(Box::new(Logical(logic)))
}

/// Outputs 1 on the port of the first true condition (or the else port)
/// and 0 on the others.
struct If {
    conditions: Vec<Formula>,
}
impl Block for If {
    fn outputs(&self, c: &mut Ctx) {
        let active = self
            .conditions
            .iter()
            .position(|f| f.eval(|i| c.u(i)) != 0.0)
            .unwrap_or(self.conditions.len());
        for j in 0..c.n_outputs() {
            c.set(j, truth(j == active));
        }
    }
}

fn if_block(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let n = b.params.count_or("inputs", 1, 1, MAX_PORTS)?;
    let texts = b.params.strings_or("conditions", &[])?;
    let with_else = b.params.flag_or("else", true)?;
    let constants = constants(b)?;
    if texts.is_empty() {
        return Err(BlockError::missing(
            "conditions",
            "a list of conditions such as \"u1 <= 0.2\"",
        ));
    }
    if texts.len() >= MAX_PORTS {
        return Err(BlockError::new(format!(
            "parameter \"conditions\" has {} conditions, one output each: at most {} (with the else output, \
             the bound of {MAX_PORTS} outputs)",
            texts.len(),
            MAX_PORTS - 1
        ))
        .help("split the decision over several If blocks"));
    }
    let conditions = texts
        .iter()
        .map(|t| Formula::parse(t, n, &constants))
        .collect::<Result<Vec<_>, _>>()?;
    b.inputs(n);
    for i in 0..n {
        b.scalar(i)?;
    }
    let mut names: Vec<String> = vec!["if".into()];
    names.extend((1..texts.len()).map(|k| format!("elseif{k}")));
    if with_else {
        names.push("else".into());
    }
    let ports: Vec<(&str, usize)> = names.iter().map(|s| (s.as_str(), 1)).collect();
    b.named_outputs(&ports);
    Ok(Box::new(If { conditions }))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{build_error, eval, eval1};
    use serde_json::json;

    #[test]
    fn relations_and_logic() {
        let rel = |op: &str, a: f64, b: f64| {
            eval1(
                json!({"type": "RelationalOperator", "params": {"operator": op}}),
                &[a, b],
            )
        };
        assert_eq!(
            [
                rel("<", 1.0, 2.0),
                rel(">=", 1.0, 2.0),
                rel("==", 2.0, 2.0),
                rel("!=", 2.0, 2.0)
            ],
            [1.0, 0.0, 1.0, 0.0]
        );
        assert_eq!(
            eval1(
                json!({"type": "CompareToConstant", "params": {"operator": ">", "constant": 3}}),
                &[4.0]
            ),
            1.0
        );
        let logic = |op: &str, ins: &[f64]| {
            eval1(
                json!({"type": "LogicalOperator", "params": {"operator": op, "inputs": ins.len()}}),
                ins,
            )
        };
        assert_eq!(logic("AND", &[1.0, 0.0]), 0.0);
        assert_eq!(logic("OR", &[1.0, 0.0]), 1.0);
        assert_eq!(logic("XOR", &[1.0, 1.0, 1.0]), 1.0);
        assert_eq!(logic("NOT", &[0.0]), 1.0);
        assert!(
            build_error(json!({"type": "RelationalOperator", "params": {"operator": "=<"}}), 2)
                .contains("use one of: <, <=")
        );
    }

    #[test]
    fn if_activates_the_first_true_branch() {
        let b = json!({"type": "If", "params": {"inputs": 1, "conditions": ["u1 <= 0.2", "u1 <= 0.5"]}});
        assert_eq!(
            eval(b.clone(), &[&[0.1]], 3, 0.0).unwrap(),
            vec![vec![1.0], vec![0.0], vec![0.0]]
        );
        assert_eq!(
            eval(b.clone(), &[&[0.3]], 3, 0.0).unwrap(),
            vec![vec![0.0], vec![1.0], vec![0.0]]
        );
        assert_eq!(
            eval(b, &[&[0.9]], 3, 0.0).unwrap(),
            vec![vec![0.0], vec![0.0], vec![1.0]]
        );
    }
}
