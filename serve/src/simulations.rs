//! Offline simulations: a model and the command line's solver options,
//! run on a worker thread into a [`Table`], streamed while they run,
//! downloadable as the CSV `tandem sim` writes.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use serde_json::{json, Value};
use tandem_config::{fixed_step, Overrides};
use tandem_models::diagram::compile_str;
use tandem_models::Model;
use tandem_runtime::{EventSettings, Simulation, UnknownName};

use crate::body::Compiled;
use crate::error::{blocking, parse_body, ApiError};
use crate::job::{self, sim_error, Job};
use crate::registry::Entry;
use crate::state::{mib, App};
use crate::table::{self, Table};

/// `POST /api/simulations`'s body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    model: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    solver: Option<String>,
    #[serde(default)]
    step: Option<f64>,
    #[serde(default)]
    stop: Option<f64>,
    #[serde(default)]
    rtol: Option<f64>,
    #[serde(default)]
    atol: Option<f64>,
    #[serde(default = "yes")]
    events: bool,
    #[serde(default)]
    event_tolerance: Option<f64>,
    #[serde(default)]
    chatter: Option<String>,
    #[serde(default)]
    max_consecutive_events: Option<u32>,
    #[serde(default)]
    record_events: bool,
}

fn yes() -> bool {
    true
}

impl Request {
    /// The event options asked for, over `tandem sim`'s defaults.
    fn events(&self) -> Result<EventSettings, ApiError> {
        let defaults = EventSettings::default();
        let chatter = match &self.chatter {
            Some(name) => name
                .parse()
                .map_err(|e: UnknownName| ApiError::unprocessable(format!("chatter: {e}")).at("key", "chatter"))?,
            None => defaults.chatter,
        };
        EventSettings::with_options(
            self.events,
            self.event_tolerance.unwrap_or(defaults.tolerance),
            self.max_consecutive_events.unwrap_or(defaults.max_consecutive),
            chatter,
            self.record_events,
        )
        .map_err(|e| ApiError::unprocessable(format!("{}: {e}", e.option())).at("key", e.option()))
    }
}

/// A 422 for a setting, naming it.
fn setting_error(e: tandem_config::SettingsError) -> ApiError {
    let key = e.origin.trim_start_matches("--").to_string();
    ApiError::unprocessable(format!("{key}: {}", e.message)).at("key", key)
}

/// `POST /api/simulations`: checks everything (the model compiled in a
/// slot), then starts the run.
pub async fn start(State(app): State<Arc<App>>, Compiled { slot, body }: Compiled) -> Result<Response, ApiError> {
    blocking(move || {
        let _slot = slot;
        start_blocking(&app, &body)
    })
    .await
}

/// What `start` does, off the server's threads.
fn start_blocking(app: &Arc<App>, body: &[u8]) -> Result<Response, ApiError> {
    let request: Request = parse_body(body)?;
    let compiled = compile_str(&request.model).map_err(|e| ApiError::model(&e))?;
    let overrides = Overrides {
        solver: request.solver.clone(),
        step: request.step,
        stop: request.stop,
        rtol: request.rtol,
        atol: request.atol,
    };
    let settings = fixed_step(&compiled.simulation, &overrides).map_err(setting_error)?;
    // Compiled to machine code as `tandem sim` does: the memory this
    // takes stays below the model compiler's, which the slot reckons with.
    let (model, evaluation): (Box<dyn Model>, _) = tandem_jit::prepare(compiled.model);
    let mut columns = vec!["time".to_string()];
    columns.extend(model.layout().outputs.iter().map(|v| v.name.clone()));
    let simulation = Simulation::owning(model, settings).map_err(|e| sim_error(&request.model, &e))?;
    let simulation = simulation.with_events(request.events()?);
    let expected_rows = simulation.total_steps() + 1;
    let values = expected_rows as f64 * columns.len() as f64;
    let most = app.limits.values.min(app.limits.memory / std::mem::size_of::<f64>());
    if values > most as f64 {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the result would hold {expected_rows} rows × {} columns = {values:.3e} values, more than the {:.0e} \
                 a simulation on this server may keep (the smaller of {:.0e} and its memory budget, {} MiB, in \
                 8-byte values); lengthen the step or shorten the stop time",
                columns.len(),
                most as f64,
                app.limits.values as f64,
                mib(app.limits.memory)
            ),
        )
        .at("key", "stop"));
    }
    let name = request
        .name
        .clone()
        .or(compiled.name.clone())
        .unwrap_or_else(|| "model".into());
    // The room in the budget is taken before the rows are allocated.
    let room = app.make_room(values as usize * std::mem::size_of::<f64>())?;
    let job = Job::new(
        app.simulation_id(),
        name,
        Table::new(columns, app.limits.values, Some(expected_rows)),
        expected_rows,
        evaluation,
    );
    app.simulations.add(Arc::clone(&job), app.limits.simulations)?;
    drop(room);
    let ended = Arc::clone(app);
    job::spawn(
        Arc::clone(&job),
        simulation,
        app.limits.wall,
        request.model,
        move || ended.ended(),
    )
    .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, format!("cannot start a thread: {e}")))?;
    Ok((StatusCode::CREATED, Json(job.json())).into_response())
}

/// `GET /api/simulations`.
pub async fn list(State(app): State<Arc<App>>) -> Json<Value> {
    Json(app.simulations.listing())
}

/// `GET /api/simulations/ID`.
pub async fn status(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<Json<Value>, ApiError> {
    app.simulations.status(&id).map(Json)
}

/// `DELETE /api/simulations/ID`: cancels a running one, forgets an ended
/// one.
pub async fn cancel(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<StatusCode, ApiError> {
    let job = app.simulations.get(&id)?;
    if job.running() {
        job.cancel();
        Ok(StatusCode::ACCEPTED)
    } else {
        app.simulations.remove(&id);
        Ok(StatusCode::NO_CONTENT)
    }
}

/// 410 for a simulation whose rows were dropped.
fn gone(job: &Job) -> Result<(), ApiError> {
    match job.table.dropped() {
        true => Err(ApiError::new(
            StatusCode::GONE,
            format!("simulation \"{}\": {}", job.id(), job::DROPPED),
        )),
        false => Ok(()),
    }
}

/// `GET /api/simulations/ID/csv`: the rows as `tandem sim` writes them,
/// streamed.
pub async fn csv(State(app): State<Arc<App>>, Path(id): Path<String>) -> Result<Response, ApiError> {
    let job = app.simulations.get(&id)?;
    gone(&job)?;
    let disposition = format!(
        "attachment; filename=\"{}.csv\"",
        job.name.replace(['"', '\\', '/'], "_")
    );
    Ok((
        [
            (header::CONTENT_TYPE, "text/csv".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        table::csv(Arc::clone(&job.table)),
    )
        .into_response())
}

/// `GET /api/simulations/ID/stream`: the WebSocket of rows.
pub async fn stream(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    upgrade: WebSocketUpgrade,
) -> Result<Response, ApiError> {
    let job = app.simulations.get(&id)?;
    gone(&job)?;
    let table = Arc::clone(&job.table);
    let mut last = -1.0;
    Ok(upgrade.on_upgrade(move |socket| {
        table::stream(socket, table, Duration::from_millis(100), move |status| {
            if status.progress == last || status.end.is_some() {
                return Vec::new();
            }
            last = status.progress;
            vec![json!({"type": "progress", "progress": status.progress, "rows": status.rows})]
        })
    }))
}
