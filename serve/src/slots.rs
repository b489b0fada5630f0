//! The server's slots for compiling models (checks, and the starts of
//! simulations and runs): a slot is taken once the request's body has
//! arrived whole, so a body sent slowly holds none, and one client (a
//! peer address) holds at most its share of them, so that it cannot
//! take every slot from the others. A compilation also takes its part of
//! the compilation memory (half the server's memory budget), reckoned
//! from the model's text at [`BYTES_PER_TEXT_BYTE`]: a model that could
//! never fit is refused (413) before its body is read, when its length is
//! declared.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use axum::http::StatusCode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::ApiError;

/// The memory compiling a model takes per byte of its JSON text, at its
/// peak: measured 34 for a chain of 150 000 gains (14 MB of text, 496 MB
/// resident at the peak), rounded up. Its machine code adds nothing to the
/// peak (491 MB resident both ways, `tandem sim` with and without
/// `--interpret`).
pub const BYTES_PER_TEXT_BYTE: usize = 40;

/// Slots held, by peer address.
type Held = Arc<Mutex<HashMap<IpAddr, usize>>>;

/// The compilation slots.
pub struct Slots {
    free: Arc<Semaphore>,
    held: Held,
    /// Slots in all.
    total: usize,
    /// The most one peer holds at once: half of them, rounded up.
    share: usize,
    /// The compilation memory, one permit per KiB.
    memory: Arc<Semaphore>,
    /// Its size, in KiB.
    memory_kib: usize,
}

/// One slot, held until the compilation ends (dropped).
pub struct Slot {
    _permit: OwnedSemaphorePermit,
    _memory: OwnedSemaphorePermit,
    /// Whose it is, counted in `held`.
    peer: Option<(IpAddr, Held)>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some((peer, held)) = &self.peer {
            let mut held = held.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(count) = held.get_mut(peer) {
                *count -= 1;
                if *count == 0 {
                    held.remove(peer);
                }
            }
        }
    }
}

impl Slots {
    /// `total` slots (at least one), half of them (rounded up) for one
    /// peer at most, compiling in `memory` bytes at most.
    pub fn new(total: usize, memory: usize) -> Slots {
        let total = total.max(1);
        let memory_kib = (memory >> 10).clamp(1, Semaphore::MAX_PERMITS);
        Slots {
            memory: Arc::new(Semaphore::new(memory_kib)),
            memory_kib,
            free: Arc::new(Semaphore::new(total)),
            held: Arc::default(),
            total,
            share: total.div_ceil(2),
        }
    }

    /// The largest model text (bytes) these slots compile.
    pub fn largest(&self) -> usize {
        (self.memory_kib << 10) / BYTES_PER_TEXT_BYTE
    }

    /// 413 for a model of `length` bytes that could never be compiled in
    /// these slots' memory.
    pub fn refuse_larger(&self, length: u64) -> Result<(), ApiError> {
        if length <= self.largest() as u64 {
            return Ok(());
        }
        Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the model's {length} bytes are more than the {} bytes of model this server compiles: compiling \
                 takes about {BYTES_PER_TEXT_BYTE} bytes of memory per byte of JSON, and compilations have half of \
                 its memory budget; split the model, or start the server with a larger --memory-budget",
                self.largest()
            ),
        ))
    }

    /// A slot for `peer` (when known) to compile a model of `length`
    /// bytes: 413 when it is too large for the compilation memory, 429
    /// when the peer holds its share already, or when every slot or the
    /// memory is taken.
    pub fn take(&self, peer: Option<IpAddr>, length: usize) -> Result<Slot, ApiError> {
        self.refuse_larger(length as u64)?;
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(peer) = peer {
            if held.get(&peer).copied().unwrap_or(0) >= self.share {
                return Err(ApiError {
                    retry_after: Some(1),
                    ..ApiError::new(
                        StatusCode::TOO_MANY_REQUESTS,
                        format!(
                            "this client ({peer}) has {} model checks and compilations running already, its share \
                             of the server's {}; wait for one to end (try again after the Retry-After seconds)",
                            self.share, self.total
                        ),
                    )
                });
            }
        }
        let permit = Arc::clone(&self.free).try_acquire_owned().map_err(|_| {
            ApiError::busy(
                "model checks and compilations",
                self.total,
                "try again after the Retry-After seconds",
            )
        })?;
        let kib = (length.saturating_mul(BYTES_PER_TEXT_BYTE) >> 10).max(1);
        let memory = Arc::clone(&self.memory)
            .try_acquire_many_owned(kib as u32)
            .map_err(|_| ApiError {
                retry_after: Some(1),
                ..ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    format!(
                        "the models being compiled take the server's compilation memory ({} MiB, half of \
                         --memory-budget); try again after the Retry-After seconds",
                        self.memory_kib >> 10
                    ),
                )
            })?;
        if let Some(peer) = peer {
            *held.entry(peer).or_insert(0) += 1;
        }
        Ok(Slot {
            _permit: permit,
            _memory: memory,
            peer: peer.map(|p| (p, Arc::clone(&self.held))),
        })
    }
}
