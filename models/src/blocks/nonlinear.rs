//! Discontinuous functions: Saturation, DeadZone.

use super::math::same_width;
use super::{Block, BlockError, BlockType, Build, Ctx, Kernel};

/// The block types of this family.
pub(crate) const TYPES: &[BlockType] = &[
    BlockType {
        name: "Saturation",
        summary: "u limited to [`lower`, `upper`]",
        build: saturation,
    },
    BlockType {
        name: "DeadZone",
        summary: "0 inside [`start`, `end`], u minus the nearer edge outside",
        build: dead_zone,
    },
];

/// Reads a pair of bounds `low <= high`.
fn bounds(
    b: &mut Build,
    low: &'static str,
    high: &'static str,
    defaults: (f64, f64),
) -> Result<(f64, f64), BlockError> {
    let lo = b.params.number_or(low, defaults.0)?;
    let hi = b.params.number_or(high, defaults.1)?;
    if lo > hi {
        return Err(BlockError::new(format!("\"{low}\" ({lo}) is above \"{high}\" ({hi})"))
            .help(format!("make \"{low}\" <= \"{high}\"")));
    }
    Ok((lo, hi))
}

/// Which of three regions an input is in, through two zero crossings per
/// element: `2k` for `u` against `low`, `2k + 1` for `u` against `high`.
fn region(c: &mut Ctx, k: usize, u: f64, low: f64, high: f64) -> std::cmp::Ordering {
    let above_low = c.side(2 * k, u - low);
    let below_high = c.side(2 * k + 1, high - u);
    match (above_low, below_high) {
        (false, _) => std::cmp::Ordering::Less,
        (true, false) => std::cmp::Ordering::Greater,
        (true, true) => std::cmp::Ordering::Equal,
    }
}

/// Declares one input, one output of its width and two zero crossings
/// per element.
fn two_sided(b: &mut Build) -> Result<(), BlockError> {
    let w = same_width(b)?;
    b.zero_crossings(2 * w);
    Ok(())
}

struct Saturation(f64, f64);
impl Block for Saturation {
    fn outputs(&self, c: &mut Ctx) {
        for k in 0..c.out_width(0) {
            let u = c.u_at(0, k);
            let y = match region(c, k, u, self.0, self.1) {
                std::cmp::Ordering::Less => self.0,
                std::cmp::Ordering::Greater => self.1,
                std::cmp::Ordering::Equal => u,
            };
            c.set_at(0, k, y);
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Saturation {
            lower: self.0,
            upper: self.1,
        }
    }
}

fn saturation(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let (lo, hi) = bounds(b, "lower", "upper", (-1.0, 1.0))?;
    two_sided(b)?;
    Ok(Box::new(Saturation(lo, hi)))
}

struct DeadZone(f64, f64);
impl Block for DeadZone {
    fn outputs(&self, c: &mut Ctx) {
        for k in 0..c.out_width(0) {
            let u = c.u_at(0, k);
            let y = match region(c, k, u, self.0, self.1) {
                std::cmp::Ordering::Less => u - self.0,
                std::cmp::Ordering::Greater => u - self.1,
                std::cmp::Ordering::Equal => 0.0,
            };
            c.set_at(0, k, y);
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::DeadZone {
            start: self.0,
            end: self.1,
        }
    }
}

fn dead_zone(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let (lo, hi) = bounds(b, "start", "end", (-0.5, 0.5))?;
    two_sided(b)?;
    Ok(Box::new(DeadZone(lo, hi)))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{build_error, eval1};
    use serde_json::json;

    #[test]
    fn saturation_and_dead_zone() {
        let sat = |u| eval1(json!({"type": "Saturation", "params": {"lower": -1, "upper": 2}}), &[u]);
        assert_eq!([sat(-3.0), sat(0.5), sat(3.0)], [-1.0, 0.5, 2.0]);
        let dz = |u| eval1(json!({"type": "DeadZone", "params": {"start": -1, "end": 2}}), &[u]);
        assert_eq!([dz(-3.0), dz(0.5), dz(3.0)], [-2.0, 0.0, 1.0]);
        assert!(build_error(json!({"type": "Saturation", "params": {"lower": 1, "upper": 0}}), 1).contains("above"));
    }
}
