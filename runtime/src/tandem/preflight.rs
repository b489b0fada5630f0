//! What the machine gives a real-time run, checked before it starts:
//! SCHED_FIFO, the cores, locked memory, isolated cores, a PREEMPT_RT
//! kernel, RT throttling and the CPU governor. A desktop runs with
//! warnings; `--require-rt` refuses to start unless every check passes.

use std::fmt;
use std::fs;
use std::thread;

use super::placement::{lock_memory, place_current_thread};
use super::settings::TandemSettings;

/// The outcome of one check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Obtained.
    Ok,
    /// Not obtained: the run is soft real time.
    Missing,
    /// Cannot be told on this machine (e.g. no cpufreq in a VM); not held
    /// against `--require-rt`.
    Unknown,
}

/// One check of the preflight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    /// What was checked.
    pub name: &'static str,
    /// Its outcome.
    pub status: Status,
    /// What was found, and how to fix it when missing.
    pub detail: String,
}

/// Every check, in report order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preflight {
    /// The checks.
    pub checks: Vec<Check>,
}

impl Preflight {
    /// Whether every check passed (unknowns aside).
    pub fn hard_real_time(&self) -> bool {
        self.checks.iter().all(|c| c.status != Status::Missing)
    }

    /// The checks that did not pass.
    pub fn missing(&self) -> impl Iterator<Item = &Check> {
        self.checks.iter().filter(|c| c.status == Status::Missing)
    }
}

impl fmt::Display for Preflight {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.checks {
            let mark = match c.status {
                Status::Ok => "ok     ",
                Status::Missing => "MISSING",
                Status::Unknown => "unknown",
            };
            writeln!(f, "  {mark} {:<16} {}", c.name, c.detail)?;
        }
        Ok(())
    }
}

fn check(name: &'static str, status: Status, detail: impl Into<String>) -> Check {
    Check {
        name,
        status,
        detail: detail.into(),
    }
}

/// Runs every check for `settings` (with an implicit thread when `implicit`).
/// Locks the process's memory as a side effect, as the run needs.
pub fn preflight(settings: &TandemSettings, implicit: bool) -> Preflight {
    let fast = settings.fast.placement;
    let probe = thread::spawn(move || place_current_thread(fast))
        .join()
        .unwrap_or_default();
    let fifo = match probe.fifo {
        Some(Ok(p)) => check("SCHED_FIFO", Status::Ok, format!("priority {p} granted")),
        Some(Err(e)) => check("SCHED_FIFO", Status::Missing, e.to_string()),
        None => check("SCHED_FIFO", Status::Missing, "not requested"),
    };
    let mut cores: Vec<usize> = fast.core.into_iter().collect();
    if implicit {
        cores.extend(settings.implicit.placement.core);
    }
    let available: Vec<usize> = core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect();
    let affinity = if cores.is_empty() {
        check(
            "affinity",
            Status::Missing,
            "no core configured: set fast.core and implicit.core",
        )
    } else if let Some(c) = cores.iter().find(|c| !available.contains(c)) {
        check(
            "affinity",
            Status::Missing,
            format!("core {c} is not available (cores: {available:?}); choose another in the config"),
        )
    } else if cores.len() == 2 && cores[0] == cores[1] {
        check(
            "affinity",
            Status::Missing,
            format!("both threads on core {}: give them different cores", cores[0]),
        )
    } else {
        check("affinity", Status::Ok, format!("cores {cores:?} of {available:?}"))
    };
    let helpers = settings.implicit.helper_cores;
    let helper_check = match helpers.as_slice() {
        [] => None,
        _ if !implicit => None,
        listed => Some(match listed.iter().find(|c| !available.contains(c)) {
            Some(c) => check(
                "helper cores",
                Status::Missing,
                format!("core {c} of implicit.helper_cores is not available (cores: {available:?}); choose another"),
            ),
            None => check(
                "helper cores",
                Status::Ok,
                format!("Jacobian helpers on cores {listed:?}"),
            ),
        }),
    };
    let mlock = match lock_memory() {
        Ok(()) => check("mlockall", Status::Ok, "current and future memory locked"),
        Err(e) => check("mlockall", Status::Missing, e.to_string()),
    };
    let mut checks = vec![fifo, affinity];
    checks.extend(helper_check);
    checks.extend([mlock, isolated(&cores), preempt_rt(), rt_throttling(), governor(&cores)]);
    Preflight { checks }
}

fn read(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// Parses a kernel CPU list such as `1-3,6`.
pub fn cpu_list(text: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let mut ends = part.splitn(2, '-').map(|n| n.parse::<usize>());
        match (ends.next(), ends.next()) {
            (Some(Ok(a)), None) => cpus.push(a),
            (Some(Ok(a)), Some(Ok(b))) => cpus.extend(a..=b),
            _ => {}
        }
    }
    cpus
}

fn isolated(cores: &[usize]) -> Check {
    let isolated = cpu_list(&read("/sys/devices/system/cpu/isolated").unwrap_or_default());
    let missing: Vec<usize> = cores.iter().copied().filter(|c| !isolated.contains(c)).collect();
    if missing.is_empty() && !cores.is_empty() {
        check("isolated cores", Status::Ok, format!("{cores:?} isolated"))
    } else {
        check(
            "isolated cores",
            Status::Missing,
            format!("{missing:?} not isolated: boot with isolcpus=/nohz_full= for them"),
        )
    }
}

fn preempt_rt() -> Check {
    match read("/sys/kernel/realtime").as_deref() {
        Some("1") => check("PREEMPT_RT", Status::Ok, "/sys/kernel/realtime = 1"),
        _ => check(
            "PREEMPT_RT",
            Status::Missing,
            "not a PREEMPT_RT kernel (/sys/kernel/realtime absent): install e.g. linux-image-rt-amd64",
        ),
    }
}

fn rt_throttling() -> Check {
    match read("/proc/sys/kernel/sched_rt_runtime_us").as_deref() {
        Some("-1") => check("RT throttling", Status::Ok, "off"),
        Some(v) => check(
            "RT throttling",
            Status::Missing,
            format!("on ({v} µs per period): echo -1 > /proc/sys/kernel/sched_rt_runtime_us"),
        ),
        None => check(
            "RT throttling",
            Status::Unknown,
            "/proc/sys/kernel/sched_rt_runtime_us unreadable",
        ),
    }
}

fn governor(cores: &[usize]) -> Check {
    let mut found = Vec::new();
    for c in cores {
        if let Some(g) = read(&format!("/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor")) {
            found.push((c, g));
        }
    }
    if found.is_empty() {
        check(
            "CPU governor",
            Status::Unknown,
            "no cpufreq (frequency not scaled by the kernel, e.g. a VM)",
        )
    } else if found.iter().all(|(_, g)| g == "performance") {
        check("CPU governor", Status::Ok, "performance")
    } else {
        check(
            "CPU governor",
            Status::Missing,
            format!("{found:?}: set `performance` (cpupower frequency-set -g performance)"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_ranges_and_singles() {
        assert_eq!(cpu_list("1-3,6\n"), [1, 2, 3, 6]);
        assert_eq!(cpu_list(""), Vec::<usize>::new());
        assert_eq!(cpu_list("x,2"), [2]);
    }

    #[test]
    fn this_kernel_is_reported_as_it_is() {
        let rt = std::fs::read_to_string("/sys/kernel/realtime")
            .map(|s| s.trim() == "1")
            .unwrap_or(false);
        assert_eq!(preempt_rt().status == Status::Ok, rt);
    }
}
