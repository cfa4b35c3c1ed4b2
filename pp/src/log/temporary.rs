//! A temporary file for what a reader cannot keep in memory (a piped binary log, a text log's
//! sorted runs): made in `$TMPDIR` (else `/tmp`) and unlinked at once, so that nothing is left
//! behind however `pp` ends.

use std::fs::{File, OpenOptions};
use std::io;

/// A new temporary file, open for reading and writing, already removed from its folder.
/// `what` names it in the folder while it exists there (`pp-spool`, `pp-sort`).
pub(crate) fn unlinked(what: &str) -> io::Result<File> {
    let dir = std::env::temp_dir();
    for k in 0..100u32 {
        let path = dir.join(format!(".{what}.{}.{k}", std::process::id()));
        match OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                std::fs::remove_file(&path)?;
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free temporary file name"))
}
