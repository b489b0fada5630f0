//! `tandem sim` writes the same CSV, byte for byte, with a diagram
//! compiled to machine code (the default) and interpreted (`--interpret`),
//! for every example model and every model of `models/FORMAT.md`, with
//! every solver; and `tandem cosim` alike.

mod common;
#[path = "support/format_md.rs"]
mod format_md;

use common::{root, scratch, tandem_ok};
use format_md::format_md_models;

#[test]
fn compiled_and_interpreted_runs_write_the_same_csv() {
    let dir = scratch("jit-csv");
    let mut models = Vec::new();
    for entry in std::fs::read_dir(root().join("models/examples")).expect("examples") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "json") {
            models.push(path);
        }
    }
    let format_md = std::fs::read_to_string(root().join("models/FORMAT.md")).expect("FORMAT.md");
    for (k, text) in format_md_models(&format_md).iter().enumerate() {
        let path = dir.join(format!("format_{k}.json"));
        std::fs::write(&path, text).expect("writable");
        models.push(path);
    }
    models.sort();
    assert!(models.len() >= 10, "{models:?}");
    let mut compiled = 0;
    for model in &models {
        let m = model.to_str().expect("UTF-8 path");
        for solver in ["euler", "heun", "rk4", "bdf"] {
            let (c, i) = (dir.join("compiled.csv"), dir.join("interpreted.csv"));
            let said = tandem_ok(&dir, &["sim", m, "--solver", solver, "--out", c.to_str().unwrap()]);
            let first = said.lines().next().unwrap_or_default();
            assert!(
                first.contains(": compiled ") || first.contains(": interpreted: algebraic loops"),
                "{m}: {said}"
            );
            compiled += usize::from(first.contains(": compiled "));
            let quiet = tandem_ok(
                &dir,
                &[
                    "sim",
                    m,
                    "--solver",
                    solver,
                    "--interpret",
                    "--out",
                    i.to_str().unwrap(),
                ],
            );
            assert!(
                !quiet.contains(": compiled ") && !quiet.contains(": interpreted:"),
                "{m}: {quiet}"
            );
            let (c, i) = (std::fs::read(&c).expect("CSV"), std::fs::read(&i).expect("CSV"));
            assert!(c.len() > 20, "{m} {solver}: an empty CSV");
            assert!(
                c == i,
                "{m} with {solver}: the compiled run's CSV differs from the interpreted one's"
            );
        }
    }
    assert!(compiled >= 4 * models.len() / 2, "most models compile: {compiled} runs");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compiled_and_interpreted_cosimulations_write_the_same_csv() {
    let dir = scratch("jit-cosim");
    let system = root().join("cosim/examples/two_mass.toml");
    let system = system.to_str().expect("UTF-8 path");
    let (c, i) = (dir.join("compiled.csv"), dir.join("interpreted.csv"));
    tandem_ok(&dir, &["cosim", system, "--out", c.to_str().unwrap()]);
    tandem_ok(&dir, &["cosim", system, "--interpret", "--out", i.to_str().unwrap()]);
    let (c, i) = (std::fs::read(&c).expect("CSV"), std::fs::read(&i).expect("CSV"));
    assert!(c.len() > 100, "an empty CSV");
    assert!(
        c == i,
        "the compiled co-simulation's CSV differs from the interpreted one's"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
