//! Hybrid MPI + OpenMP programs under `pp run -- mpirun` (issue 34, item 3; docs/mpi.md,
//! "Hybrid MPI + OpenMP"): `examples/mpi/hybrid.c` (MPI_THREAD_FUNNELED) and
//! `hybrid_multiple.c` (MPI_THREAD_MULTIPLE), built with clang's OpenMP through `mpicc`, run
//! with 2 ranks of 2 threads, each log profiled by `pp --format json`:
//!
//! * every thread of every rank is recorded: `p = 4`, each thread computes, threads rank-major;
//! * `pc` is the CPU time the program says its threads burned, within 25%;
//! * the designed waits are where they were designed, compared with each other (no test may
//!   depend on the machine's load, so no bound on their lengths): the OpenMP barrier's `li`
//!   on each rank's first thread more than on its last, the late sender's wait (`sl`) on
//!   rank 0's receiving threads more than on the senders, the workers idle (`ip`) outside the
//!   regions; every message matched, each on the thread that made the call;
//! * the same program built with GCC's OpenMP (libgomp, no OMPT) is recorded one thread per
//!   rank, and `pp run` says why its OpenMP threads are missing.
//!
//! Without `mpicc`, `mpirun`, clang or libomp each test passes and says what it skipped.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{MutexGuard, OnceLock};

use serde_json::Value;
use test_support::{
    NO_MACHINE, compile, ompt_tool, one_at_a_time, open_mpi, pp, repository, scratch, skip,
    stdout_of,
};

/// 2 ranks of 2 OpenMP threads.
const RANKS: usize = 2;
const THREADS: usize = 2;

/// `examples/mpi/<name>.c` built by `mpicc` driving `cc` with `-fopenmp`, into `dir`.
fn build(dir: &Path, name: &str, cc: &str, out: &str) -> Result<PathBuf, String> {
    let program = dir.join(out);
    let source = repository().join(format!("examples/mpi/{name}.c"));
    let mut command = Command::new("mpicc");
    command
        .env("OMPI_CC", cc)
        .env("MPICH_CC", cc)
        .args([
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-fopenmp",
            "-rdynamic",
        ])
        .arg("-fno-optimize-sibling-calls")
        .arg("-o")
        .arg(&program)
        .arg(&source)
        .arg("-lm");
    match compile(&mut command) {
        Ok(stderr) => {
            assert!(
                !stderr.contains("warning"),
                "{name}.c compiles with warnings:\n{stderr}"
            );
            Ok(program)
        }
        Err(e) => Err(format!(
            "OMPI_CC={cc} mpicc -fopenmp cannot build {name}.c (Open MPI, {cc}, its OpenMP missing?): {}",
            e.first_line()
        )),
    }
}

/// The two examples built with clang's OpenMP, or why they cannot be.
fn built() -> &'static Result<(PathBuf, bool), String> {
    static BUILT: OnceLock<Result<(PathBuf, bool), String>> = OnceLock::new();
    BUILT.get_or_init(|| {
        let open = open_mpi()?;
        ompt_tool(Path::new(env!("CARGO_BIN_EXE_pp")))?;
        let dir = scratch("hybrid-examples");
        for name in ["hybrid", "hybrid_multiple"] {
            build(&dir, name, "clang", name)?;
        }
        Ok((dir, open))
    })
}

fn examples(test: &str) -> Option<(&'static Path, bool, MutexGuard<'static, ()>)> {
    match built() {
        Ok((dir, open)) => Some((dir.as_path(), *open, one_at_a_time())),
        Err(why) => {
            skip(
                test,
                format!("{why} (tools/system-packages.sh installs it)"),
            );
            None
        }
    }
}

/// `pp run --log LOG -- mpirun -np 2 -x OMP_NUM_THREADS PROGRAM ARGS` with 2 threads a rank
/// (passive waits: waiting threads sleep instead of spinning on this shared machine): the
/// program's standard output, pp run's standard error, the log and its profile.
fn pp_run(open: bool, program: &Path, args: &[&str], log: &Path) -> (String, String, Value) {
    let mut command = pp!();
    command
        .arg("run")
        .arg("--log")
        .arg(log)
        .args(["--", "mpirun"]);
    if open {
        command.args(["--oversubscribe", "--bind-to", "none"]);
    }
    let out = command
        .args(["-np", &RANKS.to_string(), "-x", "OMP_NUM_THREADS", "-x"])
        .arg("OMP_WAIT_POLICY")
        .arg(program)
        .args(args)
        .env("OMP_NUM_THREADS", THREADS.to_string())
        .env("OMP_WAIT_POLICY", "passive")
        .env(
            "PP_OMPT_LIBRARY",
            ompt_tool(Path::new(env!("CARGO_BIN_EXE_pp"))).unwrap(),
        )
        .env("PP_MACHINE", NO_MACHINE)
        .env_remove("PP_LOG")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "pp run: {stdout}\n{stderr}");
    let json = stdout_of(pp!().args(["--format", "json"]).arg(log));
    (stdout, stderr, serde_json::from_str(&json).unwrap())
}

/// Seconds of `category` for thread `t`.
fn seconds(profile: &Value, t: usize, category: &str) -> f64 {
    profile["by_thread"][t][category]
        .as_f64()
        .unwrap_or_else(|| panic!("{profile}"))
}

/// The log's `kind` events (`send`, `recv`) as (thread, arguments).
fn events(log: &Path, kind: &str) -> Vec<(usize, String)> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let mut w = l.splitn(4, ' ');
            let (_t, thread, k, rest) = (w.next()?, w.next()?, w.next()?, w.next()?);
            (k == kind).then(|| (thread.parse().unwrap(), rest.to_string()))
        })
        .collect()
}

/// Nothing in pp's or pp run's warnings says a rule of the log was broken (an unmatched
/// message, an interval that does not nest) or that something was not recorded.
fn clean(stderr: &str) {
    for l in stderr.lines() {
        assert!(
            !l.contains("rule ") && !l.contains("not recorded") && !l.contains("unmatched"),
            "{stderr}"
        );
    }
}

#[test]
fn a_funneled_hybrid_run_records_every_thread_of_every_rank() {
    let test = "a_funneled_hybrid_run_records_every_thread_of_every_rank";
    let Some((dir, open, _one)) = examples(test) else {
        return;
    };
    let scratch = scratch("hybrid-funneled");
    let log = scratch.join("run.log");
    let repeats = 4;
    let (stdout, stderr, profile) = pp_run(
        open,
        &dir.join("hybrid"),
        &[
            "--ms",
            "30",
            "--extra",
            "20",
            "--late",
            "30",
            "--repeats",
            &repeats.to_string(),
        ],
        &log,
    );
    clean(&stderr);
    assert_eq!(profile["p"], RANKS * THREADS, "{profile}");
    // What every thread of every rank burned, as the program measured it.
    let burned: f64 = stdout
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().nth(2)?.parse::<f64>().ok())
        .sum::<f64>()
        / 1e3;
    let designed = (RANKS as f64 * (THREADS as f64 * 30.0 + 20.0) + 30.0) * repeats as f64 / 1e3;
    assert!(
        (burned - designed).abs() < 0.05 * designed,
        "the program burned {burned} s, designed {designed} s:\n{stdout}"
    );
    let pc: f64 = (0..RANKS * THREADS)
        .map(|t| seconds(&profile, t, "pc"))
        .sum();
    assert!(
        (pc - burned).abs() < 0.25 * burned,
        "pc {pc} s, burned {burned} s:\n{profile}"
    );
    for t in 0..RANKS * THREADS {
        assert!(seconds(&profile, t, "pc") > 0.0, "thread {t}: {profile}");
    }
    for r in 0..RANKS {
        let (first, last) = (r * THREADS, r * THREADS + THREADS - 1);
        // The first thread waits at the barrier for the last, which has E ms more to do.
        assert!(
            seconds(&profile, first, "li") > seconds(&profile, last, "li"),
            "rank {r}: {profile}"
        );
        // The worker is idle while the master does the serial part.
        assert!(seconds(&profile, last, "ip") > 0.0, "rank {r}: {profile}");
    }
    // Rank 0's master waits for rank 1's late sends; rank 1's master does not wait.
    assert!(
        seconds(&profile, 0, "sl") > seconds(&profile, THREADS, "sl"),
        "{profile}"
    );
    let recvs = events(&log, "recv");
    let sends = events(&log, "send");
    assert_eq!(recvs.len(), repeats, "{recvs:?}");
    assert!(
        recvs.iter().all(|(t, rest)| *t == 0 && rest == "2 1 8"),
        "{recvs:?}"
    );
    assert!(
        sends.iter().all(|(t, rest)| *t == 2 && rest == "0 1 8"),
        "{sends:?}"
    );
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn a_multiple_hybrid_runs_calls_are_on_the_threads_that_made_them() {
    let test = "a_multiple_hybrid_runs_calls_are_on_the_threads_that_made_them";
    let Some((dir, open, _one)) = examples(test) else {
        return;
    };
    let scratch = scratch("hybrid-multiple");
    let log = scratch.join("run.log");
    let repeats = 4;
    let (_stdout, stderr, profile) = pp_run(
        open,
        &dir.join("hybrid_multiple"),
        &[
            "--ms",
            "10",
            "--late",
            "30",
            "--repeats",
            &repeats.to_string(),
        ],
        &log,
    );
    clean(&stderr);
    assert_eq!(profile["p"], RANKS * THREADS, "{profile}");
    // Thread t of rank 1 (thread 2 + t) sends tag t; thread t of rank 0 receives it.
    for t in 0..THREADS {
        let recvs: Vec<_> = events(&log, "recv")
            .into_iter()
            .filter(|(thread, _)| *thread == t)
            .collect();
        assert_eq!(recvs.len(), repeats, "thread {t}: {recvs:?}");
        let from = format!("{} {t} 8", THREADS + t);
        assert!(recvs.iter().all(|(_, rest)| *rest == from), "{recvs:?}");
        let sends: Vec<_> = events(&log, "send")
            .into_iter()
            .filter(|(thread, _)| *thread == THREADS + t)
            .collect();
        assert_eq!(sends.len(), repeats, "thread {}: {sends:?}", THREADS + t);
        let to = format!("{t} {t} 8");
        assert!(sends.iter().all(|(_, rest)| *rest == to), "{sends:?}");
        // Each of rank 0's threads waits for the late sender; the senders do not.
        assert!(
            seconds(&profile, t, "sl") > seconds(&profile, THREADS + t, "sl"),
            "thread {t}: {profile}"
        );
    }
    let _ = std::fs::remove_dir_all(&scratch);
}

#[test]
fn a_hybrid_program_on_gccs_openmp_is_one_thread_a_rank_and_pp_run_says_why() {
    let test = "a_hybrid_program_on_gccs_openmp_is_one_thread_a_rank_and_pp_run_says_why";
    let Some((_dir, open, _one)) = examples(test) else {
        return;
    };
    let scratch = scratch("hybrid-gomp");
    let program = match build(&scratch, "hybrid", "gcc", "hybrid_gomp") {
        Ok(p) => p,
        Err(why) => return skip(test, why),
    };
    let log = scratch.join("run.log");
    let (_stdout, stderr, profile) = pp_run(open, &program, &["--repeats", "1"], &log);
    assert_eq!(profile["p"], RANKS, "{profile}");
    assert!(
        stderr.lines().any(|l| l.starts_with(
            "pp run: warning: ranks [0, 1]: their OpenMP threads are not recorded: the program uses GCC's OpenMP runtime (libgomp)"
        )),
        "{stderr}"
    );
    let _ = std::fs::remove_dir_all(&scratch);
}
