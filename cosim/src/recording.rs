//! Some outputs of a sub-model recorded at the grid points of its own
//! solver over one communication step: what the repetitions of an iterated
//! macro step exchange.

use crate::waveform::Waveform;

/// The waveforms of chosen outputs over one step, each with room for the
/// samples of a step allocated once.
///
/// ```
/// use tandem_cosim::Recording;
/// let mut r = Recording::new(vec![2, 0], 3);
/// r.begin(0.0, 0.5);
/// r.sample(&[1.0, 9.0, 3.0]);
/// r.sample(&[2.0, 9.0, 4.0]);
/// assert_eq!(r.waveform(2).unwrap().samples(), [3.0, 4.0]);
/// assert_eq!(r.waveform(0).unwrap().at(0.25), 1.5);
/// assert!(r.waveform(1).is_none());
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Recording {
    /// The outputs recorded, by index among the sub-model's outputs.
    outputs: Vec<usize>,
    /// Their waveforms, in the order of `outputs`.
    waveforms: Vec<Waveform>,
}

impl Recording {
    /// A recording of `outputs` (indices among the sub-model's outputs),
    /// with room for `samples` of each.
    pub fn new(outputs: Vec<usize>, samples: usize) -> Recording {
        Recording {
            waveforms: outputs.iter().map(|_| Waveform::with_capacity(samples)).collect(),
            outputs,
        }
    }

    /// Drops the samples: the next is at `start`, the others `spacing`
    /// apart.
    pub fn begin(&mut self, start: f64, spacing: f64) {
        for w in &mut self.waveforms {
            w.begin(start, spacing);
        }
    }

    /// Adds the samples of the recorded outputs among all the outputs `y`.
    /// Does not allocate within the room given.
    pub fn sample(&mut self, y: &[f64]) {
        for (w, &k) in self.waveforms.iter_mut().zip(&self.outputs) {
            w.push(y[k]);
        }
    }

    /// The waveform of output `output`, when it is recorded.
    pub fn waveform(&self, output: usize) -> Option<&Waveform> {
        self.outputs
            .iter()
            .position(|&k| k == output)
            .map(|i| &self.waveforms[i])
    }

    /// Every recorded waveform.
    pub fn waveforms(&self) -> &[Waveform] {
        &self.waveforms
    }
}
