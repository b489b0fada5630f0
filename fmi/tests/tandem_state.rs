//! An FMU's internal discrete state in the real-time tandem, on the virtual
//! clock, against the closed form: the `counter` FMU counts its time events
//! (every 0.1 s) in a variable of its own, `n`, which no continuous state
//! or event indicator shows, and integrates `x' = n - x`. A correction that
//! re-integrates across a time event the fast side had handled sets the
//! FMU back first, so that `n` never counts twice; an implicit side that
//! restarts past events it has not handled takes the fast side's state;
//! and an FMU that cannot save (or serialize) its state has those
//! corrections (or results) refused and counted, the run staying on the
//! fast side's own steps.

#[path = "support/fmus.rs"]
mod fmus;

#[path = "../../runtime/tests/support/mod.rs"]
mod support;

#[path = "support/counter.rs"]
mod counter;

use tandem_fmi::INNER_CHECKPOINTS;
use tandem_runtime::tandem::metrics::FrameSource::{CatchUp, Fast, Implicit};
use tandem_runtime::tandem::Policy;

use counter::{
    assert_on_closed_form, counter, delay_past_an_event, delays_before_events, inner, run, settings, ACROSS_EVENTS,
};

#[test]
fn a_correction_across_time_events_sets_the_fmu_back_and_n_never_counts_twice() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = counter(dir.path(), "counter", &[]);
    let r = run(&fmu, &settings(Policy::Correct, 0.7), &delays_before_events());
    // Each such correction set the FMU back to its checkpoint of the
    // correction's first frame, handled the event once more from there and
    // was taken; none disagreed.
    assert_eq!(inner(&r), [ACROSS_EVENTS.len() as u64, 0, 0, 0, 0]);
    for k in ACROSS_EVENTS {
        assert_eq!(r.sources[k as usize], CatchUp, "frame {k}");
    }
    assert_eq!(r.tandem.metrics.catchup_frames.snapshot().max, 4.0);
    // n counted each event once: x and n on the closed form throughout.
    assert_on_closed_form(&r, 1e-8, "correct");
    assert_eq!(r.rows.last().unwrap()[1], 6.0);
    // The fast side's FMU allocated its checkpoints (and the state a
    // restore leaves) at instantiation, and nothing after.
    let at_start = 1.0 + INNER_CHECKPOINTS as f64 + 1.0;
    assert!(r.rows.iter().all(|row| row[2] == at_start), "{:?}", r.rows.last());
}

#[test]
fn an_fmu_that_cannot_save_its_state_has_corrections_across_its_events_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = counter(dir.path(), "unsaved", &["canGetAndSetFMUstate", "canSerializeFMUstate"]);
    let r = run(&fmu, &settings(Policy::Correct, 0.7), &delays_before_events());
    assert!(r.rows.iter().all(|row| row[2] == 1.0), "no state saved");
    // The corrections that would have handled an event a second time are
    // refused and counted; the fast side's own steps stand for them.
    assert_eq!(inner(&r), [0, ACROSS_EVENTS.len() as u64, 0, 0, 0]);
    for k in ACROSS_EVENTS {
        assert_eq!(r.sources[k as usize], Fast, "frame {k}");
    }
    assert!(r.sources.contains(&CatchUp), "corrections not across events are taken");
    assert_on_closed_form(&r, 1e-8, "correct without state saving");
}

#[test]
fn an_implicit_side_restarting_past_an_event_takes_the_fast_sides_fmu_state() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = counter(dir.path(), "counter", &[]);
    let r = run(&fmu, &settings(Policy::Correct, 0.4), &delay_past_an_event());
    let m = &r.tandem.metrics;
    assert_eq!(m.resyncs.get(), 1);
    // The restart took the fast side's export (one event), and every result
    // after it agreed with the fast side and was taken.
    assert_eq!(inner(&r), [0, 0, 1, 0, 0]);
    assert_eq!(m.event_resyncs.get(), 0);
    let restarted = r.sources.iter().rposition(|&s| s == Fast).unwrap();
    assert!((120..130).contains(&restarted), "the last fast frame: {restarted}");
    assert!(r.sources[restarted + 1..]
        .iter()
        .all(|&s| s == Implicit || s == CatchUp));
    // Those results integrated with n = 1, 2, 3: on the closed form.
    assert_on_closed_form(&r, 1e-8, "after the restart");
}

#[test]
fn an_implicit_side_that_cannot_take_the_fmu_state_has_its_results_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = counter(dir.path(), "unserialized", &["canSerializeFMUstate"]);
    let r = run(&fmu, &settings(Policy::Correct, 0.4), &delay_past_an_event());
    let m = &r.tandem.metrics;
    assert_eq!(m.resyncs.get(), 1);
    // Its restart could not take the fast side's n (counted); its results,
    // integrated with a stale n, are marked and not taken (each counted as
    // a disagreement), and the fast side's own steps carry the run.
    let [restores, refusals, imports, unsynced, disagreements] = inner(&r);
    assert_eq!((restores, refusals, imports, unsynced), (0, 0, 0, 1));
    assert!(disagreements > 200, "{disagreements}");
    assert!(r.sources[130..].iter().all(|&s| s == Fast));
    assert_on_closed_form(&r, 1e-8, "without serialization");
}

#[test]
fn select_takes_the_implicit_state_of_a_frame_whose_events_are_the_fast_sides() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = counter(dir.path(), "counter", &[]);
    let r = run(&fmu, &settings(Policy::Select, 0.7), &delays_before_events());
    // Results of their own frames only: the FMU is never set back, every
    // result on time has seen the fast side's events and is taken.
    assert_eq!(inner(&r), [0, 0, 0, 0, 0]);
    assert!(r.sources.iter().filter(|&&s| s == Implicit).count() > 600);
    assert_on_closed_form(&r, 1e-8, "select");
}
