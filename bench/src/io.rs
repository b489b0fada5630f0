//! `tandem-bench io`: the runtime's own share of the path "frame received,
//! model step, frame sent" in the closed loop of `config/examples/ev-can.toml`
//! (plant and virtual ECU over CAN over UDP), and the replay speed at
//! `--speed max` of generated one-hour logs: candump at 100 frames/s, BLF
//! and MF4 at 2000 frames/s.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context};
use serde_json::Value;
use tandem_can::{CanFrame, CanId};
use tandem_dbc::Dbc;
use tandem_log::{create, Direction, Entry};

use crate::beside;

/// Runs the `tandem` command built beside this benchmark.
fn tandem(args: &[&str]) -> anyhow::Result<()> {
    let exe = beside::tandem()?;
    let out = Command::new(&exe)
        .args(args)
        .output()
        .with_context(|| format!("cannot run {} (build it first: cargo build --release)", exe.display()))?;
    if !out.status.success() {
        bail!("tandem {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

/// Runs both measurements.
pub fn run(seconds: f64) -> anyhow::Result<()> {
    let dir = std::env::temp_dir().join(format!("tandem-bench-io-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    path_share(&dir, seconds)?;
    replay_speed(&dir)?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn path_share(dir: &Path, seconds: f64) -> anyhow::Result<()> {
    let stats = dir.join("loop.json");
    let seconds = seconds.max(2.0).to_string();
    tandem(&[
        "run",
        "config/examples/ev-can.toml",
        "--duration",
        &seconds,
        "--stats-json",
        stats.to_str().unwrap_or_default(),
    ])
    .context("the closed loop (run from the repository's root)")?;
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&stats)?)?;
    let us = |v: &Value| v.as_f64().unwrap_or(f64::NAN);
    let bus = &json["buses"]["can0"];
    let compute = &json["histograms"]["fast compute"];
    let rows = [
        (
            "receive (transport → samples queued)",
            us(&bus["rx path"]["p50_ns"]) / 1e3,
            us(&bus["rx path"]["p99_ns"]) / 1e3,
        ),
        (
            "frame (inputs → step → outputs encoded)",
            us(&compute["p50"]),
            us(&compute["p99"]),
        ),
        (
            "transmit (boundary → frames handed over, sends excluded)",
            us(&bus["tx path"]["p50_ns"]) / 1e3,
            us(&bus["tx path"]["p99_ns"]) / 1e3,
        ),
    ];
    println!("closed loop (plant + virtual ECU over CAN over UDP, {seconds} s): the runtime's share, µs");
    println!("  {:<44} {:>8} {:>8}", "", "p50", "p99");
    for (name, p50, p99) in rows {
        println!("  {name:<44} {p50:>8.1} {p99:>8.1}");
    }
    let (p50, p99): (f64, f64) = rows.iter().fold((0.0, 0.0), |(a, b), r| (a + r.1, b + r.2));
    println!(
        "  {:<44} {p50:>8.1} {p99:>8.1}   (goal: p99 ≤ 20 µs)",
        "sum (p99: an upper bound)"
    );
    let send = &bus["tx send"];
    println!(
        "  {:<44} {:>8.1} {:>8.1}   (the kernel's: a UDP multicast send delivers to local receivers inside the call)",
        "apart: each send call",
        us(&send["p50_ns"]) / 1e3,
        us(&send["p99_ns"]) / 1e3
    );
    Ok(())
}

fn replay_speed(dir: &Path) -> anyhow::Result<()> {
    let dbc = Dbc::load(Path::new("config/examples/ev.dbc"))?;
    let speeds = dbc.message("VCU_Speeds").context("ev.dbc has VCU_Speeds")?;
    let log = dir.join("hour.log");
    let mut text = String::with_capacity(360_000 * 48);
    let mut payload = [0u8; 8];
    for i in 0..360_000u64 {
        let t = i as f64 * 0.01;
        speeds
            .signal("VehicleSpeed")
            .context("VehicleSpeed")?
            .encode(10.0 + 5.0 * (t / 60.0).sin(), &mut payload);
        let hex: String = payload.iter().map(|b| format!("{b:02X}")).collect();
        text.push_str(&format!(
            "({}.{:06}) can0 200#{hex} R\n",
            1_700_000_000 + i / 100,
            (i % 100) * 10_000
        ));
    }
    std::fs::write(&log, text)?;
    let wall = replay(&log, &dir.join("hour-replay.log"))?;
    println!(
        "replay of a one-hour log (360 000 frames) against the virtual ECU at --speed max: {wall:.2} s, {:.0}x real time (goal: ≥ 1000x)",
        3600.0 / wall
    );
    for extension in ["blf", "mf4"] {
        let log = dir.join(format!("busy-hour.{extension}"));
        let frames = busy_hour(&log, &dbc)?;
        let wall = replay(&log, &dir.join("busy-hour-replay.mf4"))?;
        let size = std::fs::metadata(&log).map_or(0, |m| m.len());
        println!(
            "replay of a one-hour {} log at 2000 frames/s ({frames} frames, {:.0} MB) against the virtual ECU, into an MF4 log: {wall:.2} s, {:.0}x real time (goal: ≥ 10000x)",
            extension.to_uppercase(),
            size as f64 / 1e6,
            3600.0 / wall
        );
    }
    Ok(())
}

/// Replays `log` with `tandem replay` against the virtual ECU as fast as
/// possible into `out`; the wall time (s).
fn replay(log: &Path, out: &Path) -> anyhow::Result<f64> {
    let started = Instant::now();
    tandem(&[
        "replay",
        log.to_str().unwrap_or_default(),
        "--config",
        "config/examples/ecu.toml",
        "--speed",
        "max",
        "--out",
        out.to_str().unwrap_or_default(),
    ])?;
    Ok(started.elapsed().as_secs_f64())
}

/// Writes one hour of a busy bus at 2000 frames/s to `path` (its format by
/// its extension): per 10 ms, the plant's four messages of ev.dbc (the
/// speeds the virtual ECU reads among them), ten classic frames of other
/// nodes and six CAN FD frames of 32 bytes; how many frames.
fn busy_hour(path: &Path, dbc: &Dbc) -> anyhow::Result<u64> {
    const START_NS: i64 = 1_700_000_000_000_000_000;
    let speeds = dbc.message("VCU_Speeds").context("ev.dbc has VCU_Speeds")?;
    let speed = speeds.signal("VehicleSpeed").context("VehicleSpeed")?;
    let plant: Vec<CanId> = ["VCU_Speeds", "VCU_Powertrain", "BMS_Status", "VCU_Diagnostics"]
        .iter()
        .map(|m| dbc.message(m).map(|m| m.id).with_context(|| format!("ev.dbc has {m}")))
        .collect::<anyhow::Result<_>>()?;
    let mut writer = create(path, START_NS)?;
    let mut frames = 0u64;
    for tick in 0..360_000i64 {
        let mut payload = [0u8; 8];
        speed.encode(10.0 + 5.0 * (tick as f64 / 6000.0).sin(), &mut payload);
        for slot in 0..20i64 {
            let byte = (tick + slot) as u8;
            let frame = match slot {
                0 => CanFrame::data(plant[0], &payload),
                1..=3 => CanFrame::data(plant[slot as usize], &[byte; 8]),
                4..=13 => CanFrame::data(CanId::standard(0x300 + slot as u16)?, &[byte, 1, 2, 3]),
                _ => CanFrame::fd(CanId::extended(0x18FF_0000 + slot as u32)?, &[byte; 32], true, false),
            }?;
            writer.write_entry(&Entry {
                time_ns: START_NS + tick * 10_000_000 + slot * 500_000,
                interface: "can0",
                frame,
                direction: Direction::Rx,
            })?;
            frames += 1;
        }
    }
    writer.finish()?;
    Ok(frames)
}
