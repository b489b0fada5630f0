//! A diagnostic trouble code's status byte (ISO 14229-1, D.2), driven by
//! one test result at a time.

/// Bit 0: the latest test failed.
pub const TEST_FAILED: u8 = 0x01;
/// Bit 1: a test failed in this operation cycle.
pub const TEST_FAILED_THIS_OPERATION_CYCLE: u8 = 0x02;
/// Bit 2: pending (failed in the current or last cycle).
pub const PENDING: u8 = 0x04;
/// Bit 3: confirmed; latches until cleared.
pub const CONFIRMED: u8 = 0x08;
/// Bit 4: no test completed since the last clear.
pub const TEST_NOT_COMPLETED_SINCE_LAST_CLEAR: u8 = 0x10;
/// Bit 5: a test failed since the last clear.
pub const TEST_FAILED_SINCE_LAST_CLEAR: u8 = 0x20;
/// The status bits this server keeps (its DTCStatusAvailabilityMask).
pub const AVAILABILITY_MASK: u8 = 0x3F;

/// One trouble code and its status. There is one operation cycle, from
/// start-up (or the last clear) on, and a failure confirms at once, so
/// pending, confirmed and the cycle bit latch like testFailedSinceLastClear.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dtc {
    code: u32,
    status: u8,
}

impl Dtc {
    /// Code `code` (24 bits) with no test completed yet.
    pub fn new(code: u32) -> Self {
        Dtc {
            code,
            status: TEST_NOT_COMPLETED_SINCE_LAST_CLEAR,
        }
    }

    /// The 24-bit code.
    pub fn code(&self) -> u32 {
        self.code
    }

    /// The status byte.
    pub fn status(&self) -> u8 {
        self.status
    }

    /// Records a test result.
    pub fn report(&mut self, failed: bool) {
        self.status &= !TEST_NOT_COMPLETED_SINCE_LAST_CLEAR;
        if failed {
            self.status |=
                TEST_FAILED | TEST_FAILED_THIS_OPERATION_CYCLE | PENDING | CONFIRMED | TEST_FAILED_SINCE_LAST_CLEAR;
        } else {
            self.status &= !TEST_FAILED;
        }
    }

    /// Clears it, as ClearDiagnosticInformation does.
    pub fn clear(&mut self) {
        self.status = TEST_NOT_COMPLETED_SINCE_LAST_CLEAR;
    }
}
