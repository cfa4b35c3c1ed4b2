//! One study at a time in a folder: `lca study` holds an exclusive `flock` on
//! `<out>/.lca-study.lock`, which holds its pid. A second start there refuses at once, naming
//! that pid. The kernel drops the lock when the holder's process ends, however it ends (even
//! SIGKILL), so there is no stale lock to remove.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow};

/// The lock file's name in the study's folder.
pub const NAME: &str = ".lca-study.lock";

/// The held lock: released when dropped or when the process ends.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// Takes the study folder's lock, or says which process holds it.
pub fn take(folder: &Path) -> Result<Lock> {
    let path: PathBuf = folder.join(NAME);
    let cannot = |what: &str, e: std::io::Error| anyhow!("{}: cannot {what}: {e}", path.display());
    // Not truncated on opening: the holder's pid must survive a refused start.
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| cannot("open the study's lock", e))?;
    // SAFETY: plain system call on a descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::WouldBlock {
            return Err(cannot("lock", e));
        }
        let mut text = String::new();
        let _ = file.take(32).read_to_string(&mut text);
        let holder = match text.trim().parse::<u32>() {
            Ok(pid) => format!("pid {pid}"),
            Err(_) => "a process that is just starting".to_string(),
        };
        return Err(anyhow!(
            "{}: another lca study ({holder}) is running in this folder; wait for it to end or \
             stop it, then start again",
            folder.display()
        ));
    }
    file.set_len(0)
        .and_then(|()| file.seek(SeekFrom::Start(0)))
        .and_then(|_| writeln!(file, "{}", std::process::id()))
        .map_err(|e| cannot("write the study's lock", e))?;
    Ok(Lock { _file: file })
}
