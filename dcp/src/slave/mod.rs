//! Any Tandem model (a JSON block diagram, a built-in plant, an FMU) as a
//! DCP slave over UDP/IPv4: the slave state machine of DCP 1.0 with its
//! checks in the specified order, answers and notifications, data in and
//! out, steps granted by the master (non-real-time) or taken on its own
//! clock from a common start (soft and hard real time).
//!
//! Policies beyond the specification, for unreliable networks:
//!
//! - **A repeated request** (the same sequence id and bytes as the last,
//!   a master's retransmission after a lost answer) is answered again with
//!   everything it produced, data included, and not carried out twice.
//! - **Lost input data in lock-step**: once the master has sent input data
//!   for a step, a step (or an initialisation) whose data has not arrived
//!   is refused (`RSP_nack`, `PROTOCOL_ERROR_GENERIC`) so that it is never
//!   taken on stale inputs; the master sends the data again.
//! - **Duplicated or reordered data** (a sequence id not newer than the
//!   last) is dropped and counted; a gap (lost data) is counted.
//! - **A silent master**: registered and with no request for
//!   `master_timeout`, the slave goes to ERRORHANDLING, stops, and returns
//!   to ALIVE for the next master.

pub mod config;
pub mod member;
pub mod model;
mod realtime;
mod run;
pub mod session;
pub mod wiring;

use std::fmt;

pub use config::{Extrapolation, SlaveConfig};
pub(crate) use realtime::age_histogram;
pub use run::{describe, Identity, Slave, SlaveError};

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
