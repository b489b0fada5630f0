//! Evaluating an FMU model and stepping an FMU slave must not allocate
//! (they run on real-time threads): a counting global allocator watches
//! the calls, events included.

#[path = "support/fmus.rs"]
mod fmus;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use tandem_fmi::{Fmu, FmuModel, FmuSlave, Parameters};
use tandem_models::{Model, StateRef};

/// Counts allocations made on threads that asked to be watched (tests run
/// in parallel).
struct Counting;

thread_local! {
    static WATCHED: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count_one() {
    if WATCHED.with(Cell::get) {
        ALLOCATIONS.with(|a| a.set(a.get() + 1));
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f` on this thread.
fn allocations_in(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    WATCHED.with(|w| w.set(true));
    f();
    WATCHED.with(|w| w.set(false));
    ALLOCATIONS.with(Cell::get) - before
}

#[test]
fn the_model_evaluates_and_handles_events_without_allocating() {
    for name in ["bouncing_ball", "bouncing_ball3"] {
        let dir = tempfile::tempdir().unwrap();
        let fmu = Fmu::open(fmus::build(name, dir.path())).unwrap();
        let mut model = FmuModel::new(&fmu, &Parameters::new()).unwrap();
        let (mut x, mut dx, mut y, mut z) = ([0.0; 2], [0.0; 2], [0.0; 2], [0.0; 2]);
        let mut impacts = 0;
        let count = allocations_in(|| {
            model.initial_state(&mut x, &mut []);
            // Forward Euler to the floor and past it, several bounces.
            let h = 1e-3;
            for n in 0..2000 {
                let t = n as f64 * h;
                let s = StateRef {
                    t,
                    x: &x,
                    xd: &[],
                    u: &[],
                };
                model.derivatives(s, &mut dx);
                model.zero_crossings(s, &mut z);
                model.major_outputs(t, &x, &mut [], &[], &[], &mut y).unwrap();
                let before = x[1];
                model.update(t, &[], &mut x, &mut [], &[]);
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
