//! Tandem's I/O: where model inputs and outputs meet the outside world
//! (SocketCAN, SLCAN, CAN over UDP, serial devices, DBC signal mapping,
//! candump and ASC logs, input extrapolation).
//!
//! Empty until the CAN and serial issue: offline simulation needs no I/O.
//! The crate exists now so that the boundary is fixed: `models` never
//! depends on it, and the real-time runtime talks to it only through
//! lock-free queues.
