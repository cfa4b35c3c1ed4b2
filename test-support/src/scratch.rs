//! Scratch folders and the files tests write into them.

use std::path::{Path, PathBuf};

/// A fresh, empty folder for one test: `<temp dir>/<binary>-<pid>-<name>`, where `<binary>` is
/// the running test (or benchmark) binary's name without cargo's hash. It is unique to the
/// test process and `name`; whatever is there already (left by an earlier call with the same
/// name) is removed first. The caller removes it when it wants it gone.
///
/// # Panics
/// When the folder cannot be made.
pub fn scratch(name: &str) -> PathBuf {
    let dir = temp_path(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A path for one file of a test, `<temp dir>/<binary>-<pid>-<name>` (as [`scratch`] names
/// folders): unique to the test process and `name`. Nothing is made or removed.
pub fn temp_path(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("{}-{}-{name}", binary(), std::process::id()))
}

/// The running executable's name without the `-<hash>` cargo gives test binaries.
fn binary() -> String {
    let exe = std::env::current_exe().ok();
    let stem = exe
        .as_deref()
        .and_then(Path::file_stem)
        .map_or_else(|| "test".into(), |s| s.to_string_lossy().into_owned());
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_string(),
        _ => stem,
    }
}

/// Writes `text` as `dir/name`; its path.
///
/// # Panics
/// When the file cannot be written.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_folder_is_fresh_and_empty() {
        let dir = scratch("fresh");
        assert!(dir.is_dir());
        let file = write(&dir, "a.txt", "a");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "a");
        let again = scratch("fresh");
        assert_eq!(again, dir);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(
            name,
            format!("test_support-{}-fresh", std::process::id()),
            "the binary's name, the process, the test's name"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
