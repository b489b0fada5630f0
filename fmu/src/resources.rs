//! The resources folder of an exported FMU: the model (a block diagram's
//! JSON, or the name of a built-in model), the solver settings the export
//! chose and the parameters it exposes, and the instantiation token derived
//! from them. The packing writes it; every instance reads it back.

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use tandem_config::{fixed_step, Overrides};
use tandem_models::diagram::{self, SimulationDef};
use tandem_models::{Model, ModelRef};
use tandem_runtime::{FixedStep, Solver};

use crate::parameters::{self, Parameter};

/// The file holding a block diagram, verbatim.
pub const DIAGRAM: &str = "model.json";
/// The file holding the name of a built-in model.
pub const BUILTIN: &str = "builtin";
/// The file holding the solver settings, in the format of a diagram's
/// `simulation` section (`{"solver": "rk4", "step": 0.01}`).
pub const SETTINGS: &str = "settings.json";
/// The file listing the parameters the FMU exposes
/// ([`parameters::to_json`]).
pub const PARAMETERS: &str = "parameters.json";

/// The contents of a resources folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resources {
    /// [`DIAGRAM`] or [`BUILTIN`].
    pub model_file: &'static str,
    /// That file's bytes.
    pub model: Vec<u8>,
    /// The bytes of [`SETTINGS`].
    pub settings: Vec<u8>,
    /// The bytes of [`PARAMETERS`].
    pub parameters: Vec<u8>,
}

/// What an instance runs: the model, its settings and its parameters.
pub struct Packed {
    /// The model as packed.
    pub model: Box<dyn Model>,
    /// Its solver and step (the stop time is the importer's).
    pub settings: FixedStep,
    /// The parameters the FMU exposes.
    pub parameters: Vec<Parameter>,
}

/// Why an instance cannot be made from its resources folder.
#[derive(Debug, thiserror::Error)]
pub enum ResourceError {
    /// Neither model file is there.
    #[error("{dir}: neither {DIAGRAM} nor {BUILTIN} is there; the FMU's resources folder must be the one packed with it (export the model again with `tandem export`)")]
    NoModel {
        /// The resources folder.
        dir: PathBuf,
    },
    /// A file could not be read.
    #[error("{path}: cannot read it: {cause}; check that the FMU was unpacked whole")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        cause: io::Error,
    },
    /// The model does not load.
    #[error("{path}: {message}")]
    Model {
        /// The model file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The settings or the parameter list are not usable.
    #[error("{path}: {message}; export the model again with `tandem export`")]
    Settings {
        /// The settings file.
        path: PathBuf,
        /// What is wrong with them.
        message: String,
    },
}

impl Resources {
    /// The resources of `model` run with `settings`, exposing no parameters
    /// (the packing sets [`Resources::parameters`]). Only the solver, its
    /// tolerances and the step are kept: the stop time is the importer's.
    pub fn of(model: &ModelRef, settings: &FixedStep) -> io::Result<Resources> {
        let (model_file, model) = match model {
            ModelRef::Builtin(name) => (BUILTIN, name.to_lowercase().into_bytes()),
            ModelRef::File(path) => (DIAGRAM, std::fs::read(path)?),
        };
        let mut section = serde_json::Map::new();
        let solver = match settings.solver {
            Solver::Explicit(method) => method.name(),
            Solver::Bdf { rtol, atol } => {
                section.insert("rtol".into(), rtol.into());
                section.insert("atol".into(), atol.into());
                "bdf"
            }
        };
        section.insert("solver".into(), solver.into());
        section.insert("step".into(), settings.step.into());
        let settings = serde_json::to_vec_pretty(&section).expect("a map of strings and numbers is JSON");
        Ok(Resources {
            model_file,
            model,
            settings,
            parameters: parameters::to_json(&[]),
        })
    }

    /// Reads the resources folder `dir`.
    pub fn read(dir: &Path) -> Result<Resources, ResourceError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read(&path).map_err(|cause| ResourceError::Read { path, cause })
        };
        let model_file = [DIAGRAM, BUILTIN]
            .into_iter()
            .find(|name| dir.join(name).is_file())
            .ok_or_else(|| ResourceError::NoModel { dir: dir.to_owned() })?;
        Ok(Resources {
            model_file,
            model: read(model_file)?,
            settings: read(SETTINGS)?,
            parameters: read(PARAMETERS)?,
        })
    }

    /// The files of the folder, by name.
    pub fn files(&self) -> [(&'static str, &[u8]); 3] {
        [
            (self.model_file, &self.model),
            (SETTINGS, &self.settings),
            (PARAMETERS, &self.parameters),
        ]
    }

    /// The instantiation token (FMI 2's GUID): a hash of the model and the
    /// settings, in the form `{8-4-4-4-12 hex digits}`. It is the same on
    /// every machine and with every Rust version.
    pub fn token(&self) -> String {
        let mut bytes = Vec::with_capacity(self.model.len() + self.settings.len() + self.parameters.len() + 32);
        for part in [
            self.model_file.as_bytes(),
            &self.model,
            &self.settings,
            &self.parameters,
        ] {
            bytes.extend_from_slice(part);
            bytes.push(0);
        }
        let hash =
            (u128::from(fnv1a(&bytes, 0xcbf2_9ce4_8422_2325)) << 64) | u128::from(fnv1a(&bytes, 0x8422_2325_cbf2_9ce4));
        let hex = format!("{hash:032x}");
        let mut token = String::from("{");
        for (i, (start, end)) in [(0, 8), (8, 12), (12, 16), (16, 20), (20, 32)].into_iter().enumerate() {
            let dash = if i > 0 { "-" } else { "" };
            write!(token, "{dash}{}", &hex[start..end]).expect("writing to a String");
        }
        token.push('}');
        token
    }

    /// The model's JSON text, when it is a block diagram.
    pub fn diagram(&self) -> Option<&str> {
        (self.model_file == DIAGRAM)
            .then(|| std::str::from_utf8(&self.model).ok())
            .flatten()
    }

    /// Loads the model, with the settings it is run with (the stop time is
    /// left at its default: the importer gives it) and its parameters.
    /// `dir` is the folder the resources were read from, for messages.
    pub fn load(&self, dir: &Path) -> Result<Packed, ResourceError> {
        let model_path = dir.join(self.model_file);
        let invalid = |message: String| ResourceError::Model {
            path: model_path.clone(),
            message,
        };
        let text = std::str::from_utf8(&self.model).map_err(|e| invalid(format!("not UTF-8 text: {e}")))?;
        let model: Box<dyn Model> = if self.model_file == BUILTIN {
            let loaded = ModelRef::Builtin(text.trim().to_string()).load();
            loaded.map_err(|e| invalid(e.to_string()))?.model
        } else {
            // Compiled to machine code where Cranelift generates code for
            // this machine; interpreted elsewhere (the same results).
            let model = diagram::compile_str(text).map_err(|e| invalid(e.to_string()))?.model;
            tandem_jit::prepare(model).0
        };
        let settings_path = dir.join(SETTINGS);
        let invalid = |message: String| ResourceError::Settings {
            path: settings_path.clone(),
            message,
        };
        let section: SimulationDef = serde_json::from_slice(&self.settings).map_err(|e| invalid(e.to_string()))?;
        let settings = fixed_step(&section, &Overrides::default()).map_err(|e| invalid(e.to_string()))?;
        let parameters = parameters::from_json(&self.parameters).map_err(|e| ResourceError::Settings {
            path: dir.join(PARAMETERS),
            message: e.to_string(),
        })?;
        Ok(Packed {
            model,
            settings,
            parameters,
        })
    }
}

/// The 64-bit FNV-1a hash of `bytes` from the offset basis `basis`.
fn fnv1a(bytes: &[u8], basis: u64) -> u64 {
    bytes.iter().fold(basis, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_runtime::Method;

    #[test]
    fn settings_written_read_back_are_the_settings() {
        for solver in [Method::Heun.into(), Solver::Bdf { rtol: 1e-7, atol: 1e-9 }] {
            let settings = FixedStep {
                solver,
                step: 0.0125,
                stop: 3.0,
            };
            let packed = Resources::of(&ModelRef::Builtin("EV".into()), &settings).unwrap();
            assert_eq!(packed.model, b"ev");
            let read = packed.load(Path::new("resources")).unwrap();
            assert!(!read.model.layout().outputs.is_empty());
            assert!(read.parameters.is_empty());
            assert_eq!(
                (read.settings.solver, read.settings.step),
                (settings.solver, settings.step)
            );
        }
    }

    #[test]
    fn a_packed_diagram_runs_compiled() {
        let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../models/examples/cruise_control.json");
        let settings = FixedStep {
            solver: Method::Rk4.into(),
            step: 0.01,
            stop: 1.0,
        };
        let packed = Resources::of(&ModelRef::File(example.into()), &settings).unwrap();
        let read = packed.load(Path::new("resources")).unwrap();
        let evaluation = read.model.evaluation().unwrap_or_default();
        assert!(evaluation.starts_with("compiled 11 of 11 blocks"), "{evaluation}");
    }

    #[test]
    fn the_token_is_stable_and_changes_with_the_model_and_the_settings() {
        let packed = Resources {
            model_file: BUILTIN,
            model: b"ev".to_vec(),
            settings: br#"{"solver": "rk4", "step": 0.01}"#.to_vec(),
            parameters: b"[]".to_vec(),
        };
        let token = packed.token();
        assert_eq!(token, packed.clone().token());
        assert_eq!(token.len(), 38, "{token}");
        assert!(token.starts_with('{') && token.ends_with('}') && token.matches('-').count() == 4);
        let other_model = Resources {
            model: b"rober".to_vec(),
            ..packed.clone()
        };
        let other_settings = Resources {
            settings: br#"{"solver": "rk4", "step": 0.02}"#.to_vec(),
            ..packed.clone()
        };
        let other_parameters = Resources {
            parameters: br#"[{"block": "k", "param": "gain", "start": 1.0, "tunable": true}]"#.to_vec(),
            ..packed.clone()
        };
        assert_ne!(other_model.token(), token);
        assert_ne!(other_settings.token(), token);
        assert_ne!(other_parameters.token(), token);
    }

    #[test]
    fn a_folder_without_a_model_says_what_should_be_there() {
        let e = Resources::read(Path::new("/nonexistent/resources")).unwrap_err();
        let text = e.to_string();
        assert!(text.contains("neither model.json nor builtin"), "{text}");
    }
}
