//! DCP federations between two network namespaces (this one, the
//! master's, and one made here for the slave; needs root): lock-step steps
//! per second against a plain UDP ping-pong between the same two, and
//! against an exchange of the shape DCP prescribes for a step (3 datagrams
//! out, 7 back: see [`STEP_OUT`]), and, in soft real time at 1 kHz, the
//! age of data at the master against the one-way latency floor (half the
//! ping-pong's round trip).

use std::fs::File;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

use crate::beside;

/// The slave's namespace and its address there.
const SLAVE_IP: &str = "10.202.0.2";
const MASTER_IP: &str = "10.202.0.1";

/// Datagrams a master sends for a lock-step step of one slave: its input
/// data, `STC_do_step`, `STC_send_outputs`.
const STEP_OUT: usize = 3;
/// Datagrams that slave sends back: an `RSP_ack` for each request, an
/// `NTF_state_changed` after each of the four transitions (COMPUTING,
/// COMPUTED, SENDING_D, RUNNING) and its output data.
const STEP_BACK: u8 = 7;

/// A namespace with a veth pair to this one, removed when dropped.
struct Namespace(String);

impl Namespace {
    fn make() -> anyhow::Result<Namespace> {
        let ns = format!("tbench{}", std::process::id());
        let outer = format!("tbo{}", std::process::id() % 100000);
        let inner = format!("tbi{}", std::process::id() % 100000);
        let made = Namespace(ns.clone());
        let steps: [&[&str]; 8] = [
            &["netns", "add", &ns],
            &["link", "add", &outer, "type", "veth", "peer", "name", &inner],
            &["link", "set", &inner, "netns", &ns],
            &["addr", "add", "10.202.0.1/24", "dev", &outer],
            &["link", "set", &outer, "up"],
            &["-n", &ns, "addr", "add", "10.202.0.2/24", "dev", &inner],
            &["-n", &ns, "link", "set", &inner, "up"],
            &["-n", &ns, "link", "set", "lo", "up"],
        ];
        for args in steps {
            if !Command::new("ip").args(args).status().is_ok_and(|s| s.success()) {
                bail!("cannot make a network namespace (ip {}): run as root", args.join(" "));
            }
        }
        Ok(made)
    }
}

impl Drop for Namespace {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

/// A UDP echo in namespace `ns` on port 47900, on a thread of its own:
/// each datagram is answered by as many copies as its first byte says.
fn echo(ns: &str) -> anyhow::Result<()> {
    let file = File::open(Path::new("/var/run/netns").join(ns))?;
    let fd = file.as_raw_fd();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // SAFETY: `fd` names a network namespace; only this thread moves.
        let entered = unsafe { libc::setns(fd, libc::CLONE_NEWNET) } == 0;
        let socket = entered.then(|| UdpSocket::bind((SLAVE_IP, 47900)).ok()).flatten();
        let _ = tx.send(socket.is_some());
        let Some(socket) = socket else { return };
        let mut buf = [0u8; 2048];
        while let Ok((n, from)) = socket.recv_from(&mut buf) {
            for _ in 0..buf[0] {
                let _ = socket.send_to(&buf[..n], from);
            }
        }
        drop(file);
    });
    if !rx.recv_timeout(Duration::from_secs(2))? {
        bail!("cannot start the echo in the namespace");
    }
    Ok(())
}

/// Exchanges per second of `n` exchanges of `out` datagrams of 40 bytes
/// answered by `back`, and the median exchange (s): 1 and 1 is a
/// ping-pong.
fn ping_pong(n: usize, out: usize, back: u8) -> anyhow::Result<(f64, f64)> {
    let socket = UdpSocket::bind((MASTER_IP, 0))?;
    socket.connect((SLAVE_IP, 47900))?;
    socket.set_read_timeout(Some(Duration::from_secs(1)))?;
    let mut buf = [0u8; 64];
    let mut times = Vec::with_capacity(n);
    let (mut quiet, mut last) = ([0u8; 40], [0u8; 40]);
    quiet[0] = 0;
    last[0] = back;
    let start = Instant::now();
    for _ in 0..n {
        let t = Instant::now();
        for _ in 1..out {
            socket.send(&quiet)?;
        }
        socket.send(&last)?;
        for _ in 0..back {
            socket.recv(&mut buf)?;
        }
        times.push(t.elapsed().as_secs_f64());
    }
    let rate = n as f64 / start.elapsed().as_secs_f64();
    times.sort_by(f64::total_cmp);
    Ok((rate, times[n / 2]))
}

/// The number after `key` on the first line of `text` holding it.
fn after(text: &str, key: &str) -> Option<f64> {
    let rest = text.split(key).nth(1)?;
    rest.split([' ', ',']).next()?.parse().ok()
}

/// Runs the two measurements.
pub fn run(seconds: f64) -> anyhow::Result<()> {
    let exe = beside::tandem()?;
    let ns = Namespace::make()?;
    echo(&ns.0)?;
    let exchanges = ((seconds * 10_000.0) as usize).max(2000);
    let (rate, rtt) = ping_pong(exchanges, 1, 1)?;
    let (shaped, _) = ping_pong(exchanges, STEP_OUT, STEP_BACK)?;
    let dir = tempfile::tempdir()?;
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dcp/examples/driver.json");
    std::fs::write(
        dir.path().join("slave.toml"),
        format!(
            "name = \"driver\"\nsource = \"{}\"\nstep = 0.001\ncontrol = \"{SLAVE_IP}:47901\"\n",
            model.display()
        ),
    )?;
    let in_ns = |args: &[&str]| {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &ns.0])
            .arg(&exe)
            .args(args)
            .current_dir(dir.path());
        c
    };
    let status = in_ns(&["dcp-slave", "slave.toml", "--description", "driver.dcpx"]).status()?;
    if !status.success() {
        bail!("tandem dcp-slave could not describe the slave (is tandem built beside tandem-bench?)");
    }
    let mut slave = in_ns(&["dcp-slave", "slave.toml"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    std::thread::sleep(Duration::from_millis(300));
    let federate = |mode: &str, stop: f64| -> anyhow::Result<String> {
        std::fs::write(
            dir.path().join("fed.toml"),
            format!(
                "[federation]\nstep = 0.001\nstop = {stop}\nmode = \"{mode}\"\nstart_delay = 0.2\n\n[[slave]]\nname = \
                 \"driver\"\ndescription = \"driver.dcpx\"\n\n[[connection]]\nfrom = \"driver.road_grade\"\nto = \
                 \"driver.distance\"\n"
            ),
        )?;
        let out = Command::new(&exe)
            .args(["federate", "fed.toml", "--out", "fed.csv"])
            .current_dir(dir.path())
            .output()?;
        if !out.status.success() {
            bail!("tandem federate failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let steps = (seconds * 5000.0).max(2000.0).round();
    let lock = federate("lock-step", steps / 1000.0)?;
    let summary = lock
        .split(" s in ")
        .nth(1)
        .context("no wall time in tandem federate's summary")?;
    let wall: f64 = summary
        .split(' ')
        .next()
        .unwrap_or("")
        .parse()
        .context("the wall time")?;
    let unit = match summary.split(' ').nth(1).map(|u| u.trim_end_matches(';')) {
        Some("ms") => 1e-3,
        Some("µs") => 1e-6,
        _ => 1.0,
    };
    let lock_rate = steps / (wall * unit);
    println!("DCP between two network namespaces (veth), master here, one slave there:");
    println!(
        "  UDP ping-pong: {rate:.0} round trips/s (median round trip {:.1} µs)",
        rtt * 1e6
    );
    println!("  the same exchange as a lock-step step ({STEP_OUT} datagrams out, {STEP_BACK} back): {shaped:.0}/s");
    println!(
        "  lock-step: {lock_rate:.0} steps/s over {steps} steps = {:.2} of the ping-pong (goal ≥ 0.8), {:.2} of the \
         exchange of a step's shape",
        lock_rate / rate,
        lock_rate / shaped
    );
    let srt = federate("soft-real-time", seconds.max(2.0))?;
    let p50 = after(&srt, "p50 ").unwrap_or(f64::NAN);
    let p99 = after(&srt, "p99 ").unwrap_or(f64::NAN);
    println!(
        "  soft real time at 1 kHz: data age at the master p50 {p50:.1} µs, p99 {p99:.1} µs, against a one-way \
         floor of {:.1} µs (half the median round trip)",
        rtt * 1e6 / 2.0
    );
    let _ = slave.kill();
    let _ = slave.wait();
    Ok(())
}
