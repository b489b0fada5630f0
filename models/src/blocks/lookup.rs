//! Lookup tables: Lookup1D and Lookup2D, and the interpolation they share
//! with FromTable.

use super::params::{check_matrix, Shape};
use super::{Block, BlockError, BlockType, Build, Ctx, Kernel};

/// The block types of this family.
pub(crate) const TYPES: &[BlockType] = &[
    BlockType {
        name: "Lookup1D",
        summary: "y = table(u) by linear interpolation over `breakpoints`",
        build: lookup1d,
    },
    BlockType {
        name: "Lookup2D",
        summary: "y = table(u1, u2) by bilinear interpolation over `rows` × `columns`",
        build: lookup2d,
    },
];

/// What to do outside the breakpoints.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Extrapolation {
    /// Hold the end values.
    Clip,
    /// Continue the end segments.
    Linear,
}

impl Extrapolation {
    /// Reads the `extrapolation` parameter (`clip` by default).
    pub(crate) fn read(b: &mut Build) -> Result<Self, BlockError> {
        Ok(
            match b.params.choice_or("extrapolation", &["clip", "linear"], "clip")? {
                "linear" => Extrapolation::Linear,
                _ => Extrapolation::Clip,
            },
        )
    }
}

/// Checks that breakpoints are at least two and strictly increasing.
pub(crate) fn check_breakpoints(key: &'static str, xs: &[f64]) -> Result<(), BlockError> {
    Shape::AtLeast(2).check(key, xs)?;
    if xs.windows(2).any(|w| w[1].is_nan() || w[1] <= w[0]) {
        return Err(BlockError::new(format!(
            "parameter \"{key}\" must hold at least two strictly increasing numbers, found {xs:?}"
        )));
    }
    Ok(())
}

/// The segment of `xs` to interpolate `x` on, and the fraction along it.
fn segment(xs: &[f64], x: f64, extrapolation: Extrapolation) -> (usize, f64) {
    let i = xs.partition_point(|&b| b <= x).clamp(1, xs.len() - 1) - 1;
    let f = (x - xs[i]) / (xs[i + 1] - xs[i]);
    match extrapolation {
        Extrapolation::Clip => (i, f.clamp(0.0, 1.0)),
        Extrapolation::Linear => (i, f),
    }
}

/// `ys` at `x`, linear between breakpoints `xs` (strictly increasing).
fn interpolate(xs: &[f64], ys: &[f64], x: f64, extrapolation: Extrapolation) -> f64 {
    let (i, f) = segment(xs, x, extrapolation);
    ys[i] + f * (ys[i + 1] - ys[i])
}

/// A curve given by points, interpolated linearly between them.
#[derive(Clone, Debug)]
pub struct Curve {
    xs: Vec<f64>,
    ys: Vec<f64>,
    extrapolation: Extrapolation,
}

impl Curve {
    /// The curve through `(xs[i], ys[i])`, `xs` strictly increasing.
    pub(crate) fn new(xs: Vec<f64>, ys: Vec<f64>, extrapolation: Extrapolation) -> Self {
        Curve { xs, ys, extrapolation }
    }

    /// Its value at `x`.
    #[inline]
    pub fn value(&self, x: f64) -> f64 {
        interpolate(&self.xs, &self.ys, x, self.extrapolation)
    }
}

struct Lookup1D(Curve);
impl Block for Lookup1D {
    fn outputs(&self, c: &mut Ctx) {
        c.map(0, 0, |u| self.0.value(u));
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Lookup(&self.0)
    }
}

fn lookup1d(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let breakpoints = b.params.numbers("breakpoints")?;
    let table = b.params.numbers("table")?;
    let extrapolation = Extrapolation::read(b)?;
    check_breakpoints("breakpoints", &breakpoints)?;
    Shape::OnePer {
        each: "breakpoint",
        n: breakpoints.len(),
    }
    .check("table", &table)?;
    b.inputs(1);
    let w = b.width(0)?;
    b.outputs(&[w]);
    Ok(Box::new(Lookup1D(Curve::new(breakpoints, table, extrapolation))))
}

/// A surface given by a table over rows × columns, interpolated
/// bilinearly.
#[derive(Clone, Debug)]
pub struct Surface {
    rows: Vec<f64>,
    columns: Vec<f64>,
    /// One row per breakpoint of `rows`, one entry per breakpoint of
    /// `columns`.
    table: Vec<Vec<f64>>,
    extrapolation: Extrapolation,
}

impl Surface {
    /// Its value at `(row, column)`: along the columns within the two rows
    /// around `row`, then between those.
    #[inline]
    pub fn value(&self, row: f64, column: f64) -> f64 {
        let (i, fr) = segment(&self.rows, row, self.extrapolation);
        let (j, fc) = segment(&self.columns, column, self.extrapolation);
        let t = &self.table;
        let top = t[i][j] + fc * (t[i][j + 1] - t[i][j]);
        let bottom = t[i + 1][j] + fc * (t[i + 1][j + 1] - t[i + 1][j]);
        top + fr * (bottom - top)
    }
}

struct Lookup2D(Surface);
impl Block for Lookup2D {
    fn outputs(&self, c: &mut Ctx) {
        for k in 0..c.out_width(0) {
            let v = self.0.value(c.u_at(0, k), c.u_at(1, k));
            c.set_at(0, k, v);
        }
    }

    fn kernel(&self) -> Kernel<'_> {
        Kernel::Lookup2D(&self.0)
    }
}

fn lookup2d(b: &mut Build) -> Result<Box<dyn Block>, BlockError> {
    let rows = b.params.numbers("rows")?;
    let columns = b.params.numbers("columns")?;
    let table = b.params.matrix("table")?;
    let extrapolation = Extrapolation::read(b)?;
    check_breakpoints("rows", &rows)?;
    check_breakpoints("columns", &columns)?;
    check_matrix(
        "table",
        &table,
        rows.len(),
        columns.len(),
        "one row per breakpoint of \"rows\", one entry per breakpoint of \"columns\"",
    )?;
    b.named_inputs(&["row", "column"]);
    let w = b.common_width()?;
    b.outputs(&[w]);
    Ok(Box::new(Lookup2D(Surface {
        rows,
        columns,
        table,
        extrapolation,
    })))
}

#[cfg(test)]
mod tests {
    use super::super::testing::{build_error, eval1};
    use super::*;
    use serde_json::json;

    #[test]
    fn interpolation_clips_or_extrapolates() {
        let xs = [0.0, 1.0, 3.0];
        let ys = [0.0, 10.0, 0.0];
        assert_eq!(interpolate(&xs, &ys, 2.0, Extrapolation::Clip), 5.0);
        assert_eq!(interpolate(&xs, &ys, 4.0, Extrapolation::Clip), 0.0);
        assert_eq!(interpolate(&xs, &ys, 4.0, Extrapolation::Linear), -5.0);
        assert_eq!(interpolate(&xs, &ys, -1.0, Extrapolation::Linear), -10.0);
        assert_eq!(interpolate(&xs, &ys, 1.0, Extrapolation::Clip), 10.0);
    }

    #[test]
    fn lookup_blocks_interpolate_their_tables() {
        let l1 =
            json!({"type": "Lookup1D", "params": {"breakpoints": [0, 2], "table": [1, 5], "extrapolation": "linear"}});
        assert_eq!(eval1(l1.clone(), &[1.5]), 4.0);
        assert_eq!(eval1(l1, &[3.0]), 7.0);
        let l2 =
            json!({"type": "Lookup2D", "params": {"rows": [0, 1], "columns": [0, 10], "table": [[0, 10], [100, 110]]}});
        assert_eq!(eval1(l2.clone(), &[0.5, 5.0]), 55.0);
        assert_eq!(eval1(l2, &[2.0, -5.0]), 100.0);
        let e = build_error(
            json!({"type": "Lookup1D", "params": {"breakpoints": [0, 1, 2], "table": [1, 5]}}),
            1,
        );
        assert!(
            e.ends_with("block \"b\": table: a list of 2 values; give one value per breakpoint (3)"),
            "{e}"
        );
        let e = build_error(
            json!({"type": "Lookup1D", "params": {"breakpoints": [], "table": []}}),
            1,
        );
        assert!(
            e.ends_with("block \"b\": breakpoints: an empty list; give a list of at least 2 values"),
            "{e}"
        );
        let bad =
            json!({"type": "Lookup2D", "params": {"rows": [0, 1], "columns": [0, 1, 2], "table": [[0, 1], [2, 3]]}});
        assert!(
            build_error(bad, 2).contains(
                "table: a 2×2 matrix; give a 2×3 matrix (one row per breakpoint of \"rows\", one entry per \
                 breakpoint of \"columns\")"
            ),
            "{}",
            build_error(
                json!({"type": "Lookup2D", "params": {"rows": [0, 1], "columns": [0, 1, 2], "table": [[0, 1], [2, 3]]}}),
                2
            )
        );
    }
}
