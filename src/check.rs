//! `tandem check` and `tandem blocks`: what the compiler sees in a model,
//! and what the library offers.

use std::path::Path;

use tandem_models::blocks;
use tandem_models::diagram;

/// Prints the execution order, states, rate groups, ports and loops.
pub fn run(path: &Path) -> anyhow::Result<()> {
    let compiled = diagram::load(path)?;
    let program = compiled.model.program();
    let layout = program.layout();
    println!(
        "{}: {} blocks, {} states, {} discrete states",
        path.display(),
        program.blocks().len(),
        layout.states.len(),
        layout.discrete
    );
    println!("\nexecution order:");
    for (i, b) in program.blocks().iter().enumerate() {
        println!("  {:>4}  {:<32} {:<24} {}", i + 1, b.path, b.kind, b.rate());
    }
    println!(
        "\nstates: {}",
        if layout.states.is_empty() {
            "none".into()
        } else {
            layout.states.join(", ")
        }
    );
    println!("\nsample-time groups:");
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for b in program.blocks() {
        let rate = b.rate();
        match groups.iter_mut().find(|(r, _)| *r == rate) {
            Some((_, members)) => members.push(&b.path),
            None => groups.push((rate, vec![&b.path])),
        }
    }
    for (rate, members) in groups {
        println!("  {rate}: {}", members.join(", "));
    }
    let names = |vars: &[tandem_models::Variable]| {
        if vars.is_empty() {
            "none".to_string()
        } else {
            vars.iter().map(|v| v.name.clone()).collect::<Vec<_>>().join(", ")
        }
    };
    println!("\ninputs: {}", names(&layout.inputs));
    println!("outputs: {}", names(&layout.outputs));
    println!(
        "zero crossings: {}",
        if layout.zero_crossings.is_empty() {
            "none".into()
        } else {
            layout.zero_crossings.join(", ")
        }
    );
    println!("algebraic loops: none");
    Ok(())
}

/// Prints every block type with its summary.
pub fn list_blocks() {
    for t in blocks::types() {
        println!("{:<26} {}", t.name, t.summary);
    }
    println!(
        "{:<26} Nested blocks and links; \"action\": true makes it an If action subsystem",
        "Subsystem"
    );
    println!(
        "{:<26} A subsystem output port (at the top level: same as Output)",
        "Outport"
    );
}
