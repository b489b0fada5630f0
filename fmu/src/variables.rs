//! The value references of an exported model's variables: 0 is time (the
//! independent variable FMI 3 requires), then the inputs in the model's
//! order, then the outputs, then the parameters the FMU exposes. The
//! packing writes them into the model description and the instance reads
//! them back by the same rule.

use tandem_models::Layout;

/// Value reference of the independent variable, time.
pub const TIME: u32 = 0;

/// What a value reference names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variable {
    /// The independent variable.
    Time,
    /// The model's input of this index.
    Input(usize),
    /// The model's output of this index.
    Output(usize),
    /// The exposed parameter of this index.
    Parameter(usize),
}

/// How many variables of each kind an FMU has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Inputs.
    pub inputs: usize,
    /// Outputs.
    pub outputs: usize,
    /// Parameters.
    pub parameters: usize,
}

impl Counts {
    /// The counts of a model of this layout exposing `parameters`.
    pub fn of(layout: &Layout, parameters: usize) -> Counts {
        Counts {
            inputs: layout.inputs.len(),
            outputs: layout.outputs.len(),
            parameters,
        }
    }
}

/// The value reference of input `i`.
pub fn input(i: usize) -> u32 {
    1 + i as u32
}

/// The value reference of output `i` of a model with `inputs` inputs.
pub fn output(inputs: usize, i: usize) -> u32 {
    1 + (inputs + i) as u32
}

/// The value reference of parameter `i`.
pub fn parameter(counts: Counts, i: usize) -> u32 {
    1 + (counts.inputs + counts.outputs + i) as u32
}

/// The variable `vr` names, if any.
pub fn find(counts: Counts, vr: u32) -> Option<Variable> {
    let Counts {
        inputs,
        outputs,
        parameters,
    } = counts;
    match vr as usize {
        0 => Some(Variable::Time),
        k if k <= inputs => Some(Variable::Input(k - 1)),
        k if k <= inputs + outputs => Some(Variable::Output(k - 1 - inputs)),
        k if k <= inputs + outputs + parameters => Some(Variable::Parameter(k - 1 - inputs - outputs)),
        _ => None,
    }
}

/// The name of the independent variable: `time`, or `time_`… when the
/// model has a variable of that name (parameters are named `block.param`,
/// never `time`).
pub fn time_name(layout: &Layout) -> String {
    let taken = |name: &str| layout.inputs.iter().chain(&layout.outputs).any(|v| v.name == name);
    (0..)
        .map(|n| format!("time{}", "_".repeat(n)))
        .find(|name| !taken(name))
        .expect("finitely many names are taken")
}

/// The range of value references, for messages:
/// `0 (time), 1 (inputs), 2 to 4 (outputs), no parameters`.
pub fn ranges(counts: Counts) -> String {
    let span = |first: u32, count: usize, what: &str| match count {
        0 => format!("no {what}"),
        1 => format!("{first} ({what})"),
        n => format!("{first} to {} ({what})", first + n as u32 - 1),
    };
    format!(
        "0 (time), {}, {}, {}",
        span(input(0), counts.inputs, "inputs"),
        span(output(counts.inputs, 0), counts.outputs, "outputs"),
        span(parameter(counts, 0), counts.parameters, "parameters")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_models::Variable as Signal;

    fn layout(inputs: usize, outputs: usize) -> Layout {
        Layout {
            inputs: (0..inputs).map(|i| Signal::new(format!("u{i}"))).collect(),
            outputs: (0..outputs).map(|i| Signal::new(format!("y{i}"))).collect(),
            ..Layout::default()
        }
    }

    #[test]
    fn time_then_inputs_then_outputs_then_parameters() {
        let l = layout(1, 3);
        let c = Counts::of(&l, 2);
        assert_eq!(find(c, TIME), Some(Variable::Time));
        assert_eq!(find(c, input(0)), Some(Variable::Input(0)));
        assert_eq!(find(c, output(1, 0)), Some(Variable::Output(0)));
        assert_eq!(find(c, output(1, 2)), Some(Variable::Output(2)));
        assert_eq!(find(c, parameter(c, 1)), Some(Variable::Parameter(1)));
        assert_eq!(parameter(c, 1), 6);
        assert_eq!(find(c, 7), None);
        assert_eq!(find(Counts::of(&l, 0), 5), None);
        assert_eq!(ranges(c), "0 (time), 1 (inputs), 2 to 4 (outputs), 5 to 6 (parameters)");
        assert_eq!(
            ranges(Counts::of(&layout(0, 2), 0)),
            "0 (time), no inputs, 1 to 2 (outputs), no parameters"
        );
        assert_eq!(time_name(&l), "time");
        let mut clash = layout(1, 1);
        clash.outputs[0].name = "time".into();
        assert_eq!(time_name(&clash), "time_");
    }
}
