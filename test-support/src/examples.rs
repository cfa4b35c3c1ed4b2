//! Example programs (`cargo build --example`) run from tests, and the logs they record.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cargo_build;

/// The example `name` of `package`, where `cargo test` builds examples beside the tests
/// (`target/<profile>/examples/<name>`); built the same way (same profile) when it is not
/// there, as when only one test target was asked for (`cargo test --test T` builds no
/// example), or when its source in the calling test's package (`examples/<name>.rs`) is newer
/// than it (so that a test run alone after the example changed does not run the old one; a
/// change to a library it links still needs `cargo build --examples`).
///
/// # Panics
/// When the build fails.
pub fn example(package: &str, name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    let source = std::env::var_os("CARGO_MANIFEST_DIR")
        .map(|d| PathBuf::from(d).join("examples").join(format!("{name}.rs")));
    if !path.exists() || source.is_some_and(|s| newer(&s, &path)) {
        let mut build = cargo_build(dir);
        build.args(["-p", package, "--example", name]);
        assert!(
            build.status().unwrap().success(),
            "building the {name} example"
        );
    }
    path
}

/// Whether `source` was modified after `built` (false where either has no time).
fn newer(source: &Path, built: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
    matches!((modified(source), modified(built)), (Some(s), Some(b)) if s > b)
}

/// Runs the recorded program `program` with `-p P` writing its log to `log` (`PP_LOG`);
/// panics with its standard error unless it succeeds.
pub fn record(program: &Path, p: u32, log: &Path) {
    let run = Command::new(program)
        .args(["-p", &p.to_string()])
        .env("PP_LOG", log)
        .output()
        .unwrap();
    let name = program.file_name().unwrap_or_default().to_string_lossy();
    assert!(
        run.status.success(),
        "{name} -p {p}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::path::Path;
    use std::time::{Duration, SystemTime};

    use super::newer;

    #[test]
    fn a_source_newer_than_its_binary_is_told() {
        let dir = crate::scratch("newer");
        let (source, built) = (dir.join("x.rs"), dir.join("x"));
        let at = |path: &Path, t: SystemTime| {
            File::create(path).unwrap().set_modified(t).unwrap();
        };
        let now = SystemTime::now();
        at(&source, now - Duration::from_secs(60));
        at(&built, now);
        assert!(!newer(&source, &built));
        at(&source, now + Duration::from_secs(60));
        assert!(newer(&source, &built));
        assert!(!newer(&dir.join("missing.rs"), &built));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
