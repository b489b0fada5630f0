//! The implicit thread's view of the inputs: a history of timestamped
//! samples, held between samples (as the fast thread holds them over a
//! frame) and predicted beyond the newest one, each input by its own order:
//! a polynomial through its last one, two or three samples (hold suits
//! inputs that change in steps, such as CAN signals; linear or quadratic,
//! smooth profiles).

use super::clock::Nanos;
use super::settings::Extrapolation;

/// A fixed-capacity history of input samples, timed in nanoseconds of the
/// run's clock.
pub struct InputHistory {
    /// Each input's order.
    orders: Vec<Extrapolation>,
    width: usize,
    times: Vec<Nanos>,
    values: Vec<f64>,
    /// Slot of the newest sample.
    newest: usize,
    len: usize,
}

impl InputHistory {
    /// Room for `capacity` samples of inputs each predicted with its order
    /// in `orders`.
    pub fn new(capacity: usize, orders: Vec<Extrapolation>) -> Self {
        let capacity = capacity.max(3);
        let width = orders.len();
        InputHistory {
            orders,
            width,
            times: vec![Nanos::MIN; capacity],
            values: vec![0.0; capacity * width],
            newest: 0,
            len: 0,
        }
    }

    /// Forgets every sample.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Adds a sample at `t`, which must not be older than the newest; a
    /// sample at the newest time replaces it.
    pub fn push(&mut self, t: Nanos, u: &[f64]) {
        if self.len == 0 || t > self.times[self.newest] {
            self.newest = (self.newest + 1) % self.times.len();
            self.len = (self.len + 1).min(self.times.len());
        }
        self.times[self.newest] = t;
        self.values[self.newest * self.width..(self.newest + 1) * self.width].copy_from_slice(u);
    }

    /// Time of the newest sample, if any.
    pub fn newest_time(&self) -> Option<Nanos> {
        (self.len > 0).then(|| self.times[self.newest])
    }

    /// Slot of the `back`-th newest sample.
    fn slot(&self, back: usize) -> usize {
        (self.newest + self.times.len() - back) % self.times.len()
    }

    /// Writes the inputs in force at `t`: the newest sample taken at or
    /// before `t`, or, beyond the newest sample, the extrapolated value at
    /// `t`. Returns whether it was extrapolated. With no sample at all,
    /// writes nothing and returns `true`.
    pub fn value_at(&self, t: Nanos, out: &mut [f64]) -> bool {
        if self.len == 0 {
            return true;
        }
        if t > self.times[self.newest] {
            self.extrapolate(t, out);
            return true;
        }
        let back = (0..self.len)
            .find(|&b| self.times[self.slot(b)] <= t)
            .unwrap_or(self.len - 1);
        let s = self.slot(back);
        out.copy_from_slice(&self.values[s * self.width..(s + 1) * self.width]);
        false
    }

    /// Each input's Lagrange polynomial through its newest samples (as
    /// many as its order asks for), evaluated at `t`.
    fn extrapolate(&self, t: Nanos, out: &mut [f64]) {
        for (input, (o, order)) in out.iter_mut().zip(&self.orders).enumerate() {
            let points = order.points().min(self.len);
            *o = 0.0;
            for i in 0..points {
                let si = self.slot(i);
                let mut weight = 1.0;
                for j in 0..points {
                    if j != i {
                        let tj = self.times[self.slot(j)];
                        weight *= (t - tj) as f64 / (self.times[si] - tj) as f64;
                    }
                }
                *o += weight * self.values[si * self.width + input];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A millisecond.
    const MS: Nanos = 1_000_000;

    /// A history of `samples` given as (milliseconds, value).
    fn history(order: Extrapolation, samples: &[(f64, f64)]) -> InputHistory {
        let mut h = InputHistory::new(4, vec![order]);
        for &(t, u) in samples {
            h.push(ms(t), &[u]);
        }
        h
    }

    fn ms(t: f64) -> Nanos {
        (t * MS as f64) as Nanos
    }

    #[test]
    fn each_order_is_exact_on_polynomials_of_its_degree() {
        let quadratic = |t: f64| 2.0 - 3.0 * t + 0.5 * t * t;
        let samples: Vec<(f64, f64)> = [0.0, 1.0, 2.0, 3.0].iter().map(|&t| (t, quadratic(t))).collect();
        let mut out = [0.0];
        assert!(history(Extrapolation::Quadratic, &samples).value_at(ms(4.5), &mut out));
        assert!((out[0] - quadratic(4.5)).abs() < 1e-12);
        let line: Vec<(f64, f64)> = [0.0, 1.0, 2.0].iter().map(|&t| (t, 1.0 + 2.0 * t)).collect();
        history(Extrapolation::Linear, &line).value_at(ms(5.0), &mut out);
        assert_eq!(out[0], 11.0);
        history(Extrapolation::Hold, &line).value_at(ms(5.0), &mut out);
        assert_eq!(out[0], 5.0);
    }

    #[test]
    fn inside_the_history_samples_are_held() {
        let h = history(Extrapolation::Quadratic, &[(0.0, 1.0), (1.0, 2.0), (2.0, 4.0)]);
        let mut out = [0.0];
        assert!(!h.value_at(ms(1.5), &mut out));
        assert_eq!(out[0], 2.0);
        assert!(!h.value_at(ms(2.0), &mut out));
        assert_eq!(out[0], 4.0);
    }

    #[test]
    fn the_oldest_samples_give_way_and_few_samples_lower_the_order() {
        let h = history(
            Extrapolation::Quadratic,
            &[(0.0, 0.0), (1.0, 1.0), (2.0, 4.0), (3.0, 9.0), (4.0, 16.0)],
        );
        let mut out = [0.0];
        h.value_at(ms(0.5), &mut out);
        assert_eq!(out[0], 1.0, "older than the history: its oldest sample");
        let one = history(Extrapolation::Quadratic, &[(0.0, 3.0)]);
        one.value_at(ms(2.0), &mut out);
        assert_eq!(out[0], 3.0);
    }
}
