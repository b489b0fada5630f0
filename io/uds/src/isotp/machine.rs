//! The ISO-TP protocol without I/O: one transmission and one reception
//! under way at a time, each in both directions independently.

use tandem_can::frame::{CanFrame, FD_LENGTHS, FD_MAX_LEN};

use super::config::{Addressing, Config, ConfigError};

/// Flow status: continue to send.
const FS_CTS: u8 = 0;
/// Flow status: wait.
const FS_WAIT: u8 = 1;
/// Flow status: overflow.
const FS_OVFLW: u8 = 2;
/// The padding byte CAN FD frames get when none is configured (ISO 15765-2:2016, 10.4.2.3).
const FD_DEFAULT_PADDING: u8 = 0xCC;

/// The separation time an STmin byte asks for, in nanoseconds; reserved
/// values mean 127 ms, as the standard says.
pub fn st_min_ns(st_min: u8) -> u64 {
    match st_min {
        0x00..=0x7F => u64::from(st_min) * 1_000_000,
        0xF1..=0xF9 => u64::from(st_min - 0xF0) * 100_000,
        _ => 127_000_000,
    }
}

/// What a received frame did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A whole message of this many bytes arrived; [`Machine::message`]
    /// holds it until the next single or first frame.
    Received(usize),
    /// Something went wrong (see [`Fault`]).
    Fault(Fault),
}

/// A frame ignored, a reception or transmission aborted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// A frame with a PCI type no frame has (ignored).
    #[error("unknown protocol control information {0:#04X}; frame ignored")]
    UnknownPci(u8),
    /// A frame whose length does not match its PCI: too short, an SF_DL
    /// of 0 or beyond the frame, an FF_DL a single frame could carry (ignored).
    #[error("frame length does not match its protocol control information; frame ignored")]
    BadLength,
    /// A consecutive frame with no reception under way (ignored).
    #[error("consecutive frame without a first frame; frame ignored")]
    UnexpectedConsecutive,
    /// A flow control with no transmission waiting for one (ignored).
    #[error("flow control while not waiting for one; frame ignored")]
    UnexpectedFlowControl,
    /// A consecutive frame out of sequence (reception aborted).
    #[error("consecutive frame {got} where {expected} was due; reception aborted")]
    WrongSequence {
        /// The sequence number due.
        expected: u8,
        /// The one received.
        got: u8,
    },
    /// A single or first frame arrived mid-reception (the old one aborted).
    #[error("new message began mid-reception; the unfinished one was dropped")]
    Interrupted,
    /// A message longer than the buffer (a first frame was answered with FC.OVFLW).
    #[error("message of {len} bytes exceeds max_len {max}; refused")]
    TooLong {
        /// The length announced.
        len: u64,
        /// [`Config::max_len`].
        max: usize,
    },
    /// N_Cr expired: no consecutive frame in time (reception aborted).
    #[error("N_Cr timeout: no consecutive frame in time; reception aborted")]
    TimeoutCr,
    /// N_Bs expired: no flow control in time (transmission aborted).
    #[error("N_Bs timeout: no flow control in time; transmission aborted")]
    TimeoutBs,
    /// The receiver answered FC.OVFLW (transmission aborted).
    #[error("receiver has no room for the message (FC.OVFLW); transmission aborted")]
    PeerOverflow,
    /// A flow control with a reserved flow status (transmission aborted).
    #[error("flow control with invalid flow status {0}; transmission aborted")]
    InvalidFlowStatus(u8),
}

impl Fault {
    /// Whether it ended this node's transmission.
    pub fn aborts_transmission(self) -> bool {
        matches!(
            self,
            Fault::TimeoutBs | Fault::PeerOverflow | Fault::InvalidFlowStatus(_)
        )
    }
}

/// Messages and faults since the machine was built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Messages received whole.
    pub received: u64,
    /// Messages sent whole.
    pub sent: u64,
    /// Frames ignored as the standard says.
    pub ignored: u64,
    /// Receptions aborted (sequence error, N_Cr, interrupted, too long).
    pub rx_aborted: u64,
    /// Transmissions aborted (N_Bs, FC.OVFLW, invalid flow status).
    pub tx_aborted: u64,
}

/// A message can not be sent now.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// A transmission is still under way.
    #[error("a transmission is under way")]
    Busy,
    /// ISO-TP carries no empty message.
    #[error("empty message")]
    Empty,
    /// Longer than [`Config::max_len`].
    #[error("message of {len} bytes exceeds max_len {max}")]
    TooLong {
        /// Its length.
        len: usize,
        /// The bound.
        max: usize,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tx {
    Idle,
    Single,
    First,
    WaitFc {
        deadline: u64,
    },
    Consecutive {
        due: u64,
        sn: u8,
        block_left: u8,
        st_ns: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rx {
    Idle,
    Receiving {
        sn: u8,
        rx_dl: usize,
        deadline: u64,
        in_block: u8,
    },
}

/// One ISO-TP node's protocol state: see the [module](super) documentation.
pub struct Machine {
    config: Config,
    tx: Tx,
    tx_buf: Vec<u8>,
    tx_len: usize,
    tx_pos: usize,
    /// The sequence number the transmission continues with after a flow control.
    next_sn: u8,
    rx: Rx,
    rx_buf: Vec<u8>,
    rx_len: usize,
    rx_pos: usize,
    message_len: usize,
    pending_fc: Option<u8>,
    counts: Counts,
}

impl Machine {
    /// A machine for `config`, its buffers allocated.
    pub fn new(config: Config) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Machine {
            config,
            tx: Tx::Idle,
            tx_buf: vec![0; config.max_len],
            tx_len: 0,
            tx_pos: 0,
            next_sn: 1,
            rx: Rx::Idle,
            rx_buf: vec![0; config.max_len],
            rx_len: 0,
            rx_pos: 0,
            message_len: 0,
            pending_fc: None,
            counts: Counts::default(),
        })
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Messages and faults so far.
    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// Whether a transmission is under way.
    pub fn is_sending(&self) -> bool {
        self.tx != Tx::Idle
    }

    /// The last message received whole (see [`Event::Received`]).
    pub fn message(&self) -> &[u8] {
        &self.rx_buf[..self.message_len]
    }

    /// Starts sending `message`: [`Machine::transmit`] gives its frames.
    pub fn send(&mut self, message: &[u8]) -> Result<(), SendError> {
        if self.is_sending() {
            return Err(SendError::Busy);
        }
        if message.is_empty() {
            return Err(SendError::Empty);
        }
        if message.len() > self.config.max_len {
            return Err(SendError::TooLong {
                len: message.len(),
                max: self.config.max_len,
            });
        }
        self.tx_buf[..message.len()].copy_from_slice(message);
        self.tx_len = message.len();
        self.tx_pos = 0;
        self.tx = if message.len() <= self.single_capacity() {
            Tx::Single
        } else {
            Tx::First
        };
        Ok(())
    }

    /// Gives up the message under way, if any.
    pub fn cancel_send(&mut self) {
        self.tx = Tx::Idle;
    }

    fn single_capacity(&self) -> usize {
        let address = self.config.addressing.len();
        if self.config.tx_dl == 8 {
            7 - address
        } else {
            self.config.tx_dl - 2 - address
        }
    }

    /// When [`Machine::transmit`] or [`Machine::expire`] next has work, in
    /// ns (at or before `now` means now); `None` when idle.
    pub fn deadline(&self) -> Option<u64> {
        let tx = match self.tx {
            Tx::Idle => None,
            Tx::Single | Tx::First => Some(0),
            Tx::WaitFc { deadline } => Some(deadline),
            Tx::Consecutive { due, .. } => Some(due),
        };
        let rx = match self.rx {
            Rx::Idle => None,
            Rx::Receiving { deadline, .. } => Some(deadline),
        };
        let fc = self.pending_fc.map(|_| 0);
        [tx, rx, fc].into_iter().flatten().min()
    }

    /// The next frame to send at `now`, if one is due: a flow control this
    /// node owes first, then the transmission's next frame.
    pub fn transmit(&mut self, now: u64) -> Option<CanFrame> {
        if let Some(status) = self.pending_fc.take() {
            if let Rx::Receiving { deadline, .. } = &mut self.rx {
                *deadline = now + self.config.n_cr_ns;
            }
            let (bs, st) = (self.config.block_size, self.config.st_min);
            return Some(self.frame(&[0x30 | status, bs, st], &[]));
        }
        let address = self.config.addressing.len();
        let dl = self.config.tx_dl;
        match self.tx {
            Tx::Idle | Tx::WaitFc { .. } => None,
            Tx::Single => {
                self.tx = Tx::Idle;
                self.counts.sent += 1;
                let len = self.tx_len;
                let frame = if address + 1 + len <= 8 {
                    self.frame(&[len as u8], &self.tx_buf[..len])
                } else {
                    self.frame(&[0, len as u8], &self.tx_buf[..len])
                };
                Some(frame)
            }
            Tx::First => {
                let len = self.tx_len;
                let frame = if len <= 0xFFF {
                    let take = dl - address - 2;
                    self.tx_pos = take;
                    self.frame(&[0x10 | (len >> 8) as u8, len as u8], &self.tx_buf[..take])
                } else {
                    let take = dl - address - 6;
                    self.tx_pos = take;
                    let [a, b, c, d] = (len as u32).to_be_bytes();
                    self.frame(&[0x10, 0, a, b, c, d], &self.tx_buf[..take])
                };
                self.next_sn = 1;
                self.tx = Tx::WaitFc {
                    deadline: now + self.config.n_bs_ns,
                };
                Some(frame)
            }
            Tx::Consecutive {
                due,
                sn,
                block_left,
                st_ns,
            } => {
                if now < due {
                    return None;
                }
                let take = (dl - address - 1).min(self.tx_len - self.tx_pos);
                let start = self.tx_pos;
                let frame = self.frame(&[0x20 | sn], &self.tx_buf[start..start + take]);
                self.tx_pos += take;
                self.tx = if self.tx_pos == self.tx_len {
                    self.counts.sent += 1;
                    Tx::Idle
                } else if block_left == 1 {
                    Tx::WaitFc {
                        deadline: now + self.config.n_bs_ns,
                    }
                } else {
                    Tx::Consecutive {
                        due: now + st_ns,
                        sn: (sn + 1) & 0xF,
                        block_left: block_left.saturating_sub(1),
                        st_ns,
                    }
                };
                if let Tx::WaitFc { .. } = self.tx {
                    self.next_sn = (sn + 1) & 0xF;
                }
                Some(frame)
            }
        }
    }

    /// Aborts what has timed out by `now` (N_Bs, N_Cr), one at a time.
    pub fn expire(&mut self, now: u64) -> Option<Fault> {
        if let Tx::WaitFc { deadline } = self.tx {
            if now >= deadline {
                self.tx = Tx::Idle;
                self.counts.tx_aborted += 1;
                return Some(Fault::TimeoutBs);
            }
        }
        if let Rx::Receiving { deadline, .. } = self.rx {
            if now >= deadline && self.pending_fc.is_none() {
                self.rx = Rx::Idle;
                self.counts.rx_aborted += 1;
                return Some(Fault::TimeoutCr);
            }
        }
        None
    }

    /// Takes a frame off the bus at `now`. Frames with another identifier,
    /// or another address byte under extended addressing, are not this
    /// node's and pass without a trace.
    pub fn on_frame(&mut self, frame: &CanFrame, now: u64) -> Option<Event> {
        if frame.id() != self.config.rx_id || frame.is_remote() {
            return None;
        }
        let mut data = frame.payload();
        if let Addressing::Extended { rx, .. } = self.config.addressing {
            match data.split_first() {
                Some((&address, rest)) if address == rx => data = rest,
                Some(_) => return None,
                None => return self.ignore(Fault::BadLength),
            }
        }
        let Some(&pci) = data.first() else {
            return self.ignore(Fault::BadLength);
        };
        match pci >> 4 {
            0 => self.on_single(data, frame.len()),
            1 => self.on_first(data, frame.len(), now),
            2 => self.on_consecutive(data, now),
            3 => self.on_flow_control(data, now),
            _ => self.ignore(Fault::UnknownPci(pci)),
        }
    }

    fn ignore(&mut self, fault: Fault) -> Option<Event> {
        self.counts.ignored += 1;
        Some(Event::Fault(fault))
    }

    /// Drops a reception under way because a new message began.
    fn interrupt(&mut self) {
        if self.rx != Rx::Idle {
            self.rx = Rx::Idle;
            self.counts.rx_aborted += 1;
        }
    }

    fn on_single(&mut self, data: &[u8], can_dl: usize) -> Option<Event> {
        let (len, body) = if can_dl <= 8 {
            (usize::from(data[0] & 0xF), &data[1..])
        } else {
            match data {
                [0, len, body @ ..] => (usize::from(*len), body),
                _ => return self.ignore(Fault::BadLength),
            }
        };
        if len == 0 || len > body.len() {
            return self.ignore(Fault::BadLength);
        }
        self.interrupt();
        if len > self.config.max_len {
            self.counts.rx_aborted += 1;
            return Some(Event::Fault(Fault::TooLong {
                len: len as u64,
                max: self.config.max_len,
            }));
        }
        self.rx_buf[..len].copy_from_slice(&body[..len]);
        self.message_len = len;
        self.counts.received += 1;
        Some(Event::Received(len))
    }

    fn on_first(&mut self, data: &[u8], rx_dl: usize, now: u64) -> Option<Event> {
        let address = self.config.addressing.len();
        let (len, body) = match data {
            [0x10, 0, a, b, c, d, body @ ..] => (u64::from(u32::from_be_bytes([*a, *b, *c, *d])), body),
            [high, low, body @ ..] => (u64::from(high & 0xF) << 8 | u64::from(*low), body),
            _ => return self.ignore(Fault::BadLength),
        };
        let escaped = data[0] == 0x10 && data.get(1) == Some(&0);
        let min = if rx_dl == 8 {
            8 - address
        } else {
            rx_dl.saturating_sub(1 + address)
        };
        if rx_dl < 8 || (escaped && len <= 0xFFF) || len < min as u64 || body.len() as u64 >= len {
            return self.ignore(Fault::BadLength);
        }
        self.interrupt();
        if len > self.config.max_len as u64 {
            self.pending_fc = Some(FS_OVFLW);
            self.counts.rx_aborted += 1;
            return Some(Event::Fault(Fault::TooLong {
                len,
                max: self.config.max_len,
            }));
        }
        self.rx_buf[..body.len()].copy_from_slice(body);
        self.rx_len = len as usize;
        self.rx_pos = body.len();
        self.rx = Rx::Receiving {
            sn: 1,
            rx_dl,
            deadline: now + self.config.n_cr_ns,
            in_block: 0,
        };
        self.pending_fc = Some(FS_CTS);
        None
    }

    fn on_consecutive(&mut self, data: &[u8], now: u64) -> Option<Event> {
        let Rx::Receiving {
            sn, rx_dl, in_block, ..
        } = self.rx
        else {
            return self.ignore(Fault::UnexpectedConsecutive);
        };
        let got = data[0] & 0xF;
        if got != sn {
            self.rx = Rx::Idle;
            self.counts.rx_aborted += 1;
            return Some(Event::Fault(Fault::WrongSequence { expected: sn, got }));
        }
        let take = (rx_dl - self.config.addressing.len() - 1).min(self.rx_len - self.rx_pos);
        if data.len() - 1 < take {
            return self.ignore(Fault::BadLength);
        }
        self.rx_buf[self.rx_pos..self.rx_pos + take].copy_from_slice(&data[1..=take]);
        self.rx_pos += take;
        if self.rx_pos == self.rx_len {
            self.rx = Rx::Idle;
            self.message_len = self.rx_len;
            self.counts.received += 1;
            return Some(Event::Received(self.rx_len));
        }
        let in_block = in_block.saturating_add(1);
        let block_done = self.config.block_size != 0 && in_block >= self.config.block_size;
        if block_done {
            self.pending_fc = Some(FS_CTS);
        }
        self.rx = Rx::Receiving {
            sn: (sn + 1) & 0xF,
            rx_dl,
            deadline: now + self.config.n_cr_ns,
            in_block: if block_done { 0 } else { in_block },
        };
        None
    }

    fn on_flow_control(&mut self, data: &[u8], now: u64) -> Option<Event> {
        let Tx::WaitFc { .. } = self.tx else {
            return self.ignore(Fault::UnexpectedFlowControl);
        };
        let [pci, bs, st, ..] = *data else {
            return self.ignore(Fault::BadLength);
        };
        let fault = match pci & 0xF {
            FS_CTS => {
                self.tx = Tx::Consecutive {
                    due: now,
                    sn: self.next_sn,
                    block_left: bs,
                    st_ns: st_min_ns(st),
                };
                return None;
            }
            FS_WAIT => {
                self.tx = Tx::WaitFc {
                    deadline: now + self.config.n_bs_ns,
                };
                return None;
            }
            FS_OVFLW => Fault::PeerOverflow,
            status => Fault::InvalidFlowStatus(status),
        };
        self.tx = Tx::Idle;
        self.counts.tx_aborted += 1;
        Some(Event::Fault(fault))
    }

    /// A frame of `pci` then `body`, behind the address byte, padded as configured.
    fn frame(&self, pci: &[u8], body: &[u8]) -> CanFrame {
        let mut bytes = [0u8; FD_MAX_LEN];
        let mut len = 0;
        if let Addressing::Extended { tx, .. } = self.config.addressing {
            bytes[0] = tx;
            len = 1;
        }
        bytes[len..len + pci.len()].copy_from_slice(pci);
        len += pci.len();
        bytes[len..len + body.len()].copy_from_slice(body);
        len += body.len();
        let mut padded = len;
        if self.config.padding.is_some() {
            padded = padded.max(8);
        }
        if self.config.fd {
            padded = FD_LENGTHS.into_iter().find(|&l| l >= padded).unwrap_or(FD_MAX_LEN);
        }
        let pad = self.config.padding.unwrap_or(FD_DEFAULT_PADDING);
        bytes[len..padded].fill(pad);
        let built = if self.config.fd {
            CanFrame::fd(self.config.tx_id, &bytes[..padded], self.config.brs, false)
        } else {
            CanFrame::data(self.config.tx_id, &bytes[..padded])
        };
        built.expect("validated tx_dl keeps every frame at a valid length")
    }
}
