//! Real-time runs: started here from a run configuration in the served
//! folder, or by `tandem run --serve` (see [`attach`]); their live
//! statistics read from the session's lock-free metrics, their recorded
//! outputs from the rows the session drains, and changes of inputs and
//! block parameters made through the session's [`Controls`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use tandem_config::bounds::check_duration;
use tandem_session::{bind, ClockMode, ControlError, Options, Session};

use crate::body::{Compiled, JsonBody};
use crate::confine::RESULTS;
use crate::error::{blocking, parse_body, ApiError};
use crate::live::{attach_in, About};
use crate::registry::Entry;
use crate::runconfig;
use crate::state::App;
use crate::table;

/// How often a run's stream sends statistics.
const STATS_EVERY: Duration = Duration::from_millis(200);

/// `POST /api/runs`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StartRequest {
    config: String,
    #[serde(default)]
    virtual_clock: bool,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    pace: Option<f64>,
}

/// `POST /api/runs`: starts a run of a configuration in the folder (its
/// model compiled in a slot).
pub async fn start(State(app): State<Arc<App>>, Compiled { slot, body }: Compiled) -> Result<Response, ApiError> {
    blocking(move || {
        let _slot = slot;
        start_blocking(&app, &body)
    })
    .await
}

/// What `start` does, off the server's threads.
fn start_blocking(app: &Arc<App>, body: &[u8]) -> Result<Response, ApiError> {
    let request: StartRequest = parse_body(body)?;
    if let Some(pace) = request.pace {
        if !(pace.is_finite() && pace > 0.0 && pace <= 1e6) {
            return Err(ApiError::unprocessable(format!(
                "pace: {pace} is not a run-time-to-wall-time ratio between 0 and 1e6; give e.g. 1 (as fast as the \
                 real clock) or leave it out (as fast as possible)"
            ))
            .at("key", "pace"));
        }
    }
    let clock = if request.virtual_clock {
        ClockMode::Virtual
    } else {
        ClockMode::Real
    };
    let unprocessable = |e: &dyn std::fmt::Display| {
        ApiError::unprocessable(app.relative(&e.to_string())).at("path", request.config.as_str())
    };
    let mut config = runconfig::load(app, &request.config)?;
    if let Some(d) = request.duration {
        check_duration(d).map_err(|e| ApiError::unprocessable(format!("duration: {e}")).at("key", "duration"))?;
        if d < config.settings.frame {
            return Err(ApiError::unprocessable(format!(
                "duration: the run ({d} s) is shorter than one frame ({} s); make it at least the frame",
                config.settings.frame
            ))
            .at("key", "duration"));
        }
        config.settings.duration = d;
    }
    // In results/ (an absolute path is one inside it, as runconfig checked).
    let in_results = |p: &std::path::Path| {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            app.root.path().join(RESULTS).join(p)
        };
        p.strip_prefix(app.root.path()).unwrap_or(&p).display().to_string()
    };
    let about = About {
        files: config
            .record
            .iter()
            .map(|r| &r.file)
            .chain(config.bus_log.iter())
            .map(|p| in_results(p.as_path()))
            .collect(),
        ecu: config.ecu.is_some(),
    };
    let plan = bind(config).map_err(|e| unprocessable(&e))?;
    let options = Options {
        pace: request.pace.filter(|_| clock == ClockMode::Virtual),
        ..Options::new(clock, app.root.path().join(RESULTS))
    };
    let mut session = Session::new(plan, options).map_err(|e| unprocessable(&e))?;
    let id = app.run_id();
    let folder = Some(app.root.path().to_path_buf());
    let (run, mut observer) = attach_in(
        &mut session,
        id,
        request.config.clone(),
        app.limits.run_values,
        folder,
        about,
    )
    .ok_or_else(|| ApiError::unprocessable("this session's controls are taken"))?;
    let room = app.make_room(run.table.bytes(true))?;
    app.runs.add(Arc::clone(&run), app.limits.runs)?;
    drop(room);
    let (ended, kept) = (Arc::clone(&run), Arc::clone(app));
    std::thread::Builder::new()
        .name(format!("run {}", run.id))
        .spawn(move || {
            let report = session.run(&mut observer);
            ended.finish(report.as_ref());
            kept.ended();
        })
        .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, format!("cannot start a thread: {e}")))?;
    Ok((StatusCode::CREATED, Json(run.json())).into_response())
}

/// `GET /api/runs`.
pub async fn list(State(app): State<Arc<App>>) -> Json<Value> {
    Json(app.runs.listing())
}

/// `GET /api/runs/ID`.
pub async fn status(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    app.runs.status(&id).map(Json)
}

/// `DELETE /api/runs/ID`: asks the run to stop.
pub async fn stop(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    let run = app.runs.get(&id)?;
    run.stop();
    Ok(StatusCode::ACCEPTED)
}

/// `POST /api/runs/ID/changes`'s body: an input or a block parameter.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ChangeRequest {
    #[serde(default)]
    input: Option<String>,
    #[serde(default)]
    block: Option<String>,
    #[serde(default)]
    param: Option<String>,
    value: Value,
}

/// `POST /api/runs/ID/changes`: sets an input, or changes a block
/// parameter at a frame boundary.
pub async fn change(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let run = app.runs.get(&id)?;
    let request: ChangeRequest = parse_body(&body)?;
    if !run.is_running() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("run \"{id}\" has ended; start it again to change it"),
        ));
    }
    let requested_at = run.now();
    let refused = |e: ControlError, key: &str| ApiError::unprocessable(e.to_string()).at("key", key);
    let mut controls = run.controls.lock().unwrap_or_else(|e| e.into_inner());
    let entry = match (&request.input, &request.block, &request.param) {
        (Some(input), None, None) => {
            let value = request.value.as_f64().ok_or_else(|| {
                ApiError::unprocessable(format!(
                    "value: {} is not a number; give one such as 0.5",
                    request.value
                ))
                .at("key", "value")
            })?;
            let frame = controls.set_input(input, value).map_err(|e| refused(e, "input"))?;
            json!({"type": "change", "what": format!("input {input}"), "value": value,
                   "requested_at": requested_at, "applies_at_frame": frame})
        }
        (None, Some(block), Some(param)) => {
            let (seq, frame) = controls
                .set_parameter(block, param, &request.value)
                .map_err(|e| refused(e, "param").at("block", block.as_str()))?;
            json!({"type": "change", "seq": seq, "what": format!("block {block} parameter {param}"),
                   "value": request.value, "requested_at": requested_at, "applies_at_frame": frame})
        }
        _ => return Err(ApiError::bad_request(
            "give either {\"input\": NAME, \"value\": NUMBER} or {\"block\": PATH, \"param\": NAME, \"value\": VALUE}",
        )),
    };
    drop(controls);
    run.log_change(entry.clone());
    Ok((StatusCode::ACCEPTED, Json(entry)))
}

/// `POST /api/runs/ID/faults`: injects a frame fault into what a bus of
/// the run sends: `{"bus": "can0", "kind": "drop", "message": "…",
/// "duration": 0.5}` and the other keys of a `[[bus.fault]]` table.
pub async fn fault(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    JsonBody(body): JsonBody,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let run = app.runs.get(&id)?;
    let mut request: Value = parse_body(&body)?;
    let Some(keys) = request.as_object_mut() else {
        return Err(ApiError::bad_request(
            "give an object: {\"bus\": \"can0\", \"kind\": \"drop\", …}",
        ));
    };
    let bus = match keys.remove("bus") {
        None => "can0".to_string(),
        Some(Value::String(bus)) => bus,
        Some(other) => {
            return Err(ApiError::unprocessable(format!("bus: {other} is not a bus name")).at("key", "bus"));
        }
    };
    if !run.is_running() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("run \"{id}\" has ended; start it again to inject faults"),
        ));
    }
    let requested_at = run.now();
    let injected = run
        .controls
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .inject_fault(&bus, &request)
        .map_err(|e| ApiError::unprocessable(e.to_string()).at("key", "fault"))?;
    let entry = json!({"type": "change", "what": format!("fault on {bus}: {}", injected.description),
                       "slot": injected.slot, "requested_at": requested_at});
    run.log_change(entry.clone());
    Ok((StatusCode::ACCEPTED, Json(entry)))
}

/// `GET /api/runs/ID/changes`.
pub async fn changes(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    let run = app.runs.get(&id)?;
    let changes = run.changes.lock().unwrap_or_else(|e| e.into_inner()).clone();
    Ok(Json(json!({"changes": changes})))
}

/// `GET /api/runs/ID/stream`: the WebSocket of statistics, rows and
/// changes.
pub async fn stream(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    upgrade: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let run = app.runs.get(&id)?;
    let table = Arc::clone(&run.table);
    let mut changes_sent = 0;
    let mut last_stats = Instant::now() - STATS_EVERY;
    Ok(upgrade.on_upgrade(move |socket| {
        table::stream(socket, table, STATS_EVERY, move |status| {
            let mut messages = Vec::new();
            if last_stats.elapsed() >= STATS_EVERY || status.end.is_some() {
                last_stats = Instant::now();
                messages.push(run.stats());
            }
            let changes = run.changes.lock().unwrap_or_else(|e| e.into_inner());
            messages.extend(changes[changes_sent..].iter().cloned());
            changes_sent = changes.len();
            messages
        })
    }))
}
