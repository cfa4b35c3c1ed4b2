//! The MPI examples (`examples/mpi/*.c`) end to end, without pp yet (issue 19): compiled with
//! `mpicc` into a scratch folder, each run under `mpirun` with 2 and 4 ranks (see [`mpirun`]
//! for the flags), their output checked:
//!
//! * `fft2d.c` gives the checksum of the Rust workload on the same input (the reference,
//!   `lca workload fft2d --no-record -n 64 --iters 3`, as the OpenMP test uses) with 1, 2 and 4
//!   ranks, and its `--check` against a direct DFT passes; 3 ranks (64 not divisible by 3)
//!   get a one-line error;
//! * `late_sender.c`: the receiver waits at least the CPU time the sender burned before
//!   sending, less [`SLACK_MS`] (a lower bound only: the burn's wall time is at least its CPU
//!   time, whatever else runs);
//! * `imbalance.c`: rank 0 waits in `MPI_Allreduce` at least (p-1)·Y less [`SLACK_MS`], and
//!   every rank burned its (r+1)·Y;
//! * `pingpong.c` prints a line per size, 0 B and 1 B..4 MiB in powers of 4;
//! * `calls.c`, under `pp run` (the tracer): every call the tracer records beyond the basic
//!   ones, each rank's `recv` and `send` events as many as the program received and sent,
//!   no unmatched message, and each collective's bytes the documented ones;
//! * `late_sender.f90` (when `mpifort` works), under `pp run`: the same events as
//!   `late_sender.c`, and rank 1's `sl` at least what rank 0 burned;
//! * `calls.f90`, under `pp run`: each Fortran entry point of the tracer recorded (every
//!   receive and send, each collective's bytes);
//! * every program answers a bad argument with a one-line error and exit status 2.
//!
//! No wall-clock upper bounds: the machine is shared and noisy. Without `mpicc` or `mpirun`
//! each test passes and says on standard error what it skipped and why.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use serde_json::Value;
use test_support::{
    Toolchain, one_at_a_time, one_line_error, pp, repository, scratch, skip, stdout_of,
};

mod readme_section;

const PROGRAMS: [&str; 5] = ["pingpong", "late_sender", "imbalance", "fft2d", "calls"];

/// What a measured wait may fall short of its lower bound by: the ranks leave the barrier that
/// starts each repeat at slightly different times, and a rank may be descheduled for a time
/// slice (a few ms) between the barrier and its timer on a loaded machine.
const SLACK_MS: f64 = 8.0;

/// How long one `mpirun` may take before the test kills it and fails.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Whether `mpirun` is Open MPI's (which needs the flags of [`mpirun`]) or another MPI's
/// (MPICH's Hydra takes none of them), or why there is none.
fn open_mpi() -> &'static Result<bool, String> {
    static OPEN_MPI: OnceLock<Result<bool, String>> = OnceLock::new();
    OPEN_MPI.get_or_init(test_support::open_mpi)
}

/// The examples compiled once for all tests, or why they cannot be.
fn built() -> &'static Result<PathBuf, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = scratch("examples");
        let source = repository().join("examples/mpi");
        for name in PROGRAMS {
            let stderr =
                Toolchain::MPI.example(&source.join(format!("{name}.c")), &dir.join(name))?;
            assert!(
                !stderr.contains("warning"),
                "{name}.c compiles with warnings:\n{stderr}"
            );
        }
        Ok(dir)
    })
}

/// The Fortran examples (`<name>.f90`), compiled with `mpifort` as `<name>_f90`.
const FORTRAN_PROGRAMS: [&str; 2] = ["late_sender", "calls"];

/// The Fortran examples compiled with `mpifort` beside the C ones, or why they cannot be.
fn built_fortran() -> Result<&'static Path, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = built().as_ref().map_err(Clone::clone)?;
            // mpifort runs gfortran: without it, it fails even on --version.
            let works = Command::new("mpifort")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success());
            if !works {
                return Err("mpifort does not work (gfortran missing?)".into());
            }
            for name in FORTRAN_PROGRAMS {
                let out = Command::new("mpifort")
                    .args(["-O2", "-Wall", "-o"])
                    .arg(dir.join(format!("{name}_f90")))
                    .arg(repository().join(format!("examples/mpi/{name}.f90")))
                    .output()
                    .unwrap();
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(
                    out.status.success() && !stderr.contains("Warning"),
                    "{name}.f90 does not compile cleanly:\n{stderr}"
                );
            }
            Ok(dir.clone())
        })
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(Clone::clone)
}

/// The folder of compiled examples, whether `mpirun` is Open MPI's, and the right to run them
/// (one test at a time: they measure waits, and 4 ranks already oversubscribe a small
/// machine); or `None` after saying why `test` is skipped.
fn examples(test: &str) -> Option<(&'static Path, bool, MutexGuard<'static, ()>)> {
    let ready = match (open_mpi(), built()) {
        (Ok(open), Ok(dir)) => Ok((dir.as_path(), *open)),
        (Err(why), _) | (_, Err(why)) => Err(why.clone()),
    };
    match ready {
        Ok((dir, open)) => Some((dir, open, one_at_a_time())),
        Err(why) => {
            skip(
                test,
                format!("{why} (tools/system-packages.sh installs it)"),
            );
            None
        }
    }
}

/// What a run printed and how it ended.
struct Run {
    what: String,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    /// Its standard output, after checking that it succeeded.
    fn ok(&self) -> &str {
        assert_eq!(
            self.code,
            Some(0),
            "{}:\n{}{}",
            self.what,
            self.stdout,
            self.stderr
        );
        &self.stdout
    }

    /// The lines of its standard output that are not `#` headers, split into columns.
    fn rows(&self) -> Vec<Vec<f64>> {
        self.ok()
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                l.split_whitespace()
                    .map(|c| c.parse().unwrap_or_else(|_| panic!("{}: {l}", self.what)))
                    .collect()
            })
            .collect()
    }
}

/// `mpirun -np NP PROGRAM ARGS`, killed after [`TIMEOUT`]. With Open MPI (4.1 on Debian 12)
/// on this VM, as root in a container of 2 cores, what works is:
///
/// * `OMPI_ALLOW_RUN_AS_ROOT=1` and `OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1` (as root mpirun
///   refuses to start without them or `--allow-run-as-root`; as another user they change
///   nothing);
/// * `--oversubscribe`: more ranks than cores (here beyond 2) are refused without it;
/// * `--bind-to none`: by default Open MPI pins 2 ranks to cores, which on a machine shared
///   with other work would stop the scheduler from moving a rank off a busy core.
///
/// The shared-memory transport (`btl` vader) works here as it is: no `--mca btl` needed.
/// Another MPI's `mpirun` (MPICH's Hydra) gets `-np` alone.
fn mpirun(open_mpi: bool, np: usize, program: &Path, args: &[&str]) -> Run {
    let mut command = Command::new("mpirun");
    if open_mpi {
        command
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .args(["--oversubscribe", "--bind-to", "none"]);
    }
    command
        .arg("-np")
        .arg(np.to_string())
        .arg(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let what = format!(
        "mpirun -np {np} {} {}",
        program.file_name().unwrap().to_string_lossy(),
        args.join(" ")
    );
    let mut child = command.spawn().unwrap_or_else(|e| panic!("{what}: {e}"));
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "{what}: still running after {TIMEOUT:?}, killed:\n{}{}",
                out.join().unwrap(),
                err.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        what,
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// The Rust workload's checksum for `-n 64 --iters 3` (`lca workload fft2d --no-record
/// -n 64 --iters 3`): the same input, the same transform, any number of ranks.
const CHECKSUM_N64_ITERS3: &str = "checksum 1.903282890e+05";

#[test]
fn fft2d_gives_the_reference_checksum_with_1_2_and_4_ranks_either_transpose() {
    let test = "fft2d_gives_the_reference_checksum_with_1_2_and_4_ranks_either_transpose";
    let Some((dir, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    for (np, transpose) in [1, 2, 4]
        .into_iter()
        .flat_map(|np| [(np, "alltoall"), (np, "p2p")])
    {
        let run = mpirun(
            open,
            np,
            &dir.join("fft2d"),
            &[
                "-n",
                "64",
                "--iters",
                "3",
                "--check",
                "--transpose",
                transpose,
            ],
        );
        let stdout = run.ok();
        assert!(
            stdout.contains(CHECKSUM_N64_ITERS3),
            "{}: {stdout}",
            run.what
        );
        assert!(
            stdout.contains(&format!("n=64 ranks={np} iters=3")),
            "{}: {stdout}",
            run.what
        );
        assert!(
            stdout.contains("check: iteration 2 matches the direct 2D DFT"),
            "{}: {stdout}",
            run.what
        );
    }
    // 64 lines cannot be split over 3 ranks.
    let run = mpirun(open, 3, &dir.join("fft2d"), &["-n", "64", "--iters", "1"]);
    program_error(&run, "fft2d: -n 64: not divisible by the 3 ranks", open);
}

/// `run` failed with exit status 2 (the status mpirun passes on from Open MPI's ranks) and one
/// line of its standard error, the program's, begins with `message`.
fn program_error(run: &Run, message: &str, open_mpi: bool) {
    assert_ne!(run.code, Some(0), "{}: {}", run.what, run.stdout);
    if open_mpi {
        assert_eq!(run.code, Some(2), "{}: {}", run.what, run.stderr);
    }
    let program = message.split(':').next().unwrap();
    let own: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with(&format!("{program}:")))
        .collect();
    assert_eq!(
        own.len(),
        1,
        "{}: one line from the program:\n{}",
        run.what,
        run.stderr
    );
    assert!(own[0].starts_with(message), "{}: {}", run.what, run.stderr);
}

#[test]
fn late_senders_receiver_waits_at_least_the_senders_burn() {
    let test = "late_senders_receiver_waits_at_least_the_senders_burn";
    let Some((dir, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    let ms = 30.0;
    for np in [2, 4] {
        let run = mpirun(
            open,
            np,
            &dir.join("late_sender"),
            &["--ms", "30", "--repeats", "4"],
        );
        let rows = run.rows();
        assert_eq!(rows.len(), 4, "{}: {}", run.what, run.stdout);
        for (k, row) in rows.iter().enumerate() {
            // repeat burn_cpu_ms burn_wall_ms recv_wait_ms
            let (burn_cpu, burn_wall, wait) = (row[1], row[2], row[3]);
            assert_eq!(row[0], k as f64, "{}: {}", run.what, run.stdout);
            assert!(burn_cpu >= ms, "{}: {}", run.what, run.stdout);
            assert!(burn_wall >= burn_cpu - 0.01, "{}: {}", run.what, run.stdout);
            assert!(
                wait >= burn_cpu - SLACK_MS,
                "{}: repeat {k}: the receiver waited {wait} ms, less than the sender's burn \
                 {burn_cpu} ms - {SLACK_MS} ms:\n{}",
                run.what,
                run.stdout
            );
        }
    }
}

#[test]
fn imbalances_rank_0_waits_for_the_last_rank() {
    let test = "imbalances_rank_0_waits_for_the_last_rank";
    let Some((dir, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    let y = 20.0;
    for np in [2, 4] {
        let repeats = 3;
        let run = mpirun(
            open,
            np,
            &dir.join("imbalance"),
            &["--ms", "20", "--repeats", "3"],
        );
        let rows = run.rows();
        assert_eq!(rows.len(), repeats * np, "{}: {}", run.what, run.stdout);
        for (i, row) in rows.iter().enumerate() {
            // repeat rank burn_cpu_ms burn_wall_ms wait_ms
            let (k, rank) = (i / np, i % np);
            assert_eq!((row[0], row[1]), (k as f64, rank as f64), "{}", run.stdout);
            let (burn_cpu, burn_wall, wait) = (row[2], row[3], row[4]);
            assert!(
                burn_cpu >= (rank + 1) as f64 * y,
                "{}: {}",
                run.what,
                run.stdout
            );
            assert!(burn_wall >= burn_cpu - 0.01, "{}: {}", run.what, run.stdout);
            if rank == 0 {
                // The reduction cannot end before the last rank has burned p·Y of CPU, which
                // takes at least as long in wall time: rank 0's burn and wait together last
                // that long, however the machine's load stretched its own burn (on a busy
                // machine it burned 20 ms in 58 and waited 45, under the (p-1)·Y once
                // asserted).
                let bound = np as f64 * y - SLACK_MS;
                assert!(
                    burn_wall + wait >= bound,
                    "{}: repeat {k}: rank 0 burned {burn_wall} ms and waited {wait} ms in \
                     MPI_Allreduce, less than p·Y - {SLACK_MS} = {bound} ms in all:\n{}",
                    run.what,
                    run.stdout
                );
            }
        }
    }
}

#[test]
fn pingpong_prints_a_line_per_size() {
    let test = "pingpong_prints_a_line_per_size";
    let Some((dir, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    // 0 B, then 1 B..4 MiB in powers of 4.
    let sizes: Vec<f64> = std::iter::once(0.0)
        .chain((0..12).map(|k| 4f64.powi(k)))
        .collect();
    for np in [1, 2, 4] {
        let run = mpirun(open, np, &dir.join("pingpong"), &["--repeats", "10"]);
        let rows = run.rows();
        let got: Vec<f64> = rows.iter().map(|r| r[0]).collect();
        assert_eq!(got, sizes, "{}: {}", run.what, run.stdout);
        for row in &rows {
            // bytes min_us median_us MB_per_s
            assert_eq!(row.len(), 4, "{}: {}", run.what, run.stdout);
            let (min, median) = (row[1], row[2]);
            assert!(
                min > 0.0 && min.is_finite() && median >= min,
                "{}: {}",
                run.what,
                run.stdout
            );
        }
        assert!(
            run.stdout
                .contains(&format!("of {np}, 10 repeats per size")),
            "{}: {}",
            run.what,
            run.stdout
        );
    }
}

#[test]
fn bad_arguments_get_a_one_line_error_and_exit_2() {
    let test = "bad_arguments_get_a_one_line_error_and_exit_2";
    let Some((dir, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    for (program, args, message) in [
        (
            "pingpong",
            &["--repeats", "0"][..],
            "pingpong: --repeats '0': expected an integer",
        ),
        (
            "pingpong",
            &["--frobnicate", "1"][..],
            "pingpong: --frobnicate: unknown argument",
        ),
        (
            "late_sender",
            &["--ms", "fast"][..],
            "late_sender: --ms 'fast': expected a number",
        ),
        (
            "late_sender",
            &["--repeats"][..],
            "late_sender: --repeats: unknown or missing its value",
        ),
        (
            "imbalance",
            &["--ms", "-1"][..],
            "imbalance: --ms '-1': expected a number",
        ),
        (
            "calls",
            &["--many", "0"][..],
            "calls: --many '0': expected an integer",
        ),
        (
            "fft2d",
            &["-n", "48"][..],
            "fft2d: -n 48: expected a power of two",
        ),
        (
            "fft2d",
            &["--iters", "x"][..],
            "fft2d: --iters 'x': expected an integer",
        ),
        (
            "fft2d",
            &["--transpose", "ring"][..],
            "fft2d: --transpose 'ring': expected alltoall or p2p",
        ),
    ] {
        let run = mpirun(open, 2, &dir.join(program), args);
        program_error(&run, message, open);
    }
}

/// `pp run [--log LOG] -- mpirun -np NP PROGRAM ARGS` (Open MPI's flags as [`mpirun`] gives
/// them): its output, and the log profiled by `pp --format json`.
fn pp_run(open_mpi: bool, np: usize, program: &Path, args: &[&str], log: &Path) -> (Run, Value) {
    let mut command = pp!();
    command
        .arg("run")
        .arg("--log")
        .arg(log)
        .args(["--", "mpirun"]);
    if open_mpi {
        command.args(["--oversubscribe", "--bind-to", "none"]);
    }
    let what = format!("pp run -- mpirun -np {np} {}", program.display());
    let out = command
        .arg("-np")
        .arg(np.to_string())
        .arg(program)
        .args(args)
        .env("PP_RUN_DELAY", "0")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let run = Run {
        what,
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    run.ok();
    let json = stdout_of(pp!().args(["--format", "json"]).arg(log));
    (run, serde_json::from_str(&json).unwrap())
}

/// Seconds of `category` for thread `t` of a `pp --format json` profile.
fn seconds(profile: &Value, t: usize, category: &str) -> f64 {
    profile["by_thread"][t][category]
        .as_f64()
        .unwrap_or_else(|| panic!("{profile}"))
}

#[test]
fn pp_run_traces_ranks_a_late_sender_is_sl_and_an_imbalance_li() {
    let test = "pp_run_traces_ranks_a_late_sender_is_sl_and_an_imbalance_li";
    let Some((dir, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    let scratch = scratch("run");
    let log = scratch.join("run.log");

    // The receiver (rank 1) waits for each of 4 sends that follow 30 ms of CPU: sl.
    let (run, profile) = pp_run(
        open,
        2,
        &dir.join("late_sender"),
        &["--ms", "30", "--repeats", "4"],
        &log,
    );
    assert_eq!(profile["p"], 2, "{profile}");
    assert!(
        !run.stderr.contains("warning: ") || run.stderr.lines().all(|l| !l.contains("rule ")),
        "{}",
        run.stderr
    );
    let sl = seconds(&profile, 1, "sl");
    assert!(
        sl >= 4.0 * (0.030 - SLACK_MS / 1e3),
        "rank 1's sl {sl} s:\n{}\n{profile}",
        run.stdout
    );

    // Rank r burns (r+1)·20 ms before an allreduce: rank 0 waits while the others work: li.
    let (run, profile) = pp_run(
        open,
        4,
        &dir.join("imbalance"),
        &["--ms", "20", "--repeats", "3"],
        &log,
    );
    assert_eq!(profile["p"], 4, "{profile}");
    assert!(
        run.stderr.lines().all(|l| !l.contains("rule ")),
        "{}",
        run.stderr
    );
    assert!(seconds(&profile, 0, "li") > 0.0, "{profile}");
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn pp_run_matches_every_message_of_the_fft_and_keeps_its_checksum() {
    let test = "pp_run_matches_every_message_of_the_fft_and_keeps_its_checksum";
    let Some((dir, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    let scratch = scratch("fft");
    let log = scratch.join("run.log");
    let (run, profile) = pp_run(
        open,
        4,
        &dir.join("fft2d"),
        &["-n", "64", "--iters", "3"],
        &log,
    );
    assert!(run.stdout.contains(CHECKSUM_N64_ITERS3), "{}", run.stdout);
    assert_eq!(profile["p"], 4);
    // The log reads with no broken rule: every receive met its send (rules 20 and 21).
    let check = pp!().arg(&log).output().unwrap();
    let warnings = String::from_utf8_lossy(&check.stderr);
    assert!(warnings.lines().all(|l| !l.contains("rule ")), "{warnings}");
    // Each rank entered the alltoall of every iteration (and the gathers).
    // pp run writes the merged log in the text encoding.
    let text = std::fs::read_to_string(&log).unwrap();
    let alltoalls = text
        .lines()
        .filter(|l| l.contains(" coll alltoall "))
        .count();
    assert!(alltoalls >= 4 * 3, "{alltoalls} alltoalls:\n{text}");
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn pp_run_without_mpicc_says_so_in_one_line() {
    let test = "pp_run_without_mpicc_says_so_in_one_line";
    let Some((dir, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    let _ = open;
    let out = Command::new(env!("CARGO_BIN_EXE_pp"))
        .args(["run", "--", "mpirun", "-np", "2"])
        .arg(dir.join("late_sender"))
        .env("PP_MPICC", "/nonexistent/mpicc")
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    let err = one_line_error(&out, Some(1), &[]);
    assert!(
        err.starts_with("pp run: /nonexistent/mpicc not found"),
        "{err}"
    );
}

#[test]
fn pp_run_inside_mpirun_is_a_clear_error() {
    let test = "pp_run_inside_mpirun_is_a_clear_error";
    let Some((dir, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    let run = mpirun(
        open,
        2,
        Path::new(env!("CARGO_BIN_EXE_pp")),
        &["run", "--", dir.join("late_sender").to_str().unwrap()],
    );
    assert_ne!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("pp run is itself a rank of an MPI launch (OMPI_COMM_WORLD_RANK is set)")
            || run.stderr.contains("(PMI_RANK is set)")
            || run.stderr.contains("(PMIX_RANK is set)"),
        "{}",
        run.stderr
    );
}

#[test]
fn pp_run_moves_a_rank_with_another_clock_onto_rank_0s() {
    // The tracer's test hook puts rank 1's clock 50 ms behind rank 0's: unaligned, each of its
    // receives would end 50 ms before its message was sent (rule 20). The offsets measured at
    // MPI_Init and MPI_Finalize move it back.
    let test = "pp_run_moves_a_rank_with_another_clock_onto_rank_0s";
    let Some((dir, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    let scratch = scratch("skew");
    let log = scratch.join("run.log");
    // SAFETY: the tests of this file run one at a time (`_one_at_a_time`), and this one puts
    // the variable back before it returns.
    unsafe { std::env::set_var("PP_MPI_TEST_SKEW_NS", "0,-50000000") };
    let (run, profile) = pp_run(
        open,
        2,
        &dir.join("late_sender"),
        &["--ms", "30", "--repeats", "3"],
        &log,
    );
    unsafe { std::env::remove_var("PP_MPI_TEST_SKEW_NS") };
    // Rules 20 and 21 may still warn: a message's latency (µs) can be below the alignment's own
    // error (the ping-pong's half round trip, which a loaded machine stretches), and a receive
    // put before its send leaves that send unreceived. So only other rules must not break, and
    // no receive may end much before its send (unaligned: 50 ms before).
    assert!(
        run.stderr
            .lines()
            .all(|l| !l.contains("rule ") || l.contains("rule 20") || l.contains("rule 21")),
        "{}",
        run.stderr
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let early = receives_before_sends(&text);
    assert!(
        early.iter().all(|&ns| ns < ALIGNED_WITHIN_NS),
        "receives ending before their sends by {early:?} ns:\n{text}"
    );
    // The same check has teeth: rank 1 put back 50 ms has receives 50 ms before their sends.
    let unaligned: String = text
        .lines()
        .map(|l| match l.split_once(' ') {
            Some((t, rest)) if rest.starts_with("1 ") => match t.parse::<u64>() {
                Ok(t) => format!("{} {rest}\n", t.saturating_sub(50_000_000)),
                Err(_) => format!("{l}\n"),
            },
            _ => format!("{l}\n"),
        })
        .collect();
    let early = receives_before_sends(&unaligned);
    assert!(early.iter().any(|&ns| ns > 40_000_000), "{early:?}");
    let offsets: Vec<i64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# clock_offset "))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse().unwrap())
        .collect();
    // Two offsets a rank; rank 1's about +50 ms (off by the ping-pong's half round trip).
    assert_eq!(offsets.len(), 4, "{text}");
    assert!(
        offsets
            .iter()
            .any(|&o| (o - 50_000_000).abs() < ALIGNED_WITHIN_NS as i64),
        "{offsets:?}"
    );
    let sl = seconds(&profile, 1, "sl");
    assert!(
        sl >= 3.0 * (0.030 - SLACK_MS / 1e3),
        "rank 1's sl {sl}:\n{profile}"
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

/// How far a clock alignment may be off: the ping-pong's half round trip, which a loaded
/// machine stretches to a time slice or more; far below the 50 ms skew the test puts in.
const ALIGNED_WITHIN_NS: u64 = 10_000_000;

/// For every receive of a text log matched to its send (same sender, receiver and tag, in
/// order), how many ns it ends before the send starts (0 where it ends after).
fn receives_before_sends(log: &str) -> Vec<u64> {
    use std::collections::{HashMap, VecDeque};
    let mut sends: HashMap<(String, String, String), VecDeque<u64>> = HashMap::new();
    let mut recvs: Vec<((String, String, String), u64)> = Vec::new();
    for line in log.lines().filter(|l| !l.starts_with('#')) {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w.len() < 5 {
            continue;
        }
        let t: u64 = w[0].parse().unwrap_or_else(|_| panic!("{line}"));
        match w[2] {
            "send" => sends
                .entry((w[1].into(), w[3].into(), w[4].into()))
                .or_default()
                .push_back(t),
            "recv" => recvs.push(((w[3].into(), w[1].into(), w[4].into()), t)),
            _ => {}
        }
    }
    recvs
        .into_iter()
        .filter_map(|(key, t)| {
            let sent = sends.get_mut(&key)?.pop_front()?;
            Some(sent.saturating_sub(t))
        })
        .collect()
}

/// The events of `kind` in a text log, per thread: their words after the kind.
fn events(log: &str, p: usize, kind: &str) -> Vec<Vec<String>> {
    let mut per = vec![Vec::new(); p];
    for line in log.lines().filter(|l| !l.starts_with('#')) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() >= 3 && words[2] == kind {
            let t: usize = words[1].parse().unwrap_or_else(|_| panic!("{line}"));
            per[t].push(words[3..].join(" "));
        }
    }
    per
}

#[test]
fn pp_run_records_every_wrapped_call_of_calls_c() {
    // calls.c makes one of each call the tracer records beyond the basic ones, on a ring; each
    // rank's first thread receives 16 + N messages (its header comment counts them) and
    // contributes known bytes to each collective.
    let test = "pp_run_records_every_wrapped_call_of_calls_c";
    let Some((dir, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    let scratch = scratch("calls");
    let log = scratch.join("run.log");
    // Beyond the 4096 receives the tracer once kept outstanding.
    let n = 5000;
    for p in [2, 4] {
        let (run, profile) = pp_run(
            open,
            p,
            &dir.join("calls"),
            &["--many", &n.to_string()],
            &log,
        );
        assert_eq!(profile["p"], p, "{profile}");
        // Every receive met its send and every send its receive (rules 20 and 21).
        assert!(
            run.stderr.lines().all(|l| !l.contains("rule ")),
            "{}",
            run.stderr
        );
        // The program's lines "rank received" (pp's profile follows them).
        let printed: Vec<(usize, usize)> = run
            .stdout
            .lines()
            .filter_map(|l| {
                let mut w = l.split_whitespace();
                let row = (w.next()?.parse().ok()?, w.next()?.parse().ok()?);
                w.next().is_none().then_some(row)
            })
            .collect();
        assert_eq!(
            printed,
            (0..p).map(|r| (r, 16 + n)).collect::<Vec<_>>(),
            "{}",
            run.stdout
        );
        // Open MPI provides MPI_THREAD_MULTIPLE: a second thread of each rank made messages of
        // its own meanwhile, which the tracer left out (the counts below are the first's).
        if open {
            assert!(
                run.stdout.contains("# second thread: yes"),
                "{}",
                run.stdout
            );
        }
        let text = std::fs::read_to_string(&log).unwrap();
        let recvs = events(&text, p, "recv");
        let sends = events(&text, p, "send");
        for r in 0..p {
            assert_eq!(recvs[r].len(), 16 + n, "rank {r}'s recv events");
            assert_eq!(sends[r].len(), 16 + n, "rank {r}'s send events");
            // Every message came from the left, 4-byte ints.
            let left = (r + p - 1) % p;
            assert!(
                recvs[r]
                    .iter()
                    .all(|e| e.starts_with(&format!("{left} ")) && e.ends_with(" 4")),
                "rank {r}: {:?}",
                recvs[r]
            );
        }
        // The collectives but the barriers, in order, with this rank's bytes (docs/mpi.md):
        // 4·p(p+1)/2, 8p, then 4(r+1) thrice, 4·p(p+1)/2, 8p, 12, 12, and the final gather of
        // one long.
        let colls = events(&text, p, "coll");
        for (r, got) in colls.iter().enumerate() {
            let got: Vec<&String> = got.iter().filter(|e| !e.starts_with("barrier")).collect();
            let tri = 2 * p * (p + 1);
            let own = 4 * (r + 1);
            let expected = [
                format!("alltoallv {tri}"),
                format!("alltoallv {}", 8 * p),
                format!("allgatherv {own}"),
                format!("gatherv {own} root=0"),
                format!("scatterv {own} root=0"),
                format!("reduce_scatter {tri}"),
                format!("reduce_scatter_block {}", 8 * p),
                "scan 12".to_string(),
                "exscan 12".to_string(),
                "gather 8 root=0".to_string(),
            ];
            assert_eq!(got, expected.iter().collect::<Vec<_>>(), "rank {r}");
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Each thread's events in a text log without their times and CPU samples (which differ from
/// run to run): what the tracer recorded, call by call.
fn calls_recorded(log: &str, p: usize) -> Vec<Vec<String>> {
    let mut per = vec![Vec::new(); p];
    for line in log.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() >= 3 && words[2] != "cpu" {
            let t: usize = words[1].parse().unwrap_or_else(|_| panic!("{line}"));
            per[t].push(words[2..].join(" "));
        }
    }
    per
}

#[test]
fn pp_run_traces_fortran_as_it_traces_c() {
    // late_sender.f90 makes late_sender.c's calls through Fortran's bindings (`use mpi`), which
    // call PMPI_* directly: the tracer's Fortran entry points must record the same events, and
    // pp give the receiver the same sl, at least the sender's burn.
    let test = "pp_run_traces_fortran_as_it_traces_c";
    let Some((dir, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    let fortran = match built_fortran() {
        Ok(dir) => dir.join("late_sender_f90"),
        Err(why) => {
            skip(
                test,
                format!("{why} (tools/system-packages.sh installs it)"),
            );
            return;
        }
    };
    let scratch = scratch("f90");
    let log = scratch.join("run.log");
    let args = ["--ms", "30", "--repeats", "4"];
    let mut recorded = Vec::new();
    for program in [dir.join("late_sender"), fortran] {
        let (run, profile) = pp_run(open, 2, &program, &args, &log);
        assert_eq!(profile["p"], 2, "{profile}");
        assert!(
            run.stderr.lines().all(|l| !l.contains("rule ")),
            "{}",
            run.stderr
        );
        // repeat burn_cpu_ms burn_wall_ms recv_wait_ms: the CPU rank 0 burned before each send.
        let burned: f64 = run
            .stdout
            .lines()
            .filter_map(|l| {
                let w: Vec<f64> = l
                    .split_whitespace()
                    .map(|c| c.parse().ok())
                    .collect::<Option<_>>()?;
                (w.len() == 4).then(|| w[1] / 1e3)
            })
            .sum();
        assert!(burned >= 4.0 * 0.030, "{}", run.stdout);
        let sl = seconds(&profile, 1, "sl");
        assert!(
            sl >= burned - 4.0 * SLACK_MS / 1e3,
            "{}: rank 1's sl {sl} s, rank 0 burned {burned} s:\n{}\n{profile}",
            run.what,
            run.stdout
        );
        recorded.push(calls_recorded(&std::fs::read_to_string(&log).unwrap(), 2));
    }
    assert_eq!(recorded[0], recorded[1], "C, then Fortran");
    // Each rank's barriers, and rank 1's receives of rank 0's sends.
    assert!(
        recorded[1][1].contains(&"recv 0 7 8".to_string()),
        "{:?}",
        recorded[1]
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn pp_run_records_every_fortran_entry_point_of_calls_f90() {
    // calls.f90 calls each of the tracer's Fortran entry points on a ring: each rank receives
    // 5 messages and contributes known bytes (4-byte integers) to each collective.
    let test = "pp_run_records_every_fortran_entry_point_of_calls_f90";
    let Some((_, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    let dir = match built_fortran() {
        Ok(dir) => dir,
        Err(why) => {
            skip(
                test,
                format!("{why} (tools/system-packages.sh installs it)"),
            );
            return;
        }
    };
    let scratch = scratch("calls-f90");
    let log = scratch.join("run.log");
    for p in [2, 4] {
        let (run, profile) = pp_run(open, p, &dir.join("calls_f90"), &[], &log);
        assert_eq!(profile["p"], p, "{profile}");
        assert!(
            run.stderr.lines().all(|l| !l.contains("rule ")),
            "{}",
            run.stderr
        );
        assert!(
            (0..p).all(|r| run.stdout.lines().any(|l| l == format!("{r} 5"))),
            "{}",
            run.stdout
        );
        let text = std::fs::read_to_string(&log).unwrap();
        let recvs = events(&text, p, "recv");
        let sends = events(&text, p, "send");
        let colls = events(&text, p, "coll");
        let all_to_all = format!("alltoall {}", 4 * p);
        let expected = [
            "barrier 0",
            "bcast 12 root=0",
            "reduce 8 root=0",
            "allreduce 4",
            &all_to_all,
            "gather 8 root=0",
            "scatter 8 root=0",
            "allgather 4",
            "gather 4 root=0",
        ];
        for r in 0..p {
            let left = (r + p - 1) % p;
            let tags: Vec<String> = (1..=5).map(|tag| format!("{left} {tag} 4")).collect();
            assert_eq!(recvs[r], tags, "rank {r}'s receives");
            let right = (r + 1) % p;
            let tags: Vec<String> = (1..=5).map(|tag| format!("{right} {tag} 4")).collect();
            assert_eq!(sends[r], tags, "rank {r}'s sends");
            assert_eq!(colls[r], expected, "rank {r}'s collectives");
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn the_readme_mpi_lines_run() {
    // The `$ pp` lines of the section of docs/measuring.md "Measuring an MPI program", in order.
    let lines = readme_section::pp_lines("## Measuring an MPI program");
    assert!(lines.len() >= 2, "{lines:?}");
    let Some((built, _open, _one_at_a_time)) = examples("the_readme_mpi_lines_run") else {
        return;
    };
    let dir = readme_section::run("pp-mpi-readme", &lines, "mpi", built, &[]);
    assert!(dir.join("pp.log").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pp_run_names_ranks_that_crashed_and_passes_mpiruns_status_through() {
    // Every rank crashes after MPI_Init: no rank writes its log. pp run says so with the
    // launcher's status, and exits with it (as mpirun alone does).
    let test = "pp_run_names_ranks_that_crashed_and_passes_mpiruns_status_through";
    let Some((_, open, _one_at_a_time)) = examples(test) else {
        return;
    };
    let dir = scratch("mpi-crash");
    let source = dir.join("crash.c");
    std::fs::write(
        &source,
        "#include <mpi.h>\n#include <signal.h>\n\
         int main(int argc, char **argv) {\n\
             MPI_Init(&argc, &argv);\n\
             MPI_Barrier(MPI_COMM_WORLD);\n\
             raise(SIGSEGV);\n\
             MPI_Finalize();\n\
             return 0;\n\
         }\n",
    )
    .unwrap();
    let program = dir.join("crash");
    Toolchain::MPI.example(&source, &program).unwrap();
    let alone = mpirun(open, 2, &program, &[]);
    let Some(status) = alone.code.filter(|&c| c != 0) else {
        panic!("{}: {:?}\n{}", alone.what, alone.code, alone.stderr);
    };

    let mut command = pp!();
    command.current_dir(&dir).args(["run", "--", "mpirun"]);
    if open {
        command.args(["--oversubscribe", "--bind-to", "none"]);
    }
    let out = command
        .args(["-np", "2"])
        .arg(&program)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(status), "{err}");
    let last = err.lines().last().unwrap_or("");
    assert!(
        last.starts_with(&format!(
            "pp run: mpirun exited {status}, and no rank wrote its log "
        )),
        "{err}"
    );
    assert!(!dir.join("pp.log").exists());
    assert!(
        !std::fs::read_dir(&dir).unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains(".mpi")),
        "pp run left its scratch folder"
    );
}
