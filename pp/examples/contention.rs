//! The contention example: resource contention on purpose, to show what a machine file and
//! the CPU clock samples measure (issue 4 of the toolkit).
//!
//! ```text
//! cargo run --release -p pp -- calibrate                       # once: ~/.config/pp/machine.toml
//! cargo run --release -p pp --example contention -- -p 4      # writes $PP_LOG or ./pp.log
//! cargo run --release -p pp -- --by phase                     # rc.comm and rc.cpu per phase
//! ```
//!
//! | phase   | what the threads do                                          | shows as |
//! |---------|--------------------------------------------------------------|----------|
//! | `copy1` | thread 0 copies a large buffer again and again, alone         | `cl`: the copy takes its calibrated time |
//! | `copy2` | threads 0 and 1 copy at the same time (memory bandwidth)      | `rc.comm`: beyond the single-thread time |
//! | `busy`  | `p` threads share a fixed amount of computation               | `rc.cpu` once `p` exceeds the cores |
//!
//! Run it for p = 1, 2, 4, 8 and append `pp -l` rows to a datafile: `lca datafile --var p
//! --cat rc` then finds resource contention growing linearly past a threshold at the number
//! of cores, `max(p-$theta,0)`, as the paper's KSR1 did. (With total work W shared by p
//! threads on c cores, each thread works W/c of wall time but runs only W/p of it, so the
//! unbacked time is p·(W/c − W/p) = (W/c)·(p − c).)

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;
use std::process::ExitCode;

use pp_recorder::{self as recorder, Session, Team};
use support::{iters_per_ms, spin};

/// Bytes per copy: well beyond the last-level cache, so copies stream through memory.
const COPY_BYTES: usize = 32 << 20;
/// Copies per copying thread and phase.
const COPIES: usize = 12;

fn parse_p() -> Result<u32, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [] => Ok(2),
        [flag, value] if flag == "-p" => value
            .parse()
            .ok()
            .filter(|&p| p >= 1)
            .ok_or_else(|| "-p: expected a positive integer".to_string()),
        _ => Err("usage: contention [-p THREADS]\nwrites the log to $PP_LOG or ./pp.log".into()),
    }
}

/// Copies `COPY_BYTES` `COPIES` times, each copy recorded as communication.
fn copy_loop() -> u8 {
    // Both buffers written once first (work, not communication): a first copy into fresh
    // pages would mostly measure page faults.
    let (src, mut dst) = {
        let _setup = recorder::work("setup");
        (vec![7u8; COPY_BYTES], vec![1u8; COPY_BYTES])
    };
    for _ in 0..COPIES {
        let _c = recorder::comm(COPY_BYTES as u64);
        dst.copy_from_slice(black_box(&src));
        // Without this the optimizer drops every other copy as redundant.
        black_box(&mut dst);
    }
    black_box(dst[COPY_BYTES - 1])
}

/// Time this process's threads spent runnable but waiting for a CPU, ns (Linux: the second
/// field of `/proc/self/task/*/schedstat`).
fn run_queue_wait_ns() -> Option<u64> {
    let mut total = 0;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += stat.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    }
    Some(total)
}

fn run(p: u32) -> std::io::Result<()> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let session = Session::start(p, &[("prog", "contention"), ("cores", &cores.to_string())])?;
    let team = Team::new(p as usize)?;

    team.phase("copy1");
    team.region(
        "copy1",
        |part| if part.index() == 0 { copy_loop() } else { 0 },
    );

    team.phase("copy2");
    team.region(
        "copy2",
        |part| if part.index() < 2 { copy_loop() } else { 0 },
    );

    // A fixed total shared by the p threads: with more threads than cores, each waits for a
    // core part of the time, and its work is not backed by CPU time.
    team.phase("busy");
    let work = 600 * iters_per_ms() / u64::from(p);
    let queued_before = run_queue_wait_ns();
    team.region("busy", |_| {
        let _w = recorder::work("busy");
        black_box(spin(work))
    });
    // The kernel's own account, to compare with pp's rc.cpu of the phase.
    if let (Some(before), Some(after)) = (queued_before, run_queue_wait_ns()) {
        println!(
            "busy: {:.6} s waiting on a run queue (sum over threads, /proc/self/task/*/schedstat)",
            after.saturating_sub(before) as f64 * 1e-9
        );
    }

    drop(team);
    let report = session.finish()?;
    println!(
        "contention: p={p} on {cores} cores, {} events -> {}",
        report.events,
        report.path.display()
    );
    Ok(())
}

fn main() -> ExitCode {
    let p = match parse_p() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    match run(p) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {e}");
            ExitCode::FAILURE
        }
    }
}
