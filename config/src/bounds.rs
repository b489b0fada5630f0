//! The bounds of every time and size a file or the command line gives:
//! each is checked where it is read, and the message names it. Together
//! they keep every run finite and every buffer of a reasonable size.

/// The shortest frame of a run (s): below it no machine keeps time.
pub const MIN_FRAME: f64 = 1e-6;
/// The longest frame of a run (s).
pub const MAX_FRAME: f64 = 10.0;
/// The longest run (s): seven days, the longest soak a bench does.
pub const MAX_DURATION: f64 = 7.0 * 24.0 * 3600.0;
/// The most frames the implicit thread's macro step, lead or lag may span:
/// its input history holds that many samples.
pub const MAX_LAG_FRAMES: f64 = 10_000.0;
/// The most frames a periodic action (a serial device's cycle) may span.
pub const MAX_PERIOD_FRAMES: f64 = 1e6;
/// The shortest step of an offline simulation (s).
pub const MIN_STEP: f64 = 1e-9;
/// The latest stop time of an offline simulation (s).
pub const MAX_STOP: f64 = 1e9;
/// The most values (rows × columns) a recording may hold without an
/// explicit `--large-output`: about 10 to 20 GB of CSV.
pub const MAX_OUTPUT_VALUES: f64 = 1e9;

/// `value` as messages show a number the user gave: plainly when it is of
/// an everyday size, else with an exponent (`1e300`, not 301 digits).
///
/// ```
/// use tandem_config::bounds::shown_number;
/// assert_eq!(shown_number(-1.0), "-1");
/// assert_eq!(shown_number(1e300), "1e300");
/// ```
pub fn shown_number(value: f64) -> String {
    if value == 0.0 || !value.is_finite() || (1e-4..1e6).contains(&value.abs()) {
        value.to_string()
    } else {
        format!("{value:e}")
    }
}

/// A run length outside `(0, MAX_DURATION]`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("must be more than 0 and at most {MAX_DURATION} s (7 days), found {}", shown_number(*.0))]
pub struct DurationOutOfRange(pub f64);

/// Checks a run length given in seconds (`--duration`).
///
/// ```
/// use tandem_config::bounds::check_duration;
/// assert!(check_duration(20.0).is_ok());
/// assert!(check_duration(f64::NAN).is_err());
/// ```
pub fn check_duration(seconds: f64) -> Result<f64, DurationOutOfRange> {
    if seconds > 0.0 && seconds <= MAX_DURATION {
        Ok(seconds)
    } else {
        Err(DurationOutOfRange(seconds))
    }
}

/// A recording larger than [`MAX_OUTPUT_VALUES`], refused before it starts.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error(
    "the recording would hold {rows:.3e} rows × {columns} columns = {:.3e} values, more than the bound of \
     {MAX_OUTPUT_VALUES:e}; shorten the run, lengthen the step or the decimation, or pass --large-output",
    rows * *columns as f64
)]
pub struct OutputTooLarge {
    /// The rows it would have.
    pub rows: f64,
    /// The columns of each row (time included).
    pub columns: usize,
}

/// Refuses a recording of `rows` rows of `columns` columns above
/// [`MAX_OUTPUT_VALUES`] unless `large_output` allows it.
///
/// ```
/// use tandem_config::bounds::check_output_size;
/// assert!(check_output_size(1e6, 10, false).is_ok());
/// assert!(check_output_size(1e12, 2, false).is_err());
/// assert!(check_output_size(1e12, 2, true).is_ok());
/// ```
pub fn check_output_size(rows: f64, columns: usize, large_output: bool) -> Result<(), OutputTooLarge> {
    if large_output || rows * columns as f64 <= MAX_OUTPUT_VALUES {
        Ok(())
    } else {
        Err(OutputTooLarge { rows, columns })
    }
}
