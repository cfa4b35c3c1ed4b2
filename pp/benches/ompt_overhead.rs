//! The OMPT tool's overhead on an unmodified OpenMP program (issue 18, item 5).
//!
//! Compiles `examples/openmp/overhead.c` with `clang -O2 -fopenmp`, then runs it alternately
//! without and with the tool (`OMP_TOOL_LIBRARIES`, log to a temporary directory), at least 11
//! times each way, in three settings: an empty program (the tool's fixed cost per run: loading,
//! the clock's calibration, the log's last write), loops of chunks of 50 µs or more (the
//! overhead a real loop sees; target ≤ 2%) and 20,000 empty parallel regions (the run is mostly
//! events: the cost per event; LLVM 14's libomp reports no loop chunks, so events come from
//! regions, implicit tasks and barriers). Prints the minimum wall time each way, the overhead
//! in %, the events the log holds and `ns per event = (min instrumented − min plain) / events`,
//! then the last two with the fixed cost subtracted. Wall time is the program's whole run,
//! process start included; CPU time is the program's user + system time (`wait4`), less
//! disturbed by a loaded machine. A third, uninstrumented run in each round gives `A/A`: its minimum
//! against the first one's, the noise of the machine (an overhead below it is not resolved).
//!
//! Run: `cargo build --release -p pp-ompt && cargo bench -p pp --bench ompt_overhead`.
//! The tool is `$PP_OMPT_LIBRARY`, else `libpp_ompt.so` in `target/release` (or its `deps`).
//! `PP_OMPT_BENCH_RUNS` sets the runs each way (default 11, at least 11). Without clang or the
//! tool it prints `skipped: ...` and exits 0.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::Instant;

use pp::log::LogReader;
use test_support::{scratch, setting, skip};

/// One program setting: `WORK CHUNKS REGIONS` of overhead.c.
struct Setting {
    name: &'static str,
    work: u64,
    chunks: u64,
    regions: u64,
}

fn main() -> ExitCode {
    let runs: usize = setting("PP_OMPT_BENCH_RUNS", 11).max(11);
    let Some(tool) = find_tool() else {
        skip(
            "ompt_overhead",
            "no libpp_ompt.so in target/release (cargo build --release -p pp-ompt builds it; or set PP_OMPT_LIBRARY)",
        );
        return ExitCode::SUCCESS;
    };
    let dir = scratch("overhead");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/openmp/overhead.c");
    let program = dir.join("overhead");
    let built = Command::new("clang")
        .args(["-O2", "-fopenmp", "-o"])
        .arg(&program)
        .arg(&source)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        skip(
            "ompt_overhead",
            format!(
                "clang -O2 -fopenmp cannot build {} (tools/system-packages.sh installs it)",
                source.display()
            ),
        );
        let _ = std::fs::remove_dir_all(&dir);
        return ExitCode::SUCCESS;
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let settings = [
        Setting {
            name: "empty",
            work: 0,
            chunks: 1,
            regions: 1,
        },
        Setting {
            name: "chunks >= 50 us",
            work: 30_000,
            chunks: 100 * threads,
            regions: 40,
        },
        Setting {
            name: "many regions",
            work: 0,
            chunks: threads,
            regions: 20_000,
        },
    ];
    println!(
        "ompt_overhead: {threads} threads, {runs} runs each way alternating, tool {}",
        tool.display()
    );
    println!(
        "{:<16} {:>8} {:>8} {:>9} {:>9} {:>8} {:>9} {:>9} {:>8} {:>8}",
        "setting",
        "plain s",
        "tool s",
        "overhead",
        "cpu over",
        "events",
        "ns/event",
        "cpu ns/ev",
        "chunk us",
        "A/A"
    );
    let log = dir.join("run.log");
    let mut rows = Vec::new();
    for s in &settings {
        let args = [s.work, s.chunks, s.regions].map(|a| a.to_string());
        let (mut plain, mut tooled, mut again) = (Min::default(), Min::default(), Min::default());
        for _ in 0..runs {
            plain.add(run(&program, &args, None));
            let _ = std::fs::remove_file(&log);
            tooled.add(run(&program, &args, Some((&tool, &log))));
            again.add(run(&program, &args, None));
        }
        let events = match LogReader::open(&log) {
            Ok(reader) => reader.filter(|e| e.is_ok()).count() as f64,
            Err(e) => {
                eprintln!("ompt_overhead: the tool wrote no readable log ({e})");
                return ExitCode::FAILURE;
            }
        };
        let (p, i) = (plain.wall, tooled.wall);
        let chunk_us = p * threads as f64 / (s.chunks * s.regions) as f64 * 1e6;
        println!(
            "{:<16} {:>8.4} {:>8.4} {:>+8.2}% {:>+8.2}% {:>8} {:>9.0} {:>9.0} {:>8.1} {:>+7.2}%",
            s.name,
            p,
            i,
            (i - p) / p * 100.0,
            (tooled.cpu - plain.cpu) / plain.cpu * 100.0,
            events,
            (i - p) * 1e9 / events.max(1.0),
            (tooled.cpu - plain.cpu) * 1e9 / events.max(1.0),
            chunk_us,
            (again.wall - p) / p * 100.0
        );
        rows.push((plain, tooled, events));
    }
    // The fixed cost of a run (loading the tool, the clock's calibration, the log's last
    // write), and what remains once it is subtracted.
    let fixed = Min {
        wall: rows[0].1.wall - rows[0].0.wall,
        cpu: rows[0].1.cpu - rows[0].0.cpu,
    };
    let (p, i, _) = &rows[1];
    let (mp, mi, me) = &rows[2];
    let me = (me - rows[0].2).max(1.0);
    println!(
        "fixed cost per run: {:.2} ms wall, {:.2} ms cpu; without it, chunks >= 50 us: {:+.2}% wall, {:+.2}% cpu; many regions: {:.0} ns wall, {:.0} ns cpu per event",
        fixed.wall * 1e3,
        fixed.cpu * 1e3,
        (i.wall - p.wall - fixed.wall) / p.wall * 100.0,
        (i.cpu - p.cpu - fixed.cpu) / p.cpu * 100.0,
        (mi.wall - mp.wall - fixed.wall) * 1e9 / me,
        (mi.cpu - mp.cpu - fixed.cpu) * 1e9 / me,
    );
    let _ = std::fs::remove_dir_all(&dir);
    ExitCode::SUCCESS
}

/// The least wall and CPU time (user + system, all threads) over some runs, in seconds.
#[derive(Clone, Copy)]
struct Min {
    wall: f64,
    cpu: f64,
}

impl Default for Min {
    fn default() -> Self {
        Min {
            wall: f64::INFINITY,
            cpu: f64::INFINITY,
        }
    }
}

impl Min {
    fn add(&mut self, run: Min) {
        self.wall = self.wall.min(run.wall);
        self.cpu = self.cpu.min(run.cpu);
    }
}

/// One run's wall and CPU time; with `tool`, the tool loaded and the log written to its path.
fn run(program: &Path, args: &[String], tool: Option<(&Path, &Path)>) -> Min {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdout(Stdio::null())
        .env_remove("OMP_TOOL_LIBRARIES")
        .env_remove("PP_PARAMS");
    if let Some((tool, log)) = tool {
        command
            .env("OMP_TOOL_LIBRARIES", tool)
            .env("OMP_TOOL", "enabled")
            .env("PP_LOG", log);
    }
    let start = Instant::now();
    // Reaped by wait4 below, which gives its resource usage as `Child::wait` does not.
    #[allow(clippy::zombie_processes)]
    let child = command.spawn().expect("the benchmark program starts");
    let mut status = 0;
    // SAFETY: wait4 on our own child, with valid pointers to locals.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    let wall = start.elapsed().as_secs_f64();
    assert!(
        reaped > 0 && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{} failed (wait status {status})",
        program.display()
    );
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    Min {
        wall,
        cpu: seconds(usage.ru_utime) + seconds(usage.ru_stime),
    }
}

/// `$PP_OMPT_LIBRARY`, else `libpp_ompt.so` in the release directory this bench runs from
/// (`target/release/deps/ompt_overhead-*`), or in its `deps`.
fn find_tool() -> Option<PathBuf> {
    if let Some(given) = std::env::var_os("PP_OMPT_LIBRARY").filter(|v| !v.is_empty()) {
        return std::fs::canonicalize(given).ok();
    }
    let exe = std::env::current_exe().ok()?;
    let deps = exe.parent()?;
    [
        deps.parent()?.join("libpp_ompt.so"),
        deps.join("libpp_ompt.so"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}
