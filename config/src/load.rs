//! Reading a run configuration: the file, then its TOML, then its values.

use std::io::Read;
use std::path::Path;

use tandem_models::diagram::invalid_utf8_at;

use crate::error::{ConfigError, Location};
use crate::raw::RawRunConfig;
use crate::run::RunConfig;
use crate::text::ConfigText;
use crate::validate::validate;

/// The largest run configuration read (bytes).
pub const MAX_CONFIG_FILE: u64 = 16 << 20;

/// Reads and validates the run configuration at `path`. `profiles` are the
/// built-in input profiles that `inputs.profile` may name.
pub fn load_run_config(path: &Path, profiles: &[&str]) -> Result<RunConfig, ConfigError> {
    let error = |location, message: String| ConfigError {
        file: path.to_path_buf(),
        location,
        key: String::new(),
        message,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_CONFIG_FILE + 1).read_to_end(&mut bytes))
        .map_err(|e| {
            error(
                None,
                format!(
                    "cannot read the run configuration: {e}; check the path (config/examples/ev.toml is a complete \
                     example)"
                ),
            )
        })?;
    if bytes.len() as u64 > MAX_CONFIG_FILE {
        return Err(error(
            None,
            format!(
                "the file is larger than {} MiB, the bound of a run configuration; check that this is one",
                MAX_CONFIG_FILE >> 20
            ),
        ));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        let (line, column) = invalid_utf8_at(e.as_bytes(), e.utf8_error().valid_up_to());
        error(
            Some(Location { line, column }),
            "the file is not UTF-8 text; save it as UTF-8".into(),
        )
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
