//! The value references of an exported model's variables: 0 is time (the
//! independent variable FMI 3 requires), then the inputs in the model's
//! order, then the outputs. The packing writes them into the model
//! description and the instance reads them back by the same rule.

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
}

/// The value reference of input `i`.
pub fn input(i: usize) -> u32 {
    1 + i as u32
}

/// The value reference of output `i` of a model with `inputs` inputs.
pub fn output(inputs: usize, i: usize) -> u32 {
    1 + (inputs + i) as u32
}

/// The variable `vr` names in a model of this layout, if any.
pub fn find(layout: &Layout, vr: u32) -> Option<Variable> {
    let (inputs, outputs) = (layout.inputs.len(), layout.outputs.len());
    match vr as usize {
        0 => Some(Variable::Time),
        k if k <= inputs => Some(Variable::Input(k - 1)),
        k if k <= inputs + outputs => Some(Variable::Output(k - 1 - inputs)),
        _ => None,
    }
}

/// The name of the independent variable: `time`, or `time_`… when the
/// model has a variable of that name.
pub fn time_name(layout: &Layout) -> String {
    let taken = |name: &str| layout.inputs.iter().chain(&layout.outputs).any(|v| v.name == name);
    (0..)
        .map(|n| format!("time{}", "_".repeat(n)))
        .find(|name| !taken(name))
        .expect("finitely many names are taken")
}

/// The range of value references of a model of this layout, for messages:
/// `0 (time), 1 to 1 (inputs), 2 to 4 (outputs)`.
pub fn ranges(layout: &Layout) -> String {
    let span = |first: u32, count: usize, what: &str| match count {
        0 => format!("no {what}"),
        1 => format!("{first} ({what})"),
        n => format!("{first} to {} ({what})", first + n as u32 - 1),
    };
    let inputs = layout.inputs.len();
    format!(
        "0 (time), {}, {}",
        span(input(0), inputs, "inputs"),
        span(output(inputs, 0), layout.outputs.len(), "outputs")
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
    fn time_then_inputs_then_outputs() {
        let l = layout(1, 3);
        assert_eq!(find(&l, TIME), Some(Variable::Time));
        assert_eq!(find(&l, input(0)), Some(Variable::Input(0)));
        assert_eq!(find(&l, output(1, 0)), Some(Variable::Output(0)));
        assert_eq!(find(&l, output(1, 2)), Some(Variable::Output(2)));
        assert_eq!(find(&l, 5), None);
        assert_eq!(ranges(&l), "0 (time), 1 (inputs), 2 to 4 (outputs)");
        assert_eq!(ranges(&layout(0, 2)), "0 (time), no inputs, 1 to 2 (outputs)");
        assert_eq!(time_name(&l), "time");
        let mut clash = layout(1, 1);
        clash.outputs[0].name = "time".into();
        assert_eq!(time_name(&clash), "time_");
    }
}
