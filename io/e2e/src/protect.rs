//! The sending side: the counter and CRC written into each payload.

use super::config::{Config, ConfigError};
use super::profile;

/// Protects the frames of one message: writes its counter and CRC into
/// each payload in place, then advances the counter. Allocation-free and
/// bounded: one CRC over the data per frame.
#[derive(Clone, Debug)]
pub struct Protector {
    config: Config,
    counter: u32,
}

/// A payload shorter than the protected data length.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("E2E protection needs {needed} bytes of payload, the frame has {got}")]
pub struct ShortPayload {
    /// The configured data length.
    pub needed: usize,
    /// The payload's length.
    pub got: usize,
}

impl Protector {
    /// A protector for `config` whose first frame carries counter 0.
    pub fn new(config: Config) -> Result<Self, ConfigError> {
        config.validate()?;
        Ok(Protector { config, counter: 0 })
    }

    /// Writes the counter and CRC (and profile 1C/11C's data ID nibble)
    /// into the first `data_length` bytes of `payload`, leaving every other
    /// bit as it is, then advances the counter. A short payload is left
    /// untouched and does not advance the counter.
    pub fn protect(&mut self, payload: &mut [u8]) -> Result<(), ShortPayload> {
        let got = payload.len();
        let needed = self.config.data_length;
        let data = payload.get_mut(..needed).ok_or(ShortPayload { needed, got })?;
        profile::protect(&self.config, data, self.counter);
        self.counter = (self.counter + 1) % self.config.profile.counter_modulus();
        Ok(())
    }

    /// The counter the next frame carries.
    pub fn counter(&self) -> u32 {
        self.counter
    }

    /// Makes the next frame carry `counter` (reduced to the profile's
    /// range): a sender restarting, or a fault that freezes or jumps it.
    pub fn set_counter(&mut self, counter: u32) {
        self.counter = counter % self.config.profile.counter_modulus();
    }

    /// The configuration protected with.
    pub fn config(&self) -> &Config {
        &self.config
    }
}
