//! `tandem-bench fmi`: what importing a model as an FMU costs, on the
//! project's own test FMUs (`fmi/tests/fmus/`, compiled here with `cc -O2`
//! by `fmi/tests/support/fmus.rs`):
//!
//! - the round trip of FMI calls: `FmuModel::outputs` and
//!   `FmuModel::derivatives` on the bouncing ball (Model Exchange, FMI 2),
//!   `FmuSlave::outputs` and `FmuSlave::do_step` on the oscillator
//!   (Co-Simulation, FMI 2), in this process and out of process (this
//!   program is then the helper the FMUs run in);
//! - steps per second of the bouncing ball as an FMU run by Tandem's RK4 at
//!   1 ms, beside the same model as a JSON diagram;
//! - the oscillator stepped by Tandem (`FmuSlave`) and by FMPy's
//!   `FMU2Slave` over the same steps, each timed around its stepping loop
//!   (loading excluded). Skipped, saying why, when FMPy is not importable;
//! - whole processes, loading included: `tandem sim` and FMPy's
//!   `simulate_fmu` on the oscillator as built and packed as modelling
//!   tools export (binaries for other platforms, documentation, sources:
//!   13 MB in 150 more files), Tandem's unpack cache cold and warm.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde_json::{json, Value};
use tandem_fmi::{Fmu, FmuModel, FmuSlave, Host, Parameters};
use tandem_models::{diagram, Model, StateRef};
use tandem_runtime::record::Recorder;
use tandem_runtime::{FixedStep, Method, Simulation};

use crate::beside;
use crate::speed::measure;

#[path = "../../fmi/tests/support/fmus.rs"]
mod fmus;

/// The communication step of the FMPy comparison (s): one internal RK4
/// step of the oscillator (its internal step is at most 1 ms).
const STEP: f64 = 1e-3;
/// The oscillator's input force during the FMPy comparison (N).
const FORCE: f64 = 1.0;
/// How much faster than FMPy Tandem should step the same FMU.
const GOAL: f64 = 10.0;

/// `tandem-bench fmi`.
pub fn run(seconds: f64) -> anyhow::Result<()> {
    if Command::new("cc").arg("--version").output().is_err() {
        bail!("the test FMUs are built from their C sources (fmi/tests/fmus/) and there is no C compiler `cc` on the PATH; install one (e.g. gcc)");
    }
    let dir = tempfile::tempdir().context("a temporary folder for the test FMUs")?;
    let ball = fmus::build("bouncing_ball", dir.path());
    let oscillator = fmus::build("oscillator", dir.path());
    let budget = Duration::from_secs_f64(seconds);
    calls(&ball, &oscillator, budget / 2)?;
    ball_rates(&ball, budget / 2)?;
    against_fmpy(&oscillator, seconds)?;
    whole_processes(&oscillator, dir.path())
}

/// Nanoseconds per call of `f`, called for `budget`.
fn nanoseconds(budget: Duration, f: impl FnMut()) -> f64 {
    let (calls, time) = measure(budget, f);
    time.as_secs_f64() * 1e9 / calls as f64
}

/// The four evaluations timed, ns each: bouncing-ball outputs and
/// derivatives, oscillator outputs and step.
struct Costs {
    outputs: f64,
    derivatives: f64,
    get: f64,
    step: f64,
}

/// The cost of one evaluation through the FMI, each of the four for an
/// eighth of `budget`, in this process and out of process.
fn calls(ball: &Path, oscillator: &Path, budget: Duration) -> anyhow::Result<()> {
    let here = costs(Fmu::open(ball)?, Fmu::open(oscillator)?, budget / 8)?;
    let host = Host::this_program()?;
    let there = costs(
        Fmu::open_isolated(ball, host.clone())?,
        Fmu::open_isolated(oscillator, host)?,
        budget / 8,
    )?;
    println!("fmi: the cost of an evaluation through the FMI (the project's test FMUs, FMI 2, built with cc -O2; ns per evaluation, one core), in this process and out of process (--isolate, fmu.isolate: a round trip to a helper process per call that returns something, setters going with it)");
    let rows = [
        (
            "FmuModel::outputs (bouncing ball)",
            here.outputs,
            there.outputs,
            3,
            "fmi2SetTime, fmi2SetContinuousStates, fmi2GetReal of 2 values",
        ),
        (
            "FmuModel::derivatives",
            here.derivatives,
            there.derivatives,
            3,
            "fmi2SetTime, fmi2SetContinuousStates, fmi2GetDerivatives",
        ),
        (
            "FmuSlave::outputs (oscillator)",
            here.get,
            there.get,
            1,
            "fmi2GetReal of 2 values",
        ),
        (
            "FmuSlave::do_step",
            here.step,
            there.step,
            1,
            "fmi2DoStep of 1 µs, one RK4 step inside the FMU",
        ),
    ];
    for (name, here, there, calls, what) in rows {
        println!(
            "  {name:<34} {here:>9.1} ns  isolated {there:>9.1} ns ({:.0}x; {:.0} FMI calls/s against {:.0})  ({calls} calls: {what})",
            there / here,
            calls as f64 * 1e9 / there,
            calls as f64 * 1e9 / here,
        );
    }
    Ok(())
}

/// The four evaluations on `ball` and `oscillator`, each for `each`.
fn costs(ball: Fmu, oscillator: Fmu, each: Duration) -> anyhow::Result<Costs> {
    let mut model = FmuModel::new(&ball, &Parameters::new())?;
    let (x, mut y, mut dx) = ([1.0, 0.0], [0.0; 2], [0.0; 2]);
    let point = StateRef {
        t: 0.25,
        x: &x,
        xd: &[],
        u: &[],
    };
    let outputs = nanoseconds(each, || model.outputs(point, &mut y));
    let derivatives = nanoseconds(each, || model.derivatives(point, &mut dx));
    if let Some(e) = model.take_error() {
        bail!("the bouncing ball FMU failed: {e}");
    }
    let mut slave = FmuSlave::new(&oscillator, &Parameters::new(), 0.0)?;
    let mut failed = None;
    let get = nanoseconds(each, || {
        if let Err(e) = slave.outputs(&mut y) {
            failed.get_or_insert(e);
        }
    });
    let (mut t, h) = (0.0, 1e-6);
    let step = nanoseconds(each, || {
        if let Err(e) = slave.do_step(t, h) {
            failed.get_or_insert(e);
        }
        t += h;
    });
    if let Some(e) = failed {
        bail!("the oscillator FMU failed: {e}");
    }
    Ok(Costs {
        outputs,
        derivatives,
        get,
        step,
    })
}

/// The bouncing ball of the test FMU (`fmi/tests/fmus/common/ball.h`: g =
/// 9.81, e = 0.7, h(0) = 1, v(0) = 0) as a diagram, built like
/// `models/examples/bouncing_ball.json` (whose ball has e = 0.8, h(0) = 10,
/// v(0) = 15): the impact is the comparison's zero crossing, located, and
/// resets both integrators.
fn ball_diagram() -> Value {
    json!({
        "blocks": [
            {"id": "gravity", "type": "Constant", "params": {"value": -9.81}},
            {"id": "velocity", "type": "Integrator",
             "params": {"initial": 0.0, "reset": "rising", "external_initial": true}},
            {"id": "position", "type": "Integrator",
             "params": {"initial": 1.0, "reset": "rising", "external_initial": true}},
            {"id": "floor", "type": "Constant", "params": {"value": 0.0}},
            {"id": "below_floor", "type": "RelationalOperator", "params": {"operator": "<"}},
            {"id": "restitution", "type": "Gain", "params": {"gain": -0.7}},
            {"id": "h", "type": "Output", "params": {"unit": "m"}},
            {"id": "v", "type": "Output", "params": {"unit": "m/s"}}
        ],
        "links": [
            {"from": "gravity", "to": "velocity.in"},
            {"from": "velocity", "to": ["position.in", "restitution", "v"]},
            {"from": "restitution", "to": "velocity.x0"},
            {"from": "position", "to": ["below_floor.1", "h"]},
            {"from": "floor", "to": ["below_floor.2", "position.x0"]},
            {"from": "below_floor", "to": ["velocity.reset", "position.reset"]}
        ]
    })
}

/// Keeps the last row.
#[derive(Default)]
struct Last(Vec<f64>);

impl Recorder for Last {
    fn record(&mut self, _: f64, y: &[f64]) -> std::io::Result<()> {
        self.0.clear();
        self.0.extend_from_slice(y);
        Ok(())
    }
}

/// What whole runs of a fresh model each gave.
struct Rate {
    steps_per_second: f64,
    evaluations_per_step: f64,
    events: u64,
    last: Vec<f64>,
}

/// Whole runs of a model `make` gives afresh (an FMU instance keeps its
/// state from run to run), repeated for `budget`.
fn rate(
    budget: Duration,
    settings: FixedStep,
    mut make: impl FnMut() -> anyhow::Result<Box<dyn Model>>,
) -> anyhow::Result<Rate> {
    let start = Instant::now();
    let (mut steps, mut evaluations, mut time) = (0u64, 0u64, Duration::ZERO);
    let (mut events, mut last) = (0, Last::default());
    while steps == 0 || start.elapsed() < budget {
        let mut model = make()?;
        let summary = Simulation::new(model.as_mut(), settings)?.run(&mut last, &mut |_| {})?;
        steps += summary.steps;
        evaluations += summary.evaluations;
        time += summary.wall;
        events = summary.events;
    }
    Ok(Rate {
        steps_per_second: steps as f64 / time.as_secs_f64(),
        evaluations_per_step: evaluations as f64 / steps as f64,
        events,
        last: last.0,
    })
}

/// Steps per second of the bouncing ball as an FMU and as a diagram.
fn ball_rates(ball: &Path, budget: Duration) -> anyhow::Result<()> {
    // Before the ball comes to rest (2.56 s), where the diagram's bounces
    // would pile up (Zeno) and the FMU's stop.
    let settings = FixedStep {
        solver: Method::Rk4.into(),
        step: 1e-3,
        stop: 2.0,
    };
    let fmu = Fmu::open(ball)?;
    let as_fmu = rate(budget / 2, settings, || {
        Ok(Box::new(FmuModel::new(&fmu, &Parameters::new())?))
    })?;
    let text = ball_diagram().to_string();
    let as_diagram = rate(budget / 2, settings, || {
        Ok(Box::new(diagram::compile_str(&text)?.model))
    })?;
    println!(
        "bouncing ball (g = 9.81, e = 0.7, h(0) = 1), rk4 at 1 ms to {} s with event location, steps per second:",
        settings.stop
    );
    for (name, r) in [("FMU (FMI 2 ME)", &as_fmu), ("JSON diagram", &as_diagram)] {
        println!(
            "  {name:<16} {:>10.3e} steps/s ({:.1} derivative evaluations per step, {} events located; h, v at the end: {:.9}, {:.9})",
            r.steps_per_second,
            r.evaluations_per_step,
            r.events,
            r.last.first().copied().unwrap_or(f64::NAN),
            r.last.get(1).copied().unwrap_or(f64::NAN),
        );
    }
    println!(
        "  ratio FMU / diagram: {:.2}",
        as_fmu.steps_per_second / as_diagram.steps_per_second
    );
    Ok(())
}

/// FMPy's `FMU2Slave` stepping the FMU at `argv[1]` `argv[2]` times by
/// `argv[3]` seconds with input `F` = `argv[4]` N, calling `fmi2GetReal`
/// for the outputs after each step, `argv[5]` times (a fresh instance
/// each); prints the fastest loop's seconds and the last outputs.
const FMPY_SCRIPT: &str = r#"
import sys, time
from fmpy import read_model_description, extract
from fmpy.fmi2 import FMU2Slave

path, steps, h, force, repeats = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
md = read_model_description(path)
unzipped = extract(path)
refs = {v.name: v.valueReference for v in md.modelVariables}
outputs = [v.valueReference for v in md.modelVariables if v.causality == 'output']
best = float('inf')
for _ in range(repeats):
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.coSimulation.modelIdentifier, instanceName='oscillator')
    fmu.instantiate()
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    fmu.setReal([refs['F']], [force])
    start = time.perf_counter()
    for k in range(steps):
        fmu.doStep(k * h, h)
        y = fmu.getReal(outputs)
    best = min(best, time.perf_counter() - start)
    fmu.terminate()
    fmu.freeInstance()
print(repr(best), *(repr(float(v)) for v in y))
"#;

/// Runs of the stepping loop on each side (the fastest is shown).
const REPEATS: usize = 3;

/// The oscillator stepped by Tandem and by FMPy.
fn against_fmpy(oscillator: &Path, seconds: f64) -> anyhow::Result<()> {
    let steps = ((seconds * 10_000.0).round() as u64).max(1000);
    let fmu = Fmu::open(oscillator)?;
    let mut ours = Duration::MAX;
    let mut y = Vec::new();
    for _ in 0..REPEATS {
        let mut slave = FmuSlave::new(&fmu, &Parameters::new(), 0.0)?;
        slave.set_inputs(&[FORCE])?;
        y = vec![0.0; slave.output_variables().len()];
        let start = Instant::now();
        for k in 0..steps {
            slave.do_step(k as f64 * STEP, STEP)?;
            slave.outputs(&mut y)?;
        }
        ours = ours.min(start.elapsed());
    }
    println!(
        "oscillator (FMI 2 CS) stepped {steps} times by {} ms, fmi2DoStep then fmi2GetReal of its 2 outputs each step (loading excluded, fastest of {REPEATS}):",
        STEP * 1e3
    );
    println!(
        "  Tandem (FmuSlave) {:>9.2} ms ({:.0} ns per step)",
        ours.as_secs_f64() * 1e3,
        ours.as_secs_f64() * 1e9 / steps as f64
    );
    let fmpy_version = Command::new("python3")
        .args(["-c", "import fmpy; print(fmpy.__version__)"])
        .output();
    let version = match fmpy_version {
        Err(e) => {
            println!("  FMPy: skipped, cannot run python3 ({e}); install Python 3 and FMPy (pip install fmpy)");
            return Ok(());
        }
        Ok(out) if !out.status.success() => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let reason = stderr.lines().last().unwrap_or("python3 failed");
            println!("  FMPy: skipped, not importable ({reason}); install it with pip install fmpy");
            return Ok(());
        }
        Ok(out) => String::from_utf8_lossy(&out.stdout).trim().to_string(),
    };
    let path = oscillator.to_str().context("the FMU's path is not UTF-8")?;
    let out = Command::new("python3")
        .args([
            "-c",
            FMPY_SCRIPT,
            path,
            &steps.to_string(),
            &format!("{STEP:?}"),
            &format!("{FORCE:?}"),
            &REPEATS.to_string(),
        ])
        .output()
        .context("cannot run python3")?;
    if !out.status.success() {
        bail!(
            "FMPy failed on {}:\n{}",
            oscillator.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut lines = stdout.lines();
    let fields: Vec<f64> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::parse)
        .collect::<Result<_, _>>()
        .context("FMPy's script prints numbers")?;
    let Some((&theirs, their_y)) = fields.split_first() else {
        bail!("FMPy's script printed nothing");
    };
    let same = their_y.len() == y.len() && their_y.iter().zip(&y).all(|(a, b)| a.to_bits() == b.to_bits());
    println!(
        "  FMPy {version:<12} {:>9.2} ms ({:.0} ns per step)",
        theirs * 1e3,
        theirs * 1e9 / steps as f64
    );
    println!(
        "  Tandem is {:.1}x as fast (goal >= {GOAL}x); last outputs {}",
        theirs / ours.as_secs_f64(),
        if same { "identical, bit for bit" } else { "DIFFERENT" }
    );
    Ok(())
}

/// Entries a packed copy adds to an FMU, and the bytes of each: 150 files,
/// 13.2 MB, as a Dymola export of a 13 MB FMU carries.
const PACKING: (usize, usize) = (150, 88_000);

/// Whole runs of each side, the median shown.
const PROCESS_RUNS: usize = 5;

/// FMPy's `simulate_fmu` on `argv[1]` to 1 s at a 1 ms step, the outputs
/// written to `argv[2]` as CSV: what `fmpy simulate` does.
const FMPY_WHOLE: &str = r#"
import sys
from fmpy import simulate_fmu
from fmpy.util import write_csv
write_csv(sys.argv[2], simulate_fmu(sys.argv[1], stop_time=1.0, step_size=1e-3, output_interval=1e-3))
"#;

/// A copy of `fmu` at `to` with [`PACKING`]'s entries added: other
/// platforms' binaries, documentation and sources, incompressible.
fn packed(fmu: &Path, to: &Path) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut source = zip::ZipArchive::new(std::fs::File::open(fmu)?)?;
    let mut out = zip::ZipWriter::new(std::fs::File::create(to)?);
    for i in 0..source.len() {
        out.raw_copy_file(source.by_index(i)?)?;
    }
    let (files, bytes) = PACKING;
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut data = vec![0u8; bytes];
    for i in 0..files {
        let name = match i % 3 {
            0 => format!("binaries/win64/library{i}.dll"),
            1 => format!("documentation/page{i}.html"),
            _ => format!("sources/part{i}.c"),
        };
        for byte in &mut data {
            // xorshift: bytes deflate cannot shrink, as compiled code's.
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            *byte = state as u8;
        }
        out.start_file(name, zip::write::SimpleFileOptions::default())?;
        out.write_all(&data)?;
    }
    out.finish()?;
    Ok(())
}

/// The median wall time of [`PROCESS_RUNS`] runs of `command` made afresh
/// by `make` (`prepare` runs before each, untimed).
fn median_run(mut make: impl FnMut() -> Command, mut prepare: impl FnMut()) -> anyhow::Result<Duration> {
    let mut times = Vec::with_capacity(PROCESS_RUNS);
    for _ in 0..PROCESS_RUNS {
        prepare();
        let mut command = make();
        let start = Instant::now();
        let out = command.output().context("cannot start a run")?;
        let took = start.elapsed();
        if !out.status.success() {
            bail!("{command:?} failed:\n{}", String::from_utf8_lossy(&out.stderr));
        }
        times.push(took);
    }
    times.sort();
    Ok(times[PROCESS_RUNS / 2])
}

/// `tandem sim` and FMPy's `simulate_fmu`, whole processes, on the
/// oscillator as built and packed; `tandem` is the binary beside this one.
fn whole_processes(oscillator: &Path, dir: &Path) -> anyhow::Result<()> {
    let tandem = beside::tandem()?;
    println!("whole processes: the oscillator (FMI 2 CS) to 1 s at 1 ms, its outputs written as CSV, loading included (median of {PROCESS_RUNS} runs)");
    if !tandem.is_file() {
        println!("  skipped: no {} (cargo build --release builds it)", tandem.display());
        return Ok(());
    }
    let big = dir.join("oscillator_packed.fmu");
    packed(oscillator, &big)?;
    let fmpy = Command::new("python3").args(["-c", "import fmpy"]).output();
    let has_fmpy = fmpy.is_ok_and(|o| o.status.success());
    let cache = dir.join("cache");
    for (name, fmu) in [("as built", oscillator), ("packed (+13 MB in 150 files)", &big)] {
        let size = std::fs::metadata(fmu)?.len() as f64 / 1e6;
        let sim = |cache: &Path| {
            let mut c = Command::new(&tandem);
            c.arg("sim").arg(fmu).args(["--stop", "1", "--step", "1e-3", "--out"]);
            c.arg(dir.join("tandem.csv"))
                .env("TANDEM_FMU_CACHE", cache)
                .current_dir(dir);
            c
        };
        let cold = median_run(|| sim(&cache), || drop(std::fs::remove_dir_all(&cache)))?;
        let warm = median_run(|| sim(&cache), || {})?;
        let theirs = if has_fmpy {
            let run = || {
                let mut c = Command::new("python3");
                c.args(["-c", FMPY_WHOLE]).arg(fmu).arg(dir.join("fmpy.csv"));
                c
            };
            Some(median_run(run, || {})?)
        } else {
            None
        };
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        print!(
            "  {name:<30} {size:>5.1} MB  tandem sim: {:>7.1} ms cache cold, {:>7.1} ms warm",
            ms(cold),
            ms(warm)
        );
        match theirs {
            Some(t) => println!(
                "; FMPy simulate_fmu {:>7.1} ms; FMPy / Tandem warm {:.1}x (goal > 1x)",
                ms(t),
                t.as_secs_f64() / warm.as_secs_f64()
            ),
            None => println!("; FMPy skipped (not importable: pip install fmpy)"),
        }
    }
    Ok(())
}
