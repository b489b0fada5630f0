//! A model whose inputs follow courses in time: it takes each course's
//! curve coefficients and whether it follows a waveform instead as its
//! inputs (six per input of the model inside, held over a communication
//! step by the simulation), the waveforms themselves in a table shared
//! with whoever steps it, and evaluates each course at the time of every
//! evaluation, so that the integrator's stages see inputs that move with
//! them instead of held ones.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tandem_models::{Layout, MajorStep, Model, NonFinite, StateRef, Variable};

use crate::course::Course;
use crate::curve::Curve;
use crate::waveform::Waveform;

/// Values that describe one [`Course`] among a driven model's inputs.
pub(crate) const PER_INPUT: usize = 6;

/// The waveforms of a driven model's inputs, by input; an input reads its
/// own when its description says it follows it.
pub(crate) type Waveforms = Arc<Mutex<Vec<Waveform>>>;

/// Locks the waveforms; those of a holder that panicked are still whole
/// (they are only copied into).
pub(crate) fn lock(waveforms: &Waveforms) -> MutexGuard<'_, Vec<Waveform>> {
    waveforms.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Writes the description of `course` into the six input values that
/// describe it: its curve's coefficients, then 1 when it follows its
/// waveform (kept in the shared table), else 0.
pub(crate) fn encode(course: &Course, into: &mut [f64]) {
    into[..3].copy_from_slice(&course.curve.c);
    into[3..5].copy_from_slice(&course.curve.nodes);
    into[5] = if course.follows_waveform() { 1.0 } else { 0.0 };
}

/// The model inside, its inputs replaced by the descriptions of their
/// courses.
pub(crate) struct Driven {
    inner: Box<dyn Model>,
    layout: Layout,
    /// The inner model's inputs at the time of the current evaluation.
    u: Vec<f64>,
    /// The waveforms the inputs that follow one read.
    waveforms: Waveforms,
}

impl Driven {
    /// Wraps `inner`; each input starts constant at its default.
    pub(crate) fn new(inner: Box<dyn Model>) -> Driven {
        let mut layout = inner.layout().clone();
        let inputs = std::mem::take(&mut layout.inputs);
        let u = inputs.iter().map(|v| v.default).collect();
        for v in &inputs {
            let mut default = [0.0; PER_INPUT];
            encode(&Course::constant(v.default), &mut default);
            for (k, d) in ["c0", "c1", "c2", "t0", "t1", "w"].into_iter().zip(default) {
                layout.inputs.push(Variable {
                    default: d,
                    ..Variable::new(format!("{}#{k}", v.name))
                });
            }
        }
        let waveforms = Arc::new(Mutex::new(vec![Waveform::default(); inputs.len()]));
        Driven {
            inner,
            layout,
            u,
            waveforms,
        }
    }

    /// The table of the inputs' waveforms, to fill between steps.
    pub(crate) fn waveforms(&self) -> Waveforms {
        Arc::clone(&self.waveforms)
    }

    /// Evaluates the courses described by `descriptions` at `t` into `u`,
    /// locking the waveforms only when an input follows one.
    fn inputs_at(&mut self, t: f64, descriptions: &[f64]) {
        let mut table = None;
        for (i, (u, d)) in self.u.iter_mut().zip(descriptions.chunks_exact(PER_INPUT)).enumerate() {
            *u = if d[5] == 0.0 {
                Curve {
                    c: [d[0], d[1], d[2]],
                    nodes: [d[3], d[4]],
                }
                .at(t)
            } else {
                table.get_or_insert_with(|| lock(&self.waveforms))[i].at(t)
            };
        }
    }
}

impl Model for Driven {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn fork(&self) -> Box<dyn Model> {
        Box::new(Driven::new(self.inner.fork()))
    }

    fn initial_state(&mut self, x: &mut [f64], xd: &mut [f64]) {
        self.inner.initial_state(x, xd);
    }

    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        self.inputs_at(s.t, s.u);
        self.inner.derivatives(StateRef { u: &self.u, ..s }, dx);
    }

    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        self.inputs_at(s.t, s.u);
        self.inner.outputs(StateRef { u: &self.u, ..s }, y);
    }

    fn major_outputs(&mut self, s: &mut MajorStep<'_>) -> Result<(), NonFinite> {
        self.inputs_at(s.t, s.u);
        self.inner.major_outputs(&mut s.with_inputs(&self.u))
    }

    fn update(&mut self, s: &mut MajorStep<'_>) {
        self.inputs_at(s.t, s.u);
        self.inner.update(&mut s.with_inputs(&self.u));
    }

    fn zero_crossings(&mut self, s: StateRef<'_>, z: &mut [f64]) {
        self.inputs_at(s.t, s.u);
        self.inner.zero_crossings(StateRef { u: &self.u, ..s }, z);
    }

    fn jacobian(&mut self, s: StateRef<'_>, jac: &mut [f64]) -> bool {
        self.inputs_at(s.t, s.u);
        self.inner.jacobian(StateRef { u: &self.u, ..s }, jac)
    }

    fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
        self.inner.sparsity()
    }

    fn inner_events(&self) -> u64 {
        self.inner.inner_events()
    }

    fn restore_inner(&mut self, events: u64) -> bool {
        self.inner.restore_inner(events)
    }

    fn revert_inner(&mut self) -> bool {
        self.inner.revert_inner()
    }

    fn export_inner(&mut self, out: &mut Vec<u8>) -> bool {
        self.inner.export_inner(out)
    }

    fn import_inner(&mut self, bytes: &[u8], events: u64) -> bool {
        self.inner.import_inner(bytes, events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_models::diagram;

    #[test]
    fn the_inner_model_sees_the_course_at_the_time_of_each_evaluation() {
        let gain = diagram::compile_str(
            r#"{"blocks": [{"id": "u", "type": "Inport", "params": {"default": 3}},
              {"id": "k", "type": "Gain", "params": {"gain": 2}}, {"id": "y", "type": "Output"}],
             "links": [{"from": "u", "to": "k"}, {"from": "k", "to": "y"}]}"#,
        )
        .unwrap()
        .model;
        let mut m = Driven::new(Box::new(gain));
        let at = |m: &mut Driven, t: f64, u: &[f64]| {
            let mut y = [0.0];
            m.outputs(StateRef { t, x: &[], xd: &[], u }, &mut y);
            y[0]
        };
        let defaults: Vec<f64> = m.layout().inputs.iter().map(|v| v.default).collect();
        assert_eq!(at(&mut m, 4.0, &defaults), 6.0);
        let mut course = Course {
            curve: Curve::through(&[(1.0, 1.0), (0.0, 0.0)]),
            ..Course::default()
        };
        let mut u = [0.0; PER_INPUT];
        encode(&course, &mut u);
        assert_eq!(at(&mut m, 0.25, &u), 0.5);
        // Following a waveform: 3 t² through samples 0.5 apart.
        course.waveform.begin(0.0, 0.5);
        for k in 0..4 {
            course.waveform.push(3.0 * (0.5 * k as f64).powi(2));
        }
        encode(&course, &mut u);
        lock(&m.waveforms())[0] = course.waveform.clone();
        assert!((at(&mut m, 0.75, &u) - 2.0 * 3.0 * 0.5625).abs() < 1e-14);
    }
}
