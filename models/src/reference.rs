//! Naming a model: a built-in model by name (`ev`, `rober`) or a JSON block
//! diagram by path. One rule decides which, for the command line and for
//! run configurations alike: text with a path separator or an extension
//! names a file; anything else names a built-in model.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::diagram::{self, DiagramError, DiagramModel, SimulationDef};
use crate::model::Model;
use crate::plants;

/// Where a model comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelRef {
    /// A built-in model, by name (any case).
    Builtin(String),
    /// A JSON block diagram.
    File(PathBuf),
}

impl ModelRef {
    /// Reads `text` as a model reference: a file (resolved against `base`)
    /// when it has a path separator or an extension, else a built-in name.
    pub fn parse(text: &str, base: &Path) -> ModelRef {
        let text = text.trim();
        let looks_like_a_path = text.contains(['/', '\\']) || Path::new(text).extension().is_some();
        if looks_like_a_path {
            ModelRef::File(base.join(text))
        } else {
            ModelRef::Builtin(text.to_string())
        }
    }

    /// Loads the model it names; a block diagram is interpreted.
    pub fn load(&self) -> Result<LoadedModel, LoadError> {
        self.load_prepared(&interpreted)
    }

    /// Loads the model it names, a block diagram made ready to run by
    /// `prepare` (e.g. compiled to machine code).
    pub fn load_prepared(&self, prepare: PrepareDiagram<'_>) -> Result<LoadedModel, LoadError> {
        match self {
            ModelRef::Builtin(name) => match plants::builtin(name) {
                Some(model) => Ok(LoadedModel {
                    model,
                    simulation: SimulationDef::default(),
                    name: name.to_lowercase(),
                    evaluation: None,
                }),
                None => Err(LoadError::UnknownBuiltin {
                    name: name.clone(),
                    known: plants::names(),
                }),
            },
            ModelRef::File(path) => {
                let compiled = diagram::load(path)?;
                let name = compiled.name.unwrap_or_else(|| file_stem(path).to_string());
                let (model, evaluation) = prepare(compiled.model);
                Ok(LoadedModel {
                    model,
                    simulation: compiled.simulation,
                    name,
                    evaluation,
                })
            }
        }
    }
}

impl fmt::Display for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelRef::Builtin(name) => f.write_str(name),
            ModelRef::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// A file's name without its extension (`model` when it has none).
pub fn file_stem(path: &Path) -> &str {
    path.file_stem().and_then(|s| s.to_str()).unwrap_or("model")
}

/// A loaded model with the settings stored with it and a name for reports.
pub struct LoadedModel {
    /// The model.
    pub model: Box<dyn Model>,
    /// A block diagram's `simulation` section (defaults for built-in models).
    pub simulation: SimulationDef,
    /// The diagram's `name`, or the file's stem, or the built-in name.
    pub name: String,
    /// How a block diagram is evaluated, for reports (what was compiled).
    pub evaluation: Option<String>,
}

/// Makes a loaded block diagram ready to run: the model to run and a line
/// for reports on how it is evaluated.
pub type PrepareDiagram<'a> = &'a dyn Fn(DiagramModel) -> (Box<dyn Model>, Option<String>);

/// The diagram interpreted, as it is.
pub fn interpreted(model: DiagramModel) -> (Box<dyn Model>, Option<String>) {
    (Box::new(model), None)
}

/// Why a model could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// No built-in model has this name.
    #[error("no built-in model \"{name}\"; built-in models: {} (a JSON block diagram is named by its path, e.g. ./{name}.json)", known.join(", "))]
    UnknownBuiltin {
        /// The name given.
        name: String,
        /// The built-in models.
        known: Vec<String>,
    },
    /// The file could not be read or compiled.
    #[error(transparent)]
    File(#[from] diagram::FileError),
}

impl LoadError {
    /// The diagram mistake, when the file was read but is not a valid model.
    pub fn diagram_error(&self) -> Option<&DiagramError> {
        match self {
            LoadError::File(diagram::FileError::Diagram { error, .. }) => Some(error),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_extensions_name_files_and_bare_words_built_in_models() {
        let base = Path::new("config");
        assert_eq!(ModelRef::parse("ev", base), ModelRef::Builtin("ev".into()));
        assert_eq!(ModelRef::parse(" ROBER ", base), ModelRef::Builtin("ROBER".into()));
        assert_eq!(
            ModelRef::parse("m.json", base),
            ModelRef::File(PathBuf::from("config/m.json"))
        );
        assert_eq!(
            ModelRef::parse("../models/m", base),
            ModelRef::File(PathBuf::from("config/../models/m"))
        );
    }

    #[test]
    fn an_unknown_built_in_name_lists_the_built_in_models_and_how_to_name_a_file() {
        let e = ModelRef::Builtin("evv".into()).load().err().unwrap();
        let text = e.to_string();
        assert!(
            text.starts_with("no built-in model \"evv\"; built-in models: "),
            "{text}"
        );
        assert!(
            text.contains(", ev, ladder-N (") && text.contains("./evv.json"),
            "{text}"
        );
    }

    #[test]
    fn built_in_models_load_by_any_case() {
        let m = ModelRef::Builtin("EV".into()).load().unwrap();
        assert_eq!(m.name, "ev");
        assert!(!m.model.layout().states.is_empty());
    }
}
