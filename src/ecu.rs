//! The virtual ECU started beside a plant run (`[ecu]` in its
//! configuration): `tandem ecu CONFIG` as a child process for the run's
//! duration, its output shown with an `[ecu]` prefix.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::thread::{self, JoinHandle};

use crate::out::say;
use anyhow::Context;
use tandem_config::bounds::MAX_DURATION;

/// A running virtual ECU.
pub struct Ecu {
    child: Child,
    echo: Option<JoinHandle<()>>,
}

/// Starts `tandem ecu config` for `duration` seconds (a little longer, so
/// that it outlives the plant's last frame).
pub fn spawn(config: &Path, duration: f64) -> anyhow::Result<Ecu> {
    let exe = std::env::current_exe().context("cannot find the tandem executable to start the ECU")?;
    let mut child = Command::new(exe)
        .arg("ecu")
        .arg(config)
        .arg("--duration")
        .arg(format!("{}", (duration + 0.5).min(MAX_DURATION)))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start the virtual ECU `tandem ecu {}`", config.display()))?;
    let stdout = child.stdout.take();
    let echo = stdout.map(|out| {
        thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                say!("[ecu] {line}");
            }
        })
    });
    say!(
        "started the virtual ECU: tandem ecu {} (pid {})",
        config.display(),
        child.id()
    );
    Ok(Ecu { child, echo })
}

impl Ecu {
    /// Waits for the ECU to end (it runs half a second past the plant),
    /// and for its last lines.
    pub fn finish(&mut self) {
        match self.child.wait() {
            Ok(status) if !status.success() => say!("warning: the virtual ECU ended with {status}"),
            Ok(_) => {}
            Err(e) => say!("warning: waiting for the virtual ECU: {e}"),
        }
        if let Some(echo) = self.echo.take() {
            let _ = echo.join();
        }
    }
}
