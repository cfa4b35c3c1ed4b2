//! How `pp run` ends when it fails: an exit status and a one-line message.

/// How `pp run` ends: an exit status, with a one-line message for standard error when it is
/// `pp run`'s own failure.
#[derive(Debug)]
pub struct Failure {
    /// The exit status.
    pub status: u8,
    /// Why, in one line.
    pub message: String,
}

pub(super) fn fail(status: u8, message: impl Into<String>) -> Failure {
    Failure {
        status,
        message: message.into(),
    }
}
