//! `pp signature` and `pp skeleton` on a realistic binary log (see `tests/log_support`: regions,
//! barriers, locks, 8 threads), as the commands do them (docs/skeletons.md#memory): reading the
//! log into step records, clustering and folding loops and writing the text (to nowhere), at the
//! default threshold and with `--scale 10` (the threshold raised until Q = 5); then making the
//! skeleton of K = 10 (`skeleton::plan`: the profile, the signature, the checks) and writing its
//! skeleton file and C + MPI source text (to nowhere, counting the bytes). Prints seconds, events/s and each stage's peak
//! resident memory (the peak is reset before each stage through `/proc/self/clear_refs`; the
//! first line's is the log generation's). `PP_SIGNATURE_BENCH_EVENTS` (default 10⁷) sets the
//! size; `PP_SIGNATURE_BENCH_KEEP=FILE` keeps the log.
//! Run: `cargo bench -p pp --bench signature`.

#[path = "../tests/log_support/mod.rs"]
mod log_support;

use std::io::{self, Write};
use std::time::Instant;

use pp::signature::{self, Form, Threshold};
use pp::skeleton::{self, Size, file, mpi};

/// Counts the bytes written to it.
#[derive(Default)]
struct Count(u64);

impl Write for Count {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len() as u64;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

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
        let mut text = Count::default();
        let (steps, threshold, compression) =
            signature::write(&path, threshold, Form::Text, &mut text).expect("a signature");
        let secs = start.elapsed().as_secs_f64();
        println!(
            "signature ({name}): {events} events, {steps} steps, threshold {threshold}, compression {compression:.1}, {} bytes of text: \
             {secs:.2} s, {:.2e} events/s, peak resident memory {}",
            text.0,
            events as f64 / secs,
            peak(),
        );
    }
    reset_peak();
    let start = Instant::now();
    let (skel, _) = skeleton::plan(&path, Size::Scale(10.0)).expect("a skeleton");
    let made = start.elapsed().as_secs_f64();
    let (mut text, mut c) = (Count::default(), Count::default());
    file::write_text(&mut text, &skel).expect("skeleton.txt");
    mpi::write_source(&mut c, &skel).expect("skeleton.c");
    let secs = start.elapsed().as_secs_f64();
    println!(
        "skeleton (--scale 10): {events} events: {made:.2} s to make ({:.2e} events/s), {:.3} s more for skeleton.txt ({} bytes) and skeleton.c ({} bytes), peak resident memory {}",
        events as f64 / made,
        secs - made,
        text.0,
        c.0,
        peak(),
    );
    if !kept {
        let _ = std::fs::remove_file(&path);
    }
}
