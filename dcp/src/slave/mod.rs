//! Any Tandem model (a JSON block diagram, a built-in plant, an FMU) as a
//! DCP slave over UDP/IPv4: the slave state machine of DCP 1.0 with its
//! checks in the specified order, answers and notifications, data in and
//! out, steps granted by the master (non-real-time) or taken on its own
//! clock from a common start (soft and hard real time).
//!
//! Policies beyond the specification, for unreliable networks:
//!
//! - **A refused request uses its sequence id**, as DCPLib's slave counts
//!   it: a request in sequence that is refused (`RSP_nack`, which then
//!   expects the id after it) is, for the sequence, like one carried out,
//!   so a master that moves on to the next id after a refusal (DCPLib's
//!   does) is not locked out.
//! - **One master**: once registered, requests from any address but the
//!   registered master's are refused (`INVALID_SEQUENCE_ID`, expecting
//!   the master's next id), whatever their sequence id.
//! - **A repeated request** (the same sequence id and bytes as the last,
//!   a master's retransmission after a lost answer) is answered again with
//!   everything it produced (an acknowledgement and data, or its refusal),
//!   and not carried out twice.
//! - **Lost input data in lock-step**: once the master has sent input data
//!   for a step (data on the control port), a step (or an initialisation)
//!   whose data has not arrived is refused (`RSP_nack`,
//!   `PROTOCOL_ERROR_GENERIC`) so that it is never taken on stale inputs;
//!   the master sends the data again, and the step with the next sequence
//!   ids. Data from other slaves, on data ports, is taken as it comes.
//! - **Duplicated or reordered data** (a sequence id not newer than the
//!   last) is dropped and counted; a gap (lost data) is counted.
//! - **A silent master**: registered and with no request for
//!   `master_timeout`, the slave goes to ERRORHANDLING, stops, and returns
//!   to ALIVE for the next master. Only a request in sequence (or the
//!   repeat of the last) is the master heard: another master's refused
//!   requests do not keep a silent master's registration alive.
//! - **Hostile or broken masters**: what the master configures is bounded
//!   ([`wiring`]), every instant is computed with checked arithmetic, and
//!   a model steps 1 to [`member::MAX_MICRO_STEPS`] micro steps at a time; no
//!   datagram, or sequence of them, can make the slave panic or grow
//!   without bound.
//!
//! [`Slave::with_network`] and [`Slave::turn`] drive a slave in-process
//! on a network of one's own ([`sockets::Net`]): tests and fuzz targets
//! do so without sockets.

pub mod config;
mod counters;
mod data;
mod datagrams;
mod describe;
mod error;
mod machine;
pub mod member;
pub mod model;
mod paced;
mod pacing;
mod realtime;
mod serve;
pub mod session;
pub mod sockets;
pub mod wiring;

pub use config::{Extrapolation, SlaveConfig};
pub use counters::SlaveCounters;
pub use describe::{describe, Identity};
pub use error::SlaveError;
pub use machine::{Reporter, Slave};
pub use pacing::Now;
pub(crate) use realtime::age_histogram;
