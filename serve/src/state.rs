//! What every request handler shares: the served folder, the bounds, the
//! token, and the simulations and runs.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::job::Job;
use crate::live::LiveRun;
use crate::registry::Registry;
use crate::Limits;

/// What every request handler shares.
pub struct App {
    /// The only folder the API reads and writes (canonical).
    pub folder: PathBuf,
    /// The bounds.
    pub limits: Limits,
    /// The token every API request must carry, when there is one.
    pub token: Option<String>,
    /// Offline simulations, running and ended.
    pub simulations: Registry<Job>,
    /// Real-time runs, running and ended.
    pub runs: Registry<LiveRun>,
    /// Numbers the next simulation or run.
    next_id: Mutex<u64>,
}

impl App {
    /// A server on `folder` (canonical), requiring `token` when given.
    pub fn new(folder: PathBuf, token: Option<String>, limits: Limits) -> Arc<App> {
        Arc::new(App {
            folder,
            simulations: Registry::new(limits.kept, "simulation"),
            runs: Registry::new(limits.kept, "run"),
            limits,
            token,
            next_id: Mutex::new(1),
        })
    }

    /// A new id with `prefix` (`s1`, `r2`, …).
    pub fn id(&self, prefix: &str) -> String {
        let mut next = self.next_id.lock().unwrap_or_else(|e| e.into_inner());
        let id = format!("{prefix}{next}");
        *next += 1;
        id
    }
}
