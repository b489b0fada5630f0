//! The FMU's variables as Tandem's signals: which variables a run reads
//! out (its outputs by default, or any chosen by name and pattern) and
//! which it drives (its inputs), each value an `f64` whatever the FMI type
//! (Booleans 0 and 1, enumerations and integers their numbers), an FMI 3
//! array one signal per element (`y[1]`, `A[2,1]`).
//!
//! Reading and writing them goes by groups of one numeric type, one FMI
//! call per group, through a buffer allocated when the signals are made.

use std::collections::HashMap;

use tandem_models::Variable;

use crate::description::{Causality, FmiVersion, ModelDescription, Numeric, ScalarVariable, Variability, VariableType};
use crate::error::FmuError;
use crate::instance::Instance;

/// A position in [`Group::at`] of an array element read but not kept.
const LEFT_OUT: usize = usize::MAX;

/// A variable chosen: whole, or some of its elements (their indices in
/// row-major order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Pick {
    /// Its index in the description.
    pub(crate) variable: usize,
    /// The elements kept; `None`: all.
    pub(crate) elements: Option<Vec<usize>>,
}

/// The variables of one numeric type, read or written in one call.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    ty: Numeric,
    vrs: Vec<u32>,
    /// The signal each value of the call goes to (or comes from), in
    /// order, [`LEFT_OUT`] for an element read and not kept (never in
    /// the signals a run writes: inputs are whole); consecutive ones when
    /// `contiguous` is set.
    at: Vec<usize>,
    /// The first signal, when the values are signals `first..first + n`.
    contiguous: Option<usize>,
}

/// Signals and how to read or write them.
#[derive(Clone, Debug, Default)]
pub(crate) struct Signals {
    /// One per value, in order.
    pub variables: Vec<Variable>,
    /// The variable (index in the description) of each signal.
    pub sources: Vec<usize>,
    groups: Vec<Group>,
    /// The largest group's values, for the scratch buffer.
    widest: usize,
}

impl Signals {
    /// The signals of `chosen` (indices of numeric variables whose size is
    /// known), whole, in that order.
    pub(crate) fn of(description: &ModelDescription, chosen: &[usize]) -> Result<Signals, FmuError> {
        let picks: Vec<Pick> = chosen
            .iter()
            .map(|&variable| Pick {
                variable,
                elements: None,
            })
            .collect();
        Signals::picked(description, &picks)
    }

    /// The signals of `picks` (numeric variables whose size is known,
    /// whole or some of their elements), in that order. A variable is read
    /// whole; the elements not picked are read and left out.
    pub(crate) fn picked(description: &ModelDescription, picks: &[Pick]) -> Result<Signals, FmuError> {
        let mut signals = Signals::default();
        let mut groups: Vec<Group> = Vec::new();
        for pick in picks {
            let i = pick.variable;
            let v = &description.variables[i];
            let ty = numeric_type(description, v).ok_or_else(|| FmuError::NotRecordable {
                fmu: description.model_name.clone(),
                name: v.name.clone(),
                kind: v.kind.to_string(),
                line: v.line,
            })?;
            let names = description
                .element_names(i)
                .ok_or_else(|| unknown_size(description, v))?;
            let range = (v.min.is_some() || v.max.is_some())
                .then(|| (v.min.unwrap_or(f64::NEG_INFINITY), v.max.unwrap_or(f64::INFINITY)));
            let starts = start_values(v, names.len());
            let first = signals.variables.len();
            let mut positions = Vec::with_capacity(names.len());
            for (k, (name, start)) in names.into_iter().zip(starts).enumerate() {
                if pick.elements.as_ref().is_some_and(|kept| !kept.contains(&k)) {
                    positions.push(LEFT_OUT);
                    continue;
                }
                positions.push(signals.variables.len());
                signals.variables.push(Variable {
                    name,
                    unit: v.unit.clone(),
                    default: if v.causality == Causality::Input { start } else { 0.0 },
                    range: if v.causality == Causality::Output { range } else { None },
                });
                signals.sources.push(i);
            }
            let group = match groups.iter_mut().find(|g| g.ty == ty) {
                Some(group) => group,
                None => {
                    groups.push(Group {
                        ty,
                        vrs: Vec::new(),
                        at: Vec::new(),
                        contiguous: Some(first),
                    });
                    groups.last_mut().expect("just pushed")
                }
            };
            let whole = !positions.contains(&LEFT_OUT);
            if !whole || group.contiguous.is_some_and(|start| start + group.at.len() != first) {
                group.contiguous = None;
            }
            group.vrs.push(v.value_reference);
            group.at.extend(positions);
        }
        signals.widest = groups.iter().map(|g| g.at.len()).max().unwrap_or(0);
        signals.groups = groups;
        Ok(signals)
    }

    /// How many signals.
    pub fn len(&self) -> usize {
        self.variables.len()
    }

    /// The length of the scratch buffer [`Signals::read`] and
    /// [`Signals::write`] need, made once per instance.
    pub fn widest(&self) -> usize {
        self.widest
    }

    /// Reads every signal into `y` (one per signal). Allocates nothing.
    pub fn read(&self, instance: &mut dyn Instance, y: &mut [f64], scratch: &mut [f64]) -> Result<(), FmuError> {
        for group in &self.groups {
            let n = group.at.len();
            match group.contiguous {
                Some(first) if group.ty == Numeric::Float64 && n == group.vrs.len() => {
                    instance.get_real(&group.vrs, &mut y[first..first + n])?
                }
                Some(first) => instance.get_numbers(group.ty, &group.vrs, &mut y[first..first + n])?,
                None => {
                    instance.get_numbers(group.ty, &group.vrs, &mut scratch[..n])?;
                    for (&at, &v) in group.at.iter().zip(scratch.iter()) {
                        if at != LEFT_OUT {
                            y[at] = v;
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// Writes every signal from `u` (one per signal). Allocates nothing.
    pub fn write(&self, instance: &mut dyn Instance, u: &[f64], scratch: &mut [f64]) -> Result<(), FmuError> {
        for group in &self.groups {
            let n = group.at.len();
            match group.contiguous {
                Some(first) if group.ty == Numeric::Float64 && n == group.vrs.len() => {
                    instance.set_real(&group.vrs, &u[first..first + n])?
                }
                Some(first) => instance.set_numbers(group.ty, &group.vrs, &u[first..first + n])?,
                None => {
                    for (slot, &at) in scratch.iter_mut().zip(&group.at) {
                        *slot = u[at];
                    }
                    instance.set_numbers(group.ty, &group.vrs, &scratch[..n])?;
                }
            }
        }
        Ok(())
    }
}

/// The start values of a variable's `n` elements as numbers (0 where it
/// has none).
fn start_values(v: &ScalarVariable, n: usize) -> Vec<f64> {
    let mut values: Vec<f64> = match &v.start_text {
        Some(text) => text
            .split_whitespace()
            .map(|t| match t {
                "true" => 1.0,
                "false" => 0.0,
                t => t.parse().unwrap_or(0.0),
            })
            .collect(),
        None => Vec::new(),
    };
    values.resize(n, 0.0);
    values
}

/// Which inputs, by variability.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Inputs {
    /// Continuous ones (Model Exchange sets them at any time).
    Continuous,
    /// Discrete ones (Model Exchange sets them in event mode).
    Discrete,
    /// Any (Co-Simulation sets them between steps).
    All,
}

/// The indices of the numeric inputs `which` names: FMI 2 Real, Integer,
/// Boolean and Enumeration, every FMI 3 numeric type.
pub(crate) fn input_indices(description: &ModelDescription, which: Inputs) -> Vec<usize> {
    (0..description.variables.len())
        .filter(|&i| {
            let v = &description.variables[i];
            let continuous = v.variability == Variability::Continuous;
            v.causality == Causality::Input
                && numeric_type(description, v).is_some()
                && match which {
                    Inputs::Continuous => continuous,
                    Inputs::Discrete => !continuous,
                    Inputs::All => true,
                }
        })
        .collect()
}

/// The numeric inputs `which` names (default: the start value), arrays by
/// element.
pub(crate) fn inputs(description: &ModelDescription, which: Inputs) -> Result<Signals, FmuError> {
    Signals::of(description, &input_indices(description, which))
}

/// The signals a run reads out: those `recorded` chooses, by default the
/// numeric outputs.
pub(crate) fn outputs(description: &ModelDescription, recorded: &Recorded) -> Result<Signals, FmuError> {
    let chosen = recorded.choose(description)?;
    Signals::picked(description, &chosen)
}

/// Which variables a run reads out as its outputs (and so records): by
/// default the FMU's outputs; else every variable whose name (or FMI 3
/// alias) one of the patterns matches, in declaration order. A pattern is
/// a name, or a glob where `*` stands for any text and `?` for one
/// character (`der(*)`, `*.phi`, `*`), an FMI 3 array's element or
/// elements (`y[2]`, `A[2,*]`), or one of the words `outputs`,
/// `states`, `derivatives`, `inputs`, `parameters`, `locals`. Only
/// variables of a numeric type (numbers, Booleans, enumerations) can be
/// recorded: a String, Binary or Clock named exactly is refused; one a
/// glob matches is left out (`tandem check` lists them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Recorded {
    patterns: Vec<String>,
}

impl Recorded {
    /// The FMU's outputs.
    pub fn outputs() -> Recorded {
        Recorded::default()
    }

    /// The variables `patterns` choose (none given: the outputs).
    pub fn patterns<S: Into<String>>(patterns: impl IntoIterator<Item = S>) -> Recorded {
        Recorded {
            patterns: patterns.into_iter().map(Into::into).collect(),
        }
    }

    /// The FMU's outputs and the variables `patterns` choose.
    pub fn outputs_and<S: Into<String>>(patterns: impl IntoIterator<Item = S>) -> Recorded {
        let mut patterns: Vec<String> = patterns.into_iter().map(Into::into).collect();
        if !patterns.is_empty() {
            patterns.insert(0, "outputs".into());
        }
        Recorded { patterns }
    }

    /// The patterns given (empty: the outputs).
    pub fn given(&self) -> &[String] {
        &self.patterns
    }

    /// The variables chosen, whole or by element, in declaration order.
    pub(crate) fn choose(&self, description: &ModelDescription) -> Result<Vec<Pick>, FmuError> {
        let variables = &description.variables;
        let recordable = |i: usize| numeric_type(description, &variables[i]).is_some();
        let whole = |variable: usize| Pick {
            variable,
            elements: None,
        };
        if self.patterns.is_empty() {
            return Ok((0..variables.len())
                .filter(|&i| variables[i].causality == Causality::Output && recordable(i))
                .map(whole)
                .collect());
        }
        let states = description.states();
        let derivatives: Vec<usize> = description.structure.derivatives.iter().map(|d| d.variable).collect();
        let mut chosen = vec![false; variables.len()];
        // Elements of arrays not chosen whole, by index.
        let mut elements: Vec<Vec<usize>> = vec![Vec::new(); variables.len()];
        for pattern in &self.patterns {
            let word: Option<Box<dyn Fn(usize) -> bool>> = match pattern.as_str() {
                "outputs" => Some(Box::new(|i| variables[i].causality == Causality::Output)),
                "inputs" => Some(Box::new(|i| variables[i].causality == Causality::Input)),
                "parameters" => Some(Box::new(|i| {
                    matches!(
                        variables[i].causality,
                        Causality::Parameter | Causality::CalculatedParameter | Causality::StructuralParameter
                    )
                })),
                "locals" => Some(Box::new(|i| variables[i].causality == Causality::Local)),
                "states" => Some(Box::new(|i| states.contains(&i))),
                "derivatives" => Some(Box::new(|i| derivatives.contains(&i))),
                _ => None,
            };
            let exact = description.index_of(pattern);
            let mut any = false;
            match (word, exact) {
                (Some(word), _) => {
                    for i in (0..variables.len()).filter(|&i| word(i) && recordable(i)) {
                        chosen[i] = true;
                        any = true;
                    }
                }
                (None, Some(i)) => {
                    numeric_type(description, &variables[i]).ok_or_else(|| FmuError::NotRecordable {
                        fmu: description.model_name.clone(),
                        name: pattern.clone(),
                        kind: variables[i].kind.to_string(),
                        line: variables[i].line,
                    })?;
                    chosen[i] = true;
                    any = true;
                }
                (None, None) => {
                    for i in (0..variables.len()).filter(|&i| recordable(i)) {
                        let v = &variables[i];
                        if glob(pattern, &v.name) || v.aliases.iter().any(|a| glob(pattern, &a.name)) {
                            chosen[i] = true;
                            any = true;
                        } else if v.array && pattern.contains('[') {
                            let names = description.element_names(i).unwrap_or_default();
                            for k in (0..names.len()).filter(|&k| glob(pattern, &names[k])) {
                                elements[i].push(k);
                                any = true;
                            }
                        }
                    }
                }
            }
            if !any {
                return Err(FmuError::NoSuchSignals {
                    fmu: description.model_name.clone(),
                    pattern: pattern.clone(),
                    near: crate::parameters::near_names(description, pattern),
                });
            }
        }
        Ok((0..variables.len())
            .filter_map(|i| match (chosen[i], &mut elements[i]) {
                (true, _) => Some(whole(i)),
                (false, kept) if !kept.is_empty() => {
                    kept.sort_unstable();
                    kept.dedup();
                    Some(Pick {
                        variable: i,
                        elements: Some(std::mem::take(kept)),
                    })
                }
                (false, _) => None,
            })
            .collect())
    }
}

/// Whether `text` matches the glob `pattern` (`*` any text, `?` one
/// character).
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    // The classic two-pointer match with one backtrack point.
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// The numeric type of `v`, if it has one a run can read.
pub(crate) fn numeric_type(description: &ModelDescription, v: &ScalarVariable) -> Option<Numeric> {
    v.kind.numeric(description.version)
}

/// What `tandem check` says a run does not take of `description`: one line
/// per variable, naming it, its element and why.
pub fn not_taken(description: &ModelDescription) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, v) in description.variables.iter().enumerate() {
        let element = match description.version {
            FmiVersion::V2 => format!("<ScalarVariable> with <{}>", v.kind.element(description.version)),
            FmiVersion::V3 => format!("<{}>", v.kind.element(description.version)),
        };
        let place = format!("\"{}\" ({element}, line {})", v.name, v.line);
        match &v.kind {
            VariableType::String | VariableType::Binary => lines.push(format!(
                "{place}: a {} is not recorded or connected (runs carry numbers); it can be set before the run \
                 (--set)",
                v.kind
            )),
            VariableType::Clock => lines.push(format!(
                "{place}: a Clock is not recorded, connected or ticked from outside (Tandem runs no Scheduled \
                 Execution and activates no input clocks)"
            )),
            VariableType::Other(name) => lines.push(format!("{place}: the type <{name}> is not one of FMI's")),
            _ if description.elements(i).is_none() => lines.push(format!(
                "{place}: its size is not known (a dimension's structural parameter has no whole start value, \
                 or it has more than {} elements)",
                crate::description::MAX_ELEMENTS
            )),
            _ => {}
        }
    }
    lines
}

/// The most (output, input) pairs a feedthrough table holds.
pub const MAX_FEEDTHROUGH: usize = 10_000_000;

/// For each signal of `outputs`, the positions in `inputs` of the inputs it
/// depends on directly, from the model structure's output dependencies (all
/// inputs when an output's are not stated, or it is not a listed output).
pub(crate) fn feedthrough(
    description: &ModelDescription,
    inputs: &Signals,
    outputs: &Signals,
) -> Result<Vec<Vec<usize>>, FmuError> {
    let (n_in, n_out) = (inputs.len(), outputs.len());
    if n_in.saturating_mul(n_out) > MAX_FEEDTHROUGH {
        return Err(FmuError::Unsupported {
            fmu: description.model_name.clone(),
            what: format!(
                "{n_in} inputs and {n_out} outputs: the table of which output depends on which input would hold more \
                 than {MAX_FEEDTHROUGH} pairs"
            ),
            help: "group the inputs and outputs into fewer variables",
        });
    }
    // The signals of each input variable.
    let mut input_signals: HashMap<usize, Vec<usize>> = HashMap::new();
    for (position, &source) in inputs.sources.iter().enumerate() {
        input_signals.entry(source).or_default().push(position);
    }
    let stated: HashMap<usize, &Option<Vec<usize>>> = description
        .structure
        .outputs
        .iter()
        .map(|u| (u.variable, &u.dependencies))
        .collect();
    let all: Vec<usize> = (0..n_in).collect();
    Ok(outputs
        .sources
        .iter()
        .map(|source| match stated.get(source) {
            Some(Some(dependencies)) => dependencies
                .iter()
                .filter_map(|d| input_signals.get(d))
                .flatten()
                .copied()
                .collect(),
            _ => all.clone(),
        })
        .collect())
}

/// The error of a variable whose size is not known.
fn unknown_size(description: &ModelDescription, v: &ScalarVariable) -> FmuError {
    FmuError::Unsupported {
        fmu: description.model_name.clone(),
        what: format!(
            "the size of the array \"{}\" (modelDescription.xml line {}) is not known: a dimension's structural \
             parameter has no whole start value, or it has more than {} elements",
            v.name,
            v.line,
            crate::description::MAX_ELEMENTS
        ),
        help: "give the structural parameter a start value",
    }
}

#[cfg(test)]
mod tests {
    use super::glob;

    #[test]
    fn globs_match_any_text_and_one_character() {
        assert!(glob("der(*)", "der(h)"));
        assert!(glob("*", ""));
        assert!(glob("a?c", "abc"));
        assert!(glob("*.phi", "joint.body.phi"));
        assert!(!glob("der(*)", "h"));
        assert!(!glob("a?c", "ac"));
        assert!(glob("*a*b", "xxaxxb"));
        assert!(!glob("*a*b", "xxaxxc"));
    }
}
