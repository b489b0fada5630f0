//! A minimal XCP master over UDP, for tests and benchmarks that drive a
//! slave from Rust: framed commands with their answers, one dynamic DAQ
//! lists, calibration by SET_MTA and DOWNLOAD. DTOs arriving between
//! answers are counted, and kept when asked.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use crate::map::{CHARACTERISTIC_BASE, MEASUREMENT_BASE, VALUE_BYTES};
use crate::packet::{frame, pid, HEADER, MAX_DTO};

/// How long the master waits for a datagram.
const RECEIVE_TIMEOUT: Duration = Duration::from_millis(100);

/// A master connected to one slave over UDP.
pub struct Master {
    socket: UdpSocket,
    ctr: u16,
    /// DTOs received.
    pub dtos: u64,
    /// DTOs received with the overload bit set in their PID.
    pub overloaded: u64,
    /// Every DTO received, when set to `Some`.
    pub kept: Option<Vec<Vec<u8>>>,
}

/// What arrived in one datagram.
pub enum Received {
    /// A command's answer (response or error packet), after any DTOs.
    Answer(Vec<u8>),
    /// DTOs only.
    Data,
    /// Nothing within the timeout.
    Nothing,
}

impl Master {
    /// Connects to the slave at `slave` (CONNECT, normal mode).
    pub fn connect(slave: SocketAddr) -> io::Result<Master> {
        let socket = UdpSocket::bind(if slave.is_ipv4() { "127.0.0.1:0" } else { "[::1]:0" })?;
        socket.set_read_timeout(Some(RECEIVE_TIMEOUT))?;
        socket.connect(slave)?;
        let mut master = Master {
            socket,
            ctr: 0,
            dtos: 0,
            overloaded: 0,
            kept: None,
        };
        master.expect(&[0xFF, 0], "CONNECT")?;
        Ok(master)
    }

    /// Waits up to `timeout` for each datagram from now on (100 ms at
    /// first): longer for commands a slave answers after work of its own,
    /// as a DOWNLOAD that compiles a large diagram again.
    pub fn set_timeout(&mut self, timeout: Duration) -> io::Result<()> {
        self.socket.set_read_timeout(Some(timeout))
    }

    /// Sends one command packet and returns its answer.
    pub fn ask(&mut self, packet: &[u8]) -> io::Result<Vec<u8>> {
        let mut datagram = Vec::with_capacity(HEADER + packet.len());
        frame(self.ctr, packet, &mut datagram);
        self.ctr = self.ctr.wrapping_add(1);
        self.socket.send(&datagram)?;
        loop {
            match self.receive()? {
                Received::Answer(answer) => return Ok(answer),
                Received::Data => {}
                Received::Nothing => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "no answer from the slave"));
                }
            }
        }
    }

    /// Sends `packet` and fails unless it is answered positively.
    fn expect(&mut self, packet: &[u8], what: &str) -> io::Result<Vec<u8>> {
        let answer = self.ask(packet)?;
        if answer.first() != Some(&pid::RES) {
            return Err(io::Error::other(format!("{what} answered {answer:02X?}")));
        }
        Ok(answer)
    }

    /// Reads one datagram, counting its DTOs.
    pub fn receive(&mut self) -> io::Result<Received> {
        let mut buf = [0u8; 1500];
        let n = match self.socket.recv(&mut buf) {
            Ok(n) => n,
            Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut) => {
                return Ok(Received::Nothing);
            }
            Err(e) => return Err(e),
        };
        let mut answer = None;
        let mut at = 0;
        while at + HEADER <= n {
            let len = u16::from_le_bytes([buf[at], buf[at + 1]]) as usize;
            let Some(packet) = buf.get(at + HEADER..at + HEADER + len).filter(|p| !p.is_empty()) else {
                return Err(io::Error::new(io::ErrorKind::InvalidData, "a cut packet"));
            };
            if packet[0] >= pid::ERR {
                answer = Some(packet.to_vec());
            } else {
                self.dtos += 1;
                if packet[0] & crate::daq::OVERLOAD_PID_BIT != 0 {
                    self.overloaded += 1;
                }
                if let Some(kept) = self.kept.as_mut() {
                    kept.push(packet.to_vec());
                }
            }
            at += HEADER + len;
        }
        Ok(answer.map_or(Received::Data, Received::Answer))
    }

    /// Makes DAQ lists of `(event, measurement indices)`, timestamped, in
    /// as many ODTs each as its entries need, and starts them; returns
    /// each list's first PID (its first ODT's absolute number).
    pub fn start_daq(&mut self, lists: &[(u16, &[u32])]) -> io::Result<Vec<u8>> {
        // A DTO holds the PID, the first one a 4-byte timestamp, and 8
        // bytes per entry.
        let per_odt = (MAX_DTO - 1 - crate::daq::TIMESTAMP_BYTES) / VALUE_BYTES as usize;
        let odts: Vec<Vec<&[u32]>> = lists.iter().map(|(_, m)| m.chunks(per_odt).collect()).collect();
        self.expect(&[0xD6], "FREE_DAQ")?;
        let count = (lists.len() as u16).to_le_bytes();
        self.expect(&[0xD5, 0, count[0], count[1]], "ALLOC_DAQ")?;
        for (d, list) in odts.iter().enumerate() {
            let d = (d as u16).to_le_bytes();
            self.expect(&[0xD4, 0, d[0], d[1], list.len() as u8], "ALLOC_ODT")?;
        }
        for (d, list) in odts.iter().enumerate() {
            let d = (d as u16).to_le_bytes();
            for (i, odt) in list.iter().enumerate() {
                self.expect(&[0xD3, 0, d[0], d[1], i as u8, odt.len() as u8], "ALLOC_ODT_ENTRY")?;
            }
        }
        let mut first_pids = Vec::with_capacity(lists.len());
        for (d, (list, (event, _))) in odts.iter().zip(lists).enumerate() {
            let d = (d as u16).to_le_bytes();
            for (i, odt) in list.iter().enumerate() {
                self.expect(&[0xE2, 0, d[0], d[1], i as u8, 0], "SET_DAQ_PTR")?;
                for &m in odt.iter() {
                    let mut write = vec![0xE1, 0xFF, VALUE_BYTES as u8, 0];
                    write.extend_from_slice(&(MEASUREMENT_BASE + VALUE_BYTES * m).to_le_bytes());
                    self.expect(&write, "WRITE_DAQ")?;
                }
            }
            let e = event.to_le_bytes();
            self.expect(&[0xE0, 0x10, d[0], d[1], e[0], e[1], 1, 0], "SET_DAQ_LIST_MODE")?;
            let selected = self.expect(&[0xDE, 2, d[0], d[1]], "START_STOP_DAQ_LIST")?;
            first_pids.push(selected.get(1).copied().unwrap_or(0));
        }
        self.expect(&[0xDD, 1], "START_STOP_SYNCH")?;
        Ok(first_pids)
    }

    /// Stops every DAQ list.
    pub fn stop_daq(&mut self) -> io::Result<()> {
        self.expect(&[0xDD, 0], "START_STOP_SYNCH").map(drop)
    }

    /// Writes `value` to characteristic `index`; the slave's answer.
    pub fn calibrate(&mut self, index: u32, value: f64) -> io::Result<Vec<u8>> {
        let mut mta = vec![0xF6, 0, 0, 0];
        mta.extend_from_slice(&(CHARACTERISTIC_BASE + VALUE_BYTES * index).to_le_bytes());
        self.expect(&mta, "SET_MTA")?;
        let mut download = vec![0xF0, VALUE_BYTES as u8];
        download.extend_from_slice(&value.to_le_bytes());
        self.ask(&download)
    }

    /// Disconnects.
    pub fn disconnect(mut self) -> io::Result<()> {
        self.expect(&[0xFE], "DISCONNECT").map(drop)
    }
}
