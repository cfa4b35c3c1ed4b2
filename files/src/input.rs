//! A small input file (machine, model, study, target or Extra-P file) read whole, but never
//! more than a bound, and only from a regular file: a model path pointing at a huge file ends
//! with one line, in bounded memory, instead of reading until memory runs out, and `--machine`
//! naming a FIFO, a device or a socket (`/dev/zero`, a FIFO no one writes to) is refused at
//! once instead of waiting forever, deaf to Ctrl-C under `lca study` ([`regular`]).

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// At most this many bytes are read from a machine, model or study file (1 MiB: such files
/// hold a few kilobytes).
pub const MAX_SMALL_FILE: u64 = 1 << 20;

/// Why a small input file could not be read: one line, the file named by the caller.
#[derive(Debug)]
pub struct InputError {
    /// What the file is, for the message: `model file`, `machine file`.
    what: &'static str,
    cause: Cause,
}

#[derive(Debug)]
enum Cause {
    /// Opening or reading failed.
    Io(io::Error),
    /// The file holds more than the bound (or is endless, like `/dev/zero`).
    TooLarge(u64),
    /// The bytes are not UTF-8 text.
    NotText,
    /// Not a regular file (after links): what it is, in words.
    NotRegular(&'static str),
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = self.what;
        match &self.cause {
            Cause::Io(e) => write!(f, "cannot read the {what}: {e}"),
            Cause::TooLarge(limit) => write!(
                f,
                "the {what} holds more than {limit} bytes: not a {what} (is the path right?)"
            ),
            Cause::NotText => write!(f, "the {what} is not UTF-8 text"),
            Cause::NotRegular(kind) => write!(
                f,
                "the {what} is not a regular file (a {kind}): reading it might never end; \
                 give the path of a file"
            ),
        }
    }
}

impl std::error::Error for InputError {}

/// Reads the text of `path`, a `what` (`model file`, named so in errors), at most `limit`
/// bytes; a file with more is refused without reading the rest.
pub fn read_text(path: &Path, what: &'static str, limit: u64) -> Result<String, InputError> {
    let error = |cause| InputError { what, cause };
    regular(path, what)?;
    let file = File::open(path).map_err(|e| error(Cause::Io(e)))?;
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| error(Cause::Io(e)))?;
    if bytes.len() as u64 > limit {
        return Err(error(Cause::TooLarge(limit)));
    }
    String::from_utf8(bytes).map_err(|_| error(Cause::NotText))
}

/// An error unless `path` (after links) is a regular file: looked at without opening it, so
/// a FIFO is refused without waiting for a writer. A missing file is the error of opening it.
pub fn regular(path: &Path, what: &'static str) -> Result<(), InputError> {
    let error = |cause| InputError { what, cause };
    let kind = std::fs::metadata(path)
        .map_err(|e| error(Cause::Io(e)))?
        .file_type();
    if kind.is_file() {
        Ok(())
    } else {
        Err(error(Cause::NotRegular(kind_of(kind))))
    }
}

/// What a file type is, in words.
pub fn kind_of(kind: std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if kind.is_dir() {
        "directory"
    } else if kind.is_char_device() {
        "character device"
    } else if kind.is_block_device() {
        "block device"
    } else if kind.is_fifo() {
        "FIFO"
    } else if kind.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_device_is_refused_unread() {
        let e = read_text(Path::new("/dev/zero"), "model file", 4096).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the model file is not a regular file (a character device): reading it might \
             never end; give the path of a file"
        );
        let e = read_text(Path::new("/"), "model file", 4096).unwrap_err();
        assert!(matches!(e.cause, Cause::NotRegular("directory")), "{e}");
    }

    #[test]
    fn a_fifo_without_a_writer_is_refused_at_once() {
        let dir = std::env::temp_dir().join(format!("files-fifo-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        // mkfifo(1), as std has no call for it.
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            eprintln!("skipped: a_fifo_without_a_writer_is_refused_at_once: no mkfifo");
            return;
        }
        // Opening it would wait for a writer forever.
        let e = read_text(&fifo, "machine file", 4096).unwrap_err();
        assert!(matches!(e.cause, Cause::NotRegular("FIFO")), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_link_to_a_regular_file_is_read() {
        let dir = std::env::temp_dir().join(format!("files-link-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("m.toml"), "x = 1\n").unwrap();
        let _ = std::fs::remove_file(dir.join("link"));
        std::os::unix::fs::symlink(dir.join("m.toml"), dir.join("link")).unwrap();
        assert_eq!(read_text(&dir.join("link"), "f", 100).unwrap(), "x = 1\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_file_of_exactly_the_bound_is_read() {
        let path = std::env::temp_dir().join(format!("files-input-{}", std::process::id()));
        std::fs::write(&path, "x".repeat(100)).unwrap();
        assert_eq!(read_text(&path, "f", 100).unwrap().len(), 100);
        let e = read_text(&path, "f", 99).unwrap_err();
        assert!(matches!(e.cause, Cause::TooLarge(99)), "{e}");
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        let e = read_text(&path, "study file", 99).unwrap_err();
        assert_eq!(e.to_string(), "the study file is not UTF-8 text");
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_missing_file_says_its_cause() {
        let e = read_text(Path::new("/nonexistent/x.toml"), "machine file", 10).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("cannot read the machine file: No such file"),
            "{e}"
        );
    }
}
