//! The SocketCAN tests on a real kernel CAN stack, in the QEMU test host.
//!
//! This machine's kernel may have no CAN modules, so the test boots one that
//! has: `tests/qemu/build-host.sh` fetches Debian's PREEMPT_RT kernel and
//! builds an initramfs that loads `can`, `can-raw` and `vcan` and creates
//! `vcan0`. This test builds `socketcan_vcan.rs` and the runtime's
//! `preflight` example as static executables (in their own target directory,
//! `target/static`, so the outer cargo's lock is not in the way), boots the
//! host under QEMU (TCG), and asserts that every test in the VM passed and
//! that the preflight found the PREEMPT_RT kernel. The Debian packages are
//! cached in `target/qemu-host`.
//!
//! It is skipped, and passes, only where QEMU cannot be installed.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// The static executables' target (so that build scripts and proc macros
/// are not linked statically).
const TARGET: &str = "x86_64-unknown-linux-gnu";
/// The longest the VM may run.
const VM_LIMIT: Duration = Duration::from_secs(300);
/// What `build-host.sh` exits with when QEMU cannot be installed.
const NO_QEMU: i32 = 77;

/// Says something on stderr, where `cargo test` shows it even when it
/// captures the test's output.
fn note(message: &str) {
    let _ = io::stderr().write_all(format!("socketcan_qemu: {message}\n").as_bytes());
}

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("io/bus/ is in the workspace")
}

/// The target directory this test was built in.
fn target_dir() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("target/tmp is in the target directory")
}

/// Runs `build-host.sh` with `args`; its exit code.
fn build_host(args: &[String]) -> i32 {
    let status = Command::new("bash")
        .arg(workspace().join("tests/qemu/build-host.sh"))
        .arg("--dir")
        .arg(target_dir().join("qemu-host"))
        .args(args)
        .status()
        .expect("bash runs tests/qemu/build-host.sh");
    status.code().unwrap_or(-1)
}

/// Builds static executables with `cargo ARGS`; the one whose file name
/// starts with `stem`.
fn build_static(args: &[&str], stem: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let output = Command::new(cargo)
        .args(args)
        .args([
            "--target",
            TARGET,
            "--message-format=json-render-diagnostics",
            "--target-dir",
        ])
        .arg(target_dir().join("static"))
        .current_dir(workspace())
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("CARGO_PROFILE_DEV_DEBUG", "0")
        .env("CARGO_PROFILE_TEST_DEBUG", "0")
        .stdin(Stdio::null())
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo {args:?} failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| line.split("\"executable\":\"").nth(1)?.split('"').next())
        .map(PathBuf::from)
        .find(|path| path.file_name().is_some_and(|n| n.to_string_lossy().starts_with(stem)))
        .unwrap_or_else(|| panic!("cargo {args:?} built no {stem} executable"))
}

/// A line of the serial console without its carriage return and terminal
/// escapes.
fn clean(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                while chars.next().is_some_and(|c| !c.is_ascii_alphabetic()) {}
            }
        } else if c != '\r' {
            out.push(c);
        }
    }
    out
}

/// Boots the host; `on_line` sees each console line as it comes and says
/// whether the run is over. Returns the console.
fn boot(mut on_line: impl FnMut(&str) -> bool) -> Vec<String> {
    let dir = target_dir().join("qemu-host");
    let mut qemu: Child = Command::new("qemu-system-x86_64")
        .args([
            "-accel",
            "tcg",
            "-m",
            "1024",
            "-smp",
            "2",
            "-nographic",
            "-no-reboot",
            "-nic",
            "none",
        ])
        .arg("-kernel")
        .arg(dir.join("vmlinuz"))
        .arg("-initrd")
        .arg(dir.join("initramfs.cpio"))
        .args(["-append", "console=ttyS0 panic=-1 quiet"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("qemu-system-x86_64 starts");
    let (lines, console) = mpsc::channel();
    let stdout = qemu.stdout.take().expect("piped stdout");
    thread::spawn(move || {
        for line in BufReader::new(stdout).split(b'\n').map_while(Result::ok) {
            if lines.send(clean(&String::from_utf8_lossy(&line))).is_err() {
                break;
            }
        }
    });
    let mut stderr = qemu.stderr.take().expect("piped stderr");
    let errors = thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = Instant::now() + VM_LIMIT;
    let mut transcript = Vec::new();
    let mut over = false;
    while !over {
        match console.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => {
                println!("vm| {line}");
                over = on_line(&line);
                transcript.push(line);
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let _ = qemu.kill();
                panic!(
                    "the VM ran longer than {VM_LIMIT:?}; its console:\n{}",
                    transcript.join("\n")
                );
            }
        }
    }
    // After the last marker the VM powers off by itself.
    let stop = Instant::now() + Duration::from_secs(30);
    while qemu.try_wait().ok().flatten().is_none() && Instant::now() < stop {
        thread::sleep(Duration::from_millis(50));
    }
    let _ = qemu.kill();
    let status = qemu.wait().expect("qemu is waited for");
    let errors = errors.join().unwrap_or_default();
    assert!(
        over,
        "QEMU stopped ({status}) before the tests were done:\n{}\n{errors}",
        transcript.join("\n")
    );
    transcript
}

#[test]
fn socketcan_on_the_kernel_can_stack_in_qemu() {
    let start = Instant::now();
    note("preparing the QEMU test host (tests/qemu/build-host.sh)");
    match build_host(&[]) {
        0 => {}
        NO_QEMU => {
            note("skipped: QEMU is not available and cannot be installed (see tests/qemu/build-host.sh)");
            return;
        }
        code => panic!("tests/qemu/build-host.sh failed (exit {code})"),
    }
    let host = start.elapsed();

    let built = Instant::now();
    note("building the static test executables (target/static)");
    let tests = build_static(
        &["test", "--no-run", "-p", "tandem-bus", "--test", "socketcan_vcan"],
        "socketcan_vcan-",
    );
    let preflight = build_static(
        &["build", "-p", "tandem-runtime", "--example", "preflight"],
        "preflight",
    );
    let code = build_host(&[
        format!("socketcan_vcan={}", tests.display()),
        format!("preflight={}", preflight.display()),
    ]);
    assert_eq!(code, 0, "tests/qemu/build-host.sh failed");
    let build = built.elapsed();

    note("booting the QEMU test host (TCG)");
    let booted = Instant::now();
    let mut tests_started = None;
    let mut exits = Vec::new();
    let console = boot(|line| {
        if let Some(rest) = line.split("TANDEM-QEMU-").nth(1) {
            let _ = io::stderr().write_all(format!("vm| {line}\n").as_bytes());
            if rest.starts_with("BEGIN ") && tests_started.is_none() {
                tests_started = Some(Instant::now());
            }
            if let Some(exit) = rest.strip_prefix("EXIT ") {
                exits.push(exit.trim().to_string());
            }
            return rest.starts_with("DONE") || rest.starts_with("SETUP-FAILED");
        }
        if line.starts_with("preflight: ") || line.starts_with("test result: ") {
            let _ = io::stderr().write_all(format!("vm| {line}\n").as_bytes());
        }
        false
    });
    let tests_started = tests_started.unwrap_or_else(Instant::now);
    let boot_time = tests_started - booted;
    let test_time = tests_started.elapsed();
    note(&format!(
        "timings: host (QEMU, packages, kernel) {:.1} s, static builds {:.1} s, boot {:.1} s, tests {:.1} s, total {:.1} s",
        host.as_secs_f64(),
        build.as_secs_f64(),
        boot_time.as_secs_f64(),
        test_time.as_secs_f64(),
        start.elapsed().as_secs_f64()
    ));

    let transcript = console.join("\n");
    assert!(!transcript.contains("TANDEM-QEMU-SETUP-FAILED"), "{transcript}");
    assert_eq!(exits, ["socketcan_vcan 0", "preflight 0"], "{transcript}");
    assert!(
        console
            .iter()
            .any(|l| l.starts_with("test result: ok.") && l.contains(" 0 failed")),
        "{transcript}"
    );
    assert!(
        console.iter().any(|l| l.starts_with("preflight: PREEMPT_RT: Ok")),
        "the preflight did not find the PREEMPT_RT kernel:\n{transcript}"
    );
}
