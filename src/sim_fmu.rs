//! `tandem sim X.fmu`: an FMU run offline as the FMI standard describes a
//! simulation, by Model Exchange (Tandem's solvers and event location) or
//! Co-Simulation (the FMU's own steps): from the default experiment's
//! start time to the stop time (a last, shorter step ending on it), any
//! variable recorded (`--signals`), start values set (`--set`), inputs
//! read from a CSV file (`--input`), and the FMU's own end of the
//! simulation (`terminateSimulation`, Discard with `fmi2Terminated`) a
//! normal end.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use tandem_config::bounds::check_output_size;
use tandem_config::{fixed_step, Overrides};
use tandem_fmi::{Fmu, FmuModel, FmuSlave, Host, InterfaceKind, Parameters, Recorded, StepEnd, Value};
use tandem_models::reference::file_stem;
use tandem_models::Model;
use tandem_runtime::record::{Both, Recorder, Trace};
use tandem_runtime::{FixedStep, Simulation};

use crate::out::say;
use crate::progress::{human, Progress};
use crate::sim::{csv_file, SimArgs};

/// The FMU options of `tandem sim`.
#[derive(clap::Args)]
pub struct FmuArgs {
    /// The variables to record, by name or glob (`*`, `?`), or the words
    /// outputs, states, derivatives, inputs, parameters, locals; comma
    /// separated or repeated (default: the FMU's outputs).
    #[arg(long, value_delimiter = ',')]
    signals: Vec<String>,
    /// A start value, `NAME=VALUE`, for a parameter, an input, or a state
    /// or output with initial="exact" or "approx" (Booleans true/false,
    /// Binary values in hexadecimal); repeated for more.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
    /// Inputs over time from a CSV file: a first column `time`, then one
    /// column per input by name (the FMI cross-check's `_in.csv`, FMPy's
    /// `input=`); continuous inputs interpolated linearly, discrete ones
    /// held from the row at or before the time.
    #[arg(long)]
    input: Option<PathBuf>,
    /// The interface to run: me (Model Exchange) or cs (Co-Simulation)
    /// (default: Model Exchange when the FMU has it).
    #[arg(long, value_parser = ["me", "cs"])]
    interface: Option<String>,
    /// Start time in seconds (default: the FMU's default experiment's, else 0).
    #[arg(long)]
    start: Option<f64>,
}

/// Runs `tandem sim` on an FMU.
pub fn run(args: &SimArgs, fmu_args: &FmuArgs) -> anyhow::Result<()> {
    let path = &args.model;
    let host = args
        .isolate
        .then(Host::this_program)
        .transpose()
        .context("cannot find this program to run the FMU out of process")?;
    let fmu = match host {
        Some(host) => Fmu::open_isolated(path, host),
        None => Fmu::open(path),
    }
    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let description = fmu.description();
    let experiment = description.default_experiment;
    let parameters = parameters(&fmu_args.set)?;
    let recorded = Recorded::patterns(fmu_args.signals.iter().cloned());
    let start = fmu_args.start.or(experiment.start).unwrap_or(0.0);
    let interface = match fmu_args.interface.as_deref() {
        Some("cs") => InterfaceKind::CoSimulation,
        Some(_) => InterfaceKind::ModelExchange,
        None if description.model_exchange.is_some() => InterfaceKind::ModelExchange,
        None => InterfaceKind::CoSimulation,
    };
    // The settings as for any model, over the run's length from the start.
    let mut simulation = tandem_fmi::simulation_def(&experiment);
    simulation.stop = experiment.stop.map(|stop| stop - start);
    let overrides = Overrides {
        stop: args.solver.overrides().stop.map(|stop| stop - start),
        ..args.solver.overrides()
    };
    let settings = fixed_step(&simulation, &overrides).with_context(|| path.display().to_string())?;
    let inputs = match &fmu_args.input {
        Some(file) => Some(InputTable::read(file)?),
        None => None,
    };
    let run = FmuRun {
        args,
        path,
        fmu: &fmu,
        parameters,
        recorded,
        start,
        settings,
        inputs,
    };
    match interface {
        InterfaceKind::ModelExchange => run.model_exchange(),
        InterfaceKind::CoSimulation => run.co_simulation(),
    }
}

/// What both interfaces' runs of `tandem sim` on an FMU share.
struct FmuRun<'a> {
    args: &'a SimArgs,
    path: &'a Path,
    fmu: &'a Fmu,
    parameters: Parameters,
    recorded: Recorded,
    start: f64,
    settings: FixedStep,
    inputs: Option<InputTable>,
}

impl FmuRun<'_> {
    /// The error of a call into the FMU, named by its file.
    fn failed(&self, e: tandem_fmi::FmuError) -> anyhow::Error {
        anyhow::anyhow!("{}: {e}", self.path.display())
    }

    /// Integrates the FMU's Model Exchange interface with Tandem's solver.
    fn model_exchange(&self) -> anyhow::Result<()> {
        let (args, path, fmu, start, settings) = (self.args, self.path, self.fmu, self.start, self.settings);
        let (parameters, recorded, inputs) = (&self.parameters, &self.recorded, &self.inputs);
        let failed = |e| self.failed(e);
        let mut progress = Progress::new();
        let mut model = FmuModel::with(fmu, parameters, recorded, start).map_err(failed)?;
        let layout = model.layout().clone();
        let names: Vec<String> = layout.outputs.iter().map(|v| v.name.clone()).collect();
        let rows = (settings.stop / settings.step).ceil() + 2.0;
        check_output_size(rows, names.len() + 1, args.output.large_output)
            .with_context(|| path.display().to_string())?;
        let columns = inputs
            .as_ref()
            .map(|table| table.columns(&layout.inputs.iter().map(|v| v.name.as_str()).collect::<Vec<_>>()))
            .transpose()?;
        let (out, mut csv) = csv_file(&args.output, path, &names)?;
        let mut trace = Trace::default();
        let mut sim = Simulation::new(&mut model, settings)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
            .with_events(args.event_settings()?);
        let result = {
            let mut both;
            let inner: &mut dyn Recorder = if args.output.plot.is_some() {
                both = Both(&mut csv, &mut trace);
                &mut both
            } else {
                &mut csv
            };
            let mut shifted = Shifted { start, inner };
            match (&inputs, &columns) {
                (Some(table), Some(columns)) => {
                    let discrete = vec![false; columns.len()];
                    sim.run_driven(&mut shifted, &mut |f| progress.update(f), &mut |t, u| {
                        table.sample(start + t, columns, &discrete, u)
                    })
                }
                _ => sim.run(&mut shifted, &mut |f| progress.update(f)),
            }
        };
        progress.finish();
        let summary = result.map_err(|e| {
            anyhow::anyhow!(
                "{}: {e} (the rows before this are in {})",
                path.display(),
                out.display()
            )
        })?;
        plot(args, path, &trace, &layout.outputs, start)?;
        let end = summary.finished.map_or(String::new(), |t| {
            format!("; the FMU ended the simulation at t = {} s", start + t)
        });
        say!(
            "{}: Model Exchange, {} steps of {} (step {} s) from t = {start} s in {} ({} events){end}; wrote {}",
            file_stem(path),
            summary.steps,
            settings.solver,
            settings.step,
            human(summary.wall),
            summary.events,
            out.display()
        );
        Ok(())
    }

    /// Steps the FMU's Co-Simulation interface to the stop time, the last
    /// step shortened to it where the FMU allows.
    fn co_simulation(&self) -> anyhow::Result<()> {
        let (args, path, fmu, start, settings) = (self.args, self.path, self.fmu, self.start, self.settings);
        let (parameters, recorded, inputs) = (&self.parameters, &self.recorded, &self.inputs);
        let description = fmu.description();
        let failed = |e| self.failed(e);
        let mut progress = Progress::new();
        let stop = start + settings.stop;
        let mut slave = FmuSlave::with(fmu, parameters, recorded, start, Some(stop)).map_err(failed)?;
        let names: Vec<String> = slave.output_variables().iter().map(|v| v.name.clone()).collect();
        let input_names: Vec<String> = slave.input_variables().iter().map(|v| v.name.clone()).collect();
        let rows = (settings.stop / settings.step).ceil() + 2.0;
        check_output_size(rows, names.len() + 1, args.output.large_output)
            .with_context(|| path.display().to_string())?;
        let columns = inputs
            .as_ref()
            .map(|table| table.columns(&input_names.iter().map(String::as_str).collect::<Vec<_>>()))
            .transpose()?;
        let discrete: Vec<bool> = slave
            .input_variables()
            .iter()
            .map(|v| {
                let base = v.name.split('[').next().unwrap_or(&v.name);
                description
                    .variable(base)
                    .is_some_and(|d| d.variability != tandem_fmi::Variability::Continuous)
            })
            .collect();
        let (out, mut csv) = csv_file(&args.output, path, &names)?;
        let mut trace = Trace::default();
        let mut u: Vec<f64> = slave.input_variables().iter().map(|v| v.default).collect();
        let mut y = vec![0.0; names.len()];
        let wall = std::time::Instant::now();
        let step = settings.step;
        let whole = (settings.stop / step * (1.0 + 1e-12)).floor() as u64;
        let mut n = 0u64;
        let mut t = start;
        let mut ended = None;
        let record = |t: f64, y: &[f64], csv: &mut dyn Recorder, trace: &mut Trace| -> anyhow::Result<()> {
            csv.record(t, y)?;
            if args.output.plot.is_some() {
                trace.record(t, y)?;
            }
            Ok(())
        };
        loop {
            if let (Some(table), Some(columns)) = (&inputs, &columns) {
                table.sample(t, columns, &discrete, &mut u);
                slave.set_inputs(&u).map_err(failed)?;
            }
            slave.outputs(&mut y).map_err(failed)?;
            record(t, &y, &mut csv, &mut trace)?;
            if ended.is_some() {
                break;
            }
            let next = if n < whole { start + (n + 1) as f64 * step } else { stop };
            let h = next - t;
            if h <= 1e-12 * stop.abs().max(1.0) {
                break;
            }
            if n >= whole && !slave.can_vary_step() {
                say!(
                    "{}: the FMU cannot take the shorter last step to t = {stop} s \
                 (canHandleVariableCommunicationStepSize is false): the run ends at t = {t} s",
                    file_stem(path)
                );
                break;
            }
            match slave.do_step(t, h).map_err(|e| {
                anyhow::anyhow!(
                    "{}: {e} (the rows before this are in {})",
                    path.display(),
                    out.display()
                )
            })? {
                StepEnd::Done => t = next,
                StepEnd::Terminated(at) => {
                    t = at;
                    ended = Some(at);
                }
            }
            n += 1;
            if n.is_multiple_of((whole / 100).max(1)) {
                progress.update(n as f64 / whole.max(1) as f64);
            }
        }
        csv.finish()?;
        progress.finish();
        plot(args, path, &trace, slave.output_variables(), 0.0)?;
        let end = ended.map_or(String::new(), |t| {
            format!("; the FMU ended the simulation at t = {t} s")
        });
        say!(
        "{}: Co-Simulation, {n} communication steps of {step} s from t = {start} s to t = {t} s in {}{end}; wrote {}",
        file_stem(path),
        human(wall.elapsed()),
        out.display()
    );
        Ok(())
    }
}

/// Draws the recorded signals when `--plot` asks.
fn plot(
    args: &SimArgs,
    path: &Path,
    trace: &Trace,
    outputs: &[tandem_models::Variable],
    start: f64,
) -> anyhow::Result<()> {
    let Some(plot) = &args.output.plot else {
        return Ok(());
    };
    let mut shifted = trace.clone();
    for t in &mut shifted.time {
        *t += start;
    }
    crate::plot::write(plot, file_stem(path), &shifted, outputs)
        .with_context(|| format!("cannot draw {}", plot.display()))
}

/// The `--set NAME=VALUE` options as values by name.
fn parameters(set: &[String]) -> anyhow::Result<Parameters> {
    let mut parameters = Parameters::new();
    for item in set {
        let Some((name, value)) = item.split_once('=') else {
            bail!("--set {item}: write NAME=VALUE, e.g. --set k=2.5 or --set on=true");
        };
        parameters.set(name.trim(), Value::parse(value.trim()));
    }
    Ok(parameters)
}

/// A recorder writing times shifted by the run's start time (Tandem's
/// runs start at 0).
struct Shifted<'a> {
    start: f64,
    inner: &'a mut dyn Recorder,
}

impl Recorder for Shifted<'_> {
    fn record(&mut self, t: f64, y: &[f64]) -> std::io::Result<()> {
        self.inner.record(self.start + t, y)
    }
    fn finish(&mut self) -> std::io::Result<()> {
        self.inner.finish()
    }
}

/// An input CSV file: a header `time,NAME,...`, rows of numbers (`true` and
/// `false` as 1 and 0) in time order.
struct InputTable {
    file: PathBuf,
    names: Vec<String>,
    times: Vec<f64>,
    rows: Vec<Vec<f64>>,
}

impl InputTable {
    fn read(file: &Path) -> anyhow::Result<InputTable> {
        let text = std::fs::read_to_string(file).with_context(|| format!("cannot read {}", file.display()))?;
        let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
        let Some((_, header)) = lines.next() else {
            bail!(
                "{}: empty; the first line names the columns: time,INPUT,...",
                file.display()
            );
        };
        let names: Vec<String> = header
            .split(',')
            .map(|n| n.trim().trim_matches('"').to_string())
            .collect();
        if names.first().map(String::as_str) != Some("time") {
            bail!(
                "{}:1: the first column is \"{}\", not \"time\"",
                file.display(),
                names[0]
            );
        }
        let (mut times, mut rows) = (Vec::new(), Vec::new());
        for (i, line) in lines {
            let mut values = Vec::with_capacity(names.len());
            for (j, cell) in line.split(',').enumerate() {
                let cell = cell.trim();
                let value = match cell {
                    "true" => 1.0,
                    "false" => 0.0,
                    _ => cell.parse::<f64>().map_err(|_| {
                        anyhow::anyhow!(
                            "{}:{}: column \"{}\": \"{cell}\" is not a number",
                            file.display(),
                            i + 1,
                            names.get(j).map_or("?", String::as_str)
                        )
                    })?,
                };
                values.push(value);
            }
            if values.len() != names.len() {
                bail!(
                    "{}:{}: {} values, the header names {}",
                    file.display(),
                    i + 1,
                    values.len(),
                    names.len()
                );
            }
            if times.last().is_some_and(|&last| values[0] < last) {
                bail!(
                    "{}:{}: time {} goes back; order the rows by time",
                    file.display(),
                    i + 1,
                    values[0]
                );
            }
            times.push(values[0]);
            rows.push(values[1..].to_vec());
        }
        if times.is_empty() {
            bail!("{}: no rows after the header", file.display());
        }
        Ok(InputTable {
            file: file.to_path_buf(),
            names: names[1..].to_vec(),
            times,
            rows,
        })
    }

    /// For each input of `inputs`, its column in the table, if it has one.
    fn columns(&self, inputs: &[&str]) -> anyhow::Result<Vec<Option<usize>>> {
        for name in &self.names {
            if !inputs.contains(&name.as_str()) {
                bail!(
                    "{}: column \"{name}\" is no input of the FMU (its inputs: {})",
                    self.file.display(),
                    if inputs.is_empty() {
                        "none".to_string()
                    } else {
                        inputs.join(", ")
                    }
                );
            }
        }
        Ok(inputs.iter().map(|i| self.names.iter().position(|n| n == i)).collect())
    }

    /// Writes the inputs at time `t` into `u` (those without a column keep
    /// theirs): linear between rows for continuous ones, the row at or
    /// before `t` for discrete ones (at a time with two rows, the later);
    /// before the first row the first, after the last the last.
    fn sample(&self, t: f64, columns: &[Option<usize>], discrete: &[bool], u: &mut [f64]) {
        let after = self.times.partition_point(|&time| time <= t);
        for (k, column) in columns.iter().enumerate() {
            let Some(c) = *column else {
                continue;
            };
            u[k] = if after == 0 {
                self.rows[0][c]
            } else if after == self.times.len() || discrete.get(k).copied().unwrap_or(false) {
                self.rows[after - 1][c]
            } else {
                let (t0, t1) = (self.times[after - 1], self.times[after]);
                let (v0, v1) = (self.rows[after - 1][c], self.rows[after][c]);
                if t1 > t0 {
                    v0 + (v1 - v0) * (t - t0) / (t1 - t0)
                } else {
                    v1
                }
            };
        }
    }
}
