//! `tandem sim`: run a model offline, write CSV, optionally plot.

use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use anyhow::Context;
use clap::Args;
use tandem_config::bounds::check_output_size;
use tandem_config::{fixed_step, Overrides};
use tandem_fmi::{FmuSetup, Host, Use};
use tandem_models::diagram::SimulationDef;
use tandem_models::reference::file_stem;
use tandem_models::{interpreted, Model, ModelRef, PrepareDiagram};
use tandem_runtime::record::{Both, CsvRecorder, Recorder, Trace};
use tandem_runtime::{ChatterPolicy, EventSettings, SimError, Simulation, Solver, Summary};
use tandem_session::offline::sim_error_message;

use crate::out::say;
use crate::progress::{human, Progress};

/// Arguments of `tandem sim`.
#[derive(Args)]
pub struct SimArgs {
    /// The model: a JSON block diagram, an FMU (.fmu, FMI 2.0 or 3.0, Model
    /// Exchange or Co-Simulation), or the name of a built-in model (rober,
    /// hires, vdpol, vdpolm, orego, e5, pollu, ev).
    pub model: PathBuf,
    #[command(flatten)]
    pub solver: SolverArgs,
    #[command(flatten)]
    pub output: OutputArgs,
    #[command(flatten)]
    fmu: crate::sim_fmu::FmuArgs,
    /// Locate zero crossings in time (on), or let modes switch only at
    /// grid steps (off: step-granular, as the CBD paper's simulator).
    #[arg(long, value_enum, default_value = "on")]
    events: Switch,
    /// Width of a located event's final bracket, relative to max(1, t).
    #[arg(long, default_value_t = 1e-12)]
    event_tolerance: f64,
    /// What chattering does: stop with a diagnostic, or disable event
    /// location for the block that chatters and go on.
    #[arg(long, default_value = "stop")]
    chatter: ChatterPolicy,
    /// Consecutive events (each within 1e-9 s relative of the one before)
    /// that count as chattering.
    #[arg(long, default_value_t = 1000)]
    max_consecutive_events: u32,
    /// Also record the outputs just before and after every event (two rows
    /// with the same time).
    #[arg(long)]
    record_events: bool,
    /// Run the FMU's code in a process of its own (this program run again
    /// as its helper), for FMUs not trusted to keep tandem alive: a crash
    /// in it then ends the run with an error naming the FMU, the FMI call
    /// and the signal. Each FMI call becomes a round trip between the two
    /// processes (tens of microseconds).
    #[arg(long)]
    pub isolate: bool,
    /// Threads that difference the BDF's Jacobian beside the main one, each
    /// with its own copy of the model (models whose derivatives depend on
    /// the state alone: the built-in plants, diagrams without zero
    /// crossings or algebraic loops; others use one thread). The Jacobian
    /// is the same bit for bit.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..=64))]
    helpers: u16,
    /// Evaluate a block diagram with the interpreter instead of compiling
    /// it to machine code (the results are the same bit for bit).
    #[arg(long)]
    interpret: bool,
}

/// The solver settings the command line gives over the model's own.
#[derive(Args)]
pub struct SolverArgs {
    /// Integration method: euler, heun or rk4 (fixed step, explicit), or bdf
    /// (variable step and order, implicit, for stiff models) (default: the
    /// model's, else rk4).
    #[arg(long)]
    solver: Option<String>,
    /// Fixed step in seconds; for bdf the output interval, which is also
    /// its largest step (default: the model's, else 0.001).
    #[arg(long)]
    step: Option<f64>,
    /// Relative tolerance of bdf (default: the model's, else 1e-6).
    #[arg(long)]
    rtol: Option<f64>,
    /// Absolute tolerance of bdf (default: the model's, else 1e-8).
    #[arg(long)]
    atol: Option<f64>,
    /// Stop time in seconds (default: the model's, else 10).
    #[arg(long)]
    stop: Option<f64>,
}

impl SolverArgs {
    /// The settings given, to lay over the model's.
    pub fn overrides(&self) -> Overrides {
        Overrides {
            solver: self.solver.clone(),
            step: self.step,
            stop: self.stop,
            rtol: self.rtol,
            atol: self.atol,
        }
    }
}

/// Where an offline run writes its results.
#[derive(Args)]
pub struct OutputArgs {
    /// CSV file for the outputs (default: the model's or system's file name
    /// with .csv, in the results folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The folder for the outputs when --out is not given.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Also draw every output against time into this .svg or .png file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// Allow a CSV file of more than 1e9 values (rows × columns).
    #[arg(long)]
    pub large_output: bool,
}

/// On or off.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Switch {
    On,
    Off,
}

impl SimArgs {
    /// The event settings the arguments ask for.
    pub fn event_settings(&self) -> anyhow::Result<EventSettings> {
        EventSettings::with_options(
            self.events == Switch::On,
            self.event_tolerance,
            self.max_consecutive_events,
            self.chatter,
            self.record_events,
        )
        .map_err(|e| anyhow::anyhow!("--{} {e}", e.option().replace('_', "-")))
    }
}

/// Runs `tandem sim`.
pub fn run(args: &SimArgs) -> anyhow::Result<()> {
    if tandem_fmi::is_fmu(&args.model) {
        return crate::sim_fmu::run(args, &args.fmu);
    }
    let (mut model, simulation, title) = load(&args.model, args.isolate, args.interpret)?;
    let overrides = args.solver.overrides();
    let settings = fixed_step(&simulation, &overrides).with_context(|| args.model.display().to_string())?;
    if let Some(plot) = &args.output.plot {
        crate::plot::check_path(plot)?;
    }
    let layout = model.layout().clone();
    let names: Vec<String> = layout.outputs.iter().map(|v| v.name.clone()).collect();
    let rows = (settings.stop / settings.step).ceil() + 1.0;
    check_output_size(rows, names.len() + 1, args.output.large_output)
        .with_context(|| args.model.display().to_string())?;
    let (out, mut csv) = csv_file(&args.output, &args.model, &names)?;
    let mut trace = Trace::default();
    let events = args.event_settings()?;
    let mut sim = Simulation::new(model.as_mut(), settings)
        .map_err(|e| located(&args.model, e))?
        .with_events(events);
    let helpers = sim
        .spread_jacobian(usize::from(args.helpers))
        .map_err(|e| located(&args.model, e))?;
    if args.helpers > 0 {
        say!(
            "Jacobian differenced on {} thread(s){}",
            1 + helpers,
            if helpers < usize::from(args.helpers) {
                " (the model's derivatives depend on more than its state, or it has fewer column groups, or the solver is not bdf)"
            } else {
                ""
            }
        );
    }
    let mut progress = Progress::new();
    let result = if args.output.plot.is_some() {
        sim.run(&mut Both(&mut csv, &mut trace), &mut |f| progress.update(f))
    } else {
        sim.run(&mut csv, &mut |f| progress.update(f))
    };
    progress.finish();
    let summary = match result {
        Ok(summary) => summary,
        Err(e) => {
            csv.finish().ok();
            return Err(anyhow::Error::new(e).context(format!(
                "{} (the rows before this are in {})",
                args.model.display(),
                out.display()
            )));
        }
    };
    if let Some(plot) = &args.output.plot {
        crate::plot::write(plot, &title, &trace, &layout.outputs)
            .with_context(|| format!("cannot draw {}", plot.display()))?;
    }
    let mut events = format!("{} events", summary.events);
    if summary.shortened > 0 {
        events += &format!(", {} steps shortened to stay finite", summary.shortened);
    }
    if !summary.disabled.is_empty() {
        events += &format!(
            ", events no longer located for chattering block(s) {}",
            summary.disabled.join(", ")
        );
    }
    let steps = match settings.solver {
        Solver::Explicit(_) => "steps",
        Solver::Bdf { .. } => "output steps",
    };
    say!(
        "{}: {} {steps} of {} (step {} s) to t = {} s in {} ({:.3e} steps/s, {} evaluations, {events}); wrote {}{}",
        file_stem(&args.model),
        summary.steps,
        settings.solver,
        settings.step,
        summary.steps as f64 * settings.step,
        human(summary.wall),
        summary.steps as f64 / summary.wall.as_secs_f64().max(1e-9),
        summary.evaluations,
        out.display(),
        args.output
            .plot
            .as_ref()
            .map(|p| format!(" and {}", p.display()))
            .unwrap_or_default()
    );
    print_bdf_statistics(&summary);
    Ok(())
}

/// The BDF's counters, in CVODE's names, and its restarts.
fn print_bdf_statistics(summary: &Summary) {
    if let Some(stats) = &summary.bdf {
        say!("BDF statistics: {stats}, restarts {}", summary.restarts);
    }
}

/// A model file, or a built-in model by name, with its settings and a
/// title for plots.
fn load(model: &Path, isolate: bool, interpret: bool) -> anyhow::Result<(Box<dyn Model>, SimulationDef, String)> {
    let reference = ModelRef::parse(&model.to_string_lossy(), Path::new(""));
    let host = isolate
        .then(Host::this_program)
        .transpose()
        .context("cannot find this program to run the FMU out of process")?;
    let prepare: PrepareDiagram<'_> = if interpret { &interpreted } else { &tandem_jit::prepare };
    let loaded = tandem_fmi::load_with(&reference, Use::Offline, host.as_ref(), prepare, &FmuSetup::default())?;
    if let Some(evaluation) = &loaded.evaluation {
        say!("{}: {evaluation}", file_stem(model));
    }
    Ok((loaded.model, loaded.simulation, loaded.name))
}

/// `error` headed by the model file, with the line and column of the block
/// it names when it names one.
fn located(model: &Path, error: SimError) -> anyhow::Error {
    let text = std::fs::read_to_string(model).ok();
    anyhow::anyhow!(sim_error_message(&model.display().to_string(), text.as_deref(), &error))
}

/// The CSV file of an offline run: `--out` when given, else the source's
/// name with `.csv` in the results folder (created when missing), with
/// its header written.
pub fn csv_file(
    output: &OutputArgs,
    source: &Path,
    names: &[String],
) -> anyhow::Result<(PathBuf, CsvRecorder<BufWriter<File>>)> {
    let results = &output.results;
    let out = match &output.out {
        Some(out) => out.clone(),
        None => {
            std::fs::create_dir_all(results)
                .with_context(|| format!("cannot create the results folder {}", results.display()))?;
            results.join(format!("{}.csv", file_stem(source)))
        }
    };
    let csv = CsvRecorder::create(&out, names, None).with_context(|| format!("cannot create {}", out.display()))?;
    Ok((out, csv))
}
