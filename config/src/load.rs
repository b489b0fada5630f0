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
    let text = read_text(
        path,
        MAX_CONFIG_FILE,
        "run configuration",
        "config/examples/ev.toml is a complete example",
    )?;
    parse_run_config(&text, path, profiles)
}

/// Reads the UTF-8 text file at `path`, a `what` (e.g. "run
/// configuration") of at most `bound` bytes; a file that cannot be read
/// is reported with `example` as a hint, one past the bound or not UTF-8
/// (at its line and column) likewise.
pub fn read_text(path: &Path, bound: u64, what: &str, example: &str) -> Result<String, ConfigError> {
    let error = |location, message: String| ConfigError {
        file: path.to_path_buf(),
        location,
        key: String::new(),
        message,
    };
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(bound + 1).read_to_end(&mut bytes))
        .map_err(|e| error(None, format!("cannot read the {what}: {e}; check the path ({example})")))?;
    if bytes.len() as u64 > bound {
        return Err(error(
            None,
            format!(
                "the file is larger than {} MiB, the bound of a {what}; check that this is one",
                bound >> 20
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        let (line, column) = invalid_utf8_at(e.as_bytes(), e.utf8_error().valid_up_to());
        error(
            Some(Location { line, column }),
            "the file is not UTF-8 text; save it as UTF-8".into(),
        )
    })
}

/// Validates the run configuration `text`, read from `origin`: errors name
/// `origin`, and a model file is resolved against its directory. `profiles`
/// are the built-in input profiles that `inputs.profile` may name.
pub fn parse_run_config(text: &str, origin: &Path, profiles: &[&str]) -> Result<RunConfig, ConfigError> {
    let text = ConfigText { text, origin };
    let raw: RawRunConfig = toml::from_str(text.text).map_err(|e| text.toml_error(&e))?;
    validate(&text, raw, profiles)
}

/// Validates a fault requested while a run goes on: `text` is the TOML
/// of one `[[bus.fault]]` table (e.g. `kind = "drop"` and `message =
/// "VCU_Speeds"` on two lines), for frames of `frame` seconds; errors name
/// `origin` (what asked) and the key.
pub fn parse_fault(text: &str, origin: &Path, frame: f64) -> Result<crate::fault::FaultConfig, ConfigError> {
    let text = ConfigText { text, origin };
    let raw: crate::raw::RawFault = toml::from_str(text.text).map_err(|e| text.toml_error(&e))?;
    text.fault(&raw, "fault", frame)
}

/// Validates a fault requested while a run goes on as a JSON object of
/// the keys of a `[[bus.fault]]` table (numbers of seconds allowed for
/// times); errors name `origin` and the key.
pub fn parse_fault_request(
    request: &serde_json::Value,
    origin: &Path,
    frame: f64,
) -> Result<crate::fault::FaultConfig, ConfigError> {
    let error = |message: String| ConfigError {
        file: origin.to_path_buf(),
        location: None,
        key: String::new(),
        message,
    };
    let Some(keys) = request.as_object() else {
        return Err(error(
            "a fault request is an object of the keys of a [[bus.fault]] table".into(),
        ));
    };
    // Times may be given as numbers of seconds.
    let mut request = keys.clone();
    for key in ["start", "duration", "delay"] {
        if let Some(seconds) = request.get(key).and_then(serde_json::Value::as_f64) {
            request.insert(key.into(), format!("{seconds}s").into());
        }
    }
    let text = toml::to_string(&request).map_err(|e| error(format!("cannot read the request: {e}")))?;
    parse_fault(&text, origin, frame).map_err(|e| ConfigError { location: None, ..e })
}
