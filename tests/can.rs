//! End-to-end CAN: the plant in a closed loop with a python-can ECU over
//! CAN over UDP, log replay (deterministic at `--speed max`, on absolute
//! deadlines at `--speed 1`, each channel of the log to its bus), and bad
//! bus configuration and logs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tandem_can::CanId;
use tandem_dbc::Dbc;

fn tandem(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running tandem")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tandem-can-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn dbc_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("config/examples/ev.dbc")
}

fn require_python_can() {
    let ok = Command::new("python3")
        .args(["-c", "import can, cantools, msgpack"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "python-can missing: run .ci/run (it pip-installs python-can and cantools)"
    );
}

/// A plant configuration on UDP `port`, receiving ECU_Command and sending
/// VCU_Speeds, with `extra` appended.
fn plant_config(dir: &Path, port: u16, duration: &str, extra: &str) -> PathBuf {
    let text = format!(
        r#"model = "ev"
frame = "1ms"
duration = "{duration}"
policy = "correct"

[[bus]]
transport = "udp"
port = {port}
dbc = "{dbc}"

[[bus.receive]]
message = "ECU_Command"
timeout = "100ms"
on_timeout = "default"
signals = {{ TorqueRequest = "torque_request", BrakePressure = "brake_pressure" }}

[[bus.transmit]]
message = "VCU_Speeds"
signals = {{ VehicleSpeed = "vehicle_speed", MotorSpeed = "motor_speed" }}
{extra}"#,
        dbc = dbc_path().display()
    );
    let path = dir.join("plant.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Vehicle speed and motor torque of the plant under a constant torque
/// request, offline on the virtual clock: the reference the closed loop
/// must follow.
fn offline(dir: &Path, torque: f64, seconds: f64) -> Vec<(f64, f64, f64)> {
    let config = dir.join("offline.toml");
    std::fs::write(
        &config,
        format!(
            "model = \"ev\"\nduration = \"{seconds}s\"\n[inputs.points]\ntorque_request = [[0, {torque}]]\n\
             [record]\nfile = \"offline.csv\"\nsignals = [\"vehicle_speed\", \"motor_torque\"]\n"
        ),
    )
    .unwrap();
    let out = tandem(&["run", config.to_str().unwrap(), "--virtual-clock"], dir);
    assert!(out.status.success(), "{}", text(&out));
    let mut reader = csv::Reader::from_path(dir.join("results/offline.csv")).unwrap();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].parse().unwrap(), r[1].parse().unwrap(), r[2].parse().unwrap())
        })
        .collect()
}

/// Speed and torque of an offline curve at `t`.
fn at(curve: &[(f64, f64, f64)], t: f64) -> (f64, f64) {
    curve.iter().rev().find(|p| p.0 <= t).map_or((0.0, 0.0), |p| (p.1, p.2))
}

#[test]
fn a_python_can_ecu_drives_the_plant_as_the_model_says() {
    require_python_can();
    let dir = scratch("loop");
    let config = plant_config(
        &dir,
        43211,
        "3s",
        "[record]\nfile = \"plant.csv\"\nsignals = [\"motor_torque\", \"vehicle_speed\"]\nbus_log = \"plant.log\"\n",
    );
    let mut ecu = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/python_ecu.py"))
        .args([dbc_path().to_str().unwrap(), "43211", "3.2", "120"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The plant starts once the ECU is on the bus: python's imports take
    // seconds on a loaded machine.
    let mut ecu_out = std::io::BufReader::new(ecu.stdout.take().unwrap());
    let mut ready = String::new();
    std::io::BufRead::read_line(&mut ecu_out, &mut ready).unwrap();
    let plant = tandem(&["run", config.to_str().unwrap()], &dir);
    let mut decoded = String::new();
    std::io::Read::read_to_string(&mut ecu_out, &mut decoded).unwrap();
    let ecu = ecu.wait_with_output().unwrap();
    assert_eq!(ready, "ready\n", "{}", String::from_utf8_lossy(&ecu.stderr));
    assert!(plant.status.success(), "{}", text(&plant));
    assert!(ecu.status.success(), "{}", String::from_utf8_lossy(&ecu.stderr));

    // The plant applied the requested torque (its current loop is fast).
    let mut csv = csv::Reader::from_path(dir.join("results/plant.csv")).unwrap();
    let rows: Vec<(f64, f64, f64)> = csv
        .records()
        .map(|r| {
            let r = r.unwrap();
            (r[0].parse().unwrap(), r[1].parse().unwrap(), r[2].parse().unwrap())
        })
        .collect();
    let (_, torque, plant_speed) = *rows.last().unwrap();
    let reference = offline(&dir, 120.0, 3.0);
    let model_torque = at(&reference, 3.0).1;
    assert!(
        (torque - model_torque).abs() < 1.0,
        "motor torque at the end: {torque} N m, offline {model_torque}"
    );

    // The plant's speed follows the offline model from the frame the ECU's
    // first command reached it (python starts in a few tenths of a second,
    // later on a busy machine), within the 10 ms between commands and the
    // motor's current loop; what the ECU decoded is that speed.
    let start = (rows.iter().find(|r| r.1 > 1.0))
        .expect("the ECU's torque request reached the plant")
        .0;
    assert!(
        start < 2.0,
        "the ECU's first command reached the plant only at {start} s"
    );
    let seen: Vec<(f64, f64)> = decoded
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(t, v)| (t.parse().unwrap(), v.parse().unwrap()))
        .collect();
    assert!(seen.len() > 100, "the ECU decoded {} VCU_Speeds frames", seen.len());
    let last = seen.last().unwrap().1;
    let (low, high) = (
        at(&reference, 3.0 - start - 0.1).0,
        at(&reference, 3.0 - start + 0.02).0,
    );
    assert!(
        low > 0.5,
        "the reference accelerates: {low} m/s at {} s",
        3.0 - start - 0.1
    );
    assert!(
        plant_speed >= low * 0.97 && plant_speed <= high * 1.03,
        "plant {plant_speed} m/s at 3 s, commanded from {start} s; the model gives {low}..{high} m/s"
    );
    assert!(
        (plant_speed - last).abs() < 0.2,
        "plant {plant_speed} m/s, sent {last} m/s"
    );
    let log = std::fs::read_to_string(dir.join("results/plant.log")).unwrap();
    assert!(
        log.lines().any(|l| l.contains(" 100#") && l.ends_with(" R")),
        "ECU_Command frames logged as received"
    );
    assert!(
        log.lines().any(|l| l.contains(" 200#") && l.ends_with(" T")),
        "VCU_Speeds frames logged as sent"
    );
}

/// A candump log of ECU_Command every 10 ms for `seconds`: torque 80 N m,
/// with one frame of the wrong length at 0.5 s.
fn command_log(dir: &Path, seconds: f64) -> PathBuf {
    let dbc = Dbc::load(&dbc_path()).unwrap();
    let command = dbc.message("ECU_Command").unwrap();
    assert_eq!(command.id, CanId::standard(0x100).unwrap());
    let mut payload = [0u8; 8];
    command.signal("TorqueRequest").unwrap().encode(80.0, &mut payload);
    let hex: String = payload.iter().map(|b| format!("{b:02X}")).collect();
    let mut text = String::new();
    let frames = (seconds / 0.01).round() as usize;
    for i in 0..=frames {
        let t = 1_700_000_000.0 + i as f64 * 0.01;
        text.push_str(&format!("({t:.6}) can0 100#{hex} R\n"));
        if i == 50 {
            text.push_str(&format!("({t:.6}) can0 100#0011 R\n"));
        }
    }
    let path = dir.join("commands.log");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn replay_at_max_speed_is_bit_identical_and_drives_the_model() {
    let dir = scratch("replay");
    let config = plant_config(
        &dir,
        43212,
        "10s",
        "[record]\nfile = \"replay.csv\"\nsignals = [\"vehicle_speed\"]\n",
    );
    let log = command_log(&dir, 2.0);
    let mut runs = Vec::new();
    for i in 0..2 {
        let out_log = format!("out{i}.log");
        let out = tandem(
            &[
                "replay",
                log.to_str().unwrap(),
                "--config",
                config.to_str().unwrap(),
                "--speed",
                "max",
                "--out",
                &out_log,
            ],
            &dir,
        );
        assert!(out.status.success(), "{}", text(&out));
        let report = text(&out);
        assert!(
            report.contains("rx wrong length        1"),
            "the short frame is counted:\n{report}"
        );
        runs.push((
            std::fs::read(dir.join(&out_log)).unwrap(),
            std::fs::read(dir.join("results/replay.csv")).unwrap(),
        ));
    }
    assert!(runs[0] == runs[1], "two replays differ");
    let log = String::from_utf8(runs[0].0.clone()).unwrap();
    let sent: Vec<&str> = log.lines().filter(|l| l.contains(" 200#")).collect();
    assert!(
        (190..=210).contains(&sent.len()),
        "{} VCU_Speeds frames in 2 s at 10 ms",
        sent.len()
    );
    assert!(
        log.lines().filter(|l| l.contains(" 100#")).count() >= 200,
        "replayed frames are in the new log"
    );
    // Torque 80 N m from t = 0 accelerates the car as it does offline.
    let reference = offline(&dir, 80.0, 2.0);
    let csv = String::from_utf8(runs[0].1.clone()).unwrap();
    let last: f64 = csv.lines().last().unwrap().split(',').nth(1).unwrap().parse().unwrap();
    let expected = at(&reference, 2.0).0;
    assert!(
        (last - expected).abs() < 0.02 * expected,
        "replayed {last} m/s, offline {expected} m/s"
    );
}

#[test]
fn replay_at_speed_one_runs_on_the_recorded_times() {
    let dir = scratch("replay1");
    let config = plant_config(&dir, 43213, "10s", "");
    let log = command_log(&dir, 0.6);
    let started = std::time::Instant::now();
    let out = tandem(
        &[
            "replay",
            log.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--speed",
            "1",
        ],
        &dir,
    );
    let wall = started.elapsed().as_secs_f64();
    let report = text(&out);
    assert!(out.status.success(), "{report}");
    assert!(wall >= 0.6, "a 0.6 s log took {wall} s at speed 1");
    assert!(
        report.contains("replay: the last frame, due at 0.600000 s, was fed"),
        "{report}"
    );
}

/// A CSV file's header and rows, the last column (the frame source) kept
/// as text.
fn csv_rows(path: &Path) -> (Vec<String>, Vec<(Vec<f64>, String)>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().split(',').map(String::from).collect();
    let rows = lines
        .map(|l| {
            let mut fields: Vec<&str> = l.split(',').collect();
            let source = fields.pop().unwrap().to_string();
            (fields.iter().map(|v| v.parse().unwrap()).collect(), source)
        })
        .collect();
    (header, rows)
}

#[test]
fn a_replayed_log_through_a_stall_drives_each_frame_with_the_commands_of_its_time() {
    let dir = scratch("replay_stall");
    // ECU_Command every 10 ms: 80 N m, then 20 N m from 0.3 s.
    let dbc = Dbc::load(&dbc_path()).unwrap();
    let command = dbc.message("ECU_Command").unwrap();
    let mut lines = String::new();
    for i in 0..=60 {
        let mut payload = [0u8; 8];
        let torque = if i < 30 { 80.0 } else { 20.0 };
        command.signal("TorqueRequest").unwrap().encode(torque, &mut payload);
        let hex: String = payload.iter().map(|b| format!("{b:02X}")).collect();
        lines.push_str(&format!(
            "({:.6}) can0 100#{hex} R\n",
            1_700_000_000.0 + i as f64 * 0.01
        ));
    }
    let log = dir.join("commands.log");
    std::fs::write(&log, lines).unwrap();
    let record = "[record]\nfile = \"run.csv\"\nsignals = [\"motor_torque\", \"vehicle_speed\"]\nframe_source = true\n";
    let replay = |name: &str, stall: &str| {
        let config = plant_config(&dir, 43214, "10s", &format!("{record}{stall}"));
        let results = format!("results-{name}");
        let out = tandem(
            &[
                "replay",
                log.to_str().unwrap(),
                "--config",
                config.to_str().unwrap(),
                "--out",
                &format!("{name}.asc"),
                "--results",
                &results,
            ],
            &dir,
        );
        assert!(out.status.success(), "{}", text(&out));
        (csv_rows(&dir.join(&results).join("run.csv")), text(&out))
    };
    // The process stops from 285.5 ms for 60 ms: across the step.
    let stall = "[[virtual_clock.stalls]]\nat = \"285.5ms\"\nduration = \"60ms\"\n";
    let ((header, stalled), report) = replay("stalled", stall);
    let ((_, undisturbed), _) = replay("undisturbed", "");
    assert_eq!(header, ["time", "motor_torque", "vehicle_speed", "frame_source"]);
    assert!(report.contains("stalls: 1, the longest"), "{report}");
    // Every frame is recorded, those of the slots that passed too, and
    // computed with the commands of its own time: the torque follows the
    // step inside the stall as it does without one.
    assert_eq!(stalled.len(), undisturbed.len());
    let skipped: Vec<f64> = stalled
        .iter()
        .filter(|(_, s)| s == "skipped")
        .map(|(r, _)| r[0])
        .collect();
    assert_eq!(skipped.len(), 59, "{skipped:?}");
    assert_eq!(
        skipped[0],
        286.0 * 0.001,
        "the first slot after the one computed at 285.5 ms"
    );
    for ((a, source), (b, _)) in stalled.iter().zip(&undisturbed) {
        assert_eq!(a[0], b[0]);
        for c in 1..3 {
            assert!(
                (a[c] - b[c]).abs() <= 1e-6 * b[c].abs().max(1.0),
                "t = {} ({source}): {} vs {} undisturbed",
                a[0],
                a[c],
                b[c]
            );
        }
    }
    // Nothing was sent in the slots that passed; the stall is marked.
    let asc = std::fs::read_to_string(dir.join("stalled.asc")).unwrap();
    assert!(
        asc.contains("// 1700000000.345000 tandem stall on can0: slots 286 to 344 passed while the run was stopped, nothing was sent in them (59 frames); sending resumes here"),
        "{asc}"
    );
    let sent_in_stall = asc
        .lines()
        .filter(|l| l.contains("Tx"))
        .filter_map(|l| l.split_whitespace().next()?.parse::<f64>().ok())
        .filter(|&t| t - 1_700_000_000.0 > 0.2855 && t - 1_700_000_000.0 < 0.3455)
        .count();
    assert_eq!(sent_in_stall, 0, "frames sent while the run was stopped");
    // VCU_Speeds, due at 290 to 340 ms, goes out once when sending resumes.
    assert!(asc.contains("1700000000.346000 1  200             Tx"), "{asc}");
}

#[test]
fn a_stall_makes_a_protected_frame_late_never_lost() {
    let dir = scratch("stall_e2e");
    // A replayed log that only sets the run's length: a zero command at
    // 0 and at 0.45 s.
    std::fs::write(
        dir.join("zero.log"),
        "(1700000000.000000) can0 100#0000000000000000 R\n(1700000000.450000) can0 100#0000000000000000 R\n",
    )
    .unwrap();
    // BMS_Status every 100 ms under E2E profile 1A. Frame 100 makes it due;
    // the process stops from 100.5 ms for 60 ms, before it goes out.
    let extra = "[[bus.transmit]]\nmessage = \"BMS_Status\"\ncycle = \"100ms\"\n\
                 signals = { Soc = \"soc\" }\n\
                 e2e = { profile = \"1A\", data_id = 0x1F1, crc = \"BmsCrc\", counter = \"BmsCounter\" }\n\
                 [[virtual_clock.stalls]]\nat = \"100.5ms\"\nduration = \"60ms\"\n";
    let config = plant_config(&dir, 43215, "0.5s", extra);
    let out = tandem(
        &[
            "replay",
            "zero.log",
            "--config",
            config.to_str().unwrap(),
            "--out",
            "bus.asc",
        ],
        &dir,
    );
    assert!(out.status.success(), "{}", text(&out));
    let dbc = Dbc::load(&dbc_path()).unwrap();
    let bms = dbc.message("BMS_Status").unwrap();
    let counter = bms.signal("BmsCounter").unwrap();
    let path = dir.join("bus.asc");
    let sent: Vec<(i64, f64)> = tandem_log::LogReader::new(std::fs::File::open(&path).unwrap(), &path)
        .unwrap()
        .map(|r| r.unwrap())
        .filter(|r| r.frame.id() == bms.id)
        .map(|r| (r.time_ns, counter.decode(r.frame.payload())))
        .collect();
    // Sent once a cycle with its counter advancing by one each time: the
    // frame due at 101 ms goes out when sending resumes (161 ms), with the
    // next counter, not dropped with a counter the receiver never saw.
    let times: Vec<i64> = sent.iter().map(|&(t, _)| (t - sent[0].0) / 1_000_000).collect();
    assert_eq!(times, [0, 160, 200, 300, 400], "{sent:?}");
    for pair in sent.windows(2) {
        assert_eq!((pair[1].1 - pair[0].1).rem_euclid(15.0), 1.0, "{sent:?}");
    }
}

/// The `rx frames` count of bus `name` in a run's summary.
fn rx_frames(report: &str, name: &str) -> u64 {
    let header = format!("bus {name}:\n");
    let after = &report[report
        .find(&header)
        .unwrap_or_else(|| panic!("no bus {name}:\n{report}"))
        + header.len()..];
    let line = after.lines().find(|l| l.trim_start().starts_with("rx frames")).unwrap();
    line.split_whitespace().last().unwrap().parse().unwrap()
}

#[test]
fn replay_feeds_each_channel_of_the_log_to_its_bus() {
    let dir = scratch("channels");
    // Two buses, each taking one signal of ECU_Command.
    let config = dir.join("two.toml");
    let bus = |name: &str, port: u16, signal: &str, input: &str| {
        format!(
            "[[bus]]\nname = \"{name}\"\ntransport = \"udp\"\nport = {port}\ndbc = \"{}\"\n\
             [[bus.receive]]\nmessage = \"ECU_Command\"\nsignals = {{ {signal} = \"{input}\" }}\n",
            dbc_path().display()
        )
    };
    std::fs::write(
        &config,
        format!(
            "model = \"ev\"\nframe = \"1ms\"\nduration = \"10s\"\npolicy = \"correct\"\n{}{}",
            bus("powertrain", 43218, "TorqueRequest", "torque_request"),
            bus("chassis", 43219, "BrakePressure", "brake_pressure")
        ),
    )
    .unwrap();
    // 50 frames on vcan0, 25 on vcan1, 10 on an interface named as a bus.
    let mut log = String::new();
    for i in 0..50 {
        let t = 1_700_000_000.0 + f64::from(i) * 0.01;
        log.push_str(&format!("({t:.6}) vcan0 100#1122334455667788 R\n"));
        if i % 2 == 0 {
            log.push_str(&format!("({:.6}) vcan1 100#1122334455667788 R\n", t + 0.001));
        }
        if i % 5 == 0 {
            log.push_str(&format!("({:.6}) chassis 100#1122334455667788 R\n", t + 0.002));
        }
    }
    std::fs::write(dir.join("two.log"), log).unwrap();
    let replay = |extra: &[&str]| {
        let mut args = vec![
            "replay",
            "two.log",
            "--config",
            config.to_str().unwrap(),
            "--out",
            "out.log",
        ];
        args.extend_from_slice(extra);
        let out = tandem(&args, &dir);
        (out.status.success(), text(&out))
    };

    // By default only the channel named as a bus reaches one.
    let (ok, report) = replay(&[]);
    assert!(ok, "{report}");
    assert_eq!(
        (rx_frames(&report, "powertrain"), rx_frames(&report, "chassis")),
        (0, 10),
        "{report}"
    );
    assert!(report.contains("replay: 75 log records skipped"), "{report}");

    let (ok, report) = replay(&["--channel", "vcan0=powertrain", "--channel", "vcan1=chassis"]);
    assert!(ok, "{report}");
    assert_eq!(
        (rx_frames(&report, "powertrain"), rx_frames(&report, "chassis")),
        (50, 35),
        "{report}"
    );
    assert!(!report.contains("log records skipped"), "{report}");

    let (ok, report) = replay(&["--channel", "vcan9=chassis"]);
    assert!(!ok);
    assert!(
        report
            .contains("--channel vcan9: the log two.log has no channel vcan9; its channels are vcan0, vcan1, chassis"),
        "{report}"
    );
    let (ok, report) = replay(&["--channel", "vcan1=body"]);
    assert!(!ok);
    assert!(
        report.contains("--channel vcan1=body: the configuration has no bus body; its buses are powertrain, chassis"),
        "{report}"
    );
    let (ok, report) = replay(&["--channel", "vcan1"]);
    assert!(!ok && report.contains("is not LOG=BUS"), "{report}");
}

#[test]
fn a_malformed_log_line_is_reported_with_its_line_number() {
    let dir = scratch("badlog");
    let config = plant_config(&dir, 43214, "1s", "");
    std::fs::write(
        dir.join("bad.log"),
        "(1.000000) can0 100#0011223344556677\n(1.010000) can0 100#00112\n",
    )
    .unwrap();
    let out = tandem(&["replay", "bad.log", "--config", config.to_str().unwrap()], &dir);
    assert!(!out.status.success());
    let report = text(&out);
    assert!(
        report.contains("bad.log:2: data \"00112\" has an odd number of hex digits"),
        "{report}"
    );
}

/// Runs the plant configuration with `edit` applied to its text, expecting
/// an error that contains every one of `says`.
fn bad_config(name: &str, edit: (&str, &str), says: &[&str]) {
    let dir = scratch(name);
    let config = plant_config(&dir, 43215, "1s", "");
    let text_before = std::fs::read_to_string(&config).unwrap();
    assert!(text_before.contains(edit.0));
    std::fs::write(&config, text_before.replacen(edit.0, edit.1, 1)).unwrap();
    let out = tandem(&["run", config.to_str().unwrap(), "--virtual-clock"], &dir);
    assert!(!out.status.success());
    let report = text(&out);
    for s in says {
        assert!(report.contains(s), "expected {s:?} in:\n{report}");
    }
}

#[test]
fn an_unknown_message_is_named_with_its_line_and_the_dbc_messages() {
    bad_config(
        "msg",
        ("message = \"ECU_Command\"", "message = \"ECU_Cmd\""),
        &[
            "plant.toml:12:11: bus[0].receive[0].message",
            "has no message \"ECU_Cmd\"",
            "ECU_Command, VCU_Speeds",
        ],
    );
}

#[test]
fn an_unknown_signal_is_named_with_its_line_and_the_message_signals() {
    bad_config(
        "sig",
        ("VehicleSpeed = \"vehicle_speed\"", "Speed = \"vehicle_speed\""),
        &[
            "plant.toml:19:13: bus[0].transmit[0].signals.Speed",
            "VCU_Speeds has no signal \"Speed\"",
            "VehicleSpeed, MotorSpeed",
        ],
    );
}

#[test]
fn an_unknown_model_port_is_named_with_its_line_and_the_model_ports() {
    bad_config(
        "port",
        ("\"torque_request\"", "\"torque\""),
        &[
            "plant.toml:15:29: bus[0].receive[0].signals.TorqueRequest",
            "the model has no input \"torque\"",
            "torque_request, brake_pressure",
        ],
    );
    bad_config(
        "out",
        ("\"motor_speed\"", "\"rpm\""),
        &["the model has no output \"rpm\""],
    );
}

#[test]
fn a_receive_timeout_with_the_fault_policy_stops_the_run() {
    let dir = scratch("fault");
    let config = plant_config(&dir, 43216, "2s", "");
    let text_before = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text_before.replace("on_timeout = \"default\"", "on_timeout = \"fault\""),
    )
    .unwrap();
    let log = command_log(&dir, 0.3);
    let out = tandem(
        &[
            "replay",
            log.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--duration",
            "2",
        ],
        &dir,
    );
    assert!(!out.status.success());
    let report = text(&out);
    assert!(
        report.contains("bus can0: message ECU_Command not received for 0.1 s (timeout policy `fault`)"),
        "{report}"
    );
}

#[test]
fn an_e2e_table_is_checked_against_the_dbc_and_its_profile() {
    let signals = "signals = { TorqueRequest = \"torque_request\", BrakePressure = \"brake_pressure\" }";
    let with = |e2e: &str| format!("{signals}\ne2e = {e2e}");
    bad_config(
        "e2e-signal",
        (signals, &with("{ profile = \"1A\", data_id = 1, crc = \"Crc\" }")),
        &[
            "plant.toml:16:44: bus[0].receive[0].e2e.crc",
            "message ECU_Command has no signal \"Crc\"; its signals: TorqueRequest, BrakePressure, RoadGrade, CmdCrc, CmdCounter",
        ],
    );
    bad_config(
        "e2e-size",
        (
            signals,
            &with("{ profile = \"1A\", data_id = 1, crc = \"CmdCrc\", counter = \"CmdCrc\" }"),
        ),
        &[
            "plant.toml:16:64: bus[0].receive[0].e2e.counter",
            "signal CmdCrc is 8 bits; this field is 4",
        ],
    );
    bad_config(
        "e2e-bound",
        (signals, &with("{ profile = \"1A\", data_id = 1, crc = 60 }")),
        &[
            "plant.toml:16:19: bus[0].receive[0].e2e.profile",
            "message ECU_Command: E2E profile 1: `crc_offset` is 60, but it must be a multiple of 8",
        ],
    );
    bad_config(
        "e2e-status",
        (signals, &with("{ profile = \"1A\", data_id = 1, status = \"bms\" }")),
        &[
            "plant.toml:16:47: bus[0].receive[0].e2e.status",
            "the model has no input \"bms\"",
        ],
    );
}

#[test]
fn a_fault_is_checked_against_the_messages_the_bus_sends() {
    let sent = "signals = { VehicleSpeed = \"vehicle_speed\", MotorSpeed = \"motor_speed\" }";
    let with = |fault: &str| format!("{sent}\n[[bus.fault]]\n{fault}");
    bad_config(
        "fault-message",
        (sent, &with("message = \"ECU_Command\"\nkind = \"drop\"")),
        &[
            "plant.toml:21:11: bus[0].fault[0].message",
            "this bus sends no message \"ECU_Command\"; faults act on sent messages: VCU_Speeds",
        ],
    );
    bad_config(
        "fault-e2e",
        (sent, &with("message = \"VCU_Speeds\"\nkind = \"bad_crc\"")),
        &[
            "plant.toml:22:8: bus[0].fault[0].kind",
            "a \"bad_crc\" fault needs the message's E2E protection",
        ],
    );
    bad_config(
        "fault-burst",
        (sent, &with("kind = \"burst\"\nid = 0x200")),
        &["burst: identifier 0x200 is a message of the bus's DBC; give an unknown one"],
    );
}
