//! What to say of a recorded run's log that was never finished: the program crashed, or exited
//! before its session finished, and left `<log>.tmp` with its threads' crash-safe buffers
//! beside it, which `pp recover` completes (docs/event-log.md#crash-safe-buffers).

use std::path::{Path, PathBuf};

/// The unfinished log the recorder writes while a run records into `log`: `<log>.tmp`.
pub fn tmp_of(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".tmp");
    PathBuf::from(name)
}

/// For a log that is not there: its `.tmp`, when that is, and how to finish it.
pub fn missing(path: &Path) -> Option<String> {
    let tmp = tmp_of(path);
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
    let [buffers, _] = pp_recorder::spill::paths(path);
    (is_tmp && buffers.is_file()).then(|| {
        format!(
            "its threads' buffers are beside it: `pp recover {}` completes the log",
            path.display()
        )
    })
}
