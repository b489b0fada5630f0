//! Rows shared between the thread that makes them (a simulation, a run's
//! observer) and the WebSockets that stream them, in binary batches.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::ws::{Message, WebSocket};
use futures_util::stream;
use serde_json::{json, Value};
use tandem_runtime::record::{CsvRecorder, Recorder};
use tokio::sync::watch;

/// The most values one binary batch carries.
const BATCH_VALUES: usize = 1 << 16;
/// The most values one piece of a CSV download is written from.
const CSV_VALUES: usize = 1 << 15;

/// Where a table stands.
#[derive(Clone, Debug, Default)]
pub struct Status {
    /// Rows appended so far (the oldest may have been dropped).
    pub rows: u64,
    /// How far the producer is, 0 to 1 (when it knows).
    pub progress: f64,
    /// The last message of the stream, once the producer has ended.
    pub end: Option<Value>,
}

/// Rows kept, the oldest possibly dropped.
struct Kept {
    /// Row-major values.
    values: Vec<f64>,
    /// The number of the first row kept.
    first: u64,
}

/// A growing table of rows: a time column then the outputs.
pub struct Table {
    columns: Vec<String>,
    kept: RwLock<Kept>,
    /// The most values kept (older rows are dropped beyond it).
    keep: usize,
    /// The values it is expected to hold at its end: its rows when
    /// known, else `keep`.
    room: usize,
    /// Whether its rows were dropped to keep the server within its memory
    /// budget.
    dropped: AtomicBool,
    status: watch::Sender<Status>,
}

impl Table {
    /// An empty table of `columns` keeping at most `keep` values, with
    /// room for `rows` (when known: a table that never grows in steps
    /// leaves no freed steps behind).
    pub fn new(columns: Vec<String>, keep: usize, rows: Option<u64>) -> Arc<Table> {
        let room = rows.map(|r| (r as usize).saturating_mul(columns.len()).min(keep));
        Arc::new(Table {
            columns,
            kept: RwLock::new(Kept {
                values: Vec::with_capacity(room.unwrap_or(0)),
                first: 0,
            }),
            keep: keep.max(1),
            room: room.unwrap_or(keep),
            dropped: AtomicBool::new(false),
            status: watch::Sender::new(Status::default()),
        })
    }

    /// The column names, `time` first.
    pub fn columns(&self) -> &[String] {
        &self.columns
    }

    /// Where it stands now.
    pub fn status(&self) -> Status {
        self.status.borrow().clone()
    }

    /// Appends whole rows (row-major); `progress` when the producer knows.
    pub fn append(&self, rows: &[f64], progress: Option<f64>) {
        let width = self.columns.len();
        let added = (rows.len() / width) as u64;
        {
            let mut kept = self.kept.write().unwrap_or_else(|e| e.into_inner());
            kept.values.extend_from_slice(&rows[..added as usize * width]);
            if kept.values.len() > self.keep {
                // Drop the older half at once: amortised, not per row.
                let drop_rows = (kept.values.len() - self.keep / 2) / width;
                kept.values.drain(..drop_rows * width);
                kept.first += drop_rows as u64;
            }
        }
        self.status.send_modify(|s| {
            s.rows += added;
            if let Some(p) = progress {
                s.progress = p;
            }
        });
    }

    /// The bytes its rows take now, or, while `growing`, the most they
    /// will take.
    pub fn bytes(&self, growing: bool) -> usize {
        let capacity = self.kept.read().unwrap_or_else(|e| e.into_inner()).values.capacity();
        let values = match growing {
            true => capacity.max(self.room),
            false => capacity,
        };
        values * std::mem::size_of::<f64>()
    }

    /// Frees its rows (the count of rows made stays): what streams and
    /// downloads read from now on is empty.
    pub fn drop_rows(&self) {
        let mut kept = self.kept.write().unwrap_or_else(|e| e.into_inner());
        kept.first += (kept.values.len() / self.columns.len()) as u64;
        kept.values = Vec::new();
        self.dropped.store(true, Ordering::Release);
    }

    /// Whether its rows were dropped ([`Table::drop_rows`]).
    pub fn dropped(&self) -> bool {
        self.dropped.load(Ordering::Acquire)
    }

    /// Marks the end, with the stream's last message.
    pub fn end(&self, message: Value) {
        self.status.send_modify(|s| {
            s.progress = 1.0;
            s.end = Some(message);
        });
    }

    /// The number of the first row kept, and of the row after the last.
    fn kept_rows(&self) -> (u64, u64) {
        let kept = self.kept.read().unwrap_or_else(|e| e.into_inner());
        (kept.first, kept.first + (kept.values.len() / self.columns.len()) as u64)
    }

    /// The kept rows from `from` (or the first kept row) to before `end`,
    /// at most `most` of them, in order, as `f(row)`; the row after the
    /// last given.
    fn rows(&self, from: u64, end: u64, most: usize, mut f: impl FnMut(&[f64])) -> u64 {
        let width = self.columns.len();
        let kept = self.kept.read().unwrap_or_else(|e| e.into_inner());
        let total = kept.first + (kept.values.len() / width) as u64;
        let start = from.max(kept.first);
        let stop = end.min(total).min(start + most as u64);
        if start >= stop {
            return start;
        }
        let offset = (start - kept.first) as usize * width;
        kept.values[offset..offset + (stop - start) as usize * width]
            .chunks_exact(width)
            .for_each(&mut f);
        stop
    }

    /// The binary batch of rows from `from` on (or the first kept row),
    /// and the row after it; `None` when there is nothing from there.
    fn batch(&self, from: u64) -> Option<(Vec<u8>, u64)> {
        let width = self.columns.len();
        let kept = self.kept.read().unwrap_or_else(|e| e.into_inner());
        let total = kept.first + (kept.values.len() / width) as u64;
        let start = from.max(kept.first);
        if start >= total {
            return None;
        }
        let rows = (total - start).min((BATCH_VALUES / width).max(1) as u64);
        let offset = (start - kept.first) as usize * width;
        let values = &kept.values[offset..offset + rows as usize * width];
        let mut bytes = Vec::with_capacity(12 + values.len() * 8);
        bytes.extend_from_slice(&(start as u32).to_le_bytes());
        bytes.extend_from_slice(&(rows as u32).to_le_bytes());
        bytes.extend_from_slice(&(width as u32).to_le_bytes());
        for v in values {
            bytes.extend_from_slice(&v.to_le_bytes());
        }
        Some((bytes, start + rows))
    }
}

/// Streams `table` to `socket` (see `serve/API.md`): the columns, every
/// row in binary batches, whatever `extra` has to say each `tick`, and the
/// end message; returns when the table has ended and everything is sent,
/// or when the client goes.
pub async fn stream(
    mut socket: WebSocket,
    table: Arc<Table>,
    tick: Duration,
    mut extra: impl FnMut(&Status) -> Vec<Value> + Send,
) {
    let text = |v: Value| Message::Text(v.to_string().into());
    let columns = json!({"type": "columns", "columns": table.columns()});
    if socket.send(text(columns)).await.is_err() {
        return;
    }
    let mut updates = table.status.subscribe();
    let mut ticks = tokio::time::interval(tick);
    let mut next = 0u64;
    loop {
        let status = updates.borrow_and_update().clone();
        while let Some((batch, after)) = table.batch(next) {
            if socket.send(Message::Binary(batch.into())).await.is_err() {
                return;
            }
            next = after;
        }
        for message in extra(&status) {
            if socket.send(text(message)).await.is_err() {
                return;
            }
        }
        if let Some(end) = status.end.filter(|_| next >= status.rows) {
            let _ = socket.send(text(end)).await;
            let _ = socket.send(Message::Close(None)).await;
            return;
        }
        tokio::select! {
            changed = updates.changed() => if changed.is_err() { return },
            _ = ticks.tick() => {}
            received = socket.recv() => match received {
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
}

/// Bytes written, taken out piece by piece.
#[derive(Clone, Default)]
struct Pending(Arc<Mutex<Vec<u8>>>);

impl Pending {
    fn take(&self) -> Vec<u8> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Write for Pending {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The rows `table` keeps now as the CSV `tandem sim` writes, made piece
/// by piece as the client takes them (never whole in memory; the table is
/// locked only while a piece is written).
pub fn csv(table: Arc<Table>) -> Body {
    let pending = Pending::default();
    let (first, end) = table.kept_rows();
    // Writing into memory cannot fail.
    let recorder = CsvRecorder::new(pending.clone(), &table.columns()[1..], None).ok();
    let most = (CSV_VALUES / table.columns.len()).max(1);
    let state = (table, recorder, pending, first);
    let pieces = stream::unfold(state, move |(table, mut recorder, pending, next)| async move {
        let after = table.rows(next, end, most, |row| {
            if let Some(csv) = recorder.as_mut() {
                let _ = csv.record(row[0], &row[1..]);
            }
        });
        let piece = pending.take();
        if piece.is_empty() {
            return None;
        }
        Some((
            Ok::<_, std::convert::Infallible>(Bytes::from(piece)),
            (table, recorder, pending, after),
        ))
    });
    Body::from_stream(pieces)
}
