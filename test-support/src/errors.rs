//! What a command that succeeds, or fails in one line, must show: every command of this
//! workspace says why it failed in exactly one line on standard error, never with a panic.

use std::process::{Command, Output};

/// Runs `command` and returns its standard output, after checking that it succeeded (the
/// failure message holds the command and its standard error).
///
/// # Panics
/// When the command cannot start, fails, or writes standard output that is not UTF-8.
pub fn stdout_of(command: &mut Command) -> String {
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{command:?}: {stderr}");
    String::from_utf8(out.stdout).unwrap()
}

/// Checks that `out`, of the command `what`, succeeded; the failure message holds its status,
/// standard output and standard error.
///
/// # Panics
/// When it failed.
pub fn succeeded(what: &str, out: &std::process::Output) {
    assert!(
        out.status.success(),
        "{what}: {}\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Checks that `out` is a failure (with exit status `code` when given; any failure for `None`)
/// whose standard error is exactly one line, not a panic, containing each of `names` (the
/// file, line, field or value the error is about); returns that line without its newline.
///
/// # Panics
/// When any of that does not hold.
pub fn one_line_error(out: &Output, code: Option<i32>, names: &[&str]) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    match code {
        Some(code) => assert_eq!(out.status.code(), Some(code), "{stderr}"),
        None => assert!(!out.status.success(), "succeeded: {stderr}"),
    }
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    for name in names {
        assert!(stderr.contains(name), "{name:?} in {stderr}");
    }
    stderr.trim_end().to_string()
}

/// Runs `command` expecting the error of a command-line program of this workspace
/// (`Error: ...`): exit status 1, one line on standard error starting `Error: ` (checked by
/// [`one_line_error`]) and nothing on standard output. Returns standard error.
///
/// # Panics
/// When the command cannot start or any of that does not hold.
pub fn error_of(command: &mut Command) -> String {
    let out = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{command:?} should fail: {stderr}"
    );
    one_line_error(&out, Some(1), &[]);
    assert!(stderr.starts_with("Error: "), "{stderr}");
    assert!(out.stdout.is_empty(), "{command:?}");
    stderr
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        command
    }

    #[test]
    fn one_line_errors_pass_and_the_rest_fail() {
        let out = sh("echo 'Error: a.dat:3: bad' >&2; exit 1")
            .output()
            .unwrap();
        assert_eq!(
            one_line_error(&out, Some(1), &["a.dat:3"]),
            "Error: a.dat:3: bad"
        );
        assert_eq!(
            error_of(&mut sh("echo 'Error: x' >&2; exit 1")),
            "Error: x\n"
        );
        assert_eq!(stdout_of(&mut sh("echo out")), "out\n");
        for script in [
            "echo 'Error: a' >&2; echo b >&2; exit 1",
            "echo 'Error: a' >&2; exit 0",
            "echo 'Error: a' >&2; exit 2",
            "echo 'thread main panicked' >&2; exit 1",
            "echo 'Error: a' >&2; exit 1",
        ] {
            let out = sh(script).output().unwrap();
            let failed = std::panic::catch_unwind(|| {
                one_line_error(&out, Some(1), &["b"]);
            });
            assert!(failed.is_err(), "{script}");
        }
        let failed = std::panic::catch_unwind(|| error_of(&mut sh("echo 'oops' >&2; exit 1")));
        assert!(failed.is_err());
        let failed = std::panic::catch_unwind(|| stdout_of(&mut sh("exit 3")));
        assert!(failed.is_err());
    }
}
