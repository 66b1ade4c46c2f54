//! Persistent threads for simulated devices.
//!
//! Spawning threads for every run costs more than a small program takes
//! (about 150 µs a thread on a small VM), so runs borrow a rayon thread
//! pool from a process-wide cache and give it back afterwards. A pool is
//! used by one run at a time and has at least as many threads as the run
//! has devices: every device job blocks in collectives until its peers
//! arrive, so each must have a thread of its own (rayon lets an idle
//! worker steal any job not yet started, and with one worker per job no
//! job waits behind a blocked one).

use std::sync::{Arc, Mutex};

use rayon::{ThreadPool, ThreadPoolBuilder};

/// Stack size of a device thread.
const DEVICE_STACK_BYTES: usize = 16 << 20;

/// Idle pools kept for later runs; more are dropped (their threads exit).
const MAX_IDLE_POOLS: usize = 4;

static IDLE: Mutex<Vec<Arc<ThreadPool>>> = Mutex::new(Vec::new());

/// A pool borrowed for one run; returned to the cache when dropped.
pub struct PoolLease {
    pool: Arc<ThreadPool>,
}

impl PoolLease {
    /// A pool with at least `threads` threads: the smallest idle one that
    /// is big enough, or a new one.
    pub fn take(threads: usize) -> Result<PoolLease, String> {
        let cached = {
            let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
            let best = idle
                .iter()
                .enumerate()
                .filter(|(_, p)| p.current_num_threads() >= threads)
                .min_by_key(|(_, p)| p.current_num_threads())
                .map(|(i, _)| i);
            best.map(|i| idle.swap_remove(i))
        };
        let pool = match cached {
            Some(p) => p,
            None => Arc::new(
                ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .stack_size(DEVICE_STACK_BYTES)
                    .thread_name(|i| format!("meshrun-device-{i}"))
                    .build()
                    .map_err(|e| format!("cannot start {threads} device threads: {e}"))?,
            ),
        };
        Ok(PoolLease { pool })
    }

    pub fn pool(&self) -> &ThreadPool {
        &self.pool
    }
}

impl Drop for PoolLease {
    fn drop(&mut self) {
        let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
        idle.push(self.pool.clone());
        if idle.len() > MAX_IDLE_POOLS {
            // Drop the smallest: big runs are the expensive ones to
            // restart.
            if let Some(i) = idle
                .iter()
                .enumerate()
                .min_by_key(|(_, p)| p.current_num_threads())
                .map(|(i, _)| i)
            {
                idle.swap_remove(i);
            }
        }
    }
}
