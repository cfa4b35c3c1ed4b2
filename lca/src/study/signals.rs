//! SIGINT, SIGTERM and SIGHUP while a study runs: the handler only notes the signal, and the
//! run's wait loop sees it, kills the running command's process group, reaps it and the study
//! stops between rows. SIGXFSZ is ignored meanwhile, so a file size limit fails a write with
//! `EFBIG` (and the row is cut back) instead of killing `lca` in the middle of it.

use std::sync::atomic::{AtomicI32, Ordering};

/// The signals that stop a study.
const STOPPING: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The last stopping signal received (0: none).
static CAUGHT: AtomicI32 = AtomicI32::new(0);

extern "C" fn note(signal: libc::c_int) {
    CAUGHT.store(signal, Ordering::SeqCst);
}

/// The stopping signal received since [`Guard::install`], if any.
pub fn caught() -> Option<i32> {
    match CAUGHT.load(Ordering::SeqCst) {
        0 => None,
        signal => Some(signal),
    }
}

/// `SIGTERM` and the like.
pub fn name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        _ => format!("signal {signal}"),
    }
}

/// While alive, the stopping signals are noted instead of ending the process and SIGXFSZ is
/// ignored; dropped, the earlier dispositions are back.
pub struct Guard {
    earlier: Vec<(libc::c_int, libc::sigaction)>,
}

impl Guard {
    /// Installs the handler.
    pub fn install() -> std::io::Result<Guard> {
        let mut guard = Guard {
            earlier: Vec::new(),
        };
        let handler = note as extern "C" fn(libc::c_int) as libc::sighandler_t;
        for signal in STOPPING {
            guard.set(signal, handler)?;
        }
        guard.set(libc::SIGXFSZ, libc::SIG_IGN)?;
        Ok(guard)
    }

    fn set(&mut self, signal: libc::c_int, handler: libc::sighandler_t) -> std::io::Result<()> {
        // SAFETY: a zeroed sigaction is a valid value of the C struct; the handler only stores
        // into an atomic, which is async-signal-safe.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            let mut earlier: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, &action, &mut earlier) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            self.earlier.push((signal, earlier));
        }
        Ok(())
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        for (signal, earlier) in self.earlier.drain(..).rev() {
            // SAFETY: restores a disposition sigaction itself returned.
            unsafe {
                libc::sigaction(signal, &earlier, std::ptr::null_mut());
            }
        }
    }
}
