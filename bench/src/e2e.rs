//! `tandem-bench io`'s measurement of what E2E protection and frame faults
//! add to the transmit path: the EV plant's bus writer (the fast thread's
//! encode after each frame and hand-over at the next boundary, without a
//! transport) timed per frame as `config/examples/ev-can.toml` configures
//! it, and again with its `e2e` tables and faults taken out.

use std::path::Path;
use std::time::Instant;

use anyhow::Context;
use tandem_config::parse_run_config;
use tandem_models::plants::PROFILES;
use tandem_session::bind;
use tandem_session::bus::BusDevice;
use tandem_session::device::{Device, Setup, Traffic};

/// Frames timed in each case.
const FRAMES: u64 = 200_000;

/// Faults acting on every frame of the run, beside the example's E2E
/// protection: the worst case of the transmit path's fault handling.
const FAULTS: &str = r#"
[[bus.fault]]
message = "VCU_Speeds"
kind = "override"
signal = "VehicleSpeed"
value = 12.5
[[bus.fault]]
message = "BMS_Status"
kind = "stuck_counter"
[[bus.fault]]
message = "VCU_Powertrain"
kind = "delay"
delay = "5ms"
[[bus.fault]]
kind = "burst"
"#;

/// The p99 of the bus writer's time per frame (ns) for configuration
/// `text`.
fn writer_p99(text: &str) -> anyhow::Result<f64> {
    let config = parse_run_config(text, Path::new("config/examples/ev-can.toml"), PROFILES)?;
    let mut plan = bind(config)?;
    let outputs = plan.model.layout().outputs.len();
    let bus = plan.buses.remove(0);
    let mut device = BusDevice::new(&bus.name, 0, bus.transport, bus.map, bus.faults);
    let halves = device.configure(Setup {
        traffic: Traffic::Replay,
        frame: plan.settings.frame,
        log: None,
        transport: None,
    })?;
    let mut writer = halves.write.context("the plant sends")?;
    let mut y: Vec<f64> = (0..outputs).map(|i| 10.0 + i as f64).collect();
    let mut took = Vec::with_capacity(FRAMES as usize);
    for k in 0..FRAMES {
        y[0] = (k % 1000) as f64 * 0.01;
        let start = Instant::now();
        writer.write(k, &y);
        writer.boundary(k + 1);
        took.push(start.elapsed().as_nanos() as f64);
    }
    took.sort_by(f64::total_cmp);
    Ok(took[took.len() * 99 / 100])
}

/// Prints the transmit path's p99 per frame with and without E2E and
/// faults, and the difference beside its goal.
pub fn run() -> anyhow::Result<()> {
    let example = std::fs::read_to_string("config/examples/ev-can.toml")
        .context("config/examples/ev-can.toml (run from the repository's root)")?;
    let plain: String = example
        .lines()
        .filter(|l| !l.starts_with("e2e ="))
        .collect::<Vec<_>>()
        .join("\n");
    let plain = plain.split("[[bus.fault]]").next().unwrap_or_default().to_string()
        + &example[example.find("# A multiplexed message").unwrap_or(example.len())..];
    let faulted = format!("{example}\n{FAULTS}");
    // Alternate, and keep each case's best p99 of three.
    let (mut without, mut with) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        without = without.min(writer_p99(&plain)?);
        with = with.min(writer_p99(&faulted)?);
    }
    println!("transmit path per frame, p99 of {FRAMES} frames (the bus writer's encode and hand-over, no transport):");
    println!("  {:<44} {:>8.2} µs", "plain (no E2E, no fault)", without / 1e3);
    println!("  {:<44} {:>8.2} µs", "E2E on 2 messages, 4 faults acting", with / 1e3);
    println!(
        "  {:<44} {:>8.2} µs   (goal: ≤ 1 µs)",
        "added by E2E and faults",
        (with - without) / 1e3
    );
    Ok(())
}
