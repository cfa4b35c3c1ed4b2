//! Recorder overhead: `cargo bench -p pp --bench recorder`.
//!
//! 1. Cost per event: 10⁶ `work` begin/end pairs on one thread, timed per batch of 1000 pairs
//!    (2000 events, timestamps included); median, p99 and mean (the mean includes the buffer
//!    flushes), for each clock source and for an unregistered thread.
//! 2. Slowdown of a realistic loop: a rayon-based parallel loop of ~20 µs tasks on a team of
//!    `available_parallelism` threads, recorded vs the same code with no session vs plain rayon
//!    (`par_iter`); runs alternate, the median ratio over the repetitions is reported.
//! 3. Throughput and memory (`threads`): 10⁷ events (work begin/end pairs) on each of 1 and 2
//!    threads at once, the whole run timed including the flushes and `finish` (ns per event
//!    per thread), and the process's peak resident set during the run (`VmHWM`, reset before
//!    each run through `/proc/self/clear_refs`), with the process's CPU time per event (user
//!    and system, which a loaded machine inflates less than the wall time). Run it with `PP_CRASH_SAFE=0` for the
//!    buffers on the heap instead of the crash-safe mapped ones (docs/event-log.md).
//! 4. Locks (`locks`): an uncontended lock and unlock of a recorded `sync::Mutex` on a
//!    recording thread against `std::sync::Mutex`, batches of 1000, median and p99. Run it
//!    again with `PP_LOCKS=every` for the cost of recording every acquisition.

use std::hint::black_box;
use std::time::{Duration, Instant};

use pp_recorder::{self as recorder, ClockSource, Session, Team};
use rayon::prelude::*;

fn quantile(sorted: &[f64], q: f64) -> f64 {
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// ns per event of `batches` batches of 1000 work pairs on the calling thread.
fn event_cost(batches: usize) -> Vec<f64> {
    let mut per_event = Vec::with_capacity(batches);
    for _ in 0..batches {
        let t = Instant::now();
        for _ in 0..1000 {
            let _w = recorder::work(None);
        }
        per_event.push(t.elapsed().as_nanos() as f64 / 2000.0);
    }
    per_event
}

fn report_cost(what: &str, mut v: Vec<f64>) -> f64 {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    v.sort_by(f64::total_cmp);
    let median = quantile(&v, 0.5);
    println!(
        "  {what:<28} median {median:6.1} ns   p99 {:6.1} ns   mean {mean:6.1} ns",
        quantile(&v, 0.99)
    );
    median
}

fn bench_event_cost(dir: &std::path::Path) {
    println!("recorder cost per event (10^6 work_begin/work_end pairs, batches of 1000 pairs):");
    for source in [ClockSource::detect(), ClockSource::Monotonic] {
        let session = Session::builder(1)
            .path(dir.join("cost.log"))
            .clock(source)
            .start()
            .unwrap();
        recorder::thread_start(0);
        event_cost(50); // warm up
        let v = event_cost(1000);
        recorder::thread_stop();
        let report = session.finish().unwrap();
        let bytes = std::fs::metadata(&report.path).map_or(0, |m| m.len());
        report_cost(&format!("clock {}", source.as_str()), v);
        println!(
            "  {:<28} {} events, {:.1} bytes/event in the log",
            "",
            report.events,
            bytes as f64 / report.events as f64
        );
        if source == ClockSource::Monotonic {
            break;
        }
    }
    report_cost("no session (unregistered)", event_cost(1000));
}

/// About `iters` dependent multiply-adds.
fn spin(iters: u64) -> u64 {
    let mut x = 1u64;
    for i in 0..iters {
        x = black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
    }
    x
}

/// Iterations of [`spin`] that take about `d`.
fn calibrate(d: Duration) -> u64 {
    let n = 1_000_000;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let t = Instant::now();
        black_box(spin(n));
        best = best.min(t.elapsed().as_secs_f64());
    }
    (n as f64 * d.as_secs_f64() / best) as u64
}

fn bench_slowdown(dir: &std::path::Path) {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let task = calibrate(Duration::from_micros(20));
    let tasks = 20_000;
    let reps = 11;
    println!(
        "\nslowdown of a parallel loop ({tasks} tasks of ~20 µs, {threads} threads, {reps} alternating repetitions):"
    );
    let team = Team::new(threads).unwrap();
    let plain = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let run_team = |team: &Team| {
        let t = Instant::now();
        team.parallel_for("loop", 0..tasks, 1, |i| {
            black_box(spin(task + (i as u64 & 1)));
        });
        t.elapsed().as_secs_f64()
    };
    let run_plain = || {
        let t = Instant::now();
        plain.install(|| {
            (0..tasks).into_par_iter().for_each(|i| {
                black_box(spin(task + (i as u64 & 1)));
            })
        });
        t.elapsed().as_secs_f64()
    };
    // Warm up all three.
    run_plain();
    run_team(&team);
    let (mut rec, mut off, mut raw) = (Vec::new(), Vec::new(), Vec::new());
    let mut events = 0;
    for _ in 0..reps {
        raw.push(run_plain());
        off.push(run_team(&team));
        let session = Session::builder(threads as u32)
            .path(dir.join("loop.log"))
            .start()
            .unwrap();
        rec.push(run_team(&team));
        events = session.finish().unwrap().events;
    }
    let ratios = |a: &[f64], b: &[f64]| {
        let mut r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
        r.sort_by(f64::total_cmp);
        r
    };
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        quantile(&v, 0.5)
    };
    println!(
        "  median wall: recorded {:.1} ms, team without session {:.1} ms, plain rayon {:.1} ms ({events} events per recorded run)",
        median(&rec) * 1e3,
        median(&off) * 1e3,
        median(&raw) * 1e3
    );
    let r1 = ratios(&rec, &off);
    let r2 = ratios(&rec, &raw);
    println!(
        "  recorded / same code without session: median {:+.2}%  (range {:+.2}% .. {:+.2}%)",
        (quantile(&r1, 0.5) - 1.0) * 100.0,
        (r1[0] - 1.0) * 100.0,
        (r1[r1.len() - 1] - 1.0) * 100.0
    );
    println!(
        "  recorded / plain rayon par_iter:      median {:+.2}%  (range {:+.2}% .. {:+.2}%)",
        (quantile(&r2, 0.5) - 1.0) * 100.0,
        (r2[0] - 1.0) * 100.0,
        (r2[r2.len() - 1] - 1.0) * 100.0
    );
}

/// The process's CPU time (user + system) in seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes only the zeroed struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    s(u.ru_utime) + s(u.ru_stime)
}

/// The process's peak resident set in KiB since the last reset (`VmHWM`), where Linux says it.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn bench_threads(dir: &std::path::Path) {
    const EVENTS: u64 = 10_000_000;
    println!(
        "\nthroughput: 10^7 events (work pairs) per thread, whole run incl. flushes and finish, median of 5:"
    );
    for threads in [1u32, 2] {
        let mut per_event = Vec::new();
        let mut cpu_per_event = Vec::new();
        let mut peak = 0;
        let mut bytes = 0;
        for _ in 0..5 {
            let _ = std::fs::write("/proc/self/clear_refs", "5");
            let session = Session::builder(threads)
                .path(dir.join("threads.log"))
                .start()
                .unwrap();
            let t = Instant::now();
            let cpu = cpu_seconds();
            std::thread::scope(|s| {
                for id in 0..threads {
                    s.spawn(move || {
                        recorder::thread_start(id);
                        for _ in 0..EVENTS / 2 {
                            let _w = recorder::work(None);
                        }
                        recorder::thread_stop();
                    });
                }
            });
            let report = session.finish().unwrap();
            per_event.push(t.elapsed().as_nanos() as f64 / EVENTS as f64);
            cpu_per_event.push((cpu_seconds() - cpu) * 1e9 / (EVENTS as f64 * f64::from(threads)));
            peak = peak.max(peak_rss_kib().unwrap_or(0));
            bytes = std::fs::metadata(&report.path).map_or(0, |m| m.len());
        }
        per_event.sort_by(f64::total_cmp);
        cpu_per_event.sort_by(f64::total_cmp);
        println!(
            "  {threads} thread(s): median {:6.2} ns/event/thread wall (range {:.2} .. {:.2}), {:.2} ns CPU/event, peak RSS {:.1} MiB, log {:.1} MB",
            quantile(&per_event, 0.5),
            per_event[0],
            per_event[per_event.len() - 1],
            quantile(&cpu_per_event, 0.5),
            peak as f64 / 1024.0,
            bytes as f64 / 1e6
        );
    }
}

/// ns per uncontended lock and unlock of `lock`, batches of 1000.
fn lock_cost(batches: usize, lock: impl Fn()) -> Vec<f64> {
    (0..batches)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..1000 {
                lock();
            }
            t.elapsed().as_nanos() as f64 / 1000.0
        })
        .collect()
}

fn bench_locks(dir: &std::path::Path) {
    let mode = std::env::var("PP_LOCKS").unwrap_or_else(|_| "unset".into());
    println!("uncontended lock and unlock (10^6, batches of 1000; PP_LOCKS={mode}):");
    let session = Session::builder(1)
        .path(dir.join("locks.log"))
        .start()
        .unwrap();
    recorder::thread_start(0);
    let recorded = recorder::sync::Mutex::named("bench", 0u64);
    let plain = std::sync::Mutex::new(0u64);
    let take_recorded = || *recorded.lock().unwrap() += 1;
    let take_plain = || *plain.lock().unwrap() += 1;
    lock_cost(50, take_recorded);
    lock_cost(50, take_plain);
    report_cost("pp_recorder::sync::Mutex", lock_cost(1000, take_recorded));
    report_cost("std::sync::Mutex", lock_cost(1000, take_plain));
    recorder::thread_stop();
    session.finish().unwrap();
}

fn main() {
    // `cargo test --benches` runs benches with `--test`: keep that quick.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    // `cargo bench -p pp --bench recorder -- cost` (or `loop`) runs one part.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let wanted = |part: &str| only.is_empty() || only.iter().any(|a| a == part);
    let dir = test_support::scratch("logs");
    if wanted("cost") {
        bench_event_cost(&dir);
    }
    if wanted("loop") {
        bench_slowdown(&dir);
    }
    if wanted("threads") {
        bench_threads(&dir);
    }
    if wanted("locks") {
        bench_locks(&dir);
    }
    let _ = std::fs::remove_dir_all(dir);
}
