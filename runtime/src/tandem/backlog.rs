//! The frames the fast thread owes after a stall. Each frame has a slot on
//! the real clock, in which its outputs are due; when the thread falls
//! behind (the process was stopped, the machine starved it), slots pass
//! before their frames are computed. Such a slot sends nothing (it passed
//! while the thread did not run) or the newest computed outputs, held or
//! extrapolated; the frame itself is computed afterwards, in order, with
//! the inputs of its own time, and recorded then. This ring keeps what each
//! owed frame's slot got until that happens. It is sized once and never
//! allocates.

use super::metrics::FrameSource;

/// What the slot of a frame not yet computed got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotFate {
    /// Nothing: the slot passed while the fast thread did not run.
    Skipped,
    /// The newest computed outputs, held.
    Held,
    /// The newest computed outputs, extrapolated to the slot's time.
    Extrapolated,
}

impl From<SlotFate> for FrameSource {
    fn from(fate: SlotFate) -> Self {
        match fate {
            SlotFate::Skipped => FrameSource::Skipped,
            SlotFate::Held => FrameSource::Held,
            SlotFate::Extrapolated => FrameSource::Extrapolated,
        }
    }
}

/// The fast thread is further behind than its backlog holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{owed} frames behind")]
pub struct TooFarBehind {
    /// Frames owed when the slot could not be kept.
    pub owed: u64,
}

/// The fates of the owed frames `first..end`, oldest first.
pub struct Backlog {
    fates: Vec<SlotFate>,
    first: u64,
    end: u64,
}

impl Backlog {
    /// Room for `capacity` owed frames.
    pub fn new(capacity: usize) -> Self {
        Backlog {
            fates: vec![SlotFate::Skipped; capacity.max(1)],
            first: 0,
            end: 0,
        }
    }

    /// The most frames it can owe.
    pub fn capacity(&self) -> u64 {
        self.fates.len() as u64
    }

    /// Frames owed.
    pub fn owed(&self) -> u64 {
        self.end - self.first
    }

    /// Keeps `fate` for frame `k`, the next frame after those owed (the
    /// first owed frame is `next`, the next frame to compute, when nothing
    /// is owed yet).
    pub fn owe(&mut self, next: u64, k: u64, fate: SlotFate) -> Result<(), TooFarBehind> {
        if self.first == self.end {
            self.first = next;
            self.end = next;
        }
        debug_assert_eq!(k, self.end, "slots are owed in order");
        if self.owed() >= self.capacity() {
            return Err(TooFarBehind { owed: self.owed() + 1 });
        }
        let slot = (k % self.capacity()) as usize;
        self.fates[slot] = fate;
        self.end = k + 1;
        Ok(())
    }

    /// The fate of frame `k`'s slot as it is computed (frames are computed
    /// in order), or `None` when it is not owed (its slot is still to come).
    pub fn settle(&mut self, k: u64) -> Option<SlotFate> {
        if self.first == self.end || k != self.first {
            return None;
        }
        self.first += 1;
        Some(self.fates[(k % self.capacity()) as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owed_frames_are_settled_in_order_with_their_fates() {
        let mut b = Backlog::new(4);
        assert_eq!(b.settle(0), None, "nothing owed");
        b.owe(10, 10, SlotFate::Skipped).unwrap();
        b.owe(10, 11, SlotFate::Skipped).unwrap();
        b.owe(10, 12, SlotFate::Held).unwrap();
        assert_eq!(b.owed(), 3);
        assert_eq!(b.settle(10), Some(SlotFate::Skipped));
        assert_eq!(b.settle(11), Some(SlotFate::Skipped));
        b.owe(12, 13, SlotFate::Extrapolated).unwrap();
        b.owe(12, 14, SlotFate::Held).unwrap();
        b.owe(12, 15, SlotFate::Held).unwrap();
        assert_eq!(b.owed(), 4, "four fit");
        assert_eq!(b.owe(12, 16, SlotFate::Held), Err(TooFarBehind { owed: 5 }));
        let fates: Vec<_> = (12..16).map(|k| b.settle(k)).collect();
        assert_eq!(
            fates,
            [
                Some(SlotFate::Held),
                Some(SlotFate::Extrapolated),
                Some(SlotFate::Held),
                Some(SlotFate::Held)
            ]
        );
        assert_eq!(b.settle(16), None, "its own slot is to come");
        b.owe(20, 20, SlotFate::Skipped).unwrap();
        assert_eq!(
            b.settle(20),
            Some(SlotFate::Skipped),
            "a new backlog starts at the next frame"
        );
    }
}
