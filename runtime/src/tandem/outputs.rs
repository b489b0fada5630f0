//! Where the fast thread writes each frame's outputs: the transmitting I/O
//! (CAN messages, serial lines). The implementations live with the I/O; the
//! fast side only calls them.

/// Outputs written by the fast thread once per frame. Must not allocate,
/// lock or block: it runs on the real-time thread.
pub trait OutputSink: Send {
    /// Frame `k` has just started (the fast thread woke for it): send what
    /// the previous frame's outputs made due, at this boundary.
    fn boundary(&mut self, k: u64) {
        let _ = k;
    }

    /// Frame `k`, at time `t` (s), computed the outputs `y` (the values
    /// sent, extrapolated when the frame was late).
    fn write(&mut self, k: u64, t: f64, y: &[f64]);
}
