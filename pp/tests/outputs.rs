//! What `pp` writes goes only to regular files, whole or not at all: a device node, FIFO,
//! directory or link to a node given as an output is refused in one line and left as it was,
//! with no temporary file behind; a datafile row appended to a full file is cut off again.

use std::fs;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

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

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pp-outputs-{}-{name}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn pp() -> Command {
    let mut pp = Command::new(assert_cmd::cargo::cargo_bin("pp"));
    pp.env("PP_MACHINE", "/nonexistent/machine.toml");
    pp.stdin(Stdio::null());
    pp
}

fn run(command: &mut Command) -> Output {
    command.output().unwrap()
}

/// Whether a file type is still the kind a target was made as.
type IsKind = fn(&fs::FileType) -> bool;

/// The kinds of file an output must never replace, made in `dir`: a FIFO, a directory, a
/// character device with the numbers of /dev/null and a link to it (the last two only as
/// root). Returns them with a check that each is still what it was.
fn hostile_targets(dir: &Path) -> Vec<(PathBuf, IsKind)> {
    let made = |args: &[&str]| {
        Command::new(args[0])
            .args(&args[1..])
            .status()
            .is_ok_and(|s| s.success())
    };
    let mut targets: Vec<(PathBuf, IsKind)> = Vec::new();
    let fifo = dir.join("fifo");
    assert!(made(&["mkfifo", fifo.to_str().unwrap()]));
    targets.push((fifo, |t| t.is_fifo()));
    let sub = dir.join("folder");
    fs::create_dir(&sub).unwrap();
    targets.push((sub, |t| t.is_dir()));
    let node = dir.join("node");
    if made(&["mknod", node.to_str().unwrap(), "c", "1", "3"]) {
        std::os::unix::fs::symlink(&node, dir.join("link")).unwrap();
        targets.push((node, |t| t.is_char_device()));
        targets.push((dir.join("link"), |t| t.is_symlink()));
    } else {
        eprintln!("skipped the device node and the link to it: mknod needs root");
    }
    targets
}

/// The command failed with one line on standard error, the target is what it was, and the
/// folder holds no temporary file.
fn refused(what: &str, out: &Output, target: &Path, kind: IsKind) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "{what} {}: succeeded",
        target.display()
    );
    assert_eq!(stderr.lines().count(), 1, "{what}: one line: {stderr}");
    assert!(stderr.contains("regular files"), "{what}: {stderr}");
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    let now = fs::symlink_metadata(target).unwrap().file_type();
    assert!(kind(&now), "{what} changed {}", target.display());
    if target.file_name().unwrap() == "link" {
        let named = fs::metadata(target).unwrap().file_type();
        assert!(
            named.is_char_device(),
            "{what}: the link still names the node"
        );
    }
    let dir = target.parent().unwrap();
    for entry in fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!name.contains(".tmp"), "{what} left {name}");
    }
}

/// The test log in `dir` as text (`run.txt`) and, converted by `pp convert`, as binary
/// (`small.bin`).
fn text_and_binary(dir: &Path) -> (PathBuf, PathBuf) {
    let text = dir.join("run.txt");
    fs::write(&text, LOG).unwrap();
    let small = dir.join("small.bin");
    assert!(
        run(pp().arg("convert").arg(&text).arg(&small))
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
    let targets = hostile_targets(&folder);
    assert!(targets.len() >= 2);
    for (target, kind) in &targets {
        let out = run(pp().arg("convert").arg(&small).arg(target));
        refused("pp convert", &out, target, *kind);
        let out = run(pp().arg("--chrome").arg(target).arg(&text));
        refused("pp --chrome", &out, target, *kind);
        assert!(out.stdout.is_empty(), "no profile without its trace");
        let out = run(pp()
            .args(["calibrate", "--quick", "--force", "--out"])
            .arg(target));
        refused("pp calibrate", &out, target, *kind);
    }
}

#[test]
fn a_dash_is_standard_output_for_text() {
    let dir = scratch("dash");
    let (text, small) = text_and_binary(&dir);
    let out = run(pp().arg("convert").arg(&small).arg("-"));
    assert!(out.status.success(), "{out:?}");
    assert_eq!(String::from_utf8(out.stdout).unwrap(), LOG);

    let out = run(pp().arg("convert").arg(&text).arg("-"));
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("text encoding only"), "{stderr}");
    assert!(out.stdout.is_empty());

    // The trace takes standard output; the profile goes to standard error.
    let out = run(pp().args(["--chrome", "-", "-l"]).arg(&text));
    assert!(out.status.success(), "{out:?}");
    let trace: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(trace["traceEvents"].as_array().unwrap().len() > 2);
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .starts_with("impl=dp n=256 p=2 ")
    );
}

/// Runs `pp -l LOG` appending to `data` with the file size limited to `limit` bytes, the way a
/// full disk stops a write part-way.
fn append_row(log: &Path, data: &Path, limit: Option<u64>) -> Output {
    let file = fs::OpenOptions::new().append(true).open(data).unwrap();
    let mut command = pp();
    command.arg("-l").arg(log).stdout(file);
    if let Some(limit) = limit {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                let rl = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: limit,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &rl) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
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
    for (target, kind) in hostile_targets(&dir) {
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
