//! A battery pack of `n` cells in series on a cooling plate, sized by its
//! name (`pack-400`: 400 cells, 2000 states). Each cell is an equivalent
//! circuit, its open-circuit voltage a function of its state of charge, in
//! series with a resistance that falls as the cell warms and two RC pairs
//! (a fast one, 0.2 ms: the stiff mode, and a slow one, 40 s), and a
//! lumped thermal node on its segment of the plate; plate segments conduct
//! to their neighbours and to the coolant. Per cell `i`, with the pack
//! current `I` (A, positive discharging):
//!
//! ```text
//! dSOC_i/dt = −I / (3600 Q_i)
//! dv1_i/dt  = I / C1 − v1_i / (R1 C1)
//! dv2_i/dt  = I / C2 − v2_i / (R2 C2)
//! Cth dT_i/dt = I² R0_i(T_i) + v1_i² / R1 + v2_i² / R2 − (T_i − P_i) / Rcp
//! Cp dP_i/dt  = (T_i − P_i) / Rcp + (P_{i−1} − 2 P_i + P_{i+1}) / Rpp − (P_i − T_cool) / Rpc
//! V_i = OCV(SOC_i) − v1_i − v2_i − I R0_i(T_i),  R0_i(T) = R0_i exp(B (1/(T + 273.15) − 1/298.15))
//! ```
//!
//! (the end segments conduct to one neighbour). The cells differ a little,
//! as real ones do: capacity by ±2 % and resistance by ±5 %, by a fixed
//! pattern (no randomness), so their voltages and temperatures spread. The
//! Jacobian's structure is declared: each state touches at most four
//! others.

use crate::model::{Layout, Model, StateRef, Variable};

/// The most cells a pack may have.
pub const MAX_CELLS: usize = 20_000;

/// The built-in name's prefix: `pack-400` is a pack of 400 cells.
pub const PREFIX: &str = "pack-";

/// States per cell: state of charge, the two RC voltages, the cell's
/// temperature and its plate segment's.
pub const STATES_PER_CELL: usize = 5;

const SOC: usize = 0;
const V1: usize = 1;
const V2: usize = 2;
const CELL: usize = 3;
const PLATE: usize = 4;

/// Nominal capacity (Ah).
const CAPACITY: f64 = 50.0;
/// Nominal series resistance at 25 °C (Ω).
const R0: f64 = 1.5e-3;
/// Its temperature coefficient `B` (K).
const R0_B: f64 = 3000.0;
/// The fast RC pair: 1 mΩ, 0.2 F (0.2 ms).
const R1: f64 = 1e-3;
const C1: f64 = 0.2;
/// The slow RC pair: 2 mΩ, 20 kF (40 s).
const R2: f64 = 2e-3;
const C2: f64 = 2e4;
/// Cell heat capacity (J/K) and its resistance to the plate (K/W).
const CELL_CAPACITY: f64 = 1000.0;
const CELL_TO_PLATE: f64 = 0.5;
/// Plate segment heat capacity (J/K), between segments and to the coolant (K/W).
const PLATE_CAPACITY: f64 = 2.0;
const PLATE_TO_PLATE: f64 = 0.05;
const PLATE_TO_COOLANT: f64 = 0.2;
/// The initial state of charge and temperature (°C).
const SOC_START: f64 = 0.8;
const TEMPERATURE_START: f64 = 25.0;

/// The open-circuit voltage (V) at state of charge `soc` (0 to 1).
pub fn open_circuit_voltage(soc: f64) -> f64 {
    3.0 + soc * (1.05 + soc * (-0.45 + soc * 0.35))
}

/// A battery pack of `n` cells in series.
#[derive(Clone, Debug)]
pub struct Pack {
    layout: Layout,
    /// Each cell's capacity (As) and resistance at 25 °C (Ω).
    charge: Vec<f64>,
    resistance: Vec<f64>,
}

impl Pack {
    /// A pack of `n` cells (1 to [`MAX_CELLS`]).
    pub fn new(n: usize) -> Self {
        assert!((1..=MAX_CELLS).contains(&n), "a pack has 1 to {MAX_CELLS} cells");
        let states = (0..n)
            .flat_map(|i| ["soc", "v1", "v2", "t_cell", "t_plate"].map(|s| format!("cell[{i}].{s}")))
            .collect();
        let output = |name: &str, unit: &str, range: (f64, f64)| Variable {
            unit: Some(unit.into()),
            range: Some(range),
            ..Variable::new(name)
        };
        let cells = n as f64;
        Pack {
            layout: Layout {
                states,
                inputs: vec![
                    Variable {
                        unit: Some("A".into()),
                        ..Variable::new("current")
                    },
                    Variable {
                        unit: Some("degC".into()),
                        default: TEMPERATURE_START,
                        ..Variable::new("coolant_temp")
                    },
                ],
                outputs: vec![
                    output("pack_voltage", "V", (0.0, 5.0 * cells)),
                    output("soc", "%", (-10.0, 110.0)),
                    output("cell_voltage_min", "V", (0.0, 5.0)),
                    output("cell_voltage_max", "V", (0.0, 5.0)),
                    output("cell_temp_min", "degC", (-60.0, 200.0)),
                    output("cell_temp_max", "degC", (-60.0, 200.0)),
                ],
                ..Layout::default()
            },
            charge: (0..n)
                .map(|i| 3600.0 * CAPACITY * (1.0 + 0.02 * (2.3 * i as f64 + 0.7).sin()))
                .collect(),
            resistance: (0..n)
                .map(|i| R0 * (1.0 + 0.05 * (1.7 * i as f64 + 0.3).cos()))
                .collect(),
        }
    }

    /// The pack a built-in name (`pack-N`) asks for, if it is one: the
    /// number of cells must be 1 to [`MAX_CELLS`].
    pub fn named(name: &str) -> Option<Self> {
        super::sized(name, PREFIX, MAX_CELLS).map(Pack::new)
    }

    /// The number of cells.
    pub fn cells(&self) -> usize {
        self.charge.len()
    }

    /// Cell `i`'s series resistance at `temperature` (°C).
    fn series_resistance(&self, i: usize, temperature: f64) -> f64 {
        self.resistance[i] * (R0_B * (1.0 / (temperature + 273.15) - 1.0 / 298.15)).exp()
    }

    /// Cell `i`'s terminal voltage in state `x` at current `current`.
    fn cell_voltage(&self, x: &[f64], i: usize, current: f64) -> f64 {
        let c = &x[STATES_PER_CELL * i..STATES_PER_CELL * (i + 1)];
        open_circuit_voltage(c[SOC]) - c[V1] - c[V2] - current * self.series_resistance(i, c[CELL])
    }
}

impl Model for Pack {
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
        for cell in x.chunks_exact_mut(STATES_PER_CELL) {
            cell.copy_from_slice(&[SOC_START, 0.0, 0.0, TEMPERATURE_START, TEMPERATURE_START]);
        }
    }

    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        let (current, coolant) = (s.u[0], s.u[1]);
        let n = self.cells();
        let plate = |i: usize| s.x[STATES_PER_CELL * i + PLATE];
        for i in 0..n {
            let c = &s.x[STATES_PER_CELL * i..STATES_PER_CELL * (i + 1)];
            let d = &mut dx[STATES_PER_CELL * i..STATES_PER_CELL * (i + 1)];
            d[SOC] = -current / self.charge[i];
            d[V1] = current / C1 - c[V1] / (R1 * C1);
            d[V2] = current / C2 - c[V2] / (R2 * C2);
            let heat = current * current * self.series_resistance(i, c[CELL]) + c[V1] * c[V1] / R1 + c[V2] * c[V2] / R2;
            let to_plate = (c[CELL] - c[PLATE]) / CELL_TO_PLATE;
            d[CELL] = (heat - to_plate) / CELL_CAPACITY;
            let mut conducted = 0.0;
            if i > 0 {
                conducted += plate(i - 1) - c[PLATE];
            }
            if i + 1 < n {
                conducted += plate(i + 1) - c[PLATE];
            }
            let to_coolant = (c[PLATE] - coolant) / PLATE_TO_COOLANT;
            d[PLATE] = (to_plate + conducted / PLATE_TO_PLATE - to_coolant) / PLATE_CAPACITY;
        }
    }

    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        let current = s.u[0];
        let (mut total, mut soc) = (0.0, 0.0);
        let (mut v_min, mut v_max) = (f64::INFINITY, f64::NEG_INFINITY);
        let (mut t_min, mut t_max) = (f64::INFINITY, f64::NEG_INFINITY);
        for i in 0..self.cells() {
            let v = self.cell_voltage(s.x, i, current);
            let t = s.x[STATES_PER_CELL * i + CELL];
            total += v;
            soc += s.x[STATES_PER_CELL * i + SOC];
            (v_min, v_max) = (v_min.min(v), v_max.max(v));
            (t_min, t_max) = (t_min.min(t), t_max.max(t));
        }
        y.copy_from_slice(&[total, 100.0 * soc / self.cells() as f64, v_min, v_max, t_min, t_max]);
    }

    fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
        let n = self.cells();
        let mut columns = Vec::with_capacity(STATES_PER_CELL * n);
        for i in 0..n {
            let at = |k: usize| STATES_PER_CELL * i + k;
            columns.push(vec![]);
            columns.push(vec![at(V1), at(CELL)]);
            columns.push(vec![at(V2), at(CELL)]);
            columns.push(vec![at(CELL), at(PLATE)]);
            let mut plate = vec![at(CELL), at(PLATE)];
            plate.extend((i > 0).then(|| at(PLATE) - STATES_PER_CELL));
            plate.extend((i + 1 < n).then(|| at(PLATE) + STATES_PER_CELL));
            columns.push(plate);
        }
        Some(columns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pack's derivatives at `x` with `u`.
    fn derivatives(pack: &mut Pack, x: &[f64], u: &[f64]) -> Vec<f64> {
        let mut dx = vec![0.0; x.len()];
        pack.derivatives(StateRef { t: 0.0, x, xd: &[], u }, &mut dx);
        dx
    }

    #[test]
    fn the_declared_structure_holds_every_dependency() {
        // Perturb each state alone: every derivative that moves is in its
        // column, at a state where every term is alive.
        let mut pack = Pack::new(4);
        let n = pack.layout().states.len();
        let x: Vec<f64> = (0..n).map(|k| 20.0 + 0.37 * k as f64 + 0.1 * (k % 5) as f64).collect();
        let u = [120.0, 20.0];
        let base = derivatives(&mut pack, &x, &u);
        let columns = pack.sparsity().unwrap();
        for (j, column) in columns.iter().enumerate() {
            let mut moved = x.clone();
            moved[j] += 1e-3;
            let d = derivatives(&mut pack, &moved, &u);
            for i in 0..n {
                if d[i] != base[i] {
                    assert!(i == j || column.contains(&i), "d{i} depends on x{j}, not declared");
                }
            }
        }
    }

    #[test]
    fn at_rest_the_pack_shows_its_open_circuit_voltage_and_keeps_its_charge() {
        let mut pack = Pack::new(96);
        let n = pack.layout().states.len();
        let mut x = vec![0.0; n];
        pack.initial_state(&mut x, &mut []);
        let u = [0.0, TEMPERATURE_START];
        assert!(derivatives(&mut pack, &x, &u).iter().all(|d| *d == 0.0));
        let mut y = vec![0.0; 6];
        pack.outputs(
            StateRef {
                t: 0.0,
                x: &x,
                xd: &[],
                u: &u,
            },
            &mut y,
        );
        let ocv = open_circuit_voltage(SOC_START);
        assert!((y[0] - 96.0 * ocv).abs() < 1e-9, "{y:?}");
        assert_eq!((y[2], y[3]), (ocv, ocv));
    }

    #[test]
    fn a_discharge_drains_each_cell_by_its_capacity() {
        // 100 A drains a 50 Ah cell by 1/1800 of its charge per second.
        let mut pack = Pack::new(3);
        let n = pack.layout().states.len();
        let mut x = vec![0.0; n];
        pack.initial_state(&mut x, &mut []);
        let d = derivatives(&mut pack, &x, &[100.0, TEMPERATURE_START]);
        for i in 0..3 {
            let want = -100.0 / pack.charge[i];
            assert_eq!(d[STATES_PER_CELL * i + SOC], want);
            assert!((want * 1800.0 + 1.0).abs() < 0.03, "cell {i}: {want}");
        }
    }

    #[test]
    fn names_give_their_size_within_bounds() {
        assert_eq!(Pack::named("pack-400").map(|p| p.cells()), Some(400));
        for bad in ["pack-0", "pack-", "pack-+4", "pack-20001", "pack"] {
            assert!(Pack::named(bad).is_none(), "{bad}");
        }
    }
}
