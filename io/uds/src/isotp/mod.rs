//! ISO-TP (ISO 15765-2:2016): messages of up to [`MAX_MESSAGE_LEN`] bytes
//! carried in single, first, consecutive and flow-control frames, on classic
//! CAN (8-byte frames) and CAN FD (TX_DL 8 to 64, with the escape forms of
//! the single and first frame), with normal or extended addressing (a
//! leading N_TA byte), optional padding, block size and STmin flow control,
//! FC.WAIT and FC.OVFLW, and the N_Bs and N_Cr timeouts.
//!
//! [`Machine`] is the protocol without I/O: frames in ([`Machine::on_frame`]),
//! frames out ([`Machine::transmit`]), timeouts ([`Machine::expire`]), time
//! as integer nanoseconds from the caller. It allocates its two buffers
//! (transmit and receive, [`Config::max_len`] bytes each) when built and
//! nothing afterwards. [`Link`] runs it over any Tandem transport
//! ([`Duplex`](tandem_can::Duplex)) with blocking `send` and `recv` of whole
//! messages.
//!
//! Frames the standard says to ignore (an unknown PCI, a length its frame
//! cannot carry, a first frame shorter than a single frame could carry, a
//! consecutive frame with no reception under way, a flow control with no
//! transmission waiting for it) are ignored and counted in [`Counts`]; a
//! consecutive frame out of sequence aborts the reception; a first frame
//! longer than [`Config::max_len`] is answered with FC.OVFLW.
//!
//! ```
//! use tandem_uds::isotp::{Config, Event, Machine};
//! use tandem_can::CanId;
//!
//! let id = |n| CanId::standard(n).unwrap();
//! let mut tester = Machine::new(Config::classic(id(0x7E0), id(0x7E8))).unwrap();
//! let mut ecu = Machine::new(Config::classic(id(0x7E8), id(0x7E0))).unwrap();
//! let message: Vec<u8> = (0..100).collect();
//! tester.send(&message).unwrap();
//! let mut got = None;
//! for _ in 0..100 {
//!     while let Some(frame) = tester.transmit(0) {
//!         if let Some(Event::Received(len)) = ecu.on_frame(&frame, 0) {
//!             got = Some(ecu.message()[..len].to_vec());
//!         }
//!     }
//!     while let Some(frame) = ecu.transmit(0) {
//!         tester.on_frame(&frame, 0);
//!     }
//! }
//! assert_eq!(got.as_deref(), Some(&message[..]));
//! ```

mod config;
mod link;
mod machine;

pub use config::{Addressing, Config, ConfigError, MAX_MESSAGE_LEN};
pub use link::{Link, LinkError};
pub use machine::{st_min_ns, Counts, Event, Fault, Machine, SendError};
