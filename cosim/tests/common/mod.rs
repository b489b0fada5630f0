//! The two-mass oscillator split into two sub-models (`examples/mass1.json`,
//! `examples/mass2.json`) or whole in one (`tests/data/two_mass.json`), and
//! its exact solution from `tests/data/two_mass_oscillator.json`.

#![allow(dead_code)] // each test file uses its own part

use std::path::Path;

use tandem_cosim::{Summary, System};
use tandem_runtime::record::Trace;

/// Where the test systems "are": their sources resolve against `examples/`.
pub const ORIGIN: &str = "examples/test.toml";

/// The exact (x1, x2, v1, v2) of the damped case at `t` ("t=1" or "t=10").
pub fn exact(t: &str) -> [f64; 4] {
    let text = std::fs::read_to_string("tests/data/two_mass_oscillator.json").unwrap();
    let data: serde_json::Value = serde_json::from_str(&text).unwrap();
    let v = &data["reference"]["damped"][t];
    std::array::from_fn(|i| v[i].as_f64().unwrap())
}

/// A system file of the split oscillator: macro step `step`, both
/// sub-models with RK4 micro steps of `micro`, and `master` lines added
/// to `[master]`.
pub fn split(step: f64, stop: f64, micro: f64, master: &str) -> String {
    format!(
        r#"
[master]
step = {step:e}
stop = {stop}
{master}

[[model]]
name = "mass1"
source = "mass1.json"
solver = "rk4"
step = {micro:e}

[[model]]
name = "mass2"
source = "mass2.json"
solver = "rk4"
step = {micro:e}

[[connection]]
from = "mass1.x1"
to = "mass2.x1"

[[connection]]
from = "mass1.v1"
to = "mass2.v1"

[[connection]]
from = "mass2.F"
to = "mass1.F"
"#
    )
}

/// A system file of the oscillator whole, in one sub-model: macro step
/// `step`, RK4 micro steps of `micro`. Its columns are those of [`split`]
/// without `mass2.F`.
pub fn whole(step: f64, stop: f64, micro: f64) -> String {
    format!(
        r#"
[master]
step = {step:e}
stop = {stop}

[[model]]
name = "both"
source = "../tests/data/two_mass.json"
solver = "rk4"
step = {micro:e}
"#
    )
}

/// Parses a system file written for [`ORIGIN`].
pub fn parse(text: &str) -> System {
    tandem_cosim::parse(text, Path::new(ORIGIN)).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// Runs `text`, returning the recorded trace and the summary.
pub fn run(text: &str) -> (Trace, Summary) {
    let mut trace = Trace::default();
    let summary = parse(text).run(&mut trace, &mut |_| {}).unwrap();
    (trace, summary)
}

/// The (x1, x2, v1, v2) of the last row of a run of the oscillator
/// (columns x1, v1, x2, v2, then those not used).
pub fn last_state(trace: &Trace) -> [f64; 4] {
    let r = trace.rows.last().unwrap();
    [r[0], r[2], r[1], r[3]]
}

/// The largest error of (x1, x2, v1, v2) at the end of the run against
/// the exact values `exact`.
pub fn error(trace: &Trace, exact: [f64; 4]) -> f64 {
    last_state(trace)
        .iter()
        .zip(exact)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max)
}

/// The least-squares slope of log(error) against log(step).
pub fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (xs, ys): (Vec<f64>, Vec<f64>) = points.iter().map(|&(h, e)| (h.ln(), e.ln())).unzip();
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    sxy / sxx
}
