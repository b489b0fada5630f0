//! A signal sampled at evenly spaced times (the grid points of a
//! sub-model's own solver over a communication step), and its value in
//! between: the cubic through the four nearest samples, whose error falls
//! as the fourth power of the spacing, as a fourth-order solver's does.

/// The most samples a piece of a [`Waveform`] passes through.
const PIECE: usize = 4;

/// Samples of one signal at `start`, `start + spacing`, …
///
/// ```
/// use tandem_cosim::Waveform;
/// let mut w = Waveform::with_capacity(5);
/// w.begin(1.0, 0.5);
/// for k in 0..5 {
///     let t = 1.0 + 0.5 * k as f64;
///     w.push(t * t * t);
/// }
/// // Exact on cubics, between the samples too.
/// assert!((w.at(1.25) - 1.25f64.powi(3)).abs() < 1e-14);
/// assert!((w.at(2.75) - 2.75f64.powi(3)).abs() < 1e-13);
/// ```
#[derive(Debug, Default, PartialEq)]
pub struct Waveform {
    /// The time of the first sample (s).
    start: f64,
    /// The time between two samples (s).
    spacing: f64,
    values: Vec<f64>,
}

impl Clone for Waveform {
    fn clone(&self) -> Waveform {
        Waveform {
            values: self.values.clone(),
            ..*self
        }
    }

    /// Keeps its room for samples: does not allocate within it.
    fn clone_from(&mut self, from: &Waveform) {
        self.begin(from.start, from.spacing);
        self.values.extend_from_slice(&from.values);
    }
}

impl Waveform {
    /// No samples, with room for `capacity` of them.
    pub fn with_capacity(capacity: usize) -> Waveform {
        Waveform {
            values: Vec::with_capacity(capacity),
            ..Waveform::default()
        }
    }

    /// Drops the samples and starts again at `start`, `spacing` apart.
    pub fn begin(&mut self, start: f64, spacing: f64) {
        self.start = start;
        self.spacing = spacing;
        self.values.clear();
    }

    /// Adds the next sample. Does not allocate within the capacity.
    pub fn push(&mut self, value: f64) {
        self.values.push(value);
    }

    /// Drops the samples.
    pub fn clear(&mut self) {
        self.values.clear();
    }

    /// Whether it has no samples.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The samples, the first at the start.
    pub fn samples(&self) -> &[f64] {
        &self.values
    }

    /// Becomes `scale * from + offset`, sample by sample. Does not
    /// allocate within the capacity.
    pub fn scaled_from(&mut self, from: &Waveform, scale: f64, offset: f64) {
        self.begin(from.start, from.spacing);
        self.values.extend(from.values.iter().map(|y| scale * y + offset));
    }

    /// The value at `t`: the polynomial through the four samples nearest
    /// to `t` (all of them when there are fewer), extended past the first
    /// and the last sample; NaN without samples. Does not allocate.
    pub fn at(&self, t: f64) -> f64 {
        let n = self.values.len();
        let Some(order) = n.min(PIECE).checked_sub(1) else {
            return f64::NAN;
        };
        // In units of the spacing from the first sample of the piece: the
        // piece starts one sample before the interval holding `t`.
        let s = (t - self.start) / self.spacing;
        let first = (s.floor() - 1.0).clamp(0.0, (n - 1 - order) as f64);
        let x = s - first;
        // Forward differences of the piece, then Newton's forward formula.
        let mut d = [0.0; PIECE];
        d[..=order].copy_from_slice(&self.values[first as usize..][..=order]);
        for level in 1..=order {
            for i in (level..=order).rev() {
                d[i] -= d[i - 1];
            }
        }
        (0..order)
            .rev()
            .fold(d[order], |value, i| d[i] + (x - i as f64) / (i + 1) as f64 * value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sampled(f: impl Fn(f64) -> f64, n: usize, start: f64, spacing: f64) -> Waveform {
        let mut w = Waveform::with_capacity(n);
        w.begin(start, spacing);
        for k in 0..n {
            w.push(f(start + spacing * k as f64));
        }
        w
    }

    #[test]
    fn a_waveform_passes_through_its_samples_and_is_exact_on_polynomials_of_its_order() {
        let cubic = |t: f64| 2.0 - t + 3.0 * t * t - 0.5 * t * t * t;
        let w = sampled(cubic, 7, -1.0, 0.25);
        for k in 0..7 {
            let t = -1.0 + 0.25 * k as f64;
            assert!((w.at(t) - cubic(t)).abs() < 1e-14, "{t}");
        }
        for t in [-1.1, -0.9, -0.3, 0.01, 0.49, 0.6] {
            assert!((w.at(t) - cubic(t)).abs() < 1e-13, "{t}");
        }
        // Fewer than four samples: the polynomial through all of them.
        let line = sampled(|t| 1.0 + 2.0 * t, 2, 0.0, 1.0);
        assert_eq!(line.at(0.5), 2.0);
        let parabola = sampled(|t| t * t, 3, 0.0, 1.0);
        assert_eq!(parabola.at(1.5), 2.25);
        assert_eq!(sampled(|_| 4.0, 1, 0.0, 1.0).at(7.0), 4.0);
        assert!(Waveform::default().at(0.0).is_nan());
    }

    #[test]
    fn the_error_between_samples_falls_as_the_fourth_power_of_the_spacing() {
        let error = |spacing: f64| {
            let n = (1.0 / spacing) as usize + 1;
            let w = sampled(f64::sin, n, 0.0, spacing);
            (0..n - 1)
                .map(|k| {
                    let t = spacing * (k as f64 + 0.5);
                    (w.at(t) - t.sin()).abs()
                })
                .fold(0.0, f64::max)
        };
        let ratio = error(1.0 / 16.0) / error(1.0 / 32.0);
        assert!((ratio - 16.0).abs() < 2.0, "{ratio}");
    }

    #[test]
    fn a_scaled_copy_keeps_the_times_and_the_capacity() {
        let w = sampled(|t| t, 3, 1.0, 0.5);
        let mut copy = Waveform::with_capacity(3);
        let room = copy.values.capacity();
        copy.scaled_from(&w, 2.0, 1.0);
        assert_eq!(copy.samples(), [3.0, 4.0, 5.0]);
        assert_eq!(copy.at(1.25), 3.5);
        assert_eq!(copy.values.capacity(), room);
    }
}
