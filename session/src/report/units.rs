//! Numbers as the reports show them.

/// A number with three significant decimals, in scientific notation when
/// it is very large or very small; `-` for NaN (no value), `inf` for an
/// infinity.
pub fn number(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else if v.is_infinite() {
        if v > 0.0 { "inf" } else { "-inf" }.into()
    } else if v != 0.0 && !(1e-3..1e5).contains(&v.abs()) {
        format!("{v:.3e}")
    } else {
        format!("{v:.3}")
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_stay_short_whatever_their_size() {
        assert_eq!(number(0.0), "0.000");
        assert_eq!(number(1.5), "1.500");
        assert_eq!(number(37.195), "37.195");
        assert_eq!(number(232965724626.78), "2.330e11");
        assert_eq!(number(f64::MAX), "1.798e308");
        assert_eq!(number(2.5e-5), "2.500e-5");
        assert_eq!((number(f64::INFINITY), number(f64::NAN)), ("inf".into(), "-".into()));
        assert_eq!(ns(1500.0), "2 µs");
    }
}
