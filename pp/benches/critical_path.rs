//! The critical path of a realistic binary log (see `tests/log_support`: regions, barriers,
//! locks, 8 threads): `pp critical-path`'s whole pass (decode, attribution, graph, path,
//! make-up) and the graph and path alone (decode, graph, path); prints seconds and events/s
//! (best of rounds). `PP_CRITICAL_BENCH_EVENTS` (default 10⁷) sets the size; with
//! `PP_CRITICAL_BENCH_KEEP=FILE` the log is kept there (for `/usr/bin/time -v pp
//! critical-path FILE`). Run: `cargo bench -p pp --bench critical_path`.

#[path = "../tests/log_support/mod.rs"]
mod log_support;

use std::hint::black_box;
use std::time::Instant;

use pp::graph::report::Report;
use pp::graph::{Builder, CriticalPath};
use pp::log::LogReader;

fn main() {
    let (path, header, kept) = log_support::bench_log("CRITICAL");

    let mut events = 0;
    let mut best_graph = f64::INFINITY;
    for _ in 0..3 {
        let start = Instant::now();
        let mut reader = LogReader::open(&path).expect("a log");
        let mut builder = Builder::new(&header);
        reader
            .for_each_event(|e, s| builder.event(e, s))
            .expect("valid");
        let graph = builder.finish();
        events = graph.events();
        black_box(CriticalPath::of(&graph));
        best_graph = best_graph.min(start.elapsed().as_secs_f64());
    }
    let mut best_all = f64::INFINITY;
    let mut length = 0;
    for _ in 0..3 {
        let start = Instant::now();
        let report = Report::read(&path).expect("a report");
        length = report.path.length();
        black_box(report);
        best_all = best_all.min(start.elapsed().as_secs_f64());
    }
    for (what, best) in [
        ("graph and path alone", best_graph),
        ("pp critical-path's pass", best_all),
    ] {
        println!(
            "{what} over {events} events: best {best:.3} s => {:.1} ns/event, {:.2} M events/s",
            best * 1e9 / events as f64,
            events as f64 / best / 1e6
        );
    }
    println!("(critical path {length} ns)");
    if !kept {
        let _ = std::fs::remove_file(&path);
    }
}
