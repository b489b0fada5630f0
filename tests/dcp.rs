//! DCP federations end to end: the EV federation of `dcp/examples/` (the
//! plant, its virtual ECU, a driver with the road) run by `tandem
//! federate` against three `tandem dcp-slave` processes, in lock-step and
//! in soft real time across network namespaces made here on one bridged
//! LAN (root needed; skipped with a message otherwise), and through a UDP
//! relay that loses, duplicates and reorders datagrams. In lock-step the
//! recording must equal, byte for byte, `tandem cosim`'s of the same
//! system in one process. Run configurations served as slaves carry a CAN
//! bus across a federation (the examples as a user runs them, on
//! loopback).

mod common;

use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use common::{root, scratch, tandem, tandem_ok};

const MEMBERS: [(&str, &str, &str); 3] = [
    ("plant", "ev", "solver = \"rk4\"\nstep = 0.0001\n"),
    ("ecu", "models/examples/ev_speed_controller.json", "step = 0.01\n"),
    ("driver", "dcp/examples/driver.json", "step = 0.01\n"),
];

/// The connections of `dcp/examples/ev.toml`.
fn connections() -> String {
    let text = std::fs::read_to_string(root().join("dcp/examples/ev.toml")).unwrap();
    text[text.find("[[connection]]").unwrap()..].to_string()
}

/// The source of a member, as its files give it.
fn source(s: &str) -> String {
    if s.contains('/') {
        root().join(s).display().to_string()
    } else {
        s.to_string()
    }
}

/// The in-process twin of a federation of `stop` seconds, run by `tandem
/// cosim`: its CSV.
fn in_process(dir: &Path, stop: f64) -> Vec<u8> {
    let mut system = format!("[master]\nstep = 0.01\nstop = {stop}\nextrapolation = 0\npoint_inputs = \"held\"\n");
    for (name, src, extra) in MEMBERS {
        system += &format!("\n[[model]]\nname = \"{name}\"\nsource = \"{}\"\n{extra}", source(src));
    }
    system += "\n";
    system += &connections();
    std::fs::write(dir.join("twin.toml"), system).unwrap();
    tandem_ok(dir, &["cosim", "twin.toml", "--out", "twin.csv"]);
    std::fs::read(dir.join("twin.csv")).unwrap()
}

/// Three control addresses on loopback from port `first` on.
fn loopback(first: u16) -> [String; 3] {
    [0, 1, 2].map(|k| format!("127.0.0.1:{}", first + k))
}

/// The number that starts `text` (up to a space).
fn first_number(text: &str) -> f64 {
    text.split(' ').next().unwrap().parse().unwrap()
}

/// Slave processes, killed when dropped.
struct Slaves(Vec<Child>);

impl Drop for Slaves {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Writes the three slave files (control addresses from `control`) and
/// their descriptions, and starts the slaves, each under `prefix` (e.g.
/// `ip netns exec NS`).
fn start_slaves(dir: &Path, control: &[String; 3], prefix: &[Vec<String>; 3]) -> Slaves {
    let mut slaves = Slaves(Vec::new());
    for (k, (name, src, extra)) in MEMBERS.iter().enumerate() {
        let file = dir.join(format!("{name}.toml"));
        std::fs::write(
            &file,
            format!(
                "name = \"{name}\"\nsource = \"{}\"\n{extra}control = \"{}\"\n",
                source(src),
                control[k]
            ),
        )
        .unwrap();
        let command = |args: &[&str]| {
            let mut all: Vec<String> = prefix[k].clone();
            all.push(env!("CARGO_BIN_EXE_tandem").into());
            all.extend(args.iter().map(|a| a.to_string()));
            let mut c = Command::new(&all[0]);
            c.args(&all[1..]).current_dir(dir);
            c
        };
        let description = format!("{name}.dcpx");
        let out = command(&["dcp-slave", &format!("{name}.toml"), "--description", &description])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let child = command(&["dcp-slave", &format!("{name}.toml")])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        slaves.0.push(child);
    }
    thread::sleep(Duration::from_millis(300));
    slaves
}

/// A federation file of the three members at `addresses`, `stop` long.
fn federation(dir: &Path, addresses: &[String; 3], stop: f64, extra: &str) -> PathBuf {
    let mut text = format!("[federation]\nstep = 0.01\nstop = {stop}\n{extra}");
    for (k, (name, _, _)) in MEMBERS.iter().enumerate() {
        text += &format!(
            "\n[[slave]]\nname = \"{name}\"\ndescription = \"{name}.dcpx\"\naddress = \"{}\"\n",
            addresses[k]
        );
    }
    text += "\n";
    text += &connections();
    let path = dir.join("fed.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// Three network namespaces on one bridged LAN with this one (a veth pair
/// each, the other ends on a bridge here), removed when dropped: hosts
/// that reach each other and the master directly, as machines on a switch.
struct Namespaces {
    names: Vec<String>,
    bridge: String,
    subnet: usize,
}

impl Namespaces {
    /// Hosts 10.201.S.2 to 10.201.S.4, the master at 10.201.S.1 (S apart
    /// for each set made by this process); `None` (saying why) where
    /// namespaces cannot be made.
    fn make() -> Option<Namespaces> {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let subnet = NEXT.fetch_add(1, Ordering::Relaxed);
        let id = format!("{}{subnet}", std::process::id() % 10000);
        let mut made = Namespaces {
            names: Vec::new(),
            bridge: format!("tdb{id}"),
            subnet,
        };
        let ip = |args: &[&str]| {
            let ok = Command::new("ip").args(args).status().is_ok_and(|s| s.success());
            if !ok {
                eprintln!(
                    "SKIPPED: cannot make network namespaces (ip {}): run as root with iproute2",
                    args.join(" ")
                );
            }
            ok
        };
        let bridge = made.bridge.clone();
        let master = format!("10.201.{subnet}.1/24");
        if !ip(&["link", "add", &bridge, "type", "bridge"]) {
            return None;
        }
        if !ip(&["addr", "add", &master, "dev", &bridge]) || !ip(&["link", "set", &bridge, "up"]) {
            return None;
        }
        for k in 0..3 {
            let ns = format!("tdcp{id}n{k}");
            let (outer, inner) = (format!("td{id}o{k}"), format!("td{id}i{k}"));
            let host = format!("10.201.{subnet}.{}/24", k + 2);
            if !ip(&["netns", "add", &ns]) {
                return None;
            }
            made.names.push(ns.clone());
            let steps: [&[&str]; 7] = [
                &["link", "add", &outer, "type", "veth", "peer", "name", &inner],
                &["link", "set", &inner, "netns", &ns],
                &["link", "set", &outer, "master", &bridge],
                &["link", "set", &outer, "up"],
                &["-n", &ns, "addr", "add", &host, "dev", &inner],
                &["-n", &ns, "link", "set", &inner, "up"],
                &["-n", &ns, "link", "set", "lo", "up"],
            ];
            if !steps.into_iter().all(ip) {
                return None;
            }
        }
        Some(made)
    }

    /// Each host's address with `port`.
    fn addresses(&self, port: u16) -> [String; 3] {
        std::array::from_fn(|k| format!("10.201.{}.{}:{port}", self.subnet, k + 2))
    }

    /// The command prefix that runs a program on each host.
    fn prefixes(&self) -> [Vec<String>; 3] {
        std::array::from_fn(|k| vec!["ip".into(), "netns".into(), "exec".into(), self.names[k].clone()])
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.names {
            let _ = Command::new("ip").args(["netns", "del", ns]).status();
        }
        let _ = Command::new("ip").args(["link", "del", &self.bridge]).status();
    }
}

#[test]
fn a_lock_step_federation_across_three_hosts_equals_the_same_system_in_one_process() {
    let Some(namespaces) = Namespaces::make() else { return };
    let dir = scratch("dcp-netns");
    let control = namespaces.addresses(47000);
    let _slaves = start_slaves(&dir, &control, &namespaces.prefixes());
    let fed = federation(&dir, &control, 5.0, "mode = \"lock-step\"\n");
    let out = tandem_ok(&dir, &["federate", fed.to_str().unwrap(), "--out", "fed.csv"]);
    assert!(out.contains("3 members in lock-step, 500 steps"), "{out}");
    let federated = std::fs::read(dir.join("fed.csv")).unwrap();
    assert_eq!(
        federated,
        in_process(&dir, 5.0),
        "the federation's CSV differs from tandem cosim's"
    );
    // And the plant answered the ECU: it is moving towards 10 m/s.
    let table = common::Table::read(&dir.join("fed.csv"));
    let v = table.column("plant.vehicle_speed");
    assert!(v[v.len() - 1] > 5.0 && v[v.len() - 1] < 15.0, "{}", v[v.len() - 1]);
}

/// A UDP relay between the master and one slave: lossy, it loses,
/// duplicates and holds back (reorders) datagrams going to the slave, and
/// loses some of its answers; it notes the type of each datagram it passes
/// to the slave, and whether the slave was gone then.
struct Relay {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    gone: Arc<AtomicBool>,
    passed: Arc<std::sync::Mutex<Vec<(bool, u8)>>>,
}

impl Relay {
    fn start(slave: SocketAddr, lossy: bool) -> Relay {
        let front = UdpSocket::bind("127.0.0.1:0").unwrap();
        let back = UdpSocket::bind("127.0.0.1:0").unwrap();
        back.connect(slave).unwrap();
        front.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
        back.set_read_timeout(Some(Duration::from_millis(1))).unwrap();
        let relay = Relay {
            address: front.local_addr().unwrap(),
            stop: Arc::default(),
            gone: Arc::default(),
            passed: Arc::default(),
        };
        let (halt, gone, passed) = (relay.stop.clone(), relay.gone.clone(), relay.passed.clone());
        thread::spawn(move || {
            let mut buf = [0u8; 65536];
            let mut master = None;
            let (mut down, mut up) = (0u64, 0u64);
            let mut held: Option<Vec<u8>> = None;
            while !halt.load(Ordering::Relaxed) {
                if let Ok((n, from)) = front.recv_from(&mut buf) {
                    master = Some(from);
                    down += 1;
                    let d = &buf[..n];
                    passed.lock().unwrap().push((gone.load(Ordering::Relaxed), d[0]));
                    match if lossy { down % 97 } else { 0 } {
                        13 => {} // lost
                        29 => {
                            let _ = back.send(d); // duplicated
                            let _ = back.send(d);
                        }
                        53 => held = Some(d.to_vec()), // held back: goes after the next
                        _ => {
                            let _ = back.send(d);
                            if let Some(h) = held.take() {
                                let _ = back.send(&h);
                            }
                        }
                    }
                }
                if let Ok(n) = back.recv(&mut buf) {
                    up += 1;
                    if let (Some(m), false) = (master, lossy && up % 89 == 41) {
                        let _ = front.send_to(&buf[..n], m);
                    }
                }
            }
        });
        relay
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[test]
fn lost_duplicated_and_reordered_datagrams_leave_a_lock_step_federation_bit_identical() {
    let dir = scratch("dcp-faults");
    let ports = [47311, 47312, 47313];
    let control: [String; 3] = std::array::from_fn(|k| format!("127.0.0.1:{}", ports[k]));
    let _slaves = start_slaves(&dir, &control, &[vec![], vec![], vec![]]);
    let relays: Vec<Relay> = control.iter().map(|c| Relay::start(c.parse().unwrap(), true)).collect();
    let through: [String; 3] = std::array::from_fn(|k| relays[k].address.to_string());
    let fed = federation(&dir, &through, 2.0, "timeout = 0.05\nretries = 20\n");
    let out = tandem_ok(&dir, &["federate", fed.to_str().unwrap(), "--out", "fed.csv"]);
    let resent: u64 = out
        .lines()
        .filter_map(|l| l.split(" requests, ").nth(1)?.split(' ').next()?.parse::<u64>().ok())
        .sum();
    assert!(resent > 0, "no datagram was sent again:\n{out}");
    assert_eq!(std::fs::read(dir.join("fed.csv")).unwrap(), in_process(&dir, 2.0));
}

#[test]
fn a_slave_that_vanishes_is_named_and_the_rows_before_are_kept() {
    let dir = scratch("dcp-vanish");
    let control = loopback(47321);
    let mut slaves = start_slaves(&dir, &control, &[vec![], vec![], vec![]]);
    let fed = federation(&dir, &control, 600.0, "timeout = 0.05\nretries = 3\n");
    let killer = thread::spawn(move || {
        thread::sleep(Duration::from_millis(700));
        let _ = slaves.0[1].kill();
        slaves
    });
    let out = tandem(&dir, &["federate", fed.to_str().unwrap(), "--out", "fed.csv"]);
    drop(killer.join());
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("slave \"ecu\" at 127.0.0.1:47322 does not answer") && err.contains("after 4 tries"),
        "{err}"
    );
    let rows = std::fs::read_to_string(dir.join("fed.csv")).unwrap().lines().count();
    assert!(rows > 10, "{rows} rows kept");
}

#[test]
fn a_federation_file_with_a_mistake_names_its_place() {
    let dir = scratch("dcp-bad");
    std::fs::write(
        dir.join("f.toml"),
        "[federation]\nstep = 0.01\nstop = 1\n\n[[slave]]\nname = \"p\"\ndescription = \"nope.dcpx\"\n",
    )
    .unwrap();
    let out = tandem(&dir, &["federate", "f.toml"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("f.toml:7:15: slave[0].description: cannot read"), "{err}");
    std::fs::write(dir.join("f.toml"), "[federation]\nstep = 0.01\nstop = 1.005\n").unwrap();
    let err = String::from_utf8_lossy(&tandem(&dir, &["federate", "f.toml"]).stderr).to_string();
    assert!(
        err.contains("f.toml:3:8: federation.stop: the stop time 1.005 s is not a whole number"),
        "{err}"
    );
}

#[test]
fn a_soft_real_time_federation_across_three_hosts_counts_its_lateness_and_follows_the_lock_step_run() {
    let Some(namespaces) = Namespaces::make() else { return };
    let dir = scratch("dcp-srt");
    let control = namespaces.addresses(47000);
    let _slaves = start_slaves(&dir, &control, &namespaces.prefixes());
    let fed = federation(&dir, &control, 3.0, "mode = \"soft-real-time\"\nstart_delay = 0.2\n");
    let out = tandem_ok(&dir, &["federate", fed.to_str().unwrap(), "--out", "srt.csv"]);
    assert!(out.contains("3 members in SRT, 300 steps"), "{out}");
    // Every member's rows are counted; a missing one is held. Bounded:
    // at most a tenth of the steps missing, and data at most a step old
    // at the median.
    for line in out.lines().filter(|l| l.contains("steps missing")) {
        let missing = first_number(line.split(": ").nth(1).unwrap());
        assert!(missing <= 30.0, "{line}");
        let p50 = first_number(line.split("p50 ").nth(1).unwrap());
        assert!(p50 < 10_000.0, "{line}");
    }
    // Slave to slave, a step late, held: close to lock-step.
    let srt = common::Table::read(&dir.join("srt.csv"));
    std::fs::write(dir.join("twin.csv"), in_process(&dir, 3.0)).unwrap();
    let twin = common::Table::read(&dir.join("twin.csv"));
    let (a, b) = (srt.column("plant.vehicle_speed"), twin.column("plant.vehicle_speed"));
    assert_eq!(a.len(), 301);
    assert!(
        (a[300] - b[300]).abs() < 0.5,
        "soft real time {} against lock-step {}",
        a[300],
        b[300]
    );
}

/// The driver alone as a slave on `port` (with `extra` keys), its
/// description written; and a federation file of it, `stop` long.
fn lone_driver(dir: &Path, port: u16, extra: &str, stop: f64) -> (Command, PathBuf) {
    let file = dir.join("driver.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"driver\"\nsource = \"{}\"\nstep = 0.01\ncontrol = \"127.0.0.1:{port}\"\n{extra}",
            source("dcp/examples/driver.json")
        ),
    )
    .unwrap();
    tandem_ok(dir, &["dcp-slave", "driver.toml", "--description", "driver.dcpx"]);
    let fed = dir.join("fed.toml");
    std::fs::write(
        &fed,
        format!(
            "[federation]\nstep = 0.01\nstop = {stop}\ntimeout = 0.2\nretries = 10\n\n[[slave]]\nname = \"driver\"\n\
             description = \"driver.dcpx\"\n\n[[connection]]\nfrom = \"driver.road_grade\"\nto = \"driver.distance\"\n"
        ),
    )
    .unwrap();
    let mut slave = Command::new(env!("CARGO_BIN_EXE_tandem"));
    slave
        .args(["dcp-slave", "driver.toml"])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    (slave, fed)
}

#[test]
fn a_slave_whose_master_vanishes_returns_to_alive_for_the_next_master() {
    let dir = scratch("dcp-master-gone");
    let (mut slave, fed) = lone_driver(&dir, 47341, "master_timeout = 0.5\n", 1000.0);
    let _slave = Slaves(vec![slave.spawn().unwrap()]);
    thread::sleep(Duration::from_millis(300));
    let mut master = Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(["federate", fed.to_str().unwrap(), "--out", "first.csv"])
        .current_dir(&dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_millis(500));
    master.kill().unwrap();
    master.wait().unwrap();
    // Registered with a master that is gone: until its timeout, a new
    // master is refused; after it, the slave takes the new one.
    thread::sleep(Duration::from_millis(1000));
    std::fs::write(
        &fed,
        std::fs::read_to_string(&fed)
            .unwrap()
            .replace("stop = 1000", "stop = 1"),
    )
    .unwrap();
    let out = tandem_ok(&dir, &["federate", fed.to_str().unwrap(), "--out", "second.csv"]);
    assert!(out.contains("1 members in lock-step, 100 steps"), "{out}");
}

#[test]
fn a_slave_that_restarts_in_the_middle_of_a_run_is_named() {
    let dir = scratch("dcp-restart");
    let (mut slave, fed) = lone_driver(&dir, 47351, "", 1000.0);
    let mut first = slave.spawn().unwrap();
    thread::sleep(Duration::from_millis(300));
    let restarter = thread::spawn(move || {
        thread::sleep(Duration::from_millis(500));
        first.kill().unwrap();
        first.wait().unwrap();
        Slaves(vec![slave.spawn().unwrap()])
    });
    let out = tandem(&dir, &["federate", fed.to_str().unwrap(), "--out", "fed.csv"]);
    let _second = restarter.join().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("slave \"driver\" refused STC_do_step: PROTOCOL_ERROR_PDU_NOT_ALLOWED_IN_THIS_STATE: it is not in the state the master left it in (restarted"),
        "{err}"
    );
}

/// Runs `tandem` with `args` in `dir` in the background, its output to
/// `log`.
fn spawn_logged(dir: &Path, args: &[&str], log: &str) -> Child {
    let out = std::fs::File::create(dir.join(log)).unwrap();
    Command::new(env!("CARGO_BIN_EXE_tandem"))
        .args(args)
        .current_dir(dir)
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .unwrap()
}

/// The number after `key` in the line of `text` that starts with it.
fn counted(text: &str, key: &str) -> u64 {
    let line = text
        .lines()
        .map(str::trim_start)
        .find(|l| l.starts_with(key))
        .unwrap_or_else(|| panic!("no \"{key}\" in:\n{text}"));
    line[key.len()..].split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn a_can_bus_carried_across_a_federation_drives_the_plant_as_a_local_bus_does() {
    let dir = scratch("dcp-can");
    let examples = root().join("dcp/examples");
    let run = |name: &str| examples.join(format!("{name}-can.toml")).display().to_string();
    // The example run configurations, served as slaves, and the example
    // federation cut to 3 s.
    let results = dir.display().to_string();
    let _slaves = Slaves(vec![
        spawn_logged(&dir, &["run", &run("plant"), "--results", &results], "plant.log"),
        spawn_logged(&dir, &["run", &run("ecu"), "--results", &results], "ecu.log"),
    ]);
    let fed = std::fs::read_to_string(examples.join("ev-can.toml"))
        .unwrap()
        .replace("stop = 20.0", "stop = 3.0")
        .replace(
            "\"plant-can.dcpx\"",
            &format!("\"{}\"", examples.join("plant-can.dcpx").display()),
        )
        .replace(
            "\"ecu-can.dcpx\"",
            &format!("\"{}\"", examples.join("ecu-can.dcpx").display()),
        );
    std::fs::write(dir.join("fed.toml"), fed).unwrap();
    thread::sleep(Duration::from_millis(500));
    let out = tandem_ok(&dir, &["federate", "fed.toml", "--out", "fed.csv"]);
    assert!(out.contains("2 members in SRT, 3000 steps"), "{out}");
    // The master counts the frames of each step: over 3 s, the plant's
    // VCU_Speeds every 10 ms and BMS_Status (an extended identifier) every
    // 100 ms, the ECU's ECU_Command every 10 ms.
    let table = common::Table::read(&dir.join("fed.csv"));
    let total = |column: &str| table.column(column).iter().sum::<f64>();
    for (column, expected) in [("plant.can0.tx", 330.0), ("ecu.can0.tx", 300.0)] {
        let sent = total(column);
        assert!(
            (sent - expected).abs() <= 0.03 * expected,
            "{column}: {sent} frames, not {expected}"
        );
    }
    // Both slaves report their run when the master stops it: each bus
    // received every frame the other member sent while both ran (the
    // master's count of them, but those in flight at the end).
    thread::sleep(Duration::from_millis(1500));
    let plant = std::fs::read_to_string(dir.join("plant.log")).unwrap();
    let ecu = std::fs::read_to_string(dir.join("ecu.log")).unwrap();
    let received = |log: &str| -> f64 {
        let line = log.lines().find(|l| l.starts_with("frames over DCP:")).unwrap();
        first_number(line.split(", ").nth(1).unwrap())
    };
    assert!(received(&plant) + 3.0 >= total("ecu.can0.tx"), "{plant}");
    assert!(received(&ecu) + 3.0 >= total("plant.can0.tx"), "{ecu}");
    // The ECU maps VCU_Speeds only: each came through.
    assert!(counted(&ecu, "rx frames") + 3 >= 300, "{ecu}");
    assert_eq!(counted(&plant, "unusable states:"), 0, "{plant}");
    // The plant follows the ECU's torque as over a local bus: at 3 s the
    // set point ramp (0 to 15 m/s from 1 s to 6 s) has the car near
    // 4.6 m/s (`tandem run config/examples/ev-can.toml`, the same two
    // nodes over CAN over UDP on one host, gives 4.57 m/s there).
    let plant_rows = common::Table::read(&dir.join("plant-can.csv"));
    let speed = plant_rows.column("vehicle_speed");
    let time = plant_rows.column("time");
    let at3 = speed[time.iter().position(|&t| t >= 3.0).unwrap()];
    assert!((at3 - 4.6).abs() < 0.25, "speed at 3 s: {at3} m/s\n{plant}");
    assert!(speed.iter().all(|v| v.is_finite() && (-0.01..20.0).contains(v)));
}

#[test]
fn a_run_slave_takes_hard_real_time_only_where_the_machine_has_it() {
    let dir = scratch("dcp-hrt");
    let plant = std::fs::read_to_string(root().join("dcp/examples/plant-can.toml"))
        .unwrap()
        .replace("127.0.0.1:47011", "127.0.0.1:47361")
        .replace(
            "\"../../config/examples/ev.dbc\"",
            &format!("\"{}\"", root().join("config/examples/ev.dbc").display()),
        );
    std::fs::write(dir.join("plant.toml"), plant).unwrap();
    tandem_ok(&dir, &["run", "plant.toml", "--dcp-description", "plant.dcpx"]);
    let description = std::fs::read_to_string(dir.join("plant.dcpx")).unwrap();
    assert!(
        description.contains("<HardRealTime/>") && description.contains("<SoftRealTime/>"),
        "a run has no lock-step: {description}"
    );
    assert!(!description.contains("<NonRealTime/>"), "{description}");
    std::fs::write(
        dir.join("fed.toml"),
        "[federation]\nstep = 0.001\nstop = 1.0\nmode = \"hard-real-time\"\nstart_delay = 0.2\n\n[[slave]]\nname = \
         \"plant\"\ndescription = \"plant.dcpx\"\n",
    )
    .unwrap();
    let _slave = Slaves(vec![spawn_logged(&dir, &["run", "plant.toml"], "plant.log")]);
    thread::sleep(Duration::from_millis(500));
    let out = tandem(&dir, &["federate", "fed.toml", "--out", "fed.csv"]);
    // The same checks as `tandem run --require-rt`, which refuses a
    // machine without them.
    let real_time = tandem(
        &root(),
        &[
            "run",
            "config/examples/ev.toml",
            "--duration",
            "0.01",
            "--require-rt",
            "--results",
            dir.to_str().unwrap(),
        ],
    )
    .status
    .success();
    thread::sleep(Duration::from_millis(300));
    let log = std::fs::read_to_string(dir.join("plant.log")).unwrap();
    if real_time {
        assert!(out.status.success(), "{}\n{log}", String::from_utf8_lossy(&out.stderr));
        assert!(
            log.contains("summary:") && log.contains("real time: all checks passed"),
            "{log}"
        );
    } else {
        eprintln!("this machine is not real-time: checking that hard real time is refused");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("slave \"plant\" refused STC_register: INVALID_OP_MODE"),
            "{err}"
        );
        assert!(log.contains("hard real time refused: this machine lacks"), "{log}");
    }
}

#[test]
fn values_cross_a_federation_in_the_types_the_slave_gives_its_ports() {
    let dir = scratch("dcp-types");
    let types = "types = { speed_setpoint = \"uint8\", road_grade = \"float32\", distance = \"int16\" }\n";
    let (mut slave, fed) = lone_driver(&dir, 47371, types, 10.0);
    // The set point (10, then 20 m/s) scaled by 3 is the distance: past
    // 60 m from t = 8 s, where the road climbs 4 %.
    std::fs::write(
        &fed,
        std::fs::read_to_string(&fed).unwrap().replace(
            "from = \"driver.road_grade\"\nto = \"driver.distance\"\n",
            "from = \"driver.speed_setpoint\"\nto = \"driver.distance\"\nscale = 3.0\n",
        ),
    )
    .unwrap();
    let description = std::fs::read_to_string(dir.join("driver.dcpx")).unwrap();
    for element in ["<Uint8", "<Float32", "<Int16"] {
        assert!(description.contains(element), "{element} in:\n{description}");
    }
    let _slave = Slaves(vec![slave.spawn().unwrap()]);
    thread::sleep(Duration::from_millis(300));
    tandem_ok(&dir, &["federate", fed.to_str().unwrap(), "--out", "fed.csv"]);
    let table = common::Table::read(&dir.join("fed.csv"));
    let (time, setpoint, grade) = (
        table.column("time"),
        table.column("driver.speed_setpoint"),
        table.column("driver.road_grade"),
    );
    for ((t, s), g) in time.iter().zip(&setpoint).zip(&grade) {
        let expected = if *t < 0.5 {
            0.0
        } else if *t < 8.0 {
            10.0
        } else {
            20.0
        };
        assert!(
            *s == expected || (*t - 0.5).abs() < 0.011 || (*t - 8.0).abs() < 0.011,
            "set point {s} at t = {t}"
        );
        // Every grade is one a float32 carries: 0, or 0.04 rounded to it.
        assert!(*g == 0.0 || *g == f64::from(0.04f32), "grade {g} at t = {t}");
    }
    assert_eq!(*setpoint.last().unwrap(), 20.0);
    assert_eq!(*grade.last().unwrap(), f64::from(0.04f32));
    assert_ne!(f64::from(0.04f32), 0.04, "the float32 rounding is visible");
}

#[test]
fn a_soft_real_time_slave_that_dies_is_given_up_once_and_the_rows_it_sent_are_kept() {
    let dir = scratch("dcp-srt-dies");
    let (mut slave, fed) = lone_driver(&dir, 47381, "", 600.0);
    let mut slave = slave.spawn().unwrap();
    thread::sleep(Duration::from_millis(300));
    let relay = Relay::start("127.0.0.1:47381".parse().unwrap(), false);
    std::fs::write(
        &fed,
        std::fs::read_to_string(&fed)
            .unwrap()
            .replace(
                "[federation]\n",
                "[federation]\nmode = \"soft-real-time\"\nstart_delay = 0.2\n",
            )
            .replace(
                "description = \"driver.dcpx\"\n",
                &format!("description = \"driver.dcpx\"\naddress = \"{}\"\n", relay.address),
            )
            // No connection: data from the slave to itself would come
            // to the relay's port.
            .replace(
                "[[connection]]\nfrom = \"driver.road_grade\"\nto = \"driver.distance\"\n",
                "",
            ),
    )
    .unwrap();
    let gone = relay.gone.clone();
    let killer = thread::spawn(move || {
        thread::sleep(Duration::from_millis(2500));
        slave.kill().unwrap();
        slave.wait().unwrap();
        gone.store(true, Ordering::Relaxed);
    });
    let out = tandem(&dir, &["federate", fed.to_str().unwrap(), "--out", "fed.csv"]);
    killer.join().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.matches("does not answer").count(), 1, "{err}");
    assert!(
        err.contains("slave \"driver\" at ") && err.contains("does not answer INF_state (the heartbeat)"),
        "{err}"
    );
    assert!(err.contains("the rows before this are in"), "{err}");
    // The rows up to the last point the slave sent, its values in them:
    // the set point is 10 m/s from 0.5 s on.
    let table = common::Table::read(&dir.join("fed.csv"));
    let setpoint = table.column("driver.speed_setpoint");
    assert!(setpoint.len() > 50, "{} rows kept", setpoint.len());
    assert_eq!(*setpoint.last().unwrap(), 10.0);
    // Once gone, the slave was asked its state (the heartbeat), and
    // nothing else: no STC_stop or STC_deregister sent again and again.
    let passed = relay.passed.lock().unwrap().clone();
    let after: Vec<u8> = passed.iter().filter(|(g, _)| *g).map(|(_, t)| *t).collect();
    assert!(!after.is_empty() && after.iter().all(|&t| t == 0x80), "{after:02X?}");
}

#[test]
fn a_slave_that_serves_another_master_is_reported_as_refusing_not_as_silent() {
    let dir = scratch("dcp-taken");
    let (mut slave, fed) = lone_driver(&dir, 47382, "master_timeout = 60\n", 1.0);
    let _slave = Slaves(vec![slave.spawn().unwrap()]);
    thread::sleep(Duration::from_millis(300));
    // Another master registers it, with sequence id 1000.
    let other = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut register = vec![0x01, 0xE8, 0x03, 0x01, 0x00];
    register.extend_from_slice(&tandem_dcp::slave::config::uuid_for("driver"));
    register.extend_from_slice(&[0x02, 1, 0]);
    other.send_to(&register, "127.0.0.1:47382").unwrap();
    other.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut buf = [0; 64];
    let n = other.recv(&mut buf).unwrap();
    assert_eq!(&buf[..n], &[0xB0, 0xE8, 0x03, 0x01]);
    std::fs::write(
        &fed,
        std::fs::read_to_string(&fed)
            .unwrap()
            .replace("timeout = 0.2\nretries = 10\n", "timeout = 0.05\nretries = 3\n"),
    )
    .unwrap();
    let out = tandem(&dir, &["federate", fed.to_str().unwrap(), "--out", "fed.csv"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "slave \"driver\" refused STC_register: INVALID_SEQUENCE_ID after 4 tries: it expects sequence id 1001, \
             so it serves another master"
        ),
        "{err}"
    );
    assert!(!err.contains("does not answer"), "{err}");
}
