//! Packing a model as an FMU: the model description, the binary and the
//! resources, zipped.

mod archive;
mod description;
mod error;

use std::fmt;
use std::path::{Path, PathBuf};

use tandem_config::{fixed_step, Overrides};
use tandem_models::diagram::{compile_str, FileError};
use tandem_models::{LoadError, ModelRef};
use tandem_runtime::{FixedStep, Simulation};

use crate::library::platform;
use crate::parameters;
use crate::resources::Resources;
use crate::version::FmiVersion;
use description::{Description, SharedName};
pub use error::ExportError;

/// What an export wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportReport {
    /// The FMU file.
    pub path: PathBuf,
    /// The FMI version of its model description.
    pub version: FmiVersion,
    /// The model's name (its `modelName`).
    pub name: String,
    /// Its `modelIdentifier`, the name of its binary.
    pub model_identifier: String,
    /// Its instantiation token (FMI 2's GUID).
    pub token: String,
    /// Number of inputs.
    pub inputs: usize,
    /// Number of outputs.
    pub outputs: usize,
    /// Number of parameters exposed.
    pub parameters: usize,
    /// Of these, the number that can be changed while stepping.
    pub tunable: usize,
    /// The solver and step it runs with, and the stop time of its default
    /// experiment.
    pub settings: FixedStep,
}

impl fmt::Display for ExportReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: FMI {} Co-Simulation FMU of \"{}\" ({} inputs, {} outputs, {} parameters of which {} tunable; {}, step {} s, default stop time {} s)",
            self.path.display(),
            self.version,
            self.name,
            self.inputs,
            self.outputs,
            self.parameters,
            self.tunable,
            self.settings.solver,
            self.settings.step,
            self.settings.stop
        )
    }
}

/// Writes `out`, an FMI `version` Co-Simulation FMU of `model` whose binary
/// is `library` (the cdylib of this crate, see
/// [`library_beside`](crate::library_beside)). The FMU runs the model with
/// the solver and step of its `simulation` section (or Tandem's defaults),
/// each replaced by the one `overrides` gives, as `tandem sim` does; its
/// default experiment stops at that stop time. A block diagram's numeric
/// block parameters become the FMU's parameters: tunable where the model
/// takes a change while running, fixed otherwise. An existing `out` is
/// replaced only once the new FMU is complete.
pub fn export(
    model: &ModelRef,
    out: &Path,
    library: &Path,
    version: FmiVersion,
    overrides: &Overrides,
) -> Result<ExportReport, ExportError> {
    let (binaries, extension) = platform(version)?;
    let loaded = model.load()?;
    let shown = model.to_string();
    let settings = fixed_step(&loaded.simulation, overrides).map_err(|error| ExportError::Settings {
        model: shown.clone(),
        error,
    })?;
    Simulation::owning(loaded.model.fork(), settings).map_err(|error| ExportError::Simulation {
        model: shown.clone(),
        error,
    })?;
    let mut resources = Resources::of(model, &settings).map_err(|cause| ExportError::Read {
        path: PathBuf::from(&shown),
        cause,
    })?;
    let exposed = match resources.diagram() {
        Some(text) => parameters::of(
            &compile_str(text)
                .map_err(|e| {
                    LoadError::File(FileError::Diagram {
                        path: shown.clone(),
                        error: Box::new(e),
                    })
                })?
                .model,
        ),
        None => Vec::new(),
    };
    resources.parameters = parameters::to_json(&exposed);
    let token = resources.token();
    let model_identifier = identifier(&loaded.name);
    let layout = loaded.model.layout();
    let description = Description::new(&loaded.name, &model_identifier, &token, layout, &exposed, &settings)
        .map_err(|SharedName(name)| ExportError::DuplicateName { model: shown, name })?;
    let binary = std::fs::read(library).map_err(|cause| ExportError::Read {
        path: library.to_owned(),
        cause,
    })?;
    let description = description.xml(version);
    let mut files = vec![
        archive::Entry::data("modelDescription.xml", description.as_bytes()),
        archive::Entry::program(format!("binaries/{binaries}/{model_identifier}{extension}"), &binary),
    ];
    for (name, bytes) in resources.files() {
        files.push(archive::Entry::data(format!("resources/{name}"), bytes));
    }
    archive::write(out, &files).map_err(|cause| ExportError::Write {
        path: out.to_owned(),
        cause,
    })?;
    Ok(ExportReport {
        path: out.to_owned(),
        version,
        name: loaded.name.clone(),
        model_identifier,
        token,
        inputs: layout.inputs.len(),
        outputs: layout.outputs.len(),
        parameters: exposed.len(),
        tunable: exposed.iter().filter(|p| p.tunable).count(),
        settings,
    })
}

/// The model identifier of a model named `name`: a C identifier, in lower
/// case, every other character an underscore (`Cruise control` gives
/// `cruise_control`).
fn identifier(name: &str) -> String {
    let mut id: String = name
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    if !id.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        id.insert_str(0, "model_");
    }
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_c_identifiers() {
        assert_eq!(identifier("Cruise control"), "cruise_control");
        assert_eq!(identifier("ev"), "ev");
        assert_eq!(identifier("2-mass ß"), "model_2_mass__");
        assert_eq!(identifier(""), "model_");
    }

    #[test]
    fn versions_read_as_written() {
        for v in [FmiVersion::Fmi3, FmiVersion::Fmi2] {
            assert_eq!(v.to_string().parse::<FmiVersion>(), Ok(v));
        }
        assert_eq!("2".parse::<FmiVersion>(), Ok(FmiVersion::Fmi2));
        assert!("1.0"
            .parse::<FmiVersion>()
            .unwrap_err()
            .to_string()
            .contains("FMI 3.0 (3) and FMI 2.0 (2)"));
    }
}
