//! Prints the real-time preflight of this machine, one check a line, as
//! `preflight: NAME: STATUS: DETAIL`, then whether every check passed.
//! The QEMU test host (tests/qemu) runs it on a PREEMPT_RT kernel.
//!
//! `cargo run -p tandem-runtime --example preflight` (as root for SCHED_FIFO
//! and mlockall).

use tandem_runtime::tandem::preflight::preflight;
use tandem_runtime::tandem::TandemSettings;

fn main() {
    let report = preflight(&TandemSettings::new(0.001, 1.0), true);
    for check in &report.checks {
        println!("preflight: {}: {:?}: {}", check.name, check.status, check.detail);
    }
    println!("preflight: hard real time: {}", report.hard_real_time());
}
