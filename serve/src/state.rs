//! What every request handler shares: the served folder, the bounds, the
//! names and token that let a request in, the slots for compiling models,
//! and the simulations and runs.

use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;

use crate::confine::{self, Root};
use crate::guard::Hosts;
use crate::job::Job;
use crate::live::LiveRun;
use crate::registry::Registry;
use crate::Limits;

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
    /// One permit per model compiled at once (`limits.checks`).
    pub compiling: Arc<Semaphore>,
    /// Offline simulations, running and ended.
    pub simulations: Registry<Job>,
    /// Real-time runs, running and ended.
    pub runs: Registry<LiveRun>,
    /// Numbers the next simulation and the next run (each counts apart).
    next_ids: Mutex<Ids>,
}

/// The numbers the next simulation and run get.
struct Ids {
    simulation: u64,
    run: u64,
}

impl App {
    /// A server on `root` answering to `hosts`, requiring `token` when
    /// given.
    pub fn new(root: Root, hosts: Hosts, token: Option<String>, limits: Limits) -> Arc<App> {
        Arc::new(App {
            root,
            hosts,
            compiling: Arc::new(Semaphore::new(limits.checks)),
            simulations: Registry::new(limits.kept, "simulation"),
            runs: Registry::new(limits.kept, "run"),
            limits,
            token,
            next_ids: Mutex::new(Ids { simulation: 1, run: 1 }),
        })
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
