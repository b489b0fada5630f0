//! Where the fast thread reads its inputs each frame. This source
//! is a profile of breakpoints; CAN and serial sources implement the same
//! trait.

/// Inputs read by the fast thread at the start of each frame. Must not
/// allocate, lock or block.
pub trait InputSource: Send {
    /// Writes the newest inputs at frame time `t` into `u` (inputs it does
    /// not drive are left as they are).
    fn read(&mut self, t: f64, u: &mut [f64]);
}

/// Piecewise-linear signals through breakpoints, held beyond their ends.
pub struct Profile {
    /// For each driven input: its index and breakpoints `(t, value)`.
    signals: Vec<(usize, Vec<(f64, f64)>)>,
    /// Per signal, the breakpoint segment of the last read (reads move
    /// forward, so the search starts there).
    cursors: Vec<usize>,
}

impl Profile {
    /// A profile driving input `index` through `points` for each entry;
    /// the times of each signal must not decrease.
    pub fn new(signals: Vec<(usize, Vec<(f64, f64)>)>) -> Self {
        let cursors = vec![0; signals.len()];
        Profile { signals, cursors }
    }
}

/// The value of the polyline `points` at `t`, searching from segment `cursor`
/// (moved to the segment found).
pub fn polyline(points: &[(f64, f64)], t: f64, cursor: &mut usize) -> f64 {
    match points {
        [] => 0.0,
        [(_, v)] => *v,
        _ if t <= points[0].0 => points[0].1,
        _ if t >= points[points.len() - 1].0 => points[points.len() - 1].1,
        _ => {
            if points[*cursor].0 > t {
                *cursor = 0;
            }
            while points[*cursor + 1].0 < t {
                *cursor += 1;
            }
            let ((t0, v0), (t1, v1)) = (points[*cursor], points[*cursor + 1]);
            if t1 == t0 {
                v1
            } else {
                v0 + (v1 - v0) * (t - t0) / (t1 - t0)
            }
        }
    }
}

impl InputSource for Profile {
    fn read(&mut self, t: f64, u: &mut [f64]) {
        for ((index, points), cursor) in self.signals.iter().zip(&mut self.cursors) {
            u[*index] = polyline(points, t, cursor);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_interpolates_holds_and_steps() {
        let mut p = Profile::new(vec![(1, vec![(0.0, 0.0), (1.0, 10.0), (1.0, 20.0), (3.0, 0.0)])]);
        let mut u = [7.0, 0.0];
        let mut at = |t| {
            p.read(t, &mut u);
            u
        };
        assert_eq!(at(-1.0), [7.0, 0.0]);
        assert_eq!(at(0.5), [7.0, 5.0]);
        assert_eq!(at(1.0), [7.0, 10.0], "at a step: the value arriving");
        assert_eq!(at(2.0), [7.0, 10.0]);
        assert_eq!(at(0.25), [7.0, 2.5], "reading back in time restarts the search");
        assert_eq!(at(9.0), [7.0, 0.0]);
    }
}
