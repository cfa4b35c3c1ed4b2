//! `pp signature` on a realistic binary log (see `tests/log_support`: regions, barriers, locks,
//! 8 threads): reading the log into steps, clustering and folding loops, at the default
//! threshold and with `--scale 10` (the threshold raised until Q = 5); prints seconds, events/s
//! and the process's peak resident memory (generation of the log included: for the command
//! alone, keep the log with `PP_SIGNATURE_BENCH_KEEP=FILE` and run `/usr/bin/time -v pp
//! signature FILE`). `PP_SIGNATURE_BENCH_EVENTS` (default 10⁷) sets the size.
//! Run: `cargo bench -p pp --bench signature`.

#[path = "../tests/log_support/mod.rs"]
mod log_support;

use std::time::Instant;

use pp::signature::{self, Threshold};

fn main() {
    let (path, _, kept) = log_support::bench_log("SIGNATURE");
    let events = test_support::setting("PP_SIGNATURE_BENCH_EVENTS", 10_000_000u64);
    for (name, threshold) in [
        ("threshold 0.05", Threshold::Fixed(0.05)),
        ("--scale 10", Threshold::Target(5.0)),
    ] {
        let start = Instant::now();
        let s = signature::read(&path, threshold).expect("a signature");
        let secs = start.elapsed().as_secs_f64();
        let steps: u64 = s.threads.iter().map(|t| t.steps).sum();
        println!(
            "signature ({name}): {events} events, {steps} steps, threshold {}, compression {:.1}: \
             {secs:.2} s, {:.2e} events/s",
            s.threshold,
            s.compression(),
            events as f64 / secs,
        );
    }
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    if let Some(hwm) = status.lines().find(|l| l.starts_with("VmHWM")) {
        println!("peak resident memory of this process (log generation included): {hwm}");
    }
    if !kept {
        let _ = std::fs::remove_file(&path);
    }
}
