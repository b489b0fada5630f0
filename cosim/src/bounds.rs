//! The bounds of a system file, each checked where it is read and named in
//! the message. Steps and stop times take the bounds of an offline
//! simulation ([`tandem_config::bounds::MIN_STEP`],
//! [`tandem_config::bounds::MAX_STOP`]).

/// The largest system file read (bytes).
pub const MAX_SYSTEM_FILE: u64 = 16 << 20;
/// The most sub-models of a system.
pub const MAX_MODELS: usize = 256;
/// The most connections of a system.
pub const MAX_CONNECTIONS: usize = 65_536;
/// The largest `every` of a sub-model (base macro steps per communication
/// step).
pub const MAX_EVERY: i64 = 1_000_000;
/// The most micro steps of a sub-model in one communication step (an
/// iterated macro step keeps a sample of each coupling output at each).
pub const MAX_MICRO_STEPS: f64 = 1e6;
/// The largest `iterate.max_iterations`.
pub const MAX_ITERATIONS: i64 = 1000;
/// The most threads of a Jacobi run.
pub const MAX_THREADS: i64 = 256;
