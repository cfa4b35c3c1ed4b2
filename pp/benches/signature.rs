//! `pp signature` and `pp skeleton` on a realistic binary log (see `tests/log_support`: regions,
//! barriers, locks, 8 threads): reading the log into steps, clustering and folding loops, at the
//! default threshold and with `--scale 10` (the threshold raised until Q = 5); then making the
//! skeleton of K = 10 (`skeleton::from_log`: the profile, the signature, the division) and its
//! skeleton file and C + MPI source text. Prints seconds, events/s and each stage's peak
//! resident memory (the peak is reset before each stage through `/proc/self/clear_refs`; the
//! first line's is the log generation's). `PP_SIGNATURE_BENCH_EVENTS` (default 10⁷) sets the
//! size; `PP_SIGNATURE_BENCH_KEEP=FILE` keeps the log.
//! Run: `cargo bench -p pp --bench signature`.

#[path = "../tests/log_support/mod.rs"]
mod log_support;

use std::time::Instant;

use pp::signature::{self, Threshold};
use pp::skeleton::{self, Size, file, mpi};

/// The peak resident memory since the last [`reset_peak`] (`VmHWM`).
fn peak() -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmHWM"))
        .map(|l| l.trim_start_matches("VmHWM:").trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// Resets the peak resident memory to the current (Linux: `5` into `clear_refs`).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn main() {
    let (path, _, kept) = log_support::bench_log("SIGNATURE");
    let events = test_support::setting("PP_SIGNATURE_BENCH_EVENTS", 10_000_000u64);
    println!("log generation: peak resident memory {}", peak());
    for (name, threshold) in [
        ("threshold 0.05", Threshold::Fixed(0.05)),
        ("--scale 10", Threshold::Target(5.0)),
    ] {
        reset_peak();
        let start = Instant::now();
        let s = signature::read(&path, threshold).expect("a signature");
        let secs = start.elapsed().as_secs_f64();
        let steps: u64 = s.threads.iter().map(|t| t.steps).sum();
        println!(
            "signature ({name}): {events} events, {steps} steps, threshold {}, compression {:.1}: \
             {secs:.2} s, {:.2e} events/s, peak resident memory {}",
            s.threshold,
            s.compression(),
            events as f64 / secs,
            peak(),
        );
    }
    reset_peak();
    let start = Instant::now();
    let (skel, _) = skeleton::from_log(&path, Size::Scale(10.0)).expect("a skeleton");
    let made = start.elapsed().as_secs_f64();
    let text = file::text(&skel);
    let c = mpi::source(&skel);
    let secs = start.elapsed().as_secs_f64();
    println!(
        "skeleton (--scale 10): {events} events: {made:.2} s to make ({:.2e} events/s), {:.3} s more for skeleton.txt ({} bytes) and skeleton.c ({} bytes), peak resident memory {}",
        events as f64 / made,
        secs - made,
        text.len(),
        c.len(),
        peak(),
    );
    if !kept {
        let _ = std::fs::remove_file(&path);
    }
}
