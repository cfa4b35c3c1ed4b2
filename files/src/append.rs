//! One record appended whole, or not at all.
//!
//! `pp -l run.log >> d.dat` must never leave a torn row: on a full disk (or past a file size
//! limit) the write stops part-way, and the bytes that did reach the file are cut off again by
//! truncating it back to its length before the write. Only a regular file can be truncated; a
//! pipe or terminal gets the bytes as they are (a pipe keeps writes up to `PIPE_BUF` whole).

use std::fmt;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsFd;

/// A record that could not be written: one line that says the cause once and what became of
/// the file.
#[derive(Debug)]
pub struct AppendError {
    file: String,
    cause: io::Error,
    outcome: &'static str,
}

impl AppendError {
    /// The operating system's error.
    pub fn io_error(&self) -> &io::Error {
        &self.cause
    }
}

impl fmt::Display for AppendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: cannot write: {}{}",
            self.file, self.cause, self.outcome
        )
    }
}

impl std::error::Error for AppendError {}

/// Writes `bytes` to `file` (named `name` in errors) whole. When `file` is a regular file and
/// the write fails after part of it reached the file, the file is truncated back to its length
/// before the write — unless it grew by more than this write meanwhile (another writer), which
/// the error then says.
pub fn write_whole(file: &File, name: &str, bytes: &[u8]) -> Result<(), AppendError> {
    let error = |cause, outcome| AppendError {
        file: name.to_string(),
        cause,
        outcome,
    };
    let before = match file.metadata() {
        Ok(m) if m.is_file() => Some(m.len()),
        _ => None,
    };
    let mut out = file;
    let mut written = 0usize;
    while written < bytes.len() {
        match out.write(&bytes[written..]) {
            Ok(0) => {
                let cause = io::Error::from(io::ErrorKind::WriteZero);
                return Err(error(cause, undo(file, before, written)));
            }
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(cause) => return Err(error(cause, undo(file, before, written))),
        }
    }
    Ok(())
}

/// Removes the `written` bytes a failed write left at the end of a regular file of length
/// `before`; says what became of the file.
fn undo(file: &File, before: Option<u64>, written: usize) -> &'static str {
    let Some(before) = before else {
        return "";
    };
    if written == 0 {
        return " (the file is unchanged)";
    }
    match file.metadata() {
        Ok(m) if m.len() == before + written as u64 => match file.set_len(before) {
            Ok(()) => " (the partial write was removed; the file is as it was)",
            Err(_) => " (the file now ends with a partial write that could not be removed)",
        },
        _ => " (the file changed meanwhile and may hold a partial write)",
    }
}

/// Writes `bytes` to standard output whole (see [`write_whole`]), bypassing its buffer.
pub fn stdout(bytes: &[u8]) -> Result<(), AppendError> {
    let name = "standard output";
    let out = io::stdout();
    let mut lock = out.lock();
    lock.flush().map_err(|cause| AppendError {
        file: name.into(),
        cause,
        outcome: "",
    })?;
    let fd = lock
        .as_fd()
        .try_clone_to_owned()
        .map_err(|cause| AppendError {
            file: name.into(),
            cause,
            outcome: "",
        })?;
    write_whole(&File::from(fd), name, bytes)
}

/// [`stdout`] for a command's whole report: written with one write, and a closed pipe
/// (`lca ... | head`) is not an error, so the command ends quietly.
pub fn report(bytes: &[u8]) -> Result<(), AppendError> {
    match stdout(bytes) {
        Err(e) if e.io_error().kind() == io::ErrorKind::BrokenPipe => Ok(()),
        written => written,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_write_appends() {
        let path = std::env::temp_dir().join(format!("files-append-{}", std::process::id()));
        std::fs::write(&path, "a\n").unwrap();
        let file = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        write_whole(&file, "x", b"b\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a\nb\n");
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn the_message_says_the_cause_once() {
        let e = AppendError {
            file: "standard output".into(),
            cause: io::Error::from_raw_os_error(28),
            outcome: " (the file is unchanged)",
        };
        assert_eq!(
            e.to_string(),
            "standard output: cannot write: No space left on device (os error 28) (the file is unchanged)"
        );
    }
}
