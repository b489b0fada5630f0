//! Plant models written in Rust, selectable by name.

pub mod ev;
pub mod ladder;
pub mod pack;
pub mod testset;

use crate::model::Model;

/// The built-in models by name (lower case), for listing: the stiff test
/// set's problems, `ev`, the electric-vehicle drivetrain, and the families
/// sized by their name, thermal ladders (`ladder-N`) and battery packs
/// (`pack-N`), each with its bounds.
pub fn names() -> Vec<String> {
    testset::NAMES
        .iter()
        .map(|n| n.to_lowercase())
        .chain([
            "ev".to_string(),
            format!(
                "{}N (a thermal ladder of N states, 1 to {})",
                ladder::PREFIX,
                ladder::MAX_NODES
            ),
            format!(
                "{}N (a battery pack of N cells, 1 to {})",
                pack::PREFIX,
                pack::MAX_CELLS
            ),
        ])
        .collect()
}

/// The built-in model called `name` (any case), if there is one.
pub fn builtin(name: &str) -> Option<Box<dyn Model>> {
    if name.eq_ignore_ascii_case("ev") {
        return Some(Box::new(ev::EvPlant::new()));
    }
    if let Some(ladder) = ladder::Ladder::named(name) {
        return Some(Box::new(ladder));
    }
    if let Some(pack) = pack::Pack::named(name) {
        return Some(Box::new(pack));
    }
    testset::problem(name).map(|p| Box::new(p) as Box<dyn Model>)
}

/// The size a built-in name of a sized family asks for (`prefix` then
/// decimal digits, the prefix in any case), if it is one and the size is 1
/// to `max`.
fn sized(name: &str, prefix: &str, max: usize) -> Option<usize> {
    let digits = (name.get(..prefix.len())?.eq_ignore_ascii_case(prefix)).then(|| &name[prefix.len()..])?;
    let n: usize = digits
        .bytes()
        .all(|b| b.is_ascii_digit())
        .then(|| digits.parse().ok())??;
    (1..=max).contains(&n).then_some(n)
}

/// An input profile: for each input by name, piecewise-linear
/// `(time s, value)` breakpoints.
pub type InputProfile = &'static [(&'static str, &'static [(f64, f64)])];

/// The built-in input profiles by name.
pub const PROFILES: &[&str] = &["ev-drive-cycle"];

/// The built-in input profile called `name`, if there is one.
pub fn profile(name: &str) -> Option<InputProfile> {
    (name == "ev-drive-cycle").then_some(ev::DRIVE_CYCLE)
}

/// The value at time `t` of the piecewise-linear profile through `points`
/// (sorted by time): linear between breakpoints, the first value before the
/// first one (and at a NaN time), the last value after the last one, 0
/// when there are none.
pub fn profile_value(points: &[(f64, f64)], t: f64) -> f64 {
    let (Some(&(t0, y0)), Some(&(t1, y1))) = (points.first(), points.last()) else {
        return 0.0;
    };
    if t.is_nan() || t <= t0 {
        return y0;
    }
    if t >= t1 {
        return y1;
    }
    let k = points.partition_point(|&(tk, _)| tk <= t);
    let ((ta, ya), (tb, yb)) = (points[k - 1], points[k]);
    ya + (yb - ya) * (t - ta) / (tb - ta)
}
