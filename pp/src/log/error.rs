//! The one error type of reading, writing and converting logs.

/// Why a log could not be read, written or converted. Every message is one line that starts
/// with the file: `pp.log:12: ...` for a line of a text log, `pp.log: byte 12345: ...` for a
/// binary log, and names the event or field and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// A file could not be opened, read, written or renamed.
    #[error("{file}: cannot {action}: {error}")]
    Io {
        /// The file.
        file: String,
        /// What was attempted (`open`, `read`, `write`, ...).
        action: &'static str,
        /// The operating system's error.
        error: std::io::Error,
    },
    /// A line of a text log is malformed.
    #[error("{file}:{line}: {message}")]
    Text {
        /// The file.
        file: String,
        /// The line, counted from 1.
        line: usize,
        /// What is wrong and what was expected.
        message: String,
    },
    /// A binary log is malformed, corrupt or truncated at a byte offset.
    #[error("{file}: byte {offset}: {message}")]
    Binary {
        /// The file.
        file: String,
        /// Byte offset of the damage, counted from 0.
        offset: u64,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The operation was refused (for example converting a log onto itself).
    #[error("{file}: {message}")]
    Refused {
        /// The file.
        file: String,
        /// Why.
        message: String,
    },
}

impl LogError {
    pub(crate) fn io(file: &str, action: &'static str, error: std::io::Error) -> LogError {
        LogError::Io {
            file: file.to_string(),
            action,
            error,
        }
    }

    pub(crate) fn text(file: &str, line: usize, message: impl Into<String>) -> LogError {
        LogError::Text {
            file: file.to_string(),
            line,
            message: message.into(),
        }
    }

    pub(crate) fn binary(file: &str, offset: u64, message: impl Into<String>) -> LogError {
        LogError::Binary {
            file: file.to_string(),
            offset,
            message: message.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_are_one_line_and_start_with_the_file() {
        let e = LogError::text("pp.log", 12, "thread 4 is not below p=4");
        assert_eq!(e.to_string(), "pp.log:12: thread 4 is not below p=4");
        let e = LogError::binary("pp.log", 12345, "no end marker");
        assert_eq!(e.to_string(), "pp.log: byte 12345: no end marker");
        let e = LogError::io("x.log", "open", std::io::Error::other("gone"));
        assert_eq!(e.to_string(), "x.log: cannot open: gone");
    }
}
