//! State events for the drivers: settings, locating a crossing in time, and
//! watching for chattering; [`locator`] is the locator every driver calls.
//!
//! A model reports, per zero-crossing function, a switching distance that is
//! positive while its mode holds ([`tandem_models::Model::zero_crossings`]).
//! When a step ends with a negative distance, the driver finds the instant
//! it crossed zero (regula falsi, Anderson–Björck) by re-integrating
//! the step with shorter lengths (explicit methods) or on the step's
//! interpolating polynomial (the BDF), stops there, and runs the event
//! iteration: major outputs (modes switch), update (resets), re-check.

use std::fmt;
use std::str::FromStr;

use crate::named::UnknownName;

pub mod locator;

/// What to do when a block keeps switching without time passing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChatterPolicy {
    /// Stop the run with a diagnostic naming the block.
    Stop,
    /// Turn event location off for that block and go on (its switching
    /// becomes step-granular); the run's summary names it.
    Disable,
}

impl ChatterPolicy {
    /// Both policies, for listing valid names.
    pub const ALL: [ChatterPolicy; 2] = [ChatterPolicy::Stop, ChatterPolicy::Disable];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ChatterPolicy::Stop => "stop",
            ChatterPolicy::Disable => "disable",
        }
    }
}

impl FromStr for ChatterPolicy {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, UnknownName> {
        crate::named::by_name(&ChatterPolicy::ALL, ChatterPolicy::name, s, "chattering policy")
    }
}

impl fmt::Display for ChatterPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How state events are handled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EventSettings {
    /// Locate zero crossings in time (off: modes switch only at grid
    /// steps, as in a step-granular simulator).
    pub locate: bool,
    /// Width of the final bracket of a located event, relative to
    /// max(1, |t|) seconds.
    pub tolerance: f64,
    /// Events closer than `window` (relative, like `tolerance`) to the
    /// previous one count as consecutive; this many in a row is chattering.
    pub max_consecutive: u32,
    /// Relative time window of consecutive events.
    pub window: f64,
    /// What chattering does.
    pub chatter: ChatterPolicy,
    /// Rounds of the event iteration at one instant before it is an event
    /// storm.
    pub max_iterations: u32,
    /// Record the outputs just before and just after each event (two rows
    /// with the same time) besides the regular grid.
    pub record: bool,
}

impl Default for EventSettings {
    fn default() -> Self {
        EventSettings {
            locate: true,
            tolerance: 1e-12,
            max_consecutive: 1000,
            window: 1e-9,
            chatter: ChatterPolicy::Stop,
            max_iterations: 100,
            record: false,
        }
    }
}

/// An event option out of its range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EventOptionError {
    /// The bracket tolerance.
    #[error("must be between 0 and 1e-3 (relative), found {0}")]
    Tolerance(f64),
    /// The chattering count.
    #[error("must be at least 2, found {0}")]
    MaxConsecutive(u32),
}

impl EventOptionError {
    /// The option's name (`event_tolerance`, `max_consecutive_events`).
    pub fn option(&self) -> &'static str {
        match self {
            EventOptionError::Tolerance(_) => "event_tolerance",
            EventOptionError::MaxConsecutive(_) => "max_consecutive_events",
        }
    }
}

impl EventSettings {
    /// The defaults with the options a user gives, each checked.
    pub fn with_options(
        locate: bool,
        tolerance: f64,
        max_consecutive: u32,
        chatter: ChatterPolicy,
        record: bool,
    ) -> Result<Self, EventOptionError> {
        if !(tolerance > 0.0 && tolerance < 1e-3) {
            return Err(EventOptionError::Tolerance(tolerance));
        }
        if max_consecutive < 2 {
            return Err(EventOptionError::MaxConsecutive(max_consecutive));
        }
        Ok(EventSettings {
            locate,
            tolerance,
            max_consecutive,
            chatter,
            record,
            ..EventSettings::default()
        })
    }

    /// The absolute time tolerance near `t`.
    pub fn tolerance_at(&self, t: f64) -> f64 {
        self.tolerance * t.abs().max(1.0)
    }
}

/// Finds where `f` crosses zero in `[a, b]`, given `f(a) >= 0 > f(b)`:
/// returns the right end of a bracket narrower than `tol`, where `f` is
/// already negative (so the event has happened there).
///
/// Regula falsi with the Anderson–Björck rule: when the same end is
/// replaced twice in a row, the value kept at the other end is scaled by
/// how little the replaced end's value changed, so the bracket closes from
/// both sides (superlinearly on smooth functions, however skewed). A
/// function at zero at `a` (a state that starts on its switching surface:
/// clamped at a limit, or just reset onto it) that is negative just past
/// `a` crosses there.
pub fn regula_falsi(mut f: impl FnMut(f64) -> f64, mut a: f64, mut fa: f64, mut b: f64, mut fb: f64, tol: f64) -> f64 {
    if fa <= 0.0 && b - a > tol {
        let c = a + tol;
        let fc = f(c);
        if fc < 0.0 || fc.is_nan() {
            return c;
        }
        // It leaves the surface on the positive side: the crossing is
        // further on.
        (a, fa) = (c, fc);
    }
    // Which end the last new point replaced.
    let mut last = 0i8;
    for _ in 0..200 {
        if b - a <= tol {
            break;
        }
        let mut c = b - fb * (b - a) / (fb - fa);
        if !(c > a && c < b) {
            c = 0.5 * (a + b);
        }
        // Never let the bracket shrink slower than bisection near the end.
        c = c.clamp(a + 0.25 * tol, b - 0.25 * tol);
        let fc = f(c);
        if fc < 0.0 || fc.is_nan() {
            let fc = if fc.is_nan() { -f64::MIN_POSITIVE } else { fc };
            if last == -1 {
                fa *= scale(fc, fb);
            }
            (b, fb, last) = (c, fc, -1);
        } else {
            if last == 1 {
                fb *= scale(fc, fa);
            }
            (a, fa, last) = (c, fc, 1);
        }
    }
    b
}

/// The Anderson–Björck factor for the value kept at one end when the other
/// end's value goes from `old` to `new` on the same side: `1 - new / old`,
/// or one half when that is not positive.
fn scale(new: f64, old: f64) -> f64 {
    let m = 1.0 - new / old;
    if m > 0.0 {
        m
    } else {
        0.5
    }
}

/// Counts events that follow each other within a short window.
#[derive(Clone, Copy, Debug, Default)]
pub struct ChatterWatch {
    last: Option<f64>,
    count: u32,
}

impl ChatterWatch {
    /// Notes an event at `t` and returns how many consecutive events
    /// (closer than `window` each to the one before) end with it.
    pub fn observe(&mut self, t: f64, window: f64) -> u32 {
        self.count = match self.last {
            Some(last) if t - last <= window => self.count + 1,
            _ => 1,
        };
        self.last = Some(t);
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regula_falsi_brackets_roots_of_curved_functions_tightly() {
        for root in [0.1, 0.5, 0.999] {
            let f = |t: f64| (root - t) * (1.0 + 10.0 * t * t);
            let b = regula_falsi(f, 0.0, f(0.0), 1.0, f(1.0), 1e-13);
            assert!(f(b) < 0.0 || f(b) == 0.0);
            assert!((b - root).abs() <= 1e-13, "root {root}: {b}");
        }
    }

    #[test]
    fn regula_falsi_treats_nan_as_past_the_crossing() {
        let f = |t: f64| if t > 0.3 { f64::NAN } else { 0.3 - t };
        let b = regula_falsi(f, 0.0, 0.3, 1.0, f64::NAN, 1e-12);
        assert!((b - 0.3).abs() < 1e-11, "{b}");
    }

    #[test]
    fn regula_falsi_closes_skewed_brackets_in_few_evaluations() {
        // A root near one end, the function steep at the other (an
        // acceleration changing sign inside a frame): a handful of
        // evaluations, where plain regula falsi creeps.
        let root = 1e-5;
        let f = |t: f64| (root - t) * (1.0 + 1e4 * t);
        let mut evaluations = 0;
        let b = regula_falsi(
            |t| {
                evaluations += 1;
                f(t)
            },
            0.0,
            f(0.0),
            1e-3,
            f(1e-3),
            1e-13,
        );
        assert!(f(b) < 0.0 && (b - root).abs() < 1e-13, "{b}");
        assert!(evaluations <= 12, "{evaluations} evaluations");
    }

    #[test]
    fn a_function_on_its_surface_crosses_where_it_leaves_it_negative() {
        // Zero at the start: departing negatively (a plate leaving its
        // stop), it crosses there, in one evaluation; departing positively
        // (a ball reset onto the floor with an upward speed), at its later
        // root.
        let mut evaluations = 0;
        let leaving = |t: f64| -t * t;
        let b = regula_falsi(
            |t| {
                evaluations += 1;
                leaving(t)
            },
            0.0,
            0.0,
            1e-3,
            leaving(1e-3),
            1e-12,
        );
        assert!(b <= 1e-12 && evaluations == 1, "{b} after {evaluations}");
        let hop = |t: f64| t * (4e-4 - t);
        let b = regula_falsi(hop, 0.0, 0.0, 1e-3, hop(1e-3), 1e-12);
        assert!(hop(b) < 0.0 && (b - 4e-4).abs() < 1e-12, "{b}");
    }

    #[test]
    fn chatter_watch_counts_only_close_events() {
        let mut w = ChatterWatch::default();
        assert_eq!(w.observe(1.0, 1e-9), 1);
        assert_eq!(w.observe(1.0 + 1e-12, 1e-9), 2);
        assert_eq!(w.observe(1.0 + 2e-12, 1e-9), 3);
        assert_eq!(w.observe(2.0, 1e-9), 1);
    }
}
