//! The run's XCP slave with pyXCP (PyPI `pyxcp`) as its master, on the EV
//! example on the virtual clock (tests/peers/pyxcp_ev.py): every frame's
//! values sampled by DAQ equal the run's CSV bit for bit; a calibration of
//! the plant's mass, a switch to the reference page and back take effect
//! at the frames the run reports, within two frames of their
//! acknowledgement; until the first, the run equals one without XCP.
//!
//! The run is paced at the real clock's speed (`--pace 1`), so that the
//! master's changes land while it runs; which frames they land at varies,
//! and the run's report says.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use common::Table;
use serde_json::Value;

/// Frames of the run: 8 s of the drive cycle at 1 ms.
const FRAMES: usize = 8000;

/// The EV example with every frame's speed, voltage and torque recorded
/// and `extra` appended.
fn config(dir: &Path, extra: &str) {
    let text = std::fs::read_to_string(common::root().join("config/examples/ev.toml")).unwrap();
    let record = text.find("\n[record]\n").expect("the example records") + 1;
    let end = text[record..].find("\n[virtual_clock]\n").unwrap() + record + 1;
    let text = format!(
        "{}[record]\nfile = \"ev.csv\"\nsignals = [\"vehicle_speed\", \"dc_voltage\", \"motor_torque\"]\n\n{}{extra}",
        &text[..record],
        &text[end..]
    );
    std::fs::write(dir.join("ev.toml"), text).unwrap();
}

fn python_has(module: &str) {
    let ok = Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .status();
    assert!(
        ok.is_ok_and(|s| s.success()),
        "python3 cannot import {module}: run .ci/run (it pip-installs pyxcp)"
    );
}

/// The CSV's rows as the text of each value (the shortest round-trip
/// forms Rust and Python both write).
fn texts(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// A `tandem run` started in `dir` with `args`, once it has said where its
/// XCP slave listens.
struct Started {
    run: std::process::Child,
    stdout: BufReader<std::process::ChildStdout>,
    udp: std::net::SocketAddr,
    tcp: std::net::SocketAddr,
}

impl Started {
    // The child is waited for by `succeeded`, or here when it ends first.
    #[allow(clippy::zombie_processes)]
    fn run(dir: &Path, args: &[&str]) -> Started {
        let mut run = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .arg("run")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(run.stdout.take().unwrap());
        let mut printed = String::new();
        loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).unwrap() == 0 {
                let out = run.wait_with_output().unwrap();
                panic!(
                    "the run ended first:\n{printed}{}",
                    String::from_utf8_lossy(&out.stderr)
                );
            }
            printed.push_str(&line);
            if let Some(at) = line.strip_prefix("xcp: listening on UDP ") {
                let (udp, tcp) = at.trim().split_once(" and TCP ").unwrap();
                let (udp, tcp) = (udp.parse().unwrap(), tcp.parse().unwrap());
                return Started { run, stdout, udp, tcp };
            }
        }
    }

    /// Waits for the run's end; fails, with what it printed, unless it
    /// succeeded. What it printed after its address (its summary).
    fn succeeded(self) -> String {
        let Started { mut run, stdout, .. } = self;
        let rest: Vec<String> = stdout.lines().map(Result::unwrap).collect();
        assert!(run.wait().unwrap().success(), "the run failed:\n{}", rest.join("\n"));
        rest.join("\n")
    }
}

#[test]
fn pyxcp_measures_every_frame_and_calibrates_the_running_ev_plant() {
    python_has("pyxcp");
    let dir = common::scratch("xcp-ev");
    let duration = format!("{}", FRAMES as f64 / 1000.0);
    config(&dir, "\n[xcp]\nlisten = \"127.0.0.1:0\"\nwait = true\n");
    let started = Started::run(
        &dir,
        &[
            "ev.toml",
            "--virtual-clock",
            "--pace",
            "1",
            "--duration",
            &duration,
            "--a2l",
            "ev.a2l",
            "--stats-json",
            "stats.json",
            "--results",
            ".",
        ],
    );
    let master = Command::new("python3")
        .arg(common::root().join("tests/peers/pyxcp_ev.py"))
        .args([
            &started.tcp.port().to_string(),
            dir.to_str().unwrap(),
            &(FRAMES - 1).to_string(),
        ])
        .output()
        .unwrap();
    let master_out = String::from_utf8_lossy(&master.stdout);
    assert!(
        master.status.success() && master_out.lines().any(|l| l.starts_with("ok ")),
        "pyXCP failed:\n{master_out}\n{}",
        String::from_utf8_lossy(&master.stderr)
    );
    started.succeeded();

    // The A2L on disk is the one uploaded with GET_ID.
    assert_eq!(
        std::fs::read_to_string(dir.join("ev.a2l")).unwrap(),
        std::fs::read_to_string(dir.join("uploaded.a2l")).unwrap()
    );

    // Every frame's samples equal the CSV's row, as text (bit for bit).
    let csv = texts(&dir.join("ev.csv"));
    let daq = Table::read(&dir.join("daq.csv"));
    let daq_text = texts(&dir.join("daq.csv"));
    assert_eq!(csv.len(), FRAMES);
    assert_eq!(daq_text.len(), FRAMES, "one DAQ sample per frame");
    let column = |name: &str| daq.header.iter().position(|h| h == name).unwrap();
    for (k, (row, sample)) in csv.iter().zip(&daq_text).enumerate() {
        assert_eq!(sample[0], k.to_string(), "sample {k} is frame {k}'s");
        let daq_values: Vec<&str> = ["vehicle_speed", "dc_voltage", "motor_torque"]
            .iter()
            .map(|n| sample[column(n)].as_str())
            .collect();
        let same = row[1..]
            .iter()
            .zip(&daq_values)
            .all(|(a, b)| a.parse::<f64>().unwrap().to_bits() == b.parse::<f64>().unwrap().to_bits());
        assert!(same, "frame {k}: CSV {row:?}, DAQ {daq_values:?}");
    }

    // The calibrations as the run reports them.
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).unwrap()).unwrap();
    let xcp = &stats["xcp"];
    assert_eq!(xcp["overruns"], 0);
    assert_eq!(xcp["unsent_bytes"], 0);
    let calibrations = xcp["calibrations"].as_array().unwrap();
    let values: Vec<f64> = calibrations.iter().map(|c| c["value"].as_f64().unwrap()).collect();
    assert_eq!(values, [3600.0, 1800.0, 3600.0], "{calibrations:?}");
    let mut applied = Vec::new();
    for c in calibrations {
        assert_eq!(c["parameter"], "ev.mass", "named as the A2L names it");
        let (acknowledged, at) = (
            c["acknowledged_at"].as_u64().unwrap(),
            c["applied_at"].as_u64().unwrap(),
        );
        assert!(
            (acknowledged..=acknowledged + 2).contains(&at),
            "applied at frame {at}, acknowledged at frame {acknowledged}"
        );
        applied.push(at as usize);
    }
    assert!(applied[0] < applied[1] && applied[1] < applied[2] && applied[2] < FRAMES);

    // The same run without XCP: equal bit for bit until the frame the
    // change was applied at. That frame's state comes from integrators
    // restarted on the new parameters, within the run's tolerance (atol
    // 1e-4) of the old; from the next frame on, the heavier car's speed
    // departs by more.
    let plain = common::scratch("xcp-ev-plain");
    config(&plain, "");
    common::tandem_ok(
        &plain,
        &[
            "run",
            "ev.toml",
            "--virtual-clock",
            "--duration",
            &duration,
            "--results",
            ".",
        ],
    );
    let baseline = texts(&plain.join("ev.csv"));
    let changed = applied[0];
    assert_eq!(csv[..changed], baseline[..changed], "before frame {changed}");
    let speed = |rows: &[Vec<String>], k: usize| rows[k][1].parse::<f64>().unwrap();
    let departure = |k: usize| (speed(&csv, k) - speed(&baseline, k)).abs();
    assert!(departure(changed) <= 1e-4, "frame {changed}: {}", departure(changed));
    assert!(
        departure(changed + 1) > 1e-4,
        "frame {}: {}",
        changed + 1,
        departure(changed + 1)
    );

    // Heavier from the first change to the reference page: the car gains
    // less speed over those frames than without XCP.
    let (from, to) = (applied[0] + 1, applied[1]);
    let gained = speed(&csv, to) - speed(&csv, from);
    let gained_light = speed(&baseline, to) - speed(&baseline, from);
    assert!(
        gained.abs() < gained_light.abs(),
        "frames {from}..{to}: {gained} m/s at 3600 kg, {gained_light} m/s at 1800 kg"
    );
}

/// Runs `config` (written into a scratch folder as `run.toml`) on the
/// virtual clock with a master sampling measurement 0 on each of
/// `events`; returns the frames (1 ms) each list was sampled at, and the
/// scratch folder.
fn sampled_frames(test: &str, config: &str, events: &[u16]) -> (Vec<Vec<u64>>, std::path::PathBuf) {
    use tandem_xcp::master::Master;
    let dir = common::scratch(test);
    std::fs::write(dir.join("run.toml"), config).unwrap();
    let started = Started::run(&dir, &["run.toml", "--virtual-clock", "--results", "."]);
    let mut master = Master::connect(started.udp).unwrap();
    master.kept = Some(Vec::new());
    let lists: Vec<(u16, &[u32])> = events.iter().map(|&e| (e, &[0u32][..])).collect();
    let first_pids = master.start_daq(&lists).unwrap();
    let mut quiet = 0;
    while quiet < 10 {
        let before = master.dtos;
        master.receive().unwrap();
        quiet = if master.dtos > before { 0 } else { quiet + 1 };
    }
    let kept = master.kept.take().unwrap();
    master.disconnect().unwrap();
    started.succeeded();
    let mut frames = vec![Vec::new(); events.len()];
    for dto in kept {
        let list = first_pids
            .iter()
            .position(|&p| p == dto[0])
            .expect("a DTO of a list made");
        let stamp_us = u32::from_le_bytes(dto[1..5].try_into().unwrap());
        frames[list].push(u64::from(stamp_us) / 1000);
    }
    (frames, dir)
}

#[test]
fn daq_lists_are_sampled_at_the_frame_at_each_model_rate_and_at_each_bus_transmit() {
    // The cruise control's PID runs every 20 ms: event 1.
    let model = common::root().join("models/examples/cruise_control.json");
    let config = format!(
        "model = {model:?}\nframe = \"1ms\"\nduration = \"1s\"\npolicy = \"explicit\"\n\
         [xcp]\nlisten = \"127.0.0.1:0\"\nwait = true\n"
    );
    let (frames, _) = sampled_frames("xcp-rate", &config, &[0, 1]);
    assert_eq!(frames[0], (0..1000).collect::<Vec<u64>>(), "every frame");
    assert_eq!(frames[1], (0..1000).step_by(20).collect::<Vec<u64>>(), "every 20 ms");

    // The EV plant on a bus of its own: events 1 and 2 are can0's receive
    // and transmit. Frame k's outputs are sent, and logged at the time of
    // frame k + 1, as the frame ends: its transmit event fires at frame k.
    let example = std::fs::read_to_string(common::root().join("config/examples/ev-can.toml")).unwrap();
    let dbc = common::root().join("config/examples/ev.dbc");
    let start = example.find("\n[[bus]]\n").unwrap();
    let end = example.find("\n[record]\n").unwrap();
    let buses = example[start..end]
        .replace(
            "transport = \"udp\"",
            "transport = \"virtual\"\nchannel = \"xcp-events\"",
        )
        .replace("dbc = \"ev.dbc\"", &format!("dbc = {dbc:?}"))
        .lines()
        .filter(|l| !l.starts_with("group") && !l.starts_with("port"))
        .collect::<Vec<_>>()
        .join("\n");
    let config = format!(
        "model = \"ev\"\nframe = \"1ms\"\nduration = \"1s\"\n[inputs]\nprofile = \"ev-drive-cycle\"\n{buses}\n\
         [record]\nbus_log = \"bus.log\"\n[xcp]\nlisten = \"127.0.0.1:0\"\nwait = true\n"
    );
    let (frames, dir) = sampled_frames("xcp-bus", &config, &[1, 2]);
    assert!(frames[0].is_empty(), "nothing was received: {:?}", frames[0]);
    let log = std::fs::read_to_string(dir.join("bus.log")).unwrap();
    let mut sent: Vec<u64> = log
        .lines()
        .filter(|l| l.ends_with(" T"))
        .map(|l| {
            let seconds: f64 = l[1..l.find(')').unwrap()].parse().unwrap();
            (seconds * 1000.0).round() as u64 - 1
        })
        .collect();
    sent.dedup();
    assert!(sent.len() >= 100, "{} frames sent on", sent.len());
    assert_eq!(frames[1], sent, "the frames that sent");
}

#[test]
fn a_calibration_that_would_change_the_models_shape_is_refused_with_its_error_code() {
    use tandem_xcp::master::Master;
    let dir = common::scratch("xcp-refusals");
    let model = serde_json::json!({
        "blocks": [
            {"id": "u", "type": "Inport", "params": {"width": 1}},
            {"id": "g", "type": "Gain", "params": {"gain": 2.0}},
            {"id": "y", "type": "Outport"}
        ],
        "links": [{"from": "u", "to": "g"}, {"from": "g", "to": "y"}]
    });
    std::fs::write(dir.join("gain.json"), model.to_string()).unwrap();
    let config = "model = \"gain.json\"\nframe = \"1ms\"\nduration = \"1s\"\npolicy = \"explicit\"\n\
                  [xcp]\nlisten = \"127.0.0.1:0\"\nwait = true\n";
    std::fs::write(dir.join("run.toml"), config).unwrap();
    let started = Started::run(
        &dir,
        &[
            "run.toml",
            "--virtual-clock",
            "--pace",
            "1",
            "--a2l",
            "gain.a2l",
            "--stats-json",
            "stats.json",
            "--results",
            ".",
        ],
    );
    // The characteristics in address order, as the A2L gives them.
    let a2l = std::fs::read_to_string(dir.join("gain.a2l")).unwrap();
    let characteristics: Vec<&str> = a2l
        .lines()
        .filter_map(|l| l.trim().strip_prefix("/begin CHARACTERISTIC "))
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(characteristics, ["u.width", "g.gain"]);

    let mut master = Master::connect(started.udp).unwrap();
    master.start_daq(&[(0, &[0])]).unwrap();
    // ERR_ACCESS_DENIED (0x24): a wider input changes the model's signals.
    assert_eq!(master.calibrate(0, 3.0).unwrap(), [0xFE, 0x24]);
    // ERR_OUT_OF_RANGE (0x22): not a number.
    assert_eq!(master.calibrate(1, f64::NAN).unwrap(), [0xFE, 0x22]);
    assert_eq!(master.calibrate(1, 5.0).unwrap(), [0xFF]);
    master.stop_daq().unwrap();
    master.disconnect().unwrap();
    let summary = started.succeeded();

    // The calibration named as the A2L names the characteristic, in the
    // summary and its JSON.
    let stats: Value = serde_json::from_str(&std::fs::read_to_string(dir.join("stats.json")).unwrap()).unwrap();
    let calibrations = stats["xcp"]["calibrations"].as_array().unwrap();
    assert_eq!(calibrations.len(), 1, "{calibrations:?}");
    assert_eq!(
        (&calibrations[0]["parameter"], &calibrations[0]["value"]),
        (&Value::from(characteristics[1]), &Value::from(5.0))
    );
    assert!(
        summary.lines().any(|l| l.starts_with("xcp: calibrated g.gain = 5 (")),
        "{summary}"
    );
}
