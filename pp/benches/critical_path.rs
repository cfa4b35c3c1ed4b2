//! The critical path of a realistic binary log (see `tests/log_support`: regions, barriers,
//! locks, 8 threads) beside its floors: reading the file alone (the I/O floor) and decoding
//! its events alone; the compact graph and the path alone (decode, graph, walk back),
//! `pp critical-path`'s whole pass in this process (decode, attribution, graph, path,
//! make-up; best of rounds), and the `pp critical-path` command once, with its peak resident
//! memory (`getrusage` of the child); prints seconds, events/s and bytes per event.
//! `PP_CRITICAL_BENCH_EVENTS` (default 10⁷) sets the size; with `PP_CRITICAL_BENCH_KEEP=FILE`
//! the log is kept there. `PP_CRITICAL_BENCH_ROUNDS` (default 3) sets the rounds (0: the
//! command alone, for logs of 10⁹ events). Run:
//! `cargo bench -p pp --bench critical_path`.

#[path = "../tests/log_support/mod.rs"]
mod log_support;

use std::hint::black_box;
use std::time::Instant;

use pp::graph::report::Report;
use pp::graph::{Builder, CriticalPath};
use pp::log::LogReader;

/// The largest peak resident set of a waited-for child, KiB.
fn children_peak_kib() -> i64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) };
    usage.ru_maxrss
}

fn main() {
    let (path, header, kept) = log_support::bench_log("CRITICAL");
    let rounds: u32 = test_support::setting("PP_CRITICAL_BENCH_ROUNDS", 3);

    let mut events = 0;
    let mut best_io = f64::INFINITY;
    let mut best_decode = f64::INFINITY;
    for _ in 0..rounds {
        let start = Instant::now();
        let mut file = std::fs::File::open(&path).expect("the log");
        let mut buf = vec![0u8; 1 << 20];
        let mut bytes = 0;
        loop {
            let n = std::io::Read::read(&mut file, &mut buf).expect("read the log");
            if n == 0 {
                break;
            }
            bytes += n;
        }
        black_box(bytes);
        best_io = best_io.min(start.elapsed().as_secs_f64());
        let start = Instant::now();
        let mut reader = LogReader::open(&path).expect("a log");
        let mut n = 0u64;
        reader.for_each_event(|_, _| n += 1).expect("valid");
        black_box(n);
        best_decode = best_decode.min(start.elapsed().as_secs_f64());
    }
    let mut best_graph = f64::INFINITY;
    for _ in 0..rounds {
        let start = Instant::now();
        let mut reader = LogReader::open(&path).expect("a log");
        let mut builder = Builder::compact(&header);
        reader
            .for_each_event(|e, s| builder.event(e, s))
            .expect("valid");
        let mut graph = builder.finish_path();
        events = graph.events();
        black_box(CriticalPath::walk(&mut graph).expect("records"));
        best_graph = best_graph.min(start.elapsed().as_secs_f64());
    }
    let mut best_all = f64::INFINITY;
    let mut length = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        let report = Report::read(&path).expect("a report");
        length = report.path.length();
        black_box(report);
        best_all = best_all.min(start.elapsed().as_secs_f64());
    }
    let start = Instant::now();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pp"))
        .arg("critical-path")
        .arg(&path)
        .output()
        .expect("run pp");
    let command = start.elapsed().as_secs_f64();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let peak = children_peak_kib();
    let text = String::from_utf8_lossy(&out.stdout);
    events = text
        .lines()
        .find_map(|l| l.split(" events, remote arcs").next()?.parse().ok())
        .unwrap_or(events);
    for (what, best) in [
        ("reading the file alone (the I/O floor)", best_io),
        ("decoding the events alone", best_decode),
        ("graph and path alone", best_graph),
        ("pp critical-path's pass", best_all),
        ("the pp critical-path command (once)", command),
    ] {
        if !best.is_finite() {
            continue;
        }
        println!(
            "{what} over {events} events: {best:.3} s => {:.1} ns/event, {:.2} M events/s",
            best * 1e9 / events as f64,
            events as f64 / best / 1e6
        );
    }
    println!(
        "the command's peak resident set: {peak} KiB ({:.2} bytes/event)",
        peak as f64 * 1024.0 / events as f64
    );
    println!("(critical path {length} ns)");
    if !kept {
        let _ = std::fs::remove_file(&path);
    }
}
