//! What every request handler shares: the served folder, the bounds, the
//! names and token that let a request in, the slots for compiling models,
//! and the simulations and runs.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::http::StatusCode;

use crate::confine::{self, Root};
use crate::devices::Devices;
use crate::error::ApiError;
use crate::hosts::Hosts;
use crate::job::Job;
use crate::live::LiveRun;
use crate::registry::Registry;
use crate::slots::Slots;

/// The bounds the server keeps to.
#[derive(Clone, Debug)]
pub struct Limits {
    /// The largest request body (bytes).
    pub body: usize,
    /// Simulations running at once.
    pub simulations: usize,
    /// Models compiled at once: checks, and the starts of simulations and
    /// runs.
    pub checks: usize,
    /// Real-time runs running at once.
    pub runs: usize,
    /// Values (rows × columns) one simulation may keep.
    pub values: usize,
    /// Wall time of one simulation.
    pub wall: Duration,
    /// Values a run's live table keeps (the oldest rows go first).
    pub run_values: usize,
    /// Ended simulations and runs kept for their results.
    pub kept: usize,
    /// Bytes the rows of simulations and runs may take in all (running
    /// ones counted at the most they will hold): the rows of the oldest
    /// ended ones are dropped beyond it, and a start that does not fit
    /// beside the running ones is refused.
    pub memory: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            body: 16 << 20,
            simulations: 4,
            checks: 4,
            runs: 2,
            values: 20_000_000,
            wall: Duration::from_secs(600),
            run_values: 4_000_000,
            kept: 32,
            memory: 1 << 30,
        }
    }
}

/// What every request handler shares.
pub struct App {
    /// The only folder the API reads and writes.
    pub root: Root,
    /// The bounds.
    pub limits: Limits,
    /// The names a request's `Host` may give.
    pub hosts: Hosts,
    /// The token every API request must carry, when there is one.
    pub token: Option<String>,
    /// The serial devices a run may open.
    pub devices: Devices,
    /// The slots for models compiled at once (`limits.checks`).
    pub compiling: Slots,
    /// Offline simulations, running and ended.
    pub simulations: Registry<Job>,
    /// Real-time runs, running and ended.
    pub runs: Registry<LiveRun>,
    /// Held while room is made in the memory budget and taken, so that two
    /// starts cannot both take the same room.
    memory: Mutex<()>,
    /// Numbers the next simulation and the next run (each counts apart).
    next_ids: Mutex<Ids>,
}

/// `bytes` in MiB, rounded up.
pub fn mib(bytes: usize) -> usize {
    bytes.div_ceil(1 << 20)
}

/// The numbers the next simulation and run get.
struct Ids {
    simulation: u64,
    run: u64,
}

impl App {
    /// A server on `root` answering to `hosts`, requiring `token` when
    /// given, its runs opening only `devices`.
    pub fn new(root: Root, hosts: Hosts, token: Option<String>, limits: Limits, devices: Devices) -> Arc<App> {
        Arc::new(App {
            devices,
            root,
            hosts,
            compiling: Slots::new(limits.checks, limits.memory / 2),
            simulations: Registry::new(limits.kept, "simulation"),
            runs: Registry::new(limits.kept, "run"),
            limits,
            token,
            memory: Mutex::new(()),
            next_ids: Mutex::new(Ids { simulation: 1, run: 1 }),
        })
    }

    /// Room for `need` more bytes of rows within the memory budget
    /// (`limits.memory`): the rows of the oldest ended simulations, then
    /// runs, are dropped until it fits (each says so in its status);
    /// 429 when the running ones hold too much of it. The room is the
    /// caller's while it holds the guard (it adds its entry meanwhile).
    pub fn make_room(&self, need: usize) -> Result<MutexGuard<'_, ()>, ApiError> {
        let guard = self.memory.lock().unwrap_or_else(|e| e.into_inner());
        let held = self.simulations.bytes() + self.runs.bytes();
        let mut over = (held + need).saturating_sub(self.limits.memory);
        self.simulations.drop_oldest(&mut over);
        self.runs.drop_oldest(&mut over);
        if over > 0 {
            return Err(ApiError {
                retry_after: Some(5),
                ..ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    format!(
                        "the running simulations and runs hold {} MiB of the server's memory budget of {} MiB \
                         (--memory-budget), and this one needs {} MiB more; wait for one to end, or ask for fewer \
                         rows",
                        mib(self.simulations.bytes() + self.runs.bytes()),
                        mib(self.limits.memory),
                        mib(need).max(1)
                    ),
                )
            });
        }
        Ok(guard)
    }

    /// Called as a simulation or run ends: forgets the ended ones beyond
    /// the count kept, and keeps the rest within the memory budget.
    pub fn ended(&self) {
        self.simulations.trim();
        self.runs.trim();
        drop(self.make_room(0));
    }

    /// A new simulation's id: `s1`, `s2`, …
    pub fn simulation_id(&self) -> String {
        self.next_id(|ids| &mut ids.simulation, 's')
    }

    /// A new run's id: `r1`, `r2`, …, numbered apart from simulations.
    pub fn run_id(&self) -> String {
        self.next_id(|ids| &mut ids.run, 'r')
    }

    /// The next number of the counter `which` picks, after `prefix`.
    fn next_id(&self, which: impl FnOnce(&mut Ids) -> &mut u64, prefix: char) -> String {
        let mut ids = self.next_ids.lock().unwrap_or_else(|e| e.into_inner());
        let next = which(&mut ids);
        *next += 1;
        format!("{prefix}{}", *next - 1)
    }

    /// `message` with the served folder's absolute path taken out (paths
    /// inside it become relative), so that no answer shows where the
    /// server keeps its files.
    pub fn relative(&self, message: &str) -> String {
        confine::relative(self.root.path(), message)
    }
}
