//! `pp whatif` on a realistic binary log (see `tests/log_support`: regions, barriers, locks,
//! 8 threads): reading the log and its graph, the replay, and writing the predicted log, on
//! the identity and with the threads regrouped two by two onto 4 processors; prints seconds
//! and events/s (best of rounds) and the process's peak resident memory. `PP_WHATIF_BENCH_EVENTS`
//! (default 10⁷) sets the size, `PP_WHATIF_BENCH_ROUNDS` (default 3) the rounds; with
//! `PP_WHATIF_BENCH_KEEP=FILE` the log is kept there (for `/usr/bin/time -v pp whatif FILE
//! --group 0,1/2,3/4,5/6,7 --out OUT`; rounds 0 only writes it). Run: `cargo bench -p pp
//! --bench whatif`.

#[path = "../tests/log_support/mod.rs"]
mod log_support;

use std::hint::black_box;
use std::time::Instant;

use pp::log::LogReader;
use pp::whatif::{MeasuredRun, Target, parse_groups, predict, write};

fn main() {
    let (path, _, kept) = log_support::bench_log("WHATIF");
    let rounds: usize = std::env::var("PP_WHATIF_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let out = std::env::temp_dir().join(format!("pp-whatif-bench-{}.out", std::process::id()));

    let configurations = [
        ("identity", Target::default()),
        (
            "regrouped 0,1/2,3/4,5/6,7",
            Target {
                groups: parse_groups("0,1/2,3/4,5/6,7").expect("groups"),
                ..Target::default()
            },
        ),
    ];
    for (name, target) in configurations.iter().filter(|_| rounds > 0) {
        let (mut read, mut replay, mut written) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
        let mut events = 0;
        let mut walls = None;
        let mut cpu = f64::INFINITY;
        for _ in 0..rounds {
            let cpu_start = cpu_seconds();
            let start = Instant::now();
            let reader = LogReader::open(&path).expect("a log");
            let run = MeasuredRun::read(reader, "bench.log", &target.speeds).expect("a run");
            events = run.events();
            let loaded = Instant::now();
            let prediction = predict(&run, target).expect("a replay");
            walls = Some(prediction.walls);
            let replayed = Instant::now();
            write::write(&run, &prediction, &out, true).expect("the predicted log");
            black_box(prediction);
            read = read.min((loaded - start).as_secs_f64());
            replay = replay.min((replayed - loaded).as_secs_f64());
            written = written.min(replayed.elapsed().as_secs_f64());
            cpu = cpu.min(cpu_seconds() - cpu_start);
        }
        for (what, best) in [
            ("read and graph", read),
            ("replay", replay),
            ("write", written),
            ("whole", read + replay + written),
        ] {
            println!(
                "{name}: {what} over {events} events: best {best:.3} s => {:.1} ns/event, {:.2} M events/s",
                best * 1e9 / events as f64,
                events as f64 / best / 1e6
            );
        }
        // On a shared machine the wall depends on the load; the CPU time much less.
        println!(
            "{name}: CPU time of the whole, best {cpu:.3} s => {:.2} M events/s of CPU",
            events as f64 / cpu / 1e6
        );
        if let Some(w) = walls {
            println!(
                "{name}: measured wall {} ns, predicted {} ns",
                w.measured, w.predicted
            );
        }
        println!("{name}: peak resident memory so far {}", peak_rss());
    }
    let _ = std::fs::remove_file(&out);
    if !kept {
        let _ = std::fs::remove_file(&path);
    }
}

/// The process's peak resident memory (`VmHWM` of /proc/self/status), as that file says it.
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:").map(|v| v.trim().to_string()))
        })
        .unwrap_or_else(|| "unknown".to_string())
}

/// The CPU time this process has used, s.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
