//! Timing for the benchmarks (`harness = false` binaries).

use std::time::{Duration, Instant};

/// Minimum and median of `runs` timings of `f`.
///
/// # Panics
/// When `runs` is 0.
pub fn time(runs: usize, mut f: impl FnMut()) -> (Duration, Duration) {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    (times[0], times[runs / 2])
}
