//! A `[[serial]]` device in a real-clock run, over a pseudo-terminal pair:
//! the test plays the device, sending `name=value` lines that drive a model
//! input and reading the lines of model outputs that the run sends back.

use std::io::{Read, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use serialport::{SerialPort, TTYPort};
use tandem_config::parse_run_config;
use tandem_session::{bind, ClockMode, Options, Session};

/// y = 2 u, with u the input the device drives.
const MODEL: &str = r#"{"blocks": [
    {"id": "u", "type": "Inport"},
    {"id": "k", "type": "Gain", "params": {"gain": 2}},
    {"id": "y", "type": "Output"}],
  "links": [{"from": "u", "to": "k"}, {"from": "k", "to": "y"}]}"#;

#[test]
fn received_fields_drive_inputs_and_outputs_go_back_as_lines() {
    let dir = std::env::temp_dir().join(format!("tandem-serial-device-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("double.json"), MODEL).unwrap();
    let (mut master, slave) = TTYPort::pair().expect("a pseudo-terminal pair");
    let path = slave.name().unwrap();
    let text = format!(
        "model = \"double.json\"\nframe = \"1ms\"\nduration = \"600ms\"\npolicy = \"explicit\"\n\
         [[serial]]\nname = \"rig\"\ndevice = \"{path}\"\nreceive = {{ speed = \"u\" }}\n\
         transmit = {{ double = \"y\" }}\ncycle = \"20ms\"\n"
    );
    let config = parse_run_config(&text, &dir.join("run.toml"), &[]).unwrap();
    let session = Session::new(bind(config).unwrap(), Options::new(ClockMode::Real, &dir)).unwrap();

    let device = std::thread::spawn(move || {
        let started = Instant::now();
        let mut heard = Vec::new();
        let mut buf = [0u8; 4096];
        master.set_timeout(Duration::from_millis(5)).unwrap();
        let mut first = true;
        while started.elapsed() < Duration::from_millis(900) {
            // A malformed line first, then the speed every 10 ms.
            let line: &[u8] = if first {
                b"speed=1.2.3\n"
            } else {
                b"speed=3.5 other=1\n"
            };
            first = false;
            if master.write_all(line).is_err() {
                // The run has closed the port.
                break;
            }
            if let Ok(n) = master.read(&mut buf) {
                heard.extend_from_slice(&buf[..n]);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        String::from_utf8(heard).unwrap()
    });
    let report = session.run(&mut ()).unwrap();
    drop(slave);
    let heard = device.join().unwrap();

    assert!(report.failure.is_none(), "{:?}", report.failure);
    let rig = &report.devices[0];
    assert_eq!(rig.name, "rig");
    let m = &rig.metrics;
    assert!(m.rx_frames.get() > 20, "lines received: {}", m.rx_frames.get());
    assert_eq!(m.rx_malformed.get(), 1, "the malformed line is counted");
    assert!(m.tx_frames.get() >= 25, "lines sent: {}", m.tx_frames.get());
    // Every line the run sent is `t=<frame time> double=<2u>`, and once the
    // device's speed arrived, double is 7.
    let lines: Vec<&str> = heard.lines().collect();
    assert!(lines.len() >= 25, "{heard}");
    for line in &lines {
        let record = tandem_bus::serial_lines::parse_line(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        let t = record.time().unwrap();
        assert!(
            (t / 0.02 - (t / 0.02).round()).abs() < 1e-9,
            "not a 20 ms boundary: {line}"
        );
        let fields: Vec<(&str, f64)> = record.fields().collect();
        assert_eq!(fields.len(), 1, "{line}");
        assert_eq!(fields[0].0, "double");
        assert!(fields[0].1 == 0.0 || fields[0].1 == 7.0, "{line}");
    }
    assert_eq!(lines.last().map(|l| l.ends_with("double=7")), Some(true), "{heard}");
    let _ = std::fs::remove_dir_all(Path::new(&dir));
}
