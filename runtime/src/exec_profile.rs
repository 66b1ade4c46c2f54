//! Time per instruction kind, for finding where a run's time goes: with
//! `MESHRUN_PROFILE=1` in the environment, every device adds the wall time
//! of each unit it runs (a fused group, an op by kind and result type, a
//! collective; time spent waiting for peers included) to a process-wide
//! table, which `Executor::run` prints to stderr after each run, largest
//! first (totals over all runs and devices so far).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// The environment variable that turns profiling on.
pub const PROFILE_ENV: &str = "MESHRUN_PROFILE";

/// Whether this process profiles (read once).
pub(crate) fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var_os(PROFILE_ENV).is_some_and(|v| !v.is_empty() && v != "0"))
}

static TABLE: Mutex<Option<HashMap<String, (Duration, u64)>>> = Mutex::new(None);

/// Add `took` to `what`'s total.
pub(crate) fn add(what: String, took: Duration) {
    let mut t = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let e = t.get_or_insert_with(HashMap::new).entry(what).or_default();
    e.0 += took;
    e.1 += 1;
}

/// The table so far, largest total first, as lines.
pub(crate) fn report() -> String {
    let t = TABLE.lock().unwrap_or_else(|e| e.into_inner());
    let mut rows: Vec<_> = t.iter().flatten().collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r.1 .0));
    let total: Duration = rows.iter().map(|r| r.1 .0).sum();
    let mut out = format!(
        "profile: {:.1} ms in all units, all devices\n",
        total.as_secs_f64() * 1e3
    );
    for (what, (d, n)) in rows {
        out += &format!(
            "{:>10.2} ms {:>5.1}% {:>7} x  {what}\n",
            d.as_secs_f64() * 1e3,
            100.0 * d.as_secs_f64() / total.as_secs_f64().max(1e-12),
            n
        );
    }
    out
}
