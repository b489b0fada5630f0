//! The `[[connection]]` tables: each end a known port of a known
//! sub-model, each input driven at most once; and how an algebraic loop
//! through them is shown.

use tandem_config::ConfigError;
use toml::Spanned;

use super::raw::RawConnection;
use tandem_config::TomlPlace as Place;
use tandem_models::Variable;

use super::{names, Participant};
use crate::bounds::MAX_CONNECTIONS;
use crate::graph::{Link, Port};
use crate::submodel::SubModel;

/// The `[[connection]]` tables.
pub(super) fn links(
    place: &Place<'_>,
    raw: &[RawConnection],
    participants: &[Participant],
) -> Result<Vec<Link>, ConfigError> {
    if let Some(extra) = raw.get(MAX_CONNECTIONS) {
        return Err(place.error(
            extra.from.span(),
            &format!("connection[{MAX_CONNECTIONS}]"),
            format!("a system has at most {MAX_CONNECTIONS} connections"),
        ));
    }
    let mut driven: Vec<Vec<Option<usize>>> = participants
        .iter()
        .map(|p| vec![None; p.model.inputs().len()])
        .collect();
    let mut links = Vec::with_capacity(raw.len());
    for (i, c) in raw.iter().enumerate() {
        let key = |k: &str| format!("connection[{i}].{k}");
        let from = endpoint(place, &c.from, &key("from"), participants, Side::Output)?;
        let to = endpoint(place, &c.to, &key("to"), participants, Side::Input)?;
        if let Some(first) = driven[to.model][to.port] {
            let line = place.location(raw[first].to.span().start).line;
            return Err(place.error(
                c.to.span(),
                &key("to"),
                format!(
                    "input {} is already driven by connection[{first}] (line {line}); an input takes one connection: \
                     remove one, or add the two inside a model",
                    c.to.get_ref()
                ),
            ));
        }
        driven[to.model][to.port] = Some(i);
        let number = |v: &Option<Spanned<f64>>, k: &str, default: f64| match v {
            Some(v) if !v.get_ref().is_finite() => Err(place.error(
                v.span(),
                &key(k),
                format!("must be a finite number, found {}", v.get_ref()),
            )),
            Some(v) => Ok(*v.get_ref()),
            None => Ok(default),
        };
        links.push(Link {
            from,
            to,
            scale: number(&c.scale, "scale", 1.0)?,
            offset: number(&c.offset, "offset", 0.0)?,
        });
    }
    Ok(links)
}

/// Which end of a connection.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    Output,
    Input,
}

impl Side {
    fn name(self) -> &'static str {
        match self {
            Side::Output => "output",
            Side::Input => "input",
        }
    }

    fn other(self) -> Side {
        match self {
            Side::Output => Side::Input,
            Side::Input => Side::Output,
        }
    }

    /// The ports of `sub` on this side.
    fn ports(self, sub: &dyn SubModel) -> &[Variable] {
        match self {
            Side::Output => sub.outputs(),
            Side::Input => sub.inputs(),
        }
    }
}

/// A connection's end, `<model>.<port>`.
fn endpoint(
    place: &Place<'_>,
    written: &Spanned<String>,
    key: &str,
    participants: &[Participant],
    side: Side,
) -> Result<Port, ConfigError> {
    let error = |message: String| place.error(written.span(), key, message);
    let text = written.get_ref();
    let Some((model, port)) = text.split_once('.') else {
        return Err(error(format!(
            "\"{text}\" names no port; write <model>.<{}>, the sub-models being: {}",
            side.name(),
            names(participants)
        )));
    };
    let Some(m) = participants.iter().position(|p| p.name == model) else {
        return Err(error(format!(
            "no sub-model \"{model}\"; the sub-models: {}",
            names(participants)
        )));
    };
    let sub = &*participants[m].model;
    let ports = side.ports(sub);
    if let Some(k) = ports.iter().position(|v| v.name == port) {
        return Ok(Port { model: m, port: k });
    }
    let kind = side.name();
    let hint = if side.other().ports(sub).iter().any(|v| v.name == port) {
        format!(
            " (\"{port}\" is one of its {}s: a connection goes from an output to an input)",
            side.other().name()
        )
    } else {
        String::new()
    };
    let list = if ports.is_empty() {
        format!("it has no {kind}s")
    } else {
        format!(
            "its {kind}s: {}",
            ports.iter().map(|v| v.name.as_str()).collect::<Vec<_>>().join(", ")
        )
    };
    Err(error(format!(
        "sub-model \"{model}\" has no {kind} \"{port}\"{hint}; {list}"
    )))
}

/// The ports an algebraic loop goes through, as `a.y → b.u → b.z → a.v →
/// a.y`.
pub(super) fn loop_path(cycle: &[usize], links: &[Link], participants: &[Participant]) -> String {
    let name = |p: Port, side: Side| {
        let sub = &participants[p.model];
        format!("{}.{}", sub.name, side.ports(&*sub.model)[p.port].name)
    };
    let mut parts: Vec<String> = cycle
        .iter()
        .flat_map(|&k| [name(links[k].from, Side::Output), name(links[k].to, Side::Input)])
        .collect();
    parts.push(name(links[cycle[0]].from, Side::Output));
    parts.join(" → ")
}
