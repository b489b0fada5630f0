//! A model whose inputs follow curves in time: it takes the curves'
//! coefficients as its inputs (five per input of the model inside, held
//! over a communication step by the simulation) and evaluates each curve
//! at the time of every evaluation, so that the integrator's stages see
//! inputs that move with them instead of held ones.

use tandem_models::{Layout, Model, NonFinite, StateRef, Variable};

use crate::curve::Curve;

/// Values that describe one [`Curve`] among a driven model's inputs.
pub(crate) const PER_CURVE: usize = 5;

/// Writes `curve` into the five input values that describe it.
pub(crate) fn encode(curve: &Curve, into: &mut [f64]) {
    into[..3].copy_from_slice(&curve.c);
    into[3..PER_CURVE].copy_from_slice(&curve.nodes);
}

/// The model inside, its inputs replaced by the coefficients of their
/// curves.
pub(crate) struct Driven {
    inner: Box<dyn Model>,
    layout: Layout,
    /// The inner model's inputs at the time of the current evaluation.
    u: Vec<f64>,
}

impl Driven {
    /// Wraps `inner`; each curve starts constant at its input's default.
    pub(crate) fn new(inner: Box<dyn Model>) -> Driven {
        let mut layout = inner.layout().clone();
        let inputs = std::mem::take(&mut layout.inputs);
        let u = inputs.iter().map(|v| v.default).collect();
        for v in &inputs {
            let mut default = [0.0; PER_CURVE];
            encode(&Curve::constant(v.default), &mut default);
            for (k, d) in ["c0", "c1", "c2", "t0", "t1"].into_iter().zip(default) {
                layout.inputs.push(Variable {
                    default: d,
                    ..Variable::new(format!("{}#{k}", v.name))
                });
            }
        }
        Driven { inner, layout, u }
    }

    /// Evaluates the curves described by `coefficients` at `t` into `u`.
    fn inputs_at(&mut self, t: f64, coefficients: &[f64]) {
        for (u, c) in self.u.iter_mut().zip(coefficients.chunks_exact(PER_CURVE)) {
            let curve = Curve {
                c: [c[0], c[1], c[2]],
                nodes: [c[3], c[4]],
            };
            *u = curve.at(t);
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

    fn major_outputs(
        &mut self,
        t: f64,
        x: &[f64],
        xd: &mut [f64],
        u: &[f64],
        hits: &[bool],
        y: &mut [f64],
    ) -> Result<(), NonFinite> {
        self.inputs_at(t, u);
        self.inner.major_outputs(t, x, xd, &self.u, hits, y)
    }

    fn update(&mut self, t: f64, hits: &[bool], x: &mut [f64], xd: &mut [f64], u: &[f64]) {
        self.inputs_at(t, u);
        self.inner.update(t, hits, x, xd, &self.u);
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_models::diagram;

    #[test]
    fn the_inner_model_sees_the_curve_at_the_time_of_each_evaluation() {
        let gain = diagram::compile_str(
            r#"{"blocks": [{"id": "u", "type": "Inport", "params": {"default": 3}},
              {"id": "k", "type": "Gain", "params": {"gain": 2}}, {"id": "y", "type": "Output"}],
             "links": [{"from": "u", "to": "k"}, {"from": "k", "to": "y"}]}"#,
        )
        .unwrap()
        .model;
        let mut m = Driven::new(Box::new(gain));
        let defaults: Vec<f64> = m.layout().inputs.iter().map(|v| v.default).collect();
        let mut y = [0.0];
        m.outputs(
            StateRef {
                t: 4.0,
                x: &[],
                xd: &[],
                u: &defaults,
            },
            &mut y,
        );
        assert_eq!(y, [6.0]);
        let mut u = [0.0; PER_CURVE];
        encode(&Curve::through(&[(1.0, 1.0), (0.0, 0.0)]), &mut u);
        m.outputs(
            StateRef {
                t: 0.25,
                x: &[],
                xd: &[],
                u: &u,
            },
            &mut y,
        );
        assert_eq!(y, [0.5]);
    }
}
