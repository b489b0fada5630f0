//! `tandem-bench`: Tandem's speed, accuracy and timing figures, printed
//! beside their goals (never asserted; the tests assert behaviour).
//!
//! ```text
//! cargo run --release -p tandem-bench -- [blocks|examples|stiff|accuracy|jitter|rate|io|parallel|soak|cosim|fmi|serve|dcp|events|scale|xcp]
//! ```
//!
//! `jitter`, `rate` (cyclictest) and `stiff` (CVODE) compare against tools
//! that `bench/install-tools.sh` installs, `fmi` against FMPy (`pip install
//! fmpy`); the benchmarks install nothing.

mod beside;
mod cosim;
mod dcp;
mod e2e;
mod events;
mod fmi;
mod io;
mod median;
mod parallel;
mod realtime;
mod scale;
mod serve;
mod soak;
mod speed;
mod stiff;
mod storm;
mod xcp;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use tandem_session::ClockMode;

/// Which figures to measure.
#[derive(Clone, Copy, ValueEnum)]
enum Which {
    /// Blocks and examples.
    All,
    /// Block evaluations per second on a generated 10 000-block diagram.
    Blocks,
    /// Steps per second on the shipped examples.
    Examples,
    /// Tandem's BDF against SUNDIALS CVODE on stiff test problems (builds
    /// a C harness; needs libsundials-dev).
    Stiff,
    /// The EV plant at a 1 ms frame under explicit, correct and select,
    /// against the BDF at rtol 1e-10 (virtual clock unless --real-clock).
    Accuracy,
    /// Wake-up latency of cyclictest and Tandem's loop at 1 and 10 kHz.
    Jitter,
    /// Deadline misses of the EV plant under `correct` at 1 to 50 kHz.
    Rate,
    /// The runtime's share of receive → step → send in the CAN closed
    /// loop, and the replay speed of a one-hour log.
    Io,
    /// The part of the implicit thread's work a helper core could take.
    Parallel,
    /// A configuration (the EV example by default) for --seconds on the
    /// real clock (or --virtual-clock; at --frame): memory, counters and
    /// late frames every --interval.
    Soak,
    /// Jacobi co-simulation of two equal sub-models on two threads
    /// against one.
    Cosim,
    /// FMI call costs, the bouncing ball as an FMU against a diagram, and
    /// a Co-Simulation FMU stepped by Tandem against FMPy (builds the test
    /// FMUs with cc).
    Fmi,
    /// `tandem serve`: a 1e6-row simulation with and without a streaming
    /// client, and the EV plant's wake-up latency with and without a
    /// dashboard (--seconds per run).
    Serve,
    /// DCP between two network namespaces: lock-step steps per second
    /// against a UDP ping-pong, and data age in soft real time at 1 kHz
    /// (needs root; runs the tandem binary built beside it).
    Dcp,
    /// Plants with events (the bouncing ball, the throttle body) on the
    /// real clock at 1 and 10 kHz: a frame's cost with and without an
    /// event, and the impacts against their closed form.
    Events,
    /// The largest stiff plant (the thermal ladder, sparse factors) that
    /// runs in real time at 1 and 10 kHz (--seconds per size).
    Scale,
    /// The run's XCP slave: DAQ of 100 signals at 1 kHz and 20 at 10 kHz
    /// against the same runs without, and calibrations' delay (--seconds
    /// per run).
    Xcp,
}

/// Tandem's benchmarks.
#[derive(Parser)]
#[command(version, about)]
struct Args {
    /// What to measure.
    #[arg(value_enum, default_value = "all")]
    which: Which,
    /// Seconds to spend on each measurement.
    #[arg(long, default_value_t = 2.0)]
    seconds: f64,
    /// Runs per case of `stiff` (the median wall time is shown).
    #[arg(long, default_value_t = 21)]
    repeats: usize,
    /// `accuracy`: run on the real clock instead of the virtual one.
    #[arg(long)]
    real_clock: bool,
    /// `soak`: run on the virtual clock instead of the real one.
    #[arg(long)]
    virtual_clock: bool,
    /// `soak`: the frame (s), instead of the configuration's.
    #[arg(long)]
    frame: Option<f64>,
    /// `jitter`: wake-ups per measurement.
    #[arg(long, default_value_t = 20_000)]
    loops: u64,
    /// `soak`: the run configuration.
    #[arg(long, default_value = "config/examples/ev.toml")]
    config: std::path::PathBuf,
    /// `soak`: seconds between two samples of memory and counters.
    #[arg(long, default_value_t = 60.0)]
    interval: f64,
    /// `soak`: a stall storm: the run in a process of its own, stopped
    /// (SIGSTOP) for MIN to MAX milliseconds, e.g. `20..100`, every
    /// --stall-every seconds, and compared with the undisturbed run.
    #[arg(long, value_parser = parse_stalls)]
    stalls: Option<(Duration, Duration)>,
    /// `soak --stalls`: seconds between two stalls.
    #[arg(long, default_value_t = 10.0)]
    stall_every: f64,
}

/// `MIN..MAX` milliseconds.
fn parse_stalls(text: &str) -> Result<(Duration, Duration), String> {
    let (min, max) = text
        .split_once("..")
        .ok_or_else(|| format!("write the stalls' length as MIN..MAX milliseconds, e.g. 20..100, not {text:?}"))?;
    let ms = |v: &str| -> Result<Duration, String> {
        let ms: f64 = v
            .trim()
            .parse()
            .map_err(|_| format!("{v:?} is not a number of milliseconds"))?;
        if !(ms > 0.0 && ms <= 10_000.0) {
            return Err(format!("a stall lasts more than 0 and at most 10000 ms, found {ms}"));
        }
        Ok(Duration::from_secs_f64(ms * 1e-3))
    };
    let (min, max) = (ms(min)?, ms(max)?);
    if min > max {
        return Err(format!(
            "the shortest stall ({min:?}) is longer than the longest ({max:?})"
        ));
    }
    Ok((min, max))
}

fn run(args: &Args) -> anyhow::Result<()> {
    let budget = Duration::from_secs_f64(args.seconds);
    match args.which {
        Which::All => {
            speed::blocks(budget)?;
            speed::examples(budget)
        }
        Which::Blocks => speed::blocks(budget),
        Which::Examples => speed::examples(budget),
        Which::Stiff => stiff::run(args.repeats),
        Which::Accuracy => realtime::accuracy(args.real_clock),
        Which::Jitter => realtime::jitter(args.loops),
        Which::Rate => realtime::rate(args.seconds),
        Which::Io => io::run(args.seconds).and_then(|()| e2e::run()),
        Which::Parallel => parallel::run(),
        Which::Soak => {
            let clock = match args.virtual_clock {
                true => ClockMode::Virtual,
                false => ClockMode::Real,
            };
            let interval = Duration::from_secs_f64(args.interval);
            match args.stalls {
                Some(stalls) => storm::run(&storm::Storm {
                    config: &args.config,
                    seconds: args.seconds,
                    interval,
                    stalls,
                    every: Duration::from_secs_f64(args.stall_every),
                }),
                None => soak::run(&args.config, args.seconds, interval, clock, args.frame),
            }
        }
        Which::Cosim => cosim::run(args.seconds),
        Which::Fmi => fmi::run(args.seconds),
        Which::Serve => serve::run(args.seconds),
        Which::Dcp => dcp::run(args.seconds),
        Which::Events => events::run(args.seconds),
        Which::Scale => scale::run(args.seconds),
        Which::Xcp => xcp::run(args.seconds),
    }
}

fn main() -> ExitCode {
    // The helper the `fmi` benchmark's out-of-process FMUs run in.
    if std::env::args().nth(1).as_deref() == Some(tandem_fmi::isolate::HOST_ARGUMENT) {
        return ExitCode::from(tandem_fmi::isolate::serve() as u8);
    }
    match run(&Args::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
