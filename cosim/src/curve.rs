//! The course of one coupling input over a communication step: the Lagrange
//! polynomial (order 0, 1 or 2) through the newest communication points of
//! the output that drives it, kept in Newton form so that evaluating it at
//! any time costs two multiplications.

/// A polynomial of order at most 2 in time, in Newton form around two
/// nodes: `p(t) = c[0] + (t - nodes[0]) * (c[1] + (t - nodes[1]) * c[2])`.
///
/// ```
/// use tandem_cosim::Curve;
/// // Through (2, 4), (1, 1), (0, 0): t².
/// let p = Curve::through(&[(2.0, 4.0), (1.0, 1.0), (0.0, 0.0)]);
/// assert_eq!(p.at(3.0), 9.0);
/// assert_eq!(Curve::constant(5.0).at(-7.0), 5.0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Curve {
    /// Newton coefficients: the value at `nodes[0]`, then the first and
    /// second divided differences.
    pub c: [f64; 3],
    /// The two newest interpolation nodes (s).
    pub nodes: [f64; 2],
}

impl Curve {
    /// The same value at every time.
    pub fn constant(value: f64) -> Curve {
        Curve {
            c: [value, 0.0, 0.0],
            nodes: [0.0, 0.0],
        }
    }

    /// The polynomial through `points` (`(time, value)`, newest first, at
    /// distinct times): constant through one, a line through two, a
    /// parabola through three; points past the third are not used, and no
    /// points give the constant 0.
    pub fn through(points: &[(f64, f64)]) -> Curve {
        match *points {
            [] => Curve::constant(0.0),
            [(_, y0)] => Curve::constant(y0),
            [(t0, y0), (t1, y1)] => Curve {
                c: [y0, (y0 - y1) / (t0 - t1), 0.0],
                nodes: [t0, t1],
            },
            [(t0, y0), (t1, y1), (t2, y2), ..] => {
                let d01 = (y0 - y1) / (t0 - t1);
                let d12 = (y1 - y2) / (t1 - t2);
                Curve {
                    c: [y0, d01, (d01 - d12) / (t0 - t2)],
                    nodes: [t0, t1],
                }
            }
        }
    }

    /// The value at time `t`. Callable from a real-time loop.
    #[inline]
    pub fn at(&self, t: f64) -> f64 {
        self.c[0] + (t - self.nodes[0]) * (self.c[1] + (t - self.nodes[1]) * self.c[2])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_curve_passes_through_its_points_and_is_exact_on_polynomials_of_its_order() {
        let p = |t: f64| 1.0 - 2.0 * t + 0.5 * t * t;
        let pts = [(0.3, p(0.3)), (0.2, p(0.2)), (0.1, p(0.1))];
        let c = Curve::through(&pts);
        for (t, y) in pts {
            assert!((c.at(t) - y).abs() < 1e-15);
        }
        assert!((c.at(0.4) - p(0.4)).abs() < 1e-14);
        let line = Curve::through(&pts[..2]);
        assert_eq!(line.at(0.3), p(0.3));
        assert!((line.at(0.4) - (2.0 * p(0.3) - p(0.2))).abs() < 1e-15);
        assert_eq!(Curve::through(&pts[..1]).at(9.0), p(0.3));
    }
}
