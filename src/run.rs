//! `tandem run CONFIG.toml`: the real-time tandem on the model and inputs of
//! a configuration, with a preflight, live statistics, a recording and a
//! summary at the end.

use std::fs::File;
use std::io::BufWriter;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::Args;
use crossbeam_channel::Sender;
use tandem_config::{load_run_config, ModelRef, RunConfig};
use tandem_io::bus_inputs::{sample_queue, BusInputs, Fault, SampleSender};
use tandem_io::bus_threads::{spawn_receiver, spawn_transmitter, wall_ns, BusLink, TxEncoder};
use tandem_io::log::LogRecord;
use tandem_io::CanSender;
use tandem_models::{plants, Model};
use tandem_runtime::record::{CsvRecorder, Recorder};
use tandem_runtime::tandem::assemble::{assemble, RecordPlan, Tandem};
use tandem_runtime::tandem::clock::nanos;
use tandem_runtime::tandem::control::RunControl;
use tandem_runtime::tandem::inputs::{signals_by_name, InputSource, Profile, Signals};
use tandem_runtime::tandem::preflight::preflight;
use tandem_runtime::tandem::recording::{row_ring, RowReceiver, RowSender};
use tandem_runtime::tandem::threads::run_realtime;
use tandem_runtime::tandem::virtual_clock::{run_virtual, VirtualCosts};
use tandem_runtime::tandem::Policy;

use crate::bus_report;
use crate::buses::{compile, open, spawn_log_writer, Bus};
use crate::run_report::{LiveStats, Summary};

/// Arguments of `tandem run`.
#[derive(Args)]
pub struct RunArgs {
    /// The run configuration (TOML), e.g. config/examples/ev.toml.
    pub config: PathBuf,
    /// Run length in seconds, instead of the configuration's.
    #[arg(long, allow_negative_numbers = true)]
    pub duration: Option<f64>,
    /// Run on the virtual clock: deterministic, as fast as possible, with
    /// the configuration's [virtual_clock] costs and injected faults.
    #[arg(long)]
    pub virtual_clock: bool,
    /// Print live statistics at this interval (e.g. 1s, 500ms).
    #[arg(long, value_parser = parse_interval)]
    pub stats: Option<Duration>,
    /// Also write the summary as JSON to this file.
    #[arg(long)]
    pub stats_json: Option<PathBuf>,
    /// Refuse to start unless every real-time check passes.
    #[arg(long)]
    pub require_rt: bool,
    /// Log all bus traffic to this file (candump, or ASC for `.asc`),
    /// instead of the configuration's record.bus_log.
    #[arg(long)]
    pub bus_log: Option<PathBuf>,
}

pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let d: tandem_config::Duration = s.parse()?;
    Ok(Duration::from_secs_f64(d.seconds()))
}

/// A run: its configuration with the model and inputs resolved.
pub struct Prepared {
    /// The validated configuration.
    pub config: RunConfig,
    /// The model.
    pub model: Box<dyn Model>,
    /// Its name, for reports.
    pub name: String,
    /// The inputs' breakpoints by input index.
    pub inputs: Signals,
}

/// Loads a configuration and resolves its model and inputs.
pub fn prepare(path: &Path, duration: Option<f64>) -> anyhow::Result<Prepared> {
    let mut config = load_run_config(path, plants::PROFILES)?;
    if let Some(d) = duration {
        if !(d > 0.0 && d.is_finite()) {
            bail!("--duration: must be a positive number of seconds, found {d}");
        }
        let frame = config.settings.frame;
        if d < frame {
            bail!("--duration: the run ({d} s) is shorter than one frame ({frame} s); make it at least the frame");
        }
        config.settings.duration = d;
    }
    let (model, name) = match &config.model {
        ModelRef::Builtin(name) => match plants::builtin(name) {
            Some(m) => (m, name.clone()),
            None => bail!(
                "{}: model: no built-in model \"{name}\"; built-in models: {}",
                path.display(),
                plants::names().join(", ")
            ),
        },
        ModelRef::File(file) => {
            let compiled = tandem_models::diagram::load(file)?;
            let name = compiled
                .name
                .clone()
                .unwrap_or_else(|| crate::sim::stem(file).to_string());
            (Box::new(compiled.model) as Box<dyn Model>, name)
        }
    };
    let inputs = input_points(path, &config, model.as_ref())?;
    Ok(Prepared {
        config,
        model,
        name,
        inputs,
    })
}

/// The profile's signals overridden by the configuration's points, as
/// input indices.
fn input_points(path: &Path, config: &RunConfig, model: &dyn Model) -> anyhow::Result<Signals> {
    let layout = model.layout();
    let unknown = |key: &str, name: &str| {
        let names: Vec<&str> = layout.inputs.iter().map(|v| v.name.as_str()).collect();
        let names = if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        };
        anyhow::anyhow!(
            "{}: {key}: the model has no input \"{name}\"; its inputs: {names}",
            path.display()
        )
    };
    let profile = config
        .inputs
        .profile
        .as_deref()
        .and_then(plants::profile)
        .unwrap_or_default();
    let mut signals =
        signals_by_name(layout, profile.iter().copied()).map_err(|name| unknown("inputs.profile", name))?;
    let points = config
        .inputs
        .points
        .iter()
        .map(|(name, points)| (name.as_str(), points.as_slice()));
    let overrides = signals_by_name(layout, points).map_err(|name| unknown(&format!("inputs.points.{name}"), name))?;
    signals.retain(|(i, _)| !overrides.iter().any(|(j, _)| i == j));
    signals.extend(overrides);
    Ok(signals)
}

/// The recording plan and the CSV file it writes, from the configuration.
fn recording(path: &Path, prepared: &Prepared) -> anyhow::Result<Option<(RecordPlan, CsvRecorder<BufWriter<File>>)>> {
    let Some(record) = &prepared.config.record else {
        return Ok(None);
    };
    let outputs = &prepared.model.layout().outputs;
    let signals: Vec<usize> = match &record.signals {
        None => (0..outputs.len()).collect(),
        Some(names) => names
            .iter()
            .map(|name| {
                outputs.iter().position(|v| &v.name == name).with_context(|| {
                    let all: Vec<&str> = outputs.iter().map(|v| v.name.as_str()).collect();
                    format!(
                        "{}: record.signals: the model has no output \"{name}\"; its outputs: {}",
                        path.display(),
                        all.join(", ")
                    )
                })
            })
            .collect::<anyhow::Result<_>>()?,
    };
    let header: Vec<String> = signals.iter().map(|&i| outputs[i].name.clone()).collect();
    let csv = CsvRecorder::create(&record.file, &header)
        .with_context(|| format!("cannot create the recording {}", record.file.display()))?;
    let plan = RecordPlan {
        signals,
        decimation: record.decimation as u64,
    };
    Ok(Some((plan, csv)))
}

/// The virtual clock's costs from the configuration.
pub fn virtual_costs(config: &RunConfig) -> VirtualCosts {
    let v = &config.virtual_clock;
    let pairs = |list: &[(f64, f64)]| list.iter().map(|&(a, b)| (nanos(a), nanos(b))).collect();
    VirtualCosts {
        fast_step: nanos(v.fast_cost),
        implicit_step: nanos(v.implicit_cost),
        wake_latency: nanos(v.wake_latency),
        implicit_delays: pairs(&v.implicit_delays),
        fast_overruns: pairs(&v.fast_overruns),
    }
}

/// Writes what the recording ring holds to the CSV file.
fn drain(rows: &mut Option<RowReceiver>, csv: &mut Option<CsvRecorder<BufWriter<File>>>, written: &mut usize) {
    if let (Some(rows), Some(csv)) = (rows.as_mut(), csv.as_mut()) {
        match rows.drain(csv) {
            Ok(n) => *written += n,
            Err(e) => eprintln!("warning: recording: {e}"),
        }
    }
}

/// Where a run's received frames come from.
pub enum Traffic {
    /// The buses' transports on the real clock; none on the virtual clock.
    Live,
    /// A recorded log, fed at its recorded times.
    Replay(crate::replay::LogFeed),
}

/// `tandem run` (and `tandem ecu`).
pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    session(args, Traffic::Live)
}

/// A run's I/O: its buses, their queues and threads, its bus log.
struct Io {
    buses: Vec<Bus>,
    fault: Arc<Fault>,
    queues: Vec<SampleSender>,
    rows: Option<RowReceiver>,
    log: Option<(Sender<LogRecord>, JoinHandle<std::io::Result<u64>>)>,
}

impl Io {
    fn links(&self) -> Vec<&BusLink> {
        self.buses.iter().map(|b| &b.link).collect()
    }

    /// The fault raised by a receive timeout, as an error naming the message.
    fn fault_message(&self) -> Option<String> {
        let (bus, message) = self.fault.get()?;
        let b = &self.buses[bus];
        let rx = &b.link.map.rx[message];
        Some(format!(
            "bus {}: message {} not received for {} s (timeout policy `fault`); check the sender, or use on_timeout = \"hold\" or \"default\"",
            b.config.name,
            rx.message.name,
            rx.timeout.unwrap_or(0.0)
        ))
    }
}

/// Builds the buses and the inputs that read them (over the profile).
fn io_and_inputs(
    path: &Path,
    prepared: &Prepared,
    virtual_clock: bool,
) -> anyhow::Result<(Io, Box<dyn InputSource>, Option<RowSender>)> {
    let settings = &prepared.config.settings;
    let log = match &prepared.config.bus_log {
        Some(file) => Some(spawn_log_writer(file, if virtual_clock { 0 } else { wall_ns() })?),
        None => None,
    };
    let buses = compile(
        path,
        &prepared.config.buses,
        prepared.model.as_ref(),
        settings.frame,
        log.as_ref().map(|(tx, _)| tx),
    )?;
    let profile: Box<dyn InputSource> = Box::new(Profile::new(prepared.inputs.clone()));
    let fault = Arc::new(Fault::default());
    if buses.is_empty() {
        let io = Io {
            buses,
            fault,
            queues: Vec::new(),
            rows: None,
            log,
        };
        return Ok((io, profile, None));
    }
    let layout = prepared.model.layout();
    let defaults = layout.inputs.iter().map(|v| v.default).collect();
    let mut inputs = BusInputs::new(profile, defaults, Arc::clone(&fault));
    let mut queues = Vec::new();
    for bus in &buses {
        let (sender, queue) = sample_queue(SAMPLE_QUEUE);
        inputs.add_bus(&bus.link.map, queue, Arc::clone(&bus.link.metrics));
        queues.push(sender);
    }
    let (outputs, rows) = if buses.iter().any(|b| !b.link.map.tx.is_empty()) {
        let (tx, rx) = row_ring((0..layout.outputs.len()).collect(), 1, OUTPUT_RING);
        (Some(tx), Some(rx))
    } else {
        (None, None)
    };
    let io = Io {
        buses,
        fault,
        queues,
        rows,
        log,
    };
    Ok((io, Box::new(inputs), outputs))
}

/// Samples in flight from one bus's receive thread to the fast thread.
const SAMPLE_QUEUE: usize = 1 << 14;
/// Output rows in flight from the fast thread to the transmit thread.
const OUTPUT_RING: usize = 256;

/// A run of the configuration in `args`, its frames received from `traffic`.
pub fn session(args: &RunArgs, traffic: Traffic) -> anyhow::Result<()> {
    let mut prepared = prepare(&args.config, args.duration)?;
    if let Some(log) = &args.bus_log {
        prepared.config.bus_log = Some(log.clone());
    }
    let settings = prepared.config.settings;
    let implicit = settings.policy != Policy::Explicit;
    let virtual_clock = args.virtual_clock;
    let clock = if virtual_clock { "virtual clock" } else { "real clock" };
    println!(
        "{}: {} frames of {} s ({} s), policy {}, {} + {}, {clock}",
        prepared.name,
        settings.frames(),
        settings.frame,
        settings.duration,
        settings.policy,
        settings.fast.method,
        if implicit {
            settings.implicit.solver.to_string()
        } else {
            "no implicit thread".into()
        },
    );
    let mut preflight_report = None;
    if !virtual_clock {
        let report = preflight(&settings, implicit);
        println!("preflight:\n{report}");
        if args.require_rt && !report.hard_real_time() {
            let missing: Vec<&str> = report.missing().map(|c| c.name).collect();
            bail!(
                "--require-rt: missing {}; fix them or run without --require-rt (soft real time)",
                missing.join(", ")
            );
        }
        if !report.hard_real_time() {
            println!("warning: soft real time (desktop mode): deadlines are not guaranteed");
        }
        preflight_report = Some(report);
    }
    let (plan, mut csv) = match recording(&args.config, &prepared)? {
        Some((plan, csv)) => (Some(plan), Some(csv)),
        None => (None, None),
    };
    let (mut io, inputs, outputs) = io_and_inputs(&args.config, &prepared, virtual_clock)?;
    let Tandem {
        mut fast,
        mut implicit,
        metrics,
        mut recording,
    } = assemble(&settings, prepared.model.as_ref(), inputs, plan, outputs)?;

    let mut live = LiveStats::new(&metrics);
    let mut written = 0;
    let started = Instant::now();
    let mut stopped_by = None;
    let frame_ns = nanos(settings.frame);
    let failure = if virtual_clock {
        let costs = virtual_costs(&prepared.config);
        let every = args
            .stats
            .map(|d| (d.as_secs_f64() / settings.frame).round().max(1.0) as u64);
        let links: Vec<(BusLink, Option<Box<dyn CanSender>>)> =
            io.buses.iter().map(|b| (b.link.clone(), None)).collect();
        let frame = settings.frame;
        let origin = match &traffic {
            Traffic::Replay(feed) => feed.start_ns(),
            Traffic::Live => 0,
        };
        // Frame k's outputs go out at the boundary of frame k + 1.
        let mut encoder = TxEncoder::new(links, frame, Box::new(move |t| origin + nanos(t + frame)));
        let mut feed = match traffic {
            Traffic::Replay(feed) => Some(feed),
            Traffic::Live => None,
        };
        if let Some(feed) = feed.as_mut() {
            feed.until(0.0, &io.buses, &mut io.queues)?;
        }
        let mut feed_error = None;
        let result = run_virtual(
            &mut fast,
            implicit.as_mut(),
            settings.frames(),
            frame_ns,
            &costs,
            &mut |k| {
                if let Some(rows) = io.rows.as_mut() {
                    let _ = rows.drain(&mut encoder);
                }
                if let Some(feed) = feed.as_mut() {
                    if let Err(e) = feed.until((k + 1) as f64 * frame, &io.buses, &mut io.queues) {
                        feed_error = Some(e);
                        return ControlFlow::Break(());
                    }
                }
                if k % 1024 == 1023 {
                    drain(&mut recording, &mut csv, &mut written);
                }
                if every.is_some_and(|e| (k + 1) % e == 0) {
                    println!("{}{}", live.line((k + 1) as f64 * frame), bus_report::live(&io.links()));
                }
                if let Some(m) = io.fault_message() {
                    stopped_by = Some(m);
                    return ControlFlow::Break(());
                }
                ControlFlow::Continue(())
            },
        );
        if let Some(e) = feed_error {
            return Err(e);
        }
        result.err()
    } else {
        let control = Arc::new(RunControl::new());
        // Below the fast thread, above the implicit one.
        let io_priority = settings.fast.placement.priority.saturating_sub(1).max(1);
        let mut threads = Vec::new();
        let mut senders: Vec<(BusLink, Option<Box<dyn CanSender>>)> = Vec::new();
        match traffic {
            Traffic::Live => {
                for (bus, queue) in io.buses.iter().zip(io.queues.drain(..)) {
                    let duplex = open(&bus.config)?;
                    threads.push(spawn_receiver(
                        bus.link.clone(),
                        duplex.rx,
                        queue,
                        Arc::clone(&control),
                        io_priority,
                    )?);
                    senders.push((bus.link.clone(), Some(duplex.tx)));
                }
            }
            Traffic::Replay(feed) => {
                let links: Vec<BusLink> = io.buses.iter().map(|b| b.link.clone()).collect();
                let queues = io.queues.drain(..).collect();
                threads.push(feed.spawn_player(links, queues, Arc::clone(&control), io_priority)?);
                senders = io.buses.iter().map(|b| (b.link.clone(), None)).collect();
            }
        }
        if let Some(rows) = io.rows.take() {
            let encoder = TxEncoder::new(senders, settings.frame, Box::new(|_| wall_ns()));
            threads.push(spawn_transmitter(
                encoder,
                rows,
                frame_ns,
                Arc::clone(&control),
                io_priority,
            )?);
        }
        let mut ecu = match &prepared.config.ecu {
            Some(ecu) => Some(crate::ecu::spawn(&ecu.config, settings.duration)?),
            None => None,
        };
        let poll = args
            .stats
            .unwrap_or(Duration::from_secs(1))
            .min(Duration::from_millis(100));
        let mut last_print = Instant::now();
        let outcome = run_realtime(&settings, fast, implicit, Arc::clone(&control), poll, &mut |finished| {
            drain(&mut recording, &mut csv, &mut written);
            if stopped_by.is_none() {
                if let Some(m) = io.fault_message() {
                    stopped_by = Some(m);
                    control.request_stop();
                }
            }
            if let Some(interval) = args.stats {
                if !finished && last_print.elapsed() >= interval {
                    last_print = Instant::now();
                    println!(
                        "{}{}",
                        live.line(started.elapsed().as_secs_f64()),
                        bus_report::live(&io.links())
                    );
                }
            }
        });
        control.request_stop();
        for t in threads {
            let _ = t.join();
        }
        if let Some(ecu) = ecu.as_mut() {
            ecu.finish();
        }
        let mut notes = Vec::new();
        for (thread, setup) in [
            ("fast", Some(&outcome.fast_setup)),
            ("implicit", outcome.implicit_setup.as_ref()),
        ] {
            if let Some(setup) = setup {
                for e in [setup.pinned.clone(), setup.fifo.clone().map(|r| r.map(|p| p as usize))]
                    .into_iter()
                    .flatten()
                    .filter_map(Result::err)
                {
                    notes.push(format!("{thread} thread: {e}"));
                }
            }
        }
        for n in notes {
            println!("warning: {n}");
        }
        fast = outcome.fast;
        implicit = outcome.implicit;
        outcome.failure
    };
    drain(&mut recording, &mut csv, &mut written);
    if let Some(csv) = csv.as_mut() {
        csv.finish()?;
    }
    let summary = Summary {
        name: &prepared.name,
        settings: &settings,
        virtual_clock,
        metrics: &metrics,
        wall: started.elapsed(),
        preflight: preflight_report.as_ref(),
        recording: prepared
            .config
            .record
            .as_ref()
            .map(|r| (r.file.as_path(), written, fast.recorder().map_or(0, |r| r.dropped()))),
        dropped_records: fast.dropped_records(),
        failure: failure.as_ref(),
    };
    print!("{}", summary.table());
    let links = io.links();
    print!("{}", bus_report::table(&links));
    let bus_json = bus_report::json(&links);
    drop(links);
    // The log writer ends when every sender is gone: the buses' and its own.
    drop(std::mem::take(&mut io.buses));
    if let Some((sender, writer)) = io.log.take() {
        drop(sender);
        let records = writer
            .join()
            .map_err(|_| anyhow::anyhow!("the bus log writer panicked"))?
            .context("writing the bus log")?;
        if let Some(file) = &prepared.config.bus_log {
            println!("bus log: {records} frames written to {}", file.display());
        }
    }
    if let Some(path) = &args.stats_json {
        let mut json = summary.json();
        json["buses"] = bus_json;
        std::fs::write(path, serde_json::to_string_pretty(&json)? + "\n")
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("statistics written to {}", path.display());
    }
    let _ = implicit;
    if let Some(m) = stopped_by {
        bail!("the run stopped: {m}");
    }
    match failure {
        Some(e) => bail!("the run stopped: {e}"),
        None => Ok(()),
    }
}
