//! Timing and settings for the benchmarks (`harness = false` binaries).

use std::str::FromStr;
use std::time::{Duration, Instant};

/// A benchmark's setting from the environment variable `name` (`PP_LOG_BENCH_ROUNDS`...):
/// its value read as a `T`, else `default` (unset, or not a `T`).
pub fn setting<T: FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

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

#[cfg(test)]
mod tests {
    #[test]
    fn a_setting_falls_back_to_its_default() {
        assert_eq!(super::setting("TEST_SUPPORT_NO_SUCH_SETTING", 11usize), 11);
        assert_eq!(super::setting("CARGO_PKG_NAME", 3u32), 3, "not a number");
        assert_eq!(
            super::setting("CARGO_PKG_NAME", String::new()),
            "test-support"
        );
    }
}
