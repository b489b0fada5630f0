//! The model's inputs over the run, what is recorded, and the virtual
//! clock's costs.

use std::path::PathBuf;

use tandem_runtime::tandem::virtual_clock::VirtualCosts;
use tandem_runtime::tandem::Extrapolation;
use toml::Spanned;

use super::checks::given;
use crate::bounds::MAX_DURATION;
use crate::duration::Duration;
use crate::error::ConfigError;
use crate::locate::key_segment;
use crate::raw::{RawInputs, RawRecord, RawVirtualClock};
use crate::run::{InputsConfig, RecordConfig};
use crate::text::ConfigText;

impl ConfigText<'_> {
    /// The input profile and breakpoints.
    pub(super) fn inputs(&self, raw: &RawInputs, profiles: &[&str]) -> Result<InputsConfig, ConfigError> {
        let profile = match &raw.profile {
            Some(p) if profiles.contains(&p.get_ref().as_str()) => Some(self.located(p, "inputs.profile".into())),
            Some(p) => {
                let fix = if profiles.is_empty() {
                    "there are no built-in profiles here; remove inputs.profile and give inputs.points".to_string()
                } else {
                    format!("use one of: {}", profiles.join(", "))
                };
                return Err(self.error(
                    Some(p.span()),
                    "inputs.profile",
                    format!("unknown input profile \"{}\"; {fix}", p.get_ref()),
                ));
            }
            None => None,
        };
        let mut points = Vec::with_capacity(raw.points.len());
        for (name, list) in &raw.points {
            let key = format!("inputs.points.{}", key_segment(name));
            if list.get_ref().is_empty() {
                return Err(self.error(
                    Some(list.span()),
                    &key,
                    format!(
                        "no breakpoints; give at least one [time_s, value], e.g. {} = [[0, 0], [10, 1]], or remove it",
                        key_segment(name)
                    ),
                ));
            }
            let mut previous: Option<f64> = None;
            let mut breakpoints = Vec::with_capacity(list.get_ref().len());
            for (i, point) in list.get_ref().iter().enumerate() {
                let here = format!("{key}[{i}]");
                // A tuple would let TOML ignore a third number.
                let &[t, v] = point.get_ref().as_slice() else {
                    return Err(self.error(
                        Some(point.span()),
                        &here,
                        format!(
                            "a breakpoint is [time_s, value], found {} number(s); write e.g. [12.5, 30]",
                            point.get_ref().len()
                        ),
                    ));
                };
                if !t.is_finite() || !v.is_finite() {
                    return Err(self.error(
                        Some(point.span()),
                        &here,
                        format!("a breakpoint must be finite, found [{t}, {v}]"),
                    ));
                }
                if let Some(p) = previous.filter(|&p| t < p) {
                    return Err(self.error(
                        Some(point.span()),
                        &here,
                        format!(
                            "time {t} s comes after {p} s; breakpoints must be in time order (a time may repeat, \
                             for a step)"
                        ),
                    ));
                }
                previous = Some(t);
                breakpoints.push((t, v));
            }
            let located = crate::error::Located {
                value: name.clone(),
                key,
                location: self.location(list.span().start),
            };
            points.push((located, breakpoints));
        }
        let extrapolation = self.named(&raw.extrapolation, "inputs.extrapolation", Extrapolation::Linear)?;
        Ok(InputsConfig {
            profile,
            extrapolation,
            points,
        })
    }

    /// The recording.
    pub(super) fn record(&self, raw: &RawRecord) -> Result<Option<RecordConfig>, ConfigError> {
        let Some(file) = &raw.file else {
            if raw.bus_log.is_some() && raw.signals.is_none() && raw.decimation.is_none() {
                return Ok(None);
            }
            let span = raw
                .signals
                .as_ref()
                .map(|s| s.span())
                .or(raw.decimation.as_ref().map(|d| d.span()));
            return match span {
                Some(span) => Err(self.error(
                    Some(span),
                    "record.file",
                    "nothing is recorded without a file; add e.g. file = \"run.csv\" to [record], or remove \
                     [record]"
                        .into(),
                )),
                None => Ok(None),
            };
        };
        if file.get_ref().trim().is_empty() {
            return Err(self.error(
                Some(file.span()),
                "record.file",
                "the file name is empty; write e.g. file = \"run.csv\"".into(),
            ));
        }
        let signals = match &raw.signals {
            None => None,
            Some(list) if list.get_ref().is_empty() => {
                return Err(self.error(
                    Some(list.span()),
                    "record.signals",
                    "no signals listed; name at least one output, or remove record.signals to record them all".into(),
                ))
            }
            Some(list) => {
                let mut names: Vec<crate::error::Located<String>> = Vec::with_capacity(list.get_ref().len());
                for (i, name) in list.get_ref().iter().enumerate() {
                    if names.iter().any(|n| &n.value == name.get_ref()) {
                        return Err(self.error(
                            Some(name.span()),
                            &format!("record.signals[{i}]"),
                            format!("\"{}\" is listed twice; keep one", name.get_ref()),
                        ));
                    }
                    names.push(self.located(name, format!("record.signals[{i}]")));
                }
                Some(names)
            }
        };
        let decimation = given(&raw.decimation, 1);
        self.integer(
            &decimation,
            "record.decimation",
            1,
            i64::from(u32::MAX),
            "write 1 to record every frame, 10 for every 10th",
        )?;
        Ok(Some(RecordConfig {
            file: PathBuf::from(file.get_ref()),
            signals,
            decimation: decimation.value as u32,
            frame_source: raw.frame_source.as_ref().is_some_and(|f| *f.get_ref()),
        }))
    }
}

impl ConfigText<'_> {
    /// The virtual clock's costs and injected faults, sorted by time; each
    /// stall lasts more than 0 and at most a run, and none begins before
    /// the one before it ends.
    pub(super) fn virtual_costs(&self, raw: &RawVirtualClock) -> Result<VirtualCosts, ConfigError> {
        let nanos = |d: &Spanned<Duration>| tandem_runtime::tandem::clock::nanos(d.get_ref().seconds());
        let cost = |d: &Option<Spanned<Duration>>| d.as_ref().map_or(0, nanos);
        let mut implicit_delays: Vec<(i64, i64)> = raw
            .implicit_delays
            .iter()
            .map(|d| (nanos(&d.at), nanos(&d.delay)))
            .collect();
        let mut fast_overruns: Vec<(i64, i64)> = raw
            .fast_overruns
            .iter()
            .map(|o| (nanos(&o.at), nanos(&o.extra)))
            .collect();
        // The sort is stable: injections at one time keep the file's order.
        implicit_delays.sort_by_key(|d| d.0);
        fast_overruns.sort_by_key(|o| o.0);
        let mut stalls = Vec::with_capacity(raw.stalls.len());
        for (i, stall) in raw.stalls.iter().enumerate() {
            let key = format!("virtual_clock.stalls[{i}]");
            let duration = given(&Some(stall.duration.clone()), Duration::default());
            self.within(&duration, &format!("{key}.duration"), (0.0, MAX_DURATION), "60ms")?;
            stalls.push((nanos(&stall.at), nanos(&stall.duration), i));
        }
        stalls.sort_by_key(|s| s.0);
        for pair in stalls.windows(2) {
            let ((at, duration, _), (next, _, i)) = (pair[0], pair[1]);
            if next < at + duration {
                let span = raw.stalls[i].at.span();
                return Err(self.error(
                    Some(span),
                    &format!("virtual_clock.stalls[{i}].at"),
                    "begins before the stall before it ends; give stalls that do not overlap (or one longer stall)"
                        .to_string(),
                ));
            }
        }
        Ok(VirtualCosts {
            fast_step: cost(&raw.fast_cost),
            implicit_step: cost(&raw.implicit_cost),
            wake_latency: cost(&raw.wake_latency),
            implicit_delays,
            fast_overruns,
            stalls: stalls.into_iter().map(|(at, duration, _)| (at, duration)).collect(),
        })
    }
}
