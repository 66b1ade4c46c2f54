//! Time per instruction kind, for finding where a run's time goes: with
//! `MESHRUN_PROFILE=1` in the environment, every device adds the wall time
//! and the CPU time of its own thread for each unit it runs (a fused
//! group, an op by kind and result type, a collective) to a process-wide
//! table, which `Executor::run` prints to stderr after each run, largest
//! CPU time first (totals over all runs and devices so far).
//!
//! Wall time alone misleads when device threads outnumber the cores: a
//! unit's wall time then counts the time its thread was preempted and,
//! for a collective, the time spent waiting for peers. CPU time counts
//! only what the thread itself burnt (in a collective: spinning, yielding,
//! building the shared result), so `wall - cpu` is the waiting.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable that turns profiling on.
pub const PROFILE_ENV: &str = "MESHRUN_PROFILE";

/// Whether this process profiles (read once).
pub(crate) fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os(PROFILE_ENV).is_some_and(|v| !v.is_empty() && v != "0"))
}

/// The CPU time the calling thread has used so far (zero where the clock
/// is unavailable).
#[allow(unsafe_code)]
pub(crate) fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes one `timespec` through the pointer,
    // which points at a live, properly aligned local; it reads nothing
    // else. On failure it leaves `ts` zeroed (checked through `rc`).
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
}

/// Both clocks at the start of a unit.
#[derive(Clone, Copy)]
pub(crate) struct Stamp {
    wall: Instant,
    cpu: Duration,
}

impl Stamp {
    pub(crate) fn now() -> Stamp {
        Stamp {
            wall: Instant::now(),
            cpu: thread_cpu_time(),
        }
    }
}

#[derive(Default)]
struct Row {
    wall: Duration,
    cpu: Duration,
    count: u64,
}

static TABLE: Mutex<Option<HashMap<String, Row>>> = Mutex::new(None);

/// Add the time since `since` (both clocks) to `what`'s total.
pub(crate) fn add(what: String, since: Stamp) {
    let (wall, cpu) = (
        since.wall.elapsed(),
        thread_cpu_time().saturating_sub(since.cpu),
    );
    let mut t = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let e = t.get_or_insert_with(HashMap::new).entry(what).or_default();
    e.wall += wall;
    e.cpu += cpu;
    e.count += 1;
}

/// The table so far, largest CPU time first, as lines.
pub(crate) fn report() -> String {
    let t = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let mut rows: Vec<_> = t.iter().flatten().collect();
    rows.sort_by_key(|r| std::cmp::Reverse((r.1.cpu, r.1.wall)));
    let wall: Duration = rows.iter().map(|r| r.1.wall).sum();
    let cpu: Duration = rows.iter().map(|r| r.1.cpu).sum();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut out = format!(
        "profile: {:.1} ms CPU, {:.1} ms wall in all units, all devices \
         (wall - CPU: preempted or waiting)\n{:>10} {:>6} {:>10} {:>7}\n",
        ms(cpu),
        ms(wall),
        "CPU ms",
        "CPU %",
        "wall ms",
        "count"
    );
    for (what, r) in rows {
        out += &format!(
            "{:>10.2} {:>5.1}% {:>10.2} {:>7} x  {what}\n",
            ms(r.cpu),
            100.0 * r.cpu.as_secs_f64() / cpu.as_secs_f64().max(1e-12),
            ms(r.wall),
            r.count
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The thread clock advances with work and not with sleep.
    #[test]
    fn thread_clock_counts_work_not_sleep() {
        let t0 = thread_cpu_time();
        std::thread::sleep(Duration::from_millis(30));
        let slept = thread_cpu_time() - t0;
        let t1 = thread_cpu_time();
        let mut x = 1u64;
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(30) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let worked = thread_cpu_time() - t1;
        assert!(slept < Duration::from_millis(10), "slept {slept:?}");
        assert!(worked > Duration::from_millis(1), "worked {worked:?}");
    }
}
