//! Reading a run configuration: the file, then its TOML, then its values.

use std::path::Path;

use crate::error::ConfigError;
use crate::raw::RawRunConfig;
use crate::run::RunConfig;
use crate::text::ConfigText;
use crate::validate::validate;

/// Reads and validates the run configuration at `path`. `profiles` are the
/// built-in input profiles that `inputs.profile` may name.
pub fn load_run_config(path: &Path, profiles: &[&str]) -> Result<RunConfig, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        file: path.to_path_buf(),
        location: None,
        key: String::new(),
        message: format!(
            "cannot read the run configuration: {e}; check the path (config/examples/ev.toml is a complete example)"
        ),
    })?;
    parse_run_config(&text, path, profiles)
}

/// Validates the run configuration `text`, read from `origin`: errors name
/// `origin`, and a model file is resolved against its directory. `profiles`
/// are the built-in input profiles that `inputs.profile` may name.
pub fn parse_run_config(text: &str, origin: &Path, profiles: &[&str]) -> Result<RunConfig, ConfigError> {
    let text = ConfigText { text, origin };
    let raw: RawRunConfig = toml::from_str(text.text).map_err(|e| text.toml_error(&e))?;
    validate(&text, raw, profiles)
}
