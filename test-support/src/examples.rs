//! Example programs (`cargo build --example`) run from tests, and the logs they record.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cargo_build;

/// The example `name` of `package`, where `cargo test` builds examples beside the tests
/// (`target/<profile>/examples/<name>`); built the same way (same profile) when it is not
/// there, as when only one test target was asked for.
///
/// # Panics
/// When the build fails.
pub fn example(package: &str, name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !path.exists() {
        let mut build = cargo_build(dir);
        build.args(["-p", package, "--example", name]);
        assert!(
            build.status().unwrap().success(),
            "building the {name} example"
        );
    }
    path
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
