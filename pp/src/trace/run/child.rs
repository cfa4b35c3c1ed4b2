//! The program as `pp run`'s child (docs/pp-run.md, "The program and its signals"): it runs in
//! a process group of its own, which gets the terminal while it runs when `pp run` had it
//! (Ctrl-C reaches the program and whatever it started, not `pp run`); SIGTERM and SIGHUP sent
//! to `pp run` are forwarded to that group and `pp run` waits for the program; SIGINT and
//! SIGQUIT sent to `pp run` alone are ignored, as `system(3)` does. `pp run` is the child
//! subreaper of what the program starts: processes that outlive the program are named and
//! waited for.

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI32, Ordering};

use super::failure::{Failure, fail};

/// The program's process group while it runs (0: none yet).
static GROUP: AtomicI32 = AtomicI32::new(0);
/// A signal to forward that came before the group was known (0: none).
static PENDING: AtomicI32 = AtomicI32::new(0);
/// The last signal forwarded (0: none): what outlives the program then is ending too.
static SENT: AtomicI32 = AtomicI32::new(0);

/// The signals `pp run` forwards to the program's group.
const FORWARDED: [libc::c_int; 2] = [libc::SIGTERM, libc::SIGHUP];

/// Forwards the signal to the program's group (kill(2) is async-signal-safe).
extern "C" fn forward(signal: libc::c_int) {
    let group = GROUP.load(Ordering::SeqCst);
    if group > 0 {
        SENT.store(signal, Ordering::SeqCst);
        // SAFETY: kill has no memory preconditions.
        unsafe { libc::kill(-group, signal) };
    } else {
        PENDING.store(signal, Ordering::SeqCst);
    }
}

/// How the program ended.
pub(super) struct Ended {
    /// Its status as a shell gives it (`128 + s` when signal `s` killed it).
    pub status: u8,
    /// In words: `exited 3`, `was killed by signal 11`.
    pub how: String,
}

/// Runs the program and says how it ended. `warn` hears of processes that outlived it.
pub(super) fn execute(
    mut command: Command,
    program: &OsString,
    stdout_to_stderr: bool,
    warn: &mut dyn FnMut(String),
) -> Result<Ended, Failure> {
    if stdout_to_stderr {
        // Standard output holds only the row.
        let stderr = std::io::stderr()
            .as_fd()
            .try_clone_to_owned()
            .map_err(|e| fail(1, format!("cannot duplicate standard error: {e}")))?;
        command.stdout(Stdio::from(stderr));
    }
    let signals = Signals::new();
    let terminal = Terminal::foreground();
    let (int, quit, take_terminal) = (signals.int, signals.quit, terminal.is_some());
    // SAFETY: setpgid, signal and tcsetpgrp are async-signal-safe. The child gets back the
    // SIGINT and SIGQUIT dispositions pp run had, as system(3) does; caught signals are reset
    // by exec.
    unsafe {
        command.pre_exec(move || {
            libc::setpgid(0, 0);
            if take_terminal {
                libc::signal(libc::SIGTTOU, libc::SIG_IGN);
                libc::tcsetpgrp(libc::STDIN_FILENO, libc::getpid());
            }
            libc::signal(libc::SIGTTOU, libc::SIG_DFL);
            libc::signal(libc::SIGINT, int);
            libc::signal(libc::SIGQUIT, quit);
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|e| cannot_start(program, &e))?;
    let group = child.id() as libc::pid_t;
    // SAFETY: as in the child; both set the group, so that neither order races.
    unsafe { libc::setpgid(group, group) };
    if let Some(t) = &terminal {
        t.give(group);
    }
    SENT.store(0, Ordering::SeqCst);
    GROUP.store(group, Ordering::SeqCst);
    let early = PENDING.swap(0, Ordering::SeqCst);
    if early != 0 {
        SENT.store(early, Ordering::SeqCst);
        // SAFETY: kill has no memory preconditions.
        unsafe { libc::kill(-group, early) };
    }
    let status = child.wait();
    outliving(program, warn);
    GROUP.store(0, Ordering::SeqCst);
    drop(terminal);
    drop(signals);
    let status = status.map_err(|e| fail(1, format!("waiting for {}: {e}", show(program))))?;
    Ok(match (status.code(), status.signal()) {
        (Some(code), _) => Ended {
            status: code.clamp(0, 255) as u8,
            how: format!("exited {code}"),
        },
        (None, Some(signal)) => Ended {
            status: (128 + signal).clamp(0, 255) as u8,
            how: format!("was killed by signal {signal}"),
        },
        (None, None) => Ended {
            status: 1,
            how: format!("ended with {status}"),
        },
    })
}

/// Waits for the processes the program started that outlived it (pp run is their subreaper),
/// naming them first unless pp run forwarded a signal to them.
fn outliving(program: &OsString, warn: &mut dyn FnMut(String)) {
    let mut status = 0;
    // SAFETY: waitpid writes only `status`.
    let mut reap = |flags| unsafe { libc::waitpid(-1, &mut status, flags) };
    loop {
        match reap(libc::WNOHANG) {
            0 => break,
            pid if pid > 0 => continue,
            _ => return, // ECHILD: none left
        }
    }
    if SENT.load(Ordering::SeqCst) != 0 {
        while reap(0) > 0 {}
        return;
    }
    let pids = std::fs::read_to_string("/proc/thread-self/children").unwrap_or_default();
    let pids = pids.split_whitespace().collect::<Vec<_>>().join(", ");
    warn(format!(
        "processes {} started outlived it{}: pp run waits for them (SIGTERM to pp run forwards to them)",
        show(program),
        if pids.is_empty() {
            String::new()
        } else {
            format!(" (pid {pids})")
        },
    ));
    while reap(0) > 0 {}
}

/// SIGTERM and SIGHUP forwarded, SIGINT and SIGQUIT ignored, and pp run the child subreaper,
/// while the program runs; restored on drop.
struct Signals {
    int: libc::sighandler_t,
    quit: libc::sighandler_t,
    forwarded: [libc::sigaction; 2],
}

impl Signals {
    fn new() -> Self {
        // SAFETY: SIG_IGN installs no code; `forward` only reads and writes atomics and calls
        // kill(2); sigaction writes the old actions into zeroed structs. PR_SET_CHILD_SUBREAPER
        // only changes who adopts orphans.
        unsafe {
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            let mut forwarded: [libc::sigaction; 2] = std::mem::zeroed();
            for (signal, old) in FORWARDED.into_iter().zip(forwarded.iter_mut()) {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = forward as extern "C" fn(libc::c_int) as usize;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, old);
            }
            Signals {
                int: libc::signal(libc::SIGINT, libc::SIG_IGN),
                quit: libc::signal(libc::SIGQUIT, libc::SIG_IGN),
                forwarded,
            }
        }
    }
}

impl Drop for Signals {
    fn drop(&mut self) {
        // SAFETY: restores the actions `new` found.
        unsafe {
            libc::signal(libc::SIGINT, self.int);
            libc::signal(libc::SIGQUIT, self.quit);
            for (signal, old) in FORWARDED.into_iter().zip(self.forwarded.iter()) {
                libc::sigaction(signal, old, std::ptr::null_mut());
            }
            libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
        }
    }
}

/// The terminal on standard input, when pp run's group is its foreground group: the program's
/// group gets it while it runs, and pp run's gets it back on drop.
struct Terminal {
    own: libc::pid_t,
}

impl Terminal {
    fn foreground() -> Option<Terminal> {
        // SAFETY: isatty, tcgetpgrp and getpgrp only read.
        unsafe {
            let own = libc::getpgrp();
            (libc::isatty(libc::STDIN_FILENO) == 1 && libc::tcgetpgrp(libc::STDIN_FILENO) == own)
                .then_some(Terminal { own })
        }
    }

    fn give(&self, group: libc::pid_t) {
        // SAFETY: SIGTTOU is ignored around tcsetpgrp, which would stop a background caller.
        unsafe {
            let old = libc::signal(libc::SIGTTOU, libc::SIG_IGN);
            libc::tcsetpgrp(libc::STDIN_FILENO, group);
            libc::signal(libc::SIGTTOU, old);
        }
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        self.give(self.own);
    }
}

fn show(program: &OsString) -> String {
    program.to_string_lossy().into_owned()
}

/// A program that cannot be started, as a shell reports it: 127 not found, 126 otherwise.
fn cannot_start(program: &OsString, e: &std::io::Error) -> Failure {
    let name = show(program);
    match e.kind() {
        std::io::ErrorKind::NotFound => fail(127, format!("{name}: command not found")),
        std::io::ErrorKind::PermissionDenied => {
            fail(126, format!("{name}: cannot execute (permission denied)"))
        }
        _ => fail(126, format!("{name}: cannot execute ({e})")),
    }
}
