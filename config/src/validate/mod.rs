//! Raw TOML structures become a [`RunConfig`]: every value is checked with
//! its place; names that only the model or a DBC can check are kept
//! [`crate::Located`] for the binding step.

mod bus;
mod checks;
mod inputs;
mod settings;

use std::path::PathBuf;

use tandem_models::ModelRef;
use toml::Spanned;

use crate::error::{ConfigError, Located};
use crate::raw::RawRunConfig;
use crate::run::{EcuConfig, RunConfig};
use crate::text::ConfigText;

/// Checks every value of `raw`, read from `text`, and builds the run
/// configuration. `profiles` are the built-in input profiles that
/// `inputs.profile` may name.
pub(crate) fn validate(text: &ConfigText<'_>, raw: RawRunConfig, profiles: &[&str]) -> Result<RunConfig, ConfigError> {
    let model = model(text, &raw.model)?;
    let settings = text.settings(&raw)?;
    let inputs = text.inputs(&raw.inputs, profiles)?;
    let record = match &raw.record {
        Some(record) => text.record(record)?,
        None => None,
    };
    let buses = text.buses(&raw.bus)?;
    let serial = text.serial(&raw.serial, settings.frame)?;
    let bus_log = raw
        .record
        .as_ref()
        .and_then(|r| r.bus_log.as_ref())
        .map(|f| PathBuf::from(f.get_ref()));
    let ecu = raw.ecu.as_ref().map(|e| EcuConfig {
        config: text.located(&e.config, "ecu.config".into()).map(|c| text.dir().join(c)),
    });
    Ok(RunConfig {
        file: text.origin.to_path_buf(),
        model,
        settings,
        inputs,
        record,
        virtual_costs: inputs::virtual_costs(&raw.virtual_clock),
        buses,
        serial,
        bus_log,
        ecu,
    })
}

/// The model reference, resolved against the file's directory.
fn model(text: &ConfigText<'_>, model: &Spanned<String>) -> Result<Located<ModelRef>, ConfigError> {
    if model.get_ref().trim().is_empty() {
        return Err(text.error(
            Some(model.span()),
            "model",
            "the model is empty; write a built-in model name such as \"ev\", or the path to a JSON block diagram \
             such as \"models/my-model.json\""
                .into(),
        ));
    }
    Ok(text
        .located(model, "model".into())
        .map(|name| ModelRef::parse(&name, text.dir())))
}
