//! A recorded bus log (candump, ASC, BLF or MF4) fed to a run through the same receive path as
//! live frames: inline before each frame on the virtual clock (as fast as
//! possible, bit-identical from run to run), or by a player thread at the
//! recorded times on absolute deadlines.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use tandem_can::CanFrame;
use tandem_config::bounds::MAX_DURATION;
use tandem_log::{LogError, LogReader};
use tandem_runtime::tandem::clock::{nanos, Clock, MonotonicClock};
use tandem_runtime::tandem::control::RunControl;

use crate::bus::BusFeed;
use crate::device::{prioritize, IoPlacement};

/// A log that cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file cannot be opened.
    #[error("cannot open the log {file}: {cause}")]
    Open {
        /// The file.
        file: String,
        /// What the system said.
        cause: std::io::Error,
    },
    /// A part of the log is not a frame.
    #[error(transparent)]
    Line(#[from] LogError),
    /// The log holds no frame.
    #[error("{0}: the log has no frames")]
    Empty(String),
    /// A channel assigned to a bus is not in the log.
    #[error("--channel {channel}: the log {file} has no channel {channel}; its channels are {channels}")]
    UnknownChannel {
        /// The log.
        file: String,
        /// The channel asked for.
        channel: String,
        /// The log's channels, comma-separated.
        channels: String,
    },
    /// A channel is assigned to a bus the configuration does not have.
    #[error("--channel {channel}={bus}: the configuration has no bus {bus}; its buses are {buses}")]
    UnknownBus {
        /// The channel.
        channel: String,
        /// The bus asked for.
        bus: String,
        /// The configuration's buses, comma-separated.
        buses: String,
    },
}

/// Nanoseconds in seconds.
fn seconds(ns: i64) -> f64 {
    ns as f64 * 1e-9
}

/// Moves the samples waiting for room in every feed into its queue.
fn flush_all(feeds: &mut [Option<BusFeed>]) {
    for feed in feeds.iter_mut().flatten() {
        feed.flush();
    }
}

/// Opens the log at `path`.
fn open_file(path: &Path) -> Result<File, ReplayError> {
    File::open(path).map_err(|cause| ReplayError::Open {
        file: path.display().to_string(),
        cause,
    })
}

/// The next record of the log, routed to a bus.
#[derive(Clone, Copy, Debug)]
struct Next {
    time_ns: i64,
    /// Index of the bus in the run, or none when no bus has its interface.
    bus: Option<usize>,
    frame: CanFrame,
}

/// A recorded log being fed to a run, record by record.
pub struct LogFeed {
    file: String,
    reader: LogReader,
    /// The log's channels (interface names), in the order they appear.
    channels: Vec<String>,
    /// Channels assigned to buses by name: (channel, bus).
    assigned: Vec<(String, String)>,
    /// The bus of each channel, by its index in `channels`.
    routes: Vec<Option<usize>>,
    next: Option<Next>,
    start_ns: i64,
    /// The log's duration (ns): its last record's time from its first.
    duration_ns: i64,
    /// Records whose interface no bus has (with more than one bus).
    unrouted: u64,
}

impl LogFeed {
    /// Opens `path` and scans it once for its duration, its channels and
    /// its first malformed line.
    pub fn open(path: &Path) -> Result<Self, ReplayError> {
        let name = path.display().to_string();
        let mut scan = LogReader::new(open_file(path)?, path)?;
        let mut first = None;
        let mut last = 0;
        let mut channels: Vec<String> = Vec::new();
        while let Some(entry) = scan.next_entry() {
            let entry = entry?;
            if !channels.iter().any(|c| c == entry.interface) {
                channels.push(entry.interface.to_owned());
            }
            let time_ns = entry.time_ns;
            let start_ns = *first.get_or_insert(time_ns);
            if time_ns < last {
                return Err(scan
                    .error(format!(
                        "this frame's time ({:.6} s) is earlier than the one before ({:.6} s); a replayed log \
                         must be in time order: sort it by time (e.g. sort -n)",
                        seconds(time_ns),
                        seconds(last)
                    ))
                    .into());
            }
            if seconds(time_ns - start_ns) > MAX_DURATION {
                return Err(scan
                    .error(format!(
                        "this frame comes {:.6} s after the log's first, more than the longest run \
                         ({MAX_DURATION} s); cut the log there",
                        seconds(time_ns - start_ns)
                    ))
                    .into());
            }
            last = time_ns;
        }
        let Some(start_ns) = first else {
            return Err(ReplayError::Empty(name));
        };
        Ok(LogFeed {
            file: name,
            reader: LogReader::new(open_file(path)?, path)?,
            channels,
            assigned: Vec::new(),
            routes: Vec::new(),
            next: None,
            start_ns,
            duration_ns: last - start_ns,
            unrouted: 0,
        })
    }

    /// The log's channels (interface names; channel numbers in ASC, BLF
    /// and MF4 logs), in the order they first appear.
    pub fn channels(&self) -> &[String] {
        &self.channels
    }

    /// Sends the records of the log's `channel` to the bus named `bus`
    /// (checked by [`LogFeed::route`]); an error when the log has no such
    /// channel.
    pub fn assign(&mut self, channel: &str, bus: &str) -> Result<(), ReplayError> {
        if !self.channels.iter().any(|c| c == channel) {
            return Err(ReplayError::UnknownChannel {
                file: self.file.clone(),
                channel: channel.to_owned(),
                channels: self.channels.join(", "),
            });
        }
        self.assigned.push((channel.to_owned(), bus.to_owned()));
        Ok(())
    }

    /// Routes the records to buses named `buses` (a record goes to the bus
    /// assigned to its channel, else to the bus of its channel's name,
    /// else to the only bus) and reads the first.
    pub fn route(&mut self, buses: Vec<String>) -> Result<(), ReplayError> {
        let by_name = |name: &str| buses.iter().position(|b| b == name);
        let mut routes = Vec::with_capacity(self.channels.len());
        for channel in &self.channels {
            let route = match self.assigned.iter().rev().find(|(c, _)| c == channel) {
                Some((_, bus)) => Some(by_name(bus).ok_or_else(|| ReplayError::UnknownBus {
                    channel: channel.clone(),
                    bus: bus.clone(),
                    buses: buses.join(", "),
                })?),
                None => by_name(channel).or((buses.len() == 1).then_some(0)),
            };
            routes.push(route);
        }
        self.routes = routes;
        Ok(self.advance()?)
    }

    /// Reads the next record into `self.next`.
    fn advance(&mut self) -> Result<(), LogError> {
        self.next = match self.reader.next_entry().transpose()? {
            None => None,
            Some(entry) => {
                let bus = (self.channels.iter())
                    .position(|c| c == entry.interface)
                    .and_then(|i| self.routes.get(i).copied().flatten());
                Some(Next {
                    time_ns: entry.time_ns,
                    bus,
                    frame: entry.frame,
                })
            }
        };
        Ok(())
    }

    /// The time of the log's first record (ns), the run's time 0.
    pub fn start_ns(&self) -> i64 {
        self.start_ns
    }

    /// The log's duration (s).
    pub fn duration(&self) -> f64 {
        seconds(self.duration_ns)
    }

    /// The run length (s) in frames of `frame` seconds whose last frame
    /// starts at or after the log's last record, so that every record
    /// reaches the model (counted in whole nanoseconds, as the records).
    pub fn run_length(&self, frame: f64) -> f64 {
        let frame_ns = nanos(frame).max(1);
        let frames = (self.duration_ns + frame_ns - 1) / frame_ns + 1;
        frames as f64 * frame
    }

    /// Records skipped because no bus has their channel.
    pub fn unrouted(&self) -> u64 {
        self.unrouted
    }

    /// Hands `next` to its bus's feed at run time `time`.
    fn deliver(&mut self, next: Next, time: f64, feeds: &mut [Option<BusFeed>]) {
        match next.bus.and_then(|b| feeds.get_mut(b)).and_then(Option::as_mut) {
            Some(feed) => feed.receive(&next.frame, time, next.time_ns),
            None => self.unrouted += 1,
        }
    }

    /// Feeds every record up to run time `t` (s) to its bus.
    pub fn until(&mut self, t: f64, feeds: &mut [Option<BusFeed>]) -> Result<(), LogError> {
        let t_ns = nanos(t);
        while let Some(next) = self.next {
            let time_ns = next.time_ns - self.start_ns;
            if time_ns > t_ns {
                break;
            }
            self.deliver(next, seconds(time_ns), feeds);
            self.advance()?;
        }
        // Samples that waited for room go in now, before the frame reads them.
        flush_all(feeds);
        Ok(())
    }

    /// Starts a thread that hands each record to its bus at its recorded
    /// time after the run's origin (absolute deadlines: no drift). It
    /// returns the feed, with how late (µs) the last record was fed, or
    /// the first malformed line.
    pub fn spawn_player(
        mut self,
        mut feeds: Vec<Option<BusFeed>>,
        control: Arc<RunControl>,
        io: IoPlacement,
    ) -> std::io::Result<JoinHandle<Result<(LogFeed, f64), LogError>>> {
        thread::Builder::new().name("tandem-replay".into()).spawn(move || {
            prioritize(io);
            let Some(origin) = control.wait_for_origin() else {
                return Ok((self, 0.0));
            };
            let mut clock = MonotonicClock::with_origin(origin);
            let mut late_ns = 0;
            while let Some(next) = self.next {
                if control.stop_requested() {
                    break;
                }
                let due = next.time_ns - self.start_ns;
                flush_all(&mut feeds);
                clock.sleep_until(due);
                let now = clock.now();
                late_ns = now - due;
                self.deliver(next, seconds(now), &mut feeds);
                self.advance()?;
            }
            flush_all(&mut feeds);
            Ok((self, late_ns as f64 / 1e3))
        })
    }
}
