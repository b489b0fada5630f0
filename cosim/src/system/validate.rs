//! From the file as written to a checked [`System`]: every value within its
//! bounds, every name known, each input driven at most once, and no
//! algebraic loop unless the master iterates.

use std::path::Path;

use tandem_config::bounds::{shown_number, MAX_STOP, MIN_STEP};
use tandem_config::ConfigError;
use tandem_fmi::Host;
use tandem_runtime::UnknownName;
use toml::Spanned;

use super::connections::{links, loop_path};
use super::raw::{RawConnection, RawMaster, RawModel, RawSystem};
use super::source::{load_part, ModelSpec};
use super::{names, Iterate, Loading, Master, Ordering, Participant, Parts, PointInputs, System, SystemError};
use crate::bounds::{MAX_EVERY, MAX_ITERATIONS, MAX_MODELS, MAX_THREADS};
use crate::graph::{self, Link};
use crate::submodel::Feedthrough;
use tandem_config::TomlPlace as Place;

/// Iterations of a macro step when `iterate` gives no `max_iterations`.
pub const DEFAULT_MAX_ITERATIONS: u32 = 50;
/// The extrapolation order when `[master]` gives none.
pub const DEFAULT_EXTRAPOLATION: usize = 1;

/// Checks `raw` and loads its sub-models.
pub(super) fn validate(
    place: &Place<'_>,
    raw: RawSystem,
    loading: Loading,
    parts: Parts,
) -> Result<System, SystemError> {
    let m = &raw.master;
    let step = seconds(place, &m.step, "master.step")?;
    let stop = seconds(place, &m.stop, "master.stop")?;
    let steps = whole(stop / step).ok_or_else(|| {
        place.error(
            m.stop.span(),
            "master.stop",
            format!(
                "the stop time {} s is not a whole number of macro steps of {} s; make it a multiple of master.step",
                shown_number(stop),
                shown_number(step)
            ),
        )
    })?;
    let extrapolation = match &m.extrapolation {
        Some(e) => count(place, e, "master.extrapolation", 0, 2)? as usize,
        None => DEFAULT_EXTRAPOLATION,
    };
    let ordering = ordering(place, m)?;
    let iterate = iterate(place, m)?;
    let point_inputs = point_inputs(place, m, ordering, iterate.is_some())?;
    let mut participants = participants(place, &raw.model, step, steps, loading, parts)?;
    let links = links(place, &raw.connection, &participants)?;
    match parts {
        Parts::Plant => solvable(place, &raw.connection, &links, &participants, PLANT_LOOP_FIX)?,
        Parts::Participants if iterate.is_none() && point_inputs == PointInputs::Newest => {
            solvable(place, &raw.connection, &links, &participants, ITERATE_FIX)?;
        }
        Parts::Participants => {}
    }
    let order = order(place, m, ordering, &participants, &links)?;
    let threads = threads(place, m, ordering, participants.len())?;
    // Plant parts are composed into one model, never stepped nor saved.
    let rollback = match parts {
        Parts::Participants => rollback(place, m, &mut participants)?,
        Parts::Plant => false,
    };
    Ok(System {
        master: Master {
            step,
            steps,
            ordering,
            extrapolation,
            iterate,
            threads,
            point_inputs,
        },
        participants,
        links,
        order,
        rollback,
    })
}

/// The feedthrough of each sub-model.
fn feedthrough(participants: &[Participant]) -> Vec<&Feedthrough> {
    participants.iter().map(|p| p.model.feedthrough()).collect()
}

/// What a plant's system file can do about an algebraic loop.
const PLANT_LOOP_FIX: &str = "a real-time plant computes its parts' outputs once per evaluation, without \
                              iterating: join the sub-models on the loop into one model";

/// How a system file solves an algebraic loop.
const ITERATE_FIX: &str = "add iterate = { tolerance = 1e-9 } to [master] to solve the loop by fixed-point iteration";

/// Refuses an algebraic loop; `fix` says how the file can solve one.
fn solvable(
    place: &Place<'_>,
    connections: &[RawConnection],
    links: &[Link],
    participants: &[Participant],
    fix: &str,
) -> Result<(), ConfigError> {
    let Some(cycle) = graph::algebraic_loop(&feedthrough(participants), links) else {
        return Ok(());
    };
    let first = cycle.iter().copied().min().unwrap_or_default();
    Err(place.error(
        connections[first].to.span(),
        &format!("connection[{first}]"),
        format!(
            "algebraic loop between sub-models: {}; each output on it depends directly on the input before it, so \
             no order of the sub-models computes them: {fix}, or connect an output that does not depend directly \
             on its inputs",
            loop_path(&cycle, links, participants)
        ),
    ))
}

/// A Jacobi system of participants loaded elsewhere (the remote members
/// of a federation) and the `[[connection]]` tables of `place`'s file: every
/// end a known port, each input driven once, the order from feedthrough,
/// and, with the newest point inputs, no algebraic loop (`loop_fix` says
/// how that file can break one). Such a system does not iterate and does
/// not go back.
pub fn assemble(
    place: &Place<'_>,
    master: Master,
    participants: Vec<Participant>,
    connections: &[RawConnection],
    loop_fix: &str,
) -> Result<System, SystemError> {
    let links = links(place, connections, &participants)?;
    if master.point_inputs == PointInputs::Newest {
        solvable(place, connections, &links, &participants, loop_fix)?;
    }
    let order = graph::order(&feedthrough(&participants), &links);
    Ok(System {
        master: Master {
            ordering: Ordering::Jacobi,
            iterate: None,
            ..master
        },
        participants,
        links,
        order,
        rollback: false,
    })
}

/// The order of the sub-models: `master.order` (Gauss–Seidel only), else
/// the one feedthrough gives.
fn order(
    place: &Place<'_>,
    m: &RawMaster,
    ordering: Ordering,
    participants: &[Participant],
    links: &[Link],
) -> Result<Vec<usize>, ConfigError> {
    match (&m.order, ordering) {
        (Some(order), Ordering::GaussSeidel) => given_order(place, order, participants),
        (Some(order), Ordering::Jacobi) => Err(place.error(
            order.span(),
            "master.order",
            "an order is used by ordering = \"gauss-seidel\" only (Jacobi steps every sub-model from the same \
             values); remove it or set the ordering"
                .into(),
        )),
        (None, _) => Ok(graph::order(&feedthrough(participants), links)),
    }
}

/// A time in seconds within the bounds of an offline simulation.
fn seconds(place: &Place<'_>, value: &Spanned<f64>, key: &str) -> Result<f64, ConfigError> {
    let v = *value.get_ref();
    if (MIN_STEP..=MAX_STOP).contains(&v) {
        Ok(v)
    } else {
        Err(place.error(
            value.span(),
            key,
            format!(
                "must be from {MIN_STEP:e} to {MAX_STOP:e} seconds, found {}",
                shown_number(v)
            ),
        ))
    }
}

/// A whole number in `min..=max`.
fn count(place: &Place<'_>, value: &Spanned<i64>, key: &str, min: i64, max: i64) -> Result<i64, ConfigError> {
    let v = *value.get_ref();
    if (min..=max).contains(&v) {
        Ok(v)
    } else {
        Err(place.error(value.span(), key, format!("must be from {min} to {max}, found {v}")))
    }
}

/// The whole number `ratio` is (to rounding), when it is one and at least 1.
fn whole(ratio: f64) -> Option<u64> {
    let n = ratio.round();
    (n >= 1.0 && (ratio - n).abs() <= 1e-9 * n).then_some(n as u64)
}

/// `master.point_inputs`: held inputs need Jacobi without iteration.
fn point_inputs(
    place: &Place<'_>,
    m: &RawMaster,
    ordering: Ordering,
    iterates: bool,
) -> Result<PointInputs, ConfigError> {
    let Some(written) = &m.point_inputs else {
        return Ok(PointInputs::Newest);
    };
    let error = |message: &str| Err(place.error(written.span(), "master.point_inputs", message.into()));
    match written.get_ref().as_str() {
        "newest" => Ok(PointInputs::Newest),
        "held" if ordering == Ordering::GaussSeidel => error(
            "held point inputs need ordering = \"jacobi\" (Gauss-Seidel steps each sub-model from the newest \
             values); remove one of the two",
        ),
        "held" if iterates => error(
            "held point inputs delay every feedthrough by a macro step, so there is no loop to iterate on; \
             remove iterate or point_inputs",
        ),
        "held" => Ok(PointInputs::Held),
        other => Err(place.error(
            written.span(),
            "master.point_inputs",
            format!("unknown point inputs \"{other}\"; use \"newest\" (the default) or \"held\""),
        )),
    }
}

/// `master.ordering`.
fn ordering(place: &Place<'_>, m: &RawMaster) -> Result<Ordering, ConfigError> {
    let Some(written) = &m.ordering else {
        return Ok(Ordering::Jacobi);
    };
    match written.get_ref().as_str() {
        "jacobi" => Ok(Ordering::Jacobi),
        "gauss-seidel" => Ok(Ordering::GaussSeidel),
        other => {
            let unknown = UnknownName {
                what: "ordering",
                found: other.to_string(),
                valid: vec!["jacobi", "gauss-seidel"],
            };
            Err(place.error(written.span(), "master.ordering", unknown.to_string()))
        }
    }
}

/// `master.iterate`.
fn iterate(place: &Place<'_>, m: &RawMaster) -> Result<Option<Iterate>, ConfigError> {
    let Some(it) = &m.iterate else {
        return Ok(None);
    };
    let it = it.get_ref();
    let tolerance = *it.tolerance.get_ref();
    if !(tolerance > 0.0 && tolerance.is_finite()) {
        return Err(place.error(
            it.tolerance.span(),
            "master.iterate.tolerance",
            format!(
                "must be a number above 0 (the largest change of a coupling output between two iterations), found {}",
                shown_number(tolerance)
            ),
        ));
    }
    let max_iterations = match &it.max_iterations {
        Some(n) => count(place, n, "master.iterate.max_iterations", 1, MAX_ITERATIONS)? as u32,
        None => DEFAULT_MAX_ITERATIONS,
    };
    Ok(Some(Iterate {
        tolerance,
        max_iterations,
    }))
}

/// `master.threads`: the caller's thread alone for Gauss–Seidel; for
/// Jacobi as given, else one per sub-model up to the machine's cores.
fn threads(place: &Place<'_>, m: &RawMaster, ordering: Ordering, models: usize) -> Result<usize, ConfigError> {
    match (&m.threads, ordering) {
        (Some(t), Ordering::Jacobi) => Ok((count(place, t, "master.threads", 1, MAX_THREADS)? as usize).min(models)),
        (Some(t), Ordering::GaussSeidel) => Err(place.error(
            t.span(),
            "master.threads",
            "threads are used by ordering = \"jacobi\" only (Gauss-Seidel steps one sub-model after the other); \
             remove it or set the ordering"
                .into(),
        )),
        (None, Ordering::Jacobi) => {
            let cores = std::thread::available_parallelism().map_or(1, usize::from);
            Ok(models.min(cores))
        }
        (None, Ordering::GaussSeidel) => Ok(1),
    }
}

/// The `[[model]]` tables, each sub-model loaded; FMUs out of process when
/// `loading.isolate_fmus` or their `fmu.isolate` says so, diagrams
/// interpreted when `loading.interpret`, each as `parts` says.
fn participants(
    place: &Place<'_>,
    raw: &[RawModel],
    step: f64,
    steps: u64,
    loading: Loading,
    parts: Parts,
) -> Result<Vec<Participant>, SystemError> {
    if raw.is_empty() {
        return Err(place
            .error(
                0..0,
                "model",
                "a system needs at least one [[model]] table (name and source); see cosim/SYSTEM.md".into(),
            )
            .into());
    }
    if let Some(extra) = raw.get(MAX_MODELS) {
        return Err(place
            .error(
                extra.name.span(),
                &format!("model[{MAX_MODELS}]"),
                format!("a system has at most {MAX_MODELS} sub-models; join some into one model"),
            )
            .into());
    }
    let mut participants: Vec<Participant> = Vec::with_capacity(raw.len());
    for (i, r) in raw.iter().enumerate() {
        let key = |k: &str| format!("model[{i}].{k}");
        let name = r.name.get_ref();
        let misnamed = |message: String| place.error(r.name.span(), &key("name"), message);
        if name.is_empty() || name.contains('.') {
            return Err(misnamed(format!(
                "\"{name}\" cannot name a sub-model: a name is not empty and has no '.' (connections write \
                 <model>.<port>)"
            ))
            .into());
        }
        if let Some(first) = raw[..i].iter().position(|o| o.name.get_ref() == name) {
            let line = place.location(raw[first].name.span().start).line;
            return Err(misnamed(format!(
                "\"{name}\" already names model[{first}] (line {line}); give each sub-model its own name"
            ))
            .into());
        }
        let every = match &r.every {
            Some(e) => count(place, e, &key("every"), 1, MAX_EVERY)? as u64,
            None => 1,
        };
        if !steps.is_multiple_of(every) {
            return Err(place
                .error(
                    r.every.as_ref().map_or(r.name.span(), |e| e.span()),
                    &key("every"),
                    format!(
                        "the run's {steps} macro steps are not a whole number of communication steps of {every}; \
                         choose an `every` that divides {steps}, or change master.stop"
                    ),
                )
                .into());
        }
        let located_f64 = |v: &Option<Spanned<f64>>, k: &str| v.as_ref().map(|v| place.located(v, key(k)));
        let spec = ModelSpec {
            name: place.located(&r.name, key("name")),
            source: place.located(&r.source, key("source")),
            solver: r.solver.as_ref().map(|s| place.located(s, key("solver"))),
            step: located_f64(&r.step, "step"),
            rtol: located_f64(&r.rtol, "rtol"),
            atol: located_f64(&r.atol, "atol"),
            parameters: r
                .parameters
                .iter()
                .map(|(name, value)| place.located(value, key(&format!("parameters.{name}"))).map(Into::into))
                .zip(r.parameters.keys().cloned())
                .map(|(value, name)| (name, value))
                .collect(),
            signals: match &r.signals {
                Some(signals) => (signals.get_ref().iter().enumerate())
                    .map(|(k, signal)| place.located(signal, key(&format!("signals[{k}]"))))
                    .collect(),
                None => Vec::new(),
            },
            communication_step: every as f64 * step,
            stop: steps as f64 * step,
        };
        let isolate = r.fmu.as_ref().and_then(|f| f.isolate.as_ref());
        if let Some(isolate) = isolate.filter(|_| !tandem_fmi::is_fmu(Path::new(r.source.get_ref().trim()))) {
            return Err(place
                .error(
                    isolate.span(),
                    &key("fmu.isolate"),
                    "fmu.isolate applies to FMU sources (.fmu) only: diagrams and built-in plants run Tandem's own \
                     code"
                        .into(),
                )
                .into());
        }
        let host = if loading.isolate_fmus || isolate.is_some_and(|i| *i.get_ref()) {
            let host = Host::this_program().map_err(|e| {
                place.error(
                    r.source.span(),
                    &key("source"),
                    format!("cannot find this program to run the FMU out of process: {e}"),
                )
            })?;
            Some(host)
        } else {
            None
        };
        participants.push(Participant {
            name: name.clone(),
            model: load_part(&spec, place.file, host.as_ref(), loading.interpret, parts)?,
            every,
        });
    }
    Ok(participants)
}

/// `master.order`: every sub-model once.
fn given_order(
    place: &Place<'_>,
    order: &Spanned<Vec<Spanned<String>>>,
    participants: &[Participant],
) -> Result<Vec<usize>, ConfigError> {
    let mut out: Vec<usize> = Vec::with_capacity(participants.len());
    for (k, name) in order.get_ref().iter().enumerate() {
        let error = |message: String| place.error(name.span(), &format!("master.order[{k}]"), message);
        let Some(m) = participants.iter().position(|p| &p.name == name.get_ref()) else {
            return Err(error(format!(
                "no sub-model \"{}\"; the sub-models: {}",
                name.get_ref(),
                names(participants)
            )));
        };
        if out.contains(&m) {
            return Err(error(format!(
                "\"{}\" is listed twice; list each sub-model once",
                name.get_ref()
            )));
        }
        out.push(m);
    }
    let missing: Vec<&str> = (0..participants.len())
        .filter(|m| !out.contains(m))
        .map(|m| participants[m].name.as_str())
        .collect();
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(place.error(
            order.span(),
            "master.order",
            format!("misses {}; list every sub-model once", missing.join(", ")),
        ))
    }
}

/// Whether every sub-model can go back to a saved point (tried once):
/// required with `iterate`, else used for the start-up of second-order
/// extrapolation.
fn rollback(place: &Place<'_>, m: &RawMaster, participants: &mut [Participant]) -> Result<bool, ConfigError> {
    for p in participants.iter_mut() {
        if let Err(e) = p.model.save() {
            return match &m.iterate {
                Some(it) => Err(place.error(
                    it.span(),
                    "master.iterate",
                    format!(
                        "sub-model \"{}\": {e}; the iteration repeats each macro step from a saved point: remove \
                         iterate, or use a sub-model that can go back",
                        p.name
                    ),
                )),
                None => Ok(false),
            };
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tandem_models::Variable;

    use super::*;
    use crate::{Course, Recording, SubModelError};

    /// A participant that cannot go back, as an FMU without get/set state.
    struct Stuck(Feedthrough);

    impl crate::SubModel for Stuck {
        fn inputs(&self) -> &[Variable] {
            &[]
        }
        fn outputs(&self) -> &[Variable] {
            &[]
        }
        fn feedthrough(&self) -> &Feedthrough {
            &self.0
        }
        fn evaluate(&mut self, _: &[f64], _: &mut [f64]) -> Result<(), SubModelError> {
            Ok(())
        }
        fn step(&mut self, _: f64, _: f64, _: &[Course], _: Option<&mut Recording>) -> Result<(), SubModelError> {
            Ok(())
        }
        fn save(&mut self) -> Result<(), SubModelError> {
            Err(SubModelError::NoRollback("canGetAndSetFMUstate is false".into()))
        }
        fn restore(&mut self) -> Result<(), SubModelError> {
            Err(SubModelError::NoRollback("canGetAndSetFMUstate is false".into()))
        }
    }

    #[test]
    fn iteration_is_refused_when_a_sub_model_cannot_go_back() {
        let mut participants = vec![Participant {
            name: "fmu".into(),
            model: Box::new(Stuck(Feedthrough::all(0, 0))),
            every: 1,
        }];
        let text = "step = 0.1\nstop = 1\niterate = { tolerance = 1e-9 }\n";
        let place = Place {
            text,
            file: Path::new("s.toml"),
            guide: "cosim/SYSTEM.md",
        };
        let master: RawMaster = toml::from_str(text).unwrap();
        let e = rollback(&place, &master, &mut participants).unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.toml:3:11: master.iterate: sub-model \"fmu\": it cannot go back to a saved point: \
             canGetAndSetFMUstate is false; the iteration repeats each macro step from a saved point: remove \
             iterate, or use a sub-model that can go back"
        );
        let master: RawMaster = toml::from_str("step = 0.1\nstop = 1\n").unwrap();
        assert!(!rollback(&place, &master, &mut participants).unwrap());
    }
}
