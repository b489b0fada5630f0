//! What a slave counts.

use std::fmt;

/// What a slave counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SlaveCounters {
    /// Requests carried out or refused.
    pub requests: u64,
    /// Requests refused (`RSP_nack`).
    pub refused: u64,
    /// Repeated requests answered again.
    pub repeats: u64,
    /// Datagrams that are not PDUs, or PDUs not for a slave.
    pub malformed: u64,
    /// Data PDUs taken.
    pub data_in: u64,
    /// Data PDUs dropped as duplicates or older than the newest.
    pub data_stale: u64,
    /// Data PDUs missing from a stream (gaps in its sequence ids).
    pub data_lost: u64,
    /// Data PDUs sent.
    pub data_out: u64,
    /// Real-time steps whose newest input was older than the step before.
    pub late_inputs: u64,
    /// Real-time steps taken after their deadline.
    pub missed_deadlines: u64,
    /// Times the master fell silent.
    pub master_lost: u64,
}

impl fmt::Display for SlaveCounters {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "requests {}, refused {}, repeated {}, malformed {}, data in {}, stale {}, lost {}, data out {}, \
             late inputs {}, missed deadlines {}, master lost {}",
            self.requests,
            self.refused,
            self.repeats,
            self.malformed,
            self.data_in,
            self.data_stale,
            self.data_lost,
            self.data_out,
            self.late_inputs,
            self.missed_deadlines,
            self.master_lost
        )
    }
}
