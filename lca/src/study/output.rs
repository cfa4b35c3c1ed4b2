//! The files a study writes in its folder (each run's standard output and error, the model
//! summaries, the crossover) are written only where the path is a regular file or nothing: a
//! device, a FIFO, a socket or a directory there (or a link to one) is refused, never written
//! to nor replaced, and opening it never waits (a FIFO without a reader).

use std::fs::{File, FileType, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Opens `path` for writing, emptied, when it is a regular file or absent.
pub fn create(path: &Path) -> std::io::Result<File> {
    // Checked before opening too: a FIFO without a reader cannot be opened without waiting.
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => return Err(refusal(m.file_type())),
        _ => {}
    }
    let file = OpenOptions::new()
        .write(true)
        .create(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    if !kind.is_file() {
        return Err(refusal(kind));
    }
    file.set_len(0)?;
    // SAFETY: plain fcntl on a descriptor this function owns: back to blocking writes.
    unsafe {
        let flags = libc::fcntl(file.as_raw_fd(), libc::F_GETFL);
        libc::fcntl(file.as_raw_fd(), libc::F_SETFL, flags & !libc::O_NONBLOCK);
    }
    Ok(file)
}

fn refusal(kind: FileType) -> std::io::Error {
    let what = if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    };
    std::io::Error::other(format!("{what}; lca study writes only regular files"))
}

/// Writes `text` to `path` (see [`create`]).
pub fn write(path: &Path, text: &str) -> std::io::Result<()> {
    create(path)?.write_all(text.as_bytes())
}
