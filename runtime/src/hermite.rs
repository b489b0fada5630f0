//! The cubic Hermite polynomial through the ends of a step (values and
//! derivatives): exact for solutions that are cubic in time, third-order
//! accurate otherwise. It is the continuous extension of a fixed step of
//! any method (where events are located in a real-time frame) and the
//! polynomial an implicit result carries across its macro step.

use tandem_models::{Model, StateRef};

/// One end of a step: time, state and derivative.
#[derive(Clone, Copy, Debug)]
struct End<'a> {
    /// Time (s).
    t: f64,
    /// State.
    x: &'a [f64],
    /// Derivative.
    f: &'a [f64],
}

/// Writes the Hermite polynomial through `a` and `b` at `t` into `out`;
/// at or beyond an end (or on an empty step) that end's state, exactly.
fn hermite_at(a: End<'_>, b: End<'_>, t: f64, out: &mut [f64]) {
    let h = b.t - a.t;
    if t >= b.t || h <= 0.0 {
        out.copy_from_slice(b.x);
        return;
    }
    if t <= a.t {
        out.copy_from_slice(a.x);
        return;
    }
    let s = (t - a.t) / h;
    let (s2, s3) = (s * s, s * s * s);
    let h00 = 2.0 * s3 - 3.0 * s2 + 1.0;
    let h10 = s3 - 2.0 * s2 + s;
    let h01 = -2.0 * s3 + 3.0 * s2;
    let h11 = s3 - s2;
    let ends = a.x.iter().zip(a.f).zip(b.x.iter().zip(b.f));
    for (o, ((x0, f0), (x1, f1))) in out.iter_mut().zip(ends) {
        *o = h00 * x0 + h * h10 * f0 + h01 * x1 + h * h11 * f1;
    }
}

/// A step's ends, kept to read the Hermite polynomial through them.
#[derive(Clone, Debug, PartialEq)]
pub struct Hermite {
    /// Start of the step (s).
    pub t0: f64,
    /// End of the step (s).
    pub t1: f64,
    /// State at `t0`.
    pub x0: Vec<f64>,
    /// Derivative at `t0`.
    pub f0: Vec<f64>,
    /// State at `t1`.
    pub x1: Vec<f64>,
    /// Derivative at `t1`.
    pub f1: Vec<f64>,
}

impl Hermite {
    /// Room for `n` states.
    pub fn new(n: usize) -> Self {
        Hermite {
            t0: 0.0,
            t1: 0.0,
            x0: vec![0.0; n],
            f0: vec![0.0; n],
            x1: vec![0.0; n],
            f1: vec![0.0; n],
        }
    }

    /// Spans the step from `start` to `(t1, x1)` with `model`'s
    /// derivatives at both ends (two evaluations, the discrete states and
    /// inputs of `start` held).
    pub fn span(&mut self, model: &mut dyn Model, start: StateRef<'_>, t1: f64, x1: &[f64]) {
        self.t0 = start.t;
        self.t1 = t1;
        self.x0.copy_from_slice(start.x);
        self.x1.copy_from_slice(x1);
        model.derivatives(start, &mut self.f0);
        model.derivatives(StateRef { t: t1, x: x1, ..start }, &mut self.f1);
    }

    /// Writes the state at `t` into `out`; at or beyond an end, that end's
    /// state exactly.
    pub fn state_at(&self, t: f64, out: &mut [f64]) {
        let a = End {
            t: self.t0,
            x: &self.x0,
            f: &self.f0,
        };
        let b = End {
            t: self.t1,
            x: &self.x1,
            f: &self.f1,
        };
        hermite_at(a, b, t, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_models::Layout;

    /// `x' = 3t² - 2`: `x(t) = t³ - 2t` through `x(0) = 0`.
    struct Cubic(Layout);

    impl Model for Cubic {
        fn layout(&self) -> &Layout {
            &self.0
        }
        fn fork(&self) -> Box<dyn Model> {
            Box::new(Cubic(self.0.clone()))
        }
        fn initial_state(&mut self, _: &mut [f64], _: &mut [f64]) {}
        fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
            dx[0] = 3.0 * s.t * s.t - 2.0;
        }
        fn outputs(&mut self, _: StateRef<'_>, _: &mut [f64]) {}
    }

    #[test]
    fn it_is_exact_for_cubics_and_returns_its_ends_exactly() {
        let x = |t: f64| t * t * t - 2.0 * t;
        let mut model = Cubic(Layout {
            states: vec!["x".into()],
            ..Layout::default()
        });
        let mut h = Hermite::new(1);
        h.span(
            &mut model,
            StateRef {
                t: 1.0,
                x: &[x(1.0)],
                xd: &[],
                u: &[],
            },
            3.0,
            &[x(3.0)],
        );
        let mut out = [0.0];
        for t in [1.3, 2.0, 2.9] {
            h.state_at(t, &mut out);
            assert!((out[0] - x(t)).abs() < 1e-12, "t = {t}");
        }
        for t in [1.0, 3.0] {
            h.state_at(t, &mut out);
            assert_eq!(out[0], x(t), "t = {t}");
        }
    }
}
