//! CAN over UDP multicast, wire-compatible with python-can's
//! `udp_multicast` interface: each datagram is one frame as a MessagePack
//! map with python-can's field names (`timestamp`, `arbitration_id`,
//! `is_extended_id`, `is_remote_frame`, `is_error_frame`, `channel`, `dlc`,
//! `data`, `is_fd`, `bitrate_switch`, `error_state_indicator`). Any tool
//! that speaks it, python-can's `can.Bus(interface="udp_multicast")` among
//! them, joins the bus by using the same group and port.
//!
//! Every member receives every datagram, its own included; a node ignores
//! datagrams from its own sending socket.

use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rmp::Marker;
use socket2::{Domain, Protocol, Socket, Type};

use crate::poll::wait_readable;
use tandem_can::frame::{CanFrame, CanId, FrameError, FrameKind};
use tandem_can::transport::{BusError, CanReceiver, CanSender, Duplex, Received};

/// python-can's default IPv4 group.
pub const DEFAULT_GROUP: Ipv4Addr = Ipv4Addr::new(239, 74, 163, 2);
/// python-can's default port.
pub const DEFAULT_PORT: u16 = 43113;

/// Where the bus is.
#[derive(Clone, Debug, PartialEq)]
pub struct UdpOptions {
    /// The multicast group (an address in 224.0.0.0/4).
    pub group: Ipv4Addr,
    /// The UDP port every member binds.
    pub port: u16,
    /// Multicast time to live: 1 keeps the bus on this network segment
    /// (and, looped back, on this host).
    pub ttl: u32,
}

impl Default for UdpOptions {
    fn default() -> Self {
        UdpOptions {
            group: DEFAULT_GROUP,
            port: DEFAULT_PORT,
            ttl: 1,
        }
    }
}

/// Joins the bus: a receiving socket bound to the group's port (shared with
/// the other members on this host) and a sending socket.
pub fn open(options: &UdpOptions) -> io::Result<Duplex> {
    if !options.group.is_multicast() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is not a multicast group; use one in 224.0.0.0/4, e.g. {DEFAULT_GROUP}",
                options.group
            ),
        ));
    }
    let rx = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    rx.set_reuse_address(true)?;
    rx.set_reuse_port(true)?;
    rx.bind(&SocketAddr::from((Ipv4Addr::UNSPECIFIED, options.port)).into())?;
    rx.join_multicast_v4(&options.group, &Ipv4Addr::UNSPECIFIED)?;
    rx.set_nonblocking(true)?;
    let tx = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, 0))?;
    tx.set_multicast_ttl_v4(options.ttl)?;
    tx.set_multicast_loop_v4(true)?;
    tx.set_nonblocking(true)?;
    let own_port = tx.local_addr()?.port();
    Ok(Duplex {
        rx: Box::new(UdpRx {
            socket: rx.into(),
            own_port,
            buffer: [0; 512],
        }),
        tx: Box::new(UdpTx {
            socket: tx,
            to: SocketAddrV4::new(options.group, options.port),
            buffer: Vec::with_capacity(256),
            channel: options.group.to_string(),
        }),
    })
}

struct UdpRx {
    socket: UdpSocket,
    own_port: u16,
    buffer: [u8; 512],
}

impl CanReceiver for UdpRx {
    /// Waits with `ppoll`'s nanosecond timeout (a socket's receive timeout
    /// rounds up to a kernel tick), so an ISO-TP sender's STmin of 100 µs
    /// holds.
    fn recv(&mut self, timeout: Duration) -> Result<Option<Received>, BusError> {
        let deadline = Instant::now() + timeout;
        loop {
            let (len, from) = match self.socket.recv_from(&mut self.buffer) {
                Ok(got) => got,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() || !wait_readable(&[self.socket.as_raw_fd()], left)? {
                        return Ok(None);
                    }
                    continue;
                }
                Err(e) => return Err(e.into()),
            };
            if from.port() == self.own_port {
                continue;
            }
            return decode(&self.buffer[..len])
                .map(Some)
                .map_err(|e| BusError::Malformed(e.to_string()));
        }
    }
}

struct UdpTx {
    socket: UdpSocket,
    to: SocketAddrV4,
    buffer: Vec<u8>,
    channel: String,
}

impl CanSender for UdpTx {
    fn send(&mut self, frame: &CanFrame) -> Result<(), BusError> {
        self.buffer.clear();
        let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        encode(frame, now.as_secs_f64(), &self.channel, &mut self.buffer);
        match self.socket.send_to(&self.buffer, self.to) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Err(BusError::TxQueueFull),
            Err(e) => Err(e.into()),
        }
    }
}

/// Appends `frame` as python-can packs it, sent at `timestamp` (seconds
/// since the Unix epoch) on `channel`.
pub fn encode(frame: &CanFrame, timestamp: f64, channel: &str, out: &mut Vec<u8>) {
    use rmp::encode::*;
    // Writing into a Vec cannot fail.
    let _ = (|| -> Result<(), ValueWriteError> {
        write_map_len(out, 11)?;
        write_str(out, "timestamp")?;
        write_f64(out, timestamp)?;
        write_str(out, "arbitration_id")?;
        write_uint(out, u64::from(frame.id().raw()))?;
        write_str(out, "is_extended_id")?;
        write_bool(out, frame.id().is_extended()).map_err(ValueWriteError::InvalidMarkerWrite)?;
        write_str(out, "is_remote_frame")?;
        write_bool(out, frame.is_remote()).map_err(ValueWriteError::InvalidMarkerWrite)?;
        write_str(out, "is_error_frame")?;
        write_bool(out, false).map_err(ValueWriteError::InvalidMarkerWrite)?;
        write_str(out, "channel")?;
        write_str(out, channel)?;
        write_str(out, "dlc")?;
        write_uint(out, frame.len() as u64)?;
        write_str(out, "data")?;
        write_bin(out, frame.payload())?;
        let (fd, brs, esi) = match frame.kind() {
            FrameKind::Fd { brs, esi } => (true, brs, esi),
            _ => (false, false, false),
        };
        for (key, flag) in [("is_fd", fd), ("bitrate_switch", brs), ("error_state_indicator", esi)] {
            write_str(out, key)?;
            write_bool(out, flag).map_err(ValueWriteError::InvalidMarkerWrite)?;
        }
        Ok(())
    })();
}

/// A datagram that is not a frame in python-can's format.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DatagramError {
    /// It ends inside a value.
    #[error("truncated datagram")]
    Truncated,
    /// A value python-can does not send (what the decoder said).
    #[error("not python-can's MessagePack: {0}")]
    NotMessagePack(String),
    /// The datagram is not a map.
    #[error("not a MessagePack map")]
    NotAMap,
    /// A key of the map is not a string.
    #[error("a map key is not a string")]
    KeyNotString,
    /// A known field with a value of the wrong type.
    #[error("field {0:?} has an unexpected type")]
    FieldType(String),
    /// python-can's error frames carry no data frame.
    #[error("an error frame")]
    ErrorFrame,
    /// No identifier.
    #[error("no arbitration_id")]
    NoId,
    /// The fields do not make a valid frame.
    #[error(transparent)]
    Frame(#[from] FrameError),
}

/// One MessagePack value of the kinds python-can sends.
enum Value<'a> {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(&'a str),
    Bin(&'a [u8]),
}

fn value<'a>(buf: &mut &'a [u8]) -> Result<Value<'a>, DatagramError> {
    use rmp::decode::*;
    let bad = |e: &dyn std::fmt::Display| DatagramError::NotMessagePack(e.to_string());
    let first = *buf.first().ok_or(DatagramError::Truncated)?;
    Ok(match Marker::from_u8(first) {
        Marker::Null => {
            *buf = &buf[1..];
            Value::Nil
        }
        Marker::True | Marker::False => Value::Bool(read_bool(buf).map_err(|e| bad(&e))?),
        Marker::F32 => Value::Float(f64::from(read_f32(buf).map_err(|e| bad(&e))?)),
        Marker::F64 => Value::Float(read_f64(buf).map_err(|e| bad(&e))?),
        Marker::FixStr(_) | Marker::Str8 | Marker::Str16 | Marker::Str32 => {
            let (s, rest) = read_str_from_slice(*buf).map_err(|e| bad(&e))?;
            *buf = rest;
            Value::Str(s)
        }
        Marker::Bin8 | Marker::Bin16 | Marker::Bin32 => {
            let len = read_bin_len(buf).map_err(|e| bad(&e))? as usize;
            if buf.len() < len {
                return Err(DatagramError::Truncated);
            }
            let (data, rest) = buf.split_at(len);
            *buf = rest;
            Value::Bin(data)
        }
        _ => Value::Int(read_int::<i64, _>(buf).map_err(|e| bad(&e))?),
    })
}

/// A frame from one datagram; the error says what is wrong with it.
pub fn decode(mut buf: &[u8]) -> Result<Received, DatagramError> {
    let entries = rmp::decode::read_map_len(&mut buf).map_err(|_| DatagramError::NotAMap)?;
    let (mut id, mut extended, mut remote, mut error, mut fd, mut brs, mut esi) =
        (None, false, false, false, false, false, false);
    let (mut dlc, mut data, mut timestamp) = (None, None, None);
    for _ in 0..entries {
        let Value::Str(key) = value(&mut buf)? else {
            return Err(DatagramError::KeyNotString);
        };
        let v = value(&mut buf)?;
        match (key, v) {
            ("arbitration_id", Value::Int(i)) => id = u32::try_from(i).ok(),
            ("is_extended_id", Value::Bool(b)) => extended = b,
            ("is_remote_frame", Value::Bool(b)) => remote = b,
            ("is_error_frame", Value::Bool(b)) => error = b,
            ("is_fd", Value::Bool(b)) => fd = b,
            ("bitrate_switch", Value::Bool(b)) => brs = b,
            ("error_state_indicator", Value::Bool(b)) => esi = b,
            ("dlc", Value::Int(i)) => dlc = usize::try_from(i).ok(),
            ("data", Value::Bin(d)) => data = Some(d),
            ("timestamp", Value::Float(t)) => timestamp = Some(t),
            ("timestamp", Value::Int(t)) => timestamp = Some(t as f64),
            (_, Value::Nil | Value::Str(_)) => {}
            (key, _) => return Err(DatagramError::FieldType(key.into())),
        }
    }
    if error {
        return Err(DatagramError::ErrorFrame);
    }
    let id = id.ok_or(DatagramError::NoId)?;
    let id = if extended {
        CanId::extended(id)
    } else {
        u16::try_from(id)
            .map_err(|_| FrameError::IdRange(id, 11))
            .and_then(CanId::standard)
    }?;
    let data = data.unwrap_or(&[]);
    let frame = if remote {
        CanFrame::remote(id, dlc.unwrap_or(0))
    } else if fd {
        CanFrame::fd(id, data, brs, esi)
    } else {
        CanFrame::data(id, data)
    }?;
    Ok(Received {
        frame,
        source_time: timestamp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_survive_encoding_and_garbage_is_an_error() {
        let frames = [
            CanFrame::data(CanId::standard(0x123).unwrap(), &[1, 2, 3]).unwrap(),
            CanFrame::remote(CanId::extended(0x1ABC_DEF0).unwrap(), 4).unwrap(),
            CanFrame::fd(CanId::standard(0x7FF).unwrap(), &[9; 64], true, false).unwrap(),
        ];
        for frame in frames {
            let mut buf = Vec::new();
            encode(&frame, 12.5, "239.74.163.2", &mut buf);
            let back = decode(&buf).unwrap();
            assert_eq!((back.frame, back.source_time), (frame, Some(12.5)));
        }
        assert!(decode(b"\x81\xa3abc").is_err());
        assert!(decode(b"").is_err());
    }
}
