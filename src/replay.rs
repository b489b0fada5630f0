//! `tandem replay LOG --config CFG.toml [--speed 1|max]`: a recorded
//! log (candump, ASC, BLF or MF4) fed to a model through the same receive path as live
//! frames, at the recorded times on absolute deadlines (`--speed 1`), or as
//! fast as possible on the virtual clock (`--speed max`, bit-identical
//! from run to run). Each of the log's channels goes to the bus of its
//! name, to the only bus, or to the bus `--channel LOG=BUS` names. The
//! model's transmitted frames (with the replayed ones) go to a new log,
//! and its outputs to a CSV file.

use std::path::PathBuf;

use anyhow::bail;
use clap::Args;
use tandem_models::reference::file_stem;
use tandem_session::replay::LogFeed;
use tandem_session::{bind, ClockMode, Options, Session};

use crate::out::say;
use crate::run::{conclude, load, parse_interval, session_error, PrintLive};

/// Arguments of `tandem replay`.
#[derive(Args)]
pub struct ReplayArgs {
    /// The recorded log: candump (`(seconds) interface id#data`), or ASC,
    /// BLF or MF4 by its extension.
    pub log: PathBuf,
    /// The run configuration: the model, and its buses' DBC mapping.
    #[arg(long)]
    pub config: PathBuf,
    /// 1: in real time, at the recorded times; max: as fast as possible on
    /// the virtual clock.
    #[arg(long, default_value = "max")]
    pub speed: Speed,
    /// Replay only this many seconds (default: the whole log).
    #[arg(long)]
    pub duration: Option<f64>,
    /// The new log: replayed and transmitted frames (default: LOG's name
    /// with `-replay`, in the results folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print live statistics at this interval (e.g. 1s).
    #[arg(long, value_parser = parse_interval)]
    pub stats: Option<std::time::Duration>,
    /// The folder for the outputs.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Allow a recording of more than 1e9 values (rows × columns).
    #[arg(long)]
    pub large_output: bool,
    /// Feed the log's channel LOG (a candump interface name, an ASC, BLF or
    /// MF4 channel number) to the configuration's bus BUS; repeatable. By
    /// default a channel goes to the bus of its name, or to the only bus.
    #[arg(long = "channel", value_name = "LOG=BUS", value_parser = parse_channel)]
    pub channels: Vec<(String, String)>,
}

/// `LOG=BUS` of `--channel`.
fn parse_channel(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((log, bus)) if !log.is_empty() && !bus.is_empty() => Ok((log.to_owned(), bus.to_owned())),
        _ => Err(format!(
            "{text:?} is not LOG=BUS (a channel of the log, a bus of the configuration), e.g. 1=can0"
        )),
    }
}

/// How fast a log is replayed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Speed {
    /// At the recorded times.
    #[value(name = "1")]
    RealTime,
    /// As fast as possible, on the virtual clock.
    Max,
}

/// `tandem replay`.
pub fn run(args: &ReplayArgs) -> anyhow::Result<()> {
    let out = std::path::absolute(match &args.out {
        Some(out) => out.clone(),
        None => args.results.join(format!("{}-replay.log", file_stem(&args.log))),
    })?;
    if out == std::path::absolute(&args.log)? {
        bail!(
            "--out: {} is the log being replayed; choose another file",
            out.display()
        );
    }
    let clock = match args.speed {
        Speed::Max => ClockMode::Virtual,
        Speed::RealTime => ClockMode::Real,
    };
    let mut feed = LogFeed::open(&args.log)?;
    for (channel, bus) in &args.channels {
        feed.assign(channel, bus)?;
    }
    let log_length = feed.duration();
    let mut config = load(&args.config, args.duration)?;
    if args.duration.is_none() {
        // The whole log: the last frame starts at or after its last record.
        config.settings.duration = feed.run_length(config.settings.frame);
    }
    let options = Options {
        bus_log: Some(out.clone()),
        replay: Some(feed),
        live_interval: args.stats,
        large_output: args.large_output,
        ..Options::new(clock, &args.results)
    };
    let plan = bind(config)?;
    let session = Session::new(plan, options).map_err(|e| session_error(&args.config, e))?;
    say!(
        "replaying {} ({:.3} s of traffic) at speed {}, into {}",
        args.log.display(),
        log_length,
        if args.speed == Speed::Max { "max" } else { "1" },
        out.display()
    );
    let report = session.run(&mut PrintLive)?;
    conclude(&report, None)
}
