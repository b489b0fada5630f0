//! Raw TOML structures become a [`RunConfig`]: every value is checked with
//! its place; names that only the model or a DBC can check are kept
//! [`crate::Located`] for the binding step.

mod bus;
mod checks;
mod inputs;
mod protect;
mod settings;

use std::path::PathBuf;

use tandem_models::ModelRef;
use toml::Spanned;

use crate::bus::{BusConfig, TransportConfig};
use crate::dcp::{check_endpoint, check_slave_name, DcpConfig};
use crate::error::{ConfigError, Located};
use crate::raw::{RawBus, RawDcp, RawFmu, RawRunConfig, RawStartValue, RawXcp};
use crate::run::{EcuConfig, RunConfig, StartValue, XcpConfig};
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
    let buses = text.buses(&raw.bus, settings.frame)?;
    let serial = text.serial(&raw.serial, settings.frame)?;
    let bus_log = raw
        .record
        .as_ref()
        .and_then(|r| r.bus_log.as_ref())
        .map(|f| PathBuf::from(f.get_ref()));
    let dcp = dcp(text, raw.dcp.as_ref(), &raw.bus, &buses)?;
    let ecu = raw.ecu.as_ref().map(|e| EcuConfig {
        config: text.located(&e.config, "ecu.config".into()).map(|c| text.dir().join(c)),
    });
    let xcp = raw.xcp.as_ref().map(|x| xcp(text, x)).transpose()?;
    let isolate_fmu = isolate_fmu(text, raw.fmu.as_ref(), &model.value)?;
    let fmu_parameters = fmu_parameters(text, raw.fmu.as_ref(), &model.value)?;
    let compile = compile(text, raw.compile.as_ref(), &model.value)?;
    Ok(RunConfig {
        file: text.origin.to_path_buf(),
        model,
        settings,
        inputs,
        record,
        virtual_costs: text.virtual_costs(&raw.virtual_clock)?,
        buses,
        serial,
        bus_log,
        ecu,
        dcp,
        xcp,
        isolate_fmu,
        fmu_parameters,
        compile,
    })
}

/// `compile`, which only a block diagram model takes.
fn compile(text: &ConfigText<'_>, raw: Option<&Spanned<bool>>, model: &ModelRef) -> Result<bool, ConfigError> {
    let Some(compile) = raw else {
        return Ok(true);
    };
    if !has_extension(model, &["json", "toml"]) {
        return Err(text.error(
            Some(compile.span()),
            "compile",
            "compile applies to a JSON block diagram model (a model ending in \".json\") and to a system file's \
             diagrams (\".toml\") only: built-in plants and FMUs are machine code already"
                .into(),
        ));
    }
    Ok(*compile.get_ref())
}

/// The `[xcp]` table: an address and port, IPv4 or IPv6.
fn xcp(text: &ConfigText<'_>, raw: &RawXcp) -> Result<XcpConfig, ConfigError> {
    let listen = &raw.listen;
    let address = listen.get_ref().parse().map_err(|_| {
        text.error(
            Some(listen.span()),
            "xcp.listen",
            format!(
                "\"{}\" is not an address and port; write e.g. \"127.0.0.1:5555\" (or \"[::1]:5555\")",
                listen.get_ref()
            ),
        )
    })?;
    Ok(XcpConfig {
        listen: address,
        wait: raw.wait.as_ref().is_some_and(|w| *w.get_ref()),
    })
}

/// `fmu.isolate`, which only an FMU model takes.
fn isolate_fmu(text: &ConfigText<'_>, raw: Option<&RawFmu>, model: &ModelRef) -> Result<bool, ConfigError> {
    let Some(isolate) = raw.and_then(|f| f.isolate.as_ref()) else {
        return Ok(false);
    };
    if !has_extension(model, &["fmu", "ssp", "toml"]) {
        return Err(text.error(
            Some(isolate.span()),
            "fmu.isolate",
            "fmu.isolate applies to an FMU model (a model ending in \".fmu\") and to the FMUs of a system (\".ssp\", \
             \".toml\") only: diagrams and built-in plants run Tandem's own code"
                .into(),
        ));
    }
    Ok(*isolate.get_ref())
}

/// `fmu.parameters`, which only an FMU model takes.
fn fmu_parameters(
    text: &ConfigText<'_>,
    raw: Option<&RawFmu>,
    model: &ModelRef,
) -> Result<Vec<(String, Located<StartValue>)>, ConfigError> {
    let Some(raw) = raw else {
        return Ok(Vec::new());
    };
    let parameters: Vec<(String, Located<StartValue>)> = raw
        .parameters
        .iter()
        .map(|(name, value)| {
            let value = text.located(value, format!("fmu.parameters.{name}")).map(|v| match v {
                RawStartValue::Number(v) => StartValue::Number(v),
                RawStartValue::Boolean(v) => StartValue::Boolean(v),
                RawStartValue::Text(v) => StartValue::Text(v),
            });
            (name.clone(), value)
        })
        .collect();
    if let Some((_, first)) = parameters.first().filter(|_| !has_extension(model, &["fmu"])) {
        return Err(first.error(
            text.origin,
            "fmu.parameters applies to an FMU model (a model ending in \".fmu\") only: an SSP package sets its \
             FMUs' values in its parameter sets, a system file in each [[model]]'s parameters, a diagram in its \
             blocks"
                .into(),
        ));
    }
    Ok(parameters)
}

/// Whether `model` is a file ending in one of `extensions` (any case).
fn has_extension(model: &ModelRef, extensions: &[&str]) -> bool {
    matches!(model, ModelRef::File(path) if path.extension().is_some_and(|e| extensions.iter().any(|x| e.eq_ignore_ascii_case(x))))
}

/// The `[dcp]` table; a bus carried over DCP needs one, and a slave needs
/// such a bus (its only ports).
fn dcp(
    text: &ConfigText<'_>,
    raw: Option<&RawDcp>,
    raw_buses: &[RawBus],
    buses: &[BusConfig],
) -> Result<Option<DcpConfig>, ConfigError> {
    let over_dcp = buses.iter().position(|b| b.transport == TransportConfig::Dcp);
    let error = |span: std::ops::Range<usize>, key: &str, message: String| {
        text.error(Some(span), &format!("dcp.{key}"), message)
    };
    let Some(raw) = raw else {
        return match over_dcp {
            Some(k) => Err(text.error(
                Some(raw_buses[k].transport.span()),
                &format!("bus[{k}].transport"),
                "a bus carried over DCP needs the run to be a DCP slave: add a [dcp] table with control = \
                 \"<IPv4>:<port>\" (see dcp/examples/plant-can.toml)"
                    .into(),
            )),
            None => Ok(None),
        };
    };
    if over_dcp.is_none() {
        return Err(text.error(
            Some(raw.control.span()),
            "dcp",
            "a DCP slave's ports are its buses carried over DCP, and this run has none: add transport = \"dcp\" to \
             a [[bus]], or remove [dcp]"
                .into(),
        ));
    }
    let name = match &raw.name {
        Some(n) => {
            check_slave_name(n, &error)?;
            n.get_ref().clone()
        }
        None => text
            .origin
            .file_stem()
            .map_or_else(|| "tandem".into(), |s| s.to_string_lossy().replace('.', "-")),
    };
    let endpoint = check_endpoint(&raw.control, raw.host.as_ref(), raw.master_timeout.as_ref(), &error)?;
    Ok(Some(DcpConfig { name, endpoint }))
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
