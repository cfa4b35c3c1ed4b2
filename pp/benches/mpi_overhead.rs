//! The MPI tracer's overhead per MPI call (issue 19): the ping-pong of `examples/mpi`, run
//! alternately without and with the tracer (`pp/src/trace/run/pmpi/`, compiled and preloaded as
//! `pp run -- mpirun` does), at least 11 times each way, 2 ranks. A half round trip is one
//! message: one traced send on one rank and one traced receive on the other, so the tracer's
//! cost per call is half the difference of the minimum half round trips. A third, untraced run
//! in each round gives `A/A`, the machine's noise.
//!
//! Run: `cargo bench -p pp --bench mpi_overhead` (`PP_MPI_BENCH_RUNS` runs each way, default
//! 11). Without mpicc or mpirun it prints `skipped: ...` and exits 0.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, ExitCode};

use test_support::{scratch, setting, skip};

/// Message sizes reported, bytes.
const SIZES: [u64; 4] = [0, 1024, 65536, 1 << 20];

fn main() -> ExitCode {
    let runs: usize = setting("PP_MPI_BENCH_RUNS", 11).max(11);
    let dir = scratch("pingpong");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let program = dir.join("pingpong");
    let tracer = dir.join("libpp_pmpi.so");
    let tracer_c = dir.join("pmpi.c");
    std::fs::write(&tracer_c, pp::trace::run::mpi::TRACER_C).expect("the tracer's source");
    let built = Command::new("mpicc")
        .args(["-O2", "-std=c11", "-o"])
        .arg(&program)
        .arg(repo.join("examples/mpi/pingpong.c"))
        .arg("-lm")
        .status()
        .is_ok_and(|s| s.success())
        && Command::new("mpicc")
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(&tracer)
            .arg(&tracer_c)
            .status()
            .is_ok_and(|s| s.success());
    if !built {
        skip(
            "mpi_overhead",
            "mpicc cannot build the ping-pong or the tracer (tools/system-packages.sh installs Open MPI)",
        );
        let _ = std::fs::remove_dir_all(&dir);
        return ExitCode::SUCCESS;
    }
    // Per size: the minimum half round trip (µs) plain, traced, plain again.
    let mut best: BTreeMap<u64, [f64; 3]> = SIZES.iter().map(|&s| (s, [f64::MAX; 3])).collect();
    for _ in 0..runs {
        for (k, traced) in [false, true, false].into_iter().enumerate() {
            let mut command = Command::new("mpirun");
            command
                .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
                .args(["-np", "2", "--bind-to", "none"])
                .arg(&program)
                .args(["--repeats", "1000", "--max", "1048576"]);
            if traced {
                command
                    .env("LD_PRELOAD", &tracer)
                    .env("PP_MPI_LOG", dir.join("rank"));
            }
            let Ok(out) = command.output() else {
                skip("mpi_overhead", "mpirun cannot be run");
                return ExitCode::SUCCESS;
            };
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                let cols: Vec<f64> = line
                    .split_whitespace()
                    .filter_map(|c| c.parse().ok())
                    .collect();
                if let [bytes, min_us, ..] = cols[..]
                    && let Some(b) = best.get_mut(&(bytes as u64))
                {
                    b[k] = b[k].min(min_us);
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    println!("mpi_overhead: 2 ranks, {runs} runs each way alternating, minimum half round trip");
    println!(
        "{:>10} {:>10} {:>10} {:>12} {:>12} {:>8}",
        "bytes", "plain us", "traced us", "per msg us", "per call us", "A/A"
    );
    for (bytes, [plain, traced, again]) in best {
        println!(
            "{bytes:>10} {plain:>10.3} {traced:>10.3} {:>12.3} {:>12.3} {:>+7.1}%",
            traced - plain,
            (traced - plain) / 2.0,
            100.0 * (again - plain) / plain
        );
    }
    ExitCode::SUCCESS
}
