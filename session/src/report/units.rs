//! Numbers as the reports show them.

/// A duration in nanoseconds, in the unit that reads best.
pub fn ns(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else if v < 1e3 {
        format!("{v:.0} ns")
    } else if v < 1e6 {
        format!("{:.0} µs", v / 1e3)
    } else {
        format!("{:.2} ms", v / 1e6)
    }
}
