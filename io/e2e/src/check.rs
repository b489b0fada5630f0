//! The receiving side: each frame's status, the counter state machine, and
//! the per-message counts of each status.

use super::config::{Config, ConfigError};
use super::profile::{self, CheckError};

/// What a receiver concludes from one cycle's frame (AUTOSAR's
/// `E2E_PxxCheckStatusType` of profiles 4, 5 and 11).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckStatus {
    /// Correct, and the counter advanced by exactly 1 (or this is the
    /// first correct frame, or plain protection without a counter).
    Ok,
    /// Correct, and the counter advanced by 2 to the maximum delta:
    /// `lost` frames went missing in between.
    OkSomeLost {
        /// How many counter values were skipped.
        lost: u16,
    },
    /// Correct, but the counter did not advance: the same frame again.
    Repeated,
    /// Correct, but the counter jumped beyond the maximum delta.
    WrongSequence,
    /// The frame is corrupt; the counter state is unchanged.
    Error(CheckError),
    /// No frame arrived in this cycle: the receiver's caller records it
    /// (a checker sees only frames), and the state is unchanged.
    NoNewData,
}

/// The counter state machine every checker shares: compares each correct
/// frame's counter with the last one's.
#[derive(Clone, Copy, Debug)]
pub(super) struct Sequence {
    modulus: u32,
    max_delta: u32,
    last: Option<u32>,
}

impl Sequence {
    /// A receiver of counters cycling through `0..modulus`, accepting steps
    /// up to `max_delta`, that has seen no frame yet.
    pub fn new(modulus: u32, max_delta: u32) -> Self {
        Sequence {
            modulus,
            max_delta,
            last: None,
        }
    }

    /// The status of a correct frame carrying `counter`, which becomes the
    /// last counter.
    pub fn next(&mut self, counter: u32) -> CheckStatus {
        let status = match self.last {
            None => CheckStatus::Ok,
            Some(last) => match (counter + self.modulus - last) % self.modulus {
                0 => CheckStatus::Repeated,
                1 => CheckStatus::Ok,
                delta if delta <= self.max_delta => CheckStatus::OkSomeLost {
                    lost: (delta - 1) as u16,
                },
                _ => CheckStatus::WrongSequence,
            },
        };
        self.last = Some(counter);
        status
    }
}

/// Checks the frames of one message: their CRC and the progress of their
/// counter. Allocation-free and bounded: one CRC over the data per frame.
#[derive(Clone, Debug)]
pub struct Checker {
    config: Config,
    sequence: Sequence,
}

impl Checker {
    /// A checker for `config` that has seen no frame yet.
    pub fn new(config: Config) -> Result<Self, ConfigError> {
        config.validate()?;
        let sequence = Sequence::new(config.profile.counter_modulus(), config.max_delta_counter.into());
        Ok(Checker { config, sequence })
    }

    /// The status of a received payload. The first correct frame is
    /// [`CheckStatus::Ok`]; after it, each correct frame's counter is
    /// compared with the previous correct one's (repeated, wrong
    /// sequence and lost frames still move the state to the new counter,
    /// as AUTOSAR's state machine does); a corrupt one changes nothing.
    pub fn check(&mut self, payload: &[u8]) -> CheckStatus {
        let Some(data) = payload.get(..self.config.data_length) else {
            return CheckStatus::Error(CheckError::Length);
        };
        match profile::verify(&self.config, data) {
            Ok(Some(counter)) => self.sequence.next(counter),
            Ok(None) => CheckStatus::Ok,
            Err(error) => CheckStatus::Error(error),
        }
    }

    /// The configuration checked against.
    pub fn config(&self) -> &Config {
        &self.config
    }
}

/// How many frames (or cycles) of one message ended in each status: what a
/// run reports per message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiveCounts {
    /// [`CheckStatus::Ok`].
    pub ok: u64,
    /// [`CheckStatus::OkSomeLost`].
    pub ok_some_lost: u64,
    /// Frames the `OkSomeLost` statuses say went missing.
    pub lost: u64,
    /// [`CheckStatus::Repeated`].
    pub repeated: u64,
    /// [`CheckStatus::WrongSequence`].
    pub wrong_sequence: u64,
    /// [`CheckStatus::Error`] with [`CheckError::Crc`].
    pub crc: u64,
    /// [`CheckStatus::Error`] with [`CheckError::Length`].
    pub length: u64,
    /// [`CheckStatus::Error`] with [`CheckError::DataId`].
    pub data_id: u64,
    /// [`CheckStatus::Error`] with [`CheckError::Counter`].
    pub counter: u64,
    /// [`CheckStatus::NoNewData`].
    pub no_new_data: u64,
}

impl ReceiveCounts {
    /// Counts one status.
    pub fn record(&mut self, status: CheckStatus) {
        let count = match status {
            CheckStatus::Ok => &mut self.ok,
            CheckStatus::OkSomeLost { lost } => {
                self.lost += u64::from(lost);
                &mut self.ok_some_lost
            }
            CheckStatus::Repeated => &mut self.repeated,
            CheckStatus::WrongSequence => &mut self.wrong_sequence,
            CheckStatus::Error(CheckError::Crc) => &mut self.crc,
            CheckStatus::Error(CheckError::Length) => &mut self.length,
            CheckStatus::Error(CheckError::DataId) => &mut self.data_id,
            CheckStatus::Error(CheckError::Counter) => &mut self.counter,
            CheckStatus::NoNewData => &mut self.no_new_data,
        };
        *count += 1;
    }

    /// Frames a receiver would not accept as is: repeated, out of sequence
    /// or corrupt (lost frames and empty cycles not included).
    pub fn rejected(&self) -> u64 {
        self.repeated + self.wrong_sequence + self.crc + self.length + self.data_id + self.counter
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_wraps_at_the_modulus() {
        let mut seq = Sequence::new(15, 3);
        assert_eq!(seq.next(13), CheckStatus::Ok);
        assert_eq!(seq.next(14), CheckStatus::Ok);
        assert_eq!(seq.next(0), CheckStatus::Ok);
        assert_eq!(seq.next(0), CheckStatus::Repeated);
        assert_eq!(seq.next(3), CheckStatus::OkSomeLost { lost: 2 });
        assert_eq!(seq.next(7), CheckStatus::WrongSequence);
        assert_eq!(seq.next(8), CheckStatus::Ok);
        assert_eq!(seq.next(7), CheckStatus::WrongSequence, "a step back is a jump of 14");
    }

    #[test]
    fn counts_sort_statuses() {
        let mut counts = ReceiveCounts::default();
        for status in [
            CheckStatus::Ok,
            CheckStatus::OkSomeLost { lost: 3 },
            CheckStatus::Repeated,
            CheckStatus::Error(CheckError::Crc),
            CheckStatus::Error(CheckError::Crc),
            CheckStatus::NoNewData,
        ] {
            counts.record(status);
        }
        let expected = ReceiveCounts {
            ok: 1,
            ok_some_lost: 1,
            lost: 3,
            repeated: 1,
            crc: 2,
            no_new_data: 1,
            ..ReceiveCounts::default()
        };
        assert_eq!(counts, expected);
        assert_eq!(counts.rejected(), 3);
    }
}
