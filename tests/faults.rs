//! Faults at run time, each with its stated policy (README, "Faults at
//! run time"): a full disk under the recording or the bus log, and a storm
//! of overruns. The other faults have their tests beside the code they
//! exercise (listed in the README).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// A 64 KiB tmpfs, unmounted when dropped: a disk that fills up within a
/// second of a run. `None` (the test skips, saying why) where mounting is
/// not allowed.
struct SmallDisk {
    path: PathBuf,
}

impl SmallDisk {
    fn mount(test: &str) -> Option<SmallDisk> {
        let path = common::scratch(test).join("disk");
        std::fs::create_dir_all(&path).expect("the mount point can be made");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&path)
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            eprintln!("SKIP {test}: cannot mount a small tmpfs here (needs root); the full-disk policy is untested");
            return None;
        }
        Some(SmallDisk { path })
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

/// The number in `text` just before `after` (e.g. "599" in "the 599 lines").
fn number_before(text: &str, after: &str) -> usize {
    let end = text.find(after).unwrap_or_else(|| panic!("{after:?} in:\n{text}"));
    let digits: String = text[..end]
        .trim_end()
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.chars().rev().collect::<String>().parse().expect("a count")
}

fn example(name: &str) -> PathBuf {
    common::root().join("config/examples").join(name)
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .expect("the file is text")
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn a_full_disk_stops_the_recording_the_run_goes_on_and_every_row_before_is_whole() {
    let Some(disk) = SmallDisk::mount("full_disk_recording") else {
        return;
    };
    let config = example("ev.toml");
    let out = common::tandem(
        &disk.path,
        &["run", config.to_str().unwrap(), "--virtual-clock", "--results", "."],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("No space left on device"), "{stderr}");
    // The run itself went on: every frame ran.
    assert!(stdout.contains("summary: 20000 frames"), "{stdout}");
    let kept = number_before(&stderr, "lines before it are in the file, each whole");
    let rows = lines(&disk.path.join("ev-run.csv"));
    assert_eq!(rows.len(), kept);
    assert!(kept > 100, "64 KiB holds hundreds of rows, kept {kept}");
    let columns = rows[0].split(',').count();
    let mut last = f64::NEG_INFINITY;
    for row in &rows[1..] {
        let values: Vec<f64> = row.split(',').map(|v| v.parse().expect("a number")).collect();
        assert_eq!(values.len(), columns, "a whole row: {row}");
        assert!(values.iter().all(|v| v.is_finite()), "{row}");
        assert!(values[0] > last, "times increase: {row}");
        last = values[0];
    }
}

#[test]
fn a_full_disk_stops_the_bus_log_and_the_run_goes_on_to_report_it() {
    let Some(disk) = SmallDisk::mount("full_disk_bus_log") else {
        return;
    };
    let dir = common::scratch("full_disk_bus_log_results");
    let config = example("ev-can.toml");
    let log = disk.path.join("bus.log");
    let out = common::tandem(
        &dir,
        &[
            "run",
            config.to_str().unwrap(),
            "--virtual-clock",
            "--duration",
            "10",
            "--bus-log",
            log.to_str().unwrap(),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("writing the bus log"), "{stderr}");
    // The run itself went on: every frame ran and was recorded.
    assert!(stdout.contains("summary: 10000 frames"), "{stdout}");
    assert_eq!(lines(&dir.join("results/ev-can.csv")).len(), 1001);
    let kept = number_before(&stderr, "lines before it are in the file, each whole");
    let logged = lines(&log);
    assert_eq!(logged.len(), kept);
    for line in &logged {
        tandem_log::parse_line(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
}

#[test]
fn an_overrun_storm_counts_every_late_frame_and_runs_them_all() {
    let dir = common::scratch("overrun_storm");
    let mut config = std::fs::read_to_string(example("ev.toml")).unwrap();
    // Every frame from 1 s to 1.2 s overruns its deadline.
    for k in 0..200 {
        config.push_str(&format!(
            "\n[[virtual_clock.fast_overruns]]\nat = \"{}ms\"\nextra = \"2ms\"\n",
            1000 + k
        ));
    }
    std::fs::write(dir.join("storm.toml"), config).unwrap();
    let out = common::tandem(
        &dir,
        &[
            "run",
            "storm.toml",
            "--virtual-clock",
            "--duration",
            "2",
            "--stats-json",
            "stats.json",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).unwrap()).unwrap();
    let count = |key: &str| {
        stats
            .pointer(key)
            .and_then(|v| v.as_u64())
            .unwrap_or_else(|| panic!("{key}"))
    };
    // Every frame ran, none was skipped, and the run did not fail.
    assert_eq!(count("/frames"), 2000, "{stats}");
    assert!(stats["failure"].is_null(), "{stats}");
    // Each storm frame ends 2 ms past its deadline: 200 frames put the fast
    // thread 400 ms behind, and every slot until it has caught up again
    // is a miss: overrun, passed while it computed (woken late, nothing
    // sent), or served with held outputs while frames were owed.
    let missed = count("/missed/total");
    assert_eq!(
        missed,
        count("/missed/overrun") + count("/missed/woke_late") + count("/missed/behind")
    );
    assert!((400..=450).contains(&missed), "{stats}");
    assert_eq!(count("/outputs/clamped"), 0, "{stats}");
    let rows = lines(&dir.join("results/ev-run.csv"));
    for row in &rows[1..] {
        assert!(
            row.split(',').all(|v| v.parse::<f64>().is_ok_and(f64::is_finite)),
            "{row}"
        );
    }
}

#[test]
fn a_burst_of_frames_at_one_instant_reaches_the_model_with_its_newest_value_and_replays_identically() {
    let dir = common::scratch("replay_burst");
    let examples = common::root().join("config/examples");
    std::fs::copy(examples.join("ev.dbc"), dir.join("ev.dbc")).unwrap();
    // The example without its E2E protection: these commands carry none.
    let config = std::fs::read_to_string(examples.join("ev-can.toml")).unwrap();
    let unprotected: Vec<&str> = config.lines().filter(|l| !l.starts_with("e2e =")).collect();
    std::fs::write(dir.join("ev-can.toml"), unprotected.join("\n")).unwrap();
    // 200 000 commands in one instant, far more than the sample queue
    // holds: all ask for no torque but the last, which asks for 100 N m
    // (raw 1000, 0x03E8).
    let mut log = "(1.000000) can0 100#0000000000000000\n".repeat(199_999);
    log.push_str("(1.000000) can0 100#E803000000000000\n");
    std::fs::write(dir.join("burst.log"), log).unwrap();
    let run = |n: usize| {
        let out = format!("out{n}.log");
        let results = format!("r{n}");
        let stdout = common::tandem_ok(
            &dir,
            &[
                "replay",
                "burst.log",
                "--config",
                "ev-can.toml",
                "--duration",
                "0.09",
                "--out",
                &out,
                "--results",
                &results,
            ],
        );
        let counters: Vec<String> = stdout
            .lines()
            .filter(|l| l.starts_with("  rx "))
            .map(str::to_string)
            .collect();
        let logged = std::fs::read_to_string(dir.join(&out)).unwrap();
        let csv = std::fs::read_to_string(dir.join(format!("{results}/ev-can.csv"))).unwrap();
        (counters, logged, csv)
    };
    let (first, second) = (run(1), run(2));
    assert_eq!(first.0, second.0, "the counters differ");
    assert!(first.1 == second.1, "the bus logs differ");
    assert!(first.2 == second.2, "the recordings differ");
    // Every record of the log is in the new log, and all were received.
    assert_eq!(first.1.lines().filter(|l| l.ends_with(" R")).count(), 200_000);
    assert!(
        first
            .0
            .iter()
            .any(|l| l.contains("rx frames") && l.ends_with(" 200000")),
        "{:?}",
        first.0
    );
    assert!(first.0.iter().any(|l| l.contains("rx samples merged")), "{:?}", first.0);
    // The plant got the newest command (held until the receive timeout of
    // 100 ms): its motor torque rose toward 100 N m.
    let last = first.2.lines().last().unwrap();
    let torque: f64 = last.split(',').nth(2).unwrap().parse().unwrap();
    assert!(
        torque > 50.0,
        "motor torque {torque} N m: the newest command was lost ({last})"
    );
}
