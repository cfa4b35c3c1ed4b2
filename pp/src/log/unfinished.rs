//! What to say of a recorded run's log that was never finished: the program crashed, or exited
//! before its session finished, and left `<log>.tmp` with its threads' crash-safe buffers
//! beside it, which `pp recover` completes (docs/event-log.md#crash-safe-buffers).

use std::path::{Path, PathBuf};

/// `path` with `suffix` added to its name.
fn with(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// For a log that is not there: its `.tmp`, when that is, and how to finish it.
pub fn missing(path: &Path) -> Option<String> {
    let tmp = with(path, ".tmp");
    tmp.is_file().then(|| {
        format!(
            "{} is there: the recorded run did not finish (it crashed, or exited before its \
             session finished); `pp recover {}` completes the log from its threads' buffers",
            tmp.display(),
            tmp.display()
        )
    })
}

/// For an unfinished `.tmp` read as it is: how to finish it, when its threads' buffers are
/// beside it.
pub fn buffers_beside(path: &Path) -> Option<String> {
    let is_tmp = path.extension().is_some_and(|e| e == "tmp");
    (is_tmp && with(path, ".buffers").is_file()).then(|| {
        format!(
            "its threads' buffers are beside it: `pp recover {}` completes the log",
            path.display()
        )
    })
}
