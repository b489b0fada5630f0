//! Evaluating an FMU model and stepping an FMU slave must not allocate
//! (they run on real-time threads): a counting global allocator watches
//! the calls, events included.

#[path = "support/fmus.rs"]
mod fmus;

#[path = "../../tests/support/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::allocations_in;
use tandem_fmi::{Fmu, FmuModel, FmuSlave, Parameters};
use tandem_models::{Model, StateRef};

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
                model.major_outputs(t, &x, &mut xd, &[], &[], &mut y).unwrap();
                let before = x[1];
                model.update(t, &[], &mut x, &mut xd, &[]);
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
