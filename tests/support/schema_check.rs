//! Validating files against a published JSON Schema with Python's
//! `jsonschema` (the independent peer), shared by the schema tests of the
//! models and config crates (`#[path]`-included).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The validator script: `+path` must pass, `-path` must fail.
const VALIDATE: &str = include_str!("validate_schema.py");

/// Reports a skipped check on stderr, past the test harness's capture, so
/// that it shows in a normal `cargo test` run.
pub fn skipped(why: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "SKIPPED: {why}");
}

/// Validates `files` (path, whether it must be valid) against `schema`;
/// reports a skip when python3, jsonschema or (for TOML) tomllib is missing.
pub fn validate(schema: &Path, files: &[(PathBuf, bool)]) {
    let output = Command::new("python3")
        .arg("-c")
        .arg(VALIDATE)
        .arg(schema)
        .args(
            files
                .iter()
                .map(|(path, valid)| format!("{}{}", if *valid { '+' } else { '-' }, path.display())),
        )
        .output();
    let output = match output {
        Ok(output) => output,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            skipped(&format!("schema validation needs python3, which was not found ({e})"));
            return;
        }
        Err(e) => panic!("cannot run python3: {e}"),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if output.status.code() == Some(77) {
        skipped(&format!(
            "schema validation needs the Python package jsonschema (pip install jsonschema), and Python 3.11's \
             tomllib for TOML files: {stdout}"
        ));
        return;
    }
    assert!(
        output.status.success(),
        "schema validation failed ({}):\n{stdout}{stderr}",
        output.status
    );
    print!("{stdout}");
}
