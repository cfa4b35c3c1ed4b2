//! The timing loops: differential micro-benchmarks, repeated, summarized, re-measured while
//! they vary too much.
//!
//! # Method
//!
//! An operation (one copy, one channel round trip) is timed with `std::time::Instant`
//! (`CLOCK_MONOTONIC` through the vDSO, some tens of ns per reading).
//!
//! * **Differential sample.** Operations shorter than the sample length are run `n` times and
//!   `2n` times in a row (`n` chosen so that `n` of them take at least the sample length);
//!   `(t(2n) - t(n)) / n` is one operation's time with the timer's overhead and the loop's
//!   set-up cancelled. Each of the two timings is the best of [`INNER`] back-to-back tries,
//!   because an interruption inside the `n`-timing would otherwise make the difference, and
//!   so the minimum over samples, too *small*. The two timings must be in proportion
//!   (`t(2n) / t(n)` within 1.5 ..= 2.5, as when the overhead is small against `n`
//!   operations); if the operation's speed changed in between (a thread that went from
//!   spinning to sleeping, say), the sample is taken again, up to [`INNER`] times, and at
//!   last falls back to the mean `t(2n) / 2n`. A sample is thus never negative.
//! * **Direct sample.** An operation that alone takes the sample length (a large copy) is
//!   timed once per sample: the timer's overhead is then below a per mille of it.
//! * **Repetition.** A figure takes `reps` samples (fewer, but at least `min_reps`, when its
//!   share of the time budget runs out) and is summarized by [`summarize`]: the minimum is
//!   the figure, median and coefficient of variation say how far to trust it.
//! * **"Stays above 5%".** A flagged figure (CV above [`CV_LIMIT`](crate::machine::CV_LIMIT))
//!   is measured afresh, up to `retries` more times while its time share lasts; the first
//!   unflagged attempt is kept, else the attempt with the smallest CV, still flagged.
//! * Before the first sample the operation runs untimed while `n` is chosen (warm-up: caches,
//!   TLB, clock frequency, the echo thread's first wake-up).

use std::hint::black_box;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::summary::summarize;
use crate::machine::Measurement;

/// Tries per timing in a differential sample; the best counts.
pub const INNER: u32 = 3;

/// The progress line, throttled so that reporting does not disturb the timings much.
pub struct Progress<'a> {
    report: &'a mut dyn FnMut(&str),
    last: Option<Instant>,
}

impl<'a> Progress<'a> {
    /// At most one report per this interval, except at the start of a figure.
    const EVERY: Duration = Duration::from_millis(100);

    /// Reports through `report`.
    pub fn new(report: &'a mut dyn FnMut(&str)) -> Progress<'a> {
        Progress { report, last: None }
    }

    /// Reports `line()` when `now` or when the last report is old enough.
    pub fn say(&mut self, now: bool, line: impl FnOnce() -> String) {
        let due = self.last.is_none_or(|t| t.elapsed() >= Self::EVERY);
        if now || due {
            (self.report)(&line());
            self.last = Some(Instant::now());
        }
    }
}

/// How the samples of one figure are taken.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Method {
    /// One operation per timing.
    Direct,
    /// Best of [`INNER`] timings of `n` and of `2n` operations; the difference over `n`.
    Differential(u64),
}

/// How one figure is repeated.
#[derive(Debug, Clone)]
pub struct Plan {
    /// What the progress line calls it.
    pub label: String,
    /// Samples wanted.
    pub reps: u32,
    /// Samples taken even when the time share has run out.
    pub min_reps: u32,
    /// Fresh attempts at a flagged figure.
    pub retries: u32,
    /// This figure's share of the time budget (all attempts).
    pub share: Duration,
    /// Nanoseconds one timing should at least take.
    pub sample_ns: f64,
    /// Operations one timing runs at least.
    pub min_ops: u64,
}

/// Wall time of `op(n)`, ns.
fn time_ns(op: &mut dyn FnMut(u64), n: u64) -> f64 {
    let start = Instant::now();
    op(n);
    start.elapsed().as_nanos() as f64
}

fn best_of(op: &mut dyn FnMut(u64), n: u64) -> f64 {
    (0..INNER)
        .map(|_| time_ns(op, n))
        .fold(f64::INFINITY, f64::min)
}

/// One operation's time from one sample, ns.
pub fn sample(op: &mut dyn FnMut(u64), method: Method) -> f64 {
    match method {
        Method::Direct => time_ns(op, 1),
        Method::Differential(n) => {
            let mut twice = f64::NAN;
            for _ in 0..INNER {
                let once = best_of(op, n);
                twice = best_of(op, 2 * n);
                if (1.5..=2.5).contains(&(twice / once)) {
                    return (twice - once) / n as f64;
                }
            }
            twice / (2 * n) as f64
        }
    }
}

/// Chooses how to sample `op`: grows `n` from `min_ops` until `n` operations take `sample_ns`
/// (running the operation untimed meanwhile is its warm-up).
pub fn choose(op: &mut dyn FnMut(u64), sample_ns: f64, min_ops: u64) -> Method {
    choose_by(&mut |n| best_of(op, n), sample_ns, min_ops)
}

/// [`choose`] with `time(n)` giving the time of `n` operations, ns.
fn choose_by(time: &mut dyn FnMut(u64) -> f64, sample_ns: f64, min_ops: u64) -> Method {
    let mut n = min_ops.max(1);
    loop {
        let t = time(n);
        if t >= sample_ns {
            return if n == 1 {
                Method::Direct
            } else {
                Method::Differential(n)
            };
        }
        // Aim 20% past the target, growing at least 2x and at most 64x per step.
        let aim = (n as f64 * 1.2 * sample_ns / t.max(1.0)).ceil() as u64;
        n = aim.clamp(2 * n, 64 * n);
    }
}

/// Measures one figure: `op(n)` performs the operation `n` times; each sample's time is
/// multiplied by `scale` (e.g. 1/2 for a round trip's half).
pub fn figure(
    plan: &Plan,
    op: &mut dyn FnMut(u64),
    scale: f64,
    progress: &mut Progress,
) -> Measurement {
    let start = Instant::now();
    progress.say(true, || format!("{}: warming up", plan.label));
    let method = choose(op, plan.sample_ns, plan.min_ops);
    let reps = plan.reps.max(1) as usize;
    let min_reps = (plan.min_reps.max(1) as usize).min(reps);
    let mut best: Option<Measurement> = None;
    for attempt in 0..=plan.retries {
        let mut samples = Vec::with_capacity(reps);
        while samples.len() < reps && (samples.len() < min_reps || start.elapsed() < plan.share) {
            progress.say(samples.is_empty(), || {
                let again = match (attempt, &best) {
                    (0, _) | (_, None) => String::new(),
                    (_, Some(m)) => format!(" (again: CV {:.1}%)", 100.0 * m.cv),
                };
                format!("{}: {}/{reps}{again}", plan.label, samples.len())
            });
            samples.push(scale * sample(op, method));
        }
        let m = summarize(&samples);
        let done = !m.flagged;
        if best.as_ref().is_none_or(|b| m.cv < b.cv) {
            best = Some(m);
        }
        if done || start.elapsed() >= plan.share {
            break;
        }
    }
    best.expect("at least one attempt")
}

/// Single-thread copy time of `src.len()` bytes from `src` to `dst` (equal lengths).
pub fn copy(plan: &Plan, src: &[u8], dst: &mut [u8], progress: &mut Progress) -> Measurement {
    let mut op = |n: u64| {
        for _ in 0..n {
            black_box(&mut *dst).copy_from_slice(black_box(src));
        }
    };
    figure(plan, &mut op, 1.0, progress)
}

/// Thread-to-thread hand-off latency: the main thread and an echo thread pass a number back
/// and forth through a pair of `std::sync::mpsc` channels; half a round trip.
pub fn handoff(plan: &Plan, progress: &mut Progress) -> Measurement {
    let (to_echo, at_echo) = mpsc::channel::<u64>();
    let (from_echo, back) = mpsc::channel::<u64>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            for message in at_echo {
                if from_echo.send(message).is_err() {
                    break;
                }
            }
        });
        let mut op = |n: u64| {
            for i in 0..n {
                to_echo.send(i).expect("the echo thread is running");
                black_box(back.recv().expect("the echo thread is running"));
            }
        };
        let m = figure(plan, &mut op, 0.5, progress);
        drop(to_echo); // ends the echo thread
        m
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(reps: u32) -> Plan {
        Plan {
            label: "test".into(),
            reps,
            min_reps: 2,
            retries: 1,
            share: Duration::from_secs(1),
            sample_ns: 20_000.0,
            min_ops: 1,
        }
    }

    #[test]
    fn short_operations_are_timed_differentially() {
        // Known answer on a given time (a measured no-op's depends on the machine's load):
        // 100 ns an operation, 20 us a sample. n = 1 takes 100 ns: aim 1.2 * 200 = 240, at
        // most 64x; 64 take 6.4 us: aim 240 (at least 2x: 128); 240 take 24 us >= 20 us.
        let mut asked = Vec::new();
        let mut time = |n: u64| {
            asked.push(n);
            100.0 * n as f64
        };
        assert_eq!(choose_by(&mut time, 20_000.0, 1), Method::Differential(240));
        assert_eq!(asked, [1, 64, 240]);
        assert_eq!(choose_by(&mut |_| 30_000.0, 20_000.0, 1), Method::Direct);
        // A sleep lasts at least its length whatever the load: one is a sample.
        let long = |_: u64| std::thread::sleep(Duration::from_micros(100));
        assert_eq!(choose(&mut { long }, 20_000.0, 1), Method::Direct);
        assert_eq!(choose(&mut { long }, 20_000.0, 2), Method::Differential(2));
    }

    #[test]
    fn a_figure_reports_its_progress_and_reps() {
        let mut lines = Vec::new();
        let mut report = |l: &str| lines.push(l.to_string());
        let mut progress = Progress::new(&mut report);
        let src = vec![1u8; 4096];
        let mut dst = vec![0u8; 4096];
        let m = copy(&plan(5), &src, &mut dst, &mut progress);
        assert_eq!(dst, src);
        assert!(m.reps >= 2 && m.reps <= 5, "{m:?}");
        assert!(m.min_ns > 0.0 && m.min_ns <= m.median_ns, "{m:?}");
        assert!(
            lines.iter().any(|l| l.starts_with("test: 0/5")),
            "{lines:?}"
        );
    }

    #[test]
    fn handoff_latency_is_positive() {
        let mut report = |_: &str| {};
        let mut progress = Progress::new(&mut report);
        let m = handoff(&plan(3), &mut progress);
        assert!(m.min_ns > 0.0, "{m:?}");
    }
}
