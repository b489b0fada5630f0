//! The slave file (`tandem dcp-slave SLAVE.toml`, documented in
//! `dcp/FEDERATION.md`): the model, its solver, where its control PDUs
//! come to, and the wire types of its ports.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use tandem_config::{check_endpoint, check_slave_name, read_text, ConfigError, DcpEndpoint, TomlPlace};
use tandem_cosim::ModelSpec;
use toml::Spanned;

use super::describe::Identity;
use crate::description::{parse_uuid, uuid_text};
use crate::types::DataType;

/// Where the slave file's format is documented.
pub const GUIDE: &str = "dcp/FEDERATION.md";

/// The largest slave file read.
const MAX_FILE: u64 = 1 << 20;

/// How a real-time slave predicts an input beyond its newest sample.
///
/// `Hold` is the default: an input that closes a feedback loop through
/// other slaves arrives a step late, and the line through its two newest
/// samples, followed over the next step, amplifies what the loop sends
/// back (a stiff loop diverges; `dcp/tests/loop.rs`), where the newest
/// value only delays it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Extrapolation {
    /// The newest value.
    #[default]
    Hold,
    /// The line through the two newest samples: smooth open-loop signals.
    Linear,
}

/// A checked slave file.
#[derive(Clone, Debug)]
pub struct SlaveConfig {
    /// The file.
    pub file: PathBuf,
    /// The model and its solver, as a co-simulation names one.
    pub model: ModelSpec,
    /// Where it listens, and how long it waits for its master.
    pub endpoint: DcpEndpoint,
    /// Its UUID.
    pub uuid: [u8; 16],
    /// Wire types of ports by name (float64 otherwise).
    pub types: BTreeMap<String, DataType>,
    /// Inputs beyond their newest sample, in real time.
    pub extrapolation: Extrapolation,
    /// The core a hard real-time run is pinned to.
    pub core: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSlave {
    name: Spanned<String>,
    source: Spanned<String>,
    control: Spanned<String>,
    step: Spanned<f64>,
    #[serde(default)]
    solver: Option<Spanned<String>>,
    #[serde(default)]
    rtol: Option<Spanned<f64>>,
    #[serde(default)]
    atol: Option<Spanned<f64>>,
    #[serde(default)]
    host: Option<Spanned<String>>,
    #[serde(default)]
    uuid: Option<Spanned<String>>,
    #[serde(default)]
    master_timeout: Option<Spanned<f64>>,
    #[serde(default)]
    extrapolation: Option<Spanned<String>>,
    #[serde(default)]
    core: Option<Spanned<i64>>,
    #[serde(default)]
    types: BTreeMap<String, Spanned<String>>,
}

/// A stable UUID for a slave named `name` (FNV-1a of the name, twice).
pub fn uuid_for(name: &str) -> [u8; 16] {
    let mut uuid = [0; 16];
    for (half, seed) in [0xcbf29ce484222325u64, 0x84222325cbf29ce4].into_iter().enumerate() {
        let mut h = seed;
        for b in name.bytes().chain(*b"tandem-dcp") {
            h = (h ^ b as u64).wrapping_mul(0x100000001b3);
        }
        uuid[half * 8..half * 8 + 8].copy_from_slice(&h.to_be_bytes());
    }
    uuid[6] = (uuid[6] & 0x0f) | 0x40;
    uuid[8] = (uuid[8] & 0x3f) | 0x80;
    uuid
}

impl SlaveConfig {
    /// Reads and checks the slave file at `path`.
    pub fn load(path: &Path) -> Result<SlaveConfig, ConfigError> {
        let text = read_text(
            path,
            MAX_FILE,
            "DCP slave file",
            "dcp/examples/plant.toml is an example",
        )?;
        SlaveConfig::parse(&text, path)
    }

    /// Checks the slave file `text`, read from `file`.
    pub fn parse(text: &str, file: &Path) -> Result<SlaveConfig, ConfigError> {
        let place = TomlPlace {
            text,
            file,
            guide: GUIDE,
        };
        let raw: RawSlave = toml::from_str(text).map_err(|e| place.toml_error(&e))?;
        let name = raw.name.get_ref();
        let error = |span, key: &str, message| place.error(span, key, message);
        check_slave_name(&raw.name, &error)?;
        let endpoint = check_endpoint(&raw.control, raw.host.as_ref(), raw.master_timeout.as_ref(), &error)?;
        let uuid = match &raw.uuid {
            Some(u) => parse_uuid(u.get_ref()).ok_or_else(|| {
                place.error(
                    u.span(),
                    "uuid",
                    format!(
                        "\"{}\" is not a UUID of 8-4-4-4-12 hexadecimal digits, e.g. \"{}\"",
                        u.get_ref(),
                        uuid_text(&uuid_for(name))
                    ),
                )
            })?,
            None => uuid_for(name),
        };
        let extrapolation = match raw.extrapolation.as_ref().map(|e| (e, e.get_ref().as_str())) {
            None => Extrapolation::default(),
            Some((_, "hold")) => Extrapolation::Hold,
            Some((_, "linear")) => Extrapolation::Linear,
            Some((e, other)) => {
                return Err(place.error(
                    e.span(),
                    "extrapolation",
                    format!("unknown extrapolation \"{other}\"; use \"hold\" (the default) or \"linear\""),
                ))
            }
        };
        let core = match &raw.core {
            Some(c) if !(0..=4095).contains(c.get_ref()) => {
                return Err(place.error(
                    c.span(),
                    "core",
                    format!("must be from 0 to 4095, found {}", c.get_ref()),
                ))
            }
            Some(c) => Some(*c.get_ref() as usize),
            None => None,
        };
        let mut types = BTreeMap::new();
        for (port, t) in &raw.types {
            let data_type = DataType::parse(t.get_ref()).ok_or_else(|| {
                let names: Vec<&str> = DataType::ALL.iter().map(|t| t.name()).collect();
                place.error(
                    t.span(),
                    &format!("types.{port}"),
                    format!("unknown DCP type \"{}\"; use one of: {}", t.get_ref(), names.join(", ")),
                )
            })?;
            types.insert(port.clone(), data_type);
        }
        let step = *raw.step.get_ref();
        if !(1e-9..=1e9).contains(&step) {
            return Err(place.error(
                raw.step.span(),
                "step",
                format!("must be from 1e-9 to 1e9 seconds, found {step}"),
            ));
        }
        let located = |v: &Spanned<String>, key: &str| place.located(v, key.to_string());
        let model = ModelSpec {
            name: located(&raw.name, "name"),
            source: located(&raw.source, "source"),
            solver: raw.solver.as_ref().map(|s| located(s, "solver")),
            step: Some(place.located(&raw.step, "step".into())),
            rtol: raw.rtol.as_ref().map(|r| place.located(r, "rtol".into())),
            atol: raw.atol.as_ref().map(|a| place.located(a, "atol".into())),
            parameters: Vec::new(),
            signals: Vec::new(),
            communication_step: step,
            stop: tandem_config::bounds::MAX_STOP,
        };
        Ok(SlaveConfig {
            file: file.to_path_buf(),
            model,
            endpoint,
            uuid,
            types,
            extrapolation,
            core,
        })
    }

    /// The slave's name.
    pub fn name(&self) -> &str {
        &self.model.name.value
    }

    /// Who the slave is and where it listens.
    pub fn identity(&self) -> Identity {
        Identity {
            name: self.name().to_string(),
            uuid: self.uuid,
            endpoint: self.endpoint,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slave_file_reads_with_its_defaults() {
        let c = SlaveConfig::parse(
            "name = \"plant\"\nsource = \"ev\"\ncontrol = \"0.0.0.0:8000\"\nstep = 0.001\ntypes = { road_grade = \"float32\" }\n",
            Path::new("p.toml"),
        )
        .unwrap();
        assert_eq!(c.endpoint.host, std::net::Ipv4Addr::LOCALHOST);
        assert_eq!(c.types["road_grade"], DataType::Float32);
        assert_eq!(c.extrapolation, Extrapolation::Hold);
        assert_eq!(c.uuid, uuid_for("plant"));
        assert_ne!(uuid_for("plant"), uuid_for("ecu"));
    }

    #[test]
    fn mistakes_name_their_place() {
        let e = |text: &str| SlaveConfig::parse(text, Path::new("s.toml")).unwrap_err().to_string();
        let base = "name = \"p\"\nsource = \"ev\"\nstep = 0.001\n";
        assert_eq!(
            e(&format!("{base}control = \"here\"\n")),
            "s.toml:4:11: control: \"here\" is not an IPv4 address and port; write e.g. \"127.0.0.1:47001\""
        );
        assert!(e(&format!(
            "{base}control = \"0.0.0.0:1\"\ntypes = {{ x = \"double\" }}\n"
        ))
        .starts_with("s.toml:5:15: types.x: unknown DCP type \"double\"; use one of: uint8,"));
        assert!(e(&format!("{base}control = \"0.0.0.0:1\"\nport = 3\n")).contains("unknown field `port`"));
        assert_eq!(
            e(&format!("{base}control = \"0.0.0.0:1\"\nextrapolation = \"cubic\"\n")),
            "s.toml:5:17: extrapolation: unknown extrapolation \"cubic\"; use \"hold\" (the default) or \"linear\""
        );
        let linear = SlaveConfig::parse(
            &format!("{base}control = \"0.0.0.0:1\"\nextrapolation = \"linear\"\n"),
            Path::new("s.toml"),
        )
        .unwrap();
        assert_eq!(linear.extrapolation, Extrapolation::Linear);
    }
}
