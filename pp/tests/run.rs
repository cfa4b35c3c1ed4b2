//! `pp run`: argument errors, programs that write no log (not OpenMP, GCC's libgomp), exit
//! statuses, programs that cannot start, and the profile of the log a run wrote — first with a
//! shell script standing in for a recorded program, then with a real `clang -fopenmp` program
//! and the OMPT tool when they are here.

use std::path::{Path, PathBuf};
use std::process::Output;

use test_support::{compile, one_line_error, pp, scratch, skip};

/// `pp run` in `dir`, with no machine file and a stand-in tool file (the programs of these
/// tests do not load it).
/// A stand-in for the tool in runs of programs without OpenMP, where it is never called: a
/// shared library every process here has loaded already (pp run preloads the tool, and the
/// dynamic loader refuses a file that is not a library), the C library this test runs with.
fn stand_in_tool() -> PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/libc.so"))
        .map(PathBuf::from)
        .expect("the C library in /proc/self/maps")
}

fn pp_run(dir: &Path, args: &[&str]) -> Output {
    let tool = stand_in_tool();
    pp!()
        .env("PP_OMPT_LIBRARY", &tool)
        .current_dir(dir)
        .arg("run")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The run failed with `status` and exactly one line on standard error containing `expected`.
fn one_line(out: &Output, status: i32, expected: &str) {
    let err = one_line_error(out, Some(status), &[expected]);
    assert!(err.starts_with("pp run: "), "{err}");
}

#[test]
fn argument_errors_are_one_line_with_status_2() {
    let dir = scratch("args");
    for (args, expected) in [
        (&[][..], "<PROGRAM>"),
        (&["--bogus", "--", "true"][..], "'--bogus'"),
        (
            &["--param", "x", "--", "true"][..],
            "'x': expected key=value",
        ),
        (&["--param", "=1", "--", "true"][..], "is not a token"),
        (&["--param", "n=", "--", "true"][..], "is not a token"),
        (&["--param", "p=2", "--", "true"][..], "field pp computes"),
        (
            &["--param", "wall=2", "--", "true"][..],
            "field pp computes",
        ),
        (
            &["--param", "rc.cpu=2", "--", "true"][..],
            "field pp computes",
        ),
        (
            &["--param", "n=1", "--param", "n=2", "--", "true"][..],
            "'n=2': n given twice",
        ),
        (
            &["--param", "n=inf", "--", "true"][..],
            "not a finite number",
        ),
        (&["--log", ".", "--", "true"][..], "--log"),
        (
            &["--log", "no/such/dir/x.log", "--", "true"][..],
            "no directory",
        ),
        (
            &["--machine", "nonexistent.toml", "--", "true"][..],
            "--machine",
        ),
    ] {
        let out = pp_run(&dir, args);
        one_line(&out, 2, expected);
    }
}

#[test]
fn a_program_without_openmp_gets_a_one_line_diagnosis() {
    let dir = scratch("true");
    let out = pp_run(&dir, &["--", "true"]);
    one_line(&out, 1, "loaded no OpenMP runtime");
    assert!(stdout(&out).is_empty());
    assert!(!dir.join("pp.log").exists());
}

#[test]
fn exit_status_passes_through() {
    let dir = scratch("status");
    let out = pp_run(&dir, &["--", "sh", "-c", "exit 3"]);
    one_line(&out, 3, "wrote no log");
}

#[test]
fn a_program_killed_by_a_signal_gives_128_plus_the_signal() {
    let dir = scratch("signal");
    let out = pp_run(&dir, &["--", "sh", "-c", "kill -9 $$"]);
    one_line(&out, 128 + 9, "wrote no log");
}

#[test]
fn a_program_that_cannot_start_is_127_or_126_as_in_a_shell() {
    let dir = scratch("start");
    one_line(
        &pp_run(&dir, &["--", "no-such-program-here"]),
        127,
        "no-such-program-here: command not found",
    );
    std::fs::write(dir.join("plain"), "not a program").unwrap();
    one_line(
        &pp_run(&dir, &["--", "./plain"]),
        126,
        "./plain: cannot execute",
    );
}

#[test]
fn a_libgomp_program_is_named_as_such_and_leaves_no_log() {
    let dir = scratch("libgomp");
    let source = dir.join("gomp.c");
    std::fs::write(
        &source,
        "#include <omp.h>\nint main(void){int n=0;\n#pragma omp parallel\n{\n#pragma omp atomic\nn++;}\nreturn n>0?0:1;}\n",
    )
    .unwrap();
    let built = compile(
        std::process::Command::new("gcc")
            .args(["-fopenmp", "-o"])
            .arg(dir.join("gomp"))
            .arg(&source),
    );
    if built.is_err() {
        skip(
            "a_libgomp_program_is_named_as_such_and_leaves_no_log",
            "gcc -fopenmp cannot build a program here (tools/system-packages.sh installs clang, not gcc)",
        );
        return;
    }
    let out = pp_run(&dir, &["--", "./gomp"]);
    one_line(&out, 1, "GCC's OpenMP runtime (libgomp)");
    assert!(!dir.join("pp.log").exists());
    assert!(!dir.join("pp.log.tmp").exists());
}

/// A shell script standing in for a recorded program: prints a line, writes a text log of two
/// threads (an imbalanced loop: li = 40 ns of 200) whose header carries `$PP_PARAMS` to
/// `$PP_LOG` plus the suffix in `$1`; with a suffix it then kills itself.
const STAND_IN: &str = r#"#!/bin/sh
echo "program output"
printf 'pplog 1 p=2 %s\n0 0 start\n0 1 start\n0 0 region_begin 1 loop\n0 0 work_begin\n0 1 work_begin\n60 1 work_end\n100 0 work_end\n100 0 region_end 1\n100 0 stop\n100 1 stop\n' "$PP_PARAMS" > "$PP_LOG$1"
[ -n "$1" ] && kill -9 $$
exit 0
"#;

fn stand_in(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("recorded.sh");
    std::fs::write(&path, STAND_IN).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn the_log_of_the_run_is_profiled_as_pp_does() {
    let dir = scratch("profile");
    stand_in(&dir);
    let out = pp_run(&dir, &["--", "./recorded.sh"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("program output\nProcessors:"), "{text}");
    assert!(text.contains("Load Imbalance:                  0.000000040 s   20.0%"));

    // -l: the row with the parameters, and the program's output on standard error.
    let out = pp_run(
        &dir,
        &[
            "-l",
            "--log",
            "sub.log",
            "--param",
            "impl=dp",
            "--param",
            "n=4",
            "--",
            "./recorded.sh",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .starts_with("impl=dp n=4 p=2 wall=0.000000100 total=0.000000200 li=0.000000040 "),
        "{}",
        stdout(&out)
    );
    assert_eq!(stdout(&out).lines().count(), 1);
    assert_eq!(stderr(&out), "program output\n");
    assert!(dir.join("sub.log").exists());
}

#[test]
fn a_log_from_before_the_run_is_not_profiled() {
    let dir = scratch("stale");
    stand_in(&dir);
    assert!(pp_run(&dir, &["--", "./recorded.sh"]).status.success());
    let out = pp_run(&dir, &["--", "true"]);
    one_line(&out, 1, "wrote no log");
    assert!(stdout(&out).is_empty());
}

#[test]
fn a_program_that_died_is_profiled_from_its_tmp_log_with_a_warning() {
    let dir = scratch("died");
    stand_in(&dir);
    let out = pp_run(&dir, &["--", "./recorded.sh", ".tmp"]);
    assert_eq!(out.status.code(), Some(128 + 9), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("pp run: warning: ./recorded.sh left no finished log; profiling ")
            && err.contains("pp.log.tmp"),
        "{err}"
    );
    assert!(stdout(&out).contains("Load Imbalance:"), "{}", stdout(&out));
}

#[test]
fn pp_run_ignores_interrupts_while_the_program_runs_and_the_program_does_not() {
    // The program interrupts pp run, then exits 5: pp run is still there to pass 5 on.
    let dir = scratch("sigint");
    let out = pp_run(
        &dir,
        &["--", "sh", "-c", "kill -INT $PPID; sleep 0.2; exit 5"],
    );
    one_line(&out, 5, "wrote no log");

    // The program gets the disposition pp run had: here the default, so SIGINT ends it.
    // SAFETY: sigaction with no new action only reads the disposition.
    let ignored = unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(libc::SIGINT, std::ptr::null(), &mut old);
        old.sa_sigaction == libc::SIG_IGN
    };
    if ignored {
        eprintln!(
            "skipped: pp_run_ignores_interrupts_while_the_program_runs_and_the_program_does_not: the tests run with SIGINT ignored, so the program inherits that"
        );
        return;
    }
    let out = pp_run(&dir, &["--", "sh", "-c", "kill -INT $$; exit 4"]);
    one_line(&out, 128 + libc::SIGINT, "wrote no log");
}

/// The tool beside the `pp` under test (`deps/libpp_ompt.so` under `cargo test`), if built.
fn built_tool() -> Option<PathBuf> {
    let pp = PathBuf::from(env!("CARGO_BIN_EXE_pp"));
    let dir = pp.parent()?;
    [dir.join("libpp_ompt.so"), dir.join("deps/libpp_ompt.so")]
        .into_iter()
        .find(|p| p.is_file())
}

#[test]
fn a_clang_openmp_program_is_recorded_with_its_team_and_parameters() {
    let test = "a_clang_openmp_program_is_recorded_with_its_team_and_parameters";
    let Some(_tool) = built_tool() else {
        skip(
            test,
            "no libpp_ompt.so beside pp (cargo test --workspace or cargo build -p pp-ompt builds it)",
        );
        return;
    };
    let dir = scratch("clang");
    let source = dir.join("team.c");
    std::fs::write(
        &source,
        "#include <stdio.h>\n\
         static double spin(long n){double x=0;for(long i=0;i<n;i++)x+=i*1e-9;return x;}\n\
         int main(void){double s=0;\n\
         #pragma omp parallel num_threads(3) reduction(+:s)\n\
         { s+=spin(2000000); }\n\
         printf(\"program output %d\\n\", s>0);return 0;}\n",
    )
    .unwrap();
    let built = compile(
        std::process::Command::new("clang")
            .args(["-O1", "-fopenmp", "-o"])
            .arg(dir.join("team"))
            .arg(&source),
    );
    if built.is_err() {
        skip(
            test,
            "clang -fopenmp cannot build a program here (tools/system-packages.sh installs it)",
        );
        return;
    }
    let run = |args: &[&str]| {
        pp!()
            .env_remove("PP_OMPT_LIBRARY")
            .env_remove("OMP_NUM_THREADS")
            .current_dir(&dir)
            .arg("run")
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["--", "./team"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("program output 1\n"), "{text}");
    assert!(
        text.contains("Processors:                                3\n"),
        "{text}"
    );
    assert!(dir.join("pp.log").exists());

    let out = run(&[
        "-l", "--param", "impl=omp", "--param", "n=3", "--", "./team",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let row = stdout(&out);
    // The OpenMP tool adds libomp's blocktime (docs/openmp.md#the-runtimes-waits).
    let rest = row
        .strip_prefix("impl=omp n=3 omp_blocktime_ms=")
        .unwrap_or("");
    assert!(
        rest.split_once(' ')
            .is_some_and(|(ms, r)| ms.parse::<u64>().is_ok() && r.starts_with("p=3 wall=")),
        "{row}"
    );
    assert_eq!(row.lines().count(), 1, "{row}");
    assert!(
        stderr(&out).contains("program output 1\n"),
        "{}",
        stderr(&out)
    );
}

/// `pp run` started in `dir` with standard error to `dir/stderr`, for tests that signal it.
fn spawn_pp_run(dir: &Path, args: &[&str]) -> std::process::Child {
    let err = std::fs::File::create(dir.join("stderr")).unwrap();
    pp!()
        .env("PP_OMPT_LIBRARY", stand_in_tool())
        .current_dir(dir)
        .arg("run")
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(err)
        .spawn()
        .unwrap()
}

/// Whether a process is alive (not a zombie, not gone).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|s| {
        s.rsplit_once(')')
            .is_some_and(|(_, r)| !r.starts_with(" Z"))
    })
}

#[test]
fn sigterm_to_pp_run_reaches_the_program_and_what_it_started_and_pp_run_reports() {
    // The program writes a log header and waits for a child it started; SIGTERM to pp run
    // alone must stop both, and pp run must still report and remove the header-only .tmp.
    let dir = scratch("sigterm");
    let mut pp = spawn_pp_run(
        &dir,
        &[
            "--",
            "sh",
            "-c",
            "printf 'pplog 1 p=1\\n' > \"$PP_LOG.tmp\"; sleep 300 & echo $! > sleeper; touch ready; wait",
        ],
    );
    test_support::wait_for("the program's ready file", || dir.join("ready").exists());
    let sleeper = std::fs::read_to_string(dir.join("sleeper")).unwrap();
    assert!(alive(&sleeper));
    // SAFETY: kill has no memory preconditions.
    assert_eq!(unsafe { libc::kill(pp.id() as i32, libc::SIGTERM) }, 0);
    let status = pp.wait().unwrap();
    let err = std::fs::read_to_string(dir.join("stderr")).unwrap();
    assert_eq!(
        status.code(),
        Some(128 + libc::SIGTERM),
        "{status:?}: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(
            "pp run: sh was killed by signal 15 before its log held any event; removed "
        ) && err.contains("pp.log.tmp"),
        "{err}"
    );
    assert!(!dir.join("pp.log.tmp").exists());
    assert!(
        !alive(&sleeper),
        "the program's child {sleeper} outlived SIGTERM"
    );
}

#[test]
fn a_program_killed_before_its_log_held_an_event_leaves_no_tmp() {
    let dir = scratch("header-only");
    let out = pp_run(
        &dir,
        &[
            "--",
            "sh",
            "-c",
            "printf 'pplog 1 p=1\\n' > \"$PP_LOG.tmp\"; kill -9 $$",
        ],
    );
    one_line(
        &out,
        128 + 9,
        "sh was killed by signal 9 before its log held any event; removed ",
    );
    assert!(!dir.join("pp.log.tmp").exists());
    assert!(stdout(&out).is_empty());
}

#[test]
fn processes_that_outlive_the_program_are_named_and_waited_for() {
    let dir = scratch("outlive");
    let out = pp_run(
        &dir,
        &[
            "--",
            "sh",
            "-c",
            "(sleep 1; touch late) </dev/null >/dev/null 2>&1 & exit 3",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("pp run: warning: processes sh started outlived it (pid ")
            && err.contains("pp run waits for them"),
        "{err}"
    );
    assert!(dir.join("late").exists(), "pp run did not wait: {err}");
}

/// An OpenMP program killed by SIGSEGV halfway (thread 1 raises it inside the second parallel
/// region, while thread 0 still works there): `pp run` completes its log from the threads'
/// crash-safe buffers (docs/event-log.md, "Crash-safe buffers") and profiles it up to the last
/// recorded event, with the program's status. Before the buffers were mapped, the log held only
/// its header and pp said "nothing to attribute".
#[test]
fn a_clang_openmp_program_killed_by_sigsegv_halfway_is_profiled_up_to_its_crash() {
    let test = "a_clang_openmp_program_killed_by_sigsegv_halfway_is_profiled_up_to_its_crash";
    if built_tool().is_none() {
        skip(
            test,
            "no libpp_ompt.so beside pp (cargo test --workspace or cargo build -p pp-ompt builds it)",
        );
        return;
    }
    let dir = scratch("clang-crash");
    let source = dir.join("crash.c");
    std::fs::write(
        &source,
        "#include <omp.h>\n#include <signal.h>\n#include <stdio.h>\n\
         static double spin(long n){double x=0;for(long i=0;i<n;i++)x+=i*1e-9;return x;}\n\
         int main(void){double s=0;\n\
         #pragma omp parallel num_threads(2) reduction(+:s)\n\
         { s+=spin(2000000); }\n\
         printf(\"%d\\n\", s>0);fflush(stdout);\n\
         #pragma omp parallel num_threads(2) reduction(+:s)\n\
         { s+=spin(2000000); if(omp_get_thread_num()==1)raise(SIGSEGV); s+=spin(200000000); }\n\
         return s>0;}\n",
    )
    .unwrap();
    let built = compile(
        std::process::Command::new("clang")
            .args(["-O1", "-fopenmp", "-o"])
            .arg(dir.join("crash"))
            .arg(&source),
    );
    if built.is_err() {
        skip(
            test,
            "clang -fopenmp cannot build a program here (tools/system-packages.sh installs it)",
        );
        return;
    }
    let out = pp!()
        .env_remove("PP_OMPT_LIBRARY")
        .env_remove("PP_BUFFER_EVENTS")
        .env_remove("PP_CRASH_SAFE")
        .current_dir(&dir)
        .args(["run", "--", "./crash"])
        .output()
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(128 + libc::SIGSEGV), "{err}");
    assert!(!err.contains("nothing to attribute"), "{err}");
    assert!(
        err.lines().any(|l| l.starts_with(
            "pp run: warning: ./crash was killed by signal 11: profiled up to its last recorded event ("
        )),
        "{err}"
    );
    assert!(stdout(&out).contains("Processors:"), "{err}");
    for f in ["pp.log.tmp", "pp.log.tmp.buffers", "pp.log.tmp.names"] {
        assert!(!dir.join(f).exists(), "{f} is left");
    }
    // Both threads' work in the first region, and in the second up to the crash, is there.
    let row = pp!()
        .current_dir(&dir)
        .args(["-l", "pp.log"])
        .output()
        .unwrap();
    let row = String::from_utf8_lossy(&row.stdout).into_owned();
    let value = |key: &str| -> f64 {
        row.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {row}"))
    };
    assert_eq!(value("p"), 2.0, "{row}");
    assert!(value("pc") > 0.0, "{row}");
    let by_thread = pp!()
        .current_dir(&dir)
        .args(["--by", "thread", "pp.log"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&by_thread.stdout)
            .lines()
            .filter(|l| l.starts_with("thread 0 ") || l.starts_with("thread 1 "))
            .count(),
        2,
        "{}",
        String::from_utf8_lossy(&by_thread.stdout)
    );
}
