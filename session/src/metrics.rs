//! What each I/O device counts: frames (a serial device's lines), faults by
//! kind, and the time the runtime spends on the receive and transmit paths.
//! Every counter has one writer.

use tandem_runtime::tandem::metrics::{Counter, Histogram, Scale};

/// One device's counters and histograms.
pub struct DeviceMetrics {
    /// Frames received and decoded (receive thread).
    pub rx_frames: Counter,
    /// Frames with an identifier no received message has (receive thread).
    pub rx_unmapped: Counter,
    /// Frames of a mapped message with the wrong length (receive thread).
    pub rx_wrong_length: Counter,
    /// Malformed input skipped by the transport (receive thread).
    pub rx_malformed: Counter,
    /// Samples merged into a newer sample of the same input because the
    /// fast thread's queue was full (receive thread).
    pub rx_merged: Counter,
    /// Bus errors reported by the controller (receive thread).
    pub bus_errors: Counter,
    /// Bus-off events (receive thread).
    pub bus_off: Counter,
    /// Times the device vanished; the transport reconnects (receive thread).
    pub disconnects: Counter,
    /// Other receive I/O errors (receive thread).
    pub rx_errors: Counter,
    /// Frames sent (transmit thread).
    pub tx_frames: Counter,
    /// Frames dropped on a full transmit queue (transmit thread).
    pub tx_queue_full: Counter,
    /// Frames not sent for another reason (transmit thread).
    pub tx_errors: Counter,
    /// Values clamped to their signal's range (transmit thread).
    pub tx_clamped: Counter,
    /// Received messages that timed out (fast thread).
    pub timeouts: Counter,
    /// Log records dropped because the log writer fell behind.
    pub log_dropped: Counter,
    /// Receive path, ns: the transport returned a frame → its samples are
    /// queued for the fast thread.
    pub rx_path: Histogram,
    /// Transmit path, ns: the runtime's share of handing a frame's due
    /// frames to the transport (on the fast thread, its boundary call at
    /// the start of the frame, the send calls excluded; on the transmit
    /// thread, from the boundary, its wake-up included).
    pub tx_path: Histogram,
    /// Each send call into the transport, ns (the kernel's share: a UDP
    /// multicast send delivers to the local receivers inside the call).
    pub tx_send: Histogram,
}

impl Default for DeviceMetrics {
    fn default() -> Self {
        let tenth = Scale::Linear { width: 100.0 };
        DeviceMetrics {
            rx_frames: Counter::default(),
            rx_unmapped: Counter::default(),
            rx_wrong_length: Counter::default(),
            rx_malformed: Counter::default(),
            rx_merged: Counter::default(),
            bus_errors: Counter::default(),
            bus_off: Counter::default(),
            disconnects: Counter::default(),
            rx_errors: Counter::default(),
            tx_frames: Counter::default(),
            tx_queue_full: Counter::default(),
            tx_errors: Counter::default(),
            tx_clamped: Counter::default(),
            timeouts: Counter::default(),
            log_dropped: Counter::default(),
            rx_path: Histogram::new(tenth, 20_000),
            tx_path: Histogram::new(tenth, 20_000),
            tx_send: Histogram::new(tenth, 20_000),
        }
    }
}
