//! Changing a running model's block parameters in two phases, as a
//! controller manager switches controllers: a normal thread prepares the
//! new definition ([`Model::retune`]: compiled and checked there, where it
//! may allocate and fail), then each integrator thread swaps it in at a
//! frame boundary ([`Model::swap_definition`]: pointer moves only).
//!
//! The fast thread takes a change at the start of the first frame at or
//! after the one asked for, and passes it on; the implicit thread takes it
//! once it has that frame's record, and restarts from that record's state,
//! so both sides integrate with the new value from the same frame on.
//! Replaced definitions travel back to the preparing thread to be dropped
//! there. Every queue is a fixed ring made before the run: a change that
//! finds its ring full is refused at submission, never blocks a frame.

use ringbuf::traits::{Consumer, Producer, Split};
use ringbuf::{HeapCons, HeapProd, HeapRb};
use tandem_models::{Definition, Model};

/// The most changes in flight at once.
pub const MAX_PENDING: usize = 64;

/// One change on its way through the threads.
pub struct Change {
    /// Its number, given by the submitter.
    pub seq: u64,
    /// The first frame it may apply at.
    pub not_before: u64,
    /// The frame the fast thread applied it at (set there).
    pub applied_at: Option<u64>,
    /// The fast thread's definition (afterwards: the one it replaced).
    fast: Definition,
    /// The implicit thread's (afterwards: the one it replaced), when there
    /// is an implicit thread with a model.
    implicit: Option<Definition>,
}

/// The submitting thread's end: sends changes and gets them back, applied.
pub struct Retuner {
    to_fast: HeapProd<Change>,
    back: HeapCons<Change>,
    in_flight: usize,
}

/// The fast thread's end.
pub struct FastRetunes {
    inbox: HeapCons<Change>,
    /// To the implicit thread, or back to the submitter when there is none.
    next: HeapProd<Change>,
}

/// The implicit thread's end.
pub struct ImplicitRetunes {
    inbox: HeapCons<Change>,
    back: HeapProd<Change>,
}

/// The three ends of a run's change queues; the implicit end only when
/// `implicit` (an implicit thread with its own model).
pub fn retune_queues(implicit: bool) -> (Retuner, FastRetunes, Option<ImplicitRetunes>) {
    let (to_fast, fast_inbox) = HeapRb::<Change>::new(MAX_PENDING).split();
    let (back, back_cons) = HeapRb::<Change>::new(MAX_PENDING).split();
    let (next, implicit_end) = if implicit {
        let (onward, inbox) = HeapRb::<Change>::new(MAX_PENDING).split();
        (onward, Some(ImplicitRetunes { inbox, back }))
    } else {
        (back, None)
    };
    let retuner = Retuner {
        to_fast,
        back: back_cons,
        in_flight: 0,
    };
    (
        retuner,
        FastRetunes {
            inbox: fast_inbox,
            next,
        },
        implicit_end,
    )
}

/// The change queues are full: [`MAX_PENDING`] changes wait to be applied.
#[derive(Debug, thiserror::Error)]
#[error("{MAX_PENDING} changes are waiting to be applied already; wait for them (is the run still running?)")]
pub struct Busy;

impl Retuner {
    /// Sends `definition` (from [`Model::retune`] on the run's model) to
    /// apply at frame `not_before` or the first frame after it.
    pub fn submit(&mut self, seq: u64, not_before: u64, definition: Definition, implicit: bool) -> Result<(), Busy> {
        if self.in_flight >= MAX_PENDING {
            return Err(Busy);
        }
        let change = Change {
            seq,
            not_before,
            applied_at: None,
            implicit: implicit.then(|| definition.clone()),
            fast: definition,
        };
        self.to_fast.try_push(change).map_err(|_| Busy)?;
        self.in_flight += 1;
        Ok(())
    }

    /// The changes both threads have applied since the last call, in order;
    /// the definitions they replaced are dropped here.
    pub fn applied(&mut self) -> Vec<Change> {
        let done: Vec<Change> = self.back.pop_iter().collect();
        self.in_flight -= done.len();
        done
    }
}

impl FastRetunes {
    /// At the start of frame `k`: swaps in every change due by then and
    /// passes it on. Allocates nothing.
    pub fn apply(&mut self, k: u64, model: &mut dyn Model) {
        while self.inbox.first().is_some_and(|c| c.not_before <= k) {
            let Some(mut change) = self.inbox.try_pop() else {
                return;
            };
            model.swap_definition(&mut change.fast);
            change.applied_at = Some(k);
            // The ring has room for every change in flight.
            let _ = self.next.try_push(change);
        }
    }
}

impl ImplicitRetunes {
    /// With the newest frame record at frame `newest`: swaps in every
    /// change the fast thread applied at or before it; returns whether it
    /// did (the side then restarts from that record). Allocates nothing.
    pub fn apply(&mut self, newest: u64, model: &mut dyn Model) -> bool {
        let mut applied = false;
        while self
            .inbox
            .first()
            .is_some_and(|c| c.applied_at.is_some_and(|k| k <= newest))
        {
            let Some(mut change) = self.inbox.try_pop() else {
                break;
            };
            if let Some(definition) = change.implicit.as_mut() {
                model.swap_definition(definition);
            }
            applied = true;
            let _ = self.back.try_push(change);
        }
        applied
    }
}
