//! Fixed-step explicit Runge–Kutta methods. Methods are data (Butcher
//! tableaus); one stepping routine serves them all.

use std::fmt;
use std::str::FromStr;

use crate::named::UnknownName;
use crate::ode::OdeSystem;
use crate::step::{FixedStepper, StepReport};

/// A Butcher tableau of an explicit method with at most four stages.
pub struct Tableau {
    /// Nodes c_i (fractions of the step).
    pub c: &'static [f64],
    /// Stage coefficients a_ij, row i holding j < i.
    pub a: &'static [&'static [f64]],
    /// Weights b_i.
    pub b: &'static [f64],
}

/// Forward Euler, order 1.
pub const EULER: Tableau = Tableau {
    c: &[0.0],
    a: &[&[]],
    b: &[1.0],
};
/// Heun's method (explicit trapezoidal), order 2.
pub const HEUN: Tableau = Tableau {
    c: &[0.0, 1.0],
    a: &[&[], &[1.0]],
    b: &[0.5, 0.5],
};
/// The classic Runge–Kutta method, order 4.
pub const RK4: Tableau = Tableau {
    c: &[0.0, 0.5, 0.5, 1.0],
    a: &[&[], &[0.5], &[0.0, 0.5], &[0.0, 0.0, 1.0]],
    b: &[1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0],
};

/// The explicit methods by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// Forward Euler.
    Euler,
    /// Heun.
    Heun,
    /// Classic fourth-order Runge–Kutta.
    Rk4,
}

impl Method {
    /// All methods, for listing valid names.
    pub const ALL: [Method; 3] = [Method::Euler, Method::Heun, Method::Rk4];

    /// The method's tableau.
    pub fn tableau(self) -> &'static Tableau {
        match self {
            Method::Euler => &EULER,
            Method::Heun => &HEUN,
            Method::Rk4 => &RK4,
        }
    }

    /// The name used in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Method::Euler => "euler",
            Method::Heun => "heun",
            Method::Rk4 => "rk4",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Method {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        crate::named::by_name(&Method::ALL, Method::name, s, "solver")
    }
}

/// An explicit integrator with its stage buffers, allocated once.
pub struct ExplicitRk {
    tableau: &'static Tableau,
    stages: Vec<Vec<f64>>,
    scratch: Vec<f64>,
    evaluations: u64,
}

impl ExplicitRk {
    /// An integrator of `method` for models with `n` continuous states.
    pub fn new(method: Method, n: usize) -> Self {
        let tableau = method.tableau();
        ExplicitRk {
            tableau,
            stages: vec![vec![0.0; n]; tableau.b.len()],
            scratch: vec![0.0; n],
            evaluations: 0,
        }
    }
}

impl FixedStepper for ExplicitRk {
    /// Real-time safe: `stages` evaluations of `f`, no allocation.
    fn step(&mut self, system: &mut dyn OdeSystem, t: f64, h: f64, y: &mut [f64]) -> StepReport {
        let tab = self.tableau;
        for i in 0..tab.b.len() {
            self.scratch.copy_from_slice(y);
            for (j, &a) in tab.a[i].iter().enumerate() {
                if a != 0.0 {
                    for (s, k) in self.scratch.iter_mut().zip(&self.stages[j]) {
                        *s += h * a * k;
                    }
                }
            }
            system.rhs(t + tab.c[i] * h, &self.scratch, &mut self.stages[i]);
            self.evaluations += 1;
        }
        for (i, &b) in tab.b.iter().enumerate() {
            for (yi, k) in y.iter_mut().zip(&self.stages[i]) {
                *yi += h * b * k;
            }
        }
        StepReport::DIRECT
    }

    fn evaluations(&self) -> u64 {
        self.evaluations
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ode::ModelOde;
    use tandem_models::{Layout, Model, StateRef};

    /// x' = -x, a model written in Rust.
    struct Decay(Layout);
    impl Model for Decay {
        fn layout(&self) -> &Layout {
            &self.0
        }
        fn fork(&self) -> Box<dyn Model> {
            Box::new(Decay(self.0.clone()))
        }
        fn initial_state(&mut self, x: &mut [f64], _: &mut [f64]) {
            x[0] = 1.0;
        }
        fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
            dx[0] = -s.x[0];
        }
        fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
            y[0] = s.x[0];
        }
    }

    /// Global error at t = 1 for step h.
    fn error(method: Method, h: f64) -> f64 {
        let mut model = Decay(Layout {
            states: vec!["x".into()],
            ..Layout::default()
        });
        let mut rk = ExplicitRk::new(method, 1);
        let mut x = [1.0];
        let n = (1.0 / h).round() as usize;
        for i in 0..n {
            let mut system = ModelOde {
                model: &mut model,
                xd: &[],
                u: &[],
            };
            rk.step(&mut system, i as f64 * h, h, &mut x);
        }
        (x[0] - (-1.0f64).exp()).abs()
    }

    #[test]
    fn methods_converge_at_their_order() {
        for (method, order) in [(Method::Euler, 1.0), (Method::Heun, 2.0), (Method::Rk4, 4.0)] {
            let observed = (error(method, 0.01) / error(method, 0.005)).log2();
            assert!((observed - order).abs() < 0.1, "{method}: observed order {observed}");
        }
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_valid_ones() {
        for m in Method::ALL {
            assert_eq!(m.name().parse::<Method>().unwrap(), m);
        }
        assert!("rk45"
            .parse::<Method>()
            .unwrap_err()
            .to_string()
            .contains("euler, heun, rk4"));
    }
}
