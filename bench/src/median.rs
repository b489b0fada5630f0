//! The median of repeated measurements, the figure benchmarks print of
//! runs that vary.

/// The median of `values` (the upper one of an even count), which it
/// sorts.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}
