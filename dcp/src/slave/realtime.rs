//! Inputs of a real-time slave: the newest two samples of each input
//! element, stamped with the communication point they were sent for (the
//! sender's sequence id: DCP data carries no time), from which each step
//! holds or extrapolates them; and how old data is when it arrives.

use tandem_cosim::{Course, Curve};
use tandem_runtime::tandem::metrics::{Histogram, Scale};

use super::config::Extrapolation;

/// Data age buckets: 1 µs to 10 s, 100 per decade.
const AGE_BUCKETS: usize = 700;

/// A histogram of the age of data on arrival (s): now minus the wall time
/// of the point it was sent for.
pub(crate) fn age_histogram() -> Histogram {
    Histogram::new(
        Scale::Log {
            min: 1e-6,
            per_decade: 100.0,
        },
        AGE_BUCKETS,
    )
}

/// The newest samples of every input element.
pub(crate) struct Samples {
    /// Per element: the newest and the one before, as (point, value).
    newest: Vec<[Option<(i64, f64)>; 2]>,
}

impl Samples {
    /// Room for `elements` input elements.
    pub(crate) fn new(elements: usize) -> Samples {
        Samples {
            newest: vec![[None; 2]; elements],
        }
    }

    /// Forgets every sample.
    pub(crate) fn clear(&mut self) {
        self.newest.fill([None; 2]);
    }

    /// Element `element` took `value` at communication point `point`.
    pub(crate) fn push(&mut self, element: usize, point: i64, value: f64) {
        let slot = &mut self.newest[element];
        if slot[0].is_some_and(|(p, _)| p >= point) {
            return;
        }
        slot[1] = slot[0];
        slot[0] = Some((point, value));
    }

    /// What element `element` follows over a step, points being `h`
    /// seconds apart; `default` before any sample.
    pub(crate) fn course(&self, element: usize, extrapolation: Extrapolation, h: f64, default: f64) -> Course {
        let point = |(p, v): (i64, f64)| (p as f64 * h, v);
        let curve = match (self.newest[element], extrapolation) {
            ([None, _], _) => Curve::constant(default),
            ([Some((_, v)), _], Extrapolation::Hold) | ([Some((_, v)), None], _) => Curve::constant(v),
            ([Some(a), Some(b)], Extrapolation::Linear) => Curve::through(&[point(a), point(b)]),
        };
        Course {
            curve,
            ..Course::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_hold_or_extrapolate_and_keep_only_newer_points() {
        let mut s = Samples::new(1);
        assert_eq!(s.course(0, Extrapolation::Linear, 0.1, 7.0).at(1.0), 7.0);
        s.push(0, 2, 1.0);
        assert_eq!(s.course(0, Extrapolation::Linear, 0.1, 7.0).at(1.0), 1.0);
        s.push(0, 3, 2.0);
        s.push(0, 1, 9.0);
        let line = s.course(0, Extrapolation::Linear, 0.1, 0.0);
        assert!((line.at(0.4) - 3.0).abs() < 1e-12);
        assert_eq!(s.course(0, Extrapolation::Hold, 0.1, 0.0).at(0.4), 2.0);
    }
}
