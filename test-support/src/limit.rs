//! Resource limits on a child process: bounded memory, bounded file sizes.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Sets `resource` (`libc::RLIMIT_AS`, `libc::RLIMIT_FSIZE`...) to `limit`, soft and hard,
/// in the child `command` starts, before it runs the program. Nothing else changes (a
/// program under `RLIMIT_FSIZE` still gets `SIGXFSZ` unless it or the caller ignores it).
pub fn limit(
    command: &mut Command,
    resource: libc::__rlimit_resource_t,
    limit: u64,
) -> &mut Command {
    // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
    unsafe {
        command.pre_exec(move || {
            let rlimit = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(resource, &rlimit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    #[test]
    fn the_child_runs_under_the_limit() {
        let mut command = Command::new("sh");
        command.args(["-c", "ulimit -n"]);
        let out = super::limit(&mut command, libc::RLIMIT_NOFILE, 17)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "17\n");
    }
}
