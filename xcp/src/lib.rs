//! Tandem's ASAM XCP 1.x slave on Ethernet, independent of the runtime:
//!
//! - [`map`]: the slave's address space, the objects in it (measurements
//!   and calibration characteristics) and its events;
//! - the protocol: packets, the command processor, dynamic DAQ and its
//!   sampler, the transports (built on this crate's branch `i31-xcp`);
//! - the A2L file that describes a slave (built on branch `i31-a2l`).
//!
//! The runtime integration (sampling at a frame's end on the fast thread,
//! calibration through the two-phase retune, `[xcp]` in the run
//! configuration) lives in `session`, on top of this crate.

pub mod a2l;
pub mod map;
