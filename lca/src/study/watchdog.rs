//! A study killed outright (SIGKILL, a crash) cannot kill its run's process group itself, and
//! the kernel's death signal (`PR_SET_PDEATHSIG`) reaches only the run's command, not what that
//! command started. The watchdog does the rest: a process forked when the study starts, in a
//! process group of its own, holding only the read end of a pipe whose write end only `lca`
//! holds. `lca` writes it the group of the run in progress (0 between runs); when the pipe
//! reports end of file — `lca` has ended, however it ended — the watchdog kills that group
//! and exits.

use std::io::Write;
use std::os::fd::{FromRawFd, RawFd};

/// The running watchdog; dropped, it is told to end and is reaped.
#[derive(Debug)]
pub struct Watchdog {
    pipe: Option<std::fs::File>,
    pid: libc::pid_t,
}

impl Watchdog {
    /// Forks the watchdog.
    pub fn start() -> std::io::Result<Watchdog> {
        let mut fds: [RawFd; 2] = [-1; 2];
        // SAFETY: pipe2 fills the two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let [read, write] = fds;
        // What the watchdog closes: everything lca has open but the pipe's read end (listed
        // before the fork: the child may not allocate).
        let open: Vec<RawFd> = std::fs::read_dir("/proc/self/fd")?
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse().ok())
            .filter(|&fd| fd != read)
            .collect();
        // SAFETY: the child calls only async-signal-safe functions (close, setpgid, read,
        // killpg, _exit) and never returns from this block.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = std::io::Error::last_os_error();
            unsafe {
                libc::close(read);
                libc::close(write);
            }
            return Err(e);
        }
        if pid == 0 {
            unsafe { watch(read, &open) }
        }
        // SAFETY: lca owns both descriptors; the read end is the watchdog's alone.
        unsafe { libc::close(read) };
        Ok(Watchdog {
            pipe: Some(unsafe { std::fs::File::from_raw_fd(write) }),
            pid,
        })
    }

    /// The process group to kill if lca ends now (0: none).
    pub fn set(&self, group: u32) {
        if let Some(mut pipe) = self.pipe.as_ref() {
            // Four bytes are written at once on a pipe (PIPE_BUF); a watchdog that is gone
            // cannot be helped.
            let _ = pipe.write_all(&group.to_ne_bytes());
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.set(0);
        drop(self.pipe.take());
        // SAFETY: reaps the watchdog, lca's own child.
        unsafe {
            libc::waitpid(self.pid, std::ptr::null_mut(), 0);
        }
    }
}

/// The watchdog's life: read groups until end of file, then kill the last one.
unsafe fn watch(read: RawFd, open: &[RawFd]) -> ! {
    unsafe {
        for &fd in open {
            libc::close(fd);
        }
        libc::setpgid(0, 0);
        let mut group: u32 = 0;
        let mut bytes = [0u8; 4];
        loop {
            let n = libc::read(read, bytes.as_mut_ptr().cast(), bytes.len());
            if n == 4 {
                group = u32::from_ne_bytes(bytes);
            } else if n < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            } else {
                break;
            }
        }
        if group > 0 {
            libc::killpg(group as libc::pid_t, libc::SIGKILL);
        }
        libc::_exit(0)
    }
}
