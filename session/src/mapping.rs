//! A bus's signals compiled against its DBC and the model: which received
//! frames drive which model inputs, and which model outputs are sent in
//! which frames, every how many frames.

use tandem_can::frame::{CanFrame, CLASSIC_MAX_LEN};
use tandem_config::Timeout;
use tandem_dbc::{Message, Multiplex};
use tandem_e2e as e2e;

/// Whether something sent every `period` frames is due after frame `k`,
/// when the frame written before it was `previous` (none: `k` is the
/// first): a multiple of the period in `previous + 1 ..= k`. After a stall,
/// whose slots wrote nothing, what fell due in them is due once, with frame
/// `k`'s values, not once per slot missed.
pub fn due(period: u64, previous: Option<u64>, k: u64) -> bool {
    let first = previous.map_or(0, |p| p + 1);
    k / period * period >= first
}

/// A received message and the model inputs its signals drive.
#[derive(Clone, Debug)]
pub struct RxMessage {
    /// The DBC message.
    pub message: Message,
    /// (index in `message.signals`, model input index) pairs.
    pub inputs: Vec<(usize, usize)>,
    /// Receive timeout and its policy, if any.
    pub timeout: Option<Timeout>,
    /// Its end-to-end protection, checked on each frame.
    pub protection: Option<e2e::Config>,
    /// The model input receiving each frame's check status.
    pub status: Option<usize>,
}

/// A sent message and the output slots its signals carry.
#[derive(Clone, Debug)]
pub struct TxMessage {
    /// The DBC message.
    pub message: Message,
    /// Sent after every `period`-th frame.
    pub period: u64,
    /// (index in `message.signals`, output slot) pairs.
    pub fields: Vec<(usize, usize)>,
    /// The multiplexor values to send, one frame each per period (`[None]`
    /// for a message without multiplexed fields).
    pub groups: Vec<Option<u64>>,
    /// Its end-to-end protection, written into each frame.
    pub protection: Option<e2e::Config>,
}

impl TxMessage {
    /// The message sending output slots by signal index, every `period`
    /// frames; a frame per multiplexor value among the fields.
    pub fn new(message: Message, period: u64, fields: Vec<(usize, usize)>, protection: Option<e2e::Config>) -> Self {
        let mut groups: Vec<Option<u64>> = Vec::new();
        for &(signal, _) in &fields {
            if let Multiplex::Multiplexed(v) = message.signals[signal].multiplex {
                if !groups.contains(&Some(v)) {
                    groups.push(Some(v));
                }
            }
        }
        if groups.is_empty() {
            groups.push(None);
        }
        TxMessage {
            message,
            period: period.max(1),
            fields,
            groups,
            protection,
        }
    }

    /// The frame carrying `payload` for this message: CAN FD (with bit
    /// rate switch) beyond 8 bytes; none for a length no frame has.
    pub fn frame(&self, payload: &[u8]) -> Option<CanFrame> {
        if payload.len() > CLASSIC_MAX_LEN {
            CanFrame::fd(self.message.id, payload, true, false).ok()
        } else {
            CanFrame::data(self.message.id, payload).ok()
        }
    }
}

/// A received value: model input `input` took `value` at `time` (s since
/// the run's start), carried by received message `message` of its bus.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// Index of the message in [`BusMap::rx`] (for a serial device, 0).
    pub message: u32,
    /// Model input index.
    pub input: u32,
    /// Physical value.
    pub value: f64,
    /// Receive time (s since the run's start).
    pub time: f64,
    /// Whether it shows its message received (not so the check status of
    /// a frame its receiver refused): what resets the message's timeout.
    pub fresh: bool,
}

/// What became of a received frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxOutcome {
    /// Decoded: message index in [`BusMap::rx`].
    Mapped(usize),
    /// No mapped message has its identifier: ignored.
    Unmapped,
    /// A mapped message with the wrong payload length: counted and ignored.
    WrongLength,
    /// A mapped message its receiver refused (its E2E check failed): its
    /// signals are not used.
    Refused(usize),
}

/// One bus's compiled mapping.
#[derive(Clone, Debug, Default)]
pub struct BusMap {
    /// Received messages.
    pub rx: Vec<RxMessage>,
    /// Sent messages.
    pub tx: Vec<TxMessage>,
    /// The model output of each output slot.
    pub tx_outputs: Vec<usize>,
}

impl BusMap {
    /// Decodes `frame`, received at `time`, calling `push` with each
    /// mapped signal's sample once `accept` (given the message's index and
    /// the payload) has accepted it.
    pub fn decode(
        &self,
        frame: &CanFrame,
        time: f64,
        accept: impl FnOnce(usize, &[u8]) -> bool,
        mut push: impl FnMut(Sample),
    ) -> RxOutcome {
        let Some(index) = self.rx.iter().position(|m| m.message.id == frame.id()) else {
            return RxOutcome::Unmapped;
        };
        let rx = &self.rx[index];
        let payload = frame.payload();
        if frame.is_remote() || payload.len() != rx.message.len {
            return RxOutcome::WrongLength;
        }
        if !accept(index, payload) {
            return RxOutcome::Refused(index);
        }
        for &(signal, input) in &rx.inputs {
            let signal = &rx.message.signals[signal];
            if rx.message.carries(signal, payload) {
                push(Sample {
                    message: index as u32,
                    input: input as u32,
                    value: signal.decode(payload),
                    time,
                    fresh: true,
                });
            }
        }
        RxOutcome::Mapped(index)
    }

    /// Encodes the messages due after frame `k` (the frame written before
    /// it being `previous`, see [`due`]), whose output slots hold `values`,
    /// calling `send` with each message's index in [`BusMap::tx`] and
    /// payload (one per multiplexor group; the frame is
    /// [`TxMessage::frame`]). Returns how many values were clamped to their
    /// signal's range.
    pub fn encode_due(
        &self,
        previous: Option<u64>,
        k: u64,
        values: &[f64],
        mut send: impl FnMut(usize, &mut [u8]),
    ) -> u64 {
        let mut clamped = 0;
        for (index, tx) in self.tx.iter().enumerate().filter(|(_, tx)| due(tx.period, previous, k)) {
            let message = &tx.message;
            for &group in &tx.groups {
                let mut payload = [0u8; 64];
                let payload = &mut payload[..message.len];
                if let Some(value) = group {
                    if let Some(mux) = message.signals.iter().find(|s| s.multiplex == Multiplex::Multiplexor) {
                        mux.encode(value as f64 * mux.factor + mux.offset, payload);
                    }
                }
                for &(signal, slot) in &tx.fields {
                    let signal = &message.signals[signal];
                    let in_group = match signal.multiplex {
                        Multiplex::Multiplexed(v) => group == Some(v),
                        _ => true,
                    };
                    if in_group && signal.encode(values[slot], payload) {
                        clamped += 1;
                    }
                }
                send(index, payload);
            }
        }
        clamped
    }
}

#[cfg(test)]
mod due_tests {
    use super::due;

    #[test]
    fn what_fell_due_in_skipped_slots_is_due_once_at_the_next() {
        let sent = |previous: Option<u64>, frames: std::ops::RangeInclusive<u64>| -> Vec<u64> {
            let mut previous = previous;
            frames
                .filter(|&k| {
                    let d = due(10, previous, k);
                    previous = Some(k);
                    d
                })
                .collect()
        };
        assert_eq!(sent(None, 0..=35), [0, 10, 20, 30]);
        // Slots 12 to 33 skipped: 20 and 30 fell in them; sent once, at 34.
        assert!(due(10, Some(11), 34));
        assert!(!due(10, Some(11), 19));
        assert!(due(10, Some(11), 20));
        assert!(!due(10, Some(34), 35));
        assert!(due(10, None, 7), "a first frame after a stall at the start");
    }
}
