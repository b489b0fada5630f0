//! Where the fast thread writes each frame's outputs: the transmitting I/O
//! (CAN messages, serial lines), and the taps that watch each frame's end
//! (measurement sampling). The implementations live with the I/O; the fast
//! side only calls them.

/// Outputs written by the fast thread once per frame. Must not allocate,
/// lock or block: it runs on the real-time thread.
pub trait OutputSink: Send {
    /// Frame `k` has just started (the fast thread woke for it): send what
    /// the previous frame's outputs made due, at this boundary.
    fn boundary(&mut self, k: u64) {
        let _ = k;
    }

    /// Slot `k`, at time `t` (s), sends the outputs `y`: its frame's, or,
    /// when the slot was late, the newest computed ones extrapolated or
    /// held.
    fn write(&mut self, k: u64, t: f64, y: &[f64]);

    /// Slots `from..to` passed while the fast thread did not run (a
    /// stall): nothing is written for them, and what the slot before them
    /// made due is stale; the next slot written is `to`. A sink does not
    /// send late what was due in them: a periodic message whose time fell
    /// in them, or that the stale slot carried, goes out once, with slot
    /// `to`'s outputs.
    fn skipped(&mut self, from: u64, to: u64) {
        let _ = (from, to);
    }
}

/// Watches each frame's end on the fast thread, after its outputs are
/// sent (a measurement tap such as XCP's DAQ sampling). Each frame is
/// tapped once, in order, when it is computed, as it is recorded: after a
/// stall, the frames caught up are tapped as they are computed. Must not
/// allocate, lock or block: it runs on the real-time thread.
pub trait FrameTap: Send {
    /// Frame `k` ended: `u` are the inputs it read, `y` the outputs it
    /// computed, and `rate_hits[r]` says whether the model's discrete rate
    /// `r` hit at it.
    fn frame_end(&mut self, k: u64, u: &[f64], y: &[f64], rate_hits: &[bool]);
}

/// Two taps sampling each frame's end, the first first.
impl<A: FrameTap, B: FrameTap> FrameTap for (A, B) {
    fn frame_end(&mut self, k: u64, u: &[f64], y: &[f64], rate_hits: &[bool]) {
        self.0.frame_end(k, u, y, rate_hits);
        self.1.frame_end(k, u, y, rate_hits);
    }
}

impl FrameTap for Box<dyn FrameTap> {
    fn frame_end(&mut self, k: u64, u: &[f64], y: &[f64], rate_hits: &[bool]) {
        (**self).frame_end(k, u, y, rate_hits);
    }
}
