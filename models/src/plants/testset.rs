//! The stiff problems of the Test Set for IVP Solvers (Mazzia and
//! Magherini, release 2.4) as models: ROBER, HIRES, VDPOL, VDPOLM, OREGO,
//! E5 and POLLU. Their states are their outputs, named `y1`, `y2`, ...

use crate::model::{Layout, Model, StateRef, Variable};

/// `f(y)` (or its Jacobian) written into the second slice.
type Function = fn(&[f64], &mut [f64]);

/// One test problem: `y' = f(y)` from `y0` at t = 0 to `t_end`.
#[derive(Clone)]
pub struct TestProblem {
    name: &'static str,
    layout: Layout,
    y0: &'static [f64],
    rhs: Function,
    jacobian: Option<Function>,
    /// End time of the published reference solution.
    pub t_end: f64,
    /// The published solution at `t_end` (RADAU5 in extended precision).
    pub reference: &'static [f64],
}

impl TestProblem {
    /// The problem's name in the test set (upper case).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Drops the analytic Jacobian (so that integrators difference it).
    pub fn without_jacobian(mut self) -> Self {
        self.jacobian = None;
        self
    }
}

/// Significant correct digits of `y` against `reference`:
/// `-log10(max_i |y_i - ref_i| / |ref_i|)` over the components with
/// `|ref_i| > atol`, as the test set defines them.
pub fn significant_digits(y: &[f64], reference: &[f64], atol: f64) -> f64 {
    let worst = y
        .iter()
        .zip(reference)
        .filter(|(_, r)| r.abs() > atol)
        .map(|(v, r)| ((v - r) / r).abs())
        .fold(0.0, f64::max);
    -worst.log10()
}

/// The names of the problems.
pub const NAMES: [&str; 7] = ["ROBER", "HIRES", "VDPOL", "VDPOLM", "OREGO", "E5", "POLLU"];

/// The problem named `name` (any case), if there is one.
pub fn problem(name: &str) -> Option<TestProblem> {
    let (name, y0, rhs, jacobian, t_end, reference): (&str, &[f64], Function, Option<Function>, f64, &[f64]) =
        match name.to_uppercase().as_str() {
            "ROBER" => (
                "ROBER",
                &[1.0, 0.0, 0.0],
                rober,
                Some(rober_jacobian),
                1e11,
                &REFERENCE_ROBER,
            ),
            "HIRES" => ("HIRES", &HIRES_Y0, hires, None, 321.8122, &REFERENCE_HIRES),
            "VDPOL" => ("VDPOL", &[2.0, 0.0], vdpol, None, 2.0, &REFERENCE_VDPOL),
            "VDPOLM" => ("VDPOLM", &[2.0, 0.0], vdpolm, None, 2000.0, &REFERENCE_VDPOLM),
            "OREGO" => ("OREGO", &[1.0, 2.0, 3.0], orego, None, 360.0, &REFERENCE_OREGO),
            "E5" => ("E5", &[1.76e-3, 0.0, 0.0, 0.0], e5, None, 1e13, &REFERENCE_E5),
            "POLLU" => ("POLLU", &POLLU_Y0, pollu, None, 60.0, &REFERENCE_POLLU),
            _ => return None,
        };
    let names: Vec<String> = (1..=y0.len()).map(|i| format!("y{i}")).collect();
    Some(TestProblem {
        name,
        layout: Layout {
            outputs: names.iter().map(Variable::new).collect(),
            states: names,
            ..Layout::default()
        },
        y0,
        rhs,
        jacobian,
        t_end,
        reference,
    })
}

impl Model for TestProblem {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn pure_derivatives(&self) -> bool {
        true
    }

    fn fork(&self) -> Box<dyn Model> {
        Box::new(self.clone())
    }

    fn initial_state(&mut self, x: &mut [f64], _: &mut [f64]) {
        x.copy_from_slice(self.y0);
    }

    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        (self.rhs)(s.x, dx);
    }

    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        y.copy_from_slice(s.x);
    }

    fn jacobian(&mut self, s: StateRef<'_>, jac: &mut [f64]) -> bool {
        self.jacobian.map(|j| j(s.x, jac)).is_some()
    }
}

// The test set's reference solutions at t_end (its `solut` subroutines).
const REFERENCE_ROBER: [f64; 3] = [2.083340149701255e-08, 8.333360770334713e-14, 0.999999979166505];
const REFERENCE_HIRES: [f64; 8] = [
    0.0007371312573325668,
    0.0001442485726316185,
    5.888729740967575e-05,
    0.001175651343283149,
    0.002386356198831331,
    0.006238968252742796,
    0.002849998395185769,
    0.002850001604814231,
];
const REFERENCE_VDPOL: [f64; 2] = [1.706167732170483, -0.8928097010247975];
const REFERENCE_VDPOLM: [f64; 2] = [1.706167732170469, -0.0008928097010248125];
const REFERENCE_OREGO: [f64; 3] = [1.000814870318523, 1228.178521549917, 132.0554942846706];
const REFERENCE_E5: [f64; 4] = [1.152903278711829e-291, 8.86765551764212e-23, 8.854814626268838e-23, 0.0];
const REFERENCE_POLLU: [f64; 20] = [
    0.05646255480022769,
    0.1342484130422339,
    4.139734331099427e-09,
    0.005523140207484359,
    2.018977262302196e-07,
    1.464541863493966e-07,
    0.07784249118997964,
    0.3245075353396018,
    0.007494013383880406,
    1.622293157301561e-08,
    1.135863833257075e-08,
    0.002230505975721359,
    0.000208716288279863,
    1.396921016840158e-05,
    0.008964884856898295,
    4.352846369330103e-18,
    0.006899219696263405,
    0.0001007803037365946,
    1.772146513969984e-06,
    5.682943292316392e-05,
];
const HIRES_Y0: [f64; 8] = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0057];

/// Robertson's chemical kinetics.
fn rober(y: &[f64], f: &mut [f64]) {
    f[0] = -0.04 * y[0] + 1e4 * y[1] * y[2];
    f[2] = 3e7 * y[1] * y[1];
    f[1] = -f[0] - f[2];
}

/// ROBER's Jacobian, column-major.
fn rober_jacobian(y: &[f64], j: &mut [f64]) {
    j.copy_from_slice(&[
        -0.04,
        0.04,
        0.0,
        1e4 * y[2],
        -1e4 * y[2] - 6e7 * y[1],
        6e7 * y[1],
        1e4 * y[1],
        -1e4 * y[1],
        0.0,
    ]);
}

/// High Irradiance Responses of photomorphogenesis.
fn hires(y: &[f64], f: &mut [f64]) {
    f[0] = -1.71 * y[0] + 0.43 * y[1] + 8.32 * y[2] + 0.0007;
    f[1] = 1.71 * y[0] - 8.75 * y[1];
    f[2] = -10.03 * y[2] + 0.43 * y[3] + 0.035 * y[4];
    f[3] = 8.32 * y[1] + 1.71 * y[2] - 1.12 * y[3];
    f[4] = -1.745 * y[4] + 0.43 * y[5] + 0.43 * y[6];
    f[5] = -280.0 * y[5] * y[7] + 0.69 * y[3] + 1.71 * y[4] - 0.43 * y[5] + 0.69 * y[6];
    f[6] = 280.0 * y[5] * y[7] - 1.81 * y[6];
    f[7] = -f[6];
}

/// Van der Pol's oscillator, eps = 1e-6 (time not rescaled).
fn vdpol(y: &[f64], f: &mut [f64]) {
    f[0] = y[1];
    f[1] = ((1.0 - y[0] * y[0]) * y[1] - y[0]) / 1e-6;
}

/// Van der Pol's oscillator, mu = 1000 (the test set's modified form).
fn vdpolm(y: &[f64], f: &mut [f64]) {
    f[0] = y[1];
    f[1] = 1e3 * (1.0 - y[0] * y[0]) * y[1] - y[0];
}

/// The Oregonator (Belousov–Zhabotinskii reaction).
fn orego(y: &[f64], f: &mut [f64]) {
    f[0] = 77.27 * (y[1] + y[0] * (1.0 - 8.375e-6 * y[0] - y[1]));
    f[1] = (y[2] - (1.0 + y[0]) * y[1]) / 77.27;
    f[2] = 0.161 * (y[0] - y[2]);
}

/// A chemical pyrolysis model (Enright, Hull and Lindberg's E5).
fn e5(y: &[f64], f: &mut [f64]) {
    let p1 = 7.89e-10 * y[0];
    let p2 = 1.1e7 * y[0] * y[2];
    let p3 = 1.13e9 * y[1] * y[2];
    let p4 = 1.13e3 * y[3];
    f[0] = -p1 - p2;
    f[1] = p1 - p3;
    f[3] = p2 - p4;
    f[2] = f[1] - f[3];
}

const POLLU_Y0: [f64; 20] = [
    0.0, 0.2, 0.0, 0.04, 0.0, 0.0, 0.1, 0.3, 0.01, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.007, 0.0, 0.0, 0.0,
];

/// Rate constants of POLLU's 25 reactions.
const POLLU_K: [f64; 25] = [
    0.35, 26.6, 1.23e4, 8.6e-4, 8.2e-4, 1.5e4, 1.3e-4, 2.4e4, 1.65e4, 9e3, 2.2e-2, 1.2e4, 1.88, 1.63e4, 4.8e6, 3.5e-4,
    1.75e-2, 1e8, 4.44e11, 1.24e3, 2.1, 5.78, 4.74e-2, 1.78e3, 3.12,
];

/// The air pollution model of the Dutch National Institute of Public
/// Health (Verwer), 20 species.
fn pollu(y: &[f64], f: &mut [f64]) {
    let k = &POLLU_K;
    let r = [
        k[0] * y[0],
        k[1] * y[1] * y[3],
        k[2] * y[4] * y[1],
        k[3] * y[6],
        k[4] * y[6],
        k[5] * y[6] * y[5],
        k[6] * y[8],
        k[7] * y[8] * y[5],
        k[8] * y[10] * y[1],
        k[9] * y[10] * y[0],
        k[10] * y[12],
        k[11] * y[9] * y[1],
        k[12] * y[13],
        k[13] * y[0] * y[5],
        k[14] * y[2],
        k[15] * y[3],
        k[16] * y[3],
        k[17] * y[15],
        k[18] * y[15],
        k[19] * y[16] * y[5],
        k[20] * y[18],
        k[21] * y[18],
        k[22] * y[0] * y[3],
        k[23] * y[18] * y[0],
        k[24] * y[19],
    ];
    f[0] = -r[0] - r[9] - r[13] - r[22] - r[23] + r[1] + r[2] + r[8] + r[10] + r[11] + r[21] + r[24];
    f[1] = -r[1] - r[2] - r[8] - r[11] + r[0] + r[20];
    f[2] = -r[14] + r[0] + r[16] + r[18] + r[21];
    f[3] = -r[1] - r[15] - r[16] - r[22] + r[14];
    f[4] = -r[2] + 2.0 * r[3] + r[5] + r[6] + r[12] + r[19];
    f[5] = -r[5] - r[7] - r[13] - r[19] + r[2] + 2.0 * r[17];
    f[6] = -r[3] - r[4] - r[5] + r[12];
    f[7] = r[3] + r[4] + r[5] + r[6];
    f[8] = -r[6] - r[7];
    f[9] = -r[11] + r[6] + r[8];
    f[10] = -r[8] - r[9] + r[7] + r[10];
    f[11] = r[8];
    f[12] = -r[10] + r[9];
    f[13] = -r[12] + r[11];
    f[14] = r[13];
    f[15] = -r[17] - r[18] + r[15];
    f[16] = -r[19];
    f[17] = r[19];
    f[18] = -r[20] - r[21] - r[23] + r[22] + r[24];
    f[19] = -r[24] + r[23];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rober_jacobian_matches_differences() {
        let y = [0.9, 3e-5, 0.1];
        let mut jac = [0.0; 9];
        rober_jacobian(&y, &mut jac);
        let mut f0 = [0.0; 3];
        rober(&y, &mut f0);
        for j in 0..3 {
            let mut yp = y;
            let h = 1e-7 * y[j].abs().max(1e-9);
            yp[j] += h;
            let mut f1 = [0.0; 3];
            rober(&yp, &mut f1);
            for i in 0..3 {
                let d = (f1[i] - f0[i]) / h;
                assert!(
                    (d - jac[i + 3 * j]).abs() <= 1e-4 * d.abs().max(1.0),
                    "({i},{j}): {d} vs {}",
                    jac[i + 3 * j]
                );
            }
        }
    }

    #[test]
    fn every_name_is_a_problem() {
        for name in NAMES {
            let p = problem(&name.to_lowercase()).unwrap();
            assert_eq!(p.name(), name);
            assert_eq!(p.layout().states.len(), p.y0.len());
        }
        assert!(problem("nope").is_none());
    }
}
