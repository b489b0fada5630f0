//! `tandem check` and `tandem blocks`: what the compiler sees in a model,
//! and what the library offers.

use std::path::Path;

use tandem_fmi::{Fmu, FmuModel, FmuSlave, InterfaceKind, Parameters};
use tandem_models::{blocks, diagram, Model};

use crate::out::say;

/// Prints the execution order, states, rate groups, ports and loops of a
/// block diagram and what of it compiles to machine code (checked, not
/// compiled), what an FMU offers, or what an SSP package holds.
pub fn run(path: &Path) -> anyhow::Result<()> {
    if tandem_fmi::is_fmu(path) {
        return check_fmu(path);
    }
    if tandem_cosim::ssp::is_ssp(path) {
        return check_ssp(path);
    }
    let compiled = diagram::load(path)?;
    let program = compiled.model.program();
    let layout = program.layout();
    say!(
        "{}: {} blocks, {} states, {} discrete states",
        path.display(),
        program.blocks().len(),
        layout.states.len(),
        layout.discrete
    );
    say!("\nexecution order:");
    for (i, b) in program.blocks().iter().enumerate() {
        say!("  {:>4}  {:<32} {:<24} {}", i + 1, b.path, b.kind, b.rate());
    }
    say!("\nstates: {}", listed(&layout.states));
    say!("\nsample-time groups:");
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for b in program.blocks() {
        let rate = b.rate();
        match groups.iter_mut().find(|(r, _)| *r == rate) {
            Some((_, members)) => members.push(&b.path),
            None => groups.push((rate, vec![&b.path])),
        }
    }
    for (rate, members) in groups {
        say!("  {rate}: {}", members.join(", "));
    }
    say!("\ninputs: {}", listed(layout.inputs.iter().map(|v| &v.name)));
    say!("outputs: {}", listed(layout.outputs.iter().map(|v| &v.name)));
    say!("zero crossings: {}", listed(&layout.zero_crossings));
    let loops: Vec<String> = program
        .solved_loops()
        .map(|(blocks, torn)| format!("through {} (torn at {})", blocks.join(", "), torn.join(", ")))
        .collect();
    if loops.is_empty() {
        say!("algebraic loops: none");
    } else {
        say!("algebraic loops solved by Newton at every evaluation:");
        for l in loops {
            say!("  {l}");
        }
    }
    // What compiles is proved block by block, as the compiler does first,
    // without generating code: validating a model never needs the code
    // generator, and a block it refuses is a line here, not a failure.
    match tandem_jit::plan(program) {
        Ok(plan) => say!("machine code: {plan}"),
        Err(why) => say!("machine code: none; {why}"),
    }
    Ok(())
}

/// Opens an FMU, instantiates and initialises its Model Exchange
/// interface (or else its Co-Simulation one), and prints its interfaces,
/// states, ports and event indicators.
fn check_fmu(path: &Path) -> anyhow::Result<()> {
    let fmu = Fmu::open(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let description = fmu.description();
    say!(
        "{}: {} FMU \"{}\" ({})",
        path.display(),
        description.version,
        description.model_name,
        description.interfaces().join(", ")
    );
    let failed = |e: tandem_fmi::FmuError| anyhow::anyhow!("{}: {e}", path.display());
    // Every variable by type, then what a run does not take, one line each.
    let mut kinds: Vec<(String, usize)> = Vec::new();
    for v in &description.variables {
        let kind = v.kind.to_string();
        match kinds.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, n)) => *n += 1,
            None => kinds.push((kind, 1)),
        }
    }
    say!(
        "variables: {} ({})",
        description.variables.len(),
        kinds
            .iter()
            .map(|(k, n)| format!("{n} {k}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if description.interface(InterfaceKind::ModelExchange).is_some() {
        let model = FmuModel::new(&fmu, &Parameters::new()).map_err(failed)?;
        let layout = model.layout();
        say!("states: {}", listed(&layout.states));
        say!("inputs: {}", listed(layout.inputs.iter().map(|v| &v.name)));
        say!("outputs: {}", listed(layout.outputs.iter().map(|v| &v.name)));
        say!("zero crossings: {}", listed(&layout.zero_crossings));
    } else {
        let slave = FmuSlave::new(&fmu, &Parameters::new(), 0.0).map_err(failed)?;
        say!("inputs: {}", listed(slave.input_variables().iter().map(|v| &v.name)));
        say!("outputs: {}", listed(slave.output_variables().iter().map(|v| &v.name)));
    }
    for line in tandem_fmi::not_taken(description) {
        say!("not taken: {line}");
    }
    Ok(())
}

/// Reads an SSP package, loads the co-simulation system it describes
/// (opening and instantiating its FMUs), and prints its components and
/// connections, then for each FMU what a run does not take.
fn check_ssp(path: &Path) -> anyhow::Result<()> {
    let (system, package) = tandem_cosim::ssp::load(path, tandem_cosim::Loading::default())?;
    let master = system.master();
    say!(
        "{}: SSP package, {} macro steps of {} s to t = {} s",
        path.display(),
        master.steps,
        master.step,
        master.steps as f64 * master.step
    );
    for line in &package.summary {
        say!("  {line}");
    }
    for (name, fmu) in &package.components {
        let fmu = Fmu::open(fmu).map_err(|e| anyhow::anyhow!("{}: component {name}: {e}", path.display()))?;
        for line in tandem_fmi::not_taken(fmu.description()) {
            say!("not taken: component {name}: {line}");
        }
    }
    Ok(())
}

/// `items` joined with commas, or `none`.
fn listed<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let list: Vec<S> = items.into_iter().collect();
    if list.is_empty() {
        "none".to_string()
    } else {
        list.iter().map(AsRef::as_ref).collect::<Vec<_>>().join(", ")
    }
}

/// Prints every block type with its summary.
pub fn list_blocks() {
    for t in blocks::types() {
        say!("{:<26} {}", t.name, t.summary);
    }
    say!(
        "{:<26} Nested blocks and links; \"action\": true makes it an If action subsystem",
        "Subsystem"
    );
    say!(
        "{:<26} A subsystem output port (at the top level: same as Output)",
        "Outport"
    );
}
