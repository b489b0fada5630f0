//! A run as a user sees it: the example system, its columns and rows, the
//! progress reported, and a sub-model on the BDF.

mod common;

use std::error::Error;
use std::iter::successors;
use std::path::Path;

use common::*;
use tandem_runtime::record::Trace;

#[test]
fn the_example_system_runs_to_ten_seconds_close_to_the_exact_solution() {
    let system = tandem_cosim::load(Path::new("examples/two_mass.toml")).unwrap();
    assert_eq!(system.order(), ["mass1", "mass2"]);
    let names = system.output_names();
    let mut trace = Trace::default();
    let mut fractions = Vec::new();
    let summary = system.run(&mut trace, &mut |f| fractions.push(f)).unwrap();
    assert_eq!(names, ["mass1.x1", "mass1.v1", "mass2.x2", "mass2.v2", "mass2.F"]);
    assert_eq!(summary.macro_steps, 10_000);
    assert_eq!(trace.time.len(), 10_001);
    assert_eq!((trace.time[0], trace.time[10_000]), (0.0, 10.0));
    assert!(
        fractions.windows(2).all(|w| w[0] < w[1]) && fractions.len() > 50,
        "{fractions:?}"
    );
    assert_eq!((fractions[0], fractions[fractions.len() - 1]), (0.0, 1.0));
    let e = error(&trace, exact("t=10"));
    // 1.9e-3 (of speeds up to 100 m/s) with quadratic extrapolation at 1 ms.
    assert!(e < 3e-3, "{e}");
    // F = kc (x1 - x2) + cc (v1 - v2) on every row.
    for r in &trace.rows {
        let f = 100.0 * (r[0] - r[2]) + 0.01 * (r[1] - r[3]);
        assert!((r[4] - f).abs() < 1e-9 * f.abs().max(1.0), "{r:?}");
    }
}

#[test]
fn a_sub_model_on_the_bdf_couples_like_one_on_rk4() {
    let h = 1.0 / 1024.0;
    let master = "ordering = \"gauss-seidel\"\nextrapolation = 1";
    let rk4 = split(h, 1.0, h / 8.0, master);
    let bdf = rk4.replacen(
        "source = \"mass2.json\"\nsolver = \"rk4\"",
        "source = \"mass2.json\"\nsolver = \"bdf\"\nrtol = 1e-10\natol = 1e-10",
        1,
    );
    assert_ne!(rk4, bdf);
    let exact = exact("t=1");
    let (e_rk4, e_bdf) = (error(&run(&rk4).0, exact), error(&run(&bdf).0, exact));
    assert!((e_bdf - e_rk4).abs() < 0.05 * e_rk4, "rk4 {e_rk4}, bdf {e_bdf}");
}

#[test]
fn the_example_of_system_md_is_a_valid_system() {
    let doc = std::fs::read_to_string("SYSTEM.md").unwrap();
    let start = doc.find("```toml\n").unwrap() + "```toml\n".len();
    let text = &doc[start..][..doc[start..].find("```").unwrap()];
    let system = tandem_cosim::parse(text, Path::new("examples/system.toml")).unwrap();
    assert_eq!(system.order(), ["mass1", "mass2"]);
    assert_eq!(system.master().steps, 10_000);
    assert!(system.master().iterate.is_some());
}

#[test]
fn a_sub_model_fault_is_said_once_along_the_chain_of_errors() {
    // sqrt(1 - t) turns NaN after t = 1.
    let text = "[master]\nstep = 0.25\nstop = 2\n\n[[model]]\nname = \"r\"\nsource = \"nan_after_one.json\"\n";
    let system = tandem_cosim::parse(text, Path::new("../tests/data/system.toml")).unwrap();
    let mut trace = Trace::default();
    let e = system.run(&mut trace, &mut |_| {}).unwrap_err();
    assert_eq!(trace.time, [0.0, 0.25, 0.5, 0.75, 1.0]);
    // As the command line prints it: each error of the chain, then its
    // source, joined by ": ".
    let said: Vec<String> = successors(Some(&e as &dyn Error), |&e| e.source())
        .map(ToString::to_string)
        .collect();
    let said = said.join(": ");
    assert!(
        said.starts_with("sub-model \"r\" at t = ") && said.contains("block \"root\""),
        "{said}"
    );
    assert_eq!(said.matches("non-finite value").count(), 1, "{said}");
}
