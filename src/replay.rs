//! `tandem replay LOG --config CFG.toml [--speed 1|max]`: a recorded
//! candump log fed to a model through the same receive path as live
//! frames, at the recorded times on absolute deadlines (`--speed 1`), or as
//! fast as possible on the virtual clock (`--speed max`, bit-identical
//! from run to run). The model's transmitted frames (with the replayed
//! ones) go to a new log, and its outputs to a CSV file.

use std::fs::File;
use std::io::{self, BufReader};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use anyhow::{bail, Context};
use clap::Args;
use tandem_io::bus_inputs::SampleSender;
use tandem_io::bus_threads::{prioritize, BusLink};
use tandem_io::log::{CandumpReader, Direction, LogRecord};
use tandem_runtime::tandem::clock::{Clock, MonotonicClock};
use tandem_runtime::tandem::control::RunControl;

use crate::buses::Bus;
use crate::run::{session, RunArgs, Traffic};

/// Arguments of `tandem replay`.
#[derive(Args)]
pub struct ReplayArgs {
    /// The recorded log (candump format: `(seconds) interface id#data`).
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
    /// with `-replay`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print live statistics at this interval (e.g. 1s).
    #[arg(long, value_parser = crate::run::parse_interval)]
    pub stats: Option<std::time::Duration>,
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

/// A recorded log being fed to a run, record by record.
pub struct LogFeed {
    reader: CandumpReader<BufReader<File>>,
    next: Option<LogRecord>,
    start_ns: i64,
    /// The log's duration (s): its last record's time from its first.
    duration: f64,
}

impl LogFeed {
    /// Opens `path` and reads its first record; scans it once for its
    /// duration (and reports its first malformed line).
    pub fn open(path: &Path) -> anyhow::Result<Self> {
        let name = path.display().to_string();
        let file = || File::open(path).with_context(|| format!("cannot open the log {name}"));
        let mut first = None;
        let mut last = 0;
        for record in CandumpReader::new(BufReader::new(file()?), &name) {
            let record = record?;
            first.get_or_insert(record.time_ns);
            last = record.time_ns;
        }
        let Some(start_ns) = first else {
            bail!("{name}: the log has no frames");
        };
        let mut reader = CandumpReader::new(BufReader::new(file()?), &name);
        let next = reader.next().transpose()?;
        Ok(LogFeed {
            reader,
            next,
            start_ns,
            duration: (last - start_ns) as f64 * 1e-9,
        })
    }

    /// The time of the log's first record (ns), the run's time 0.
    pub fn start_ns(&self) -> i64 {
        self.start_ns
    }

    /// The log's duration (s).
    pub fn duration(&self) -> f64 {
        self.duration
    }

    /// The bus a record goes to: the bus of its interface's name, or the
    /// only bus.
    fn bus_of(record: &LogRecord, buses: &[BusLink]) -> Option<usize> {
        buses
            .iter()
            .position(|b| *b.name == *record.interface)
            .or((buses.len() == 1).then_some(0))
    }

    /// Feeds every record up to run time `t` (s) to its bus.
    pub fn until(&mut self, t: f64, buses: &[Bus], queues: &mut [SampleSender]) -> anyhow::Result<()> {
        let links: Vec<BusLink> = buses.iter().map(|b| b.link.clone()).collect();
        while let Some(record) = self.next.take() {
            let time = (record.time_ns - self.start_ns) as f64 * 1e-9;
            if time > t + 1e-12 {
                self.next = Some(record);
                break;
            }
            if let Some(b) = Self::bus_of(&record, &links) {
                links[b].receive(&record.frame, time, &mut queues[b]);
                links[b].log(record.time_ns, &record.frame, Direction::Rx);
            }
            self.next = self.reader.next().transpose()?;
        }
        Ok(())
    }

    /// Starts a thread that hands each record to its bus at its recorded
    /// time after the run's origin (absolute deadlines: no drift).
    pub fn spawn_player(
        mut self,
        links: Vec<BusLink>,
        mut queues: Vec<SampleSender>,
        control: Arc<RunControl>,
        priority: u8,
    ) -> io::Result<JoinHandle<()>> {
        thread::Builder::new().name("tandem-replay".into()).spawn(move || {
            prioritize(priority);
            let Some(origin) = control.wait_for_origin() else {
                return;
            };
            let mut clock = MonotonicClock::with_origin(origin);
            let mut late_ns = 0;
            while let Some(record) = self.next.take() {
                if control.stop_requested() {
                    return;
                }
                let due = record.time_ns - self.start_ns;
                clock.sleep_until(due);
                let now = clock.now();
                late_ns = now - due;
                if let Some(b) = Self::bus_of(&record, &links) {
                    links[b].receive(&record.frame, now as f64 * 1e-9, &mut queues[b]);
                    links[b].log(record.time_ns, &record.frame, Direction::Rx);
                }
                match self.reader.next().transpose() {
                    Ok(next) => self.next = next,
                    Err(e) => {
                        eprintln!("replay: {e}; the rest of the log is skipped");
                        return;
                    }
                }
            }
            println!(
                "replay: the last frame, due at {:.6} s, was fed {:.1} µs late",
                self.duration,
                late_ns as f64 / 1e3
            );
        })
    }
}

/// `tandem replay`.
pub fn run(args: &ReplayArgs) -> anyhow::Result<()> {
    let feed = LogFeed::open(&args.log)?;
    let out = args.out.clone().unwrap_or_else(|| {
        let stem = crate::sim::stem(&args.log);
        args.log.with_file_name(format!("{stem}-replay.log"))
    });
    if out == args.log {
        bail!(
            "--out: {} is the log being replayed; choose another file",
            out.display()
        );
    }
    let frame_margin = 1e-3;
    let duration = args.duration.unwrap_or(feed.duration() + frame_margin);
    println!(
        "replaying {} ({:.3} s of traffic) at speed {}, into {}",
        args.log.display(),
        feed.duration(),
        if args.speed == Speed::Max { "max" } else { "1" },
        out.display()
    );
    let run_args = RunArgs {
        config: args.config.clone(),
        duration: Some(duration),
        virtual_clock: args.speed == Speed::Max,
        stats: args.stats,
        stats_json: None,
        require_rt: false,
        bus_log: Some(out),
    };
    session(&run_args, Traffic::Replay(feed))
}
