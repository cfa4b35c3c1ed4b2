//! `pp calibrate`: measures this machine for the ideal times the profiler needs
//! (docs/machine-file.md) and produces the [`Machine`] file.
//!
//! Measured the way Schumann's machine analyser did: differential micro-benchmarks, repeated,
//! the minimum taken, the coefficient of variation reported (see [`measure`] for the timing
//! method, [`summarize`] for the statistics, [`fit_segments`] for the copy model).
//!
//! * **Copy**: single-thread `copy_from_slice` of log-spaced sizes between two buffers
//!   allocated and touched once, before any timing (each size copies the first bytes of
//!   them); the minimum times are fitted by a piecewise-linear model
//!   `t = alpha_k + bytes / beta_k`.
//! * **Hand-off**: half the round trip of a message between two threads through a pair of
//!   `std::sync::mpsc` channels.
//!
//! The hand-off is measured first, then the sizes from small to large. A time budget bounds
//! the whole: each figure may use the remaining time divided by the figures still to come, so
//! what the quick small sizes leave over goes to the large ones; a figure out of time still
//! takes `min_reps` samples but is not re-measured.

pub mod measure;
pub mod mpi;
pub mod segments;
pub mod summary;
pub mod table;

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::machine::{About, Copy, CopyPoint, Machine};
use measure::{Plan, Progress};

pub use segments::fit_segments;
pub use summary::summarize;
pub use table::table;

/// What to measure and how long to try.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Copy sizes, bytes (sorted and deduplicated before use; zero sizes are skipped).
    pub sizes: Vec<u64>,
    /// Samples per figure.
    pub reps: u32,
    /// Samples per figure even when the time budget is spent.
    pub min_reps: u32,
    /// Fresh attempts at a figure whose CV is above 5%.
    pub retries: u32,
    /// Shortest timing, ns: operations shorter than this are timed differentially, `n` at a
    /// time, with `n` operations taking at least this long.
    pub sample_ns: u64,
    /// Round trips per hand-off timing, at least (the differential method doubles it).
    pub handoff_round_trips: u32,
    /// Time for all the measurements (the large copies' last `min_reps` samples and the
    /// buffers' allocation may go a little over).
    pub budget: Duration,
}

impl Settings {
    /// The default: 64 B .. 256 MiB at two sizes per octave (2^k and 1.5 * 2^k), 31 samples
    /// a figure, three re-measurements of a flagged one, 30 s budget (well under a minute).
    pub fn standard() -> Settings {
        Settings {
            sizes: octave_sizes(64, 256 << 20, true),
            reps: 31,
            min_reps: 5,
            retries: 3,
            sample_ns: 50_000,
            handoff_round_trips: 20,
            budget: Duration::from_secs(30),
        }
    }

    /// For tests: 64 B .. 4 MiB every other octave, few samples; well under a second
    /// (0.8 s budget, typically some tens of ms).
    pub fn quick() -> Settings {
        Settings {
            sizes: (0..9).map(|k| 64u64 << (2 * k)).collect(),
            reps: 7,
            min_reps: 3,
            retries: 1,
            sample_ns: 10_000,
            handoff_round_trips: 20,
            budget: Duration::from_millis(800),
        }
    }
}

/// Powers of two from `from` to `to`, with 1.5 times each in between when `halves`.
fn octave_sizes(from: u64, to: u64, halves: bool) -> Vec<u64> {
    let mut sizes = Vec::new();
    let mut size = from.max(1);
    while size <= to {
        sizes.push(size);
        let half = size / 2;
        if halves && half > 0 && size + half <= to {
            sizes.push(size + half);
        }
        size *= 2;
    }
    sizes
}

/// Measures everything (see the module documentation); calls `progress` with a short
/// one-line status now and then (e.g. `copy 1 MiB: 12/31`) for a progress line.
pub fn calibrate(settings: &Settings, progress: &mut dyn FnMut(&str)) -> Machine {
    let deadline = Instant::now() + settings.budget;
    let mut progress = Progress::new(progress);
    let mut sizes: Vec<u64> = settings.sizes.iter().copied().filter(|&s| s > 0).collect();
    sizes.sort_unstable();
    sizes.dedup();
    if sizes.is_empty() {
        sizes = Settings::quick().sizes;
    }
    let figures = sizes.len() + 1;
    let plan = |label: String, done: usize, min_ops: u64| Plan {
        label,
        reps: settings.reps,
        min_reps: settings.min_reps,
        retries: settings.retries,
        share: deadline.saturating_duration_since(Instant::now()) / (figures - done) as u32,
        sample_ns: settings.sample_ns as f64,
        min_ops,
    };

    let handoff = measure::handoff(
        &plan("hand-off".into(), 0, settings.handoff_round_trips.into()),
        &mut progress,
    );

    let largest = *sizes.last().expect("sizes is not empty");
    progress.say(true, || {
        format!(
            "copy: touching 2 x {} of buffers",
            table::human_bytes(largest)
        )
    });
    let len = usize::try_from(largest).expect("a copy size fits in memory");
    let src = vec![0x5a_u8; len];
    let mut dst = vec![0xa5_u8; len];
    let mut points = Vec::with_capacity(sizes.len());
    for (k, &bytes) in sizes.iter().enumerate() {
        let n = bytes as usize;
        let label = format!("copy {}", table::human_bytes(bytes));
        let time = measure::copy(
            &plan(label, k + 1, 1),
            &src[..n],
            &mut dst[..n],
            &mut progress,
        );
        points.push(CopyPoint { bytes, time });
    }
    drop((src, dst));

    progress.say(true, || "fitting the copy model".into());
    let fit: Vec<(u64, f64)> = points.iter().map(|p| (p.bytes, p.time.min_ns)).collect();
    let segments = fit_segments(&fit);
    Machine {
        about: about(),
        copy: Copy { segments, points },
        handoff,
        mpi: None,
    }
}

/// This host, its logical CPUs, now, this `pp`.
fn about() -> About {
    let host = ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|h| h.trim().to_string())
        .find(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism()
        .map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX))
        .unwrap_or(1);
    let measured_at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    About {
        host,
        cores,
        measured_at,
        pp_version: env!("CARGO_PKG_VERSION").into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_sizes_are_log_spaced() {
        let s = Settings::standard();
        assert_eq!(&s.sizes[..4], &[64, 96, 128, 192]);
        assert_eq!(*s.sizes.last().unwrap(), 256 << 20);
        assert!(s.sizes.windows(2).all(|w| w[0] < w[1]));
        assert!(s.budget < Duration::from_secs(60));
        let q = Settings::quick();
        assert_eq!(*q.sizes.last().unwrap(), 4 << 20);
    }

    #[test]
    fn about_names_this_machine() {
        let a = about();
        assert!(!a.host.is_empty());
        assert!(a.cores >= 1);
        assert!(a.measured_at > 0);
    }
}
