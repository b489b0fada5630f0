//! `tandem ecu` on the example ECU's configuration serves UDS on its bus:
//! udsoncan's client (on python-can-isotp, `tests/peers/uds_tester.py`)
//! reads the set point and the torque request in one request while the set
//! point ramps, and each torque it reads is the run's recorded torque at
//! the frame the set point dates (within a frame, and the DID's
//! resolution); the speed deviation DTC the model sets is confirmed while
//! it fails, stays confirmed once it passes, and is gone once cleared.
//! The run's summary names the diagnostic servers' frame sampler as what
//! its frame taps timed.

mod common;

use std::process::{Command, Stdio};

use common::{root, scratch, tandem, tandem_ok, Table};

const PORT: u16 = 43341;
/// The set point's ramp: 0 at 1 s to 6 m/s at 3 s.
const RAMP: (f64, f64) = (1.0, 3.0);

#[test]
fn udsoncan_reads_the_virtual_ecus_dids_and_dtc() {
    let found = Command::new("python3")
        .args(["-c", "import udsoncan, isotp, can"])
        .status();
    assert!(
        found.is_ok_and(|s| s.success()),
        "udsoncan or python-can-isotp missing: run .ci/run (it pip-installs udsoncan and can-isotp)"
    );
    let dir = scratch("diag");
    let examples = root().join("config/examples");
    let text = std::fs::read_to_string(examples.join("ecu.toml")).unwrap();
    let text = text
        .replace("\"../../models/", &format!("\"{}/models/", root().display()))
        .replace(
            "dbc = \"ev.dbc\"",
            &format!("dbc = \"{}\"", examples.join("ev.dbc").display()),
        )
        .replace("port = 43113", &format!("port = {PORT}"))
        .replace("duration = \"20s\"", "duration = \"6s\"")
        .replace(
            "speed_setpoint = [[0, 0], [1, 0], [6, 15], [12, 15], [16, 5], [20, 5]]",
            "speed_setpoint = [[0, 0], [1, 0], [3, 6], [4, 6], [4, 0], [6, 0]]",
        );
    assert!(
        text.contains("[3, 6]") && text.contains(&PORT.to_string()),
        "ecu.toml changed: {text}"
    );
    let config = dir.join("ecu.toml");
    std::fs::write(
        &config,
        format!("{text}\n[record]\nfile = \"ecu.csv\"\nsignals = [\"torque_request\"]\n"),
    )
    .unwrap();
    let tester = Command::new("python3")
        .arg(root().join("tests/peers/uds_tester.py"))
        .arg(PORT.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let ecu = tandem(&dir, &["ecu", config.to_str().unwrap()]);
    let tester = tester.wait_with_output().unwrap();
    assert!(ecu.status.success(), "{}", String::from_utf8_lossy(&ecu.stderr));
    assert!(tester.status.success(), "the tester failed");
    let said = String::from_utf8_lossy(&tester.stdout).into_owned();

    let csv = Table::read(&dir.join("results/ecu.csv"));
    let (times, torques) = (csv.column("time"), csv.column("torque_request"));
    let mut samples = 0;
    for line in said.lines().filter_map(|l| l.strip_prefix("sample ")) {
        let (setpoint, torque) = line.split_once(' ').unwrap();
        let setpoint = setpoint.parse::<f64>().unwrap() * 0.001;
        let torque = torque.parse::<f64>().unwrap() * 0.1;
        let t = RAMP.0 + setpoint / 6.0 * (RAMP.1 - RAMP.0);
        let near: Vec<f64> = (times.iter().zip(&torques))
            .filter(|(&row, _)| (row - t).abs() <= 0.0105)
            .map(|(_, &v)| v)
            .collect();
        assert!(
            near.iter().any(|v| (v - torque).abs() <= 0.05 + 1e-9),
            "torque {torque} read at set point {setpoint} (t = {t:.3} s); the run recorded {near:?} then"
        );
        samples += 1;
    }
    assert!(samples >= 10, "only {samples} samples during the ramp:\n{said}");
    // Failing: testFailed, this cycle, pending, confirmed, since clear (0x2F);
    // passing: all but testFailed; cleared and passing since: none.
    for (when, status) in [
        ("hold ", "C10000:2F"),
        ("after ", "C10000:2E"),
        ("cleared ", "C10000:00"),
    ] {
        let line = said
            .lines()
            .find(|l| l.starts_with(when))
            .unwrap_or_else(|| panic!("no `{when}` in:\n{said}"));
        assert!(line.split(' ').any(|s| s == status), "{line}: want {status}");
    }
    // An identifier the ECU does not serve: requestOutOfRange.
    assert!(said.lines().any(|l| l == "refused 0x31"), "{said}");
    // The ECU's report counts what it answered, and its negative responses
    // as the tester received them.
    let report = String::from_utf8_lossy(&ecu.stdout).into_owned();
    let count = |name: &str| -> u64 {
        let line = report.lines().find(|l| l.trim_start().starts_with(name));
        line.and_then(|l| l.split_whitespace().last()?.parse().ok())
            .unwrap_or(0)
    };
    let negative: u64 = said
        .lines()
        .find_map(|l| l.strip_prefix("negative ")?.parse().ok())
        .unwrap();
    assert_eq!(count("uds negative responses"), negative, "{report}");
    assert!(count("uds requests") > samples as u64 + 4, "{report}");
    assert_eq!(count("uds errors"), 0, "{report}");
}

#[test]
fn a_run_whose_only_frame_tap_is_the_diagnostic_servers_sampler_names_it_in_its_summary() {
    let dir = scratch("diag-taps");
    let examples = root().join("config/examples");
    let text = std::fs::read_to_string(examples.join("ecu.toml")).unwrap();
    let text = text
        .replace("\"../../models/", &format!("\"{}/models/", root().display()))
        .replace(
            "dbc = \"ev.dbc\"",
            &format!("dbc = \"{}\"", examples.join("ev.dbc").display()),
        )
        .replace(
            "transport = \"udp\"\ngroup = \"239.74.163.2\"\nport = 43113",
            "transport = \"virtual\"\nchannel = \"diag-taps\"",
        );
    assert!(
        text.contains("channel = \"diag-taps\"") && text.contains("[bus.diagnostics]") && !text.contains("[xcp]"),
        "ecu.toml changed: {text}"
    );
    std::fs::write(dir.join("ecu.toml"), text).unwrap();
    let out = tandem_ok(
        &dir,
        &[
            "ecu",
            "ecu.toml",
            "--virtual-clock",
            "--duration",
            "0.5",
            "--stats-json",
            "stats.json",
        ],
    );
    let line = out
        .lines()
        .map(str::trim_start)
        .find(|l| l.starts_with("frame taps"))
        .unwrap_or_else(|| panic!("no frame taps in the summary:\n{out}"));
    assert!(line.starts_with("frame taps (diagnostics) "), "{line}");
    assert!(!out.contains("xcp sampling"), "{out}");
    let stats: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).unwrap()).unwrap();
    assert_eq!(stats["frame_taps"], serde_json::json!(["diagnostics"]));
    assert_eq!(stats["histograms"]["frame taps"]["count"], stats["frames"], "{stats:#}");
}
