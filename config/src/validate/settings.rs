//! The tandem's settings: frame, duration, policy, deadline and both
//! threads.

use tandem_runtime::tandem::{FastSettings, ImplicitThreadSettings, Placement, TandemSettings};

use super::checks::{given, shown, Given};
use crate::bounds::{MAX_DURATION, MAX_FRAME, MAX_LAG_FRAMES, MAX_PERIOD_FRAMES, MIN_FRAME};
use crate::duration::Duration;
use crate::error::ConfigError;
use crate::raw::{RawFast, RawImplicit, RawRunConfig};
use crate::run::{DEFAULT_DURATION, DEFAULT_FRAME, MAX_COUNT};
use crate::text::ConfigText;

/// How often, how long and how far apart the implicit thread integrates
/// (s): its macro step, its lead and the most it may lag.
struct Timing {
    macro_step: f64,
    lead: f64,
    max_lag: f64,
}

impl ConfigText<'_> {
    /// The frame, duration, policy and both threads' settings.
    pub(super) fn settings(&self, raw: &RawRunConfig) -> Result<TandemSettings, ConfigError> {
        let (frame, duration_s) = self.frame_and_duration(raw)?;
        let frame_s = frame.value.seconds();
        let mut s = TandemSettings::new(frame_s, duration_s);
        s.policy = self.named(&raw.policy, "policy", s.policy)?;
        let catchup = given(&raw.max_catchup, s.max_catchup as i64);
        s.max_catchup = self.integer(&catchup, "max_catchup", 0, MAX_COUNT, "write e.g. 4")? as usize;
        s.output_deadline = self.output_deadline(raw, &frame, s.output_deadline)?;
        let fast_priority = given(&raw.fast.priority, i64::from(s.fast.placement.priority));
        s.fast = self.fast_settings(&raw.fast, &fast_priority, frame_s, &s.fast)?;
        s.implicit = self.implicit_settings(
            &raw.implicit,
            &fast_priority,
            s.fast.placement.core,
            frame_s,
            &s.implicit,
        )?;
        let events = &raw.events;
        s.events.locate = given(&events.locate, s.events.locate).value;
        let per_frame = given(&events.max_per_frame, i64::from(s.events.max_per_frame));
        s.events.max_per_frame = self.integer(&per_frame, "events.max_per_frame", 1, MAX_COUNT, "write e.g. 4")? as u32;
        Ok(s)
    }

    /// The frame as given (its value checked, in seconds from the given
    /// duration's) and the run's duration (s), at least one frame.
    fn frame_and_duration(&self, raw: &RawRunConfig) -> Result<(Given<Duration>, f64), ConfigError> {
        let frame = given(&raw.frame, Duration::from_seconds(DEFAULT_FRAME).unwrap_or_default());
        let frame_s = self.within(&frame, "frame", (MIN_FRAME, MAX_FRAME), "1ms")?;
        let duration = given(
            &raw.duration,
            Duration::from_seconds(DEFAULT_DURATION).unwrap_or_default(),
        );
        let duration_s = self.within(&duration, "duration", (0.0, MAX_DURATION), "20s")?;
        if duration_s < frame_s {
            let (span, key) = match &duration.span {
                Some(span) => (Some(span.clone()), "duration"),
                None => (frame.span.clone(), "frame"),
            };
            return Err(self.error(
                span,
                key,
                format!(
                    "the run ({}) is shorter than one frame ({}); make duration at least the frame",
                    shown(&duration),
                    shown(&frame)
                ),
            ));
        }
        Ok((frame, duration_s))
    }

    /// When a frame's outputs are due (s after its start): more than 0 and
    /// at most the `frame`; `default` unless given.
    fn output_deadline(&self, raw: &RawRunConfig, frame: &Given<Duration>, default: f64) -> Result<f64, ConfigError> {
        let frame_s = frame.value.seconds();
        let deadline = given(
            &raw.output_deadline,
            Duration::from_seconds(default).unwrap_or_default(),
        );
        let d = deadline.value.seconds();
        if !(d > 0.0 && d <= frame_s * (1.0 + 1e-9)) {
            return Err(self.error(
                deadline.span.clone(),
                "output_deadline",
                format!(
                    "must be more than 0 and at most the frame ({}), found {}; write e.g. \"{}\" \
                     (0.8 of the frame)",
                    frame.value,
                    shown(&deadline),
                    Duration::from_seconds(0.8 * frame_s).unwrap_or_default()
                ),
            ));
        }
        Ok(d.min(frame_s))
    }

    /// The fast thread's settings (`[fast]`), at `priority`, for frames of
    /// `frame_s` seconds; `defaults` for what it does not give.
    fn fast_settings(
        &self,
        fast: &RawFast,
        priority: &Given<i64>,
        frame_s: f64,
        defaults: &FastSettings,
    ) -> Result<FastSettings, ConfigError> {
        let fix = "write e.g. 80 (SCHED_FIFO priorities go from 1, the lowest, to 99)";
        self.integer(priority, "fast.priority", 1, 99, fix)?;
        Ok(FastSettings {
            placement: Placement {
                core: self.core(&fast.core, "fast.core")?,
                priority: priority.value as u8,
            },
            method: self.named(&fast.method, "fast.method", defaults.method)?,
            matrix_interval: self.matrix_interval(fast, frame_s, defaults.matrix_interval)?,
        })
    }

    /// Every how many frames the fast thread renews its iteration matrix:
    /// `default` (a millisecond's worth of frames) unless given.
    fn matrix_interval(&self, fast: &RawFast, frame_s: f64, default: u32) -> Result<u32, ConfigError> {
        if fast.matrix_interval.is_none() {
            return Ok(default);
        }
        let interval = given(&fast.matrix_interval, Duration::default());
        let seconds = match interval.value.seconds() {
            0.0 => 0.0,
            _ => self.frames(&interval, "fast.matrix_interval", frame_s, MAX_PERIOD_FRAMES)?,
        };
        let frames = (seconds / frame_s).round();
        if frames > f64::from(MAX_COUNT as u32) {
            return Err(self.error(
                interval.span.clone(),
                "fast.matrix_interval",
                format!("must be at most {MAX_COUNT} frames, found {frames}; write e.g. \"10ms\""),
            ));
        }
        Ok(frames as u32)
    }

    /// The implicit thread's settings (`[implicit]`), below the fast
    /// thread's priority `fast_priority` and off its core `fast_core`, for
    /// frames of `frame_s` seconds; `defaults` for what it does not give.
    fn implicit_settings(
        &self,
        imp: &RawImplicit,
        fast_priority: &Given<i64>,
        fast_core: Option<usize>,
        frame_s: f64,
        defaults: &ImplicitThreadSettings,
    ) -> Result<ImplicitThreadSettings, ConfigError> {
        let priority = self.implicit_priority(imp, fast_priority, defaults.placement.priority)?;
        let (rtol, atol) = self.tolerances(imp, defaults.rtol, defaults.atol)?;
        let newton = given(&imp.newton_iterations, i64::from(defaults.max_newton));
        self.integer(&newton, "implicit.newton_iterations", 1, MAX_COUNT, "write e.g. 4")?;
        let timing = self.implicit_timing(imp, frame_s, defaults.max_lag)?;
        let implicit_core = self.core(&imp.core, "implicit.core")?;
        Ok(ImplicitThreadSettings {
            placement: Placement {
                core: implicit_core,
                priority,
            },
            solver: self.named(&imp.method, "implicit.method", defaults.solver)?,
            rtol,
            atol,
            max_newton: newton.value as u32,
            linear_solver: self.named(&imp.linear_solver, "implicit.linear_solver", defaults.linear_solver)?,
            macro_step: timing.macro_step,
            lead: timing.lead,
            max_lag: timing.max_lag,
            helper_cores: self.helper_cores(
                &imp.helper_cores,
                [(fast_core, "fast.core"), (implicit_core, "implicit.core")],
            )?,
        })
    }

    /// The implicit thread's priority: `default` unless given, and below
    /// the fast thread's `fast_priority` so that the fast thread always
    /// preempts it.
    fn implicit_priority(&self, imp: &RawImplicit, fast_priority: &Given<i64>, default: u8) -> Result<u8, ConfigError> {
        let imp_priority = given(&imp.priority, i64::from(default));
        let fix = "write e.g. 70 (SCHED_FIFO priorities go from 1, the lowest, to 99)";
        self.integer(&imp_priority, "implicit.priority", 1, 99, fix)?;
        if imp_priority.value < fast_priority.value {
            return Ok(imp_priority.value as u8);
        }
        let (span, key) = match (&imp_priority.span, &fast_priority.span) {
            (Some(span), _) => (Some(span.clone()), "implicit.priority"),
            (None, span) => (span.clone(), "fast.priority"),
        };
        let (i, f) = (imp_priority.value, fast_priority.value);
        let fix = if f > 1 {
            format!("set implicit.priority to at most {} or raise fast.priority", f - 1)
        } else {
            "raise fast.priority".to_string()
        };
        let default_mark = |g: &Given<i64>| if g.span.is_some() { "" } else { ", the default" };
        Err(self.error(
            span,
            key,
            format!(
                "implicit.priority ({i}{}) must be below fast.priority ({f}{}) so that the fast thread always \
                 preempts the implicit one; {fix}",
                default_mark(&imp_priority),
                default_mark(fast_priority),
            ),
        ))
    }

    /// The implicit side's relative tolerance (between 0 and 1) and
    /// absolute tolerance (above 0); the defaults unless given.
    fn tolerances(&self, imp: &RawImplicit, rtol: f64, atol: f64) -> Result<(f64, f64), ConfigError> {
        let rtol = given(&imp.rtol, rtol);
        if !(rtol.value > 0.0 && rtol.value < 1.0) {
            return Err(self.error(
                rtol.span,
                "implicit.rtol",
                format!(
                    "must be between 0 and 1 (exclusive), found {}; write e.g. 1e-6",
                    rtol.value
                ),
            ));
        }
        let atol = given(&imp.atol, atol);
        if !(atol.value > 0.0 && atol.value.is_finite()) {
            return Err(self.error(
                atol.span,
                "implicit.atol",
                format!("must be more than 0, found {}; write e.g. 1e-8", atol.value),
            ));
        }
        Ok((rtol.value, atol.value))
    }

    /// The implicit thread's macro step and lead (whole frames of
    /// `frame_s` seconds, the lead at least the step) and its most lag
    /// (`max_lag` s unless given).
    fn implicit_timing(&self, imp: &RawImplicit, frame_s: f64, max_lag: f64) -> Result<Timing, ConfigError> {
        let frame_duration = Duration::from_seconds(frame_s).unwrap_or_default();
        let macro_step = given(&imp.macro_step, frame_duration);
        let macro_step_s = self.frames(&macro_step, "implicit.macro_step", frame_s, MAX_LAG_FRAMES)?;
        let lead = given(&imp.lead, macro_step.value);
        let lead_s = self.frames(&lead, "implicit.lead", frame_s, MAX_LAG_FRAMES)?;
        if lead_s < macro_step_s * (1.0 - 1e-9) {
            let (span, key) = match (&lead.span, &macro_step.span) {
                (Some(span), _) => (Some(span.clone()), "implicit.lead"),
                (None, span) => (span.clone(), "implicit.macro_step"),
            };
            return Err(self.error(
                span,
                key,
                format!(
                    "implicit.lead ({}) must be at least implicit.macro_step ({}); write e.g. lead = \"{}\"",
                    shown(&lead),
                    shown(&macro_step),
                    macro_step.value
                ),
            ));
        }
        let max_lag = given(&imp.max_lag, Duration::from_seconds(max_lag).unwrap_or_default());
        let max_lag_s = self.within(&max_lag, "implicit.max_lag", (0.0, MAX_LAG_FRAMES * frame_s), "20ms")?;
        Ok(Timing {
            macro_step: macro_step_s,
            lead: lead_s,
            max_lag: max_lag_s,
        })
    }
}
