//! Recording from the fast thread: every `decimation`-th frame's time,
//! chosen outputs and source go into a ring, and a normal thread drains the
//! ring into a [`Recorder`] (a CSV file), the source as the row's label. A
//! full ring drops rows and counts them; it never blocks the frame.

use std::io;

use ringbuf::traits::{Consumer, Observer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};

use super::metrics::FrameSource;
use crate::record::Recorder;

/// The fast thread's end.
pub struct RowSender {
    ring: HeapProd<f64>,
    signals: Vec<usize>,
    decimation: u64,
    row: Vec<f64>,
    dropped: u64,
}

/// The draining thread's end.
pub struct RowReceiver {
    ring: HeapCons<f64>,
    row: Vec<f64>,
}

/// A recording of the outputs `signals` every `decimation` frames, with room
/// for `capacity` rows in flight.
pub fn row_ring(signals: Vec<usize>, decimation: u64, capacity: usize) -> (RowSender, RowReceiver) {
    let width = signals.len() + 2;
    let (ring, cons) = HeapRb::<f64>::new(width * capacity).split();
    (
        RowSender {
            ring,
            signals,
            decimation: decimation.max(1),
            row: vec![0.0; width],
            dropped: 0,
        },
        RowReceiver {
            ring: cons,
            row: vec![0.0; width],
        },
    )
}

impl RowSender {
    /// Records frame `k` (time `t`, outputs `y`, what its slot sent:
    /// `source`) if it is due.
    pub fn offer(&mut self, k: u64, t: f64, y: &[f64], source: FrameSource) {
        if !k.is_multiple_of(self.decimation) {
            return;
        }
        if self.ring.vacant_len() < self.row.len() {
            self.dropped += 1;
            return;
        }
        self.row[0] = t;
        self.row[1] = source as u8 as f64;
        for (slot, &i) in self.row[2..].iter_mut().zip(&self.signals) {
            *slot = y[i];
        }
        self.ring.push_slice(&self.row);
    }

    /// Rows dropped because the ring was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

impl RowReceiver {
    /// Writes every waiting row to `recorder`, labelled with its frame's
    /// source; returns how many.
    pub fn drain(&mut self, recorder: &mut dyn Recorder) -> io::Result<usize> {
        let mut rows = 0;
        while self.ring.occupied_len() >= self.row.len() {
            self.ring.pop_slice(&mut self.row);
            let source = FrameSource::ALL[self.row[1] as usize];
            recorder.record_labelled(self.row[0], &self.row[2..], source.name())?;
            rows += 1;
        }
        Ok(rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Trace;

    #[test]
    fn due_rows_arrive_in_order_with_their_signals_and_sources_and_a_full_ring_drops() {
        let (mut tx, mut rx) = row_ring(vec![2, 0], 2, 2);
        let sources = [FrameSource::Implicit, FrameSource::Fast, FrameSource::Skipped];
        for k in 0..6 {
            tx.offer(k, k as f64, &[k as f64, -1.0, 10.0 * k as f64], sources[k as usize / 2]);
        }
        assert_eq!(tx.dropped(), 1);
        let mut trace = Trace::default();
        assert_eq!(rx.drain(&mut trace).unwrap(), 2);
        assert_eq!(trace.time, [0.0, 2.0]);
        assert_eq!(trace.rows, [vec![0.0, 0.0], vec![20.0, 2.0]]);
        assert_eq!(trace.labels, ["implicit", "fast"]);
    }
}
