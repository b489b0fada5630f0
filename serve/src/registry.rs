//! The simulations or runs a server knows: running ones, and the newest
//! ended ones up to a count (older ended ones are forgotten), the rows of
//! the oldest dropped when the server's memory budget asks for room
//! ([`crate::state::App::make_room`]).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::Value;

use crate::error::ApiError;
use crate::table::Table;

/// What a registry holds.
pub trait Entry {
    /// Its id (`s1`, `r2`).
    fn id(&self) -> &str;
    /// Whether it still runs.
    fn running(&self) -> bool;
    /// Its rows.
    fn table(&self) -> &Table;
    /// Its status, as the API shows it.
    fn json(&self) -> Value;
}

/// Entries, newest last.
pub struct Registry<T> {
    entries: Mutex<VecDeque<Arc<T>>>,
    /// Ended entries kept.
    kept: usize,
    /// What an entry is called in messages (`simulation`, `run`).
    noun: &'static str,
}

impl<T: Entry> Registry<T> {
    /// Empty; keeping `kept` ended entries, called `noun`s.
    pub fn new(kept: usize, noun: &'static str) -> Self {
        Registry {
            entries: Mutex::new(VecDeque::new()),
            kept,
            noun,
        }
    }

    fn lock(&self) -> MutexGuard<'_, VecDeque<Arc<T>>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds `entry` unless `limit` entries run already (429).
    pub fn add(&self, entry: Arc<T>, limit: usize) -> Result<(), ApiError> {
        let mut entries = self.lock();
        if entries.iter().filter(|e| e.running()).count() >= limit {
            return Err(ApiError::busy(
                &format!("{}s", self.noun),
                limit,
                "wait for one to end or cancel one",
            ));
        }
        entries.push_back(entry);
        Ok(())
    }

    /// Forgets the oldest ended entries beyond the kept count; called as
    /// each one ends, so that no more are ever kept.
    pub fn trim(&self) {
        let mut entries = self.lock();
        let mut excess = entries
            .iter()
            .filter(|e| !e.running())
            .count()
            .saturating_sub(self.kept);
        entries.retain(|e| {
            let forget = excess > 0 && !e.running();
            excess -= usize::from(forget);
            !forget
        });
    }

    /// The entry `id`, or a 404 naming the listing.
    pub fn get(&self, id: &str) -> Result<Arc<T>, ApiError> {
        self.lock().iter().find(|e| e.id() == id).cloned().ok_or_else(|| {
            ApiError::not_found(format!("no {} \"{id}\"; GET /api/{}s lists them", self.noun, self.noun))
        })
    }

    /// Every entry, oldest first (trimmed first: an entry that has just
    /// ended may not have trimmed yet).
    pub fn all(&self) -> Vec<Arc<T>> {
        self.trim();
        self.lock().iter().cloned().collect()
    }

    /// The API's listing, `{"<noun>s": [...]}`: every entry's status,
    /// oldest first.
    pub fn listing(&self) -> Value {
        let statuses: Vec<Value> = self.all().iter().map(|e| e.json()).collect();
        Value::Object(
            [(format!("{}s", self.noun), Value::Array(statuses))]
                .into_iter()
                .collect(),
        )
    }

    /// The status of entry `id`, or a 404 naming the listing.
    pub fn status(&self, id: &str) -> Result<Value, ApiError> {
        Ok(self.get(id)?.json())
    }

    /// The bytes the rows of its entries take (a running one's counted
    /// at the most it will hold).
    pub fn bytes(&self) -> usize {
        self.lock().iter().map(|e| e.table().bytes(e.running())).sum()
    }

    /// Drops the rows of its ended entries, oldest first, until `over`
    /// bytes are freed (`over` counts down what is still to free).
    pub fn drop_oldest(&self, over: &mut usize) {
        for entry in self.lock().iter() {
            if *over == 0 {
                return;
            }
            if !entry.running() && !entry.table().dropped() {
                *over = over.saturating_sub(entry.table().bytes(false));
                entry.table().drop_rows();
            }
        }
    }

    /// Forgets `id`.
    pub fn remove(&self, id: &str) {
        self.lock().retain(|e| e.id() != id);
    }
}
