//! Signal routing and the model's boundary: Inport, Output, Identity,
//! Terminator, Mux, Demux, Merge, Switch.

use super::kernel::Criterion;
use super::params::{MAX_PORTS, MAX_WIDTH};
use super::{Block, BlockError, BlockType, Build, Ctx, Kernel, Rate};
use crate::error_kind::ErrorKind;
use crate::model::Variable;

/// The block types of this family.
pub(crate) const TYPES: &[BlockType] = &[
    BlockType {
        name: "Inport",
        summary: "A model input (at the top level) or a subsystem input port",
        build: inport,
    },
    BlockType {
        name: "Output",
        summary: "A model output: recorded, and exposed to I/O by its id",
        build: output,
    },
    BlockType {
        name: "Identity",
        summary: "Passes its input through",
        build: identity,
    },
    BlockType {
        name: "Terminator",
        summary: "Ends an unused signal",
        build: terminator,
    },
    BlockType {
        name: "Mux",
        summary: "Concatenates its inputs into one vector",
        build: mux,
    },
    BlockType {
        name: "Demux",
        summary: "Splits a vector into several outputs",
        build: demux,
    },
    BlockType {
        name: "Merge",
        summary: "Outputs the input whose (If action) source is active",
        build: merge,
    },
    BlockType {
        name: "Switch",
        summary: "Input 1 when the control (input 2) passes the criterion, else input 3",
        build: switch,
    },
];

/// A block whose work the program does (copying model inputs, reading
/// model outputs) or that has nothing to compute.
struct Nothing;
impl Block for Nothing {
    fn outputs(&self, _: &mut Ctx) {}

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Nothing
    }
}

fn inport(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let local = b.path.rsplit('/').next().unwrap_or_default().to_string();
    let name = b.params.string_opt("name")?.map_or(local, str::to_string);
    let default = b.params.number_or("default", 0.0)?;
    let unit = b.params.string_or("unit", "")?;
    let width = b.params.count_or("width", 1, 1, MAX_WIDTH)?;
    b.inputs(0);
    b.outputs(&[width]);
    b.rate(Rate::Continuous);
    b.external_input(Variable {
        name,
        unit: (!unit.is_empty()).then(|| unit.to_string()),
        default,
        range: None,
    });
    Ok(Box::new(Nothing))
}

fn output(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let unit = b.params.string_or("unit", "")?;
    let (min, max) = (b.params.number_opt("min")?, b.params.number_opt("max")?);
    let range = match (min, max) {
        (None, None) => None,
        (min, max) => {
            let (min, max) = (min.unwrap_or(f64::NEG_INFINITY), max.unwrap_or(f64::INFINITY));
            if min > max {
                return Err(BlockError::new(format!("\"min\" ({min}) is above \"max\" ({max})"))
                    .help("give the output's physical range with min <= max"));
            }
            Some((min, max))
        }
    };
    b.inputs(1);
    b.width(0)?;
    b.outputs(&[]);
    b.external_output(Variable {
        name: b.path.clone(),
        unit: (!unit.is_empty()).then(|| unit.to_string()),
        default: 0.0,
        range,
    });
    Ok(Box::new(Nothing))
}

struct Pass;
impl Block for Pass {
    fn outputs(&self, c: &mut Ctx) {
        c.pass(0, 0);
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Pass
    }
}

fn identity(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    b.inputs(1);
    let w = b.width(0)?;
    b.outputs(&[w]);
    Ok(Box::new(Pass))
}

fn terminator(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    b.inputs(1);
    b.width(0)?;
    b.outputs(&[]);
    Ok(Box::new(Nothing))
}

struct Mux;
impl Block for Mux {
    fn outputs(&self, c: &mut Ctx) {
        let mut k = 0;
        for i in 0..c.n_inputs() {
            for e in 0..c.in_width(i) {
                let v = c.u_at(i, e);
                c.set_at(0, k, v);
                k += 1;
            }
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Mux
    }
}

fn mux(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let n = b.params.count_or("inputs", 2, 1, MAX_PORTS)?;
    b.inputs(n);
    let mut total = 0;
    for i in 0..n {
        total += b.width(i)?;
    }
    b.outputs(&[total]);
    Ok(Box::new(Mux))
}

struct Demux;
impl Block for Demux {
    fn outputs(&self, c: &mut Ctx) {
        let mut k = 0;
        for j in 0..c.n_outputs() {
            for e in 0..c.out_width(j) {
                let v = c.u_at(0, k);
                c.set_at(j, e, v);
                k += 1;
            }
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Demux
    }
}

fn demux(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let widths = b.params.counts_or("widths", &[], 1, MAX_WIDTH)?;
    if widths.is_empty() && b.params.given("widths") {
        return Err(BlockError::of_param(
            ErrorKind::Parameter,
            "widths",
            "an empty list; give one width per output, summing to the input width (or leave \"widths\" out for \
             equal parts)",
        ));
    }
    let n = b.params.count_or(
        "outputs",
        if widths.is_empty() { 2 } else { widths.len() },
        1,
        MAX_PORTS,
    )?;
    b.inputs(1);
    let w = b.width(0)?;
    let widths: Vec<usize> = if widths.is_empty() {
        if w % n != 0 {
            return Err(BlockError::dimension(format!(
                "dimension mismatch: cannot split width {w} into {n} equal outputs"
            ))
            .help("give \"widths\": [..] summing to the input width"));
        }
        vec![w / n; n]
    } else {
        widths
    };
    if widths.len() != n || widths.iter().sum::<usize>() != w || widths.contains(&0) {
        return Err(BlockError::dimension(format!(
            "dimension mismatch: output widths {widths:?} do not split an input of width {w}"
        ))
        .help("make \"widths\" positive, one per output, summing to the input width"));
    }
    b.outputs(&widths);
    Ok(Box::new(Demux))
}

struct Merge {
    n: usize,
}
impl Block for Merge {
    fn outputs(&self, c: &mut Ctx) {
        if let Some(k) = (0..self.n).find(|&k| c.u(self.n + k) > 0.0) {
            c.pass(k, 0);
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Merge { n: self.n }
    }
}

fn merge(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let n = b.params.count_or("inputs", 2, 1, MAX_PORTS)?;
    let names: Vec<String> = (1..=n)
        .map(|i| i.to_string())
        .chain((1..=n).map(|i| format!("active{i}")))
        .collect();
    b.named_inputs(&names.iter().map(String::as_str).collect::<Vec<_>>());
    b.merge_guards();
    let mut w = 1;
    for i in 0..n {
        let wi = b.width(i)?;
        if i > 0 && wi != w {
            return Err(
                BlockError::dimension(format!("dimension mismatch: Merge inputs have widths {w} and {wi}"))
                    .help("merge signals of one width"),
            );
        }
        w = wi;
    }
    b.outputs(&[w]);
    Ok(Box::new(Merge { n }))
}

struct Switch {
    criterion: Criterion,
}
impl Block for Switch {
    fn outputs(&self, c: &mut Ctx) {
        let control = c.u(1);
        let pass = match self.criterion {
            Criterion::AtLeast(th) => c.side(0, control - th),
            Criterion::Above(th) => !c.side(0, th - control),
            Criterion::NonZero => control != 0.0,
        };
        c.pass(if pass { 0 } else { 2 }, 0);
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Switch(self.criterion)
    }
}

fn switch(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let criterion = b.params.choice_or(
        "criterion",
        &["u2 >= threshold", "u2 > threshold", "u2 != 0"],
        "u2 >= threshold",
    )?;
    let threshold = b.params.number_or("threshold", 0.0)?;
    b.named_inputs(&["1", "control", "3"]);
    let w1 = b.width(0)?;
    let w3 = b.width(2)?;
    b.scalar(1)?;
    if w1 != w3 && w1 != 1 && w3 != 1 {
        return Err(BlockError::dimension(format!(
            "dimension mismatch: inputs 1 and 3 have widths {w1} and {w3}"
        )));
    }
    b.outputs(&[w1.max(w3)]);
    let criterion = match criterion {
        "u2 >= threshold" => Criterion::AtLeast(threshold),
        "u2 > threshold" => Criterion::Above(threshold),
        _ => Criterion::NonZero,
    };
    b.zero_crossings(if matches!(criterion, Criterion::NonZero) { 0 } else { 1 });
    Ok(Box::new(Switch { criterion }))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{build_error, eval, eval1};
    use serde_json::json;

    #[test]
    fn mux_and_demux_concatenate_and_split() {
        let out = eval(
            json!({"type": "Mux", "params": {"inputs": 2}}),
            &[&[1.0, 2.0], &[3.0]],
            1,
            0.0,
        )
        .unwrap();
        assert_eq!(out, vec![vec![1.0, 2.0, 3.0]]);
        let out = eval(
            json!({"type": "Demux", "params": {"widths": [1, 2]}}),
            &[&[1.0, 2.0, 3.0]],
            2,
            0.0,
        )
        .unwrap();
        assert_eq!(out, vec![vec![1.0], vec![2.0, 3.0]]);
        assert!(build_error(json!({"type": "Demux", "params": {"outputs": 2}}), 1).contains("dimension mismatch"));
        let e = build_error(json!({"type": "Demux", "params": {"widths": []}}), 1);
        assert!(
            e.ends_with(
                "block \"b\": widths: an empty list; give one width per output, summing to the input width (or \
                 leave \"widths\" out for equal parts)"
            ),
            "{e}"
        );
        let whole = eval(
            json!({"type": "Demux", "params": {"widths": [2]}}),
            &[&[1.0, 2.0]],
            1,
            0.0,
        )
        .unwrap();
        assert_eq!(whole, vec![vec![1.0, 2.0]]);
    }

    #[test]
    fn switch_follows_its_criterion() {
        let sw = |c: &str, th: f64, u2: f64| {
            eval1(
                json!({"type": "Switch", "params": {"criterion": c, "threshold": th}}),
                &[1.0, u2, 3.0],
            )
        };
        assert_eq!(sw("u2 >= threshold", 0.5, 0.5), 1.0);
        assert_eq!(sw("u2 > threshold", 0.5, 0.5), 3.0);
        assert_eq!(sw("u2 != 0", 0.0, -2.0), 1.0);
        assert_eq!(sw("u2 != 0", 0.0, 0.0), 3.0);
    }

    #[test]
    fn identity_and_unconnected_merge_take_the_first_active_input() {
        assert_eq!(eval1(json!({"type": "Identity"}), &[4.5]), 4.5);
        // Unguarded sources are always active: the first input wins.
        assert_eq!(
            eval1(json!({"type": "Merge", "params": {"inputs": 2}}), &[7.0, 8.0]),
            7.0
        );
    }
}
