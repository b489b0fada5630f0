//! A stiff battery-electric-vehicle drivetrain: a PMSM with its inverter's
//! dq current controller, a geared front-axle drive with elastic half-shafts,
//! tyres with relaxation-length slip dynamics, hydraulic brakes, longitudinal
//! vehicle motion, an equivalent-circuit battery with a DC-link capacitor and
//! two lumped thermal masses. 20 continuous states, no discrete states.
//!
//! The ECU is outside the plant: it sends a motor torque request; the brake
//! pressure and the road grade arrive as inputs too. The inverter's current
//! loops (τ_c = 0.1 ms: eigenvalues −1e4 /s) and the DC link (R0·C_dc =
//! 50 µs: ≈ −2e4 /s) make the model stiff, next to mechanical modes of
//! 6–200 /s (up to 5e3 /s braked at standstill) and thermal ones down to
//! 5e-5 /s: explicit RK4 needs steps below ≈ 0.14 ms where an implicit
//! method can take milliseconds.
//!
//! Every equation is smooth (C∞) in the states and finite at standstill:
//! signs are `tanh`, speeds in denominators are `sqrt(v² + v_min²)`, limits
//! are the soft knee `x (1 + (x/limit)⁴)^(−1/4)`. Only the inputs are
//! clamped (brake pressure to [0, 200] bar). `models/EV_PLANT.md` gives
//! the equations, the parameters with their units and rationale, the
//! measured eigenvalues and the drive cycle.
//!
//! # States
//!
//! | # | name | unit | meaning |
//! |---|------|------|---------|
//! | 0 | `i_d` | A | d-axis stator current (amplitude-invariant Park) |
//! | 1 | `i_q` | A | q-axis stator current |
//! | 2 | `u_int_d` | V | d-axis PI integrator output, `Ki ∫ e_d dt` |
//! | 3 | `u_int_q` | V | q-axis PI integrator output, `Ki ∫ e_q dt` |
//! | 4 | `omega_m` | rad/s | motor (rotor) speed |
//! | 5 | `theta_s` | rad | half-shaft twist, wheel side |
//! | 6 | `omega_f` | rad/s | front (driven) axle speed |
//! | 7 | `omega_r` | rad/s | rear axle speed |
//! | 8 | `kappa_f` | – | front longitudinal slip (lagged) |
//! | 9 | `kappa_r` | – | rear longitudinal slip (lagged) |
//! | 10 | `p_f` | bar | front brake circuit pressure |
//! | 11 | `p_r` | bar | rear brake circuit pressure |
//! | 12 | `v` | m/s | vehicle speed |
//! | 13 | `x` | m | distance travelled |
//! | 14 | `soc` | – | state of charge, 0…1 |
//! | 15 | `v_rc1` | V | voltage of the fast RC pair (τ1 = 10 s) |
//! | 16 | `v_rc2` | V | voltage of the slow RC pair (τ2 = 100 s) |
//! | 17 | `v_dc` | V | DC-link capacitor voltage |
//! | 18 | `temp_battery` | °C | battery temperature |
//! | 19 | `temp_motor` | °C | motor winding temperature |
//!
//! # Equations
//!
//! Motor (L_d = L_q = L, ω_e = p ω_m), with the controller's voltages
//! `u_d = Kp e_d + u_int_d − ω_e L i_q`, `u_q = Kp e_q + u_int_q + ω_e (L i_d + ψ)`,
//! `e = i* − i`, `Kp = L/τ_c`, `Ki = R/τ_c`:
//!
//! ```text
//! L di_d/dt = u_d − R i_d + ω_e L i_q          du_int_d/dt = Ki e_d
//! L di_q/dt = u_q − R i_q − ω_e L i_d − ω_e ψ  du_int_q/dt = Ki e_q
//! T_e = 1.5 p ψ i_q
//! T_cmd = T_req · knee(T_req ω_m / P_max),  i_q* = I_max · g(T_cmd / (1.5 p ψ I_max)),  i_d* = 0
//! knee(z) = (1 + z⁴)^(−1/4),  g(y) = y · knee(y)   (so |T_cmd ω_m| < P_max, |i_q*| < I_max)
//! ```
//!
//! Drivetrain, tyres, brakes and vehicle (r the wheel radius, G the gear ratio):
//!
//! ```text
//! T_s = k_s θ_s + c_s (ω_m/G − ω_f)                dθ_s/dt = ω_m/G − ω_f
//! J_m dω_m/dt = T_e − b_m ω_m − T_s/G
//! J_f dω_f/dt = T_s − T_bf − r F_f                 J_r dω_r/dt = −T_br − r F_r
//! V = sqrt(v² + v_min²)                            σ dκ/dt = ω r − v − V κ
//! F = μ F_z sin(C atan(B κ)) + k_low exp(−(v/v_low)²) (ω r − v)   (low-speed damping)
//! F_zf = m g cos α l_r/l,  F_zr = m g cos α l_f/l,  l = l_f + l_r
//! τ_b dp_f/dt = p⁺ − p_f,  τ_b dp_r/dt = β_r p⁺ − p_r,  T_b = k_b p tanh(ω/ω_b)
//! m dv/dt = F_f + F_r − ½ρ c_d A v sqrt(v² + v_ε²) − c_rr m g cos α tanh(v/v_roll) − m g sin α
//! dx/dt = v,  tan α = grade/100,  p⁺ = clamp(brake_pressure, 0, p_max)
//! ```
//!
//! Battery, DC link and temperatures:
//!
//! ```text
//! I_b = (OCV(soc) − v_rc1 − v_rc2 − v_dc) / R0,  OCV(s) = 350 + 38 s + 12 tanh(10 s)  [V]
//! d soc/dt = −I_b / (3600 Q)
//! dv_rck/dt = I_b/C_k − v_rck/(R_k C_k),  C_k = τ_k/R_k
//! C_dc dv_dc/dt = I_b − P_el / V⁺,  P_el = T_e ω_m + 1.5 R (i_d² + i_q²),  V⁺ = ½(v_dc + sqrt(v_dc² + V_ε²))
//! C_b dT_b/dt = R0 I_b² + v_rc1²/R1 + v_rc2²/R2 − (T_b − T_amb)/R_b
//! C_m dT_m/dt = 1.5 R (i_d² + i_q²) − (T_m − T_amb)/R_m
//! ```

use std::sync::Arc;

use serde_json::Value;

use crate::model::{Definition, Layout, Model, RetuneError, StateRef, Variable};

const I_D: usize = 0;
const I_Q: usize = 1;
const U_INT_D: usize = 2;
const U_INT_Q: usize = 3;
const OMEGA_M: usize = 4;
const THETA_S: usize = 5;
const OMEGA_F: usize = 6;
const OMEGA_R: usize = 7;
const KAPPA_F: usize = 8;
const KAPPA_R: usize = 9;
const P_F: usize = 10;
const P_R: usize = 11;
const V: usize = 12;
const X: usize = 13;
const SOC: usize = 14;
const V_RC1: usize = 15;
const V_RC2: usize = 16;
const V_DC: usize = 17;
const TEMP_BATTERY: usize = 18;
const TEMP_MOTOR: usize = 19;

/// Number of continuous states.
pub const STATE_COUNT: usize = 20;

/// State names, in state order (units in the module documentation).
const STATE_NAMES: [&str; STATE_COUNT] = [
    "i_d",
    "i_q",
    "u_int_d",
    "u_int_q",
    "omega_m",
    "theta_s",
    "omega_f",
    "omega_r",
    "kappa_f",
    "kappa_r",
    "p_f",
    "p_r",
    "v",
    "x",
    "soc",
    "v_rc1",
    "v_rc2",
    "v_dc",
    "temp_battery",
    "temp_motor",
];

/// For each derivative `ẋ_i`, the states it reads (the Jacobian's row
/// pattern). Rows 0 and 1 list `ω_m` and the other current although the
/// feed-forward cancels those terms exactly: structurally they are there.
const ROW_DEPENDENCIES: [&[usize]; STATE_COUNT] = [
    &[I_D, I_Q, U_INT_D, OMEGA_M],                 // i_d
    &[I_D, I_Q, U_INT_Q, OMEGA_M],                 // i_q
    &[I_D],                                        // u_int_d
    &[I_Q, OMEGA_M],                               // u_int_q (power limit reads ω_m)
    &[I_Q, OMEGA_M, THETA_S, OMEGA_F],             // omega_m
    &[OMEGA_M, OMEGA_F],                           // theta_s
    &[OMEGA_M, THETA_S, OMEGA_F, KAPPA_F, P_F, V], // omega_f (V: low-speed damping)
    &[OMEGA_R, KAPPA_R, P_R, V],                   // omega_r
    &[OMEGA_F, KAPPA_F, V],                        // kappa_f
    &[OMEGA_R, KAPPA_R, V],                        // kappa_r
    &[P_F],                                        // p_f
    &[P_R],                                        // p_r
    &[OMEGA_F, OMEGA_R, KAPPA_F, KAPPA_R, V],      // v
    &[V],                                          // x
    &[SOC, V_RC1, V_RC2, V_DC],                    // soc
    &[SOC, V_RC1, V_RC2, V_DC],                    // v_rc1
    &[SOC, V_RC1, V_RC2, V_DC],                    // v_rc2
    &[I_D, I_Q, OMEGA_M, SOC, V_RC1, V_RC2, V_DC], // v_dc
    &[SOC, V_RC1, V_RC2, V_DC, TEMP_BATTERY],      // temp_battery
    &[I_D, I_Q, TEMP_MOTOR],                       // temp_motor
];

const U_TORQUE: usize = 0;
const U_BRAKE: usize = 1;
const U_GRADE: usize = 2;

const Y_VEHICLE_SPEED: usize = 0;
const Y_MOTOR_SPEED: usize = 1;
const Y_WHEEL_SPEED_FRONT: usize = 2;
const Y_WHEEL_SPEED_REAR: usize = 3;
const Y_MOTOR_TORQUE: usize = 4;
const Y_MOTOR_CURRENT: usize = 5;
const Y_BATTERY_CURRENT: usize = 6;
const Y_DC_VOLTAGE: usize = 7;
const Y_SOC: usize = 8;
const Y_SLIP_FRONT: usize = 9;
const Y_DISTANCE: usize = 10;
const Y_BATTERY_TEMPERATURE: usize = 11;
const Y_MOTOR_TEMPERATURE: usize = 12;

/// Inputs (name, unit), in input order; all default to 0.
const INPUTS: [(&str, &str); 3] = [
    ("torque_request", "N m"),
    ("brake_pressure", "bar"),
    ("road_grade", "%"),
];

/// Outputs (name, unit), in output order.
const OUTPUTS: [(&str, &str); 13] = [
    ("vehicle_speed", "m/s"),
    ("motor_speed", "rpm"),
    ("wheel_speed_front", "rad/s"),
    ("wheel_speed_rear", "rad/s"),
    ("motor_torque", "N m"),
    ("motor_current", "A"),
    ("battery_current", "A"),
    ("dc_voltage", "V"),
    ("soc", "%"),
    ("slip_front", "-"),
    ("distance", "m"),
    ("battery_temperature", "°C"),
    ("motor_temperature", "°C"),
];

/// The driver profile of the built-in model, 20 s: for each input, its
/// piecewise-linear `(time s, value)` breakpoints, held beyond the last one
/// (evaluate with [`crate::plants::profile_value`]).
///
/// Torque request (N m, motor side): rest until 0.5 s, a 0.5 s ramp to
/// 250 N m (the current limit holds the delivered torque near 210 N m),
/// full acceleration to 6 s (≈ 16 m/s), a 0.5 s ramp down to a 15 N m
/// cruise, a 0.5 s ramp into −100 N m regeneration from 11 s to 14 s, and
/// a ramp back to 0 while the brakes come on. Brake pressure (bar): a
/// 0.5 s ramp from 0 to 40 bar at 14 s, held, which stops the car near
/// 16.5 s (193 m travelled); it stays held at standstill. Road grade (%): 0 throughout. Every
/// change is a ramp of at least 0.5 s, never a step.
pub const DRIVE_CYCLE: &[(&str, &[(f64, f64)])] = &[
    (
        "torque_request",
        &[
            (0.0, 0.0),
            (0.5, 0.0),
            (1.0, 250.0),
            (6.0, 250.0),
            (6.5, 15.0),
            (11.0, 15.0),
            (11.5, -100.0),
            (14.0, -100.0),
            (14.5, 0.0),
            (20.0, 0.0),
        ],
    ),
    ("brake_pressure", &[(0.0, 0.0), (14.0, 0.0), (14.5, 40.0), (20.0, 40.0)]),
    ("road_grade", &[(0.0, 0.0), (20.0, 0.0)]),
];

/// Parameters of [`EvPlant`], SI units unless stated. The defaults describe
/// a 1800 kg front-wheel-drive compact with a 150 kW motor and a 67 kWh
/// pack; `models/EV_PLANT.md` gives the rationale of each value.
#[derive(Clone, Debug, PartialEq)]
pub struct EvParams {
    /// Stator inductance `L = L_d = L_q`, H.
    pub inductance: f64,
    /// Stator phase resistance `R`, Ω.
    pub resistance: f64,
    /// Pole pairs `p`.
    pub pole_pairs: f64,
    /// Permanent-magnet flux linkage `ψ`, Wb.
    pub flux_linkage: f64,
    /// Closed-loop time constant `τ_c` of the current controller, s
    /// (`Kp = L/τ_c`, `Ki = R/τ_c`).
    pub current_loop_time_constant: f64,
    /// Current limit `I_max` (peak, dq amplitude), A.
    pub current_limit: f64,
    /// Motor power limit `P_max`, W.
    pub power_limit: f64,
    /// Rotor inertia `J_m` (with the gear's input side), kg m².
    pub rotor_inertia: f64,
    /// Viscous loss of motor bearings and gear mesh `b_m`, N m s/rad (motor side).
    pub motor_friction: f64,
    /// Gear ratio `G` (motor speed / axle speed).
    pub gear_ratio: f64,
    /// Half-shaft torsional stiffness `k_s` (both shafts, wheel side), N m/rad.
    pub shaft_stiffness: f64,
    /// Half-shaft torsional damping `c_s` (wheel side), N m s/rad.
    pub shaft_damping: f64,
    /// Front axle inertia `J_f` (wheels, hubs, brake discs), kg m².
    pub front_axle_inertia: f64,
    /// Rear axle inertia `J_r`, kg m².
    pub rear_axle_inertia: f64,
    /// Tyre rolling radius `r`, m.
    pub wheel_radius: f64,
    /// Tyre relaxation length `σ`, m.
    pub relaxation_length: f64,
    /// Speed floor `v_min` of the slip definition, m/s.
    pub slip_speed_floor: f64,
    /// Low-speed tyre damping `k_low` per axle, N s/m: a force
    /// `k_low exp(−(v/v_low)²) (ω r − v)` added to each tyre's force.
    pub low_speed_damping: f64,
    /// Speed `v_low` below which the low-speed damping acts, m/s.
    pub low_speed_damping_speed: f64,
    /// Magic-formula stiffness factor `B`.
    pub tyre_b: f64,
    /// Magic-formula shape factor `C`.
    pub tyre_c: f64,
    /// Road friction coefficient `μ`.
    pub friction: f64,
    /// Brake hydraulics time constant `τ_b`, s.
    pub brake_time_constant: f64,
    /// Rear/front pressure ratio `β_r` of the proportioning valve.
    pub rear_pressure_ratio: f64,
    /// Highest master-cylinder pressure `p_max`; the input is clamped to
    /// `[0, p_max]`, bar.
    pub max_brake_pressure: f64,
    /// Brake torque gain `k_b` per axle, N m/bar.
    pub brake_gain: f64,
    /// Axle speed `ω_b` of the brake torque's smooth sign `tanh(ω/ω_b)`, rad/s.
    pub brake_speed_scale: f64,
    /// Vehicle mass `m`, kg.
    pub mass: f64,
    /// Distance `l_f` from the centre of gravity to the front axle, m.
    pub cg_to_front: f64,
    /// Distance `l_r` from the centre of gravity to the rear axle, m.
    pub cg_to_rear: f64,
    /// Gravitational acceleration `g`, m/s².
    pub gravity: f64,
    /// Air density `ρ`, kg/m³.
    pub air_density: f64,
    /// Drag coefficient `c_d`.
    pub drag_coefficient: f64,
    /// Frontal area `A`, m².
    pub frontal_area: f64,
    /// Smoothing speed `v_ε` of the drag's `v·sqrt(v² + v_ε²)`, m/s.
    pub drag_speed_floor: f64,
    /// Rolling resistance coefficient `c_rr`.
    pub rolling_resistance: f64,
    /// Speed `v_roll` of rolling resistance's smooth sign `tanh(v/v_roll)`, m/s.
    pub rolling_speed_scale: f64,
    /// Pack capacity `Q`, A h.
    pub capacity: f64,
    /// Series resistance `R0`, Ω.
    pub series_resistance: f64,
    /// Resistance `R1` of the fast RC pair, Ω.
    pub rc1_resistance: f64,
    /// Time constant `τ1 = R1 C1` of the fast RC pair, s.
    pub rc1_time_constant: f64,
    /// Resistance `R2` of the slow RC pair, Ω.
    pub rc2_resistance: f64,
    /// Time constant `τ2 = R2 C2` of the slow RC pair, s.
    pub rc2_time_constant: f64,
    /// DC-link capacitance `C_dc`, F.
    pub dc_link_capacitance: f64,
    /// Voltage `V_ε` of the DC link's smooth positive part, V.
    pub dc_voltage_floor: f64,
    /// Battery heat capacity `C_b`, J/K.
    pub battery_heat_capacity: f64,
    /// Battery thermal resistance to the coolant `R_b`, K/W.
    pub battery_thermal_resistance: f64,
    /// Winding heat capacity `C_m`, J/K.
    pub motor_heat_capacity: f64,
    /// Winding thermal resistance to the coolant `R_m`, K/W.
    pub motor_thermal_resistance: f64,
    /// Coolant and ambient temperature `T_amb`, °C.
    pub ambient_temperature: f64,
    /// State of charge at t = 0, 0…1.
    pub initial_soc: f64,
}

impl Default for EvParams {
    fn default() -> Self {
        EvParams {
            inductance: 1e-4,
            resistance: 0.03,
            pole_pairs: 4.0,
            flux_linkage: 0.06,
            current_loop_time_constant: 1e-4,
            current_limit: 700.0,
            power_limit: 150e3,
            rotor_inertia: 0.04,
            motor_friction: 0.005,
            gear_ratio: 9.0,
            shaft_stiffness: 20e3,
            shaft_damping: 30.0,
            front_axle_inertia: 1.5,
            rear_axle_inertia: 1.5,
            wheel_radius: 0.31,
            relaxation_length: 0.3,
            slip_speed_floor: 1.0,
            low_speed_damping: 40e3,
            low_speed_damping_speed: 1.0,
            tyre_b: 10.0,
            tyre_c: 1.9,
            friction: 1.0,
            brake_time_constant: 0.05,
            rear_pressure_ratio: 2.0 / 3.0,
            max_brake_pressure: 200.0,
            brake_gain: 48.0,
            brake_speed_scale: 0.5,
            mass: 1800.0,
            cg_to_front: 1.3,
            cg_to_rear: 1.5,
            gravity: 9.81,
            air_density: 1.2,
            drag_coefficient: 0.28,
            frontal_area: 2.3,
            drag_speed_floor: 0.1,
            rolling_resistance: 0.01,
            rolling_speed_scale: 0.1,
            capacity: 180.0,
            series_resistance: 0.05,
            rc1_resistance: 0.02,
            rc1_time_constant: 10.0,
            rc2_resistance: 0.03,
            rc2_time_constant: 100.0,
            dc_link_capacitance: 1e-3,
            dc_voltage_floor: 1.0,
            battery_heat_capacity: 4e5,
            battery_thermal_resistance: 0.05,
            motor_heat_capacity: 3000.0,
            motor_thermal_resistance: 0.02,
            ambient_temperature: 25.0,
            initial_soc: 0.8,
        }
    }
}

impl EvParams {
    /// Open-circuit voltage of the pack at state of charge `soc` (0…1), V:
    /// `350 + 38 soc + 12 tanh(10 soc)`, 350 V empty, 400 V full, steep
    /// below 20 %, smooth and increasing everywhere.
    pub fn open_circuit_voltage(&self, soc: f64) -> f64 {
        350.0 + 38.0 * soc + 12.0 * (10.0 * soc).tanh()
    }

    /// The physical range of each output, in output order: the motor's
    /// torque and q current within its current limit (`±1.5 p ψ I_max`,
    /// `±I_max`), the DC link between 0 and 1.25 times the full pack's
    /// open-circuit voltage, the state of charge within 0–100 %; envelopes
    /// no drive of this car reaches for the rest (speeds within ±80 m/s,
    /// wheel speeds within 1.5 times that, battery current within ±1000 A,
    /// slip within ±100, distance within −1 km and 10 000 km, temperatures
    /// within −40 and 250 °C).
    pub fn output_ranges(&self) -> [(f64, f64); 13] {
        let speed = 80.0;
        let wheel = 1.5 * speed / self.wheel_radius;
        let motor_rpm = speed / self.wheel_radius * self.gear_ratio * 60.0 / std::f64::consts::TAU;
        let torque = self.torque_constant() * self.current_limit;
        let mut r = [(0.0, 0.0); 13];
        r[Y_VEHICLE_SPEED] = (-speed, speed);
        r[Y_MOTOR_SPEED] = (-motor_rpm, motor_rpm);
        r[Y_WHEEL_SPEED_FRONT] = (-wheel, wheel);
        r[Y_WHEEL_SPEED_REAR] = (-wheel, wheel);
        r[Y_MOTOR_TORQUE] = (-torque, torque);
        r[Y_MOTOR_CURRENT] = (-self.current_limit, self.current_limit);
        r[Y_BATTERY_CURRENT] = (-1000.0, 1000.0);
        r[Y_DC_VOLTAGE] = (0.0, 1.25 * self.open_circuit_voltage(1.0));
        r[Y_SOC] = (0.0, 100.0);
        r[Y_SLIP_FRONT] = (-100.0, 100.0);
        r[Y_DISTANCE] = (-1e3, 1e7);
        r[Y_BATTERY_TEMPERATURE] = (-40.0, 250.0);
        r[Y_MOTOR_TEMPERATURE] = (-40.0, 250.0);
        r
    }

    /// Torque constant `1.5 p ψ`, N m/A.
    pub fn torque_constant(&self) -> f64 {
        1.5 * self.pole_pairs * self.flux_linkage
    }

    /// The q-axis current reference for a torque request (N m, motor side)
    /// at motor speed `omega_m` (rad/s): the request scaled by the power
    /// limit's knee, converted to current and softly limited to `I_max`.
    pub fn q_current_reference(&self, torque_request: f64, omega_m: f64) -> f64 {
        let torque = power_limited(torque_request, omega_m, self.power_limit);
        soft_limit(torque / self.torque_constant(), self.current_limit)
    }
}

/// `(1 + z⁴)^(−1/4)` for `|z| ≤ 1` (the callers rewrite it beyond, where
/// `z⁴` could overflow).
fn knee(z: f64) -> f64 {
    1.0 / (1.0 + z.powi(4)).sqrt().sqrt()
}

/// `x` softly limited to `±limit`: `x (1 + (x/limit)⁴)^(−1/4)`, odd,
/// increasing, slope 1 at 0 (the error is below 1 % up to 0.45 `limit`),
/// `±limit` for infinite `x`.
fn soft_limit(x: f64, limit: f64) -> f64 {
    let y = x / limit;
    if y.abs() <= 1.0 {
        x * knee(y)
    } else {
        limit * y.signum() / (1.0 + y.powi(-4)).sqrt().sqrt()
    }
}

/// The torque `torque` (N m) scaled so that the power at `omega` (rad/s)
/// stays below `power` (W): `torque (1 + (torque omega / power)⁴)^(−1/4)`,
/// which tends to `±power/|omega|` for large requests.
fn power_limited(torque: f64, omega: f64, power: f64) -> f64 {
    let z = torque * omega / power;
    if z.abs() <= 1.0 {
        torque * knee(z)
    } else {
        power / omega.abs() * torque.signum() / (1.0 + z.powi(-4)).sqrt().sqrt()
    }
}

/// The simplified magic formula: longitudinal force (N) of a tyre with
/// normal load `fz` (N) at slip `kappa`.
fn tyre_force(p: &EvParams, fz: f64, kappa: f64) -> f64 {
    p.friction * fz * (p.tyre_c * (p.tyre_b * kappa).atan()).sin()
}

/// Algebraic quantities of one evaluation, shared by the derivatives and
/// the outputs (on the stack: evaluating allocates nothing).
struct Signals {
    /// Electrical speed `ω_e = p ω_m`, rad/s.
    omega_e: f64,
    /// d-axis current reference `i_d*`, A.
    i_d_ref: f64,
    /// q-axis current reference `i_q*`, A.
    i_q_ref: f64,
    /// d-axis controller voltage `u_d`, V.
    u_d: f64,
    /// q-axis controller voltage `u_q`, V.
    u_q: f64,
    /// Electromagnetic torque `T_e`, N m.
    torque: f64,
    /// Copper losses `1.5 R (i_d² + i_q²)`, W.
    copper_loss: f64,
    /// Half-shaft torque `T_s` (wheel side), N m.
    shaft_torque: f64,
    /// Front brake torque `T_bf`, N m.
    brake_front: f64,
    /// Rear brake torque `T_br`, N m.
    brake_rear: f64,
    /// Front tyre force `F_f` (with the low-speed damping), N.
    force_front: f64,
    /// Rear tyre force `F_r`, N.
    force_rear: f64,
    /// Aerodynamic drag + rolling resistance + grade force, N.
    resistance: f64,
    /// Target brake pressure `p⁺`, bar.
    brake_target: f64,
    /// Battery current `I_b` (discharge positive), A.
    battery_current: f64,
    /// Inverter DC current `P_el / V⁺`, A.
    inverter_current: f64,
}

impl Signals {
    fn new(p: &EvParams, x: &[f64], u: &[f64]) -> Self {
        let mut s = Signals {
            omega_e: 0.0,
            i_d_ref: 0.0,
            i_q_ref: 0.0,
            u_d: 0.0,
            u_q: 0.0,
            torque: 0.0,
            copper_loss: 0.0,
            shaft_torque: 0.0,
            brake_front: 0.0,
            brake_rear: 0.0,
            force_front: 0.0,
            force_rear: 0.0,
            resistance: 0.0,
            brake_target: 0.0,
            battery_current: 0.0,
            inverter_current: 0.0,
        };
        s.inverter(p, x, u[U_TORQUE]);
        s.driveline(p, x, u[U_BRAKE], u[U_GRADE]);
        s.electrical(p, x);
        s
    }

    /// Current references, controller voltages (PI plus back-EMF and
    /// cross-coupling feed-forward), torque and copper losses.
    fn inverter(&mut self, p: &EvParams, x: &[f64], torque_request: f64) {
        let (i_d, i_q, omega_m) = (x[I_D], x[I_Q], x[OMEGA_M]);
        let l = p.inductance;
        let kp = l / p.current_loop_time_constant;
        self.omega_e = p.pole_pairs * omega_m;
        self.i_d_ref = 0.0;
        self.i_q_ref = p.q_current_reference(torque_request, omega_m);
        self.u_d = kp * (self.i_d_ref - i_d) + x[U_INT_D] - self.omega_e * l * i_q;
        self.u_q = kp * (self.i_q_ref - i_q) + x[U_INT_Q] + self.omega_e * (l * i_d + p.flux_linkage);
        self.torque = p.torque_constant() * i_q;
        self.copper_loss = 1.5 * p.resistance * (i_d * i_d + i_q * i_q);
    }

    /// Shaft torque, brake torques, tyre forces and road loads.
    fn driveline(&mut self, p: &EvParams, x: &[f64], brake_pressure: f64, grade_percent: f64) {
        self.shaft_torque = p.shaft_stiffness * x[THETA_S] + p.shaft_damping * (x[OMEGA_M] / p.gear_ratio - x[OMEGA_F]);
        self.brake_front = p.brake_gain * x[P_F] * (x[OMEGA_F] / p.brake_speed_scale).tanh();
        self.brake_rear = p.brake_gain * x[P_R] * (x[OMEGA_R] / p.brake_speed_scale).tanh();
        self.brake_target = brake_pressure.clamp(0.0, p.max_brake_pressure);
        // tan α = grade/100.
        let grade = grade_percent / 100.0;
        let secant = grade.hypot(1.0);
        let (sin_a, cos_a) = (grade / secant, 1.0 / secant);
        let weight = p.mass * p.gravity;
        let wheelbase = p.cg_to_front + p.cg_to_rear;
        let v = x[V];
        let damping = p.low_speed_damping * (-(v / p.low_speed_damping_speed).powi(2)).exp();
        let r = p.wheel_radius;
        self.force_front =
            tyre_force(p, weight * cos_a * p.cg_to_rear / wheelbase, x[KAPPA_F]) + damping * (x[OMEGA_F] * r - v);
        self.force_rear =
            tyre_force(p, weight * cos_a * p.cg_to_front / wheelbase, x[KAPPA_R]) + damping * (x[OMEGA_R] * r - v);
        let drag = 0.5 * p.air_density * p.drag_coefficient * p.frontal_area * v * v.hypot(p.drag_speed_floor);
        let rolling = p.rolling_resistance * weight * cos_a * (v / p.rolling_speed_scale).tanh();
        self.resistance = drag + rolling + weight * sin_a;
    }

    /// Battery current and the inverter's DC current (needs `inverter`).
    fn electrical(&mut self, p: &EvParams, x: &[f64]) {
        let ocv = p.open_circuit_voltage(x[SOC]);
        self.battery_current = (ocv - x[V_RC1] - x[V_RC2] - x[V_DC]) / p.series_resistance;
        let v_dc = x[V_DC];
        let v_positive = 0.5 * (v_dc + v_dc.hypot(p.dc_voltage_floor));
        let power = self.torque * x[OMEGA_M] + self.copper_loss;
        self.inverter_current = power / v_positive;
    }
}

/// PMSM currents and the PI integrators.
fn motor(p: &EvParams, x: &[f64], s: &Signals, dx: &mut [f64]) {
    let (l, r) = (p.inductance, p.resistance);
    let ki = r / p.current_loop_time_constant;
    let (i_d, i_q) = (x[I_D], x[I_Q]);
    dx[I_D] = (s.u_d - r * i_d + s.omega_e * l * i_q) / l;
    dx[I_Q] = (s.u_q - r * i_q - s.omega_e * (l * i_d + p.flux_linkage)) / l;
    dx[U_INT_D] = ki * (s.i_d_ref - i_d);
    dx[U_INT_Q] = ki * (s.i_q_ref - i_q);
}

/// Rotor, half-shaft twist and the two axles.
fn drivetrain(p: &EvParams, x: &[f64], s: &Signals, dx: &mut [f64]) {
    let r = p.wheel_radius;
    dx[OMEGA_M] = (s.torque - p.motor_friction * x[OMEGA_M] - s.shaft_torque / p.gear_ratio) / p.rotor_inertia;
    dx[THETA_S] = x[OMEGA_M] / p.gear_ratio - x[OMEGA_F];
    dx[OMEGA_F] = (s.shaft_torque - s.brake_front - r * s.force_front) / p.front_axle_inertia;
    dx[OMEGA_R] = (-s.brake_rear - r * s.force_rear) / p.rear_axle_inertia;
}

/// Slip relaxation `σ dκ/dt = ω r − v − V κ`, `V = sqrt(v² + v_min²)`.
fn tyres(p: &EvParams, x: &[f64], dx: &mut [f64]) {
    let v = x[V];
    let speed = v.hypot(p.slip_speed_floor);
    let r = p.wheel_radius;
    dx[KAPPA_F] = (x[OMEGA_F] * r - v - speed * x[KAPPA_F]) / p.relaxation_length;
    dx[KAPPA_R] = (x[OMEGA_R] * r - v - speed * x[KAPPA_R]) / p.relaxation_length;
}

/// Brake circuit pressures: first-order lags of the master-cylinder
/// pressure, the rear one through the proportioning valve.
fn brakes(p: &EvParams, x: &[f64], s: &Signals, dx: &mut [f64]) {
    dx[P_F] = (s.brake_target - x[P_F]) / p.brake_time_constant;
    dx[P_R] = (p.rear_pressure_ratio * s.brake_target - x[P_R]) / p.brake_time_constant;
}

/// Longitudinal motion of the body.
fn vehicle(p: &EvParams, x: &[f64], s: &Signals, dx: &mut [f64]) {
    dx[V] = (s.force_front + s.force_rear - s.resistance) / p.mass;
    dx[X] = x[V];
}

/// State of charge, RC pairs and DC link.
fn battery(p: &EvParams, x: &[f64], s: &Signals, dx: &mut [f64]) {
    let i_b = s.battery_current;
    dx[SOC] = -i_b / (3600.0 * p.capacity);
    let c1 = p.rc1_time_constant / p.rc1_resistance;
    let c2 = p.rc2_time_constant / p.rc2_resistance;
    dx[V_RC1] = i_b / c1 - x[V_RC1] / p.rc1_time_constant;
    dx[V_RC2] = i_b / c2 - x[V_RC2] / p.rc2_time_constant;
    dx[V_DC] = (i_b - s.inverter_current) / p.dc_link_capacitance;
}

/// Battery and winding temperatures.
fn thermal(p: &EvParams, x: &[f64], s: &Signals, dx: &mut [f64]) {
    let i_b = s.battery_current;
    let battery_loss = p.series_resistance * i_b * i_b
        + x[V_RC1] * x[V_RC1] / p.rc1_resistance
        + x[V_RC2] * x[V_RC2] / p.rc2_resistance;
    dx[TEMP_BATTERY] = (battery_loss - (x[TEMP_BATTERY] - p.ambient_temperature) / p.battery_thermal_resistance)
        / p.battery_heat_capacity;
    dx[TEMP_MOTOR] =
        (s.copper_loss - (x[TEMP_MOTOR] - p.ambient_temperature) / p.motor_thermal_resistance) / p.motor_heat_capacity;
}

/// The electric-vehicle drivetrain plant (see the module documentation),
/// built in as `ev`.
#[derive(Clone, Debug)]
pub struct EvPlant {
    /// Shared by forks; replaced whole by [`Model::swap_definition`].
    params: Arc<EvParams>,
    layout: Layout,
}

/// The block name under which [`EvPlant`] declares its tunable parameters
/// ([`Model::tunables`], [`Model::retune`]).
pub const PARAMETER_BLOCK: &str = "ev";

/// Where a tunable parameter lives in [`EvParams`].
type Field = fn(&mut EvParams) -> &mut f64;

/// The parameters a running plant can change: those no output range, no
/// state and no initial value depends on, so a change alters the dynamics
/// and nothing else. Each must stay finite and above zero.
const TUNABLE: [(&str, Field); 7] = [
    ("mass", |p| &mut p.mass),
    ("drag_coefficient", |p| &mut p.drag_coefficient),
    ("frontal_area", |p| &mut p.frontal_area),
    ("rolling_resistance", |p| &mut p.rolling_resistance),
    ("friction", |p| &mut p.friction),
    ("brake_gain", |p| &mut p.brake_gain),
    ("power_limit", |p| &mut p.power_limit),
];

impl Default for EvPlant {
    fn default() -> Self {
        Self::new()
    }
}

impl EvPlant {
    /// The plant with the default parameters.
    pub fn new() -> Self {
        Self::with_params(EvParams::default())
    }

    /// The plant with the parameters `params`.
    pub fn with_params(params: EvParams) -> Self {
        let variable = |&(name, unit): &(&str, &str)| Variable {
            unit: Some(unit.to_string()),
            ..Variable::new(name)
        };
        let ranges = params.output_ranges();
        let layout = Layout {
            states: STATE_NAMES.iter().map(|s| s.to_string()).collect(),
            inputs: INPUTS.iter().map(variable).collect(),
            outputs: OUTPUTS
                .iter()
                .zip(ranges)
                .map(|(output, range)| Variable {
                    range: Some(range),
                    ..variable(output)
                })
                .collect(),
            ..Layout::default()
        };
        EvPlant {
            params: Arc::new(params),
            layout,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &EvParams {
        &self.params
    }
}

impl Model for EvPlant {
    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn fork(&self) -> Box<dyn Model> {
        Box::new(self.clone())
    }

    fn retune(&self, block: &str, param: &str, value: &Value) -> Result<Definition, RetuneError> {
        let refuse = |message: String| RetuneError {
            block: Some(block.to_string()),
            message,
        };
        if block != PARAMETER_BLOCK {
            return Err(refuse(format!(
                "the ev plant declares its parameters under block \"{PARAMETER_BLOCK}\""
            )));
        }
        let names = || TUNABLE.map(|(name, _)| name).join(", ");
        let Some((_, field)) = TUNABLE.iter().find(|(name, _)| *name == param) else {
            return Err(refuse(format!(
                "\"{param}\" is not a parameter the running plant can change; these are: {}",
                names()
            )));
        };
        let number = value.as_f64().filter(|v| v.is_finite() && *v > 0.0).ok_or_else(|| {
            refuse(format!(
                "{param} = {value}: give a finite number above zero, such as {}",
                field(&mut EvParams::default())
            ))
        })?;
        let mut params = (*self.params).clone();
        *field(&mut params) = number;
        Ok(Definition(Arc::new(params)))
    }

    fn swap_definition(&mut self, definition: &mut Definition) -> bool {
        // Reference counts only: the replaced parameters are dropped with
        // `definition`, off the real-time thread.
        match Arc::clone(&definition.0).downcast::<EvParams>() {
            Ok(params) => {
                let replaced: Arc<EvParams> = std::mem::replace(&mut self.params, params);
                definition.0 = replaced;
                true
            }
            Err(_) => false,
        }
    }

    fn tunables(&self) -> Vec<(String, String, Value)> {
        let mut params = (*self.params).clone();
        TUNABLE
            .iter()
            .map(|(name, field)| {
                (
                    PARAMETER_BLOCK.to_string(),
                    name.to_string(),
                    Value::from(*field(&mut params)),
                )
            })
            .collect()
    }

    /// At rest: currents, speeds, slips, pressures and RC voltages 0, the
    /// initial state of charge, the DC link at the open-circuit voltage,
    /// temperatures at ambient.
    fn initial_state(&mut self, x: &mut [f64], _: &mut [f64]) {
        let p = &self.params;
        x.fill(0.0);
        x[SOC] = p.initial_soc;
        x[V_DC] = p.open_circuit_voltage(p.initial_soc);
        x[TEMP_BATTERY] = p.ambient_temperature;
        x[TEMP_MOTOR] = p.ambient_temperature;
    }

    fn derivatives(&mut self, s: StateRef<'_>, dx: &mut [f64]) {
        let p = &self.params;
        let signals = Signals::new(p, s.x, s.u);
        motor(p, s.x, &signals, dx);
        drivetrain(p, s.x, &signals, dx);
        tyres(p, s.x, dx);
        brakes(p, s.x, &signals, dx);
        vehicle(p, s.x, &signals, dx);
        battery(p, s.x, &signals, dx);
        thermal(p, s.x, &signals, dx);
    }

    fn outputs(&mut self, s: StateRef<'_>, y: &mut [f64]) {
        let x = s.x;
        let signals = Signals::new(&self.params, x, s.u);
        y[Y_VEHICLE_SPEED] = x[V];
        y[Y_MOTOR_SPEED] = x[OMEGA_M] * 60.0 / std::f64::consts::TAU;
        y[Y_WHEEL_SPEED_FRONT] = x[OMEGA_F];
        y[Y_WHEEL_SPEED_REAR] = x[OMEGA_R];
        y[Y_MOTOR_TORQUE] = signals.torque;
        y[Y_MOTOR_CURRENT] = x[I_Q];
        y[Y_BATTERY_CURRENT] = signals.battery_current;
        y[Y_DC_VOLTAGE] = x[V_DC];
        y[Y_SOC] = 100.0 * x[SOC];
        y[Y_SLIP_FRONT] = x[KAPPA_F];
        y[Y_DISTANCE] = x[X];
        y[Y_BATTERY_TEMPERATURE] = x[TEMP_BATTERY];
        y[Y_MOTOR_TEMPERATURE] = x[TEMP_MOTOR];
    }

    /// Every output is a function of the states alone: the torque follows
    /// the q-axis current, the battery current the pack's states.
    fn direct_feedthrough(&self) -> Option<Vec<Vec<usize>>> {
        Some(vec![Vec::new(); self.layout.outputs.len()])
    }

    fn sparsity(&self) -> Option<Vec<Vec<usize>>> {
        let mut columns = vec![Vec::new(); STATE_COUNT];
        for (i, row) in ROW_DEPENDENCIES.iter().enumerate() {
            for &j in row.iter() {
                columns[j].push(i);
            }
        }
        Some(columns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;
    use std::sync::OnceLock;

    const N: usize = STATE_COUNT;
    type State = [f64; N];

    // The default parameters, written out again so that the expectations
    // below do not read them from the code under test.
    const KT: f64 = 1.5 * 4.0 * 0.06; // N m/A
    const I_MAX: f64 = 700.0;
    const P_MAX: f64 = 150e3;
    const GEAR: f64 = 9.0;
    const RADIUS: f64 = 0.31;
    const MASS: f64 = 1800.0;
    const J_MOTOR: f64 = 0.04;
    const J_AXLE: f64 = 1.5;
    const B_MOTOR: f64 = 0.005;
    const GRAVITY: f64 = 9.81;
    const C_RR: f64 = 0.01;
    const DRAG: f64 = 0.5 * 1.2 * 0.28 * 2.3; // ½ρ c_d A, kg/m
    const CAPACITY_AS: f64 = 180.0 * 3600.0;
    const TAU_CURRENT: f64 = 1e-4;
    const R0_C_DC: f64 = 0.05 * 1e-3;

    fn derivatives(m: &mut EvPlant, t: f64, x: &[f64], u: &[f64], dx: &mut [f64]) {
        m.derivatives(StateRef { t, x, xd: &[], u }, dx);
    }

    fn outputs(m: &mut EvPlant, x: &[f64], u: &[f64]) -> [f64; 13] {
        let mut y = [0.0; 13];
        m.outputs(StateRef { t: 0.0, x, xd: &[], u }, &mut y);
        y
    }

    /// The drive cycle's inputs at `t`, in input order.
    fn cycle(t: f64, u: &mut [f64]) {
        for (k, (_, points)) in DRIVE_CYCLE.iter().enumerate() {
            u[k] = crate::plants::profile_value(points, t);
        }
    }

    /// One classic Runge–Kutta step from `t` with inputs `input(t, u)`.
    fn rk4_step(m: &mut EvPlant, t: f64, x: &mut State, h: f64, input: &dyn Fn(f64, &mut [f64])) {
        let mut u = [0.0; 3];
        let mut k = [[0.0; N]; 4];
        let mut stage = *x;
        for i in 0..4 {
            let c = [0.0, 0.5, 0.5, 1.0][i];
            if i > 0 {
                for j in 0..N {
                    stage[j] = x[j] + c * h * k[i - 1][j];
                }
            }
            input(t + c * h, &mut u);
            derivatives(m, t + c * h, &stage, &u, &mut k[i]);
        }
        for j in 0..N {
            x[j] += h / 6.0 * (k[0][j] + 2.0 * k[1][j] + 2.0 * k[2][j] + k[3][j]);
        }
    }

    /// Integrates from `t0` for `steps` RK4 steps of `h`, calling
    /// `observe(t, x)` at the start and after every step.
    #[expect(
        clippy::too_many_arguments,
        reason = "a test integration: the plant, its start, the steps and the observer"
    )]
    fn simulate(
        m: &mut EvPlant,
        x: &mut State,
        t0: f64,
        steps: usize,
        h: f64,
        input: &dyn Fn(f64, &mut [f64]),
        mut observe: impl FnMut(f64, &State),
    ) {
        observe(t0, x);
        for n in 0..steps {
            let t = t0 + n as f64 * h;
            rk4_step(m, t, x, h, input);
            observe(t + h, x);
        }
    }

    fn initial() -> (EvPlant, State) {
        let mut m = EvPlant::new();
        let mut x = [0.0; N];
        m.initial_state(&mut x, &mut []);
        (m, x)
    }

    /// A state rolling at `v` with all wheels and the motor at the speeds
    /// of pure rolling, no slip, no current.
    fn rolling(v: f64) -> (EvPlant, State) {
        let (m, mut x) = initial();
        x[V] = v;
        x[OMEGA_F] = v / RADIUS;
        x[OMEGA_R] = v / RADIUS;
        x[OMEGA_M] = GEAR * v / RADIUS;
        (m, x)
    }

    /// `(1 + z⁴)^(−1/4)`, the knee of both limits, written out again.
    fn knee_by_hand(z: f64) -> f64 {
        (1.0 + z.powi(4)).powf(-0.25)
    }

    /// The motor torque for `request` at motor speed `omega_m`, by hand.
    fn torque_by_hand(request: f64, omega_m: f64) -> f64 {
        let current = request * knee_by_hand(request * omega_m / P_MAX) / KT;
        KT * current * knee_by_hand(current / I_MAX)
    }

    /// Central-difference Jacobian `∂ẋ_i/∂x_j`.
    fn jacobian(m: &mut EvPlant, x: &State, u: &[f64]) -> DMatrix<f64> {
        let mut jac = DMatrix::zeros(N, N);
        let (mut fp, mut fm) = ([0.0; N], [0.0; N]);
        for j in 0..N {
            let h = 1e-6 * x[j].abs().max(1.0);
            let (mut xp, mut xm) = (*x, *x);
            xp[j] += h;
            xm[j] -= h;
            derivatives(m, 0.0, &xp, u, &mut fp);
            derivatives(m, 0.0, &xm, u, &mut fm);
            for i in 0..N {
                jac[(i, j)] = (fp[i] - fm[i]) / (xp[j] - xm[j]);
            }
        }
        jac
    }

    /// A xorshift generator: reproducible random states without a dependency.
    struct Rng(u64);

    impl Rng {
        fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            lo + (hi - lo) * (self.0 >> 11) as f64 / (1u64 << 53) as f64
        }

        /// A state in the plausible range of every variable; `v` and the
        /// speeds exactly 0 on every fourth call.
        fn state(&mut self, k: usize) -> State {
            let ranges: [(f64, f64); N] = [
                (-600.0, 600.0),
                (-700.0, 700.0),
                (-50.0, 50.0),
                (-50.0, 100.0),
                (-200.0, 1300.0),
                (-0.05, 0.05),
                (-10.0, 140.0),
                (-10.0, 140.0),
                (-0.5, 0.5),
                (-0.5, 0.5),
                (0.0, 80.0),
                (0.0, 60.0),
                (-3.0, 45.0),
                (0.0, 1e4),
                (0.0, 1.0),
                (-20.0, 20.0),
                (-20.0, 20.0),
                (280.0, 420.0),
                (-20.0, 60.0),
                (-20.0, 150.0),
            ];
            let mut x = ranges.map(|(lo, hi)| self.uniform(lo, hi));
            if k.is_multiple_of(4) {
                for j in [OMEGA_M, OMEGA_F, OMEGA_R, V] {
                    x[j] = 0.0;
                }
            }
            x
        }

        fn inputs(&mut self) -> [f64; 3] {
            [
                self.uniform(-300.0, 300.0),
                self.uniform(0.0, 80.0),
                self.uniform(-25.0, 25.0),
            ]
        }
    }

    /// The drive cycle run once with RK4 at 20 µs and shared by the tests.
    struct CycleRun {
        /// Every 1 ms: time and outputs.
        trace: Vec<(f64, [f64; 13])>,
        /// `∫ battery_current dt` by the trapezoidal rule over every step, A s.
        charge: f64,
        /// The state at t = 3 s, under full acceleration.
        accelerating: State,
        /// The largest `|u_dq| / (v_dc/√3)`: above 1 the inverter could not
        /// produce the voltage the controller asks for.
        modulation: f64,
    }

    fn cycle_run() -> &'static CycleRun {
        static RUN: OnceLock<CycleRun> = OnceLock::new();
        RUN.get_or_init(|| {
            let (mut m, mut x) = initial();
            let mut probe = EvPlant::new();
            let h = 2e-5;
            let mut run = CycleRun {
                trace: Vec::new(),
                charge: 0.0,
                accelerating: x,
                modulation: 0.0,
            };
            let mut last_current = None;
            simulate(&mut m, &mut x, 0.0, 1_000_000, h, &cycle, |t, x| {
                let mut u = [0.0; 3];
                cycle(t, &mut u);
                let y = outputs(&mut probe, x, &u);
                let signals = Signals::new(probe.params(), x, &u);
                let voltage = signals.u_d.hypot(signals.u_q);
                run.modulation = run.modulation.max(voltage / (x[V_DC] / 3f64.sqrt()));
                if let Some(i0) = last_current {
                    run.charge += 0.5 * h * (i0 + y[Y_BATTERY_CURRENT]);
                }
                last_current = Some(y[Y_BATTERY_CURRENT]);
                let n = (t / h).round() as usize;
                if n.is_multiple_of(50) {
                    run.trace.push((t, y));
                }
                if n == 150_000 {
                    run.accelerating = *x;
                }
            });
            run
        })
    }

    /// The first trace sample at or after `t`.
    fn sample(run: &CycleRun, t: f64) -> &[f64; 13] {
        &run.trace.iter().find(|(ts, _)| *ts >= t - 1e-9).unwrap().1
    }

    #[test]
    fn registered_as_ev_with_its_layout() {
        for name in ["ev", "EV", "Ev"] {
            let model = crate::plants::builtin(name).unwrap();
            let layout = model.layout();
            assert_eq!((layout.states.len(), layout.discrete, layout.inputs.len()), (20, 0, 3));
            assert_eq!(layout.outputs.len(), 13);
        }
        let names = crate::plants::names();
        assert!(names.contains(&"ev".to_string()));
        for name in crate::plants::testset::NAMES {
            assert!(names.contains(&name.to_lowercase()));
            assert!(crate::plants::builtin(name).is_some());
        }
        let m = EvPlant::new();
        let inputs: Vec<_> = m.layout().inputs.iter().map(|v| (v.name.as_str(), v.default)).collect();
        assert_eq!(
            inputs,
            [("torque_request", 0.0), ("brake_pressure", 0.0), ("road_grade", 0.0)]
        );
        assert!(m
            .layout()
            .inputs
            .iter()
            .chain(&m.layout().outputs)
            .all(|v| v.unit.is_some()));
        assert_eq!(m.layout().outputs[Y_SOC].unit.as_deref(), Some("%"));
    }

    #[test]
    fn rest_is_an_equilibrium_and_the_initial_state_is_as_documented() {
        let (mut m, x) = initial();
        assert_eq!(x[V_DC], 350.0 + 38.0 * 0.8 + 12.0 * 8f64.tanh());
        assert_eq!((x[SOC], x[TEMP_BATTERY], x[TEMP_MOTOR]), (0.8, 25.0, 25.0));
        let mut dx = [1.0; N];
        derivatives(&mut m, 0.0, &x, &[0.0; 3], &mut dx);
        assert_eq!(dx, [0.0; N]);
        let mut forked = m.fork();
        let mut dx_fork = [1.0; N];
        forked.derivatives(
            StateRef {
                t: 0.0,
                x: &x,
                xd: &[],
                u: &[100.0, 0.0, 0.0],
            },
            &mut dx_fork,
        );
        derivatives(&mut m, 0.0, &x, &[100.0, 0.0, 0.0], &mut dx);
        assert_eq!(dx, dx_fork);
        let y = outputs(&mut m, &x, &[0.0; 3]);
        assert_eq!((y[Y_SOC], y[Y_DC_VOLTAGE], y[Y_BATTERY_CURRENT]), (80.0, x[V_DC], 0.0));
    }

    #[test]
    fn no_output_follows_an_input_directly_as_the_plant_declares() {
        let (mut m, mut x) = initial();
        assert_eq!(m.direct_feedthrough(), Some(vec![Vec::new(); 13]));
        // A state away from rest, so that every signal is in play.
        for (k, v) in x.iter_mut().enumerate() {
            *v += 0.1 * (k as f64 + 1.0);
        }
        let rest = outputs(&mut m, &x, &[0.0; 3]);
        let pushed = outputs(&mut m, &x, &[250.0, 0.8, 0.05]);
        assert_eq!(rest, pushed);
    }

    /// Test 1: pole–zero cancellation and exact feed-forward make the
    /// current loop first order with τ = 0.1 ms, at rest and at speed.
    #[test]
    fn current_loop_reaches_63_percent_in_one_time_constant() {
        let request = 100.0;
        for omega_m in [0.0, 400.0] {
            let (mut m, mut x) = rolling(omega_m * RADIUS / GEAR);
            let reference = torque_by_hand(request, omega_m) / KT;
            let h = 1e-6;
            let mut i_q = Vec::new();
            simulate(
                &mut m,
                &mut x,
                0.0,
                500,
                h,
                &|_, u| u.copy_from_slice(&[request, 0.0, 0.0]),
                |_, x| {
                    i_q.push(x[I_Q]);
                    assert!(x[I_D].abs() < 1e-6 * reference, "i_d = {}", x[I_D]);
                },
            );
            for (n, expected) in [
                (100, 1.0 - (-1f64).exp()),
                (50, 1.0 - (-0.5f64).exp()),
                (500, 1.0 - (-5f64).exp()),
            ] {
                let ratio = i_q[n] / reference;
                assert!(
                    (ratio - expected).abs() < 1e-4,
                    "ω_m = {omega_m}: i_q({} µs) / i_q* = {ratio}, want {expected}",
                    n
                );
            }
        }
    }

    /// Test 2: after the start-up transients the car accelerates as
    /// Newton says, with the rotating inertias reflected to the wheel.
    #[test]
    fn steady_acceleration_matches_the_hand_calculation() {
        let request = 80.0;
        let (mut m, mut x) = initial();
        let mut v = Vec::new();
        let h = 2e-5;
        simulate(
            &mut m,
            &mut x,
            0.0,
            300_000,
            h,
            &|_, u| u.copy_from_slice(&[request, 0.0, 0.0]),
            |t, x| {
                let n = (t / h).round() as usize;
                if n >= 200_000 && n.is_multiple_of(50_000) {
                    v.push(x[V]);
                }
            },
        );
        assert_eq!(v.len(), 3);
        let (v4, v6) = (v[0], v[2]);
        let measured = (v6 - v4) / 2.0;
        // Mean of v² over a linear ramp from v4 to v6, for the drag.
        let v2_mean = (v4 * v4 + v4 * v6 + v6 * v6) / 3.0;
        let v_mid = 0.5 * (v4 + v6);
        let omega_m = GEAR * v_mid / RADIUS;
        let drive = (torque_by_hand(request, omega_m) - B_MOTOR * omega_m) * GEAR / RADIUS;
        let resistance = DRAG * v2_mean + C_RR * MASS * GRAVITY;
        let m_eff = MASS + (2.0 * J_AXLE + J_MOTOR * GEAR * GEAR) / (RADIUS * RADIUS);
        let expected = (drive - resistance) / m_eff;
        let error = (measured - expected).abs() / expected;
        eprintln!("acceleration over 4–6 s: {measured} m/s², by hand {expected} m/s² (error {error:.2e})");
        assert!(
            error < 0.005,
            "a = {measured} m/s², by hand {expected} m/s² (error {error})"
        );
        // Without the rotating inertias the hand value would be 3.5 % off.
        assert!(((drive - resistance) / MASS - measured).abs() / expected > 0.03);
    }

    /// Test 3: the state of charge moves by the integral of the battery
    /// current output over the capacity (discharging and regenerating).
    #[test]
    fn soc_drop_is_the_coulomb_count_over_the_drive_cycle() {
        let run = cycle_run();
        let soc = |t: f64| sample(run, t)[Y_SOC];
        let drop = soc(0.0) - soc(20.0);
        let expected = 100.0 * run.charge / CAPACITY_AS;
        eprintln!(
            "ΔSoC {drop} %, Coulomb count {expected} % (error {:.2e})",
            (drop / expected - 1.0).abs()
        );
        assert!(expected > 0.05, "the cycle draws {} A s", run.charge);
        assert!(
            (drop - expected).abs() <= 1e-6 * expected,
            "ΔSoC {drop} %, Coulomb count {expected} %"
        );
        // Regeneration charges: the SoC rises from 11.5 s to 14 s.
        assert!(soc(14.0) > soc(11.5) + 0.005);
        assert!(sample(run, 12.5)[Y_BATTERY_CURRENT] < -50.0);
    }

    /// Test 4: brakes alone stop the car from 15 m/s in the time Newton
    /// gives, without rolling back.
    #[test]
    fn brakes_stop_the_car_without_rolling_back() {
        let v0 = 15.0;
        let (mut m, mut x) = rolling(v0);
        let pressure = 40.0;
        let (mut v_min, mut t_stop) = (f64::INFINITY, None);
        simulate(
            &mut m,
            &mut x,
            0.0,
            250_000,
            2e-5,
            &|_, u| u.copy_from_slice(&[0.0, pressure, 0.0]),
            |t, x| {
                v_min = v_min.min(x[V]);
                if x[V] < 0.1 && t_stop.is_none() {
                    t_stop = Some(t);
                }
            },
        );
        assert!(v_min >= -0.05, "rolled back to {v_min} m/s");
        assert!(
            x[V].abs() < 1e-3 && x[OMEGA_F].abs() < 1e-2,
            "still moving: {} m/s",
            x[V]
        );
        assert!((x[P_F] - pressure).abs() < 1e-6 && (x[P_R] - pressure * 2.0 / 3.0).abs() < 1e-6);
        // Brake torque 48 N m/bar per axle, rear at 2/3 of the pressure; the
        // first-order lag (50 ms) delays the braking impulse by τ_b; drag at
        // the mean v² of a linear ramp down, motor friction at its mean speed.
        let brake_force = 48.0 * pressure * (1.0 + 2.0 / 3.0) / RADIUS;
        let resistance = DRAG * (v0 * v0 + v0 * 0.1 + 0.01) / 3.0 + C_RR * MASS * GRAVITY;
        let friction = B_MOTOR * GEAR * GEAR * (v0 + 0.1) / 2.0 / (RADIUS * RADIUS);
        let m_eff = MASS + (2.0 * J_AXLE + J_MOTOR * GEAR * GEAR) / (RADIUS * RADIUS);
        let expected = 0.05 + (v0 - 0.1) * m_eff / (brake_force + resistance + friction);
        let t_stop = t_stop.unwrap();
        eprintln!("stopped at {t_stop} s, by hand {expected} s; lowest speed {v_min} m/s");
        assert!(
            (t_stop - expected).abs() < 0.02 * expected,
            "stopped at {t_stop} s, by hand {expected} s"
        );
    }

    /// Test 5: the current loops and the DC link make the model stiff:
    /// RK4 at 1 ms blows up where it is fine at 10 µs.
    #[test]
    fn stiff_modes_make_explicit_rk4_unstable_at_1_ms() {
        let x0 = cycle_run().accelerating;
        let mut m = EvPlant::new();
        let mut u = [0.0; 3];
        cycle(3.0, &mut u);
        let eigenvalues = jacobian(&mut m, &x0, &u).complex_eigenvalues();
        let mut sorted: Vec<_> = eigenvalues.iter().copied().collect();
        sorted.sort_by(|a, b| a.re.total_cmp(&b.re));
        let listed: Vec<_> = sorted.iter().map(|l| format!("{:.4e}{:+.4e}i", l.re, l.im)).collect();
        eprintln!("eigenvalues at t = 3 s of the cycle: {}", listed.join(", "));
        let near = |target: f64, tolerance: f64| {
            sorted
                .iter()
                .filter(|l| (l.re - target).abs() < tolerance * target.abs() && l.im.abs() < 1.0)
                .count()
        };
        assert_eq!(near(-1.0 / TAU_CURRENT, 0.01), 2, "the d and q current loops");
        assert_eq!(near(-1.0 / R0_C_DC, 0.05), 1, "the DC link");
        assert!(sorted.iter().map(|l| l.norm()).fold(0.0, f64::max) >= 5e3);
        assert!(sorted.iter().all(|l| l.re < 1e-3), "an unstable mode");

        // The largest |i_q| and |Δv_dc| met, or infinity once a state is not finite.
        let mut run = |h: f64, steps: usize| {
            let mut x = x0;
            let mut worst: f64 = 0.0;
            simulate(&mut m, &mut x, 3.0, steps, h, &cycle, |_, x| {
                let finite = x.iter().all(|v| v.is_finite());
                let size = x[I_Q].abs().max((x[V_DC] - x0[V_DC]).abs());
                worst = if finite { worst.max(size) } else { f64::INFINITY };
            });
            (worst, x)
        };
        let (worst, _) = run(1e-3, 200);
        assert!(worst > 1e6, "RK4 at 1 ms stayed bounded: max |i_q|, |Δv_dc| = {worst}");
        let (worst, x) = run(1e-5, 20_000);
        assert!(worst < 1e3, "RK4 at 10 µs: max |i_q|, |Δv_dc| = {worst}");
        assert!((x[V] - x0[V]).abs() < 1.0 && x.iter().all(|v| v.is_finite()));
    }

    /// Test 6: `sparsity` lists every entry that a finite-difference
    /// Jacobian finds nonzero, and nothing else but the terms the current
    /// controller's feed-forward cancels.
    #[test]
    fn sparsity_is_a_superset_of_the_difference_jacobian() {
        let mut m = EvPlant::new();
        let columns = m.sparsity().unwrap();
        assert_eq!(columns.len(), N);
        let declared = |i: usize, j: usize| columns[j].contains(&i);
        let mut seen = [[false; N]; N];
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for k in 0..40 {
            let x = rng.state(k);
            let u = rng.inputs();
            let jac = jacobian(&mut m, &x, &u);
            for i in 0..N {
                for j in 0..N {
                    if jac[(i, j)] != 0.0 {
                        assert!(declared(i, j), "∂ẋ_{i}/∂x_{j} = {} is not in the pattern", jac[(i, j)]);
                        seen[i][j] = true;
                    }
                }
            }
        }
        let cancelled = [(I_D, I_Q), (I_D, OMEGA_M), (I_Q, I_D)];
        for (j, rows) in columns.iter().enumerate() {
            for &i in rows {
                assert!(
                    seen[i][j] || cancelled.contains(&(i, j)),
                    "({i}, {j}) declared but never nonzero"
                );
            }
        }
        let entries: usize = columns.iter().map(Vec::len).sum();
        assert!(entries < N * N / 4, "{entries} entries");
    }

    /// Test 7: derivatives and outputs are finite for random plausible
    /// states (standstill included), extreme inputs and a dead DC link.
    #[test]
    fn finite_everywhere_plausible() {
        let mut m = EvPlant::new();
        let mut rng = Rng(12345);
        let mut dx = [0.0; N];
        let mut check = |x: &State, u: &[f64; 3]| {
            derivatives(&mut m, 0.0, x, u, &mut dx);
            let y = outputs(&mut m, x, u);
            assert!(
                dx.iter().chain(&y).all(|v| v.is_finite()),
                "x = {x:?}, u = {u:?}: {dx:?} {y:?}"
            );
        };
        for k in 0..2000 {
            let x = rng.state(k);
            check(&x, &rng.inputs());
            for u in [
                [1e9, -1e9, 1e6],
                [-1e12, 1e12, -1e6],
                [f64::MAX; 3],
                [-f64::MAX; 3],
                [0.0; 3],
            ] {
                check(&x, &u);
            }
        }
        let mut x = [0.0; N];
        check(&x, &[250.0, 40.0, 10.0]);
        x[V_DC] = -5.0;
        check(&x, &[250.0, 40.0, 10.0]);
    }

    /// The profile helper and the shape the documentation promises.
    #[test]
    fn drive_cycle_is_smooth_ramps_over_20_s() {
        let torque = DRIVE_CYCLE[0].1;
        assert_eq!(crate::plants::profile_value(torque, 0.75), 125.0);
        assert_eq!(crate::plants::profile_value(torque, 11.25), -42.5);
        assert_eq!(crate::plants::profile_value(torque, -1.0), 0.0);
        assert_eq!(crate::plants::profile_value(torque, 3.0), 250.0);
        assert_eq!(crate::plants::profile_value(&[(1.0, 5.0)], 0.0), 5.0);
        assert_eq!(crate::plants::profile_value(&[], 1.0), 0.0);
        assert_eq!(crate::plants::profile_value(torque, f64::NAN), 0.0);
        let m = EvPlant::new();
        let names: Vec<_> = DRIVE_CYCLE.iter().map(|(n, _)| *n).collect();
        let inputs: Vec<_> = m.layout().inputs.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, inputs);
        for (name, points) in DRIVE_CYCLE {
            assert_eq!((points[0].0, points[points.len() - 1].0), (0.0, 20.0), "{name}");
            for w in points.windows(2) {
                assert!(w[1].0 > w[0].0, "{name}: unsorted");
                assert!(
                    w[1].1 == w[0].1 || w[1].0 - w[0].0 >= 0.2,
                    "{name}: a step at {} s",
                    w[0].0
                );
            }
        }
        let extreme = |k: usize, f: fn(f64, f64) -> f64| DRIVE_CYCLE[k].1.iter().map(|p| p.1).fold(0.0, f);
        assert_eq!(
            (extreme(0, f64::max), extreme(0, f64::min), extreme(1, f64::max)),
            (250.0, -100.0, 40.0)
        );
    }

    /// The cycle as the documentation describes it: ≈ 16 m/s after the
    /// acceleration, the current limit holding ≈ 210 N m, standstill at the
    /// end without rolling back, a warmer motor.
    #[test]
    fn drive_cycle_runs_as_documented() {
        let run = cycle_run();
        let at = |t: f64| sample(run, t);
        assert!((15.5..17.5).contains(&at(6.0)[Y_VEHICLE_SPEED]), "{:?}", at(6.0));
        assert!((205.0..215.0).contains(&at(3.0)[Y_MOTOR_TORQUE]), "{:?}", at(3.0));
        let v_max = run.trace.iter().map(|(_, y)| y[Y_VEHICLE_SPEED]).fold(0.0, f64::max);
        assert!(v_max < 18.0);
        assert!(run
            .trace
            .iter()
            .all(|(_, y)| y[Y_MOTOR_CURRENT].abs() < I_MAX && y[Y_VEHICLE_SPEED] > -0.05));
        let end = at(20.0);
        assert!(end[Y_VEHICLE_SPEED].abs() < 1e-3 && end[Y_MOTOR_SPEED].abs() < 0.1);
        assert!((150.0..250.0).contains(&end[Y_DISTANCE]));
        assert!(end[Y_MOTOR_TEMPERATURE] > 35.0 && end[Y_BATTERY_TEMPERATURE] > 25.0);
        // The inverter's voltage suffices (no field weakening is modelled).
        eprintln!("largest |u_dq| / (v_dc/√3) over the cycle: {}", run.modulation);
        assert!(run.modulation < 0.9);
        // The power limit: motor power never above 150 kW.
        for (_, y) in &run.trace {
            let power = y[Y_MOTOR_TORQUE] * y[Y_MOTOR_SPEED] * std::f64::consts::TAU / 60.0;
            assert!(power.abs() < P_MAX);
        }
    }

    /// A declared parameter changes by definition swap: the instance takes
    /// the new value and its forks keep theirs; other names and values are
    /// refused by name.
    #[test]
    fn declared_parameters_are_retuned_by_definition_swap() {
        let mut plant = EvPlant::new();
        let mut original = plant.fork();
        let mut definition = plant.retune(PARAMETER_BLOCK, "mass", &Value::from(3600.0)).unwrap();
        assert!(plant.swap_definition(&mut definition));
        assert_eq!(plant.params().mass, 3600.0);
        let mass = plant.tunables().into_iter().find(|(_, p, _)| p == "mass").unwrap();
        assert_eq!(mass, ("ev".to_string(), "mass".to_string(), Value::from(3600.0)));
        // Moving at 10 m/s, coasting: drag and rolling resistance decelerate
        // the heavier car less.
        let mut x = [0.0; STATE_COUNT];
        let mut xd: [f64; 0] = [];
        original.initial_state(&mut x, &mut xd);
        x[V] = 10.0;
        let u = [0.0; 3];
        let slope = |m: &mut dyn Model| {
            let mut dx = [0.0; STATE_COUNT];
            m.derivatives(
                StateRef {
                    t: 0.0,
                    x: &x,
                    xd: &xd,
                    u: &u,
                },
                &mut dx,
            );
            dx[V]
        };
        let (light, heavy) = (slope(original.as_mut()), slope(&mut plant));
        assert!(light < heavy && heavy < 0.0, "{light} {heavy}");

        let refused =
            |block: &str, param: &str, value: f64| plant.retune(block, param, &Value::from(value)).unwrap_err().message;
        assert!(refused("ev", "gear_ratio", 9.0).contains("mass, drag_coefficient"));
        assert!(refused("ev", "mass", -1.0).contains("above zero"));
        assert!(refused("motor", "mass", 1.0).contains("block \"ev\""));
    }
}
