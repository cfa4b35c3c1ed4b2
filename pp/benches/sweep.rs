//! The attribution alone: a realistic log (see `tests/log_support`) is decoded into memory
//! first, then the sweep runs over the events; prints ns per event and events/s (best of
//! rounds). `PP_SWEEP_BENCH_EVENTS` (default 5·10⁶) sets the size.
//! Run: `cargo bench -p pp --bench sweep`.

#[path = "../tests/log_support/mod.rs"]
mod log_support;

use std::hint::black_box;
use std::time::Instant;

use pp::event::Symbols;
use pp::log::{BinaryWriter, LogReader};
use pp::profile::Sweep;

use test_support::setting;

fn main() {
    let target: u64 = setting("PP_SWEEP_BENCH_EVENTS", 5_000_000);
    let threads = 8;
    let header = log_support::header(threads);
    let mut writer = BinaryWriter::new(Vec::new(), &header).expect("header");
    let mut symbols = Symbols::default();
    log_support::realistic(threads, target, 4096, 1, &mut symbols, |th, evs, s| {
        writer.write_block(th, evs, s).expect("write a block");
    });
    let bytes = writer.finish().expect("finish");
    let reader = LogReader::from_bytes("bench", bytes).expect("a log");
    let symbols = reader.symbols().clone();
    let events: Vec<_> = reader.map(|e| e.expect("valid")).collect();

    let mut best = f64::INFINITY;
    for _ in 0..5 {
        let start = Instant::now();
        let mut sweep = Sweep::new(&header, None);
        for e in &events {
            sweep.event(e, &symbols);
        }
        black_box(sweep.finish(&symbols).expect("a window"));
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!(
        "sweep alone over {} events: best {:.3} s => {:.1} ns/event, {:.1} M events/s",
        events.len(),
        best,
        best * 1e9 / events.len() as f64,
        events.len() as f64 / best / 1e6
    );
}
