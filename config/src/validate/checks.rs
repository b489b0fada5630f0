//! The checks every table shares: values with their place or a default,
//! names, positive durations, whole numbers of frames, integer ranges, cores.

use std::ops::Range;

use toml::Spanned;

use tandem_runtime::tandem::HelperCores;

use crate::duration::Duration;
use crate::error::ConfigError;
use crate::text::ConfigText;

/// A value as given in the file with where it is, or a default (no span).
pub(super) struct Given<T> {
    pub(super) value: T,
    pub(super) span: Option<Range<usize>>,
}

/// The value of `field` with its span, or `default`.
pub(super) fn given<T: Clone>(field: &Option<Spanned<T>>, default: T) -> Given<T> {
    match field {
        Some(s) => Given {
            value: s.get_ref().clone(),
            span: Some(s.span()),
        },
        None => Given {
            value: default,
            span: None,
        },
    }
}

/// How a duration is shown in messages: as written when it was.
pub(super) fn shown(d: &Given<Duration>) -> String {
    if d.span.is_some() {
        format!("\"{}\"", d.value)
    } else {
        format!("{} (the default)", d.value)
    }
}

impl ConfigText<'_> {
    /// A name parsed with its `FromStr`, whose message lists the valid ones.
    pub(super) fn named<T: std::str::FromStr<Err: std::fmt::Display>>(
        &self,
        field: &Option<Spanned<String>>,
        key: &str,
        default: T,
    ) -> Result<T, ConfigError> {
        match field {
            Some(s) => s
                .get_ref()
                .parse()
                .map_err(|m: T::Err| self.error(Some(s.span()), key, m.to_string())),
            None => Ok(default),
        }
    }

    /// An integer in `min..=max`; `fix` ends the message.
    pub(super) fn integer(&self, v: &Given<i64>, key: &str, min: i64, max: i64, fix: &str) -> Result<i64, ConfigError> {
        if (min..=max).contains(&v.value) {
            Ok(v.value)
        } else {
            Err(self.error(
                v.span.clone(),
                key,
                format!("must be {min} to {max}, found {}; {fix}", v.value),
            ))
        }
    }

    /// A duration from `min` to `max` seconds, and more than 0 (a `min` of
    /// 0 reads "more than 0").
    pub(super) fn within(
        &self,
        d: &Given<Duration>,
        key: &str,
        (min, max): (f64, f64),
        example: &str,
    ) -> Result<f64, ConfigError> {
        let s = d.value.seconds();
        if (min..=max).contains(&s) && s > 0.0 {
            return Ok(s);
        }
        let bound = |v: f64| Duration::from_seconds(v).unwrap_or_default();
        let range = if min > 0.0 {
            format!("from {} to {}", bound(min), bound(max))
        } else {
            format!("more than 0s and at most {}", bound(max))
        };
        Err(self.error(
            d.span.clone(),
            key,
            format!("must be {range}, found {}; write e.g. \"{example}\"", shown(d)),
        ))
    }

    /// A whole number of frames, from one to `max_frames`.
    pub(super) fn frames(
        &self,
        d: &Given<Duration>,
        key: &str,
        frame: f64,
        max_frames: f64,
    ) -> Result<f64, ConfigError> {
        let s = d.value.seconds();
        let n = (s / frame).round();
        if n > max_frames {
            return Err(self.error(
                d.span.clone(),
                key,
                format!(
                    "must be at most {max_frames} frames ({}), found {}",
                    Duration::from_seconds(max_frames * frame).unwrap_or_default(),
                    shown(d)
                ),
            ));
        }
        if n >= 1.0 && (s - n * frame).abs() <= 1e-9 * s {
            return Ok(n * frame);
        }
        let below = (s / frame).floor().max(1.0);
        let frame_shown = Duration::from_seconds(frame).unwrap_or_default();
        let multiple = |k: f64| Duration::from_seconds(k * frame).unwrap_or_default();
        Err(self.error(
            d.span.clone(),
            key,
            format!(
                "must be a whole number of frames (the frame is {frame_shown}), found {}; write e.g. \"{}\" \
                 or \"{}\"",
                shown(d),
                multiple(below),
                multiple(below + 1.0),
            ),
        ))
    }

    /// Refuses `name` (at `span`, the table `at`) when one of `taken` has it
    /// already: two `what` cannot share a name.
    pub(super) fn unique_name<'n>(
        &self,
        mut taken: impl Iterator<Item = &'n str>,
        name: &str,
        span: Range<usize>,
        at: &str,
        what: &str,
    ) -> Result<(), ConfigError> {
        if taken.any(|t| t == name) {
            return Err(self.error(
                Some(span),
                &format!("{at}.name"),
                format!("two {what} are named \"{name}\"; give each its own name"),
            ));
        }
        Ok(())
    }

    /// The implicit side's helper cores: at most [`HelperCores::MAX`],
    /// each a core number given once and neither of the integrator
    /// threads' `pinned` cores (`fast.core`, `implicit.core`).
    pub(super) fn helper_cores(
        &self,
        field: &Option<Spanned<Vec<Spanned<i64>>>>,
        pinned: [(Option<usize>, &str); 2],
    ) -> Result<HelperCores, ConfigError> {
        const KEY: &str = "implicit.helper_cores";
        let Some(list) = field else {
            return Ok(HelperCores::default());
        };
        if list.get_ref().len() > HelperCores::MAX {
            return Err(self.error(
                Some(list.span()),
                KEY,
                format!(
                    "{} helper cores given, at most {} are allowed; list fewer",
                    list.get_ref().len(),
                    HelperCores::MAX
                ),
            ));
        }
        let mut cores = Vec::with_capacity(list.get_ref().len());
        for (i, entry) in list.get_ref().iter().enumerate() {
            let at = format!("{KEY}[{i}]");
            let value = Given {
                value: *entry.get_ref(),
                span: Some(entry.span()),
            };
            let core = self.integer(&value, &at, 0, 4095, "write a core number from 0")? as usize;
            if let Some((_, thread)) = pinned.iter().find(|(c, _)| *c == Some(core)) {
                return Err(self.error(
                    Some(entry.span()),
                    &at,
                    format!("core {core} is {thread}: that thread keeps its core to itself; choose another"),
                ));
            }
            if cores.contains(&core) {
                return Err(self.error(
                    Some(entry.span()),
                    &at,
                    format!("core {core} is listed twice; give each helper its own core"),
                ));
            }
            cores.push(core);
        }
        Ok(HelperCores::new(&cores).unwrap_or_default())
    }

    /// A core number, or `None` when not given (unpinned).
    pub(super) fn core(&self, field: &Option<Spanned<i64>>, key: &str) -> Result<Option<usize>, ConfigError> {
        if field.is_none() {
            return Ok(None);
        }
        let n = self.integer(&given(field, 0), key, 0, 4095, "omit it to leave the thread unpinned")?;
        Ok(Some(n as usize))
    }
}
