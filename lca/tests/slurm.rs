//! `lca study --dispatch slurm` end to end on a real single-node Slurm, which the tests start
//! with `tools/slurm-local.sh start` (once per test binary; they leave it running, as the next
//! test binary or CI run then finds it up at once: `tools/slurm-local.sh stop` stops it).
//! Without root, apt or a cluster that comes up, each test passes and says on standard error
//! what it skipped and why. No mock scheduler.
//!
//! A fake workload (a `sh` script given as an argument vector) writes text logs whose times
//! depend only on p and n, so a run's row is the same wherever and however it is made: the
//! rows Slurm's runs give are compared whole with a local run's.
//!
//! Also `--jobs N` (local runs at a time), which needs no Slurm.

mod support;

use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use test_support::{one_at_a_time, repository, scratch, skip, wait_for_every, write};

/// Writes a valid text log to $PP_LOG for p = $1, n = $2. Exits 1 with a message on standard
/// error when $4 names this point (`n,p`). While the file `$3/hold` exists, the run of impl a
/// at n=128 p=1 waits until `$3/release` appears (a study stopped while a job is surely still
/// queued or running, whatever the machine's load).
const FAKE: &str = r#"p=$1; n=$2
if [ -e "$3/hold" ] && [ "$5,$n,$p" = "a,128,1" ]; then
  while [ ! -e "$3/release" ]; do sleep 0.05; done
fi
if [ "$n,$p" = "$4" ]; then echo "fake: cannot do n=$n p=$p" >&2; exit 1; fi
w=$(( n * p + 10 * n )); end=$(( w + 7 ))
{ printf 'pplog 1 p=%s n=%s\n0 0 start\n0 0 work_begin\n%s 0 work_end\n%s 0 stop\n' $p $n $w $end
  i=1; while [ $i -lt $p ]; do printf '0 %s start\n0 %s work_begin\n%s %s work_end\n%s %s stop\n' $i $i $n $i $end $i; i=$((i+1)); done
} > "$PP_LOG""#;

/// The runs of [`study`]: 3 levels of n by 2 of p, full design, for two implementations.
const RUNS: usize = 12;

/// A study of the fake workload, dispatched to Slurm by its file; impl a asks for p CPUs per
/// run when `cpus` (a resource from the point's factors), impl b for one task.
fn study(dir: &Path, fail_at: &str, cpus: bool) -> PathBuf {
    let command = |name: &str, resources: &str| {
        format!(
            "[[implementation]]\nname = \"{name}\"\n{resources}\ncommand = [\"sh\", \"-c\", \
             '''{FAKE}''', \"sh\", \"{{p}}\", \"{{n}}\", \"{}\", \"{fail_at}\", \"{{impl}}\"]\n",
            dir.display()
        )
    };
    let a = if cpus { "cpus_per_task = \"{p}\"" } else { "" };
    let text = format!(
        "name = \"fake\"\ntimeout_s = 60\ndesign = \"full\"\ndispatch = \"slurm\"\n\n\
         [factors]\nn = \"32,64,128\"\np = \"1,2\"\n\n[slurm]\nmax_running = 4\n\
         options = [\"--comment=lca-test\"]\n\n{}\n{}",
        command("a", a),
        command("b", "ntasks = 1")
    );
    write(dir, "fake.toml", &text)
}

/// The local cluster's config, in tools/slurm-local.sh's state folder.
fn slurm_conf() -> PathBuf {
    let dir = std::env::var_os("LCA_SLURM_DIR").unwrap_or_else(|| "/var/lib/lca-slurm".into());
    PathBuf::from(dir).join("slurm.conf")
}

/// Starts the local Slurm once; why it cannot run, if it cannot.
fn slurm() -> &'static Result<(), String> {
    static UP: OnceLock<Result<(), String>> = OnceLock::new();
    UP.get_or_init(|| {
        let out = Command::new(repository().join("tools/slurm-local.sh"))
            .arg("start")
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("cannot run tools/slurm-local.sh: {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        Err(said
            .trim()
            .lines()
            .last()
            .unwrap_or("no output")
            .to_string())
    })
}

/// The cluster for one test at a time (the node has the machine's cores, maybe 2, and a
/// held job keeps one), or none, saying why, when it cannot run.
fn up(test: &str) -> Option<MutexGuard<'static, ()>> {
    match slurm() {
        Ok(()) => Some(one_at_a_time()),
        Err(why) => {
            skip(
                test,
                format!("no local Slurm: {why} (tools/slurm-local.sh starts it)"),
            );
            None
        }
    }
}

fn lca(dir: &Path) -> Command {
    let mut command = support::lca();
    command
        .current_dir(dir)
        .env("SLURM_CONF", slurm_conf())
        .stdin(Stdio::null());
    command
}

fn run(dir: &Path, args: &[&str]) -> Output {
    lca(dir).arg("study").args(args).output().unwrap()
}

/// The datafile's rows, as a set (order free), checking that none is there twice.
fn rows(dir: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(dir.join("study-fake/fake.dat")).unwrap_or_default();
    assert!(text.is_empty() || text.ends_with('\n'), "{text}");
    let set: BTreeSet<String> = text.lines().map(str::to_string).collect();
    assert_eq!(set.len(), text.lines().count(), "a row twice:\n{text}");
    set
}

/// The rows of the same study made locally, one run at a time (made once).
fn local_rows() -> &'static BTreeSet<String> {
    static ROWS: OnceLock<BTreeSet<String>> = OnceLock::new();
    ROWS.get_or_init(|| {
        let dir = scratch("slurm-local");
        study(&dir, "-", true);
        let out = run(&dir, &["fake.toml", "--dispatch", "local"]);
        assert!(out.status.success(), "{}", text(&out));
        let rows = rows(&dir);
        assert_eq!(rows.len(), RUNS);
        rows
    })
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Waits until `done()` holds, asking every 50 ms (each asking may run `squeue`); a safety
/// cap of 5 minutes turns a hang into a failure.
fn wait_for(what: &str, done: impl FnMut() -> bool) {
    wait_for_every(what, Duration::from_millis(50), done);
}

/// The jobs the study in `dir` recorded that Slurm still lists.
fn left_in_queue(dir: &Path) -> Vec<String> {
    let recorded = std::fs::read_to_string(dir.join("study-fake/slurm/jobs")).unwrap_or_default();
    let out = Command::new("squeue")
        .args(["-h", "-r", "-o", "%i"])
        .env("SLURM_CONF", slurm_conf())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let queued: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().to_string())
        .collect();
    recorded
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|j| queued.contains(*j))
        .map(str::to_string)
        .collect()
}

#[test]
fn a_study_through_slurm_gives_the_local_rows() {
    let Some(_one) = up("a_study_through_slurm_gives_the_local_rows") else {
        return;
    };
    let dir = scratch("slurm-whole");
    study(&dir, "-", true);
    let out = run(&dir, &["fake.toml"]);
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Two resource requests (a: 1 or 2 CPUs; b: one task) and so three arrays.
    assert!(
        stderr.contains(&format!("{RUNS} jobs submitted to Slurm (job arrays ")),
        "{stderr}"
    );
    assert_eq!(&rows(&dir), local_rows());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("study fake: 12 runs, 12 made now"),
        "{stdout}"
    );
    // Every job recorded, its array's script and Slurm's files in the study's folder.
    let jobs = std::fs::read_to_string(dir.join("study-fake/slurm/jobs")).unwrap();
    assert_eq!(jobs.lines().count(), RUNS, "{jobs}");
    let arrays: BTreeSet<&str> = jobs.lines().filter_map(|l| l.split('_').next()).collect();
    assert_eq!(arrays.len(), 3, "{jobs}");
    let scripts = std::fs::read_dir(dir.join("study-fake/slurm"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".sh")
        })
        .count();
    assert_eq!(scripts, 3);
    assert!(left_in_queue(&dir).is_empty());

    // Started again: nothing to submit, nothing changes.
    let out = run(&dir, &["fake.toml"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("0 made now"), "{}", text(&out));
    assert_eq!(&rows(&dir), local_rows());
}

#[test]
fn a_study_stopped_midway_cancels_its_jobs_and_resumes() {
    let Some(_one) = up("a_study_stopped_midway_cancels_its_jobs_and_resumes") else {
        return;
    };
    let dir = scratch("slurm-stopped");
    study(&dir, "-", false);
    std::fs::write(dir.join("hold"), "").unwrap();
    let mut child = lca(&dir)
        .args(["study", "fake.toml"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Some rows, and the held run (a n=128 p=1) surely not done.
    wait_for("a row", || {
        assert!(child.try_wait().unwrap().is_none(), "lca study ended");
        !rows(&dir).is_empty()
    });
    // SAFETY: plain system call on our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let said = text(&out);
    assert_eq!(out.status.code(), Some(130), "{said}");
    assert!(
        said.contains("lca study: cancelled the study's ") && said.contains("(scancel, arrays "),
        "{said}"
    );
    assert!(said.contains("`lca study fake.toml` resumes"), "{said}");
    let partial = rows(&dir);
    assert!(!partial.is_empty() && partial.len() < RUNS, "{partial:?}");
    assert!(partial.is_subset(local_rows()), "{partial:?}");
    wait_for("the cancelled jobs to leave the queue", || {
        left_in_queue(&dir).is_empty()
    });

    // Resumed, with nothing held: only the missing points are submitted, but for those whose
    // jobs had finished when the cancel came (their results are collected, not run again: how
    // many depends on the moment of the SIGINT).
    std::fs::remove_file(dir.join("hold")).unwrap();
    let out = run(&dir, &["fake.toml"]);
    assert!(out.status.success(), "{}", text(&out));
    let missing = RUNS - partial.len();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let submission = stderr
        .find(" jobs submitted to Slurm")
        .unwrap_or(stderr.len());
    let before = &stderr[..submission];
    let collected = before.lines().filter(|l| l.starts_with('[')).count();
    let submitted: usize = before
        .lines()
        .last()
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert_eq!(collected + submitted, missing, "{stderr}");
    assert!(submitted > 0, "{stderr}");
    assert_eq!(&rows(&dir), local_rows());
    assert!(left_in_queue(&dir).is_empty());
}

#[test]
fn a_job_left_running_by_a_killed_study_is_not_submitted_twice() {
    let Some(_one) = up("a_job_left_running_by_a_killed_study_is_not_submitted_twice") else {
        return;
    };
    let dir = scratch("slurm-killed");
    study(&dir, "-", false);
    std::fs::write(dir.join("hold"), "").unwrap();
    let mut child = lca(&dir)
        .args(["study", "fake.toml"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Every run but the held one gave its row; then lca dies with no chance to cancel.
    wait_for("all rows but one", || {
        assert!(child.try_wait().unwrap().is_none(), "lca study ended");
        rows(&dir).len() == RUNS - 1
    });
    child.kill().unwrap();
    child.wait().unwrap();
    let held = left_in_queue(&dir);
    assert_eq!(held.len(), 1, "{held:?}");

    // Started again while the held job still runs: it is waited for, then released.
    let mut restarted = lca(&dir)
        .args(["study", "fake.toml"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let said = Arc::new(Mutex::new(String::new()));
    let reader = {
        let (said, mut stderr) = (said.clone(), restarted.stderr.take().unwrap());
        std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut buffer) {
                let mut said = said.lock().unwrap();
                said.push_str(&String::from_utf8_lossy(&buffer[..n]));
            }
        })
    };
    let adopted = "0 jobs submitted to Slurm; 1 from an earlier start still queued or running";
    wait_for("the held job adopted", || {
        said.lock().unwrap().contains(adopted)
    });
    std::fs::write(dir.join("release"), "").unwrap();
    let status = restarted.wait().unwrap();
    reader.join().unwrap();
    assert!(status.success(), "{}", said.lock().unwrap());
    assert_eq!(&rows(&dir), local_rows());
    let jobs = std::fs::read_to_string(dir.join("study-fake/slurm/jobs")).unwrap();
    assert_eq!(jobs.lines().count(), RUNS, "{jobs}");
}

#[test]
fn a_failing_job_is_reported_with_its_standard_error() {
    let Some(_one) = up("a_failing_job_is_reported_with_its_standard_error") else {
        return;
    };
    let dir = scratch("slurm-failing");
    study(&dir, "64,2", true);
    let out = run(&dir, &["fake.toml"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for name in ["a", "b"] {
        let line = format!("lca study: {name} n=64 p=2: job ");
        let at = stderr.find(&line).unwrap_or_else(|| panic!("{stderr}"));
        let report = &stderr[at..];
        assert!(
            report.contains(": exited with status 1; standard error (")
                && report.contains("fake: cannot do n=64 p=2"),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains("Error: 2 of 12 runs failed (reported above, with their standard error)"),
        "{stderr}"
    );
    let made = rows(&dir);
    assert_eq!(made.len(), RUNS - 2);
    assert!(made.is_subset(local_rows()));
    assert!(!made.iter().any(|r| r.contains("n=64 p=2")));
}

#[test]
fn jobs_slurm_will_never_start_stop_the_study_after_the_others() {
    let Some(_one) = up("jobs_slurm_will_never_start_stop_the_study_after_the_others") else {
        return;
    };
    let dir = scratch("slurm-never");
    // Impl a asks for p CPUs per run: 4096 is more than any node of the local cluster has,
    // which Slurm accepts and leaves pending (reason PartitionConfig) for ever.
    let path = study(&dir, "-", true);
    let file = std::fs::read_to_string(&path)
        .unwrap()
        .replacen("p = \"1,2\"", "p = \"1,4096\"", 1);
    write(&dir, "fake.toml", &file);
    let mut child = lca(&dir)
        .args(["study", "fake.toml"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // (Before, it waited for them for ever: the cap of wait_for ends that.)
    wait_for("the study to stop", || child.try_wait().unwrap().is_some());
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(1), "{stderr}");
    // Said as soon as seen, while the other runs went on.
    assert!(
        stderr.contains(
            "lca study: warning: Slurm will not start 3 of the study's jobs as the cluster is \
             configured: a n=32 p=4096 and 2 more (--cpus-per-task=4096) pend with reason \
             PartitionConfig"
        ),
        "{stderr}"
    );
    // Every other run made its row; then the study stopped, cancelling the three.
    assert_eq!(rows(&dir).len(), RUNS - 3, "{stderr}");
    let last = stderr.trim_end().lines().last().unwrap_or("");
    assert!(
        last.starts_with(
            "Error: Slurm will not start the study's last 3 jobs as the cluster is configured: \
             a n=32 p=4096 and 2 more (--cpus-per-task=4096) pend with reason PartitionConfig: \
             the request is beyond what the partition or its nodes have. They are cancelled"
        ),
        "{stderr}"
    );
    assert!(left_in_queue(&dir).is_empty(), "{stderr}");
}

#[test]
fn slurm_options_in_the_study_file_are_checked() {
    let dir = scratch("slurm-options");
    let path = study(&dir, "-", true);
    let good = std::fs::read_to_string(&path).unwrap();
    let bad = |from: &str, to: &str, wanted: &str| {
        write(&dir, "bad.toml", &good.replacen(from, to, 1));
        let out = run(&dir, &["bad.toml"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(stderr.contains(wanted), "{wanted}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    };
    bad(
        "dispatch = \"slurm\"",
        "dispatch = \"pbs\"",
        "bad.toml:4: dispatch = \"pbs\": expected \"local\" or \"slurm\"",
    );
    bad(
        "max_running = 4",
        "max_running = 0",
        "max_running = 0: expected 1 to 100000 jobs",
    );
    bad(
        "cpus_per_task = \"{p}\"",
        "cpus_per_task = \"{q}\"",
        "unknown placeholder {q} in cpus_per_task of 'a'",
    );
    bad(
        "ntasks = 1",
        "ntasks = 0",
        "ntasks = 0: expected a positive integer",
    );
    bad("[slurm]", "[slurm]\nqueue = \"x\"", "unknown field `queue`");
    // --jobs is for local runs only.
    let out = run(&dir, &["fake.toml", "--jobs", "2"]);
    assert!(
        text(&out).contains("Error: --jobs is for local runs"),
        "{}",
        text(&out)
    );
}

#[test]
fn local_runs_made_jobs_at_a_time_give_the_same_rows_and_a_warning() {
    let dir = scratch("slurm-jobs");
    study(&dir, "-", true);
    let out = run(&dir, &["fake.toml", "--dispatch", "local", "--jobs", "3"]);
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("lca study: warning: --jobs 3: runs made at the same time compete"),
        "{stderr}"
    );
    assert_eq!(&rows(&dir), local_rows());
}

#[test]
fn precision_rounds_go_through_slurm_too() {
    let Some(_one) = up("precision_rounds_go_through_slurm_too") else {
        return;
    };
    let dir = scratch("slurm-precision");
    let path = study(&dir, "-", false);
    let file = std::fs::read_to_string(&path).unwrap().replacen(
        "[factors]",
        "[precision]\ntarget = 0.5\nmax_replicates = 2\n\n[factors]",
        1,
    );
    write(&dir, "fake.toml", &file);
    let out = run(&dir, &["fake.toml"]);
    assert!(out.status.success(), "{}", text(&out));
    // A point with one run has no spread: every point gets a second, in a second round of
    // arrays; the fake's runs do not vary, so that is all.
    let said = text(&out);
    assert_eq!(
        said.matches("12 jobs submitted to Slurm").count(),
        2,
        "{said}"
    );
    let made = rows(&dir);
    assert_eq!(made.len(), 2 * RUNS);
    for row in local_rows() {
        assert!(made.contains(row), "{row}");
        let second = row.replace("replicate=1", "replicate=2");
        assert!(made.contains(&second), "{second}");
    }
}

#[test]
fn a_job_cancelled_outside_the_study_is_reported_lost() {
    let Some(_one) = up("a_job_cancelled_outside_the_study_is_reported_lost") else {
        return;
    };
    let dir = scratch("slurm-lost");
    study(&dir, "-", false);
    std::fs::write(dir.join("hold"), "").unwrap();
    let mut child = lca(&dir)
        .args(["study", "fake.toml"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for("all rows but one", || {
        assert!(child.try_wait().unwrap().is_none(), "lca study ended");
        rows(&dir).len() == RUNS - 1
    });
    let held = left_in_queue(&dir);
    assert_eq!(held.len(), 1, "{held:?}");
    let out = Command::new("scancel")
        .args(&held)
        .env("SLURM_CONF", slurm_conf())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    // Gone from the queue without a completion file: reported after the grace period.
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "lca study: a n=128 p=1: job {} left Slurm's queue without writing its completion file",
            held[0]
        )),
        "{stderr}"
    );
    // What Slurm said of it, from the job's own .err.
    assert!(stderr.contains("CANCELLED"), "{stderr}");
    assert_eq!(rows(&dir).len(), RUNS - 1);
}

#[test]
fn local_runs_made_jobs_at_a_time_stop_on_ctrl_c_and_resume() {
    let dir = scratch("slurm-jobs-stopped");
    study(&dir, "-", true);
    std::fs::write(dir.join("hold"), "").unwrap();
    let mut child = lca(&dir)
        .args(["study", "fake.toml", "--dispatch", "local", "--jobs", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // One worker holds a n=128 p=1; the other makes every other run.
    wait_for("all rows but one", || {
        assert!(child.try_wait().unwrap().is_none(), "lca study ended");
        rows(&dir).len() == RUNS - 1
    });
    // SAFETY: plain system call on our own child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("`lca study fake.toml --dispatch local --jobs 2` resumes"),
        "{stderr}"
    );
    assert_eq!(rows(&dir).len(), RUNS - 1);
    std::fs::remove_file(dir.join("hold")).unwrap();
    let out = run(&dir, &["fake.toml", "--dispatch", "local", "--jobs", "2"]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(&rows(&dir), local_rows());
}
