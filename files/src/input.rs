//! A small input file (machine, model or study file) read whole, but never more than a bound:
//! `--machine /dev/zero` or a model path pointing at a huge file ends with one line, in
//! bounded memory, instead of reading until memory runs out.

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
        }
    }
}

impl std::error::Error for InputError {}

/// Reads the text of `path`, a `what` (`model file`, named so in errors), at most `limit`
/// bytes; a file with more is refused without reading the rest.
pub fn read_text(path: &Path, what: &'static str, limit: u64) -> Result<String, InputError> {
    let error = |cause| InputError { what, cause };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_after_the_bound() {
        let e = read_text(Path::new("/dev/zero"), "model file", 4096).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the model file holds more than 4096 bytes: not a model file (is the path right?)"
        );
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
