//! Tandem's ASAM XCP 1.x slave on Ethernet, independent of the runtime:
//!
//! - [`map`]: the slave's address space, the objects in it (measurements
//!   and calibration characteristics) and its events;
//! - [`packet`]: XCP on Ethernet framing, bounds (`MAX_CTO` 255,
//!   `MAX_DTO` 1400) and error codes;
//! - [`slave`]: the command processor, a state machine with no I/O
//!   ([`Slave::handle`] takes any bytes), calibrating through the
//!   [`Target`] the runtime implements, on a working and a reference page;
//! - [`daq`]: dynamic DAQ lists (bounds [`daq::MAX_DAQ_LISTS`],
//!   [`daq::MAX_ODTS`], [`daq::MAX_ENTRIES`]) and the [`Sampler`] the
//!   real-time thread calls at a frame's end: lock-free rings (`ringbuf`),
//!   no allocation, overload counted and flagged in the next DTO's PID;
//! - [`transport`]: the UDP and TCP [`Server`], one master at a time;
//! - [`master`]: a minimal master over UDP, for tests and benchmarks;
//! - [`a2l`]: the A2L file that describes a slave to its masters.
//!
//! The runtime integration (sampling at a frame's end on the fast thread,
//! calibration through the two-phase retune, `[xcp]` in the run
//! configuration) lives in `session`, on top of this crate.
//!
//! Vector's `xcp-lite` was not taken: it wraps the XCPlite C library
//! behind a process-wide server singleton, lays calibration parameters
//! out in its own segments registered through its macros, and generates
//! its own A2L, where Tandem needs the fixed address space of [`map`],
//! calibration as requests the runtime may refuse, and a sampler it owns.

pub mod a2l;
pub mod daq;
pub mod map;
pub mod master;
pub mod packet;
pub mod slave;
pub mod transport;

pub use daq::Sampler;
pub use slave::{Identity, Refusal, Slave, SlaveError, Target};
pub use transport::{Server, Sockets, Status};
