//! SocketCAN: a Linux CAN interface (a controller's `can0`, a virtual
//! `vcan0`) through the kernel's raw CAN sockets.
//!
//! [`open`] binds one raw socket to the interface and hands out its two
//! halves (the same socket, duplicated): the receiving half waits for a frame
//! with a timeout, the sending half never waits. Classic and CAN FD frames,
//! receive filters, the kernel's receive timestamps and error frames are
//! supported.
//!
//! ```no_run
//! use std::time::Duration;
//! use tandem_bus::socketcan_bus::{open, SocketCanOptions};
//! use tandem_can::{CanFrame, CanId};
//!
//! let options = SocketCanOptions { fd: true, ..SocketCanOptions::default() };
//! let mut bus = open("vcan0", &options)?;
//! bus.tx.send(&CanFrame::fd(CanId::standard(0x123)?, &[0; 64], true, false)?)?;
//! if let Some(received) = bus.rx.recv(Duration::from_millis(10))? {
//!     println!("{:?} at {:?} s", received.frame, received.source_time);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::io;
use std::os::fd::{AsFd, AsRawFd};
use std::time::{Duration, UNIX_EPOCH};

use socketcan::id::FdFlags;
use socketcan::socket::{CAN_RAW_FD_FRAMES, SOL_CAN_RAW};
use socketcan::{
    CanAddr, CanAnyFrame, CanDataFrame, CanErrorFrame, CanFdFrame, CanFdSocket, CanRemoteFrame, EmbeddedFrame,
    ExtendedId, Frame, Id, Socket, SocketOptions, StandardId,
};

use tandem_can::frame::{CanFrame, CanId, FrameError, FrameKind};
use tandem_can::transport::{BusError, CanReceiver, CanSender, Duplex, Received};

/// The MTU of an interface that carries CAN FD frames (`CANFD_MTU`).
const FD_MTU: u32 = 72;

/// How a SocketCAN interface is opened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SocketCanOptions {
    /// Send and receive CAN FD frames as well as classic ones. The interface
    /// must carry them (MTU 72); without it, sending an FD frame is an error
    /// and FD frames on the bus are not received.
    pub fd: bool,
    /// Receive filters as `(id, mask)`: a frame is received when its
    /// identifier `n` (standard or extended alike) has
    /// `n & mask == id & mask`, for any of them. Empty: every frame.
    /// Bits above the 29 of an identifier are ignored.
    pub filters: Vec<(u32, u32)>,
    /// Receive the controller's error frames, as [`BusError::BusOff`] and
    /// [`BusError::Bus`].
    pub error_frames: bool,
    /// Ask the kernel to stamp each frame when it arrives
    /// ([`Received::source_time`]).
    pub timestamps: bool,
}

impl Default for SocketCanOptions {
    /// Classic frames only, every frame received, error frames and kernel
    /// timestamps on.
    fn default() -> Self {
        SocketCanOptions {
            fd: false,
            filters: Vec::new(),
            error_frames: true,
            timestamps: true,
        }
    }
}

/// Why an interface could not be opened; each message names the interface
/// and the fix.
#[derive(Debug, thiserror::Error)]
pub enum SocketCanOpenError {
    /// No network interface has this name.
    #[error(
        "no such interface {0}: for a virtual bus create it with \
         `ip link add {0} type vcan && ip link set up {0}`; `ip link` lists the interfaces"
    )]
    NoSuchInterface(String),
    /// The kernel has no CAN sockets (the `can` and `can-raw` modules are
    /// not loaded, or not built).
    #[error("cannot open {0}: CAN not supported by this kernel (modprobe can-raw)")]
    NotSupported(String),
    /// The interface exists but is not a CAN interface.
    #[error("{0} is not a CAN interface (`ip -details link show {0}` shows its type)")]
    NotCan(String),
    /// The interface is down.
    #[error(
        "{0} is down: `ip link set up {0}` (a controller needs its bit rate first: \
         `ip link set {0} type can bitrate 500000`)"
    )]
    Down(String),
    /// CAN FD was asked for but the interface carries classic frames only.
    #[error(
        "{interface} does not carry CAN FD frames (MTU {mtu}, CAN FD needs 72): \
         `ip link set {interface} mtu 72` for a vcan, `ip link set {interface} type can \
         bitrate 500000 dbitrate 2000000 fd on` for a controller, or open it without fd"
    )]
    NotFd {
        /// The interface.
        interface: String,
        /// Its MTU.
        mtu: u32,
    },
    /// Any other failure of the socket calls.
    #[error("cannot open {interface}: {what}: {source}")]
    Io {
        /// The interface.
        interface: String,
        /// The step that failed.
        what: &'static str,
        /// The error.
        #[source]
        source: io::Error,
    },
}

/// Opens `interface` (e.g. `can0`, `vcan0`) with `options` and returns its
/// receiving and sending halves.
///
/// The socket is non-blocking: [`CanSender::send`] answers a full transmit
/// queue or socket buffer with [`BusError::TxQueueFull`] at once, and
/// [`CanReceiver::recv`] waits for its timeout in `ppoll`. Frames sent by
/// this socket are not received back by it; other sockets on the interface
/// (another program, a second [`open`]) receive them. Timestamps are the
/// kernel's receive times, in seconds since the Unix epoch (`CLOCK_REALTIME`).
/// When the interface goes down, receiving reports [`BusError::Disconnected`]
/// once and sending reports it until the interface is up again, when the
/// socket works again. When it is deleted, sending reports it until the
/// interface is opened again.
pub fn open(interface: &str, options: &SocketCanOptions) -> Result<Duplex, SocketCanOpenError> {
    let io_err = |what: &'static str| {
        move |source: io::Error| SocketCanOpenError::Io {
            interface: interface.to_string(),
            what,
            source,
        }
    };
    let addr =
        CanAddr::from_iface(interface).map_err(|_| SocketCanOpenError::NoSuchInterface(interface.to_string()))?;
    let sock = CanFdSocket::open_addr(&addr).map_err(|e| match e.raw_os_error() {
        Some(libc::EAFNOSUPPORT | libc::EPROTONOSUPPORT) => SocketCanOpenError::NotSupported(interface.to_string()),
        Some(libc::ENODEV) => SocketCanOpenError::NotCan(interface.to_string()),
        _ => io_err("socket")(e),
    })?;
    if let Some(flags) =
        sysfs(interface, "flags").and_then(|f| u32::from_str_radix(f.trim_start_matches("0x"), 16).ok())
    {
        if flags & libc::IFF_UP as u32 == 0 {
            return Err(SocketCanOpenError::Down(interface.to_string()));
        }
    }
    if options.fd {
        if let Some(mtu) = sysfs(interface, "mtu").and_then(|m| m.parse::<u32>().ok()) {
            if mtu < FD_MTU {
                return Err(SocketCanOpenError::NotFd {
                    interface: interface.to_string(),
                    mtu,
                });
            }
        }
    } else {
        sock.set_socket_option_int(SOL_CAN_RAW, CAN_RAW_FD_FRAMES, 0)
            .map_err(io_err("classic frames only (CAN_RAW_FD_FRAMES)"))?;
    }
    if !options.filters.is_empty() {
        let filters: Vec<(u32, u32)> = options
            .filters
            .iter()
            .map(|&(id, mask)| (id & libc::CAN_EFF_MASK, mask & libc::CAN_EFF_MASK))
            .collect();
        sock.set_filters(&filters)
            .map_err(io_err("receive filters (CAN_RAW_FILTER)"))?;
    }
    if options.error_frames {
        sock.set_error_filter_accept_all()
            .map_err(io_err("error frames (CAN_RAW_ERR_FILTER)"))?;
    }
    if options.timestamps {
        // Where the kernel does not stamp frames, they come without a time.
        let _ = sock.set_recv_timestamp(true);
    }
    sock.set_nonblocking(true).map_err(io_err("non-blocking mode"))?;
    let tx = sock
        .as_fd()
        .try_clone_to_owned()
        .map_err(io_err("duplicating the socket"))?;
    Ok(Duplex {
        rx: Box::new(SocketCanReceiver {
            sock,
            interface: interface.to_string(),
        }),
        tx: Box::new(SocketCanSender {
            sock: CanFdSocket::from(tx),
            interface: interface.to_string(),
            fd: options.fd,
        }),
    })
}

/// `/sys/class/net/<interface>/<attribute>`, if readable.
fn sysfs(interface: &str, attribute: &str) -> Option<String> {
    fs::read_to_string(format!("/sys/class/net/{interface}/{attribute}"))
        .ok()
        .map(|s| s.trim().to_string())
}

/// The receiving half.
struct SocketCanReceiver {
    sock: CanFdSocket,
    interface: String,
}

impl CanReceiver for SocketCanReceiver {
    fn recv(&mut self, timeout: Duration) -> Result<Option<Received>, BusError> {
        if !readable(&self.sock, timeout).map_err(|e| socket_error(&self.interface, e))? {
            return Ok(None);
        }
        match self.sock.read_frame_with_timestamps() {
            Ok((frame, times)) => {
                let frame = from_socketcan(frame)?;
                let source_time = times
                    .socket
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map(|d| d.as_secs_f64());
                Ok(Some(Received { frame, source_time }))
            }
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::InvalidData => Err(BusError::Malformed(format!(
                "a datagram on {} that is neither a classic nor a CAN FD frame",
                self.interface
            ))),
            Err(e) => Err(socket_error(&self.interface, e)),
        }
    }
}

/// Waits until `sock` is readable (a frame or an error is pending), at most
/// `timeout`; `false` when it is not.
fn readable(sock: &CanFdSocket, timeout: Duration) -> io::Result<bool> {
    crate::poll::wait_readable(&[sock.as_raw_fd()], timeout)
}

/// The sending half.
struct SocketCanSender {
    sock: CanFdSocket,
    interface: String,
    fd: bool,
}

impl CanSender for SocketCanSender {
    fn send(&mut self, frame: &CanFrame) -> Result<(), BusError> {
        if frame.is_fd() && !self.fd {
            return Err(BusError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{frame:?} is a CAN FD frame: open {} with fd", self.interface),
            )));
        }
        let frame = to_socketcan(frame).ok_or_else(|| {
            BusError::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{frame:?} is not a SocketCAN frame"),
            ))
        })?;
        self.sock.write_frame(&frame).map_err(|e| match e.raw_os_error() {
            Some(libc::ENOBUFS | libc::EAGAIN) => BusError::TxQueueFull,
            _ => socket_error(&self.interface, e),
        })
    }
}

/// A socket call's error: the interface gone down or away, or any other.
fn socket_error(interface: &str, e: io::Error) -> BusError {
    match e.raw_os_error() {
        Some(libc::ENETDOWN) => BusError::Disconnected(format!("{interface} is down (ip link set up {interface})")),
        Some(libc::ENODEV | libc::ENXIO) => BusError::Disconnected(format!("{interface} was removed")),
        _ => BusError::Io(e),
    }
}

/// The socketcan crate's form of a frame; `None` only for a frame whose
/// identifier or length the crate refuses, which [`CanFrame`]'s constructors
/// rule out.
fn to_socketcan(frame: &CanFrame) -> Option<CanAnyFrame> {
    let id = match frame.id() {
        CanId::Standard(n) => Id::Standard(StandardId::new(n)?),
        CanId::Extended(n) => Id::Extended(ExtendedId::new(n)?),
    };
    match frame.kind() {
        FrameKind::Data => CanDataFrame::new(id, frame.payload()).map(CanAnyFrame::Normal),
        FrameKind::Remote => CanRemoteFrame::new_remote(id, frame.len()).map(CanAnyFrame::Remote),
        FrameKind::Fd { brs, esi } => {
            let mut flags = FdFlags::empty();
            flags.set(FdFlags::BRS, brs);
            flags.set(FdFlags::ESI, esi);
            CanFdFrame::with_flags(id, frame.payload(), flags).map(CanAnyFrame::Fd)
        }
    }
}

/// A received frame as Tandem sees it; an error frame is the error it
/// reports.
fn from_socketcan(frame: CanAnyFrame) -> Result<CanFrame, BusError> {
    let malformed = |e: FrameError| BusError::Malformed(format!("received frame: {e}"));
    match frame {
        CanAnyFrame::Normal(f) => CanFrame::data(tandem_id(&f).map_err(malformed)?, f.data()).map_err(malformed),
        CanAnyFrame::Remote(f) => CanFrame::remote(tandem_id(&f).map_err(malformed)?, f.dlc()).map_err(malformed),
        CanAnyFrame::Fd(f) => {
            CanFrame::fd(tandem_id(&f).map_err(malformed)?, f.data(), f.is_brs(), f.is_esi()).map_err(malformed)
        }
        CanAnyFrame::Error(f) => Err(bus_error(f)),
    }
}

/// The identifier of a received frame.
fn tandem_id(frame: &impl Frame) -> Result<CanId, FrameError> {
    if frame.is_extended() {
        CanId::extended(frame.raw_id())
    } else {
        CanId::standard(u16::try_from(frame.raw_id()).unwrap_or(u16::MAX))
    }
}

/// What an error frame reports: bus-off, or its causes described.
fn bus_error(frame: CanErrorFrame) -> BusError {
    let error = frame.into_error();
    if error.is_bus_off() {
        BusError::BusOff
    } else {
        BusError::Bus(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(frame: CanFrame) -> CanFrame {
        from_socketcan(to_socketcan(&frame).unwrap()).unwrap()
    }

    #[test]
    fn frames_convert_both_ways() {
        let std = CanId::standard(0x7FF).unwrap();
        let ext = CanId::extended(0x1ABC_DEF0).unwrap();
        for frame in [
            CanFrame::data(std, &[1, 2, 3]).unwrap(),
            CanFrame::data(ext, &[]).unwrap(),
            CanFrame::remote(ext, 8).unwrap(),
            CanFrame::remote(std, 0).unwrap(),
            CanFrame::fd(std, &[9; 64], true, false).unwrap(),
            CanFrame::fd(ext, &[5; 12], false, true).unwrap(),
            CanFrame::fd(CanId::extended(0x7F).unwrap(), &[1; 3], true, true).unwrap(),
        ] {
            assert_eq!(round_trip(frame), frame);
        }
    }

    #[test]
    fn error_frames_become_bus_errors() {
        let off = CanErrorFrame::new_error(socketcan::errors::CAN_ERR_BUSOFF, &[]).unwrap();
        assert!(matches!(from_socketcan(off.into()), Err(BusError::BusOff)));
        let ack = CanErrorFrame::new_error(socketcan::errors::CAN_ERR_ACK, &[]).unwrap();
        match from_socketcan(ack.into()) {
            Err(BusError::Bus(description)) => assert_eq!(description, "no ack"),
            other => panic!("{other:?}"),
        }
    }
}
