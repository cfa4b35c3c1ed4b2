//! `lca study` owns its runs and its files: a stopping signal or a kill leaves no process of a
//! run alive, a second study in the same folder is refused, an append that fails leaves the
//! datafile's old bytes and no temporary file, and no number in a study file panics.
//!
//! Nothing here waits on the clock: a test waits for a file a run writes, or for a process to
//! be gone, with a generous cap that only turns a hang into a failure.

mod support;

use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::{error_of, lca};
use test_support::{limit, scratch, wait_for, write};

/// A run of `n=1` writes a valid log at once. A run of `n=2`, while `<dir>/hold` exists, writes
/// `$$` (its pid, which is its process group's id) to `<dir>/started` and waits on a `sleep`
/// in its group (a grandchild of lca); without `hold` it writes the log too. The recorder's
/// temporary log `$PP_LOG.tmp` is made first, as a run killed mid-way leaves it.
const WORKLOAD: &str = r#"dir=$1; n=$2
: > "$PP_LOG.tmp"
if [ "$n" = 2 ] && [ -e "$dir/hold" ]; then
  sleep 300 &
  echo $$ > "$dir/started.tmp"; mv "$dir/started.tmp" "$dir/started"
  wait; exit 0
fi
if [ "$n" = 3 ]; then echo "cannot do n=3" >&2; exit 3; fi
printf 'pplog 1 p=1\n0 0 start\n0 0 work_begin\n100 0 work_end\n107 0 stop\n' > "$PP_LOG""#;

/// The study `safe` over n (its levels given), in `dir`; the file's path.
fn study(dir: &Path, levels: &str, command: &str) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir.join("study-safe"));
    for file in ["hold", "started"] {
        let _ = std::fs::remove_file(dir.join(file));
    }
    let text = format!(
        "name = \"safe\"\ndesign = \"full\"\ntimeout_s = 600\n\n[factors]\nn = \"{levels}\"\n\n\
         [[implementation]]\nname = \"a\"\ncommand = {command}\n"
    );
    write(dir, "safe.toml", &text)
}

/// The workload's command, for `study`.
fn workload(dir: &Path) -> String {
    format!(
        "[\"sh\", \"-c\", '''{WORKLOAD}''', \"sh\", \"{}\", \"{{n}}\"]",
        dir.display()
    )
}

fn start(dir: &Path) -> Child {
    lca()
        .current_dir(dir)
        .args(["study", "safe.toml"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// `lca study safe.toml` in `dir` under a resource limit.
fn limited(dir: &Path, resource: libc::__rlimit_resource_t, bytes: u64) -> Command {
    let mut command = lca();
    command.current_dir(dir).args(["study", "safe.toml"]);
    limit(&mut command, resource, bytes);
    command
}

/// The process group of the held run (`n=2`), once it has started.
fn held_run(dir: &Path) -> i32 {
    let started = dir.join("started");
    wait_for("the held run", || started.exists());
    std::fs::read_to_string(&started)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

/// The processes of group `pgid` that are alive (not zombies, which only wait to be reaped).
fn alive_in_group(pgid: i32) -> Vec<String> {
    let mut alive = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid pgrp ...
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && !matches!(fields[0], "Z" | "X") {
            alive.push(stat.trim().to_string());
        }
    }
    alive
}

/// The group is gone: every process of it ends (SIGKILL is delivered at once, but a process
/// dies when next scheduled).
fn assert_group_gone(pgid: i32) {
    let mut alive = Vec::new();
    let begun = Instant::now();
    while begun.elapsed() < Duration::from_secs(60) {
        alive = alive_in_group(pgid);
        if alive.is_empty() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("processes of the run's group {pgid} outlived lca: {alive:?}");
}

/// The `*.tmp` files in the study's logs folder.
fn tmp_files(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir.join("study-safe/logs"))
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "tmp"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_stopping_signal_kills_the_run_s_whole_group_and_says_how_to_resume() {
    for (signal, name) in [
        (libc::SIGTERM, "SIGTERM"),
        (libc::SIGINT, "SIGINT"),
        (libc::SIGHUP, "SIGHUP"),
    ] {
        let dir = scratch(&format!("study-signal-{name}"));
        study(&dir, "1,2", &workload(&dir));
        std::fs::write(dir.join("hold"), "").unwrap();
        let lca = start(&dir);
        let pgid = held_run(&dir);
        assert_ne!(pgid, lca.id() as i32, "the run has a group of its own");
        // To lca alone, not to its group (as `kill PID` does).
        assert_eq!(unsafe { libc::kill(lca.id() as i32, signal) }, 0);
        let out = lca.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(128 + signal), "{name}: {stderr}");
        let last = stderr.trim_end().lines().last().unwrap_or("");
        assert!(
            last.starts_with(&format!("lca study: stopped by {name} after 1 of 2 runs"))
                && last.ends_with("`lca study safe.toml` resumes"),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
        assert_group_gone(pgid);
        // The finished run's row, whole; the stopped run's temporary log removed.
        let data = std::fs::read_to_string(dir.join("study-safe/safe.dat")).unwrap();
        assert_eq!(data.lines().count(), 1, "{data}");
        assert!(data.ends_with('\n') && data.contains(" n=1 "), "{data}");
        assert_eq!(tmp_files(&dir), Vec::<PathBuf>::new());
    }
}

#[test]
fn a_killed_study_leaves_no_process_of_its_run_alive() {
    // The run's shell gets the kernel's death signal; the `sleep` it started, the watchdog's.
    let dir = scratch("study-sigkill");
    study(&dir, "1,2", &workload(&dir));
    std::fs::write(dir.join("hold"), "").unwrap();
    let mut lca = start(&dir);
    let pgid = held_run(&dir);
    lca.kill().unwrap();
    let status = lca.wait().unwrap();
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    assert_group_gone(pgid);
}

#[test]
fn a_second_study_in_the_folder_is_refused_naming_the_first() {
    let dir = scratch("study-lock");
    study(&dir, "1,2", &workload(&dir));
    std::fs::write(dir.join("hold"), "").unwrap();
    let mut first = start(&dir);
    let pgid = held_run(&dir);

    let out = start(&dir).wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        format!(
            "Error: study-safe: another lca study (pid {}) is running in this folder; wait for \
             it to end or stop it, then start again",
            first.id()
        )
    );

    // Killed outright, the first leaves no stale lock: the next start runs the study.
    first.kill().unwrap();
    first.wait().unwrap();
    assert_group_gone(pgid);
    std::fs::remove_file(dir.join("hold")).unwrap();
    let out = start(&dir).wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    // The first made n=1's row before it was killed.
    assert!(
        stdout.contains("study safe: 2 runs, 1 made now") && stdout.contains("1 measured earlier"),
        "{stdout}"
    );
}

#[test]
fn a_failed_append_leaves_the_datafile_s_old_bytes_and_no_temporary_file() {
    let dir = scratch("study-full");
    study(&dir, "1,2", &workload(&dir));
    std::fs::create_dir_all(dir.join("study-safe")).unwrap();
    let datafile = dir.join("study-safe/safe.dat");
    let old = format!("# {}\n", "x".repeat(4000));
    std::fs::write(&datafile, &old).unwrap();
    // Files lca (and its runs) write may grow to 20 bytes past the datafile: the row's first
    // bytes fit, then the write fails with EFBIG ("File too large") as on a full disk.
    let mut command = limited(&dir, libc::RLIMIT_FSIZE, old.len() as u64 + 20);
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim_end().lines().last().unwrap_or(""),
        "Error: study-safe/safe.dat: cannot write: File too large (os error 27) (the partial \
         write was removed; the file is as it was)"
    );
    assert_eq!(std::fs::read_to_string(&datafile).unwrap(), old);
    assert_eq!(tmp_files(&dir), Vec::<PathBuf>::new());
}

#[test]
fn failed_and_timed_out_runs_leave_no_temporary_file() {
    let dir = scratch("study-tmp");
    // n=3 fails; n=2 (held) outlives its timeout.
    let path = study(&dir, "1,2,3", &workload(&dir));
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("timeout_s = 600", "timeout_s = 0.5");
    std::fs::write(&path, text).unwrap();
    std::fs::write(dir.join("hold"), "").unwrap();
    let out = start(&dir).wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("a n=2: timed out after 0.5 s"), "{stderr}");
    assert!(stderr.contains("a n=3: exited with status 3"), "{stderr}");
    assert_group_gone(held_run(&dir));
    assert_eq!(tmp_files(&dir), Vec::<PathBuf>::new());
    let data = std::fs::read_to_string(dir.join("study-safe/safe.dat")).unwrap();
    assert_eq!(data.lines().count(), 1, "{data}");
}

#[test]
fn no_number_in_a_study_file_panics() {
    let dir = scratch("study-numbers");
    let good = std::fs::read_to_string(study(&dir, "1,2", &workload(&dir))).unwrap();
    // (the file, a text on the line the error must name, the message after FILE:LINE: )
    let cases = [
        (
            "timeout_s = 1e300",
            "timeout_s = 1e300: expected a positive number of seconds",
        ),
        (
            "timeout_s = -1",
            "timeout_s = -1: expected a positive number of seconds",
        ),
        (
            "timeout_s = nan",
            "timeout_s = NaN: expected a positive number of seconds",
        ),
        (
            "timeout_s = inf",
            "timeout_s = inf: expected a positive number of seconds",
        ),
        (
            "timeout_s = -inf",
            "timeout_s = -inf: expected a positive number of seconds",
        ),
        (
            "timeout_s = 0",
            "timeout_s = 0: expected a positive number of seconds",
        ),
        ("replicates = 0", "replicates = 0: expected 1 to 1000"),
        ("replicates = -5", "replicates = -5: expected 1 to 1000"),
        (
            "replicates = 9223372036854775807",
            "replicates = 9223372036854775807: expected 1 to 1000",
        ),
    ];
    for (line, message) in cases {
        let text = good.replace("timeout_s = 600", line);
        let file = write(&dir, "numbers.toml", &text);
        let at = 1 + text[..text.find(line).unwrap()].matches('\n').count();
        let e = error_of(&["study", file.to_str().unwrap()]);
        let expected = format!("Error: {}:{at}: {message}", file.display());
        assert!(e.starts_with(&expected), "{e}\nexpected: {expected}");
    }
    // Validation points and grids.
    let validate = |table: &str| {
        let text = good.replace(
            "[[implementation]]",
            &format!("[validate]\n{table}\n\n[[implementation]]"),
        );
        let file = write(&dir, "numbers.toml", &text);
        let at = 1 + text[..text.find(table).unwrap()].matches('\n').count();
        (error_of(&["study", file.to_str().unwrap()]), file, at)
    };
    for (table, message) in [
        (
            "points = [{ n = nan }]",
            "validate.points: n = NaN: expected a finite number",
        ),
        (
            "points = [{ n = inf }]",
            "validate.points: n = inf: expected a finite number",
        ),
        (
            "grid = { n = \"nan\" }",
            "validate.grid: n = \"nan\": 'nan' is not a number",
        ),
    ] {
        let (e, file, at) = validate(table);
        let expected = format!("Error: {}:{at}: {message}", file.display());
        assert!(e.starts_with(&expected), "{e}\nexpected: {expected}");
    }
    // Too many points, refused before any is made (by the grid's count or a factor's limit).
    let (e, file, at) = validate("grid = { n = \"1..1000000:lin:1000000\" }");
    assert!(
        e.starts_with(&format!("Error: {}:{at}: ", file.display())) && e.contains("limit"),
        "{e}"
    );
}

#[test]
fn a_datafile_that_is_not_a_regular_file_is_refused_untouched() {
    let dir = scratch("study-device");
    let fifo = dir.join("fifo");
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let sub = dir.join("folder");
    std::fs::create_dir_all(&sub).unwrap();
    // (the datafile, what it is); a FIFO was read forever, /dev/zero until memory ran out.
    for (datafile, kind) in [
        (fifo.clone(), "a FIFO"),
        (sub, "a directory"),
        (PathBuf::from("/dev/null"), "a character device"),
        (PathBuf::from("/dev/zero"), "a character device"),
    ] {
        let path = study(&dir, "1,2", &workload(&dir));
        let text = std::fs::read_to_string(&path).unwrap().replace(
            "design = ",
            &format!("datafile = \"{}\"\ndesign = ", datafile.display()),
        );
        std::fs::write(&path, text).unwrap();
        let out = start(&dir).wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert_eq!(
            stderr.trim_end(),
            format!(
                "Error: {}: the datafile is not a regular file ({kind}): name a file in the \
                 study file's `datafile`",
                datafile.display()
            )
        );
    }
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(!dir.join("study-safe/logs").exists(), "no run was made");
}

#[test]
fn a_datafile_line_too_long_to_be_a_row_is_refused_in_bounded_memory() {
    let dir = scratch("study-long-line");
    study(&dir, "1,2", &workload(&dir));
    std::fs::create_dir_all(dir.join("study-safe")).unwrap();
    // A sparse file of 1 GiB of zero bytes: one "line".
    let datafile = std::fs::File::create(dir.join("study-safe/safe.dat")).unwrap();
    datafile.set_len(1 << 30).unwrap();
    // lca may map 512 MiB at most, half the file.
    let out = limited(&dir, libc::RLIMIT_AS, 512 << 20).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(
        stderr.trim_end(),
        "Error: study-safe/safe.dat:1: a line longer than 65536 bytes: not a datafile"
    );
}

#[test]
fn files_in_the_study_folder_are_written_only_where_they_are_regular() {
    let dir = scratch("study-nodes");
    study(&dir, "1,2,4", &workload(&dir));
    let logs = dir.join("study-safe/logs");
    std::fs::create_dir_all(&logs).unwrap();
    // A FIFO where n=4's standard output goes (opening it waited for a reader forever), and a
    // device node (as /dev/null) where the model summary goes, when the test may make one.
    let fifo = logs.join("a-model-n4-r1.out");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let node = dir.join("study-safe/a-model.txt");
    let c = std::ffi::CString::new(node.to_str().unwrap()).unwrap();
    let device = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) };
    if device != 0 {
        eprintln!("not root: no device node made, only the FIFO is checked");
    }
    let out = start(&dir).wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!(
            "lca study: a n=4: {}: is a FIFO (named pipe); outputs are written only to regular \
             files",
            fifo.strip_prefix(&dir).unwrap().display()
        )),
        "{stderr}"
    );
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    if device == 0 {
        assert!(
            stdout.contains(
                "not built: study-safe/a-model.txt: is a character device; outputs are written \
                 only to regular files"
            ),
            "{stdout}"
        );
        let kind = std::fs::symlink_metadata(&node).unwrap().file_type();
        assert!(kind.is_char_device());
    }
}

#[test]
fn a_last_row_without_its_newline_is_not_taken_for_a_run_made() {
    let dir = scratch("study-torn");
    study(&dir, "1,2", &workload(&dir));
    let out = start(&dir).wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let datafile = dir.join("study-safe/safe.dat");
    let text = std::fs::read_to_string(&datafile).unwrap();
    let (first, second) = text.trim_end().split_once('\n').unwrap();
    // The second row lost its newline (a write cut short at its last byte).
    std::fs::write(&datafile, format!("{first}\n{second}")).unwrap();
    let out = start(&dir).wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("study safe: 2 runs, 1 made now") && stdout.contains("1 measured earlier"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(&datafile).unwrap();
    assert_eq!(text, format!("{first}\n{second}\n{second}\n"));
}
