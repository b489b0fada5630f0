//! The Distributed Co-Simulation Protocol (DCP 1.0, Modelica Association)
//! for Tandem: its PDUs on the wire ([`pdu`], [`types`], [`values`]), the
//! slave description ([`description`]), any Tandem model or run as a DCP
//! slave over UDP/IPv4 ([`slave`]), CAN frames as binary data ([`frames`]), and a master that runs a federation of
//! slaves across machines ([`federation`]).
//!
//! It depends on the session (a run as a slave), the co-simulation master
//! (members stepped in lock-step), the configuration, the runtime, the
//! models, CAN frames and the transports' waits on sockets; nothing but
//! the binary and the fuzz targets depend on it.

pub mod description;
pub mod federation;
pub mod frames;
pub mod net;
pub mod pdu;
pub mod ports;
pub mod slave;
pub mod types;
pub mod values;
