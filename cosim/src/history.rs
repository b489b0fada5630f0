//! The last three communication points of a participant's outputs: what
//! the curves of the inputs it drives are built through, and what a row of
//! the results holds between its points.

/// The most points kept: a parabola needs three.
pub(crate) const DEPTH: usize = 3;

/// A ring of the newest communication points, each a time in base macro
/// steps (ticks, so that times compare exactly) and the outputs there.
pub(crate) struct History {
    ticks: [u64; DEPTH],
    /// `DEPTH` rows of the outputs.
    values: Vec<f64>,
    width: usize,
    len: usize,
    /// Index of the newest row.
    newest: usize,
}

impl History {
    /// An empty history of `width` outputs (allocates once).
    pub(crate) fn new(width: usize) -> History {
        History {
            ticks: [0; DEPTH],
            values: vec![0.0; DEPTH * width],
            width,
            len: 0,
            newest: DEPTH - 1,
        }
    }

    /// Adds the point `y` at `tick`, the oldest giving way.
    pub(crate) fn push(&mut self, tick: u64, y: &[f64]) {
        self.newest = (self.newest + 1) % DEPTH;
        self.ticks[self.newest] = tick;
        self.values[self.newest * self.width..][..self.width].copy_from_slice(y);
        self.len = (self.len + 1).min(DEPTH);
    }

    /// The number of points kept.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Point `k` (0: the newest), `k < len()`.
    pub(crate) fn point(&self, k: usize) -> (u64, &[f64]) {
        let row = (self.newest + DEPTH - k) % DEPTH;
        (self.ticks[row], &self.values[row * self.width..][..self.width])
    }

    /// The outputs at the newest point at or before `tick`.
    pub(crate) fn held(&self, tick: u64) -> Option<&[f64]> {
        (0..self.len)
            .map(|k| self.point(k))
            .find(|(t, _)| *t <= tick)
            .map(|(_, y)| y)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_newest_points_are_kept_newest_first() {
        let mut h = History::new(1);
        assert_eq!(h.held(5), None);
        for tick in 0..5 {
            h.push(2 * tick, &[tick as f64]);
        }
        assert_eq!(h.len(), DEPTH);
        assert_eq!(h.point(0), (8, &[4.0][..]));
        assert_eq!(h.point(2), (4, &[2.0][..]));
        assert_eq!(h.held(7), Some(&[3.0][..]));
        assert_eq!(h.held(3), None);
    }
}
