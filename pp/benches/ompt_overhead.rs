//! The OMPT tool's overhead on an unmodified OpenMP program (issue 18, item 5).
//!
//! Compiles `examples/openmp/overhead.c` with `clang -O2 -fopenmp`, then runs it alternately
//! without and with the tool (`OMP_TOOL_LIBRARIES`, log to a temporary directory), at least 11
//! times each way, in two settings: chunks of 50 µs or more (the overhead a real loop sees;
//! target ≤ 2%) and tiny chunks (the run is mostly events: the cost per event). Prints the
//! minimum wall time each way, the overhead in %, the events the log holds and
//! `ns per event = (min instrumented − min plain) / events`. Wall time is the program's whole
//! run, process start and the log's last write included.
//!
//! Run: `cargo build --release -p pp-ompt && cargo bench -p pp --bench ompt_overhead`.
//! The tool is `$PP_OMPT_LIBRARY`, else `libpp_ompt.so` in `target/release` (or its `deps`).
//! `PP_OMPT_BENCH_RUNS` sets the runs each way (default 11, at least 11). Without clang or the
//! tool it prints `skipped: ...` and exits 0.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use pp::log::LogReader;

/// One program setting: `WORK CHUNKS REGIONS` of overhead.c.
struct Setting {
    name: &'static str,
    work: u64,
    chunks: u64,
    regions: u64,
}

fn main() -> ExitCode {
    let runs: usize = std::env::var("PP_OMPT_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(11)
        .max(11);
    let Some(tool) = find_tool() else {
        eprintln!(
            "skipped: ompt_overhead: no libpp_ompt.so in target/release (cargo build --release -p pp-ompt builds it; or set PP_OMPT_LIBRARY)"
        );
        return ExitCode::SUCCESS;
    };
    let dir = std::env::temp_dir().join(format!("pp-ompt-overhead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/openmp/overhead.c");
    let program = dir.join("overhead");
    let built = Command::new("clang")
        .args(["-O2", "-fopenmp", "-o"])
        .arg(&program)
        .arg(&source)
        .status();
    if !built.is_ok_and(|s| s.success()) {
        eprintln!(
            "skipped: ompt_overhead: clang -O2 -fopenmp cannot build {} (tools/system-packages.sh installs it)",
            source.display()
        );
        let _ = std::fs::remove_dir_all(&dir);
        return ExitCode::SUCCESS;
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let settings = [
        Setting {
            name: "chunks >= 50 us",
            work: 30_000,
            chunks: 250 * threads,
            regions: 4,
        },
        Setting {
            name: "tiny chunks",
            work: 1,
            chunks: 20_000,
            regions: 20,
        },
    ];
    println!(
        "ompt_overhead: {} threads, {runs} runs each way alternating, tool {}",
        threads,
        tool.display()
    );
    println!(
        "{:<16} {:>10} {:>10} {:>9} {:>10} {:>9} {:>10}",
        "setting", "plain s", "tool s", "overhead", "events", "ns/event", "chunk us"
    );
    let log = dir.join("run.log");
    for s in &settings {
        let args = [s.work, s.chunks, s.regions].map(|a| a.to_string());
        let mut plain = Duration::MAX;
        let mut instrumented = Duration::MAX;
        for _ in 0..runs {
            plain = plain.min(time(&program, &args, None));
            let _ = std::fs::remove_file(&log);
            instrumented = instrumented.min(time(&program, &args, Some((&tool, &log))));
        }
        let events = match LogReader::open(&log) {
            Ok(reader) => reader.filter(|e| e.is_ok()).count(),
            Err(e) => {
                eprintln!("ompt_overhead: the tool wrote no readable log ({e})");
                return ExitCode::FAILURE;
            }
        };
        let (p, i) = (plain.as_secs_f64(), instrumented.as_secs_f64());
        let chunk_us = p * threads as f64 / (s.chunks * s.regions) as f64 * 1e6;
        println!(
            "{:<16} {:>10.4} {:>10.4} {:>+8.2}% {:>10} {:>9.1} {:>10.1}",
            s.name,
            p,
            i,
            (i - p) / p * 100.0,
            events,
            (i - p) * 1e9 / events.max(1) as f64,
            chunk_us
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    ExitCode::SUCCESS
}

/// The wall time of one run; with `tool`, the tool loaded and the log written to its path.
fn time(program: &Path, args: &[String], tool: Option<(&Path, &Path)>) -> Duration {
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
    let status = command.status().expect("the benchmark program runs");
    let wall = start.elapsed();
    assert!(status.success(), "{} failed: {status}", program.display());
    wall
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
