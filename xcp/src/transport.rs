//! XCP on Ethernet servers: one thread for UDP and one for TCP, on the
//! same address, sharing one slave. One master at a time: while a master
//! is connected, another's CONNECT is answered `ERR_CMD_BUSY` (the slave
//! cannot take the command now; XCP 1.x Part 2 §1.6.1.1 names no lock for
//! a second master) unless the first has sent nothing for
//! [`TAKEOVER_AFTER`] (a UDP master that vanished without DISCONNECT).
//! That answer carries a counter (CTR) of its own, not the next value of
//! the connected master's. A TCP master's connection closing disconnects
//! it.
//!
//! These threads are not real-time: they lock the shared slave per packet
//! and allocate their buffers once.

use std::io::{self, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::packet::{self, frame, pid, ErrorCode, HEADER, MAX_CTO, MAX_DTO};
use crate::slave::{Slave, Target};

/// A connected master silent this long loses the slave to another's
/// CONNECT.
pub const TAKEOVER_AFTER: Duration = Duration::from_secs(10);
/// How long a server thread waits for a packet before sending DTOs.
const POLL: Duration = Duration::from_millis(1);
/// The largest UDP datagram sent: one Ethernet frame's UDP payload.
const DATAGRAM: usize = 1472;

/// Who holds the slave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Master {
    Udp(SocketAddr),
    Tcp(u64),
}

struct Shared<T> {
    slave: Slave<T>,
    master: Option<(Master, Instant)>,
    daq_started: bool,
    dtos_sent: u64,
    ctr: u16,
    reply: Vec<u8>,
    dto: Vec<u8>,
}

impl<T: Target> Shared<T> {
    /// Runs one command from `from`, appending the framed answer to `out`.
    fn command(&mut self, from: Master, packet: &[u8], out: &mut Vec<u8>) {
        let now = Instant::now();
        let is_connect = packet.first() == Some(&0xFF);
        match self.master {
            Some((m, last)) if m != from => {
                if !is_connect {
                    return;
                }
                if now.duration_since(last) < TAKEOVER_AFTER {
                    busy(out);
                    return;
                }
            }
            _ => {}
        }
        let mut reply = std::mem::take(&mut self.reply);
        reply.clear();
        self.slave.handle(packet, &mut reply);
        self.daq_started |= self.slave.daq_running();
        if !reply.is_empty() {
            self.answer(&reply, out);
        }
        self.reply = reply;
        self.master = self.slave.connected().then_some((from, now));
    }

    /// Frames `packet` to the master with the next value of its counter.
    fn answer(&mut self, packet: &[u8], out: &mut Vec<u8>) {
        frame(self.ctr, packet, out);
        self.ctr = self.ctr.wrapping_add(1);
    }

    /// The master `from` is gone: its session ends.
    fn gone(&mut self, from: Master) {
        if self.master.is_some_and(|(m, _)| m == from) {
            self.slave.handle(&[0xFE], &mut Vec::new());
            self.master = None;
        }
    }

    /// Frames the waiting DTOs for `to` into `out`, up to `limit` bytes;
    /// false when none are left.
    fn dtos(&mut self, to: Master, out: &mut Vec<u8>, limit: usize) -> bool {
        if self.master.is_none_or(|(m, _)| m != to) {
            return false;
        }
        loop {
            if self.dto.is_empty() && !self.slave.next_dto(&mut self.dto) {
                return false;
            }
            if out.len() + HEADER + self.dto.len() > limit && !out.is_empty() {
                return true;
            }
            let dto = std::mem::take(&mut self.dto);
            self.dtos_sent += 1;
            frame(self.ctr, &dto, out);
            self.ctr = self.ctr.wrapping_add(1);
            self.dto = dto;
            self.dto.clear();
        }
    }
}

/// Frames `ERR_CMD_BUSY` to a master that is not the connected one. It has
/// no session with the slave, so the answer is the first packet of a count
/// of its own (CTR 0): the connected master's counter runs on without a
/// gap.
fn busy(out: &mut Vec<u8>) {
    frame(0, &[pid::ERR, ErrorCode::CmdBusy as u8], out);
}

/// What a server's slave is doing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Status {
    /// A master is connected.
    pub connected: bool,
    /// A DAQ list runs.
    pub daq_running: bool,
    /// A DAQ list has run since the server started (it stays true once a
    /// master has started DAQ, however briefly).
    pub daq_started: bool,
    /// Bytes of DTOs sampled and not yet sent.
    pub pending_bytes: usize,
    /// DTOs sent to masters.
    pub dtos_sent: u64,
    /// DAQ samples dropped because the DTO ring was full.
    pub overruns: u64,
}

/// Reads a server's [`Status`].
type StatusReader = Box<dyn Fn() -> Status + Send + Sync>;

/// Running UDP and TCP servers of one slave.
pub struct Server {
    status: StatusReader,
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    udp: SocketAddr,
    tcp: SocketAddr,
}

/// A server's UDP and TCP sockets, bound and not yet served: their
/// addresses are known before the slave (whose A2L names them) is made.
pub struct Sockets {
    udp: UdpSocket,
    tcp: TcpListener,
}

impl Sockets {
    /// Binds UDP and TCP on `addr` (port 0: any free port for each; the
    /// same port for both when `addr`'s port is given).
    pub fn bind(addr: SocketAddr) -> io::Result<Sockets> {
        Ok(Sockets {
            udp: UdpSocket::bind(addr)?,
            tcp: TcpListener::bind(addr)?,
        })
    }

    /// The UDP socket's address.
    pub fn udp_addr(&self) -> io::Result<SocketAddr> {
        self.udp.local_addr()
    }

    /// The TCP socket's address.
    pub fn tcp_addr(&self) -> io::Result<SocketAddr> {
        self.tcp.local_addr()
    }

    /// Serves `slave` on these sockets.
    pub fn serve<T: Target + Send + 'static>(self, slave: Slave<T>) -> io::Result<Server> {
        Server::serve(slave, self)
    }
}

impl Server {
    /// Serves `slave` over UDP and TCP on `addr` (port 0: any free port,
    /// the same for both when `addr`'s port is given).
    pub fn start<T: Target + Send + 'static>(slave: Slave<T>, addr: SocketAddr) -> io::Result<Server> {
        Sockets::bind(addr)?.serve(slave)
    }

    fn serve<T: Target + Send + 'static>(slave: Slave<T>, sockets: Sockets) -> io::Result<Server> {
        let Sockets { udp, tcp } = sockets;
        udp.set_read_timeout(Some(POLL))?;
        tcp.set_nonblocking(true)?;
        let shared = Arc::new(Mutex::new(Shared {
            slave,
            master: None,
            daq_started: false,
            dtos_sent: 0,
            ctr: 0,
            reply: Vec::with_capacity(MAX_CTO),
            dto: Vec::with_capacity(MAX_DTO),
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let (udp_addr, tcp_addr) = (udp.local_addr()?, tcp.local_addr()?);
        let status: StatusReader = Box::new({
            let shared = shared.clone();
            move || {
                let s = lock(&shared);
                Status {
                    connected: s.slave.connected(),
                    daq_running: s.slave.daq_running(),
                    daq_started: s.daq_started,
                    pending_bytes: s.slave.pending_bytes(),
                    dtos_sent: s.dtos_sent,
                    overruns: s.slave.overruns(),
                }
            }
        });
        let threads = vec![
            spawn("xcp-udp", {
                let (shared, stop) = (shared.clone(), stop.clone());
                move || serve_udp(udp, &shared, &stop)
            })?,
            spawn("xcp-tcp", {
                let stop = stop.clone();
                move || serve_tcp(tcp, &shared, &stop)
            })?,
        ];
        Ok(Server {
            status,
            stop,
            threads,
            udp: udp_addr,
            tcp: tcp_addr,
        })
    }

    /// The UDP server's address.
    pub fn udp_addr(&self) -> SocketAddr {
        self.udp
    }

    /// The TCP server's address.
    pub fn tcp_addr(&self) -> SocketAddr {
        self.tcp
    }

    /// What the slave is doing now (takes the slave's lock, as a command
    /// does).
    pub fn status(&self) -> Status {
        (self.status)()
    }

    /// Stops both threads and waits for them.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.halt();
    }
}

fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new().name(name.into()).spawn(f)
}

/// The shared slave, even if a thread panicked holding it.
fn lock<T>(shared: &Mutex<Shared<T>>) -> MutexGuard<'_, Shared<T>> {
    shared.lock().unwrap_or_else(|e| e.into_inner())
}

fn serve_udp<T: Target>(socket: UdpSocket, shared: &Mutex<Shared<T>>, stop: &AtomicBool) {
    let mut datagram = vec![0u8; 65536];
    let mut out = Vec::with_capacity(65536);
    while !stop.load(Ordering::Relaxed) {
        if let Ok((n, from)) = socket.recv_from(&mut datagram) {
            let mut s = lock(shared);
            out.clear();
            for p in packet::datagram_packets(&datagram[..n]) {
                match p {
                    Ok(p) => s.command(Master::Udp(from), p, &mut out),
                    Err(_) if s.master.is_some_and(|(m, _)| m == Master::Udp(from)) => {
                        s.answer(&[pid::ERR, ErrorCode::CmdSyntax as u8], &mut out);
                    }
                    Err(_) => {}
                }
            }
            drop(s);
            if !out.is_empty() {
                let _ = socket.send_to(&out, from);
            }
        }
        let to = lock(shared).master.map(|(m, _)| m);
        if let Some(Master::Udp(to)) = to {
            loop {
                out.clear();
                let more = lock(shared).dtos(Master::Udp(to), &mut out, DATAGRAM);
                if !out.is_empty() {
                    let _ = socket.send_to(&out, to);
                }
                if !more {
                    break;
                }
            }
        }
    }
}

/// One TCP master's connection.
struct Connection {
    stream: TcpStream,
    id: u64,
    buf: Vec<u8>,
    used: usize,
}

fn serve_tcp<T: Target>(listener: TcpListener, shared: &Mutex<Shared<T>>, stop: &AtomicBool) {
    let mut current: Option<Connection> = None;
    let mut next_id = 0u64;
    let mut out = Vec::with_capacity(65536);
    while !stop.load(Ordering::Relaxed) {
        if let Ok((stream, _)) = listener.accept() {
            next_id += 1;
            if current.is_none() && stream.set_nonblocking(false).is_ok() {
                let _ = stream.set_read_timeout(Some(POLL));
                let _ = stream.set_nodelay(true);
                current = Some(Connection {
                    stream,
                    id: next_id,
                    buf: vec![0; 4 * (HEADER + MAX_CTO)],
                    used: 0,
                });
            } else {
                refuse(stream);
            }
        }
        let Some(c) = current.as_mut() else {
            std::thread::sleep(POLL);
            continue;
        };
        let closed = match c.stream.read(&mut c.buf[c.used..]) {
            Ok(0) => true,
            Ok(n) => {
                c.used += n;
                !commands(c, shared, &mut out)
            }
            Err(e) => !matches!(
                e.kind(),
                ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
            ),
        };
        let mut sent = true;
        if !out.is_empty() {
            sent = c.stream.write_all(&out).is_ok();
            out.clear();
        }
        while sent && lock(shared).dtos(Master::Tcp(c.id), &mut out, 64 * 1024) {
            sent = c.stream.write_all(&out).is_ok();
            out.clear();
        }
        if sent && !out.is_empty() {
            sent = c.stream.write_all(&out).is_ok();
            out.clear();
        }
        if closed || !sent {
            lock(shared).gone(Master::Tcp(c.id));
            current = None;
        }
    }
}

/// Runs the whole packets in `c`'s buffer; false when the stream cannot
/// be framed any more (the connection is dropped).
fn commands<T: Target>(c: &mut Connection, shared: &Mutex<Shared<T>>, out: &mut Vec<u8>) -> bool {
    let mut at = 0;
    let mut s = lock(shared);
    let ok = loop {
        match packet::next_packet(&c.buf[at..c.used], at) {
            Ok(Some((p, used))) => {
                s.command(Master::Tcp(c.id), p, out);
                at += used;
            }
            Ok(None) => break true,
            Err(_) => {
                s.answer(&[pid::ERR, ErrorCode::CmdSyntax as u8], out);
                break false;
            }
        }
    };
    c.buf.copy_within(at..c.used, 0);
    c.used -= at;
    ok
}

/// Answers a second TCP connection's CONNECT busy and closes it: the
/// server serves one connection at a time.
fn refuse(mut stream: TcpStream) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let mut buf = [0u8; HEADER + MAX_CTO];
    let mut used = 0;
    while used < buf.len() {
        match stream.read(&mut buf[used..]) {
            Ok(n) if n > 0 => used += n,
            _ => break,
        }
        if let Ok(Some((p, _))) = packet::next_packet(&buf[..used], 0) {
            if p.first() == Some(&0xFF) {
                let mut out = Vec::new();
                busy(&mut out);
                let _ = stream.write_all(&out);
            }
            break;
        }
    }
}
