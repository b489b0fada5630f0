//! The federation file (`tandem federate FEDERATION.toml`, documented in
//! `dcp/FEDERATION.md`): the members, where they listen, how their ports
//! connect, the step, the stop time and the operating mode.

use std::net::SocketAddrV4;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use tandem_config::{read_text, ConfigError, TomlPlace};
use tandem_cosim::RawConnection;
use toml::Spanned;

use crate::description::Description;
use crate::types::OpMode;

/// Where the format is documented.
pub const GUIDE: &str = "dcp/FEDERATION.md";

/// The largest federation file read.
const MAX_FILE: u64 = 16 << 20;

/// The most members of a federation (slave ids are one byte; 0 is the
/// master's).
pub const MAX_SLAVES: usize = 255;

/// One member.
#[derive(Clone, Debug)]
pub struct Member {
    /// Its name in the federation.
    pub name: String,
    /// Its description.
    pub description: Description,
    /// Where its control PDUs go.
    pub address: SocketAddrV4,
    /// The time resolution the master configures (numerator,
    /// denominator: s per tick).
    pub resolution: (u32, u32),
    /// Ticks of the resolution in a communication step (`CFG_steps`,
    /// `STC_do_step`).
    pub ticks: u32,
}

/// The resolutions a master picks from for a slave without a fixed one,
/// finest first.
const RESOLUTIONS: [(u32, u32); 3] = [(1, 1_000_000), (1, 1000), (1, 1)];

/// The resolution of a slave whose description fixes `fixed` (or any)
/// with which `step` is a whole number of ticks that a `u32` holds, and
/// that number.
pub(crate) fn resolution_for(step: f64, fixed: Option<(u32, u32)>) -> Option<((u32, u32), u32)> {
    let choices = match fixed {
        Some(f) => vec![f],
        None => RESOLUTIONS.to_vec(),
    };
    choices.into_iter().find_map(|(n, d)| {
        let ticks = step * d as f64 / n as f64;
        let whole = ticks.round();
        ((1.0..=u32::MAX as f64).contains(&whole) && (ticks - whole).abs() <= 1e-9 * whole)
            .then_some(((n, d), whole as u32))
    })
}

/// A checked federation file.
#[derive(Debug)]
pub struct Federation {
    /// The file.
    pub file: PathBuf,
    /// Its text, for the places of later errors.
    pub text: String,
    /// The communication step (s).
    pub step: f64,
    /// Steps to the stop time.
    pub steps: u64,
    /// Lock-step (NRT), soft or hard real time.
    pub mode: OpMode,
    /// How long the master waits for an answer before sending again.
    pub timeout: Duration,
    /// How many times it sends again before giving a member up.
    pub retries: u32,
    /// Real time: how far ahead of now the common start is.
    pub start_delay: Duration,
    /// The members.
    pub members: Vec<Member>,
    /// The connections as written (checked when the run is assembled).
    pub connections: Vec<RawConnection>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFederation {
    federation: RawSettings,
    #[serde(default)]
    slave: Vec<RawSlave>,
    #[serde(default)]
    connection: Vec<RawConnection>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSettings {
    step: Spanned<f64>,
    stop: Spanned<f64>,
    #[serde(default)]
    mode: Option<Spanned<String>>,
    #[serde(default)]
    timeout: Option<Spanned<f64>>,
    #[serde(default)]
    retries: Option<Spanned<i64>>,
    #[serde(default)]
    start_delay: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSlave {
    name: Spanned<String>,
    description: Spanned<String>,
    #[serde(default)]
    address: Option<Spanned<String>>,
}

/// The text of `path`, if it holds at most `most` bytes.
fn read_bounded(path: &Path, most: u64) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?.take(most + 1).read_to_string(&mut text)?;
    if text.len() as u64 > most {
        return Err(std::io::Error::other(format!("it is larger than {} MiB", most >> 20)));
    }
    Ok(text)
}

/// The `[federation]` table, checked.
struct Settings {
    /// The communication step (s), and where the file gives it.
    step: f64,
    step_span: Range<usize>,
    /// Steps to the stop time.
    steps: u64,
    mode: OpMode,
    /// Seconds.
    timeout: f64,
    retries: u32,
    /// Seconds.
    start_delay: f64,
}

/// `v` if it is from `min` to `max` seconds.
fn seconds(place: &TomlPlace<'_>, v: &Spanned<f64>, key: &str, (min, max): (f64, f64)) -> Result<f64, ConfigError> {
    let x = *v.get_ref();
    if (min..=max).contains(&x) {
        Ok(x)
    } else {
        Err(place.error(
            v.span(),
            key,
            format!("must be from {min:e} to {max:e} seconds, found {x}"),
        ))
    }
}

impl Settings {
    /// Checks the settings `s`.
    fn read(place: &TomlPlace<'_>, s: &RawSettings) -> Result<Settings, ConfigError> {
        let step = seconds(place, &s.step, "federation.step", (1e-6, 1e6))?;
        let stop = seconds(place, &s.stop, "federation.stop", (1e-6, 1e9))?;
        let ratio = stop / step;
        let steps = ratio.round();
        if steps < 1.0 || (ratio - steps).abs() > 1e-9 * steps {
            return Err(place.error(
                s.stop.span(),
                "federation.stop",
                format!("the stop time {stop} s is not a whole number of steps of {step} s; make it a multiple of federation.step"),
            ));
        }
        let mode = match s.mode.as_ref().map(|m| (m, m.get_ref().as_str())) {
            None | Some((_, "lock-step")) => OpMode::NonRealTime,
            Some((_, "soft-real-time")) => OpMode::SoftRealTime,
            Some((_, "hard-real-time")) => OpMode::HardRealTime,
            Some((m, other)) => {
                return Err(place.error(
                    m.span(),
                    "federation.mode",
                    format!("unknown mode \"{other}\"; use \"lock-step\" (the default), \"soft-real-time\" or \"hard-real-time\""),
                ))
            }
        };
        let timeout = match &s.timeout {
            Some(t) => seconds(place, t, "federation.timeout", (1e-3, 60.0))?,
            None => 0.5,
        };
        let retries = match &s.retries {
            Some(r) if !(0..=1000).contains(r.get_ref()) => {
                return Err(place.error(
                    r.span(),
                    "federation.retries",
                    format!("must be from 0 to 1000, found {}", r.get_ref()),
                ))
            }
            Some(r) => *r.get_ref() as u32,
            None => 4,
        };
        let start_delay = match &s.start_delay {
            Some(d) => seconds(place, d, "federation.start_delay", (0.0, 3600.0))?,
            None => 1.0,
        };
        Ok(Settings {
            step,
            step_span: s.step.span(),
            steps: steps as u64,
            mode,
            timeout,
            retries,
            start_delay,
        })
    }

    /// Checks slave `i`, `r`, its description read from beside the file
    /// (`base`), against these settings and the `members` before it.
    fn member(
        &self,
        place: &TomlPlace<'_>,
        base: &Path,
        (i, r): (usize, &RawSlave),
        members: &[Member],
    ) -> Result<Member, ConfigError> {
        let key = |k: &str| format!("slave[{i}].{k}");
        let name = r.name.get_ref();
        if name.is_empty() || name.contains('.') {
            return Err(place.error(
                r.name.span(),
                &key("name"),
                "must be a name without '.', not empty".into(),
            ));
        }
        if let Some(first) = members.iter().position(|m| &m.name == name) {
            return Err(place.error(
                r.name.span(),
                &key("name"),
                format!("\"{name}\" is already the name of slave[{first}]; give each slave its own name"),
            ));
        }
        let at_description = |message: String| place.error(r.description.span(), &key("description"), message);
        let description = self.description(base, r, at_description)?;
        let address = match &r.address {
            Some(a) => a.get_ref().parse().map_err(|_| {
                place.error(
                    a.span(),
                    &key("address"),
                    format!(
                        "\"{}\" is not an IPv4 address and port, e.g. \"10.0.0.2:8000\"",
                        a.get_ref()
                    ),
                )
            })?,
            None => description.control.ok_or_else(|| {
                at_description("the description gives no control host and port; give address = \"IP:PORT\"".into())
            })?,
        };
        let step = self.step;
        let Some((resolution, ticks)) = resolution_for(step, description.fixed_resolution) else {
            let (n, d) = description.fixed_resolution.unwrap_or((1, 1_000_000));
            return Err(place.error(
                self.step_span.clone(),
                "federation.step",
                format!(
                    "the step {step} s is not a whole number of slave \"{name}\"'s time resolution ({n}/{d} s), \
                     from 1 to {} of them; make the step a multiple of it",
                    u32::MAX
                ),
            ));
        };
        Ok(Member {
            name: name.clone(),
            description,
            address,
            resolution,
            ticks,
        })
    }

    /// The description of slave `r`, read from beside the file (`base`),
    /// if it supports the federation's mode; else what is wrong with it,
    /// placed by `at`.
    fn description(
        &self,
        base: &Path,
        r: &RawSlave,
        at: impl Fn(String) -> ConfigError,
    ) -> Result<Description, ConfigError> {
        let name = r.name.get_ref();
        let path = base.join(r.description.get_ref());
        let xml = read_bounded(&path, MAX_FILE).map_err(|e| {
            at(format!(
                "cannot read {}: {e}; write it with tandem dcp-slave SLAVE.toml --description FILE",
                path.display()
            ))
        })?;
        let description = Description::read(&xml)
            .map_err(|e| at(format!("{}:{}:{}: {}", path.display(), e.line, e.column, e.message)))?;
        let mode = self.mode;
        if !description.op_modes.contains(&mode) {
            return Err(at(format!(
                "slave \"{name}\" does not support {} (its description allows {}); choose another federation.mode",
                mode.name(),
                description
                    .op_modes
                    .iter()
                    .map(|m| m.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        Ok(description)
    }
}

/// Refuses scale and offset on a connection in real time, where data goes
/// from slave to slave without the master.
fn refuse_scaling(place: &TomlPlace<'_>, connections: &[RawConnection]) -> Result<(), ConfigError> {
    if let Some((i, c)) = connections
        .iter()
        .enumerate()
        .find(|(_, c)| c.scale.is_some() || c.offset.is_some())
    {
        let at = c
            .scale
            .as_ref()
            .or(c.offset.as_ref())
            .map_or(c.from.span(), |v| v.span());
        return Err(place.error(
            at,
            &format!("connection[{i}]"),
            "in real time data goes from slave to slave as it is: scale and offset need lock-step, where the \
             master passes the values on; remove them or scale inside a model"
                .into(),
        ));
    }
    Ok(())
}

impl Federation {
    /// Reads and checks the federation file at `path`, with the
    /// descriptions it names.
    pub fn load(path: &Path) -> Result<Federation, ConfigError> {
        let text = read_text(path, MAX_FILE, "federation file", "dcp/examples/ev.toml is an example")?;
        Federation::parse(text, path)
    }

    /// Checks the federation file `text`, read from `file`.
    pub fn parse(text: String, file: &Path) -> Result<Federation, ConfigError> {
        let place = TomlPlace {
            text: &text,
            file,
            guide: GUIDE,
        };
        let raw: RawFederation = toml::from_str(&text).map_err(|e| place.toml_error(&e))?;
        let settings = Settings::read(&place, &raw.federation)?;
        if raw.slave.is_empty() {
            return Err(place.error(0..0, "slave", "a federation needs at least one [[slave]]".into()));
        }
        if let Some(extra) = raw.slave.get(MAX_SLAVES) {
            return Err(place.error(
                extra.name.span(),
                &format!("slave[{MAX_SLAVES}]"),
                format!("a federation has at most {MAX_SLAVES} slaves"),
            ));
        }
        let base = file.parent().unwrap_or(Path::new(""));
        let mut members: Vec<Member> = Vec::with_capacity(raw.slave.len());
        for (i, r) in raw.slave.iter().enumerate() {
            let member = settings.member(&place, base, (i, r), &members)?;
            members.push(member);
        }
        if settings.mode != OpMode::NonRealTime {
            refuse_scaling(&place, &raw.connection)?;
        }
        Ok(Federation {
            file: file.to_path_buf(),
            step: settings.step,
            steps: settings.steps,
            mode: settings.mode,
            timeout: Duration::from_secs_f64(settings.timeout),
            retries: settings.retries,
            start_delay: Duration::from_secs_f64(settings.start_delay),
            members,
            connections: raw.connection,
            text,
        })
    }

    /// The places of the file, for errors found when the run is assembled.
    pub fn place(&self) -> TomlPlace<'_> {
        TomlPlace {
            text: &self.text,
            file: &self.file,
            guide: GUIDE,
        }
    }
}
