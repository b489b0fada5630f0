//! Sources: Constant, Step, Ramp, Sine, Pulse, Clock, FromTable.

use super::kernel::Wave;
use super::lookup::{check_breakpoints, Curve, Extrapolation};
use super::params::Shape;
use super::{Block, BlockError, BlockType, Build, Ctx, Kernel, Rate};
use crate::error_kind::ErrorKind;

/// The block types of this family.
pub(crate) const TYPES: &[BlockType] = &[
    BlockType {
        name: "Constant",
        summary: "A constant value (scalar or vector)",
        build: constant,
    },
    BlockType {
        name: "Step",
        summary: "Jumps from `before` to `after` at `time`",
        build: step,
    },
    BlockType {
        name: "Ramp",
        summary: "`initial` + `slope` * (t - `start`) after `start`",
        build: ramp,
    },
    BlockType {
        name: "Sine",
        summary: "`bias` + `amplitude` * sin(`frequency` * t + `phase`), frequency in rad/s",
        build: sine,
    },
    BlockType {
        name: "Pulse",
        summary: "Rectangular pulses of `amplitude`, `period`, `width` (fraction) after `delay`",
        build: pulse,
    },
    BlockType {
        name: "Clock",
        summary: "The simulation time",
        build: clock,
    },
    BlockType {
        name: "FromTable",
        summary: "A time series (`times`, `values`) interpolated linearly",
        build: from_table,
    },
];

/// Declares a source with no inputs and one output; time-driven sources
/// are continuous unless a sample time is set on them.
fn source(b: &mut Build, width: usize, rate: Rate) {
    b.inputs(0);
    b.outputs(&[width]);
    b.rate(rate);
}

struct Constant(Vec<f64>);
impl Block for Constant {
    fn outputs(&self, c: &mut Ctx) {
        for (k, &v) in self.0.iter().enumerate() {
            c.set_at(0, k, v);
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Constant(&self.0)
    }
}

fn constant(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let value = b.params.numbers("value")?;
    Shape::AtLeast(1).check("value", &value)?;
    source(b, value.len(), Rate::Constant);
    Ok(Box::new(Constant(value)))
}

/// A scalar function of time.
enum TimeFunction {
    Sine(Wave),
    Clock,
}
impl Block for TimeFunction {
    fn outputs(&self, c: &mut Ctx) {
        let v = match self {
            TimeFunction::Sine(wave) => wave.at(c.t),
            TimeFunction::Clock => c.t,
        };
        c.set(0, v);
    }

    fn kernel(&self) -> Kernel<'_> {
        match *self {
            TimeFunction::Sine(wave) => Kernel::Sine(wave),
            TimeFunction::Clock => Kernel::Clock,
        }
    }
}

/// A kink or jump at a fixed time, a time event: the zero crossing of
/// t - `at` makes the solver stop exactly there.
enum Switched {
    Step { time: f64, before: f64, after: f64 },
    Ramp { slope: f64, start: f64, initial: f64 },
}
impl Block for Switched {
    fn outputs(&self, c: &mut Ctx) {
        let v = match *self {
            Switched::Step { time, before, after } => {
                if c.side(0, c.t - time) {
                    after
                } else {
                    before
                }
            }
            Switched::Ramp { slope, start, initial } => {
                if c.side(0, c.t - start) {
                    initial + slope * (c.t - start)
                } else {
                    initial
                }
            }
        };
        c.set(0, v);
    }

    fn kernel(&self) -> Kernel<'_> {
        match *self {
            Switched::Step { time, before, after } => Kernel::Step { time, before, after },
            Switched::Ramp { slope, start, initial } => Kernel::Ramp { slope, start, initial },
        }
    }
}

/// A source with one time event.
fn switched(b: &mut Build, block: Switched) -> Result<Box<dyn Block>, BlockError> {
    source(b, 1, Rate::Continuous);
    b.zero_crossings(1);
    Ok(Box::new(block))
}

fn step(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let time = b.params.number_or("time", 1.0)?;
    let before = b.params.number_or("before", 0.0)?;
    let after = b.params.number_or("after", 1.0)?;
    switched(b, Switched::Step { time, before, after })
}

fn ramp(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let slope = b.params.number_or("slope", 1.0)?;
    let start = b.params.number_or("start", 0.0)?;
    let initial = b.params.number_or("initial", 0.0)?;
    switched(b, Switched::Ramp { slope, start, initial })
}

fn sine(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let amplitude = b.params.number_or("amplitude", 1.0)?;
    let frequency = b.params.number_or("frequency", 1.0)?;
    let phase = b.params.number_or("phase", 0.0)?;
    let bias = b.params.number_or("bias", 0.0)?;
    source(b, 1, Rate::Continuous);
    Ok(Box::new(TimeFunction::Sine(Wave {
        amplitude,
        frequency,
        phase,
        bias,
    })))
}

/// Rectangular pulses whose edges are time events. `xd` = [time of the
/// next edge after the last major step, level since then].
struct Pulse {
    amplitude: f64,
    period: f64,
    width: f64,
    delay: f64,
}

impl Pulse {
    /// The level at `t` and the time of the first edge after `t`.
    fn at(&self, t: f64) -> (f64, f64) {
        if t < self.delay {
            return (0.0, self.delay);
        }
        let cycle = ((t - self.delay) / self.period).floor();
        let start = self.delay + cycle * self.period;
        let fall = start + self.width * self.period;
        if t < fall {
            (self.amplitude, fall)
        } else {
            (0.0, start + self.period)
        }
    }
}

impl Block for Pulse {
    fn outputs(&self, c: &mut Ctx) {
        if c.is_major() {
            let (level, next) = self.at(c.t);
            c.xd[0] = next;
            c.xd[1] = level;
        }
        c.side(0, c.xd[0] - c.t);
        let v = c.xd[1];
        c.set(0, v);
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Pulse
    }
}

fn pulse(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let amplitude = b.params.number_or("amplitude", 1.0)?;
    let period = b.params.number_or("period", 1.0)?;
    let width = b.params.number_or("width", 0.5)?;
    let delay = b.params.number_or("delay", 0.0)?;
    if period.is_nan() || period <= 0.0 || !(0.0..=1.0).contains(&width) {
        return Err(BlockError::new(format!(
            "Pulse needs period > 0 and 0 <= width <= 1, found period {period}, width {width}"
        )));
    }
    source(b, 1, Rate::Continuous);
    b.zero_crossings(1);
    b.discrete_states(vec![0.0, 0.0]);
    Ok(Box::new(Pulse {
        amplitude,
        period,
        width,
        delay,
    }))
}

fn clock(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    source(b, 1, Rate::Continuous);
    Ok(Box::new(TimeFunction::Clock))
}

/// One curve of time per output element.
struct FromTable(Vec<Curve>);
impl Block for FromTable {
    fn outputs(&self, c: &mut Ctx) {
        for (k, curve) in self.0.iter().enumerate() {
            let v = curve.value(c.t);
            c.set_at(0, k, v);
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::TimeTable(&self.0)
    }
}

fn from_table(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let times = b.params.numbers("times")?;
    let rows = b.params.matrix("values")?;
    let extrapolation = Extrapolation::read(b)?;
    check_breakpoints("times", &times)?;
    // `values` is either one row with a value per time, or one row per time.
    let columns: Vec<Vec<f64>> = if rows.len() == 1 && rows[0].len() == times.len() {
        rows
    } else if rows.len() == times.len() {
        (0..rows[0].len())
            .map(|k| rows.iter().map(|r| r[k]).collect())
            .collect()
    } else {
        return Err(BlockError::of_param(
            ErrorKind::Dimension,
            "values",
            format!(
                "a {}×{} matrix; give one value per time ({}), or one row of values per time",
                rows.len(),
                rows[0].len(),
                times.len()
            ),
        ));
    };
    source(b, columns.len(), Rate::Continuous);
    Ok(Box::new(FromTable(
        columns
            .into_iter()
            .map(|ys| Curve::new(times.clone(), ys, extrapolation))
            .collect(),
    )))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{build_error, eval};
    use serde_json::json;

    fn at(block: serde_json::Value, t: f64) -> Vec<f64> {
        eval(block, &[], 1, t).unwrap().remove(0)
    }

    #[test]
    fn time_functions_match_their_formulas() {
        assert_eq!(
            at(json!({"type": "Constant", "params": {"value": [1, 2]}}), 3.0),
            vec![1.0, 2.0]
        );
        assert_eq!(
            at(json!({"type": "Step", "params": {"time": 0.5, "after": 3}}), 0.49),
            vec![0.0]
        );
        assert_eq!(
            at(json!({"type": "Step", "params": {"time": 0.5, "after": 3}}), 0.5),
            vec![3.0]
        );
        assert_eq!(
            at(
                json!({"type": "Ramp", "params": {"slope": 2, "start": 1, "initial": 5}}),
                3.0
            ),
            vec![9.0]
        );
        let s = at(
            json!({"type": "Sine", "params": {"amplitude": 2, "frequency": 3, "phase": 0.1, "bias": 1}}),
            0.7,
        )[0];
        assert!((s - (1.0 + 2.0 * (2.1f64 + 0.1).sin())).abs() < 1e-15);
        assert_eq!(at(json!({"type": "Clock"}), 4.25), vec![4.25]);
    }

    #[test]
    fn list_parameters_are_checked_for_their_length() {
        let e = build_error(json!({"type": "Constant", "params": {"value": []}}), 0);
        assert!(
            e.ends_with("block \"b\": value: an empty list; give a list of at least one value"),
            "{e}"
        );
        let e = build_error(json!({"type": "FromTable", "params": {"times": [], "values": [1]}}), 0);
        assert!(
            e.ends_with("block \"b\": times: an empty list; give a list of at least 2 values"),
            "{e}"
        );
        let e = build_error(
            json!({"type": "FromTable", "params": {"times": [0, 1, 2], "values": [[1, 2], [3, 4]]}}),
            0,
        );
        assert!(
            e.ends_with(
                "block \"b\": values: a 2×2 matrix; give one value per time (3), or one row of values per time"
            ),
            "{e}"
        );
    }

    #[test]
    fn pulse_is_high_for_its_width_after_its_delay() {
        let p = |t| {
            at(
                json!({"type": "Pulse", "params": {"amplitude": 2, "period": 1, "width": 0.25, "delay": 0.5}}),
                t,
            )[0]
        };
        assert_eq!(
            [p(0.4), p(0.5), p(0.74), p(0.75), p(1.5), p(1.8)],
            [0.0, 2.0, 2.0, 0.0, 2.0, 0.0]
        );
    }

    #[test]
    fn from_table_interpolates_and_holds_the_ends() {
        let b = |t| {
            at(
                json!({"type": "FromTable", "params": {"times": [0, 1, 3], "values": [0, 10, 30]}}),
                t,
            )[0]
        };
        assert_eq!([b(-1.0), b(0.5), b(2.0), b(9.0)], [0.0, 5.0, 20.0, 30.0]);
        let v = at(
            json!({"type": "FromTable", "params": {"times": [0, 1], "values": [[0, 1], [10, 11]]}}),
            0.5,
        );
        assert_eq!(v, vec![5.0, 6.0]);
        assert!(build_error(
            json!({"type": "FromTable", "params": {"times": [0, 0], "values": [1, 2]}}),
            0
        )
        .contains("strictly increasing"));
    }
}
