//! What `pp` writes goes only to regular files, whole or not at all: a device node, FIFO,
//! directory or link to a node given as an output is refused in one line and left as it was,
//! with no temporary file behind; a datafile row appended to a full file is cut off again.

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use test_support::{IsKind, assert_untouched, hostile_targets, limit, one_line_error, pp, scratch};

const LOG: &str = "pplog 1 p=2 impl=dp n=256
0 0 start
0 0 work_begin
0 1 start
0 1 work_begin
60 1 work_end
100 0 work_end
100 0 stop
100 1 stop
";

fn run(command: &mut Command) -> Output {
    command.output().unwrap()
}

/// The command failed with one line on standard error, the target is what it was, and the
/// folder holds no temporary file.
fn refused(what: &str, out: &Output, target: &Path, kind: IsKind) {
    one_line_error(out, None, &["regular files"]);
    assert_untouched(what, target, kind);
}

/// The test log in `dir` as text (`run.txt`) and, converted by `pp convert`, as binary
/// (`small.bin`).
fn text_and_binary(dir: &Path) -> (PathBuf, PathBuf) {
    let text = dir.join("run.txt");
    fs::write(&text, LOG).unwrap();
    let small = dir.join("small.bin");
    assert!(
        run(pp!().arg("convert").arg(&text).arg(&small))
            .status
            .success()
    );
    (text, small)
}

#[test]
fn outputs_onto_devices_fifos_folders_and_links_are_refused() {
    let dir = scratch("hostile");
    let (text, small) = text_and_binary(&dir);
    let folder = dir.join("targets");
    fs::create_dir_all(&folder).unwrap();
    let targets = hostile_targets(&folder, "");
    assert!(targets.len() >= 2);
    for (target, kind) in &targets {
        let out = run(pp!().arg("convert").arg(&small).arg(target));
        refused("pp convert", &out, target, *kind);
        let out = run(pp!().arg("--chrome").arg(target).arg(&text));
        refused("pp --chrome", &out, target, *kind);
        assert!(out.stdout.is_empty(), "no profile without its trace");
        let out = run(pp!()
            .args(["calibrate", "--quick", "--force", "--out"])
            .arg(target));
        refused("pp calibrate", &out, target, *kind);
    }
}

#[test]
fn an_existing_file_is_replaced_only_with_force() {
    let dir = scratch("existing");
    let (text, small) = text_and_binary(&dir);
    let mine = dir.join("mine.txt");
    fs::write(&mine, "mine\n").unwrap();
    // Refused before the log is read (a log that is not there), with the file as it was.
    let missing = dir.join("missing.log");
    for args in [
        vec!["convert".as_ref(), missing.as_os_str(), mine.as_os_str()],
        vec!["--chrome".as_ref(), mine.as_os_str(), missing.as_os_str()],
    ] {
        let out = run(pp!().args(&args));
        let e = one_line_error(&out, Some(1), &[&mine.display().to_string()]);
        assert!(
            e.contains("exists; not replaced") && e.contains("--force"),
            "{e}"
        );
        assert!(out.stdout.is_empty());
        assert_eq!(fs::read_to_string(&mine).unwrap(), "mine\n");
    }
    // With --force, replaced.
    assert!(
        run(pp!().arg("convert").arg(&small).arg(&mine).arg("--force"))
            .status
            .success()
    );
    assert_eq!(fs::read_to_string(&mine).unwrap(), LOG);
    let out = run(pp!().arg("--chrome").arg(&mine).arg("--force").arg(&text));
    assert!(out.status.success(), "{out:?}");
    assert!(fs::read_to_string(&mine).unwrap().starts_with("{"));
}

#[test]
fn a_dash_is_standard_output_for_text() {
    let dir = scratch("dash");
    let (text, small) = text_and_binary(&dir);
    let out = run(pp!().arg("convert").arg(&small).arg("-"));
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), LOG);

    let out = run(pp!().arg("convert").arg(&text).arg("-"));
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("text encoding only"), "{stderr}");
    assert!(out.stdout.is_empty());

    // The trace takes standard output; the profile goes to standard error.
    let out = run(pp!().args(["--chrome", "-", "-l"]).arg(&text));
    assert!(out.status.success(), "{out:?}");
    let trace: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(trace["traceEvents"].as_array().unwrap().len() > 2);
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .starts_with("impl=dp n=256 p=2 ")
    );
}

/// Runs `pp -l LOG` appending to `data` with the file size limited to `limit_bytes` bytes,
/// the way a full disk stops a write part-way.
fn append_row(log: &Path, data: &Path, limit_bytes: Option<u64>) -> Output {
    let file = fs::OpenOptions::new().append(true).open(data).unwrap();
    let mut command = pp!();
    command.arg("-l").arg(log).stdout(file);
    if let Some(bytes) = limit_bytes {
        limit(&mut command, libc::RLIMIT_FSIZE, bytes);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(|| {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                Ok(())
            });
        }
    }
    run(&mut command)
}

#[test]
fn a_row_that_does_not_fit_is_cut_off_again() {
    let dir = scratch("append");
    let log = dir.join("run.txt");
    fs::write(&log, LOG).unwrap();
    let data = dir.join("d.dat");
    fs::write(&data, "").unwrap();
    let out = append_row(&log, &data, None);
    assert!(out.status.success(), "{out:?}");
    let old = fs::read(&data).unwrap();
    assert!(old.len() > 40 && old.ends_with(b"\n"));

    // Room for 20 more bytes: the row starts to be written, then the write fails (EFBIG).
    let out = append_row(&log, &data, Some(old.len() as u64 + 20));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(!out.status.success(), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("standard output: cannot write"), "{stderr}");
    assert_eq!(stderr.matches("os error").count(), 1, "one cause: {stderr}");
    assert!(stderr.contains("the file is as it was"), "{stderr}");
    assert_eq!(fs::read(&data).unwrap(), old, "exactly the old bytes");

    // No room at all: nothing was written.
    let out = append_row(&log, &data, Some(old.len() as u64));
    assert!(!out.status.success());
    assert_eq!(fs::read(&data).unwrap(), old);

    // With room, the row is appended whole.
    let out = append_row(&log, &data, None);
    assert!(out.status.success());
    assert_eq!(fs::read(&data).unwrap(), [&old[..], &old[..]].concat());
}

#[test]
fn the_recorder_refuses_to_replace_what_is_not_a_regular_file() {
    // `PP_LOG=/dev/null` run as root renamed the log over the device.
    let dir = scratch("recorder");
    for (target, kind) in hostile_targets(&dir, "") {
        let Err(e) = pp_recorder::Session::builder(1).path(&target).start() else {
            panic!("{} was accepted", target.display());
        };
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{e}");
        let text = e.to_string();
        assert!(
            text.contains("regular files") && !text.contains('\n'),
            "{text}"
        );
        assert!(kind(&fs::symlink_metadata(&target).unwrap().file_type()));
        for entry in fs::read_dir(&dir).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!name.ends_with(".tmp"), "left {name}");
        }
    }
}
