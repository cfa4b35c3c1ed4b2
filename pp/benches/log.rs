//! Binary log and `pp` throughput: writes a realistic binary log (8 threads) of `PP_LOG_BENCH_EVENTS`
//! events (default 10⁸; `PP_LOG_BENCH_THREADS` changes the 8 threads) to a temporary file, then reads it back with `LogReader` and reports
//! bytes per event, write and read rates, and the reader's peak memory.
//!
//! Peak memory is the process's `VmHWM` from `/proc/self/status` (Linux). Before reading, the
//! high-water mark is reset by writing `5` to `/proc/self/clear_refs`, so the figure after
//! reading is the peak resident set during the read; the bench prints the resident set before
//! reading too, so the reader's own share is the difference. The file is read through the page
//! cache (it was just written), so the rate is decoding, not disk speed.
//!
//! The read is repeated `PP_LOG_BENCH_ROUNDS` times (default 3; the machine may be shared) and
//! the best round gives the rate.
//!
//! The I/O floor is reading the file alone (1 MiB at a time, through the page cache): no
//! reader can be faster.
//!
//! Last, the `pp` command itself runs on the log (`pp -l LOG`, one process, its wall and CPU
//! time and peak resident set from `getrusage`): what a user waits for, with `PP_THREADS=1`
//! (decoding and attribution on one thread) and `PP_THREADS=2` (decoding on a second one,
//! docs/event-log.md#reading-on-several-cores), alternating, `PP_LOG_BENCH_ROUNDS` times each,
//! the best of each printed. In this process the same is done with `LogReader::set_threads`,
//! printing also the calling thread's CPU time: on 2 threads, the attribution's share, which
//! bounds the wall time on idle cores (the decoding runs beside it).
//!
//! `PP_LOG_BENCH_KEEP=1` keeps the log (to profile `pp` on it).
//!
//! `cargo bench -p pp --bench log` (full size), `PP_LOG_BENCH_EVENTS=10000000 cargo bench -p pp
//! --bench log` (quick).

#[path = "../tests/log_support/mod.rs"]
mod log_support;

use std::fs::File;
use std::io::Read;
use std::time::Instant;

use pp::event::Symbols;
use pp::log::{BinaryWriter, LogReader};
use pp::profile::profile_log;

use test_support::setting;

fn status_kib(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Nanoseconds this thread has run on a CPU (`/proc/thread-self/schedstat`, Linux): unlike
/// wall time, it does not count time the thread waited for a CPU on a busy machine.
fn cpu_ns() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// User + system CPU seconds of the waited-for children, and the largest peak resident set
/// of one of them (KiB).
fn children_usage() -> (f64, i64) {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(usage.ru_utime) + s(usage.ru_stime), usage.ru_maxrss)
}

fn main() {
    let target: u64 = std::env::var("PP_LOG_BENCH_EVENTS")
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(100_000_000);
    let threads: u32 = setting("PP_LOG_BENCH_THREADS", 8);
    let path = std::env::temp_dir().join(format!("pp-log-bench-{}.log", std::process::id()));

    let start = Instant::now();
    let file = File::create(&path).expect("create the log");
    let mut writer = BinaryWriter::new(file, &log_support::header(threads)).expect("header");
    let mut symbols = Symbols::default();
    let events = log_support::realistic(threads, target, 4096, 1, &mut symbols, |th, evs, s| {
        writer.write_block(th, evs, s).expect("write a block");
    });
    writer.finish().expect("finish");
    let write_s = start.elapsed().as_secs_f64();
    let bytes = std::fs::metadata(&path).expect("size").len();

    let rounds: usize = setting("PP_LOG_BENCH_ROUNDS", 3).max(1);
    let rss_before = status_kib("VmRSS:");
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let mut times = Vec::new();
    let mut cpu_times = Vec::new();
    let (mut n, mut sum, mut open_s) = (0u64, 0u64, 0.0);
    for _ in 0..rounds {
        let start = Instant::now();
        let cpu_start = cpu_ns();
        let mut reader = LogReader::open(&path).expect("open");
        // The reader alone, on this thread (its CPU time is this thread's).
        reader.set_threads(1);
        open_s = start.elapsed().as_secs_f64();
        let mut last = 0u64;
        (n, sum) = (0, 0);
        reader
            .for_each_event(|e, _| {
                assert!(e.t >= last);
                last = e.t;
                sum = sum.wrapping_add(e.t ^ u64::from(e.thread));
                n += 1;
            })
            .expect("a valid log");
        times.push(start.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu_start, cpu_ns()) {
            cpu_times.push((b - a) as f64 / 1e9);
        }
        assert!(reader.finished());
    }
    let hwm = status_kib("VmHWM:");
    assert_eq!(n, events);

    // The I/O floor: the file's bytes alone.
    let mut floor = (f64::INFINITY, f64::INFINITY);
    for _ in 0..rounds {
        let start = Instant::now();
        let cpu_start = cpu_ns();
        let mut file = File::open(&path).expect("open");
        let mut buf = vec![0u8; 1 << 20];
        let mut total = 0usize;
        loop {
            let n = file.read(&mut buf).expect("read");
            if n == 0 {
                break;
            }
            total += n;
        }
        assert_eq!(total as u64, bytes);
        floor.0 = floor.0.min(start.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu_start, cpu_ns()) {
            floor.1 = floor.1.min((b - a) as f64 / 1e9);
        }
    }

    // What `pp` does: read and attribute (the profiler's sweep), on 1 and 2 threads, with the
    // peak of the first round.
    let mut in_process = [f64::INFINITY; 2];
    // This thread's CPU time: on 2 threads, the attribution's part (the decoder's is apart).
    let mut caller_cpu = [f64::INFINITY; 2];
    let mut profile_hwm = None;
    let mut reset_again = false;
    for round in 0..rounds {
        for workers in [1, 2] {
            if round == 0 && workers == 1 {
                reset_again = std::fs::write("/proc/self/clear_refs", "5").is_ok();
            }
            let start = Instant::now();
            let cpu_start = cpu_ns();
            let mut reader = LogReader::open(&path).expect("open");
            reader.set_threads(workers);
            let attribution = profile_log(&mut reader, None, None)
                .whole("bench.log")
                .expect("a whole log");
            assert!(
                attribution.warnings.is_empty(),
                "{:?}",
                attribution.warnings
            );
            let (from, to) = attribution.window;
            assert_eq!(
                attribution.totals.sum(),
                u128::from(threads) * u128::from(to - from)
            );
            let t = &mut in_process[workers - 1];
            *t = t.min(start.elapsed().as_secs_f64());
            if let (Some(a), Some(b)) = (cpu_start, cpu_ns()) {
                let c = &mut caller_cpu[workers - 1];
                *c = c.min((b - a) as f64 / 1e9);
            }
            if round == 0 && workers == 1 {
                profile_hwm = status_kib("VmHWM:");
            }
        }
    }
    // The `pp` command itself on the same log: `pp -l LOG` (no machine file), wall time and
    // the child's CPU time, on 1 and 2 threads.
    let mut pp_runs = [(f64::INFINITY, f64::INFINITY, 0i64); 2];
    for _ in 0..rounds {
        for workers in [1, 2] {
            let start = Instant::now();
            let (cpu_before, _) = children_usage();
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_pp"))
                .arg("-l")
                .arg(&path)
                .env("HOME", std::env::temp_dir())
                .env("PP_THREADS", workers.to_string())
                .env_remove("PP_MACHINE")
                .output()
                .expect("run pp");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let wall = start.elapsed().as_secs_f64();
            let (cpu_after, max_rss) = children_usage();
            let best = &mut pp_runs[workers - 1];
            best.0 = best.0.min(wall);
            best.1 = best.1.min(cpu_after - cpu_before);
            best.2 = max_rss;
        }
    }
    let first_s = times[0];
    let best_s = times.iter().copied().fold(f64::INFINITY, f64::min);
    let best_cpu_s = cpu_times.iter().copied().fold(f64::INFINITY, f64::min);
    if std::env::var_os("PP_LOG_BENCH_KEEP").is_some() {
        println!("  log kept: {}", path.display());
    } else {
        let _ = std::fs::remove_file(&path);
    }

    println!("binary log: {threads} threads, {events} events, {bytes} bytes");
    println!("  bytes/event        {:.3}", bytes as f64 / events as f64);
    println!(
        "  write (generate + encode)  {:.2} s  {:.1} M events/s",
        write_s,
        events as f64 / write_s / 1e6
    );
    println!(
        "  read (LogReader::open + for_each_event), {rounds} rounds: first {first_s:.3} s, best {best_s:.3} s \
         => {:.1} M events/s ({:.1} MB/s; open/index {open_s:.3} s)  [checksum {sum:x}]",
        n as f64 / best_s / 1e6,
        bytes as f64 / best_s / 1e6,
    );
    if best_cpu_s.is_finite() {
        println!(
            "  read CPU time (thread on CPU), best round {best_cpu_s:.3} s => {:.1} M events/s",
            n as f64 / best_cpu_s / 1e6
        );
    }
    match (rss_before, hwm) {
        (Some(before), Some(hwm)) => println!(
            "  memory: VmRSS before reading {before} KiB, VmHWM during reading {hwm} KiB{} => reader peak ~{} KiB",
            if reset {
                " (high-water mark reset before reading)"
            } else {
                " (could not reset the high-water mark: it includes writing)"
            },
            hwm.saturating_sub(before)
        ),
        _ => println!("  memory: /proc/self/status not available"),
    }
    println!(
        "  I/O floor (reading the file alone), best of {rounds}: {:.3} s wall, {:.3} s CPU => {:.0} M events/s of CPU",
        floor.0,
        floor.1,
        n as f64 / floor.1 / 1e6
    );
    for (k, (wall, cpu, rss)) in pp_runs.iter().enumerate() {
        println!(
            "  the pp command (pp -l LOG), PP_THREADS={}, best of {rounds}: {wall:.3} s wall, {cpu:.3} s CPU => {:.1} M events/s of wall, {:.1} M of CPU; peak RSS of the children so far {rss} KiB",
            k + 1,
            n as f64 / wall / 1e6,
            n as f64 / cpu / 1e6,
        );
    }
    for (k, (best, caller)) in in_process.iter().zip(caller_cpu).enumerate() {
        println!(
            "  pp (read + attribute) in this process on {} thread(s), best of {rounds}: {best:.3} s wall => {:.1} M events/s; the calling thread's CPU {caller:.3} s => {:.1} M events/s",
            k + 1,
            n as f64 / best / 1e6,
            n as f64 / caller / 1e6,
        );
    }
    println!(
        "  peak of the first in-process round (1 thread): VmHWM {} KiB{}",
        profile_hwm.map_or("?".into(), |k| k.to_string()),
        if reset_again {
            ""
        } else {
            " (peak not reset: includes earlier rounds)"
        }
    );
}
