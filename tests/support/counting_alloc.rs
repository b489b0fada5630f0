//! A global allocator that counts the allocations of the threads that ask
//! to be watched, for the tests proving that real-time code does not
//! allocate. Included by path (`#[path = ...] mod counting_alloc;`) from
//! each such test crate; it installs itself as the crate's allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts allocations made on threads that asked to be watched, per
/// thread (tests run in parallel).
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

/// Starts (`true`) or stops counting this thread's allocations.
pub fn watch(on: bool) {
    WATCHED.with(|w| w.set(on));
}

/// Allocations counted on this thread so far.
pub fn count() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

/// Allocations made by `f` on this thread.
pub fn allocations_in(f: impl FnOnce()) -> u64 {
    let before = count();
    watch(true);
    f();
    watch(false);
    count() - before
}
