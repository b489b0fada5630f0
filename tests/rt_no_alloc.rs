//! The real-time threads must not allocate after start-up: a process-wide
//! counting allocator is armed from the first poll of the watching thread
//! (both threads are then past their start-up) to the end of the run, over
//! thousands of frames of the fast and the implicit thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use tandem_models::plants;
use tandem_runtime::record::Recorder;
use tandem_runtime::tandem::assemble::{assemble, RecordPlan};
use tandem_runtime::tandem::inputs::{signals_by_name, Profile};
use tandem_runtime::tandem::threads::run_realtime;
use tandem_runtime::tandem::{Placement, Policy, TandemSettings};

struct Counting;

static ARMED: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ARMED.load(Relaxed) {
            ALLOCATIONS.fetch_add(1, Relaxed);
        }
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ARMED.load(Relaxed) {
            ALLOCATIONS.fetch_add(1, Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Sums what it is given; never allocates.
struct Checksum(f64);
impl Recorder for Checksum {
    fn record(&mut self, t: f64, y: &[f64]) -> std::io::Result<()> {
        self.0 += t + y.iter().sum::<f64>();
        Ok(())
    }
}

#[test]
fn fast_and_implicit_threads_run_thousands_of_frames_without_allocating() {
    let model = plants::builtin("ev").unwrap();
    let profile = signals_by_name(
        model.layout(),
        plants::profile("ev-drive-cycle").unwrap().iter().copied(),
    )
    .unwrap();
    for policy in [Policy::Correct, Policy::Select] {
        let mut settings = TandemSettings::new(1e-3, 3.0);
        settings.policy = policy;
        // Unpinned and at normal priority where SCHED_FIFO is refused: the
        // allocation-free property does not depend on either.
        settings.fast.placement = Placement {
            core: None,
            priority: 80,
        };
        settings.implicit.placement = Placement {
            core: None,
            priority: 70,
        };
        let plan = RecordPlan {
            signals: (0..model.layout().outputs.len()).collect(),
            decimation: 1,
        };
        let t = assemble(
            &settings,
            model.as_ref(),
            Box::new(Profile::new(profile.clone())),
            Some(plan),
            None,
        )
        .unwrap();
        let mut rows = t.recording.unwrap();
        let metrics = t.metrics;
        let mut sink = Checksum(0.0);
        ALLOCATIONS.store(0, Relaxed);
        let outcome = run_realtime(
            &settings,
            t.fast,
            t.implicit,
            Default::default(),
            Duration::from_millis(20),
            &mut |finished| {
                ARMED.store(!finished, Relaxed);
                rows.drain(&mut sink).unwrap();
            },
        );
        ARMED.store(false, Relaxed);
        assert!(outcome.failure.is_none(), "{:?}", outcome.failure);
        assert_eq!(metrics.frames.get(), 3000);
        assert!(metrics.implicit_steps.get() > 1000, "the implicit thread worked");
        assert!(sink.0.is_finite() && sink.0 != 0.0);
        assert_eq!(
            ALLOCATIONS.load(Relaxed),
            0,
            "{policy}: allocations on the real-time path"
        );
    }
}
