//! What one input of a sub-model follows over a communication step: the
//! polynomial through the communication points of the output driving it,
//! or, in the repetitions of an iterated macro step, the waveform that
//! output was recorded on.

use crate::curve::Curve;
use crate::waveform::Waveform;

/// The course of one input over a communication step: its waveform when
/// that has samples, else its curve.
///
/// ```
/// use tandem_cosim::Course;
/// let mut course = Course::constant(2.0);
/// assert_eq!(course.at(5.0), 2.0);
/// course.waveform.begin(0.0, 1.0);
/// course.waveform.push(0.0);
/// course.waveform.push(1.0);
/// assert_eq!(course.at(0.5), 0.5);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Course {
    /// The polynomial through the communication points.
    pub curve: Curve,
    /// The recorded waveform, empty when the input follows the curve.
    pub waveform: Waveform,
}

impl Course {
    /// The same value at every time.
    pub fn constant(value: f64) -> Course {
        Course {
            curve: Curve::constant(value),
            waveform: Waveform::default(),
        }
    }

    /// Whether the input follows the waveform.
    pub fn follows_waveform(&self) -> bool {
        !self.waveform.is_empty()
    }

    /// The value at time `t`. Does not allocate.
    pub fn at(&self, t: f64) -> f64 {
        if self.follows_waveform() {
            self.waveform.at(t)
        } else {
            self.curve.at(t)
        }
    }
}
