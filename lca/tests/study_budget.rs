//! `lca study` ends whatever its runs and inputs do: runs that keep failing spend the retry
//! budget (`max_failures`, docs/study-file.md) and end the study with one line naming the
//! command, `[precision]` included (it re-ran a failing point forever); a datafile or machine
//! file that is a FIFO is refused before anything waits on it (it blocked, deaf to Ctrl-C).
//!
//! Each study runs under a generous cap that only turns a hang into a failure.

mod support;

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use support::lca;
use test_support::{scratch, write};

/// A run writes a valid log for its `n` (replicate 1 only, with `$2` = `first`).
const WORKLOAD: &str = r#"n=$1
if [ "$2" = first ] && [ "$3" != 1 ]; then echo "only the first replicate" >&2; exit 4; fi
printf 'pplog 1 p=1\n0 0 start\n0 0 work_begin\n100 0 work_end\n%s 0 stop\n' $((100 + n)) > "$PP_LOG""#;

/// The workload's command, as the study file writes it.
fn workload(mode: &str) -> String {
    format!("[\"sh\", \"-c\", '''{WORKLOAD}''', \"sh\", \"{{n}}\", \"{mode}\", \"{{replicate}}\"]")
}

/// `lca study s.toml` in `dir`, killed (and the test failed) if it has not ended in 2 minutes.
fn run(dir: &Path) -> Output {
    let mut child = lca()
        .current_dir(dir)
        .args(["study", "s.toml"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "lca study still runs after 2 minutes: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// A study over n = 1..4 with `[precision]`, its `top` lines before the factors and `command`.
fn study(dir: &Path, top: &str, command: &str) {
    let _ = std::fs::remove_dir_all(dir.join("study-s"));
    let text = format!(
        "name = \"s\"\ndesign = \"full\"\n{top}\n[factors]\nn = \"1,2,3,4\"\n\n\
         [precision]\ntarget = 0.001\nmax_replicates = 1000\n\n\
         [[implementation]]\nname = \"a\"\ncommand = {command}\n"
    );
    write(dir, "s.toml", &text);
}

/// The runs the study made: the standard error files of its runs.
fn runs(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("study-s/logs")).map_or(0, |d| {
        d.filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "err"))
        })
        .count()
    })
}

#[test]
fn runs_that_always_fail_spend_the_retry_budget_and_stop_the_study() {
    let dir = scratch("study-budget");
    // (top-level lines, command, the failure, the command as the error names it)
    let cases = [
        (
            "",
            r#"["/nonexistent/prog", "{n}"]"#.to_string(),
            "cannot start '/nonexistent/prog': No such file or directory",
            "/nonexistent/prog {n}",
        ),
        (
            "timeout_s = 1e-9",
            r#"["sleep", "1", "{n}"]"#.to_string(),
            "timed out after 0.000000001 s and was killed",
            "sleep 1 {n}",
        ),
        (
            "",
            r#"["sh", "-c", "exti $0", "{n}"]"#.to_string(),
            "exited with status 127",
            "sh -c exti $0 {n}",
        ),
        (
            "max_failures = 2",
            r#"["/nonexistent/prog", "{n}"]"#.to_string(),
            "cannot start '/nonexistent/prog'",
            "/nonexistent/prog {n}",
        ),
    ];
    for (top, command, failure, named) in cases {
        study(&dir, top, &command);
        let out = run(&dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        let budget = if top.starts_with("max_failures") {
            2
        } else {
            3
        };
        assert_eq!(runs(&dir), budget, "{command}: {stderr}");
        let last = stderr.trim_end().lines().last().unwrap();
        assert!(
            last.starts_with(&format!(
                "Error: a: {budget} runs in a row failed, the last (a n={budget}) "
            )) && last.contains(failure)
                && last.ends_with(&format!(
                    "the study stops there (max_failures = {budget}): is its command right? \
                     {named}"
                )),
            "{command}: {stderr}"
        );
        assert!(!dir.join("study-s/s.dat").exists());
    }
}

#[test]
fn a_point_whose_replicate_fails_gets_no_more_runs_and_the_study_ends() {
    // Every point's first run is measured, every second one fails: [precision] wants more of
    // each (one run has no spread), and asked for them under a new replicate number forever.
    let dir = scratch("study-replicate-fails");
    study(&dir, "max_failures = 10", &workload("first"));
    let out = run(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert_eq!(
        runs(&dir),
        8,
        "4 first runs, 4 failed second ones: {stderr}"
    );
    assert_eq!(
        stderr.matches("only the first replicate").count(),
        4,
        "{stderr}"
    );
    assert!(
        stderr
            .trim_end()
            .ends_with("Error: 4 of 8 runs failed (reported above, with their standard error); run the study again to retry them"),
        "{stderr}"
    );
}

#[test]
fn a_datafile_or_machine_file_that_is_a_fifo_is_refused_before_any_wait() {
    let dir = scratch("study-fifo-inputs");
    let fifo = dir.join("fifo");
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let command = workload("all");
    let second = format!("[[implementation]]\nname = \"b\"\ncommand = {command}\n");
    // (the top-level line, a table to add, the error)
    let datafile = format!(
        "Error: {}: the datafile is not a regular file (a FIFO): name a file in the study \
         file's `datafile`",
        fifo.display()
    );
    let cases = [
        (
            format!("datafile = \"{}\"", fifo.display()),
            String::new(),
            datafile.clone(),
        ),
        (
            format!("datafile = \"{}\"", fifo.display()),
            format!("{second}\n[decide]\nbudget = 4\n"),
            datafile,
        ),
        (
            format!("machine = \"{}\"", fifo.display()),
            String::new(),
            format!(
                "Error: {}: the machine file is not a regular file (a FIFO): reading it might \
                 never end; give the path of a file",
                fifo.display()
            ),
        ),
    ];
    for (top, more, error) in cases {
        study(&dir, &top, &command);
        let path = dir.join("s.toml");
        let text = std::fs::read_to_string(&path).unwrap() + &more;
        std::fs::write(&path, text).unwrap();
        let out = run(&dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{top}: {stderr}");
        assert!(stderr.trim_end().ends_with(&error), "{top}: {stderr}");
        assert_eq!(runs(&dir), 0, "{top}: no run was made");
    }
}
