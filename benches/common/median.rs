//! The timing the benches' `summary` lines use (one run side by side,
//! so ratios are measured under the same load).

use std::time::Instant;

/// The median of `n` timed runs of `f` (after one untimed run), in
/// seconds.
pub fn median_secs(n: usize, mut f: impl FnMut()) -> f64 {
    f();
    let mut t: Vec<f64> = (0..n)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    t[n / 2]
}
