//! A run's command as a child `lca` owns: started in its own process group, killed by the
//! kernel when `lca` dies (`PR_SET_PDEATHSIG`, even after SIGKILL) and its group then by the
//! [`Watchdog`], and on every way out of the wait — its exit, its timeout, a stopping signal
//! sent to `lca`, an error — the whole group is killed before the command is reaped, so no
//! process of a run outlives it.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use super::signals;
use super::watchdog::Watchdog;

/// How a wait for a run ended (the command's whole process group is gone in every case).
#[derive(Debug)]
pub enum Ended {
    /// The command exited.
    Exited(ExitStatus),
    /// It outlived its timeout and was killed.
    TimedOut,
    /// `lca` received this stopping signal and killed it.
    Stopped(i32),
}

/// Starts `command` in a process group of its own, to be killed when this process dies.
pub fn spawn(command: &mut Command, watchdog: &Watchdog) -> std::io::Result<Child> {
    let parent = std::process::id() as libc::pid_t;
    command.process_group(0);
    // SAFETY: the closure runs in the forked child before exec and calls only
    // async-signal-safe functions (prctl, getppid, signal).
    unsafe {
        command.pre_exec(move || {
            #[cfg(target_os = "linux")]
            {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGKILL as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                // lca died before the death signal was asked for: nobody would kill the run.
                if libc::getppid() != parent {
                    return Err(std::io::Error::other("lca ended while starting the run"));
                }
            }
            // The study ignores SIGXFSZ for its own writes; the command gets the default.
            libc::signal(libc::SIGXFSZ, libc::SIG_DFL);
            Ok(())
        });
    }
    let child = command.spawn()?;
    watchdog.set(child.id());
    Ok(child)
}

/// Waits for the child at most `timeout`, watching for a stopping signal; kills its process
/// group and reaps it on every way out.
pub fn wait(child: &mut Child, timeout: Duration, watchdog: &Watchdog) -> std::io::Result<Ended> {
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match exited(child) {
            Ok(true) => {
                // Whatever the command left running in its group goes with it; the group's id
                // cannot be reused while its leader is an unreaped zombie.
                kill_group(child, watchdog);
                return child.wait().map(Ended::Exited);
            }
            Ok(false) => {}
            Err(e) => {
                kill(child, watchdog);
                return Err(e);
            }
        }
        if let Some(signal) = signals::caught() {
            kill(child, watchdog);
            return Ok(Ended::Stopped(signal));
        }
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() {
            kill(child, watchdog);
            return Ok(Ended::TimedOut);
        }
        std::thread::sleep(pause.min(left));
        pause = (pause * 2).min(Duration::from_millis(20));
    }
}

/// Whether the child has exited, without reaping it (`WNOWAIT`).
fn exited(child: &Child) -> std::io::Result<bool> {
    // SAFETY: a zeroed siginfo_t is valid; waitid fills it.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
        if libc::waitid(libc::P_PID, child.id(), &mut info, flags) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(info.si_pid() != 0)
    }
}

/// Sends SIGKILL to the child's whole process group; the watchdog has no group to watch then.
fn kill_group(child: &Child, watchdog: &Watchdog) {
    // SAFETY: plain system call; the group is the child's own (`process_group(0)`), and the
    // child is not reaped yet, so its id names no other group.
    unsafe {
        libc::killpg(child.id() as libc::pid_t, libc::SIGKILL);
    }
    watchdog.set(0);
}

/// Kills the child's process group and reaps the child.
fn kill(child: &mut Child, watchdog: &Watchdog) {
    kill_group(child, watchdog);
    let _ = child.wait();
}
