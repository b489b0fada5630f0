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
    /// The frame the newest change applied at, if any.
    changed_at: Option<u64>,
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
            changed_at: None,
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
            self.changed_at = Some(k);
            // The ring has room for every change in flight.
            let _ = self.next.try_push(change);
        }
    }
}

impl FastRetunes {
    /// Whether an implicit step from frame `k0` began before the newest
    /// change: it integrated the replaced definition, and stands for
    /// nothing now.
    pub fn predates_change(&self, k0: u64) -> bool {
        self.changed_at.is_some_and(|at| k0 < at)
    }
}

impl ImplicitRetunes {
    /// With the newest frame record at frame `newest`: swaps in every
    /// change the fast thread applied at or before it, each first given to
    /// `before` (copies for the Jacobian's helper threads); returns whether
    /// it did (the side then restarts from that record). Allocates nothing.
    pub fn apply(&mut self, newest: u64, model: &mut dyn Model, mut before: impl FnMut(&Definition)) -> bool {
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
                before(definition);
                model.swap_definition(definition);
            }
            applied = true;
            let _ = self.back.try_push(change);
        }
        applied
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tandem_models::diagram::compile_str;
    use tandem_models::StateRef;

    /// `y = k u` with `k` changeable.
    fn gain() -> Box<dyn Model> {
        let text = r#"{"blocks": [{"id": "u", "type": "Inport"}, {"id": "k", "type": "Gain", "params": {"gain": 2.0}},
            {"id": "y", "type": "Output"}], "links": [{"from": "u", "to": "k"}, {"from": "k", "to": "y"}]}"#;
        Box::new(compile_str(text).unwrap().model)
    }

    fn output(model: &mut dyn Model) -> f64 {
        let mut y = [0.0];
        model.outputs(
            StateRef {
                t: 0.0,
                x: &[],
                xd: &[],
                u: &[1.0],
            },
            &mut y,
        );
        y[0]
    }

    #[test]
    fn both_sides_take_a_change_at_the_same_frame_and_it_comes_back() {
        let (mut retuner, mut fast, implicit) = retune_queues(true);
        let mut implicit = implicit.unwrap();
        let (mut fast_model, mut implicit_model) = (gain(), gain());
        let definition = fast_model.retune("k", "gain", &json!(5.0)).unwrap();
        retuner.submit(1, 10, definition, true).unwrap();
        fast.apply(9, fast_model.as_mut());
        assert_eq!(output(fast_model.as_mut()), 2.0, "not before its frame");
        fast.apply(10, fast_model.as_mut());
        assert_eq!(output(fast_model.as_mut()), 5.0, "at its frame");
        assert!(fast.predates_change(9) && !fast.predates_change(10));
        assert!(
            !implicit.apply(9, implicit_model.as_mut(), |_| {}),
            "the implicit side waits for frame 10's record"
        );
        assert_eq!(output(implicit_model.as_mut()), 2.0);
        assert!(retuner.applied().is_empty(), "not back before both sides have it");
        assert!(implicit.apply(10, implicit_model.as_mut(), |_| {}));
        assert_eq!(output(implicit_model.as_mut()), 5.0);
        let back = retuner.applied();
        assert_eq!((back.len(), back[0].seq, back[0].applied_at), (1, 1, Some(10)));
    }

    #[test]
    fn too_many_changes_in_flight_are_refused() {
        let (mut retuner, _fast, _) = retune_queues(false);
        let model = gain();
        for seq in 0..MAX_PENDING as u64 {
            retuner
                .submit(seq, 0, model.retune("k", "gain", &json!(3.0)).unwrap(), false)
                .unwrap();
        }
        assert!(retuner
            .submit(99, 0, model.retune("k", "gain", &json!(3.0)).unwrap(), false)
            .is_err());
    }

    #[test]
    fn a_change_of_shape_is_refused_where_it_is_prepared() {
        let model = gain();
        let e = model.retune("k", "gain", &json!([1.0, 2.0])).unwrap_err();
        assert!(e.message.contains("cannot take"), "{}", e.message);
        let e = model.retune("nothing", "gain", &json!(1.0)).unwrap_err();
        assert!(e.message.contains("no block \"nothing\""), "{}", e.message);
    }
}
