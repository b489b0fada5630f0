//! The bus log: every frame of every bus, written to a candump (or Vector
//! ASC, BLF or ASAM MDF4) file by a normal thread. Each thread that logs (a receive thread,
//! the transmitting side, a replay) has its own lock-free ring to the
//! writer, so logging never allocates, locks or blocks a real-time or I/O
//! thread; a full ring drops the record and counts it. On the virtual
//! clock nothing is real-time, so a full ring waits for the writer
//! instead: no record is ever dropped there.

use std::fmt::Write as _;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ringbuf::traits::{Consumer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};
use tandem_can::CanFrame;
use tandem_log::{Direction, Entry};
use tandem_runtime::tandem::metrics::Counter;

use crate::fault::FaultSlots;

/// Nanoseconds since the Unix epoch, for log records of real buses.
pub fn wall_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// One record on its way to the log: a frame, or a fault's mark.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoggedFrame {
    /// When (ns: since the Unix epoch on real buses, on the log's own
    /// origin on the virtual clock).
    pub time_ns: i64,
    /// The bus, as its index in the log's names.
    pub bus: u16,
    /// What is logged.
    pub what: Logged,
}

/// What a log record holds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Logged {
    /// A frame received or sent.
    Frame(CanFrame, Direction),
    /// A fault of the bus beginning or ending.
    Mark(FaultMark),
    /// Slots that passed while the run was stalled.
    Stall(StallMark),
}

/// A fault of a bus beginning or ending, as the bus log marks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultMark {
    /// The fault's slot in its bus's [`FaultSlots`].
    pub slot: u16,
    /// Whether it begins (else it ends).
    pub begins: bool,
}

/// Slots `from..to` that passed while the run did not run (a stall of the
/// process): nothing was sent in them. Marked at the boundary of slot
/// `to`, where sending resumed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StallMark {
    /// The first slot that passed.
    pub from: u64,
    /// The slot sending resumed at.
    pub to: u64,
}

/// Records in flight from one thread to the writer.
const RING: usize = 1 << 14;
/// The writer keeps records this much younger than the newest it has
/// seen, so that records of several threads reach the file in time order.
const HOLD_NS: i64 = 50_000_000;

/// A logging thread's end: one per thread.
pub struct LogProducer {
    ring: HeapProd<(u64, LoggedFrame)>,
    wait_when_full: bool,
    writer_alive: Arc<AtomicBool>,
    /// Numbers every record across producers, in the order they are logged.
    sequence: Arc<AtomicU64>,
}

impl LogProducer {
    /// Logs `record`; when the ring is full, counts it in `dropped` (or,
    /// on the virtual clock, waits for the writer while it lives).
    pub fn log(&mut self, record: LoggedFrame, dropped: &Counter) {
        let mut record = (self.sequence.fetch_add(1, Ordering::Relaxed), record);
        loop {
            match self.ring.try_push(record) {
                Ok(()) => return,
                Err(back) if self.wait_when_full && self.writer_alive.load(Ordering::Acquire) => {
                    record = back;
                    thread::sleep(Duration::from_micros(200));
                }
                Err(_) => {
                    dropped.increment();
                    return;
                }
            }
        }
    }
}

/// Where the producers' rings are gathered before the writer starts.
pub struct LogHub {
    consumers: Vec<HeapCons<(u64, LoggedFrame)>>,
    wait_when_full: bool,
    writer_alive: Arc<AtomicBool>,
    sequence: Arc<AtomicU64>,
}

impl LogHub {
    /// A hub whose producers wait for the writer when their ring is full
    /// (`wait_when_full`: the virtual clock) or drop and count (real time).
    pub fn new(wait_when_full: bool) -> Self {
        LogHub {
            consumers: Vec::new(),
            wait_when_full,
            writer_alive: Arc::new(AtomicBool::new(true)),
            sequence: Arc::new(AtomicU64::new(0)),
        }
    }

    /// A producer for one more logging thread.
    pub fn producer(&mut self) -> LogProducer {
        let (ring, consumer) = HeapRb::new(RING).split();
        self.consumers.push(consumer);
        LogProducer {
            ring,
            wait_when_full: self.wait_when_full,
            writer_alive: Arc::clone(&self.writer_alive),
            sequence: Arc::clone(&self.sequence),
        }
    }

    /// Creates `path` (candump, or ASC, BLF or MF4 by its extension; `start_ns` is its time
    /// origin) and starts the writer; `names` are the buses' names by index,
    /// `faults` their fault slots, whose descriptions the log's fault marks
    /// (comments where the format has them) give.
    pub fn spawn(
        self,
        path: &Path,
        start_ns: i64,
        names: Vec<String>,
        faults: Vec<Option<Arc<FaultSlots>>>,
    ) -> io::Result<BusLogWriter> {
        let mut file = tandem_log::create(path, start_ns)?;
        for name in &names {
            file.declare(name)?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let stopping = Arc::clone(&stop);
        let LogHub {
            mut consumers,
            writer_alive,
            wait_when_full,
            ..
        } = self;
        let alive = Arc::clone(&writer_alive);
        let handle = thread::Builder::new().name("tandem-log".into()).spawn(move || {
            // Room for every ring full at once: no growth while running.
            let mut pending: Vec<(u64, LoggedFrame)> = Vec::with_capacity(RING * consumers.len());
            // A fault mark's text, written in place.
            let mut text = String::with_capacity(1024);
            let mut merged = Vec::with_capacity(pending.capacity());
            let mut runs = Vec::with_capacity(consumers.len() + 2);
            // The virtual clock logs from one thread and never drops: the
            // records go out in the order they were logged, each once all
            // before it have arrived (a producer waits only on a full ring,
            // whose first record is then never the one awaited).
            let mut next = 0u64;
            let mut written = 0u64;
            let mut last_flush = Instant::now();
            let result = (|| -> io::Result<()> {
                loop {
                    let finishing = stopping.load(Ordering::Acquire);
                    let before = pending.len();
                    runs.clear();
                    runs.push(0);
                    for c in &mut consumers {
                        runs.push(pending.len());
                        pending.extend(c.pop_iter());
                    }
                    runs.push(pending.len());
                    let arrived = pending.len() - before;
                    let due = if wait_when_full {
                        order(&mut pending, &runs, &mut merged, |r| r.0);
                        let run = pending.iter().zip(next..).take_while(|(r, n)| r.0 == *n).count();
                        next += run as u64;
                        if finishing {
                            pending.len()
                        } else {
                            run
                        }
                    } else {
                        order(&mut pending, &runs, &mut merged, |r| (r.1.time_ns, r.0));
                        let newest = pending.last().map_or(i64::MIN, |r| r.1.time_ns);
                        if finishing {
                            pending.len()
                        } else {
                            pending.partition_point(|r| r.1.time_ns <= newest.saturating_sub(HOLD_NS))
                        }
                    };
                    for (_, r) in pending.drain(..due) {
                        let bus = names.get(usize::from(r.bus)).map_or("", String::as_str);
                        match r.what {
                            Logged::Mark(mark) => {
                                text.clear();
                                let _ = write!(text, "tandem fault on {bus} ");
                                let _ = write!(text, "{}: ", if mark.begins { "begins" } else { "ends" });
                                if let Some(slots) = faults.get(usize::from(r.bus)).and_then(Option::as_ref) {
                                    slots.with_description(usize::from(mark.slot), |d| text.push_str(d));
                                }
                                file.comment(r.time_ns, &text)?;
                                continue;
                            }
                            Logged::Stall(StallMark { from, to }) => {
                                text.clear();
                                let _ = write!(
                                    text,
                                    "tandem stall on {bus}: slots {from} to {} passed while the run was stopped, \
                                     nothing was sent in them ({} frames); sending resumes here",
                                    to - 1,
                                    to - from
                                );
                                file.comment(r.time_ns, &text)?;
                                continue;
                            }
                            Logged::Frame(frame, direction) => file.write_entry(&Entry {
                                time_ns: r.time_ns,
                                interface: bus,
                                frame,
                                direction,
                            })?,
                        }
                        written += 1;
                    }
                    if finishing {
                        return file.finish();
                    }
                    // Flush when idle, so that a killed run keeps its log.
                    if last_flush.elapsed() >= Duration::from_millis(100) {
                        file.flush()?;
                        last_flush = Instant::now();
                    }
                    // A quarter of a ring or more since the last look: a
                    // producer is fast (a replay) and may be waiting; go on.
                    if arrived < RING / 4 {
                        thread::sleep(Duration::from_millis(if arrived > 0 { 1 } else { 10 }));
                    }
                }
            })();
            alive.store(false, Ordering::Release);
            result.map(|()| written)
        })?;
        Ok(BusLogWriter { handle, stop })
    }
}

/// Orders `records` by `key`. Its parts between consecutive `runs` (what
/// was left, then what each ring brought) are each in order as a rule:
/// they are merged through `merged` (empty, with room for all) then,
/// instead of sorted, which would move every record many times.
fn order<K: Ord>(
    records: &mut Vec<(u64, LoggedFrame)>,
    runs: &[usize],
    merged: &mut Vec<(u64, LoggedFrame)>,
    key: impl Fn(&(u64, LoggedFrame)) -> K,
) {
    let parts = || runs.windows(2).map(|w| &records[w[0]..w[1]]);
    if !parts().all(|part| part.is_sorted_by_key(&key)) {
        // Unstable: a stable sort allocates its buffer.
        records.sort_unstable_by_key(key);
        return;
    }
    if parts().filter(|part| !part.is_empty()).count() <= 1 {
        return;
    }
    let mut heads = [0usize; 8];
    if runs.len() > heads.len() + 1 {
        records.sort_unstable_by_key(key);
        return;
    }
    let ends = &runs[1..];
    heads[..ends.len()].copy_from_slice(&runs[..ends.len()]);
    loop {
        let next = (0..ends.len())
            .filter(|&p| heads[p] < ends[p])
            .min_by_key(|&p| key(&records[heads[p]]));
        let Some(p) = next else { break };
        merged.push(records[heads[p]]);
        heads[p] += 1;
    }
    std::mem::swap(records, merged);
    merged.clear();
}

/// The running log writer.
pub struct BusLogWriter {
    handle: JoinHandle<io::Result<u64>>,
    stop: Arc<AtomicBool>,
}

impl BusLogWriter {
    /// Writes what is left once every producer has stopped, closes the
    /// file and returns how many records it holds.
    pub fn finish(self) -> io::Result<u64> {
        self.stop.store(true, Ordering::Release);
        self.handle
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the bus log writer panicked")))
    }
}
