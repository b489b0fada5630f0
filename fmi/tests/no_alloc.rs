//! Evaluating an FMU model and stepping an FMU slave must not allocate
//! (they run on real-time threads): a counting global allocator watches
//! the calls, events included, and the real-time tandem's two sides (run
//! on this thread by the virtual clock) while they set an FMU's state back
//! and carry it between them.

#[path = "support/fmus.rs"]
mod fmus;

#[path = "../../tests/support/counting_alloc.rs"]
mod counting_alloc;

#[path = "../../runtime/tests/support/mod.rs"]
mod support;

#[path = "support/counter.rs"]
mod counter;

use std::sync::Arc;

use counting_alloc::allocations_in;
use tandem_fmi::{Fmu, FmuModel, FmuSlave, Parameters};
use tandem_models::{MajorStep, Model, StateRef};
use tandem_runtime::tandem::assemble::{assemble, Wiring};
use tandem_runtime::tandem::clock::{Clock, Nanos};
use tandem_runtime::tandem::inputs::Profile;
use tandem_runtime::tandem::virtual_clock::VirtualClock;
use tandem_runtime::tandem::Policy;

#[test]
fn the_model_evaluates_and_handles_events_without_allocating() {
    for name in ["bouncing_ball", "bouncing_ball3"] {
        let dir = tempfile::tempdir().unwrap();
        let fmu = Fmu::open(fmus::build(name, dir.path())).unwrap();
        let mut model = FmuModel::new(&fmu, &Parameters::new()).unwrap();
        let (mut x, mut dx, mut y, mut z) = ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
        // The indicator's mode and the next time event.
        let mut xd = [0.0; 2];
        let mut impacts = 0;
        let count = allocations_in(|| {
            model.initial_state(&mut x, &mut xd);
            // Forward Euler to the floor and past it, several bounces.
            let h = 1e-3;
            for n in 0..2000 {
                let t = n as f64 * h;
                let s = StateRef {
                    t,
                    x: &x,
                    xd: &xd,
                    u: &[],
                };
                model.derivatives(s, &mut dx);
                model.zero_crossings(s, &mut z);
                model
                    .major_outputs(&mut MajorStep {
                        t,
                        x: &mut x,
                        xd: &mut xd,
                        u: &[],
                        hits: &[],
                        y: &mut y,
                    })
                    .unwrap();
                let before = x[1];
                model.update(&mut MajorStep {
                    t,
                    x: &mut x,
                    xd: &mut xd,
                    u: &[],
                    hits: &[],
                    y: &mut y,
                });
                if before < 0.0 && x[1] > 0.0 {
                    impacts += 1;
                }
                x[0] += h * dx[0];
                x[1] += h * dx[1];
            }
        });
        assert!(impacts >= 2, "{name}: {impacts} impacts");
        assert_eq!(count, 0, "{name}: {count} allocations");
    }
}

#[test]
fn the_slave_steps_without_allocating() {
    for name in ["oscillator", "oscillator3"] {
        let dir = tempfile::tempdir().unwrap();
        let fmu = Fmu::open(fmus::build(name, dir.path())).unwrap();
        let mut slave = FmuSlave::new(&fmu, &Parameters::new(), 0.0).unwrap();
        let mut y = [0.0; 2];
        let count = allocations_in(|| {
            for n in 0..100 {
                slave.set_inputs(&[y[0]]).unwrap();
                slave.do_step(n as f64 * 0.01, 0.01).unwrap();
                slave.outputs(&mut y).unwrap();
            }
        });
        assert_eq!(count, 0, "{name}: {count} allocations");
    }
}

#[test]
fn the_tandem_sets_an_fmus_state_back_and_carries_it_without_allocating() {
    let dir = tempfile::tempdir().unwrap();
    let fmu = counter::counter(dir.path(), "counter", &[]);
    let cases = [
        ("corrections across events", counter::delays_before_events(), 0.7),
        ("a restart past an event", counter::delay_past_an_event(), 0.4),
    ];
    for (case, costs, seconds) in cases {
        let model = FmuModel::new(&fmu, &Parameters::new()).unwrap();
        let settings = counter::settings(Policy::Correct, seconds);
        let wiring = Wiring::inputs(&model, Box::new(Profile::new(Vec::new())));
        let mut tandem = assemble(&settings, &model, wiring).unwrap();
        let metrics = Arc::clone(&tandem.metrics);
        let mut clock = VirtualClock::new(&costs, tandem.implicit.as_mut());
        let frame: Nanos = 1_000_000;
        let (warm, end) = (50, settings.frames());
        let mut slot = 0;
        while slot < warm {
            clock.sleep_until(slot as Nanos * frame);
            slot = tandem.fast.frame(slot, &mut clock).unwrap();
        }
        // Every time event, correction across one and restart after the
        // first 50 frames: the checkpoints are taken into the memory the
        // FMU gave at instantiation, exports into buffers sized at start;
        // an import's state is the FMU's to allocate (through the C
        // allocator its callbacks give, which this count does not see).
        let count = allocations_in(|| {
            while slot < end {
                clock.sleep_until(slot as Nanos * frame);
                slot = tandem.fast.frame(slot, &mut clock).unwrap();
            }
        });
        assert_eq!(count, 0, "{case}: {count} allocations");
        let moved = metrics.inner_restores.get() + metrics.inner_imports.get();
        assert!(moved > 0, "{case}: the FMU's state was neither set back nor carried");
    }
}
