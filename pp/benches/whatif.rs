//! `pp whatif` on a realistic binary log (see `tests/log_support`: regions, barriers, locks,
//! 8 threads), on the identity and with the threads regrouped two by two onto 4 processors:
//! the whole of `pp whatif` ([`pp::whatif::run`]: the replay following the reading on a second
//! thread and encoding the predicted log's blocks as it goes), and its phases one after the
//! other (reading the log and its graph, the replay, writing the predicted log: copying the
//! blocks). Beside them the I/O floor: reading the file's bytes alone, and reading its
//! events alone ([`LogReader`]). Prints seconds and events/s of wall and of CPU (best of
//! rounds, the CPU time of every thread of the process) and the process's peak resident memory.
//! `PP_WHATIF_BENCH_EVENTS` (default 10⁷) sets the size, `PP_WHATIF_BENCH_ROUNDS` (default 3)
//! the rounds; with `PP_WHATIF_BENCH_KEEP=FILE` the log is kept there (for `/usr/bin/time -v pp
//! whatif FILE --group 0,1/2,3/4,5/6,7 --out OUT`; rounds 0 only writes it). Run: `cargo bench
//! -p pp --bench whatif`.

#[path = "../tests/log_support/mod.rs"]
mod log_support;

use std::hint::black_box;
use std::io::Read;
use std::time::Instant;

use pp::log::LogReader;
use pp::whatif::{MeasuredRun, Target, WhatifOptions, parse_groups, predict, write};

fn main() {
    let (path, _, kept) = log_support::bench_log("WHATIF");
    let rounds: usize = std::env::var("PP_WHATIF_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let out = std::env::temp_dir().join(format!("pp-whatif-bench-{}.out", std::process::id()));

    if rounds > 0 {
        // The I/O floor.
        let mut events = 0u64;
        let (bytes, wall, cpu) = best(rounds, || {
            let mut file = std::fs::File::open(&path).expect("the log");
            let mut buf = vec![0u8; 1 << 20];
            let mut bytes = 0u64;
            loop {
                let n = file.read(&mut buf).expect("the log's bytes");
                if n == 0 {
                    break bytes;
                }
                bytes += n as u64;
            }
        });
        println!(
            "I/O floor: reading the file's {bytes} bytes alone: best {wall:.3} s of wall, {cpu:.3} s of CPU"
        );
        let (_, wall, cpu) = best(rounds, || {
            let mut reader = LogReader::open(&path).expect("a log");
            events = 0;
            while let Some(e) = reader.next_event() {
                black_box(e.expect("an event"));
                events += 1;
            }
        });
        report("I/O floor: reading its events alone", events, wall, cpu);
    }

    let configurations = [
        ("identity", None, Target::default()),
        (
            "regrouped 0,1/2,3/4,5/6,7",
            Some("0,1/2,3/4,5/6,7"),
            Target {
                groups: parse_groups("0,1/2,3/4,5/6,7").expect("groups"),
                ..Target::default()
            },
        ),
    ];
    for (name, group, target) in configurations.iter().filter(|_| rounds > 0) {
        let options = WhatifOptions {
            log: path.clone(),
            group: group.map(str::to_string),
            out: out.clone(),
            force: true,
            ..WhatifOptions::default()
        };
        let (_, wall, cpu) = best(rounds, || {
            black_box(pp::whatif::run(&options).expect("pp whatif"));
        });
        let events = MeasuredRun::read(
            LogReader::open(&path).expect("a log"),
            "bench.log",
            &target.speeds,
        )
        .expect("a run")
        .events();
        report(&format!("{name}: pp whatif, whole"), events, wall, cpu);

        let (mut read, mut replay, mut written) = (f64::INFINITY, f64::INFINITY, f64::INFINITY);
        let mut walls = None;
        for _ in 0..rounds {
            let start = Instant::now();
            let reader = LogReader::open(&path).expect("a log");
            let run = MeasuredRun::read(reader, "bench.log", &target.speeds).expect("a run");
            let loaded = Instant::now();
            let prediction = predict(&run, target).expect("a replay");
            walls = Some(prediction.walls);
            let replayed = Instant::now();
            write::write(&run, &prediction, "--out", &out, true).expect("the predicted log");
            black_box(prediction);
            read = read.min((loaded - start).as_secs_f64());
            replay = replay.min((replayed - loaded).as_secs_f64());
            written = written.min(replayed.elapsed().as_secs_f64());
        }
        for (what, best) in [
            ("read and graph", read),
            ("replay", replay),
            ("write", written),
        ] {
            println!(
                "{name}: phase {what}, alone: best {best:.3} s of wall => {:.1} ns/event, {:.2} M events/s",
                best * 1e9 / events as f64,
                events as f64 / best / 1e6
            );
        }
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

/// The value of `f` and its best wall and CPU seconds over `rounds` calls.
fn best<T>(rounds: usize, mut f: impl FnMut() -> T) -> (T, f64, f64) {
    let (mut wall, mut cpu) = (f64::INFINITY, f64::INFINITY);
    let mut value = None;
    for _ in 0..rounds.max(1) {
        let (c, start) = (cpu_seconds(), Instant::now());
        value = Some(f());
        wall = wall.min(start.elapsed().as_secs_f64());
        cpu = cpu.min(cpu_seconds() - c);
    }
    (value.expect("a round"), wall, cpu)
}

/// One line: `events` in `wall` and `cpu` seconds, and the rates.
fn report(what: &str, events: u64, wall: f64, cpu: f64) {
    println!(
        "{what}: {events} events, best {wall:.3} s of wall ({:.2} M events/s), {cpu:.3} s of CPU ({:.2} M events/s of CPU)",
        events as f64 / wall / 1e6,
        events as f64 / cpu / 1e6
    );
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

/// The CPU time this process has used (all its threads), s.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
