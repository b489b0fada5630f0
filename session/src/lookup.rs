//! Names a configuration gives, looked up where binding needs them (model
//! ports, DBC signals), with errors at the name's place that list the
//! names there are.

use tandem_config::{ConfigError, Located, RunConfig};
use tandem_dbc::Message;
use tandem_models::Variable;

/// `a, b, c`, or `none`.
pub(crate) fn list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let names: Vec<&str> = names.collect();
    if names.is_empty() {
        "none".into()
    } else {
        names.join(", ")
    }
}

/// The index of the port `name` among `ports` (the model's inputs or
/// outputs, `kind` saying which), or an error at its place.
pub(crate) fn port(
    config: &RunConfig,
    kind: &str,
    ports: &[Variable],
    name: &Located<String>,
) -> Result<usize, ConfigError> {
    ports.iter().position(|v| v.name == name.value).ok_or_else(|| {
        config.error_at(
            name,
            format!(
                "the model has no {kind} \"{}\"; its {kind}s: {}",
                name.value,
                list(ports.iter().map(|v| v.name.as_str()))
            ),
        )
    })
}

/// The index of DBC signal `name` in message `m`, or an error at its place
/// listing the message's signals.
pub(crate) fn signal_index(config: &RunConfig, m: &Message, name: &Located<String>) -> Result<usize, ConfigError> {
    m.signals.iter().position(|s| s.name == name.value).ok_or_else(|| {
        config.error_at(
            name,
            format!(
                "message {} has no signal \"{}\"; its signals: {}",
                m.name,
                name.value,
                list(m.signals.iter().map(|s| s.name.as_str()))
            ),
        )
    })
}
