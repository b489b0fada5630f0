//! Plots of recorded outputs: one panel per signal, stacked vertically, as SVG or PNG.
//!
//! Text is drawn with the DejaVu Sans font embedded from `assets/`, so no system font
//! library is needed. Long traces are thinned to a few thousand points per signal, keeping
//! the minimum and maximum of every bucket so that spikes stay visible.

use std::ops::Range;
use std::path::Path;
use std::sync::OnceLock;

use anyhow::{bail, Context};
use plotters::coord::Shift;
use plotters::data::float::pretty_print_float;
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};
use tandem_models::Variable;
use tandem_runtime::record::Trace;

/// Width of the whole picture, in pixels.
const WIDTH: u32 = 1000;
/// Height of one signal's panel, in pixels.
const PANEL_HEIGHT: u32 = 220;
/// Height of the band holding the overall title, in pixels.
const TITLE_HEIGHT: u32 = 50;
/// Blank space around each panel, in pixels.
const MARGIN: u32 = 10;
/// Height of the band under each panel holding the time ticks and axis label, in pixels.
const X_LABEL_AREA: u32 = 45;
/// Most points drawn per signal; longer signals are thinned to about this many.
const MAX_POINTS: usize = 4000;
/// The font family every text in the plot uses.
const FONT: &str = "sans-serif";
/// Line colours, one per panel in turn (the "tab10" palette).
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The image formats `write` can produce.
enum Format {
    Svg,
    Png,
}

/// Draws every output of `trace` against time into `path` (.svg or .png),
/// one panel per signal, titled `title`.
pub fn write(path: &Path, title: &str, trace: &Trace, outputs: &[Variable]) -> anyhow::Result<()> {
    if outputs.is_empty() {
        bail!("the model has no outputs to plot");
    }
    let format = format_of(path)?;
    register_embedded_font()?;
    let panels = u32::try_from(outputs.len()).context("too many outputs to plot")?;
    let height = panels
        .checked_mul(PANEL_HEIGHT)
        .and_then(|h| h.checked_add(TITLE_HEIGHT))
        .context("too many outputs to plot")?;
    let size = (WIDTH, height);
    match format {
        Format::Svg => draw(SVGBackend::new(path, size).into_drawing_area(), title, trace, outputs),
        Format::Png => draw(
            BitMapBackend::new(path, size).into_drawing_area(),
            title,
            trace,
            outputs,
        ),
    }
}

/// Checks that `path` names a format [`write`] can draw, before a run.
pub fn check_path(path: &Path) -> anyhow::Result<()> {
    format_of(path).map(|_| ())
}

/// The image format named by the extension of `path`.
fn format_of(path: &Path) -> anyhow::Result<Format> {
    let Some(ext) = path.extension() else {
        bail!("{} has no file extension; use .svg or .png", path.display());
    };
    match ext.to_string_lossy().to_ascii_lowercase().as_str() {
        "svg" => Ok(Format::Svg),
        "png" => Ok(Format::Png),
        _ => bail!("cannot plot to a .{} file; use .svg or .png", ext.to_string_lossy()),
    }
}

/// Makes the embedded DejaVu Sans the plot font; does the work only on the first call.
fn register_embedded_font() -> anyhow::Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED
        .get_or_init(|| register_font(FONT, FontStyle::Normal, include_bytes!("../assets/DejaVuSans.ttf")).is_ok());
    if !ok {
        bail!("the embedded plot font (assets/DejaVuSans.ttf) could not be loaded");
    }
    Ok(())
}

/// Draws the title and one panel per output onto `root`, then saves it.
fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    trace: &Trace,
    outputs: &[Variable],
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (top, body) = root.split_vertically(TITLE_HEIGHT);
    top.titled(title, (FONT, 24))?;
    let time = axis_range(trace.time.iter().copied(), 0.0);
    for (j, (area, output)) in body.split_evenly((outputs.len(), 1)).iter().zip(outputs).enumerate() {
        let runs = polylines(&trace.time, &column(trace, j));
        draw_panel(area, time.clone(), &axis_label(output), &runs, COLORS[j % COLORS.len()])?;
    }
    root.present()?;
    Ok(())
}

/// Draws one signal, given as runs of points, with its axes into `area`.
fn draw_panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    time: Range<f64>,
    label: &str,
    runs: &[Vec<(f64, f64)>],
    color: RGBColor,
) -> anyhow::Result<()>
where
    DB::ErrorType: 'static,
{
    let values = axis_range(runs.iter().flatten().map(|&(_, y)| y), 0.05);
    let desc_style = TextStyle::from((FONT, 15));
    let label_room = area.dim_in_pixel().1.saturating_sub(X_LABEL_AREA + 2 * MARGIN);
    let label = fit_text(area, label, &desc_style, label_room)?;
    let x_ticks = |v: &f64| tick_label(*v, &time);
    let y_ticks = |v: &f64| tick_label(*v, &values);
    let mut chart = ChartBuilder::on(area)
        .margin(MARGIN)
        .margin_right(25)
        .x_label_area_size(X_LABEL_AREA)
        .y_label_area_size(90)
        .build_cartesian_2d(time.clone(), values.clone())?;
    chart
        .configure_mesh()
        .x_desc("time [s]")
        .y_desc(label)
        .label_style((FONT, 13))
        .axis_desc_style(desc_style)
        .x_labels(10)
        .y_labels(5)
        .x_label_formatter(&x_ticks)
        .y_label_formatter(&y_ticks)
        .light_line_style(WHITE.mix(0.0))
        .draw()?;
    for run in runs {
        // A lone sample has no line to draw; mark it with a dot instead. Lines stay 1 px
        // wide: plotters' bitmap backend draws wider lines outside the chart on steep jumps.
        let dot = if run.len() == 1 { 3 } else { 0 };
        chart.draw_series(LineSeries::new(run.iter().copied(), color.stroke_width(1)).point_size(dot))?;
    }
    Ok(())
}

/// `text`, cut short at the front (marked with "…") if needed so that it is at most
/// `room` pixels wide when drawn on `area` in `style`.
fn fit_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    text: &str,
    style: &TextStyle,
    room: u32,
) -> anyhow::Result<String>
where
    DB::ErrorType: 'static,
{
    let chars: Vec<char> = text.chars().collect();
    for skip in 0..chars.len() {
        let prefix = if skip == 0 { "" } else { "…" };
        let candidate: String = prefix.chars().chain(chars[skip..].iter().copied()).collect();
        if area.estimate_text_size(&candidate, style)?.0 <= room {
            return Ok(candidate);
        }
    }
    Ok(String::new())
}

/// Tick label for `v` on an axis spanning `range`: short, and plain 0 for values that
/// are zero up to rounding.
fn tick_label(v: f64, range: &Range<f64>) -> String {
    let v = if v.abs() < (range.end - range.start) * 1e-9 {
        0.0
    } else {
        v
    };
    pretty_print_float(v, true)
}

/// The y-axis label of `output`: its name, and its unit in brackets when known.
fn axis_label(output: &Variable) -> String {
    match &output.unit {
        Some(unit) if !unit.is_empty() => format!("{} [{unit}]", output.name),
        _ => output.name.clone(),
    }
}

/// The values of output `j` over time; NaN where a row is too short to hold it.
fn column(trace: &Trace, j: usize) -> Vec<f64> {
    trace
        .rows
        .iter()
        .map(|row| row.get(j).copied().unwrap_or(f64::NAN))
        .collect()
}

/// Splits a signal into runs of finite (time, value) points to draw as lines, broken
/// where values are missing. Signals longer than `MAX_POINTS` are cut into buckets, each
/// drawn as its minimum and maximum, in time order.
fn polylines(time: &[f64], values: &[f64]) -> Vec<Vec<(f64, f64)>> {
    let n = time.len().min(values.len());
    let bucket = if n <= MAX_POINTS { 1 } else { n.div_ceil(MAX_POINTS / 2) };
    let mut runs = Vec::new();
    let mut run = Vec::new();
    for start in (0..n).step_by(bucket) {
        let end = (start + bucket).min(n);
        match extremes(&time[start..end], &values[start..end]) {
            Some((first, second)) => {
                run.push((time[start + first], values[start + first]));
                if second != first {
                    run.push((time[start + second], values[start + second]));
                }
            }
            None if !run.is_empty() => runs.push(std::mem::take(&mut run)),
            None => {}
        }
    }
    if !run.is_empty() {
        runs.push(run);
    }
    runs
}

/// Indices of the smallest and largest finite samples, earlier one first; `None` when
/// no sample is finite.
fn extremes(time: &[f64], values: &[f64]) -> Option<(usize, usize)> {
    let finite = |&i: &usize| time[i].is_finite() && values[i].is_finite();
    let indices = || (0..values.len()).filter(finite);
    let min = indices().min_by(|&a, &b| values[a].total_cmp(&values[b]))?;
    let max = indices().max_by(|&a, &b| values[a].total_cmp(&values[b]))?;
    Some((min.min(max), min.max(max)))
}

/// The span of the finite `values`, widened by `margin` of its width on both sides. An
/// empty or zero-width span is widened so the axis still has a scale.
fn axis_range(values: impl IntoIterator<Item = f64>, margin: f64) -> Range<f64> {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return 0.0..1.0;
    }
    // Keep `hi - lo` finite even for values near the limits of f64.
    let (lo, hi) = (lo.max(f64::MIN / 4.0), hi.min(f64::MAX / 4.0));
    let pad = if hi > lo {
        (hi - lo) * margin
    } else if lo.abs() >= 1e-12 {
        lo.abs() * 0.1
    } else {
        1.0
    };
    (lo - pad)..(hi + pad)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fresh path in the temporary directory, unique to this process and `name`.
    fn temp_path(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("tandem-plot-{}-{name}", std::process::id()))
    }

    fn variable(name: &str, unit: Option<&str>) -> Variable {
        Variable {
            unit: unit.map(str::to_string),
            ..Variable::new(name)
        }
    }

    /// A trace of `n` samples, 1 ms apart, of `sin(t)` and `cos(t)`.
    fn two_signals(n: usize) -> Trace {
        let time: Vec<f64> = (0..n).map(|i| i as f64 * 1e-3).collect();
        let rows = time.iter().map(|t| vec![t.sin(), t.cos()]).collect();
        Trace {
            time,
            rows,
            ..Trace::default()
        }
    }

    #[test]
    fn svg_names_every_signal_and_unit() {
        let path = temp_path("two.svg");
        let outputs = [variable("speed", Some("m/s")), variable("torque", None)];
        write(&path, "two signals", &two_signals(500), &outputs).expect("plot");
        let svg = std::fs::read_to_string(&path).expect("read svg");
        std::fs::remove_file(&path).ok();
        assert!(svg.contains("speed [m/s]"), "no speed label");
        assert!(svg.contains("torque"), "no torque label");
        assert!(svg.contains("time [s]"), "no time label");
        assert!(svg.contains("two signals"), "no title");
    }

    #[test]
    fn png_has_magic_bytes_and_width() {
        let path = temp_path("two.png");
        let outputs = [variable("speed", Some("m/s")), variable("torque", Some("N m"))];
        write(&path, "png", &two_signals(10_000), &outputs).expect("plot");
        let bytes = std::fs::read(&path).expect("read png");
        std::fs::remove_file(&path).ok();
        assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
        // The IHDR chunk follows the signature: length (4), "IHDR" (4), width (4), height (4).
        assert_eq!(&bytes[12..16], b"IHDR");
        let width = u32::from_be_bytes([bytes[16], bytes[17], bytes[18], bytes[19]]);
        let height = u32::from_be_bytes([bytes[20], bytes[21], bytes[22], bytes[23]]);
        assert_eq!(width, WIDTH);
        assert_eq!(height, TITLE_HEIGHT + 2 * PANEL_HEIGHT);
    }

    #[test]
    fn unknown_extension_is_named_in_the_error() {
        let path = temp_path("plot.jpeg");
        let err = write(
            &path,
            "t",
            &two_signals(10),
            &[variable("a", None), variable("b", None)],
        )
        .expect_err("jpeg should be refused");
        let message = err.to_string();
        assert!(message.contains(".jpeg") && message.contains(".svg") && message.contains(".png"));
        assert!(!path.exists());
        assert!(write(&temp_path("noext"), "t", &two_signals(10), &[variable("a", None)]).is_err());
    }

    #[test]
    fn no_outputs_is_an_error() {
        let err = write(&temp_path("none.svg"), "t", &Trace::default(), &[]).expect_err("nothing to plot");
        assert_eq!(err.to_string(), "the model has no outputs to plot");
    }

    #[test]
    fn degenerate_traces_do_not_panic() {
        let outputs = [variable("a", Some("V")), variable("b", None)];
        let traces = [
            ("empty", Trace::default()),
            (
                "one-row",
                Trace {
                    time: vec![0.5],
                    rows: vec![vec![1.0, 2.0]],
                    ..Trace::default()
                },
            ),
            (
                "constant",
                Trace {
                    time: vec![0.0, 1.0, 2.0],
                    rows: vec![vec![3.0, 0.0]; 3],
                    ..Trace::default()
                },
            ),
            (
                "nan",
                Trace {
                    time: vec![0.0, 1.0, 2.0],
                    rows: vec![vec![f64::NAN, 1.0], vec![1.0, f64::NAN], vec![f64::INFINITY, 2.0]],
                    ..Trace::default()
                },
            ),
            (
                "short-rows",
                Trace {
                    time: vec![0.0, 1.0],
                    rows: vec![vec![1.0], vec![]],
                    ..Trace::default()
                },
            ),
            (
                "huge",
                Trace {
                    time: vec![0.0, 1.0],
                    rows: vec![vec![f64::MAX, -f64::MAX], vec![-f64::MAX, f64::MAX]],
                    ..Trace::default()
                },
            ),
        ];
        for (name, trace) in &traces {
            for ext in ["svg", "png"] {
                let path = temp_path(&format!("{name}.{ext}"));
                write(&path, name, trace, &outputs).unwrap_or_else(|e| panic!("{name}.{ext}: {e:#}"));
                std::fs::remove_file(&path).ok();
            }
        }
    }

    #[test]
    fn long_signals_are_thinned_but_keep_spikes() {
        let n = 1_000_000;
        let time: Vec<f64> = (0..n).map(|i| i as f64).collect();
        let mut values = vec![0.0; n];
        values[123_457] = 50.0;
        values[987_655] = -7.0;
        let runs = polylines(&time, &values);
        let points: Vec<_> = runs.iter().flatten().collect();
        assert!(points.len() <= MAX_POINTS, "{} points", points.len());
        assert!(points.iter().any(|p| p.1 == 50.0) && points.iter().any(|p| p.1 == -7.0));
        assert!(points.windows(2).all(|w| w[0].0 < w[1].0), "points out of time order");
    }

    #[test]
    fn missing_values_break_the_line() {
        let runs = polylines(&[0.0, 1.0, 2.0, 3.0, 4.0], &[1.0, 2.0, f64::NAN, 3.0, 4.0]);
        assert_eq!(runs, vec![vec![(0.0, 1.0), (1.0, 2.0)], vec![(3.0, 3.0), (4.0, 4.0)]]);
    }

    #[test]
    fn long_labels_are_cut_at_the_front() {
        register_embedded_font().expect("font");
        let mut svg = String::new();
        let area = SVGBackend::with_string(&mut svg, (400, 200)).into_drawing_area();
        let style = TextStyle::from((FONT, 15));
        let label = "plant/controller/integrator_state[12] [rad/s^2]";
        let short = fit_text(&area, label, &style, 150).expect("fit");
        assert!(short.starts_with('…') && short.ends_with("[rad/s^2]"), "{short}");
        assert!(area.estimate_text_size(&short, &style).expect("size").0 <= 150);
        assert_eq!(fit_text(&area, "v [m/s]", &style, 150).expect("fit"), "v [m/s]");
    }

    #[test]
    fn tick_labels_round_noise_to_zero() {
        assert_eq!(tick_label(2.07e-25, &(-1e-9..1e-9)), "0");
        assert_eq!(tick_label(5e-10, &(-1e-9..1e-9)), "5e-10");
        assert_eq!(tick_label(0.25, &(0.0..1.0)), "0.25");
    }

    #[test]
    fn flat_ranges_are_widened() {
        assert_eq!(axis_range([], 0.05), 0.0..1.0);
        assert_eq!(axis_range([0.0, 0.0], 0.05), -1.0..1.0);
        let r = axis_range([5.0, f64::NAN], 0.05);
        assert!(r.start < 5.0 && r.end > 5.0);
    }
}
