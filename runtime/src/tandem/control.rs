//! What the threads of a run share besides data: the run's time origin on
//! the monotonic clock (set when the frames start, read by the I/O threads
//! to stamp received frames) and a request to stop early (a receive-timeout
//! fault, Ctrl-C).

use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::thread;
use std::time::Duration;

use super::clock::Nanos;

/// A run's origin and stop request.
#[derive(Debug, Default)]
pub struct RunControl {
    origin: AtomicI64,
    stop: AtomicBool,
}

impl RunControl {
    /// No origin yet, no stop requested.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the origin: the monotonic time of frame 0 (not 0).
    pub fn set_origin(&self, origin: Nanos) {
        self.origin.store(origin, Ordering::Release);
    }

    /// The origin, once set.
    pub fn origin(&self) -> Option<Nanos> {
        Some(self.origin.load(Ordering::Acquire)).filter(|&o| o != 0)
    }

    /// Waits (sleeping, not spinning) until the origin is set, or a stop
    /// is requested (then `None`).
    pub fn wait_for_origin(&self) -> Option<Nanos> {
        loop {
            if let Some(origin) = self.origin() {
                return Some(origin);
            }
            if self.stop_requested() {
                return None;
            }
            thread::sleep(Duration::from_micros(200));
        }
    }

    /// Asks every thread of the run to stop after its current frame.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Release);
    }

    /// Whether a stop was asked for.
    pub fn stop_requested(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }
}
