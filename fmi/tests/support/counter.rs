//! What the tests of the `counter` FMU in the real-time tandem share: its
//! closed form, the settings and injected delays, and a run of it on the
//! virtual clock. Included by path from each such test crate, which
//! declares `fmus` (`support/fmus.rs`) and `support`
//! (`runtime/tests/support/mod.rs`) at its root.

// Each test crate uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use tandem_fmi::{Fmu, FmuModel, Parameters};
use tandem_runtime::tandem::inputs::Profile;
use tandem_runtime::tandem::virtual_clock::VirtualCosts;
use tandem_runtime::tandem::{FastMethod, ImplicitSolver, Policy, TandemSettings};
use tandem_runtime::Method;

use crate::fmus;
use crate::support::{self, costs, Run, MS};

/// The counter's period (s).
pub const PERIOD: f64 = 0.1;

/// `x` and `n` at `t`, in closed form: on `[m P, (m + 1) P)`, `n = m` and
/// `x` relaxes towards it from its value at `m P`.
pub fn closed_form(t: f64) -> (f64, f64) {
    let (mut x, mut n) = (0.0, 0.0);
    loop {
        let (start, next) = (n * PERIOD, (n + 1.0) * PERIOD);
        if t < next {
            return (n + (x - n) * (-(t - start)).exp(), n);
        }
        x = n + (x - n) * (-(next - start)).exp();
        n += 1.0;
    }
}

/// Whether `t` is a time event's instant, where a frame's outputs show
/// `n` before or after the event depending on the side of the frame
/// boundary the event was handled on.
pub fn at_event(t: f64) -> bool {
    ((t / PERIOD).round() * PERIOD - t).abs() < 1e-9 && t > 0.0
}

/// 1 ms frames of RK4 under `policy` for `seconds`; the implicit side the
/// BDF at tolerances tight enough to be on the closed form.
pub fn settings(policy: Policy, seconds: f64) -> TandemSettings {
    let mut s = TandemSettings::new(1e-3, seconds);
    s.policy = policy;
    s.fast.method = FastMethod::Explicit(Method::Rk4);
    s.implicit.solver = ImplicitSolver::Bdf;
    s.implicit.rtol = 1e-10;
    s.implicit.atol = 1e-12;
    s
}

/// Runs the FMU `fmu` with `settings` and `costs`.
pub fn run(fmu: &Fmu, settings: &TandemSettings, costs: &VirtualCosts) -> Run {
    let model = FmuModel::new(fmu, &Parameters::new()).unwrap();
    let r = support::run(&model, settings, costs, Box::new(Profile::new(Vec::new())));
    assert_eq!(r.failure, None);
    r
}

/// Every recorded frame's `x` on the closed form (within `tolerance`), and
/// its `n` too away from the events' instants.
pub fn assert_on_closed_form(r: &Run, tolerance: f64, what: &str) {
    assert!(!r.rows.is_empty());
    for (&t, row) in r.times.iter().zip(&r.rows) {
        let (x, n) = closed_form(t);
        assert!(
            (row[0] - x).abs() < tolerance,
            "{what}: x({t}) = {}, closed form {x} (n = {}, closed form {n})",
            row[0],
            row[1]
        );
        if !at_event(t) {
            assert_eq!(row[1], n, "{what}: n({t})");
        }
    }
}

/// Implicit steps delayed just before time events, so that `correct`
/// re-integrates across them from results of frames before them: each
/// step costs 0.9 ms, so that the implicit side, once behind, catches up
/// a tenth of a frame per frame and its results stay some frames old.
pub fn delays_before_events() -> VirtualCosts {
    let mut costs = costs();
    costs.implicit_step = 900_000;
    costs.implicit_delays = vec![(97 * MS, 3 * MS), (297 * MS, 4 * MS), (498 * MS, 2 * MS)];
    costs
}

/// The counter FMU built into `dir/name.fmu`, as written or with the
/// state-saving flags `removed` from its model description.
pub fn built(dir: &Path, name: &str, removed: &[&str]) -> PathBuf {
    let mut description = fmus::description("counter");
    for flag in removed {
        description = description.replace(&format!(" {flag}=\"true\""), "");
    }
    fmus::build_variant(
        "counter",
        &dir.join(format!("{name}.fmu")),
        fmus::Variant {
            description: Some(&description),
            ..Default::default()
        },
    )
}

/// [`built`], opened.
pub fn counter(dir: &Path, name: &str, removed: &[&str]) -> Fmu {
    Fmu::open(built(dir, name, removed)).unwrap()
}

/// The metrics of the model's inner state: restores, refusals, imports,
/// restarts that could not take it, and the results not taken for their
/// modes or inner events.
pub fn inner(r: &Run) -> [u64; 5] {
    let m = &r.tandem.metrics;
    [
        m.inner_restores.get(),
        m.inner_refusals.get(),
        m.inner_imports.get(),
        m.inner_unsynced.get(),
        m.disagreements.get(),
    ]
}

/// The frames whose correction re-integrated across a time event the fast
/// side had handled (from a result of a frame before it), under
/// [`delays_before_events`]: the step to 98 ms ends at 101 ms, so frame
/// 101 restarts from 98 ms, 102 from 99 ms and 103 from 100 ms (before
/// that frame's major step, where the event is handled); likewise after
/// 300 ms and 500 ms.
pub const ACROSS_EVENTS: [u64; 8] = [101, 102, 103, 302, 303, 304, 501, 502];

/// An implicit step delayed past `max_lag` (20 ms) just before the time
/// event at 100 ms: the implicit side restarts at about 125 ms from the
/// fast side's state, past that event, which its own instance has not
/// handled.
pub fn delay_past_an_event() -> VirtualCosts {
    let mut costs = costs();
    costs.implicit_delays = vec![(95 * MS, 30 * MS)];
    costs
}
