//! `tandem check` and `tandem blocks`: what the compiler sees in a model,
//! and what the library offers.

use std::path::Path;

use crate::out::say;
use tandem_models::blocks;
use tandem_models::diagram;

/// Prints the execution order, states, rate groups, ports and loops.
pub fn run(path: &Path) -> anyhow::Result<()> {
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
