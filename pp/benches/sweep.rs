//! The attribution alone: a realistic log (see `tests/log_support`) is decoded into memory
//! first, then the sweep runs over the events; prints ns per event and events/s (best of
//! rounds). `PP_SWEEP_BENCH_EVENTS` (default 5·10⁶) sets the size.
//!
//! Then it counts which of the log's events meet other threads and which a per-thread pass
//! could take alone (docs/event-log.md#reading-on-several-cores); `PP_SWEEP_BENCH_LOG=FILE`
//! counts those of `FILE` too (a log of `pp run`, say).
//! Run: `cargo bench -p pp --bench sweep`.

#[path = "../tests/log_support/mod.rs"]
mod log_support;

use std::hint::black_box;
use std::time::Instant;

use pp::event::{EventKind, Symbols, WaitKind};
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
    let mut reader = LogReader::from_bytes("bench", bytes.clone()).expect("a log");
    let generated = classes(&mut reader);
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
    print_classes("the bench's log", &generated);
    if let Some(path) = std::env::var_os("PP_SWEEP_BENCH_LOG") {
        let path = std::path::PathBuf::from(path);
        let mut log = LogReader::open(&path).expect("PP_SWEEP_BENCH_LOG: a log");
        print_classes(&path.display().to_string(), &classes(&mut log));
    }
}

/// Which events of a log a per-thread pass could take alone and which must meet other
/// threads' in time order (docs/event-log.md#reading-on-several-cores), counted over the
/// merged stream with each thread's own nesting replayed. The first class that applies:
const CLASSES: [&str; 10] = [
    "start/stop (the window, teams' live members)",
    "region_begin/end (teams, contexts)",
    "first event since another thread's fork",
    "barrier wait begin/end (last arrival)",
    "recv, release, wait_end by= (partners)",
    "begin/end in a region flipping busy or active (team busy, all idle)",
    "cpu sample (own rc bookkeeping)",
    "begin/end keeping busy and active (own category)",
    "send (read at its receive)",
    "phase, coll (own context or nothing)",
];
/// Classes before this one meet other threads.
const FIRST_LOCAL: usize = 6;

fn classes(log: &mut LogReader) -> [u64; CLASSES.len()] {
    let p = log.header().p as usize;
    // Per thread: open intervals (true: work or comm), live, waiting for its first event
    // since a fork, open regions whose team includes it.
    let mut stacks: Vec<Vec<bool>> = vec![Vec::new(); p];
    let mut live = vec![false; p];
    let mut forked = vec![false; p];
    let mut in_regions = vec![0u32; p];
    let mut open: Vec<(u64, Vec<usize>)> = Vec::new();
    let mut counts = [0u64; CLASSES.len()];
    log.for_each_event(|e, symbols| {
        let i = e.thread as usize;
        if i >= p {
            return;
        }
        let was = (
            live[i] && !stacks[i].is_empty(),
            stacks[i].last() == Some(&true),
        );
        let class = match e.kind {
            EventKind::Start | EventKind::Stop => {
                live[i] = e.kind == EventKind::Start;
                0
            }
            EventKind::RegionBegin { id, team, .. } => {
                if !open.iter().any(|r| r.0 == id) {
                    let members: Vec<usize> = match team.and_then(|t| symbols.get_team(t)) {
                        Some(team) => team
                            .iter()
                            .map(|&m| m as usize)
                            .filter(|&m| m < p)
                            .collect(),
                        None => (0..p).collect(),
                    };
                    for &m in &members {
                        in_regions[m] += 1;
                        forked[m] |= m != i;
                    }
                    open.push((id, members));
                }
                1
            }
            EventKind::RegionEnd { id } => {
                if let Some(at) = open.iter().position(|r| r.0 == id) {
                    for &m in &open[at].1 {
                        in_regions[m] -= 1;
                    }
                    open.remove(at);
                }
                1
            }
            _ if forked[i] => 2,
            EventKind::WaitBegin {
                kind: WaitKind::Barrier,
                ..
            }
            | EventKind::WaitEnd {
                kind: WaitKind::Barrier,
                ..
            } => 3,
            EventKind::Recv { .. } | EventKind::Release { .. } => 4,
            EventKind::WaitEnd { by: Some(_), .. } => 4,
            EventKind::Cpu { .. } => 6,
            EventKind::Send { .. } => 8,
            EventKind::Phase { .. } | EventKind::Coll { .. } => 9,
            _ => 7,
        };
        match e.kind {
            EventKind::WorkBegin { .. } | EventKind::CommBegin { .. } => stacks[i].push(true),
            EventKind::WaitBegin { .. } => stacks[i].push(false),
            EventKind::WorkEnd { .. } | EventKind::CommEnd { .. } | EventKind::WaitEnd { .. } => {
                stacks[i].pop();
            }
            _ => {}
        }
        let now = (
            live[i] && !stacks[i].is_empty(),
            stacks[i].last() == Some(&true),
        );
        // Busy and active counts are kept per region: outside regions nobody reads them.
        let class = if class == 7 && now != was && in_regions[i] > 0 {
            5
        } else {
            class
        };
        forked[i] = false;
        counts[class] += 1;
    })
    .expect("a readable log");
    counts
}

fn print_classes(name: &str, counts: &[u64; CLASSES.len()]) {
    let all: u64 = counts.iter().sum();
    let local: u64 = counts[FIRST_LOCAL..].iter().sum();
    println!(
        "{name}: {all} events, {:.1}% meet other threads, {:.1}% a per-thread pass takes alone",
        100.0 * (all - local) as f64 / all as f64,
        100.0 * local as f64 / all as f64
    );
    for (class, n) in CLASSES.iter().zip(counts) {
        if *n > 0 {
            println!(
                "  {:5.1}%  {n:>10}  {class}",
                100.0 * *n as f64 / all as f64
            );
        }
    }
}
