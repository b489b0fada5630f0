//! What each I/O device counts: frames (a serial device's lines), faults by
//! kind, and the time the runtime spends on the receive and transmit paths.
//! Every counter has one writer.

use std::sync::Arc;

use tandem_e2e::{CheckError, CheckStatus, ReceiveCounts};
use tandem_runtime::tandem::metrics::{Counter, Histogram, Scale};

use crate::fault::FaultSlots;

/// How many frames of one protected message ended in each check status
/// (timeouts counted as "no new data"). Each counter has one writer: the
/// receive thread, or the fast thread for timeouts.
#[derive(Default)]
pub struct E2eCounts {
    ok: Counter,
    ok_some_lost: Counter,
    lost: Counter,
    repeated: Counter,
    wrong_sequence: Counter,
    crc: Counter,
    length: Counter,
    data_id: Counter,
    counter: Counter,
    no_new_data: Counter,
}

impl E2eCounts {
    /// Counts one status.
    pub fn record(&self, status: CheckStatus) {
        match status {
            CheckStatus::Ok => self.ok.increment(),
            CheckStatus::OkSomeLost { lost } => {
                self.lost.add(u64::from(lost));
                self.ok_some_lost.increment();
            }
            CheckStatus::Repeated => self.repeated.increment(),
            CheckStatus::WrongSequence => self.wrong_sequence.increment(),
            CheckStatus::Error(CheckError::Crc) => self.crc.increment(),
            CheckStatus::Error(CheckError::Length) => self.length.increment(),
            CheckStatus::Error(CheckError::DataId) => self.data_id.increment(),
            CheckStatus::Error(CheckError::Counter) => self.counter.increment(),
            CheckStatus::NoNewData => self.no_new_data.increment(),
        }
    }

    /// The counts so far.
    pub fn get(&self) -> ReceiveCounts {
        ReceiveCounts {
            ok: self.ok.get(),
            ok_some_lost: self.ok_some_lost.get(),
            lost: self.lost.get(),
            repeated: self.repeated.get(),
            wrong_sequence: self.wrong_sequence.get(),
            crc: self.crc.get(),
            length: self.length.get(),
            data_id: self.data_id.get(),
            counter: self.counter.get(),
            no_new_data: self.no_new_data.get(),
        }
    }
}

/// A protected received message's counts.
pub struct MessageE2e {
    /// The message's name.
    pub message: String,
    /// Its counts.
    pub counts: E2eCounts,
}

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
    /// Frames made due for a slot just before a stall, dropped instead of
    /// sent late, their messages sent with the slot after it (fast thread).
    pub tx_stale: Counter,
    /// Received messages that timed out (fast thread).
    pub timeouts: Counter,
    /// Log records dropped because the log writer fell behind.
    pub log_dropped: Counter,
    /// Diagnostic (UDS) requests answered (diagnostics thread).
    pub uds_requests: Counter,
    /// Of them, answered with a negative response (diagnostics thread).
    pub uds_negative: Counter,
    /// Diagnostic transport errors and responses that could not be sent
    /// (diagnostics thread).
    pub uds_errors: Counter,
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
    /// The E2E check counts of each protected received message.
    pub e2e: Vec<MessageE2e>,
    /// What each fault the bus injected did.
    pub faults: Option<Arc<FaultSlots>>,
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
            tx_stale: Counter::default(),
            timeouts: Counter::default(),
            log_dropped: Counter::default(),
            uds_requests: Counter::default(),
            uds_negative: Counter::default(),
            uds_errors: Counter::default(),
            rx_path: Histogram::new(tenth, 20_000),
            tx_path: Histogram::new(tenth, 20_000),
            tx_send: Histogram::new(tenth, 20_000),
            e2e: Vec::new(),
            faults: None,
        }
    }
}
