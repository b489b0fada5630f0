//! The tandem's settings: frame, duration, policy, deadline and both
//! threads.

use tandem_runtime::tandem::{FastSettings, ImplicitThreadSettings, Placement, TandemSettings};

use super::checks::{given, shown};
use crate::bounds::{MAX_DURATION, MAX_FRAME, MAX_LAG_FRAMES, MAX_PERIOD_FRAMES, MIN_FRAME};
use crate::duration::Duration;
use crate::error::ConfigError;
use crate::raw::RawRunConfig;
use crate::run::{DEFAULT_DURATION, DEFAULT_FRAME, MAX_COUNT};
use crate::text::ConfigText;

impl ConfigText<'_> {
    /// The frame, duration, policy and both threads' settings.
    pub(super) fn settings(&self, raw: &RawRunConfig) -> Result<TandemSettings, ConfigError> {
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
        let mut s = TandemSettings::new(frame_s, duration_s);
        s.policy = self.named(&raw.policy, "policy", s.policy)?;
        let catchup = given(&raw.max_catchup, s.max_catchup as i64);
        s.max_catchup = self.integer(&catchup, "max_catchup", 0, MAX_COUNT, "write e.g. 4")? as usize;
        let deadline = given(
            &raw.output_deadline,
            Duration::from_seconds(s.output_deadline).unwrap_or_default(),
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
        s.output_deadline = d.min(frame_s);

        let fast = &raw.fast;
        let fast_priority = given(&fast.priority, i64::from(s.fast.placement.priority));
        let fix = "write e.g. 80 (SCHED_FIFO priorities go from 1, the lowest, to 99)";
        self.integer(&fast_priority, "fast.priority", 1, 99, fix)?;
        s.fast = FastSettings {
            placement: Placement {
                core: self.core(&fast.core, "fast.core")?,
                priority: fast_priority.value as u8,
            },
            method: self.named(&fast.method, "fast.method", s.fast.method)?,
            matrix_interval: match &fast.matrix_interval {
                // The default: a millisecond's worth of frames.
                None => s.fast.matrix_interval,
                Some(_) => {
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
                    frames as u32
                }
            },
        };

        let imp = &raw.implicit;
        let imp_priority = given(&imp.priority, i64::from(s.implicit.placement.priority));
        let fix = "write e.g. 70 (SCHED_FIFO priorities go from 1, the lowest, to 99)";
        self.integer(&imp_priority, "implicit.priority", 1, 99, fix)?;
        if imp_priority.value >= fast_priority.value {
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
            return Err(self.error(
                span,
                key,
                format!(
                    "implicit.priority ({i}{}) must be below fast.priority ({f}{}) so that the fast thread always \
                     preempts the implicit one; {fix}",
                    if imp_priority.span.is_some() {
                        ""
                    } else {
                        ", the default"
                    },
                    if fast_priority.span.is_some() {
                        ""
                    } else {
                        ", the default"
                    },
                ),
            ));
        }
        let rtol = given(&imp.rtol, s.implicit.rtol);
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
        let atol = given(&imp.atol, s.implicit.atol);
        if !(atol.value > 0.0 && atol.value.is_finite()) {
            return Err(self.error(
                atol.span,
                "implicit.atol",
                format!("must be more than 0, found {}; write e.g. 1e-8", atol.value),
            ));
        }
        let newton = given(&imp.newton_iterations, i64::from(s.implicit.max_newton));
        self.integer(&newton, "implicit.newton_iterations", 1, MAX_COUNT, "write e.g. 4")?;
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
        let max_lag = given(
            &imp.max_lag,
            Duration::from_seconds(s.implicit.max_lag).unwrap_or_default(),
        );
        let max_lag_s = self.within(&max_lag, "implicit.max_lag", (0.0, MAX_LAG_FRAMES * frame_s), "20ms")?;
        let implicit_core = self.core(&imp.core, "implicit.core")?;
        s.implicit = ImplicitThreadSettings {
            placement: Placement {
                core: implicit_core,
                priority: imp_priority.value as u8,
            },
            solver: self.named(&imp.method, "implicit.method", s.implicit.solver)?,
            rtol: rtol.value,
            atol: atol.value,
            max_newton: newton.value as u32,
            linear_solver: self.named(&imp.linear_solver, "implicit.linear_solver", s.implicit.linear_solver)?,
            macro_step: macro_step_s,
            lead: lead_s,
            max_lag: max_lag_s,
            helper_cores: self.helper_cores(
                &imp.helper_cores,
                [(s.fast.placement.core, "fast.core"), (implicit_core, "implicit.core")],
            )?,
        };
        let events = &raw.events;
        s.events.locate = given(&events.locate, s.events.locate).value;
        let per_frame = given(&events.max_per_frame, i64::from(s.events.max_per_frame));
        s.events.max_per_frame = self.integer(&per_frame, "events.max_per_frame", 1, MAX_COUNT, "write e.g. 4")? as u32;
        Ok(s)
    }
}
